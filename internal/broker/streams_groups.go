package broker

import (
	"context"
	"errors"
	"fmt"

	"github.com/samsa-io/samsa/internal/controller"
	"github.com/samsa-io/samsa/internal/group"
	"github.com/twmb/franz-go/pkg/kerr"
)

// createStreamsTopics creates the internal topics of a streams group
// (group.Deps.CreateTopics) through the active controller, as auto-created
// topics are (forward.go createTopics): here when this node is the active
// controller or alone, else as a CreateTopics request to it. A topic
// created meanwhile is not an error. The image that holds the new topics
// is applied before it returns, so the next heartbeat finds them.
func (b *Broker) createStreamsTopics(ctx context.Context, topics []group.NewTopic) error {
	want := make([]controller.CreateTopic, 0, len(topics))
	for _, t := range topics {
		configs := make(map[string]*string, len(t.Configs))
		for k, v := range t.Configs {
			configs[k] = &v
		}
		want = append(want, controller.CreateTopic{
			Name: t.Name, NumPartitions: t.Partitions, ReplicationFactor: t.ReplicationFactor, Configs: configs,
		})
	}
	var errs []error
	for _, r := range b.createTopics(ctx, want) {
		if r.ErrorCode != 0 && r.ErrorCode != kerr.TopicAlreadyExists.Code {
			errs = append(errs, fmt.Errorf("%s: %s: %s", r.Name, kerr.ErrorForCode(r.ErrorCode), r.ErrorMessage))
		}
	}
	b.catchUpMetadata()
	return errors.Join(errs...)
}

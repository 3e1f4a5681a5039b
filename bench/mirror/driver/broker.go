package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-io/samsa/bench/internal/procstat"
)

type broker struct {
	*process
	addr  string
	admin *kadm.Client
}

// startBroker runs one `samsa serve` (procstat.StartBroker).
func startBroker(ctx context.Context, bin, dir string) (*broker, error) {
	sb, err := procstat.StartBroker(ctx, bin, dir)
	if err != nil {
		return nil, err
	}
	return &broker{process: sb.Process, addr: sb.Addr, admin: sb.Admin}, nil
}

func (b *broker) stop() {
	b.admin.Close()
	b.process.Stop(10 * time.Second)
}

// createTopic makes a topic of partitions partitions, replication factor 1.
func (b *broker) createTopic(ctx context.Context, topic string, partitions int32) error {
	resp, err := b.admin.CreateTopic(ctx, partitions, 1, nil, topic)
	if err != nil {
		return err
	}
	return resp.Err
}

// deleteTopics deletes the topics that exist of names.
func (b *broker) deleteTopics(ctx context.Context, names ...string) error {
	resps, err := b.admin.DeleteTopics(ctx, names...)
	if err != nil {
		return err
	}
	for _, r := range resps {
		if r.Err != nil && !errors.Is(r.Err, kerr.UnknownTopicOrPartition) {
			return fmt.Errorf("delete %s: %w", r.Topic, r.Err)
		}
	}
	return nil
}

// endOffsets is the sum of the topic's partitions' high watermarks.
func (b *broker) endOffsets(ctx context.Context, topic string) (int64, error) {
	offs, err := b.admin.ListEndOffsets(ctx, topic)
	if err != nil {
		return 0, err
	}
	var sum int64
	var ferr error
	offs.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			ferr = o.Err
		}
		sum += o.Offset
	})
	return sum, ferr
}

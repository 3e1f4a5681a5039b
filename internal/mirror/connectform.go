package mirror

import (
	"context"
	"log/slog"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/mirror/mirrorconf"
)

// What the Connect form of the mirror (internal/connectors/mirror: Kafka's
// MirrorSourceConnector, MirrorCheckpointConnector and
// MirrorHeartbeatConnector on Samsa's Connect runtime) shares with this
// runtime: the topic side of the source connector and the client
// overrides. The record copying, checkpoints and heartbeats are the
// connectors' own tasks, which hand their records to the Connect runtime.

// TopicSync is MirrorSourceConnector's topic work for one flow: the
// offset-syncs topic, remote topics created with the source's partitions
// and configs and grown, configs and ACLs synced on their intervals. Unlike
// the mirror's own topic loop it creates no Connect worker topics (the
// Connect runtime has its own).
type TopicSync struct {
	fl *flow
}

// NewTopicSync prepares the topic sync of cfg's single flow; clients makes
// the clients of its two clusters (before the role's overrides).
func NewTopicSync(cfg *mirrorconf.Config, f *mirrorconf.Flow, clients ClientFunc, log *slog.Logger) (*TopicSync, error) {
	fl := newFlow(f, Options{Config: cfg, Clients: clients, Logger: log})
	if err := checkOverrides(fl); err != nil {
		return nil, err
	}
	return &TopicSync{fl: fl}, nil
}

// Topics are the source topics ready to copy (their remote topics exist)
// and their partition counts, as of the last sync.
func (s *TopicSync) Topics() map[string]int32 { return s.fl.mirrored() }

// Run syncs once, calls changed, and then syncs again on the refresh and
// sync intervals, calling changed after each topic refresh; it returns
// nil when ctx ends, or the first error (the caller backs off and runs it
// again).
func (s *TopicSync) Run(ctx context.Context, changed func()) error {
	fl := s.fl
	return fl.topicLoop(ctx, func(ctx context.Context, srcAdm, tgtAdm *kadm.Client) error {
		if !fl.cfg.EmitOffsetSyncs {
			return nil
		}
		adm := srcAdm
		if fl.offsetSyncsCluster() == fl.cfg.Target {
			adm = tgtAdm
		}
		return ensureTopic(ctx, adm, fl.offsetSyncsTopic(), 1, fl.cfg.OffsetSyncsTopicReplicationFactor)
	}, changed)
}

// EnsureCompactedTopic creates a compacted internal topic (one of
// MirrorMaker 2's: checkpoints, heartbeats, offset syncs) when it is
// missing; rf 0 or -1 is the broker's default.
func EnsureCompactedTopic(ctx context.Context, adm *kadm.Client, topic string, partitions int32, rf int16) error {
	return ensureTopic(ctx, adm, topic, partitions, rf)
}

// ClientOverrides maps a cluster's producer.X, consumer.X or admin.X
// overrides (mirrorconf.Cluster's Producer, Consumer, Admin; role is
// "producer", "consumer" or "admin") to franz-go options, as the mirror's
// own clients take them.
func ClientOverrides(overrides map[string]string, role string) ([]kgo.Opt, error) {
	return overrideOpts(overrides, roleName(role))
}

func roleName(r string) role { return role(r) }

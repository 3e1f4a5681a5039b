package mirror

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/mirror/mm2"
)

// runHeartbeats is MirrorMaker 2's heartbeat task: a heartbeat record
// (source alias, target alias, time) to the target's heartbeats topic every
// emit.heartbeats.interval.seconds. Mirrored onwards, the heartbeats topics
// show each hop of a replication path is alive, and RemoteClusterUtils
// finds upstream clusters through them.
func (fl *flow) runHeartbeats(ctx context.Context) error {
	tgt, err := fl.roleClient(fl.cfg.Target, roleProducer, kgo.RequiredAcks(kgo.AllISRAcks()))
	if err != nil {
		return err
	}
	defer tgt.Close()
	if err := ensureTopic(ctx, kadm.NewClient(tgt), fl.heartbeatsTopic(), 1, fl.cfg.HeartbeatsTopicReplicationFactor); err != nil {
		return err
	}
	every := fl.cfg.EmitHeartbeatsInterval
	if every <= 0 {
		every = time.Second
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		h := mm2.Heartbeat{SourceCluster: fl.cfg.Source, TargetCluster: fl.cfg.Target, Timestamp: time.Now().UnixMilli()}
		rec := &kgo.Record{Topic: fl.heartbeatsTopic(), Key: h.Key(), Value: h.Value()}
		if err := tgt.ProduceSync(ctx, rec).FirstErr(); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("heartbeat to %s: %w", fl.cfg.Target, err)
		}
		fl.heartbeats.Add(1)
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

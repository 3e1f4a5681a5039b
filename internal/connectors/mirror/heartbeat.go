package mirror

import (
	"context"
	"maps"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/samsa-io/samsa/connect"
	mirrorrt "github.com/samsa-io/samsa/internal/mirror"
	"github.com/samsa-io/samsa/internal/mirror/mirrorconf"
	"github.com/samsa-io/samsa/internal/mirror/mm2"
	"github.com/samsa-io/samsa/internal/version"
)

// HeartbeatConnector is MirrorHeartbeatConnector: it creates the target's
// heartbeats topic and runs one task, none when emit.heartbeats.enabled is
// false or the interval negative. It needs only the target cluster.
type HeartbeatConnector struct {
	props map[string]string
	on    bool
}

var (
	_ connect.SourceConnector    = (*HeartbeatConnector)(nil)
	_ connect.ConnectorValidator = (*HeartbeatConnector)(nil)
)

func (c *HeartbeatConnector) Version() string             { return version.String() }
func (c *HeartbeatConnector) Config() *connect.ConfigDef  { return configDef() }
func (c *HeartbeatConnector) NewTask() connect.SourceTask { return &HeartbeatTask{} }
func (c *HeartbeatConnector) Validate(props map[string]string) []connect.ConfigValue {
	return validate(mirrorconf.HeartbeatConnector, props)
}

func heartbeatsRun(cc *mirrorconf.ConnectorConfig) bool {
	return cc.Enabled && cc.Flow != nil && cc.Flow.EmitHeartbeats
}

// Start creates the heartbeats topic (within admin.timeout.ms), as Kafka's
// connector does on start: a target that cannot be reached fails it.
func (c *HeartbeatConnector) Start(ctx connect.ConnectorContext, props map[string]string) error {
	cc, err := parse(mirrorconf.HeartbeatConnector, props)
	if err != nil {
		return err
	}
	c.props, c.on = maps.Clone(props), heartbeatsRun(cc)
	if !c.on {
		return nil
	}
	f := cc.Flow
	tgt, err := clients{cfg: cc}.client(f.Target, "admin")
	if err != nil {
		return err
	}
	defer tgt.Close()
	actx, cancel := context.WithTimeout(context.Background(), f.AdminTimeout)
	defer cancel()
	return mirrorrt.EnsureCompactedTopic(actx, kadm.NewClient(tgt), f.Policy.HeartbeatsTopic(), 1, f.HeartbeatsTopicReplicationFactor)
}

func (c *HeartbeatConnector) TaskConfigs(maxTasks int) ([]map[string]string, error) {
	if !c.on {
		return nil, nil
	}
	return []map[string]string{maps.Clone(c.props)}, nil
}

func (c *HeartbeatConnector) Stop() error { return nil }

// HeartbeatTask is MirrorHeartbeatTask: a heartbeat record (source alias,
// target alias, time) every emit.heartbeats.interval.seconds, the first at
// once.
type HeartbeatTask struct {
	flow *mirrorconf.Flow
	next time.Time
}

var _ connect.SourceTask = (*HeartbeatTask)(nil)

func (t *HeartbeatTask) Start(ctx connect.SourceTaskContext, props map[string]string) error {
	cc, err := parse(mirrorconf.HeartbeatConnector, props)
	if err != nil {
		return err
	}
	if !heartbeatsRun(cc) {
		return errHeartbeatsOff
	}
	t.flow = cc.Flow
	return nil
}

var errHeartbeatsOff = &mirrorconf.Error{Key: "emit.heartbeats.enabled", Msg: "heartbeats are off"}

func (t *HeartbeatTask) Poll(ctx context.Context) ([]connect.SourceRecord, error) {
	if wait := time.Until(t.next); wait > 0 {
		sleep(ctx, min(wait, time.Second))
		return nil, nil
	}
	now := time.Now()
	t.next = now.Add(t.flow.EmitHeartbeatsInterval)
	h := mm2.Heartbeat{SourceCluster: t.flow.Source, TargetCluster: t.flow.Target, Timestamp: now.UnixMilli()}
	return []connect.SourceRecord{{
		Record: connect.Record{Topic: t.flow.Policy.HeartbeatsTopic(), Partition: connect.PartitionOf(0),
			KeySchema: connect.BytesSchema, Key: h.Key(), ValueSchema: connect.BytesSchema, Value: h.Value(), Timestamp: now},
		SourcePartition: map[string]any{"sourceClusterAlias": h.SourceCluster, "targetClusterAlias": h.TargetCluster},
		SourceOffset:    map[string]any{offsetKey: int64(0)},
	}}, nil
}

func (t *HeartbeatTask) Stop() error { return nil }

package broker

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/samsa-io/samsa/internal/config"
	"github.com/samsa-io/samsa/internal/metadata"
	"github.com/samsa-io/samsa/internal/model"
	"github.com/samsa-io/samsa/internal/replication"
	"github.com/samsa-io/samsa/internal/storage"
)

// applyImage brings the broker's local state up to a metadata image: logs
// for new partitions this node replicates, deleted topics' logs removed,
// leaders and configs updated. Images arrive in order from the
// controller; applying one twice is harmless.
func (b *Broker) applyImage(img *metadata.Image) error {
	b.metaMu.Lock()
	defer b.metaMu.Unlock()
	prev := b.meta.Load()
	if prev != nil && img.Offset() <= prev.Offset() && prev.Offset() != 0 {
		return nil
	}
	d := metadata.DiffTopics(prev, img)
	var errs []error
	for _, t := range d.Deleted {
		delete(b.failedInstalls, t.ID)
		errs = append(errs, b.removeTopic(t))
	}
	// A topic whose install failed (a log that would not open) is tried
	// again with each image until it succeeds; /readyz says so meanwhile.
	retry := d.Created
	for id := range b.failedInstalls {
		if t, ok := img.TopicByID(id); ok && !slices.Contains(d.Created, t) && !slices.Contains(d.Changed, t) {
			retry = append(retry, t)
		}
	}
	for _, t := range append(retry, d.Changed...) {
		err := b.installTopic(img, t)
		if err != nil {
			b.failedInstalls[t.ID] = true
		} else {
			delete(b.failedInstalls, t.ID)
		}
		errs = append(errs, err)
	}
	b.refreshTopicConfigs(img)
	bc := b.brokerConfig(img)
	b.warnDynamicNoEffect(prev, img, bc)
	b.conns.set(bc, b.cfg.Listeners)
	b.connRates.setLimits(bc, b.cfg.Listeners)
	b.applyReplicationThrottles(bc)
	b.applyQuotas(prev, img)
	b.applyClientMetrics(prev, img)
	b.reconfigureTLS(bc)
	b.logs.SetCleaner(cleanerSettings(bc))
	b.refreshAuthorizer(img, bc)
	b.meta.Store(img)
	b.imageApplied.Notify()
	b.markLedLoading()
	b.coordSync.notify()
	for _, err := range errs {
		if err != nil {
			b.log.Error("applying metadata", "err", err)
			return err
		}
	}
	return nil
}

// warnDynamicNoEffect logs, as warnNoEffect does at startup, each config
// newly set dynamically that Samsa accepts and does nothing with (thread
// pool sizes: Go has none), so a change an operator made is not silently
// without effect.
func (b *Broker) warnDynamicNoEffect(prev, img *metadata.Image, bc config.Values) {
	node := fmt.Sprint(b.cfg.NodeID)
	if prev == nil || maps.Equal(prev.BrokerConfig(node), img.BrokerConfig(node)) && maps.Equal(prev.BrokerConfig(""), img.BrokerConfig("")) {
		return
	}
	before := b.brokerConfig(prev).NoEffect()
	for _, line := range bc.NoEffect() {
		if !slices.Contains(before, line) {
			b.log.Warn(line)
		}
	}
}

// topicConfig resolves a topic's effective config from its overrides and
// the broker's.
func (b *Broker) topicConfig(img *metadata.Image, name string) (config.Values, error) {
	return config.ResolveTopic(b.brokerConfig(img), img.TopicConfig(name))
}

// brokerConfig is the broker's static config with the dynamic layers of
// the image (cluster default and this node's) on top.
func (b *Broker) brokerConfig(img *metadata.Image) config.Values {
	v, err := b.cfg.Values.WithDynamic(img.BrokerConfig(fmt.Sprint(b.cfg.NodeID)), img.BrokerConfig(""))
	if err != nil {
		b.log.Error("dynamic broker config rejected; using static config", "err", err)
		return b.cfg.Values
	}
	return v
}

func (b *Broker) installTopic(img *metadata.Image, t *metadata.TopicImage) error {
	cfg, err := b.topicConfig(img, t.Name)
	if err != nil {
		return fmt.Errorf("broker: topic %s config: %w", t.Name, err)
	}
	old, _ := b.topics.byTopicID(t.ID)
	ts := &topicState{name: t.Name, id: t.ID, config: cfg, internal: metadata.IsInternalTopic(t.Name),
		partitions: make([]*replication.Partition, len(t.Partitions)), metrics: topicMetricsOf(old),
		throttles: b.throttlesOf(t.Name, cfg, old)}
	for i, pi := range t.Partitions {
		if !hosts(pi, b.cfg.NodeID) {
			continue
		}
		st := replication.State{Leader: int32(pi.Leader), LeaderEpoch: pi.LeaderEpoch, PartitionEpoch: pi.PartitionEpoch,
			Replicas: nodes(pi.Replicas), ISR: nodes(pi.ISR), Self: b.cfg.NodeID, LagTime: millis(b.brokerConfig(img).Long("replica.lag.time.max.ms"))}
		var p *replication.Partition
		tp := model.TopicPartition{Topic: t.Name, Partition: pi.Partition}
		assigned := pi.Directory(model.NodeID(b.cfg.NodeID))
		if old != nil && i < len(old.partitions) && old.partitions[i] != nil {
			p = old.partitions[i]
		} else {
			if b.replicaOffline(tp, assigned, b.newlyHosted(t.ID, pi.Partition)) {
				// Its log directory failed (logdirs.go): no replica
				// here until a restart; the metadata lists it offline.
				b.log.Warn("not serving a replica whose log directory is offline", "partition", tp.String(), "directory_id", assigned)
				continue
			}
			log, err := b.logs.OpenLogIn(tp, storageConfig(cfg), b.dirPath(assigned))
			if errors.Is(err, storage.ErrLogDirOffline) {
				b.log.Warn("not serving a replica whose log directory is offline", "partition", tp.String(), "err", err)
				continue
			}
			if err != nil {
				return fmt.Errorf("broker: open %s: %w", tp, err)
			}
			var part *replication.Partition
			part = replication.NewReplica(tp, t.ID, log, replication.Options{Durable: b.cfg.Durable, HighWatermark: b.checkpointedHW[tp],
				ProposeISR: func(_ model.TopicPartition, le, pe int32, isr []int32) { b.proposeISR(part, le, pe, isr) }})
			p = part
			defer b.resumeMove(p) // a future replica a restart left
		}
		b.noteReplicaDir(tp, t.ID, assigned)
		ts.partitions[i] = p
		switch p.Apply(st, b.cfg.Clock.Now()) {
		case replication.BecameLeader:
			b.fetchers.stop(p.TP)
		case replication.BecameFollower, replication.LeaderChanged:
			b.fetchers.follow(p, pi.Leader)
		}
	}
	b.topics.put(ts)
	return b.removeMovedPartitions(old, ts)
}

// removeMovedPartitions deletes the logs of the partitions old hosted here
// and ts does not: a reassignment moved them to other brokers (KIP-455),
// as Kafka's broker deletes a partition removed from it in a metadata
// delta. Each fetcher stops first, so no follower append races the
// deletion.
func (b *Broker) removeMovedPartitions(old, ts *topicState) error {
	if old == nil {
		return nil
	}
	var err error
	for i, p := range old.partitions {
		if p == nil || (i < len(ts.partitions) && ts.partitions[i] != nil) {
			continue
		}
		b.fetchers.stop(p.TP)
		b.movers.stop(p.TP)
		p.Stop() // its acks=all waiters learn it leads no more
		b.log.Info("deleting a partition reassigned away from this broker", "partition", p.TP.String())
		if derr := b.logs.DeleteLog(p.TP); derr != nil && err == nil {
			err = derr
		}
	}
	return err
}

func (b *Broker) removeTopic(t *metadata.TopicImage) error {
	ts := b.topics.remove(t.Name)
	if ts == nil || ts.id != t.ID {
		return nil
	}
	var err error
	for _, p := range ts.partitions {
		if p != nil {
			b.fetchers.stop(p.TP)
			b.movers.stop(p.TP)
			p.Stop()
			if derr := b.logs.DeleteLog(p.TP); derr != nil && err == nil {
				err = derr
			}
		}
	}
	return err
}

// refreshTopicConfigs re-resolves every topic's config (overrides and
// dynamic broker defaults may have changed: message.max.bytes is every
// topic's max.message.bytes that does not override it) and installs the
// topics whose values changed, so the next produce checks against them,
// handing changed log settings (retention, segments, flushes) to the logs.
func (b *Broker) refreshTopicConfigs(img *metadata.Image) {
	for _, ts := range b.topics.all() {
		cfg, err := b.topicConfig(img, ts.name)
		if err != nil {
			b.log.Error("topic config rejected", "topic", ts.name, "err", err)
			continue
		}
		if maps.Equal(cfg.Given(config.SourceDynamicTopic), ts.config.Given(config.SourceDynamicTopic)) && cfg.SameValues(ts.config) {
			continue
		}
		next := *ts
		next.config = cfg
		next.throttles = b.throttlesOf(ts.name, cfg, ts)
		if sc := storageConfig(cfg); sc != storageConfig(ts.config) {
			for _, p := range ts.partitions {
				if p != nil {
					p.SetConfig(sc)
				}
			}
		}
		b.topics.put(&next)
	}
}

// newlyHosted reports whether the partition is new to this broker since
// the image it applied last: a replica the controller just placed here
// (a new topic or partition, a reassignment), which may be created even
// while a log directory is offline. At start nothing is new.
func (b *Broker) newlyHosted(id model.TopicID, partition int32) bool {
	prev := b.meta.Load()
	if prev == nil {
		return false
	}
	t, ok := prev.TopicByID(id)
	if !ok {
		return true
	}
	return int(partition) >= len(t.Partitions) || !hosts(t.Partitions[partition], b.cfg.NodeID)
}

func hosts(p metadata.PartitionImage, node int32) bool {
	for _, r := range p.Replicas {
		if int32(r) == node {
			return true
		}
	}
	return false
}

func nodes(ns []model.NodeID) []int32 {
	out := make([]int32, len(ns))
	for i, n := range ns {
		out[i] = int32(n)
	}
	return out
}

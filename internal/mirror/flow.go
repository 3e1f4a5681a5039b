package mirror

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/mirror/mirrorconf"
)

// flow is one source->target replication: the topic sync, the copier, the
// checkpoints and the heartbeats, each a loop of its own restarted when it
// fails.
type flow struct {
	cfg  *mirrorconf.Flow
	opts Options
	name string
	log  *slog.Logger
	// heartbeatOnly: a pair that is not enabled but, as in Kafka, still
	// emits heartbeats into its target.
	heartbeatOnly bool

	// topics is what the topic sync decided to mirror: source topic ->
	// partition count. The copier reads it each time it is told of a change.
	mu     sync.Mutex
	topics map[string]int32
	grown  chan struct{} // closed (and replaced) when the topics grew
	parts  map[tp]*partState

	records, bytes, offsetSyncs, checkpoints, groupSyncs atomic.Int64
	heartbeats, topicsCreated, errs, lastLatency         atomic.Int64
}

type tp struct {
	topic     string
	partition int32
}

// partState is the copier's view of one source partition.
type partState struct {
	next      int64  // next source offset to copy
	sourceEnd int64  // the source's last stable offset, -1 before a fetch
	stopped   string // why it no longer copies
}

func newFlow(f *mirrorconf.Flow, o Options) *flow {
	name := flowName(f)
	return &flow{
		cfg: f, opts: o, name: name,
		log:    o.Logger.With("flow", name),
		topics: map[string]int32{},
		grown:  make(chan struct{}),
		parts:  map[tp]*partState{},
	}
}

// Internal topic names, as Kafka's MirrorMaker 2 names them.
func (fl *flow) offsetSyncsTopic() string { return fl.cfg.Policy.OffsetSyncsTopic(fl.cfg.Target) }
func (fl *flow) checkpointsTopic() string { return fl.cfg.Policy.CheckpointsTopic(fl.cfg.Source) }
func (fl *flow) heartbeatsTopic() string  { return fl.cfg.Policy.HeartbeatsTopic() }
func (fl *flow) progressTopic() string    { return "mm2-offsets." + fl.cfg.Source + ".internal" }
func (fl *flow) remote(topic string) string {
	return fl.cfg.Policy.FormatRemoteTopic(fl.cfg.Source, topic)
}

// offsetSyncsCluster is where the offset-syncs topic lives
// (offset-syncs.topic.location: the source by default).
func (fl *flow) offsetSyncsCluster() string {
	if fl.cfg.OffsetSyncsTopicLocation == "target" {
		return fl.cfg.Target
	}
	return fl.cfg.Source
}

// connectorName is the Connect connector whose source offsets the copier
// keeps in the progress topic, so Kafka's MirrorMaker 2 could go on from
// where Samsa's mirror stopped, and the other way round.
const connectorName = "MirrorSourceConnector"

func (fl *flow) run(ctx context.Context) {
	fl.log.Info("mirror flow starting", "heartbeats_only", fl.heartbeatOnly, "source", fl.cfg.Source, "target", fl.cfg.Target,
		"offset_preserving", fl.cfg.OffsetPreserving, "exactly_once", fl.cfg.ExactlyOnce)
	var wg sync.WaitGroup
	if fl.heartbeatOnly {
		fl.retry(ctx, "heartbeats", fl.runHeartbeats)
		return
	}
	loop := func(name string, fn func(context.Context) error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fl.retry(ctx, name, fn)
		}()
	}
	loop("topics", fl.runTopics)
	// tasks.max copiers, each with its share of the partitions (Kafka's
	// MirrorSourceConnector splits them round robin over its tasks).
	for task := range fl.tasks() {
		name := fmt.Sprintf("copy %d", task)
		if fl.cfg.OffsetPreserving {
			loop(name, func(ctx context.Context) error { return fl.runPreserve(ctx, task) })
		} else {
			loop(name, func(ctx context.Context) error { return fl.runCopy(ctx, task) })
		}
	}
	if fl.cfg.EmitCheckpoints || fl.cfg.SyncGroupOffsets {
		loop("checkpoints", fl.runCheckpoints)
	}
	if fl.cfg.EmitHeartbeats {
		loop("heartbeats", fl.runHeartbeats)
	}
	wg.Wait()
}

// retry runs fn until ctx ends, waiting the backoff after each failure.
func (fl *flow) retry(ctx context.Context, name string, fn func(context.Context) error) {
	for ctx.Err() == nil {
		err := fn(ctx)
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			return
		}
		fl.errs.Add(1)
		fl.log.Warn("mirror: "+name+" failed; starting again", "err", err, "backoff", fl.opts.RetryBackoff)
		select {
		case <-ctx.Done():
			return
		case <-time.After(fl.opts.RetryBackoff):
		}
	}
}

func (fl *flow) client(cluster string, opts ...kgo.Opt) (*kgo.Client, error) {
	cl, err := fl.opts.Clients(cluster, opts...)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", cluster, err)
	}
	return cl, nil
}

// tasks is tasks.max, at least 1.
func (fl *flow) tasks() int {
	return max(fl.cfg.TasksMax, 1)
}

// owns says whether a copier task copies a partition. A topic's
// partitions are dealt round robin over the tasks from a start its name
// picks, so the split spreads every topic and never changes when topics
// are added (a partition never moves between running tasks).
func (fl *flow) owns(task int, topic string, partition int32) bool {
	n := uint32(fl.tasks())
	return (crc32.ChecksumIEEE([]byte(topic))+uint32(partition))%n == uint32(task)
}

// topicsGrew is closed when the topic sync next publishes more topics or
// partitions; take it before reading what it guards.
func (fl *flow) topicsGrew() <-chan struct{} {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	return fl.grown
}

// mirrored returns the topics to copy and their partition counts.
func (fl *flow) mirrored() map[string]int32 {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	out := make(map[string]int32, len(fl.topics))
	for t, n := range fl.topics {
		out[t] = n
	}
	return out
}

// state returns a copy of a partition's state (the zero state, source end
// unknown, for one not seen yet).
func (fl *flow) state(t string, p int32) partState {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	if s := fl.parts[tp{t, p}]; s != nil {
		return *s
	}
	return partState{sourceEnd: -1}
}

func (fl *flow) setNext(t string, p int32, next, sourceEnd int64) {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	k := tp{t, p}
	s := fl.parts[k]
	if s == nil {
		s = &partState{sourceEnd: -1}
		fl.parts[k] = s
	}
	s.next = next
	if sourceEnd >= 0 {
		s.sourceEnd = sourceEnd
	}
}

func (fl *flow) stop(t string, p int32, why string) {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	if s := fl.parts[tp{t, p}]; s != nil {
		s.stopped = why
	}
}

func (fl *flow) lag() []PartitionLag {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	out := make([]PartitionLag, 0, len(fl.parts))
	for k, s := range fl.parts {
		l := PartitionLag{
			Flow: fl.name, SourceTopic: k.topic, TargetTopic: fl.remote(k.topic), Partition: k.partition,
			Next: s.next, SourceEnd: s.sourceEnd, OffsetPreserved: fl.cfg.OffsetPreserving, Stopped: s.stopped,
		}
		if s.sourceEnd > s.next {
			l.Lag = s.sourceEnd - s.next
		}
		out = append(out, l)
	}
	return out
}

func (fl *flow) counters() Counters {
	return Counters{
		Flow: fl.name, Records: fl.records.Load(), Bytes: fl.bytes.Load(), OffsetSyncs: fl.offsetSyncs.Load(),
		Checkpoints: fl.checkpoints.Load(), GroupOffsetSyncs: fl.groupSyncs.Load(), Heartbeats: fl.heartbeats.Load(),
		TopicsCreated: fl.topicsCreated.Load(), Errors: fl.errs.Load(), LastReplicationMs: fl.lastLatency.Load(),
	}
}

// ensureTopic creates a compacted internal topic if it is missing.
func ensureTopic(ctx context.Context, adm *kadm.Client, topic string, partitions int32, rf int16) error {
	if rf == 0 {
		rf = -1
	}
	resp, err := adm.CreateTopic(ctx, partitions, rf, map[string]*string{"cleanup.policy": ptr("compact")}, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil && !errors.Is(err, kerrTopicExists) {
		return fmt.Errorf("create %s: %w", topic, err)
	}
	return nil
}

func ptr[T any](v T) *T { return &v }

package broker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-io/samsa/internal/group"
	"github.com/samsa-io/samsa/internal/metadata"
	"github.com/samsa-io/samsa/internal/model"
	"github.com/samsa-io/samsa/internal/replication"
	"github.com/samsa-io/samsa/internal/sharecoord"
	"github.com/samsa-io/samsa/internal/task"
	"github.com/samsa-io/samsa/internal/txn"
)

// Coordinators follow leadership, as in Kafka: the group coordinator
// serves the __consumer_offsets partitions this broker leads, the
// transaction coordinator the __transaction_state ones. Each applied image
// kicks coordinatorSync, one goroutine that compares the partitions led
// here (and their leader epochs) with those loaded, unloads what is no
// longer led (its requests answer NOT_COORDINATOR, and clients look up the
// new coordinator) and loads what newly is (COORDINATOR_LOAD_IN_PROGRESS
// meanwhile). One goroutine does both, so a partition's Load and Unload
// never run at once, as the coordinators require. A partition led again in
// a later epoch is reloaded: another leader may have written to it since.
//
// The single node takes the same path: it leads every partition, so it
// loads them all once the topic exists.
type coordinatorSync struct {
	kick chan struct{} // capacity 1: a pending kick covers every later image
	// started is set once Start has made the coordinators; images
	// applied before then are covered by Start's own marking.
	started atomic.Bool
	mu      struct {
		sync.Mutex
		// marked holds the partitions markLedLoading marked loading, by
		// topic, for the next pass: one no longer led by then is
		// unloaded, so it does not answer LOAD_IN_PROGRESS forever.
		marked map[string]map[int32]bool
	}
	// loaded is notified after each partition's load.
	loaded task.Broadcast
	// ready is closed after the first pass: the partitions led at start
	// are loaded (or failed).
	ready chan struct{}
	// loaded maps each loaded partition to the leader epoch it was
	// loaded in; touched by the sync goroutine only.
	groups, txns, shares map[int32]int32
}

func newCoordinatorSync() *coordinatorSync {
	s := &coordinatorSync{kick: make(chan struct{}, 1), ready: make(chan struct{}),
		groups: map[int32]int32{}, txns: map[int32]int32{}, shares: map[int32]int32{}}
	s.mu.marked = map[string]map[int32]bool{}
	return s
}

// takeMarked returns and forgets the partitions of topic marked loading.
func (s *coordinatorSync) takeMarked(topic string) map[int32]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.mu.marked[topic]
	delete(s.mu.marked, topic)
	return m
}

// markLedLoading marks every internal partition led here that the
// coordinators do not serve yet as loading, at once, as each image is
// applied and before clients are served: between a FindCoordinator that
// names this broker and the pass that loads the partition, the group's
// requests answer COORDINATOR_LOAD_IN_PROGRESS (wait) rather than
// NOT_COORDINATOR (look again).
func (b *Broker) markLedLoading() {
	s := b.coordSync
	if !s.started.Load() {
		return // Start marks once the coordinators exist
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for topic, mark := range map[string]func(int32){group.OffsetsTopic: b.groups.MarkLoading, txn.StateTopic: b.txns.MarkLoading, sharecoord.StateTopic: b.shareCoord.MarkLoading} {
		for p := range b.ledPartitions(topic) {
			mark(p)
			if s.mu.marked[topic] == nil {
				s.mu.marked[topic] = map[int32]bool{}
			}
			s.mu.marked[topic][p] = true
		}
	}
}

// notify asks for a pass; it never blocks (applyImage calls it).
func (s *coordinatorSync) notify() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// runCoordinatorSync keeps the coordinators in step with leadership until
// ctx ends. It starts after the coordinators do.
func (b *Broker) runCoordinatorSync(ctx context.Context) {
	s := b.coordSync
	b.syncCoordinators(ctx)
	close(s.ready)
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.kick:
			b.syncCoordinators(ctx)
		}
	}
}

func (b *Broker) syncCoordinators(ctx context.Context) {
	s := b.coordSync
	b.syncCoordinator(ctx, group.OffsetsTopic, s.groups, b.groups.Load, b.groups.Unload)
	b.syncCoordinator(ctx, txn.StateTopic, s.txns, b.txns.Load, b.txns.Unload)
	b.syncCoordinator(ctx, sharecoord.StateTopic, s.shares, b.shareCoord.Load, b.shareCoord.Unload)
}

func (b *Broker) syncCoordinator(ctx context.Context, topic string, loaded map[int32]int32,
	load func(context.Context, int32) error, unload func(int32)) {
	marked := b.coordSync.takeMarked(topic)
	led := b.ledPartitions(topic)
	for p := range marked {
		if _, ok := led[p]; !ok {
			if _, ok := loaded[p]; !ok {
				unload(p) // marked, then lost before its load
			}
		}
	}
	for p, epoch := range loaded {
		if e, ok := led[p]; !ok || e != epoch {
			unload(p)
			delete(loaded, p)
			b.log.Info("coordinator unloaded", "topic", topic, "partition", p, "epoch", epoch)
		}
	}
	parts := make([]int32, 0, len(led))
	for p := range led {
		if _, ok := loaded[p]; !ok {
			parts = append(parts, p)
		}
	}
	slices.Sort(parts)
	for _, p := range parts {
		if ctx.Err() != nil {
			return
		}
		// A failed load is kept as loaded: its keys answer
		// COORDINATOR_NOT_AVAILABLE until the leadership changes, and
		// the next leader (or this one in a new epoch) loads again.
		if err := load(ctx, p); err != nil {
			b.log.Error("coordinator load failed", "topic", topic, "partition", p, "err", err)
		}
		loaded[p] = led[p]
		b.coordSync.loaded.Notify()
	}
	if len(parts) > 0 {
		b.log.Info("coordinator loaded", "topic", topic, "partitions", len(parts))
	}
}

// ledPartitions maps each partition of topic this broker leads to its
// leader epoch, as the replicas have applied it.
func (b *Broker) ledPartitions(topic string) map[int32]int32 {
	out := map[int32]int32{}
	ts, ok := b.topics.byTopicName(topic)
	if !ok {
		return out
	}
	for i, p := range ts.partitions {
		if p != nil && p.IsLeader() {
			out[int32(i)] = p.LeaderEpoch()
		}
	}
	return out
}

// coordinatorNode is the broker that coordinates a key: the leader of its
// partition of the internal topic, as the image says. ok is false while
// the partition has no live leader (or the topic does not exist). The
// single node does not register, so its own leadership needs no broker
// record.
func (b *Broker) coordinatorNode(img *metadata.Image, topic string, partition int32) (model.NodeID, bool) {
	t, found := img.Topic(topic)
	if !found || int(partition) < 0 || int(partition) >= len(t.Partitions) {
		return 0, false
	}
	leader := t.Partitions[partition].Leader
	switch {
	case leader < 0:
		return 0, false
	case int32(leader) == b.cfg.NodeID:
		return leader, true
	}
	br, live := img.Broker(leader)
	return leader, live && !br.Fenced
}

// coordinatorEpoch is the leader epoch of a __transaction_state
// partition, which the transaction coordinator writes into its markers.
func (b *Broker) coordinatorEpoch(partition int32) int32 {
	ts, ok := b.topics.byTopicName(txn.StateTopic)
	if !ok {
		return 0
	}
	if p, code := ts.partition(partition); code == 0 {
		return p.LeaderEpoch()
	}
	return 0
}

// loadWait bounds how long FindCoordinator waits for this broker's own
// coordinator to load the key's partition.
const loadWait = 2 * time.Second

// awaitLoaded waits, up to loadWait, while this broker's coordinator is
// still loading partition of topic: FindCoordinator answers once the
// coordinator it names can serve, so a client's next request does not
// meet COORDINATOR_LOAD_IN_PROGRESS right after a leadership change or
// the topic's creation. A longer load is left to the client's retries.
func (b *Broker) awaitLoaded(topic string, partition int32) {
	code := b.groups.PartitionCode
	switch topic {
	case txn.StateTopic:
		code = b.txns.PartitionCode
	case sharecoord.StateTopic:
		code = b.shareCoord.PartitionCode
	}
	timer := time.NewTimer(loadWait)
	defer timer.Stop()
	for {
		ch := b.coordSync.loaded.Wait()
		if code(partition) != kerr.CoordinatorLoadInProgress.Code {
			return
		}
		select {
		case <-ch:
		case <-timer.C:
			return
		}
	}
}

// appendCommitted appends a batch the broker writes itself (a
// coordinator's record, a transaction marker) as an acks=all produce
// would: NOT_ENOUGH_REPLICAS, without appending, while the ISR is below
// the topic's min.insync.replicas, then a wait until the ISR has the batch
// (WaitCommitted decides at once, with no waiter, when it already has).
// appended, if set, runs once the batch is in the log, whatever the wait
// then says. An error wraps the kerr error a request answers with; ctx's
// end stays a context error (REQUEST_TIMED_OUT for the coordinators).
func appendCommitted(ctx context.Context, ts *topicState, p *replication.Partition, batch []byte, appended func()) error {
	minISR := int(ts.config.Int("min.insync.replicas"))
	if n := p.ISRSize(); n < minISR {
		return fmt.Errorf("%w: %s has %d in-sync replicas, min.insync.replicas is %d", kerr.NotEnoughReplicas, p.TP, n, minISR)
	}
	res, err := p.Append(batch)
	if err != nil {
		return asKafkaError(err)
	}
	if appended != nil {
		appended()
	}
	if err := p.WaitCommitted(ctx, res.LastOffset, minISR); err != nil {
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			return err
		}
		return asKafkaError(err)
	}
	return nil
}

// asKafkaError wraps an append's or a wait's error in the kerr error it
// answers as (appendErrorCode).
func asKafkaError(err error) error {
	code, _ := appendErrorCode(err)
	return fmt.Errorf("%w: %v", kerr.ErrorForCode(code), err)
}

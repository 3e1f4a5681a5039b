package txn

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/samsa-io/samsa/internal/clock"
	"github.com/samsa-io/samsa/internal/coordlog"
	"github.com/samsa-io/samsa/internal/model"
	"github.com/samsa-io/samsa/internal/task"
)

// Log is the coordinator's view of __transaction_state. The broker adapts
// it to its partitions; MemLog is an in-memory twin for tests.
type Log interface {
	// Append appends one record batch, built by this package with offset
	// 0, to the partition, and returns once the batch is as durable as an
	// acks=all produce. To answer with a particular Kafka error, return
	// (or wrap) the kerr error; other errors are answered as
	// COORDINATOR_NOT_AVAILABLE.
	Append(ctx context.Context, partition int32, batch []byte) error
	// ReadAll calls fn with the partition's batches from its start, in
	// offset order; one call may hold several concatenated batches, valid
	// only during the call. A partition that does not exist has none.
	ReadAll(ctx context.Context, partition int32, fn func(batches []byte) error) error
}

// Deps is what the coordinator needs from the rest of the broker.
type Deps struct {
	// Log is __transaction_state. Required.
	Log Log
	// AllocateProducerID returns a producer ID no other producer holds
	// (from the controller's producer-ID blocks). Required.
	AllocateProducerID func(ctx context.Context) (int64, error)
	// WriteMarkers writes a transaction marker (a control batch of the
	// producer ID and epoch, COMMIT or ABORT) to each partition, and
	// returns once all are durable; an error means some may be missing,
	// and the same markers are written again later. Partitions of
	// __consumer_offsets are among them when offsets were added: the
	// broker also tells the group coordinator to apply or drop the
	// transaction's pending offsets. Called without coordinator locks
	// held; it must not call back into the coordinator. Required.
	WriteMarkers func(ctx context.Context, producerID int64, producerEpoch int16, commit bool,
		coordinatorEpoch int32, partitions []model.TopicPartition) error
	// GroupPartition is the __consumer_offsets partition of a group, for
	// AddOffsetsToTxn. Nil: partition 0.
	GroupPartition func(groupID string) int32
	// TopicExists reports whether a partition exists; AddPartitionsToTxn
	// answers UNKNOWN_TOPIC_OR_PARTITION for others. Nil: all exist.
	TopicExists func(topic string, partition int32) bool
	// CoordinatorEpoch is the leader epoch of a __transaction_state
	// partition, written in markers so partitions refuse a deposed
	// coordinator's. Nil: 0, enough for a single node.
	CoordinatorEpoch func(partition int32) int32
	// Clock is where time comes from; default clock.Real.
	Clock clock.Clock
	// Logger; default slog.Default(), with component=txn.
	Logger *slog.Logger
}

// Coordinator is the transaction coordinator for the __transaction_state
// partitions this broker leads. Its methods are safe for concurrent use.
type Coordinator struct {
	cfg   Config
	deps  Deps
	clock clock.Clock
	log   *slog.Logger
	tasks *task.Group
	// recovering counts the background completions Load started, so
	// tests can wait for them.
	recovering sync.WaitGroup

	mu struct {
		sync.Mutex
		// txns holds every transactional ID of the partitions loaded.
		txns map[string]*txn
		// partitions holds the __transaction_state partitions served;
		// IDs elsewhere answer NOT_COORDINATOR.
		partitions coordlog.Partitions
	}
}

// New returns a coordinator that serves no partition until Load.
func New(cfg Config, deps Deps) *Coordinator {
	cfg.fill()
	if deps.Clock == nil {
		deps.Clock = clock.Real
	}
	if deps.Logger == nil {
		deps.Logger = slog.Default()
	}
	if deps.GroupPartition == nil {
		deps.GroupPartition = func(string) int32 { return 0 }
	}
	if deps.CoordinatorEpoch == nil {
		deps.CoordinatorEpoch = func(int32) int32 { return 0 }
	}
	c := &Coordinator{
		cfg:   cfg,
		deps:  deps,
		clock: deps.Clock,
		log:   deps.Logger.With("component", "txn"),
		tasks: task.NewGroup(context.Background()),
	}
	c.mu.txns = make(map[string]*txn)
	c.mu.partitions = coordlog.Partitions{}
	return c
}

// Start starts the timeout and expiry sweeps. The coordinator serves no
// partition until Load: the broker loads each __transaction_state
// partition it becomes the leader of, and unloads those it stops leading.
func (c *Coordinator) Start() {
	c.tasks.Every(c.cfg.AbortTimedOutInterval, func(context.Context) { c.AbortTimedOut() })
	c.tasks.Every(c.cfg.RemoveExpiredInterval, func(context.Context) { c.RemoveExpired() })
}

// PartitionCode is the error a key of partition answers with now: 0 when
// served, COORDINATOR_LOAD_IN_PROGRESS while loading, NOT_COORDINATOR when
// not served.
func (c *Coordinator) PartitionCode(partition int32) int16 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.partitions.Code(partition)
}

// MarkLoading marks a partition loading ahead of its Load, when this
// broker has just become its leader: its keys answer
// COORDINATOR_LOAD_IN_PROGRESS, not NOT_COORDINATOR, until the load. A
// partition served already keeps its state.
func (c *Coordinator) MarkLoading(partition int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mu.partitions.MarkLoading(partition)
}

// Stop ends the background work and unloads every partition.
func (c *Coordinator) Stop() {
	c.tasks.Stop()
	c.mu.Lock()
	parts := c.mu.partitions.List()
	c.mu.Unlock()
	for _, p := range parts {
		c.Unload(p)
	}
}

// Load replays a partition of __transaction_state and serves its
// transactional IDs: call it when this broker becomes the partition's
// leader. Transactions found prepared (the broker stopped between the
// prepare record and the complete one) have their markers written again in
// the background; ongoing ones keep running, and abort when their timeout
// passes.
func (c *Coordinator) Load(ctx context.Context, partition int32) error {
	c.setPartition(partition, coordlog.Loading)
	c.dropTxns(partition)
	txns, err := c.replay(ctx, partition)
	c.mu.Lock()
	if err != nil {
		c.mu.partitions[partition] = coordlog.Failed
		c.mu.Unlock()
		return fmt.Errorf("txn: load partition %d: %w", partition, err)
	}
	var prepared []*txn
	for _, t := range txns {
		c.mu.txns[t.id] = t
		if t.st.prepared() {
			prepared = append(prepared, t)
		}
	}
	c.mu.partitions[partition] = coordlog.Active
	c.mu.Unlock()
	c.log.Debug("loaded __transaction_state partition", "partition", partition, "transactional_ids", len(txns),
		"prepared", len(prepared))
	if len(prepared) > 0 {
		c.recovering.Add(1)
		c.tasks.Go(func(context.Context) {
			defer c.recovering.Done()
			for _, t := range prepared {
				t.mu.Lock()
				if !t.removed && t.st.prepared() && !t.completing {
					_ = c.completeLocked(t)
				}
				t.mu.Unlock()
			}
		})
	}
	return nil
}

// Unload stops serving a partition when this broker no longer leads it.
func (c *Coordinator) Unload(partition int32) {
	c.mu.Lock()
	delete(c.mu.partitions, partition)
	c.mu.Unlock()
	c.dropTxns(partition)
}

func (c *Coordinator) setPartition(partition int32, st coordlog.PartitionState) {
	c.mu.Lock()
	c.mu.partitions[partition] = st
	c.mu.Unlock()
}

func (c *Coordinator) dropTxns(partition int32) {
	for _, t := range c.snapshot(func(t *txn) bool { return t.partition == partition }) {
		t.mu.Lock()
		c.removeLocked(t)
		t.mu.Unlock()
	}
}

// snapshot lists the transactional IDs in the table that keep says to.
func (c *Coordinator) snapshot(keep func(*txn) bool) []*txn {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]*txn, 0, len(c.mu.txns))
	for _, t := range c.mu.txns {
		if keep == nil || keep(t) {
			out = append(out, t)
		}
	}
	return out
}

// lockTxn returns the transactional ID's txn with its lock held, creating
// a blank one (producer ID -1) if create is set. With none to use it
// returns nil and the code to answer: NOT_COORDINATOR,
// COORDINATOR_LOAD_IN_PROGRESS or COORDINATOR_NOT_AVAILABLE from the ID's
// partition, or 0 when the ID is unknown.
func (c *Coordinator) lockTxn(id string, create bool) (*txn, int16) {
	partition := PartitionFor(id, c.cfg.NumPartitions)
	for {
		c.mu.Lock()
		if code := c.mu.partitions.Code(partition); code != 0 {
			c.mu.Unlock()
			return nil, code
		}
		t := c.mu.txns[id]
		if t == nil {
			if !create {
				c.mu.Unlock()
				return nil, 0
			}
			t = &txn{id: strings.Clone(id), partition: partition, st: txnState{
				producerID: noProducerID, producerEpoch: noProducerEpoch,
				lastProducerID: noProducerID, lastProducerEpoch: noProducerEpoch, nextProducerID: noProducerID,
			}}
			c.mu.txns[t.id] = t
		}
		c.mu.Unlock()
		t.mu.Lock()
		if !t.removed {
			return t, 0
		}
		t.mu.Unlock() // expired or unloaded since the lookup: look again
	}
}

// unlock releases t, taking a txn that never got a producer ID out of the
// table.
func (c *Coordinator) unlock(t *txn) {
	if !t.removed && t.st.producerID == noProducerID {
		c.removeLocked(t)
	}
	t.mu.Unlock()
}

// removeLocked takes t out of the table; t.mu is held.
func (c *Coordinator) removeLocked(t *txn) {
	t.removed = true
	c.mu.Lock()
	if c.mu.txns[t.id] == t {
		delete(c.mu.txns, t.id)
	}
	c.mu.Unlock()
}

// transitLocked writes next as t's state and makes it current once durable;
// t.mu is held, and stays held over the append so the log holds an ID's
// records in the order its state changed. It returns the code to answer
// when the write fails; t's state is then unchanged.
func (c *Coordinator) transitLocked(t *txn, next txnState) int16 {
	next.lastUpdate = c.clock.Now()
	if err := c.append(t.partition, txnKey(t.id), txnValue(&next), next.lastUpdate); err != nil {
		c.log.Warn("writing transaction state failed", "transactional_id", t.id, "state", next.state, "err", err)
		return writeErrorCode(err)
	}
	t.st = next
	return 0
}

func (c *Coordinator) append(partition int32, key, value []byte, now time.Time) error {
	batch, err := buildBatch(key, value, now)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(c.tasks.Context(), c.cfg.WriteTimeout)
	defer cancel()
	return c.deps.Log.Append(ctx, partition, batch)
}

// errMarkers reports that a prepared transaction could not be completed
// now; the sweep retries it.
var errMarkers = errors.New("txn: markers not written")

// completeLocked finishes a prepared transaction: it writes the markers
// with t.mu released (marking t completing, so other requests answer
// CONCURRENT_TRANSACTIONS and the sweep leaves it alone), then writes the
// complete state. t.mu is held on entry and on return; an error leaves t
// prepared for the sweep to retry.
func (c *Coordinator) completeLocked(t *txn) error {
	st := t.st
	commit := st.state == statePrepareCommit
	if len(st.partitions) > 0 {
		t.completing = true
		t.mu.Unlock()
		ctx, cancel := context.WithTimeout(c.tasks.Context(), c.cfg.MarkerTimeout)
		err := c.deps.WriteMarkers(ctx, st.producerID, st.producerEpoch, commit,
			c.deps.CoordinatorEpoch(t.partition), st.partitions)
		cancel()
		t.mu.Lock()
		t.completing = false
		if err != nil {
			c.log.Warn("writing transaction markers failed; will retry", "transactional_id", t.id,
				"commit", commit, "err", err)
			return fmt.Errorf("%w: %w", errMarkers, err)
		}
		if t.removed {
			return fmt.Errorf("%w: transactional id unloaded", errMarkers)
		}
	}
	next := t.st
	next.state = stateCompleteAbort
	if commit {
		next.state = stateCompleteCommit
	}
	next.partitions = nil
	if next.nextProducerID != noProducerID {
		// A version 2 EndTxn ran out of epochs and handed out a new ID.
		next.lastProducerID, next.producerID, next.producerEpoch = next.producerID, next.nextProducerID, 0
		next.nextProducerID = noProducerID
	}
	if code := c.transitLocked(t, next); code != 0 {
		return fmt.Errorf("%w: writing complete state: %s", errMarkers, errName(code))
	}
	return nil
}

package sharecoord

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-io/samsa/internal/clock"
	"github.com/samsa-io/samsa/internal/coordlog"
	"github.com/samsa-io/samsa/internal/record"
	"github.com/samsa-io/samsa/internal/share"
)

// StateTopic is Kafka's internal topic of share-partition state.
const StateTopic = "__share_group_state"

// Log is __share_group_state as the coordinator uses it; the broker adapts
// its partitions to it, coordlog.MemLog is the in-memory one for tests.
type Log interface {
	// Append appends one record batch (offset 0: the log assigns the real
	// one) and returns once it is as durable as an acks=all produce. A
	// kerr error in the chain is answered as Kafka maps it; others are
	// COORDINATOR_NOT_AVAILABLE.
	Append(ctx context.Context, partition int32, batch []byte) error
	// ReadAll calls fn with the partition's batches from its start.
	ReadAll(ctx context.Context, partition int32, fn func(batches []byte) error) error
}

// Deps is what the coordinator needs from the broker.
type Deps struct {
	Log Log
	// Partitions is the partition count of __share_group_state
	// (share.coordinator.state.topic.num.partitions).
	Partitions int32
	Clock      clock.Clock
	Logger     *slog.Logger
}

// Coordinator serves the __share_group_state partitions this broker leads.
// Its methods are safe for concurrent use.
type Coordinator struct {
	deps Deps
	log  *slog.Logger
	mu   struct {
		sync.Mutex
		parts coordlog.Partitions
		// keys holds each loaded key's state, by partition.
		keys map[int32]map[share.Key]*keyState
	}
}

// keyState is one share-partition's stored state. mu is held across a
// write's append, so the log holds a key's records in the order its state
// changed; it is taken before Coordinator.mu, never while holding it.
type keyState struct {
	mu   sync.Mutex
	gone bool // deleted, or its partition unloaded: look the key up again
	snap share.Snapshot
}

// New makes a coordinator; it serves nothing until Load.
func New(deps Deps) *Coordinator {
	if deps.Clock == nil {
		deps.Clock = clock.Real
	}
	if deps.Logger == nil {
		deps.Logger = slog.Default()
	}
	if deps.Partitions <= 0 {
		deps.Partitions = 50
	}
	c := &Coordinator{deps: deps, log: deps.Logger.With("component", "sharecoord")}
	c.mu.parts = coordlog.Partitions{}
	c.mu.keys = map[int32]map[share.Key]*keyState{}
	return c
}

// PartitionFor is the __share_group_state partition of a key.
func (c *Coordinator) PartitionFor(k share.Key) int32 {
	return share.PartitionFor(k, c.deps.Partitions)
}

// MarkLoading marks a partition this broker just came to lead.
func (c *Coordinator) MarkLoading(partition int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mu.parts.MarkLoading(partition)
}

// PartitionCode is the error a key of partition gets now (0: served).
func (c *Coordinator) PartitionCode(partition int32) int16 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.parts.Code(partition)
}

// Load replays a partition and serves it. Load and Unload of one
// partition never run at once (the broker's coordinator sync runs them).
func (c *Coordinator) Load(ctx context.Context, partition int32) error {
	c.MarkLoading(partition)
	keys := map[share.Key]*keyState{}
	bad := 0
	err := c.deps.Log.ReadAll(ctx, partition, func(batches []byte) error {
		return record.ForEachBatch(batches, func(batch []byte, h record.Header) error {
			if h.IsControl() {
				return nil
			}
			return record.Iterate(batch, 64<<20, func(rec *record.Record) bool {
				if !apply(keys, rec.Key, rec.Value) {
					bad++
				}
				return true
			})
		})
	})
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		c.mu.parts[partition] = coordlog.Failed
		return fmt.Errorf("sharecoord: load %s-%d: %w", StateTopic, partition, err)
	}
	if bad > 0 {
		c.log.Warn("records of __share_group_state not loaded", "partition", partition, "undecodable", bad)
	}
	c.mu.keys[partition] = keys
	c.mu.parts[partition] = coordlog.Active
	return nil
}

// apply folds one record into keys; false for one that does not decode.
func apply(keys map[share.Key]*keyState, key, value []byte) bool {
	k, snap, upd, err := share.DecodeRecord(key, value)
	if err != nil {
		return false
	}
	switch {
	case snap == nil && upd == nil: // tombstone
		delete(keys, k)
	case snap != nil:
		keys[k] = &keyState{snap: *snap}
	default:
		ks, ok := keys[k]
		if !ok {
			return true // an update without its snapshot: nothing to apply it to
		}
		ks.snap.SnapshotEpoch = upd.SnapshotEpoch
		ks.snap.LeaderEpoch = upd.LeaderEpoch
		ks.snap.Batches = merge(ks.snap.Batches, upd.StartOffset, upd.Batches)
		if upd.StartOffset >= 0 {
			ks.snap.StartOffset = upd.StartOffset
		}
	}
	return true
}

// Unload stops serving a partition.
func (c *Coordinator) Unload(partition int32) {
	c.mu.Lock()
	keys := c.mu.keys[partition]
	delete(c.mu.keys, partition)
	delete(c.mu.parts, partition)
	c.mu.Unlock()
	for _, ks := range keys {
		ks.mu.Lock()
		ks.gone = true
		ks.mu.Unlock()
	}
}

// lookup returns a key's state, locked (nil with no state), or the error
// its partition answers. With create, a missing key gets a fresh state.
func (c *Coordinator) lookup(k share.Key, create bool) (*keyState, int16) {
	p := c.PartitionFor(k)
	for {
		c.mu.Lock()
		if code := c.mu.parts.Code(p); code != 0 {
			c.mu.Unlock()
			return nil, code
		}
		ks, ok := c.mu.keys[p][k]
		if !ok {
			if !create {
				c.mu.Unlock()
				return nil, 0
			}
			ks = &keyState{snap: share.Snapshot{StartOffset: -1, StateEpoch: -1, LeaderEpoch: -1}}
			ks.snap.CreateTimestamp = c.deps.Clock.Now().UnixMilli()
			c.mu.keys[p][k] = ks
		}
		c.mu.Unlock()
		ks.mu.Lock()
		if !ks.gone {
			return ks, 0
		}
		ks.mu.Unlock()
	}
}

// persist appends the key's state next as a snapshot and, once it is
// committed, makes it the key's state. ks is locked.
func (c *Coordinator) persist(ctx context.Context, k share.Key, ks *keyState, next share.Snapshot) int16 {
	next.SnapshotEpoch = ks.snap.SnapshotEpoch + 1
	now := c.deps.Clock.Now()
	next.WriteTimestamp = now.UnixMilli()
	if next.CreateTimestamp == 0 {
		next.CreateTimestamp = next.WriteTimestamp
	}
	next.DeliveryCompleteCount = int32(min(stateOf(&next).DeliveryComplete, 1<<31-1))
	if code := c.append(ctx, k, share.EncodeSnapshotValue(next), now); code != 0 {
		return code
	}
	ks.snap = next
	return 0
}

func (c *Coordinator) append(ctx context.Context, k share.Key, value []byte, now time.Time) int16 {
	b := record.Batch{
		ProducerID: record.NoProducerID, ProducerEpoch: record.NoProducerEpoch, BaseSequence: record.NoSequence,
		Records: []record.Record{{Timestamp: now.UnixMilli(), Key: share.EncodeSnapshotKey(k), Value: value}},
	}
	batch, err := b.AppendTo(nil)
	if err == nil {
		err = c.deps.Log.Append(ctx, c.PartitionFor(k), batch)
	}
	if err != nil {
		c.log.Warn("append to __share_group_state failed", "key", share.CoordinatorKey(k), "err", err)
		return appendCode(err)
	}
	return 0
}

// appendCode maps an append's error as Kafka's coordinators do: a lost
// leadership is NOT_COORDINATOR (look the coordinator up again), a timeout
// REQUEST_TIMED_OUT, the rest COORDINATOR_NOT_AVAILABLE (retry).
func appendCode(err error) int16 {
	var ke *kerr.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return kerr.RequestTimedOut.Code
	case errors.As(err, &ke):
		switch ke {
		case kerr.NotLeaderForPartition, kerr.UnknownTopicOrPartition, kerr.FencedLeaderEpoch:
			return kerr.NotCoordinator.Code
		case kerr.NotEnoughReplicas, kerr.NotEnoughReplicasAfterAppend:
			return kerr.CoordinatorNotAvailable.Code
		}
		return ke.Code
	}
	return kerr.CoordinatorNotAvailable.Code
}

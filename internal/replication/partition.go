package replication

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/samsa-io/samsa/internal/model"
	"github.com/samsa-io/samsa/internal/storage"
)

// Partition is this broker's replica of one partition.
type Partition struct {
	TP      model.TopicPartition
	TopicID model.TopicID
	log     *storage.Log
	durable bool // acknowledge only what is fsynced (durable mode)

	mu struct {
		sync.Mutex
		leaderEpoch int32
		leader      int32
		isr         []int32
		waiters     map[*Waiter]struct{}
	}
	highWatermark atomic.Int64
}

// NewPartition wraps an open log as the leader's replica (single node).
func NewPartition(tp model.TopicPartition, id model.TopicID, log *storage.Log, leader, leaderEpoch int32, durable bool) *Partition {
	p := &Partition{TP: tp, TopicID: id, log: log, durable: durable}
	p.mu.leader, p.mu.leaderEpoch, p.mu.isr = leader, leaderEpoch, []int32{leader}
	p.mu.waiters = map[*Waiter]struct{}{}
	p.highWatermark.Store(p.initialHighWatermark())
	return p
}

func (p *Partition) initialHighWatermark() int64 {
	if p.durable {
		return p.log.Offsets().RecoveryPoint
	}
	return p.log.LogEndOffset()
}

// HighWatermark is the offset below which records are committed (readable
// by consumers).
func (p *Partition) HighWatermark() int64 { return p.highWatermark.Load() }

// LeaderEpoch is the current leader epoch.
func (p *Partition) LeaderEpoch() int32 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mu.leaderEpoch
}

// SetLeader records a leadership change from the metadata image.
func (p *Partition) SetLeader(leader, epoch int32, isr []int32) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mu.leader, p.mu.leaderEpoch, p.mu.isr = leader, epoch, isr
}

// Append appends batches as leader and advances the high watermark; in
// durable mode the watermark moves only after the group commit covers the
// batches, so acks=all (and consumers) see only durable data.
func (p *Partition) Append(batches []byte) (storage.AppendResult, error) {
	p.mu.Lock()
	epoch := p.mu.leaderEpoch
	p.mu.Unlock()
	res, err := p.log.AppendAsLeader(batches, epoch)
	if err != nil {
		return res, err
	}
	if p.durable {
		if err := p.log.Sync(res.LastOffset + 1); err != nil {
			return res, err
		}
		p.advanceHighWatermark(p.log.Offsets().RecoveryPoint)
		return res, nil
	}
	p.advanceHighWatermark(res.LastOffset + 1)
	return res, nil
}

// advanceHighWatermark moves the watermark forward (never back) and wakes
// every waiting fetch.
func (p *Partition) advanceHighWatermark(hw int64) {
	for {
		cur := p.highWatermark.Load()
		if hw <= cur {
			return
		}
		if p.highWatermark.CompareAndSwap(cur, hw) {
			break
		}
	}
	p.mu.Lock()
	for w := range p.mu.waiters {
		w.notify()
	}
	p.mu.Unlock()
}

// ResetHighWatermark sets the watermark after truncation or a log reset.
func (p *Partition) ResetHighWatermark() {
	p.highWatermark.Store(p.initialHighWatermark())
}

// Read reads committed data from offset (records below the high
// watermark), Kafka's consumer view.
func (p *Partition) Read(offset int64, maxBytes int32, minOneBatch bool) (storage.ReadResult, int64, error) {
	return p.readUpTo(offset, maxBytes, minOneBatch, p.HighWatermark())
}

// LastStableOffset is the high watermark, or the first offset of the
// oldest open transaction if that is lower: read_committed consumers read
// below it.
func (p *Partition) LastStableOffset() int64 {
	hw := p.HighWatermark()
	if fu := p.log.FirstUnstableOffset(); fu >= 0 && fu < hw {
		return fu
	}
	return hw
}

// ReadCommitted reads up to the last stable offset (read_committed) and
// returns it.
func (p *Partition) ReadCommitted(offset int64, maxBytes int32, minOneBatch bool) (storage.ReadResult, int64, error) {
	return p.readUpTo(offset, maxBytes, minOneBatch, p.LastStableOffset())
}

// readUpTo reads below limit. An offset past the high watermark is out of
// range; one between limit and the high watermark reads nothing yet.
func (p *Partition) readUpTo(offset int64, maxBytes int32, minOneBatch bool, limit int64) (storage.ReadResult, int64, error) {
	if hw := p.HighWatermark(); offset > hw {
		return storage.ReadResult{}, limit, fmt.Errorf("%w: %d past the high watermark %d", storage.ErrOffsetOutOfRange, offset, hw)
	}
	if offset >= limit {
		return storage.ReadResult{}, limit, nil
	}
	rr, err := p.log.Read(offset, maxBytes, limit, minOneBatch)
	return rr, limit, err
}

// Waiter is a fetch waiting for data on any of several partitions: it
// registers with each, and any high-watermark advance wakes it.
type Waiter struct {
	ch    chan struct{}
	parts []*Partition
}

// NewWaiter registers a waiter with the given partitions. Call Done when
// finished waiting.
func NewWaiter(parts []*Partition) *Waiter {
	w := &Waiter{ch: make(chan struct{}, 1), parts: parts}
	for _, p := range parts {
		p.mu.Lock()
		p.mu.waiters[w] = struct{}{}
		p.mu.Unlock()
	}
	return w
}

func (w *Waiter) notify() {
	select {
	case w.ch <- struct{}{}:
	default:
	}
}

// Wait blocks until a registered partition's high watermark moves or ctx
// is done; it reports false for the latter.
func (w *Waiter) Wait(ctx context.Context) bool {
	select {
	case <-w.ch:
		return true
	case <-ctx.Done():
		return false
	}
}

// C is the wake-up channel, for callers that select on more.
func (w *Waiter) C() <-chan struct{} { return w.ch }

// Done unregisters the waiter.
func (w *Waiter) Done() {
	for _, p := range w.parts {
		p.mu.Lock()
		delete(p.mu.waiters, w)
		p.mu.Unlock()
	}
}

// ISRSize is the number of in-sync replicas, for min.insync.replicas.
func (p *Partition) ISRSize() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.mu.isr)
}

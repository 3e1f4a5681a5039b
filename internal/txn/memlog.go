package txn

import (
	"context"
	"slices"
	"sync"

	"github.com/samsa-io/samsa/internal/record"
)

// MemLog is an in-memory Log, the twin of the broker's __transaction_state
// partitions for tests: batches are kept whole, with offsets assigned as a
// partition leader would, and never compacted. Safe for concurrent use.
type MemLog struct {
	mu       sync.Mutex
	parts    map[int32][][]byte
	next     map[int32]int64
	failWith error
}

// NewMemLog returns an empty MemLog.
func NewMemLog() *MemLog {
	return &MemLog{parts: make(map[int32][][]byte), next: make(map[int32]int64)}
}

// Append keeps a copy of batch, with its base offset set to the partition's
// next offset.
func (l *MemLog) Append(ctx context.Context, partition int32, batch []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	h, err := record.ParseHeader(batch)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.failWith != nil {
		return l.failWith
	}
	b := slices.Clone(batch)
	record.SetBaseOffset(b, l.next[partition])
	l.next[partition] += int64(h.LastOffsetDelta) + 1
	l.parts[partition] = append(l.parts[partition], b)
	return nil
}

// ReadAll calls fn with each batch of the partition in order.
func (l *MemLog) ReadAll(ctx context.Context, partition int32, fn func(batches []byte) error) error {
	l.mu.Lock()
	batches := slices.Clone(l.parts[partition])
	l.mu.Unlock()
	for _, b := range batches {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(b); err != nil {
			return err
		}
	}
	return nil
}

// FailAppends makes every Append fail with err from now on; nil heals.
func (l *MemLog) FailAppends(err error) {
	l.mu.Lock()
	l.failWith = err
	l.mu.Unlock()
}

// Len returns the number of batches appended to a partition.
func (l *MemLog) Len(partition int32) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.parts[partition])
}

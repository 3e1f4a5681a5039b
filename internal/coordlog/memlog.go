package coordlog

import (
	"context"
	"slices"
	"sync"

	"github.com/samsa-io/samsa/internal/record"
)

// MemLog is an in-memory coordinator log, the twin of the broker's internal-topic
// partitions for tests: batches are kept whole, with offsets assigned as a
// partition leader would, and never compacted. Safe for concurrent use.
type MemLog struct {
	mu    sync.Mutex
	parts map[int32]*memPartition
	// failWith, when set, fails every Append.
	failWith error
}

type memPartition struct {
	batches    [][]byte
	nextOffset int64
}

// NewMemLog returns an empty MemLog.
func NewMemLog() *MemLog {
	return &MemLog{parts: make(map[int32]*memPartition)}
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
	p := l.parts[partition]
	if p == nil {
		p = &memPartition{}
		l.parts[partition] = p
	}
	b := slices.Clone(batch)
	record.SetBaseOffset(b, p.nextOffset)
	p.nextOffset += int64(h.LastOffsetDelta) + 1
	p.batches = append(p.batches, b)
	return nil
}

// ReadAll calls fn with each batch of the partition in order.
func (l *MemLog) ReadAll(ctx context.Context, partition int32, fn func(batches []byte) error) error {
	l.mu.Lock()
	var batches [][]byte
	if p := l.parts[partition]; p != nil {
		batches = slices.Clone(p.batches)
	}
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

// Batches returns copies of the partition's batches, for inspection.
func (l *MemLog) Batches(partition int32) [][]byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	p := l.parts[partition]
	if p == nil {
		return nil
	}
	out := make([][]byte, len(p.batches))
	for i, b := range p.batches {
		out[i] = slices.Clone(b)
	}
	return out
}

// Len returns the number of batches appended to a partition.
func (l *MemLog) Len(partition int32) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if p := l.parts[partition]; p != nil {
		return len(p.batches)
	}
	return 0
}

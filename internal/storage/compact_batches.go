package storage

import (
	"math"

	"github.com/samsa-io/samsa/internal/record"
)

// compactOptions is what compactBatch needs to know beyond the offset map.
// Nil predicates answer false: nothing is treated as aborted, no marker is
// removable, no empty batch is retained.
type compactOptions struct {
	// NowMs is the pass's time: a batch stamped with a delete horizon at or
	// before it loses its tombstones (and, if its transaction is gone, its
	// marker). DeleteRetentionMs is how far ahead a new horizon is stamped.
	NowMs             int64
	DeleteRetentionMs int64
	// MapEnd is where the mapped dirty section ends. Batches from it on are
	// only ever cleaned of records the map replaces: no tombstone or marker
	// goes, no horizon is stamped. Zero means everything is in range.
	MapEnd int64
	// DropAborted reports whether the transactional data batch of
	// producerID at offset (its base offset) belongs to an aborted
	// transaction; its records are then all dropped.
	DropAborted func(producerID, offset int64) bool
	// DataKept is told, for each transactional data batch in offset order,
	// whether any of its records stayed.
	DataKept func(producerID int64, kept bool)
	// MarkerDone is asked, for each transaction marker in offset order,
	// whether its transaction has no data left in the cleaned log: only
	// then is the marker stamped with a horizon and later removed.
	MarkerDone func(producerID int64) bool
	// LastBatchOfProducer reports whether the batch of producerID ending at
	// lastOffset is that producer's last data batch. Such a batch is kept
	// as an empty header when cleaning removes all its records, so the
	// producer's last sequence and epoch survive (Kafka's RETAIN_EMPTY).
	LastBatchOfProducer func(producerID, lastOffset int64) bool
	// Horizon is told the delete horizon of every batch written with one.
	Horizon func(ms int64)
	// MaxDecompressed bounds the decompressed size of one batch.
	MaxDecompressed int
	// scratch, when set, holds the kept records of the batch being
	// rebuilt, reused from batch to batch; nil allocates per batch.
	scratch *compactScratch
}

// compactScratch is the memory a pass reuses to copy the records it keeps
// out of record.Iterate's buffers: one byte arena for keys, values and
// header values, and the record and header slices.
type compactScratch struct {
	arena []byte
	recs  []record.Record
	hdrs  []record.RecordHeader
}

// scratchBuffers is the pass's scratch, emptied, or a new one.
func (o *compactOptions) scratchBuffers() *compactScratch {
	if o.scratch == nil {
		return &compactScratch{}
	}
	o.scratch.reset()
	return o.scratch
}

func (c *compactScratch) reset() {
	c.arena, c.recs, c.hdrs = c.arena[:0], c.recs[:0], c.hdrs[:0]
}

// bytes copies b into the arena; nil stays nil. A slice handed out stays
// valid when the arena grows (it points into the old array).
func (c *compactScratch) bytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	start := len(c.arena)
	c.arena = append(c.arena, b...)
	return c.arena[start:len(c.arena):len(c.arena)]
}

// keep copies r out of the buffers record.Iterate reuses. Null keys,
// values and header values stay null.
func (c *compactScratch) keep(r *record.Record) {
	k := *r
	k.Key, k.Value = c.bytes(r.Key), c.bytes(r.Value)
	if r.Headers != nil {
		start := len(c.hdrs)
		for _, hd := range r.Headers {
			c.hdrs = append(c.hdrs, record.RecordHeader{Key: hd.Key, Value: c.bytes(hd.Value)})
		}
		k.Headers = c.hdrs[start:len(c.hdrs):len(c.hdrs)]
	}
	c.recs = append(c.recs, k)
}

func (o *compactOptions) horizon(ms int64) {
	if o.Horizon != nil {
		o.Horizon(ms)
	}
}

// newHorizon is the delete horizon a batch is stamped with now.
func (o *compactOptions) newHorizon() int64 {
	r := max(o.DeleteRetentionMs, 0)
	if o.NowMs > math.MaxInt64-r {
		return math.MaxInt64
	}
	return max(o.NowMs+r, 1)
}

// compactBatch appends the cleaned form of one batch and reports whether it
// differs from the batch. A data record stays when its offset is at least
// the one m holds for its key (absent keys stay: they are the latest for
// their key as far as this cleaning knows; a nil m keeps every key),
// unless it is a tombstone in a batch whose delete horizon has passed, or
// part of an aborted transaction. Keyless data records are dropped, as
// Kafka's cleaner does; validation refuses them on compacted topics anyway.
//
// A batch that loses nothing and needs no horizon is copied byte for byte.
// Otherwise it is rebuilt with the same codec, producer fields, flags,
// leader epoch, base offset and last offset delta, as Kafka does for v2: the
// base offset and last offset stay so that base sequence + offset delta
// still gives each record's sequence, and the producer's last sequence is
// unchanged. Kept records keep their offsets, so deltas have gaps. A batch
// that loses everything is dropped, unless it is the producer's last data
// batch (LastBatchOfProducer), which stays as a header with no records.
func compactBatch(dst, batch []byte, h *record.Header, m *offsetMap, o *compactOptions) ([]byte, bool, error) {
	if err := record.CheckCRC(batch); err != nil {
		return dst, false, err
	}
	inRange := o.MapEnd == 0 || h.BaseOffset < o.MapEnd
	horizon, stamped := h.DeleteHorizonMs()
	pastHorizon := stamped && horizon <= o.NowMs
	if h.IsControl() {
		done := o.MarkerDone != nil && o.MarkerDone(h.ProducerID)
		switch {
		case !inRange || !done || (stamped && !pastHorizon):
			if stamped {
				o.horizon(horizon)
			}
			return append(dst, batch...), false, nil
		case pastHorizon:
			return dst, true, nil
		}
		return rebuildBatch(dst, batch, h, o)
	}
	dropAll := h.IsTransactional() && o.DropAborted != nil && o.DropAborted(h.ProducerID, h.BaseOffset)
	sc := o.scratchBuffers()
	defer sc.reset()
	n, tombs := 0, false
	if !dropAll {
		err := record.Iterate(batch, o.MaxDecompressed, func(r *record.Record) bool {
			n++
			if keepRecord(r, m, inRange && pastHorizon) {
				sc.keep(r)
				tombs = tombs || r.Value == nil
			}
			return true
		})
		if err != nil {
			return dst, false, err
		}
	}
	kept := sc.recs
	if h.IsTransactional() && o.DataKept != nil {
		o.DataKept(h.ProducerID, len(kept) > 0)
	}
	stamp := int64(0)
	if stamped {
		stamp = horizon
	} else if tombs && inRange {
		stamp = o.newHorizon()
	}
	if tombs && stamp > 0 {
		o.horizon(stamp)
	}
	if !dropAll && len(kept) == n && (stamp == 0 || stamped) {
		return append(dst, batch...), false, nil
	}
	if len(kept) == 0 {
		if h.ProducerID >= 0 && o.LastBatchOfProducer != nil && o.LastBatchOfProducer(h.ProducerID, h.LastOffset()) {
			return record.AppendEmptyBatch(dst, h), true, nil
		}
		return dst, true, nil
	}
	return appendRebuilt(dst, h, kept, stamp)
}

// rebuildBatch rewrites a control batch with a new delete horizon.
func rebuildBatch(dst, batch []byte, h *record.Header, o *compactOptions) ([]byte, bool, error) {
	horizon := o.newHorizon()
	sc := o.scratchBuffers()
	defer sc.reset()
	err := record.Iterate(batch, o.MaxDecompressed, func(r *record.Record) bool {
		sc.keep(r)
		return true
	})
	recs := sc.recs
	if err != nil || len(recs) == 0 {
		return append(dst, batch...), false, err
	}
	o.horizon(horizon)
	return appendRebuilt(dst, h, recs, horizon)
}

// appendRebuilt encodes kept as h's batch, with the delete horizon if any.
func appendRebuilt(dst []byte, h *record.Header, kept []record.Record, horizon int64) ([]byte, bool, error) {
	b := record.Batch{
		BaseOffset:           h.BaseOffset,
		PartitionLeaderEpoch: h.PartitionLeaderEpoch,
		Codec:                h.Codec(),
		LogAppendTime:        h.LogAppendTime(),
		Transactional:        h.IsTransactional(),
		Control:              h.IsControl(),
		ProducerID:           h.ProducerID,
		ProducerEpoch:        h.ProducerEpoch,
		BaseSequence:         h.BaseSequence,
		DeleteHorizonMs:      horizon,
		Records:              kept,
	}
	start := len(dst)
	dst, err := b.AppendTo(dst)
	if err != nil {
		return dst, false, err
	}
	record.SetLastOffsetDelta(dst[start:], h.LastOffsetDelta)
	return dst, true, nil
}

// keepRecord decides a data record's fate.
func keepRecord(r *record.Record, m *offsetMap, dropTombstones bool) bool {
	if r.Key == nil {
		return false
	}
	if m != nil {
		if latest, ok := m.Get(r.Key); ok && r.Offset < latest {
			return false
		}
	}
	return r.Value != nil || !dropTombstones
}

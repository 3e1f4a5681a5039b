package storage

import (
	"bytes"
	"fmt"

	"github.com/samsa-io/samsa/internal/record"
)

// compactOptions is what compactBatches needs to know beyond the offset map.
// Nil predicates answer false: nothing is treated as aborted, no marker is
// removable, no empty batch is retained.
type compactOptions struct {
	// DeleteHorizonMs: tombstones (null values) and removable transaction
	// markers in a batch whose MaxTimestamp is below it are dropped; the
	// cleaner passes the segment-time cutoff less delete.retention.ms.
	DeleteHorizonMs int64
	// DropAborted reports whether the transactional data batch of
	// producerID at offset (its base offset) belongs to an aborted
	// transaction; its records are then all dropped.
	DropAborted func(producerID, offset int64) bool
	// MarkerDone reports whether the transaction marker of producerID at
	// offset may go: no record of its transaction is left in the log. It is
	// asked only for markers past the delete horizon.
	MarkerDone func(producerID, offset int64) bool
	// LastBatchOfProducer reports whether the batch of producerID ending at
	// lastOffset is that producer's last in the log. Such a batch is kept
	// as an empty header when cleaning removes all its records, so the
	// producer's last sequence and epoch survive (Kafka's RETAIN_EMPTY).
	LastBatchOfProducer func(producerID, lastOffset int64) bool
	// MaxDecompressed bounds the decompressed size of one batch.
	MaxDecompressed int
}

// compactBatches appends to dst the cleaned form of segment, a run of whole
// RecordBatch v2 batches, and returns it. A record stays when its offset is
// at least the one m holds for its key (absent keys stay: they are the latest
// for their key as far as this cleaning knows), unless it is a tombstone past
// the delete horizon or part of an aborted transaction. Keyless data records
// are dropped, as Kafka's cleaner does; validation refuses them on compacted
// topics anyway.
//
// A batch that loses nothing is copied byte for byte. A batch that loses
// some records is rebuilt with the same codec, producer fields, flags,
// leader epoch, base offset and last offset delta, as Kafka does for v2: the
// base offset and last offset stay so that base sequence + offset delta still
// gives each record's sequence, and the producer's last sequence is
// unchanged. Kept records keep their offsets, so deltas have gaps. A batch
// that loses everything is dropped, unless it is the producer's last batch
// (LastBatchOfProducer), which stays as a header with no records.
//
// Every input batch must pass its CRC: a corrupt batch is an error, never
// rewritten with a fresh CRC. On error dst is returned unchanged.
func compactBatches(dst, segment []byte, m *offsetMap, o compactOptions) ([]byte, error) {
	start := len(dst)
	err := record.ForEachBatch(segment, func(batch []byte, h record.Header) error {
		if err := record.CheckCRC(batch); err != nil {
			return fmt.Errorf("storage: compact batch at offset %d: %w", h.BaseOffset, err)
		}
		var err error
		dst, err = compactBatch(dst, batch, &h, m, &o)
		if err != nil {
			return fmt.Errorf("storage: compact batch at offset %d: %w", h.BaseOffset, err)
		}
		return nil
	})
	if err != nil {
		return dst[:start], err
	}
	return dst, nil
}

// compactBatch appends the cleaned form of one batch.
func compactBatch(dst, batch []byte, h *record.Header, m *offsetMap, o *compactOptions) ([]byte, error) {
	pastHorizon := h.MaxTimestamp < o.DeleteHorizonMs
	dropAll := false
	switch {
	case h.IsControl():
		dropAll = pastHorizon && o.MarkerDone != nil && o.MarkerDone(h.ProducerID, h.BaseOffset)
	case h.IsTransactional():
		dropAll = o.DropAborted != nil && o.DropAborted(h.ProducerID, h.BaseOffset)
	}
	var kept []record.Record
	n := 0
	if !dropAll {
		err := record.Iterate(batch, o.MaxDecompressed, func(r *record.Record) bool {
			n++
			if h.IsControl() || keepRecord(r, m, pastHorizon) {
				kept = append(kept, cloneRecord(r))
			}
			return true
		})
		if err != nil {
			return dst, err
		}
		if len(kept) == n {
			return append(dst, batch...), nil
		}
	}
	if len(kept) == 0 {
		if h.ProducerID >= 0 && o.LastBatchOfProducer != nil && o.LastBatchOfProducer(h.ProducerID, h.LastOffset()) {
			return record.AppendEmptyBatch(dst, h), nil
		}
		return dst, nil
	}
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
		Records:              kept,
	}
	start := len(dst)
	dst, err := b.AppendTo(dst)
	if err != nil {
		return dst, err
	}
	record.SetLastOffsetDelta(dst[start:], h.LastOffsetDelta)
	return dst, nil
}

// keepRecord decides a data record's fate.
func keepRecord(r *record.Record, m *offsetMap, pastHorizon bool) bool {
	if r.Key == nil {
		return false
	}
	if latest, ok := m.Get(r.Key); ok && r.Offset < latest {
		return false
	}
	return r.Value != nil || !pastHorizon
}

// cloneRecord copies r out of the buffers record.Iterate reuses. Null keys,
// values and header values stay null.
func cloneRecord(r *record.Record) record.Record {
	c := *r
	c.Key = bytes.Clone(r.Key)
	c.Value = bytes.Clone(r.Value)
	if r.Headers != nil {
		c.Headers = make([]record.RecordHeader, len(r.Headers))
		for i, hd := range r.Headers {
			c.Headers[i] = record.RecordHeader{Key: hd.Key, Value: bytes.Clone(hd.Value)}
		}
	}
	return c
}

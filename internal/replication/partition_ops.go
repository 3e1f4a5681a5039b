package replication

import (
	"fmt"

	"github.com/samsa-io/samsa/internal/storage"
)

// The operations below are the broker's whole view of a replica's log:
// every rule that depends on being leader or follower (the high watermark
// bounding what is visible, which epoch wrote an offset) is applied here,
// so the broker never reaches around the partition to the raw log.

// LogStartOffset is the first offset still in the log.
func (p *Partition) LogStartOffset() int64 { return p.log().LogStartOffset() }

// Size is the bytes the partition's segments take on disk.
func (p *Partition) Size() int64 { return p.log().Offsets().Size }

// LogOffsets is the log's bounds, size and segment count, read together
// (for metrics).
func (p *Partition) LogOffsets() storage.Offsets { return p.log().Offsets() }

// SetConfig applies a topic's changed configs to the log.
func (p *Partition) SetConfig(cfg storage.Config) { p.log().SetConfig(cfg) }

// AbortedTransactions lists the aborted transactions whose data lies in
// [from, to), for read_committed fetches.
func (p *Partition) AbortedTransactions(from, to int64) []storage.AbortedTxn {
	return p.log().AbortedTransactions(from, to)
}

// Producers lists the idempotent and transactional producers the partition
// tracks (DescribeProducers).
func (p *Partition) Producers() []storage.ProducerState { return p.log().Producers() }

// EndOffsetForEpoch answers OffsetsForLeaderEpoch: the largest epoch at or
// below epoch and the offset where it ended (KIP-101, KIP-279).
func (p *Partition) EndOffsetForEpoch(epoch int32) (int32, int64) {
	return p.log().EndOffsetForEpoch(epoch)
}

// Special ListOffsets timestamps (Kafka's ListOffsetsRequest).
const (
	LatestTimestamp        = -1
	EarliestTimestamp      = -2
	MaxTimestamp           = -3
	EarliestLocalTimestamp = -4
)

// ListOffset resolves a ListOffsets timestamp (or one of the special ones)
// to an offset, its record's timestamp and the leader epoch that wrote it,
// seeing only what consumers may see: offsets below the high watermark, or
// below the last stable offset for read_committed. Offset -1 means none.
func (p *Partition) ListOffset(timestamp int64, readCommitted bool) (offset, ts int64, epoch int32, err error) {
	visible := p.HighWatermark()
	if readCommitted {
		visible = p.LastStableOffset()
	}
	offset, ts, err = p.lookupOffset(timestamp, visible)
	if err != nil {
		return -1, -1, -1, err
	}
	return offset, ts, p.epochOf(offset), nil
}

func (p *Partition) lookupOffset(timestamp, visible int64) (int64, int64, error) {
	switch timestamp {
	case LatestTimestamp:
		return visible, -1, nil
	case EarliestTimestamp, EarliestLocalTimestamp:
		return p.log().LogStartOffset(), -1, nil
	case MaxTimestamp:
		off, t, found, err := p.log().MaxTimestamp()
		if err != nil || !found || off >= visible {
			return -1, -1, err
		}
		return off, t, nil
	}
	if timestamp < 0 {
		return -1, -1, nil
	}
	off, t, found, err := p.log().OffsetForTimestamp(timestamp)
	if err != nil || !found || off >= visible {
		return -1, -1, err
	}
	return off, t, nil
}

// epochOf is the leader epoch that wrote off: the last epoch starting at or
// before it (the current epoch when the log has none; -1 for offset -1).
func (p *Partition) epochOf(off int64) int32 {
	if off < 0 {
		return -1
	}
	epoch := int32(-1)
	for _, e := range p.log().Epochs() {
		if e.StartOffset > off {
			break
		}
		epoch = e.Epoch
	}
	if epoch < 0 {
		return p.LeaderEpoch()
	}
	return epoch
}

// DeleteRecords moves the log start offset up to offset (-1: the high
// watermark), as DeleteRecords asks of the leader (ErrNotLeader on a
// follower, which follows its leader's log start instead); an offset past
// the high watermark is storage.ErrOffsetOutOfRange. It returns the new
// log start offset.
func (p *Partition) DeleteRecords(offset int64) (int64, error) {
	if !p.IsLeader() {
		return -1, fmt.Errorf("%w: %s delete records", ErrNotLeader, p.TP)
	}
	hw := p.HighWatermark()
	if offset == -1 {
		offset = hw
	}
	if offset < 0 || offset > hw {
		return -1, fmt.Errorf("%w: %d is outside [0, %d]", storage.ErrOffsetOutOfRange, offset, hw)
	}
	if err := p.log().SetLogStartOffset(offset); err != nil {
		return -1, err
	}
	return p.log().LogStartOffset(), nil
}

// LogEndOffset is the offset after the last record this replica holds,
// committed or not.
func (p *Partition) LogEndOffset() int64 { return p.log().LogEndOffset() }

// ReadAsLeader reads up to the log end, committed or not, on the leader:
// what a coordinator replays when this broker becomes the leader of its
// internal partition. Everything a leader holds becomes committed in its
// epoch (its followers truncate to it), or the leadership is lost and the
// coordinator unloads with it, so the state it rebuilds is never ahead of
// the log that survives. Reading only below the high watermark would drop
// an acknowledged commit whose advance the new leader had not yet learned
// when the old one died. A replica that does not lead is ErrNotLeader.
func (p *Partition) ReadAsLeader(offset int64, maxBytes int32, minOneBatch bool) (storage.ReadResult, int64, error) {
	if !p.IsLeader() {
		return storage.ReadResult{}, 0, fmt.Errorf("%w: %s", ErrNotLeader, p.TP)
	}
	return p.readUpTo(offset, maxBytes, minOneBatch, (*Partition).LogEndOffset)
}

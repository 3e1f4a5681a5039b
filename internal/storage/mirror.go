package storage

import (
	"fmt"
	"path/filepath"

	"github.com/samsa-io/samsa/internal/record"
	"github.com/samsa-io/samsa/internal/vfs"
)

// gapMarkerFile, in a partition directory, says that the log took a batch
// that left offsets out outside compaction (a mirror append, or a
// follower's copy of one). Recovery demands contiguous offsets of a log
// without gaps (checkRecovered), which catches a garbled base offset; it
// would cut this log at its first gap. The marker is written, durably,
// before the first such batch, and is never removed: a mirror topic
// promoted to an ordinary one keeps its gaps.
const gapMarkerFile = "offset-gaps"

// loadGapMarker turns Config.OffsetGaps on for a log whose directory holds
// the marker, before its segments are recovered.
func (l *Log) loadGapMarker() error {
	ok, err := l.opts.FS.Exists(filepath.Join(l.dir, gapMarkerFile))
	if err != nil {
		return err
	}
	if ok {
		l.mu.gapped = true
		l.mu.cfg.OffsetGaps = true
	}
	return nil
}

// markGapsLocked writes the gap marker before batches that leave offsets
// out (from the log end, or between two of them) are written.
func (l *Log) markGapsLocked(batches []batchInfo) error {
	if l.mu.gapped || len(batches) == 0 {
		return nil
	}
	gap := batches[0].baseOffset > l.mu.nextOffset
	for i := 1; i < len(batches) && !gap; i++ {
		gap = batches[i].baseOffset > batches[i-1].lastOffset+1
	}
	if !gap {
		return nil
	}
	if err := vfs.WriteFileAtomic(l.opts.FS, filepath.Join(l.dir, gapMarkerFile), []byte("offsets of this log have gaps\n")); err != nil {
		return fmt.Errorf("storage: mark offset gaps in %s: %w", l.dir, err)
	}
	l.mu.gapped = true
	l.mu.cfg.OffsetGaps = true
	return nil
}

// MirrorOverlapError is a mirror append's batch that holds the log end
// without starting there (ErrMirrorOverlap): the log's batches and the
// source's are cut at different offsets.
type MirrorOverlapError struct {
	Dir                    string
	BaseOffset, LastOffset int64
	LogEndOffset           int64
}

func (e *MirrorOverlapError) Error() string {
	return fmt.Sprintf("batch %d..%d holds the log end offset %d without starting there", e.BaseOffset, e.LastOffset, e.LogEndOffset)
}

func (e *MirrorOverlapError) Unwrap() error { return ErrMirrorOverlap }

// AppendMirror appends batches of a mirror topic's source on the leader,
// at the offsets they carry (docs/DESIGN-mirror-topics.md). The caller
// has validated each batch (record.Validate FromLog) and its producer
// fields; the log checks offsets and CRCs under its lock, so concurrent
// or retried appends of the same batches cannot both write:
//
//   - a batch that ends below the log end is skipped (a retry, or a
//     batch the log already holds);
//   - a batch that holds the log end without starting there is
//     ErrMirrorOverlap (MirrorOverlapError), and nothing is written, unless
//     the log is empty, where it restarts the log at its base keeping the
//     log start offset, as a follower's does (AppendAsFollower);
//   - a batch that starts at or past the log end is appended there; past
//     it, a gap is left (gapMarkerFile); on an empty log (end == start)
//     the log restarts at the first batch's base, so its log start offset
//     is the source's.
//
// Each appended batch's partition leader epoch (outside the CRC) becomes
// leaderEpoch, so the epoch cache and followers' truncation treat the
// batches as this leader's; an epoch older than the log's batches' is
// ErrLeaderEpochRegression. Timestamps are kept, even on a LogAppendTime
// topic: they are the source's. A CRC that does not match is
// record.ErrCorrupt.
//
// The result's FirstOffset is the first appended batch's base offset, or
// when every batch was skipped the first skipped one's (Duplicate set);
// LastOffset likewise the last appended (or skipped) offset.
func (l *Log) AppendMirror(data []byte, leaderEpoch int32) (AppendResult, error) {
	res := AppendResult{LogAppendTime: -1, MaxTimestamp: -1}
	l.mu.Lock()
	if err := l.writableLocked(); err != nil {
		l.mu.Unlock()
		return res, err
	}
	batches, rest, pa, err := l.prepareMirrorLocked(data, leaderEpoch, &res)
	if err == nil && len(batches) == 0 {
		res.Duplicate = true
		res.LogStartOffset = l.mu.logStartOffset
		l.mu.Unlock()
		return res, nil
	}
	if err == nil {
		err = l.writeLocked(rest, batches, leaderEpoch, true)
	}
	if err != nil {
		l.mu.Unlock()
		return res, err
	}
	return l.commitAppendLocked(pa, res)
}

// prepareMirrorLocked skips the batches the log already holds, checks
// the rest, restarts an empty log where they begin, and stamps them with
// leaderEpoch; it returns them with what the segment needs to index them
// and the producer-state update to commit once they are written. Nothing
// changes when a check fails.
func (l *Log) prepareMirrorLocked(data []byte, leaderEpoch int32, res *AppendResult) ([]batchInfo, []byte, *ProducerAppend, error) {
	end := l.mu.nextOffset
	pos, skipped := 0, false
	for pos < len(data) {
		h, err := l.mirrorHeader(data[pos:])
		if err != nil {
			return nil, nil, nil, err
		}
		if h.LastOffset() >= end {
			break
		}
		if !skipped {
			res.FirstOffset, skipped = h.BaseOffset, true
		}
		res.LastOffset = h.LastOffset()
		pos += h.Size()
	}
	rest := data[pos:]
	if len(rest) == 0 {
		if !skipped {
			return nil, nil, nil, fmt.Errorf("storage: append to %s: %w: no batches", l.dir, record.ErrCorrupt)
		}
		return nil, nil, nil, nil
	}
	first, _ := l.mirrorHeader(rest)
	empty := end == l.mu.logStartOffset
	if first.BaseOffset < end && !empty {
		return nil, nil, nil, &MirrorOverlapError{Dir: l.dir, BaseOffset: first.BaseOffset, LastOffset: first.LastOffset(), LogEndOffset: end}
	}
	if floor := l.mu.epochs.dataEpoch(end); leaderEpoch >= 0 && leaderEpoch < floor {
		return nil, nil, nil, fmt.Errorf("%w: %s: mirror append in epoch %d after batches of epoch %d", ErrLeaderEpochRegression, l.dir, leaderEpoch, floor)
	}
	next := end
	if empty {
		next = first.BaseOffset
	}
	var batches []batchInfo
	for p := 0; p < len(rest); {
		h, err := l.mirrorHeader(rest[p:])
		if err != nil {
			return nil, nil, nil, err
		}
		if err := record.CheckCRC(rest[p : p+h.Size()]); err != nil {
			return nil, nil, nil, fmt.Errorf("storage: append to %s: %w", l.dir, err)
		}
		if h.BaseOffset < next || h.LastOffsetDelta < 0 {
			return nil, nil, nil, fmt.Errorf("%w: %s: mirror batch %d..%d starts below offset %d", ErrInvalidOffset, l.dir, h.BaseOffset, h.LastOffset(), next)
		}
		batches = append(batches, batchInfo{baseOffset: h.BaseOffset, lastOffset: h.LastOffset(), maxTimestamp: h.MaxTimestamp, size: h.Size()})
		res.Records += int64(h.NumRecords)
		res.MaxTimestamp = max(res.MaxTimestamp, h.MaxTimestamp)
		next = h.NextOffset()
		p += h.Size()
	}
	if empty && first.BaseOffset != end {
		// Past the log start the log starts where the source's batches
		// do; below it (a straddling batch) the log start is kept, as a
		// follower keeps its leader's.
		if err := l.truncateFullyLocked(first.BaseOffset, max(first.BaseOffset, end)); err != nil {
			return nil, nil, nil, err
		}
	}
	pa := l.mu.producers.NewAppend()
	for p, i := 0, 0; p < len(rest); p, i = p+batches[i].size, i+1 {
		batch := rest[p : p+batches[i].size]
		record.SetPartitionLeaderEpoch(batch, leaderEpoch)
		if err := pa.UpdateBatch(batch); err != nil {
			return nil, nil, nil, fmt.Errorf("storage: append to %s: %w", l.dir, err)
		}
	}
	res.FirstOffset = batches[0].baseOffset
	res.LastOffset = batches[len(batches)-1].lastOffset
	return batches, rest, pa, nil
}

// mirrorHeader parses the whole batch at the start of data.
func (l *Log) mirrorHeader(data []byte) (record.Header, error) {
	h, err := record.ParseHeader(data)
	if err == nil {
		err = record.CheckComplete(&h, data)
	}
	if err != nil {
		return h, fmt.Errorf("storage: append to %s: %w", l.dir, err)
	}
	return h, nil
}

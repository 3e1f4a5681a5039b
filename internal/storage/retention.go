package storage

import (
	"errors"
	"fmt"

	"github.com/samsa-io/samsa/internal/vfs"
)

// EnforceRetention deletes the oldest whole segments that retention.ms,
// retention.bytes (when cleanup.policy includes delete) or the log start
// offset no longer keep, never touching
// data at or above highWatermark (pass the log end on a single replica).
// Like Kafka it stops at the first segment it must keep, rolls first when
// every segment, the active one included, has expired, and never deletes an
// empty active segment. It returns how many segments it deleted.
func (l *Log) EnforceRetention(highWatermark int64) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.writableLocked(); err != nil {
		return 0, err
	}
	n := l.expiredPrefixLocked(highWatermark)
	if n == 0 {
		return 0, nil
	}
	if n == len(l.mu.segments) {
		if _, err := l.rollLocked(l.mu.nextOffset); err != nil {
			return 0, l.rollFailedLocked(err)
		}
	}
	if err := l.deletePrefixLocked(n); err != nil {
		return n, err
	}
	return n, nil
}

// expiredPrefixLocked counts the leading segments retention may delete.
func (l *Log) expiredPrefixLocked(highWatermark int64) int {
	cfg := &l.mu.cfg
	nowMs := l.opts.Clock.Now().UnixMilli()
	var total int64
	for _, s := range l.mu.segments {
		total += s.size.Load()
	}
	excess := total - cfg.RetentionBytes
	n := 0
	for i, s := range l.mu.segments {
		upper := l.mu.nextOffset
		if i+1 < len(l.mu.segments) {
			upper = l.mu.segments[i+1].baseOffset
		}
		size := s.size.Load()
		if size == 0 || upper > highWatermark {
			break
		}
		largest := s.maxTimestamp
		if largest < 0 {
			largest = s.created.UnixMilli()
		}
		// cleanup.policy=compact alone turns time and size retention off.
		byTime := cfg.Deletes && cfg.RetentionMs >= 0 && nowMs-largest > cfg.RetentionMs
		bySize := cfg.Deletes && cfg.RetentionBytes >= 0 && excess-size >= 0
		byStart := upper <= l.mu.logStartOffset
		if !byTime && !bySize && !byStart {
			break
		}
		excess -= size
		n++
	}
	return n
}

// deletePrefixLocked drops the first n segments and moves the log start
// offset up to the first one kept. Files are unlinked at once; readers that
// still hold a segment keep reading it until they release it.
func (l *Log) deletePrefixLocked(n int) error {
	doomed := l.mu.segments[:n]
	l.mu.segments = append([]*segment(nil), l.mu.segments[n:]...)
	l.mu.logStartOffset = max(l.mu.logStartOffset, l.mu.segments[0].baseOffset)
	var err error
	for _, s := range doomed {
		err = errors.Join(err, removeSegmentFiles(l.opts.FS, l.dir, s.baseOffset))
		s.release()
	}
	if err == nil {
		err = l.opts.FS.SyncDir(l.dir)
	}
	if err == nil {
		err = l.mu.epochs.truncateFromStart(l.mu.logStartOffset)
	}
	if err == nil {
		l.mu.producers.TrimAborted(l.mu.logStartOffset)
		err = DeleteSnapshotsBefore(l.opts.FS, l.dir, l.mu.segments[0].baseOffset)
	}
	if err != nil {
		return l.failLocked(err)
	}
	return nil
}

func removeSegmentFiles(fsys vfs.FS, dir string, base int64) error {
	var err error
	for _, suffix := range []string{logSuffix, indexSuffix, timeIndexSuffix} {
		if rerr := fsys.Remove(segmentName(dir, base, suffix)); rerr != nil && !errors.Is(rerr, vfs.ErrNotExist) {
			err = errors.Join(err, rerr)
		}
	}
	return err
}

// SetLogStartOffset moves the log start offset up to off (DeleteRecords):
// offsets below it can no longer be read, and segments wholly below it are
// deleted now. It is checkpointed before returning. off past the log end is
// ErrOffsetOutOfRange; an off at or below the current start changes nothing.
func (l *Log) SetLogStartOffset(off int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.writableLocked(); err != nil {
		return err
	}
	if off > l.mu.nextOffset {
		return fmt.Errorf("%w: log start %d past log end %d", ErrOffsetOutOfRange, off, l.mu.nextOffset)
	}
	if off <= l.mu.logStartOffset {
		return nil
	}
	l.mu.logStartOffset = off
	n := 0
	for n+1 < len(l.mu.segments) && l.mu.segments[n+1].baseOffset <= off {
		n++
	}
	if n > 0 {
		if err := l.deletePrefixLocked(n); err != nil {
			return err
		}
	} else if err := l.mu.epochs.truncateFromStart(off); err != nil {
		return l.failLocked(err)
	}
	if err := l.checkpointLocked(false); err != nil {
		return l.failLocked(err)
	}
	return nil
}

// TruncateTo removes every batch whose last offset is >= off (a follower
// cutting back to the leader's lineage, at the offset the leader-epoch
// divergence check gave). A batch that straddles off goes whole, so the log
// end may land below off. off below the log start empties the log and
// restarts it at off. The epoch cache is cut at the new end, and so is the
// producer state (rebuilt from its newest snapshot below the end), both
// durably before TruncateTo returns. off at or past the log end cuts no
// batch but still drops an epoch that starts at the log end: one this log
// began as a leader and wrote nothing in.
func (l *Log) TruncateTo(off int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.writableLocked(); err != nil {
		return err
	}
	if off >= l.mu.nextOffset {
		// Nothing to cut; but an epoch this log began as a leader and
		// wrote nothing in starts at the log end and may not be the new
		// leader's: it goes, as in Kafka.
		if err := l.mu.epochs.truncateFromEnd(l.mu.nextOffset); err != nil {
			return l.failLocked(err)
		}
		return nil
	}
	if off < l.mu.logStartOffset {
		return l.truncateFullyLocked(off, off)
	}
	i := l.segmentIndexLocked(off)
	if err := l.dropSegmentsLocked(i + 1); err != nil {
		return err
	}
	active := l.activeLocked()
	if err := active.truncateTo(off); err != nil {
		return l.failLocked(err)
	}
	if active.nextOffset < l.mu.logStartOffset {
		// The batch holding the log start straddled off and went whole:
		// nothing readable is left, so restart empty at the start.
		return l.truncateFullyLocked(l.mu.logStartOffset, l.mu.logStartOffset)
	}
	return l.afterTruncateLocked()
}

// TruncateFullyAndStartAt deletes every segment and restarts the log, empty,
// at off (a follower whose fetch offset is below its leader's log start:
// off is the leader's log start). The leader epochs go too: the follower
// learns them again from the batches it fetches.
func (l *Log) TruncateFullyAndStartAt(off int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.writableLocked(); err != nil {
		return err
	}
	return l.truncateFullyLocked(off, off)
}

// truncateFullyLocked deletes every segment and restarts the log, empty,
// at off, with logStart as its log start offset (off, except for a
// follower's batch that straddles the leader's log start).
func (l *Log) truncateFullyLocked(off, logStart int64) error {
	s, err := createSegment(l.opts.FS, l.dir, off, &l.mu.cfg, l.opts.Clock.Now())
	if err != nil {
		return l.failLocked(err)
	}
	// Creating the new segment first keeps the directory valid at every
	// point; if off equals an old base, Create truncated that file. Every
	// producer-state snapshot describes data that is gone.
	if err := DeleteSnapshotsAfter(l.opts.FS, l.dir, -1); err != nil {
		return l.failLocked(err)
	}
	old := l.mu.segments
	l.mu.segments = []*segment{s}
	for _, o := range old {
		if o.baseOffset != off {
			err = errors.Join(err, removeSegmentFiles(l.opts.FS, l.dir, o.baseOffset))
		}
		o.release()
	}
	if err == nil {
		err = l.opts.FS.SyncDir(l.dir)
	}
	if err != nil {
		return l.failLocked(err)
	}
	// The epochs say nothing of the batches the log restarts with: they
	// all go (Kafka's clearAndFlush), once the old segments are gone. A
	// crash before that reopens the old segments with their epochs, or
	// the empty new one, where reopening moves the old epochs to its
	// start and cuts them there (finishOpen); never old batches without
	// their epochs.
	if err := l.mu.epochs.clear(); err != nil {
		return l.failLocked(err)
	}
	l.mu.logStartOffset = logStart
	return l.afterTruncateLocked()
}

// dropSegmentsLocked deletes the segments from index i on.
func (l *Log) dropSegmentsLocked(i int) error {
	if i >= len(l.mu.segments) {
		return nil
	}
	doomed := l.mu.segments[i:]
	l.mu.segments = l.mu.segments[:i:i]
	var err error
	for _, s := range doomed {
		err = errors.Join(err, removeSegmentFiles(l.opts.FS, l.dir, s.baseOffset))
		s.release()
	}
	if err == nil {
		err = l.opts.FS.SyncDir(l.dir)
	}
	if err != nil {
		return l.failLocked(err)
	}
	return nil
}

// afterTruncateLocked syncs the cut so a crash cannot bring truncated
// batches back (truncation is rare, so the fsync costs nothing in practice),
// and pulls the bounds and epochs back to the new end.
func (l *Log) afterTruncateLocked() error {
	if err := l.activeLocked().flush(); err != nil {
		return l.failLocked(err)
	}
	l.mu.nextOffset = l.activeLocked().nextOffset
	l.mu.truncations++
	if err := l.lowerFirstDirtyLocked(); err != nil {
		return l.failLocked(err)
	}
	l.mu.recoveryPoint = min(l.mu.recoveryPoint, l.mu.nextOffset)
	l.durable.Store(l.mu.recoveryPoint)
	if err := l.mu.epochs.truncateFromEnd(l.mu.nextOffset); err != nil {
		return l.failLocked(err)
	}
	// The checkpointed recovery point may be past the new end; left there,
	// a crash after new appends would trust their unsynced bytes.
	if err := l.checkpointLocked(false); err != nil {
		return l.failLocked(err)
	}
	// The producer state must forget the batches cut off: rebuild it from
	// the newest snapshot below the new end.
	if err := l.loadProducersLocked(); err != nil {
		return l.failLocked(err)
	}
	return nil
}

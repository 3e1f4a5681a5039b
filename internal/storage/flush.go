package storage

import (
	"errors"
	"fmt"
)

// Flush makes every batch appended so far durable.
func (l *Log) Flush() error {
	return l.Sync(l.LogEndOffset())
}

// Sync returns once every batch below upTo is durable (fsynced), or the log
// has failed. It is the group commit: while one caller's flush runs, the
// others wait, and the next flush covers everything they appended, so N
// concurrent acks=all producers cost about one fsync per flush time, not N.
// No goroutine is started: the first waiter to find no flush running runs
// the next one itself.
//
// upTo past the log end (a truncation took the batch away after its
// append) cannot become durable: that is ErrOffsetOutOfRange, not a wait.
func (l *Log) Sync(upTo int64) error {
	l.syncMu.Lock()
	defer l.syncMu.Unlock()
	for l.durable.Load() < upTo {
		if end := l.LogEndOffset(); upTo > end {
			return fmt.Errorf("%w: sync to %d past the log end %d", ErrOffsetOutOfRange, upTo, end)
		}
		if l.syncing {
			l.syncCond.Wait()
			continue
		}
		l.syncing = true
		l.syncMu.Unlock()
		err := l.flushOnce()
		l.syncMu.Lock()
		l.syncing = false
		l.syncCond.Broadcast()
		if err != nil {
			return err
		}
	}
	return nil
}

// flushOnce fsyncs every segment from the one holding the recovery point to
// the active one, then advances the recovery point to the log end it saw
// when it started. Appends continue meanwhile; fsync covers what they add
// too, but only the snapshot is claimed.
func (l *Log) flushOnce() error {
	l.mu.RLock()
	if err := l.writableLocked(); err != nil {
		l.mu.RUnlock()
		return err
	}
	target, appended, truncations := l.mu.nextOffset, l.mu.appended, l.mu.truncations
	segs := l.mu.segments[l.segmentIndexLocked(l.mu.recoveryPoint):]
	for _, s := range segs {
		s.acquire()
	}
	l.mu.RUnlock()

	// Only the log files: every segment's indexes were synced when it
	// rolled (rollLocked), and the active segment's are rebuilt by
	// recovery, which never trusts the segment the recovery point is in.
	var err error
	start := l.opts.Clock.Now()
	for _, s := range segs {
		err = errors.Join(err, s.log.Sync())
		s.release()
	}
	l.opts.Stats.flush.observe(l.opts.Clock.Now().Sub(start))

	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		return l.failLocked(err)
	}
	if l.mu.truncations == truncations && target > l.mu.recoveryPoint {
		l.mu.recoveryPoint = target
		l.durable.Store(target)
	}
	l.mu.flushed = max(l.mu.flushed, appended)
	l.mu.lastFlushMs = l.opts.Clock.Now().UnixMilli()
	return nil
}

// FlushIfDue flushes when flush.ms has passed since the last flush and
// something is unflushed. The Manager calls it periodically.
func (l *Log) FlushIfDue() error {
	l.mu.RLock()
	due := l.mu.appended > l.mu.flushed && l.opts.Clock.Now().UnixMilli()-l.mu.lastFlushMs >= l.mu.cfg.FlushMs
	l.mu.RUnlock()
	if !due {
		return nil
	}
	return l.Flush()
}

// Checkpoint persists the recovery point and log start offset so the next
// unclean open scans less.
func (l *Log) Checkpoint() error {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.mu.closed {
		return ErrClosed
	}
	return l.checkpointLocked(false)
}

func (l *Log) checkpointLocked(clean bool) error {
	c := checkpoint{clean: clean, recoveryPoint: l.mu.recoveryPoint, logStartOffset: l.mu.logStartOffset}
	if clean {
		c.nextOffset = l.mu.nextOffset
		c.activeSize = l.activeLocked().size.Load()
	}
	return writeCheckpoint(l.opts.FS, l.dir, c)
}

// Close flushes everything, seals the active segment's time index, writes
// its indexes, records a clean shutdown (whose checkpoint write syncs the
// directory, making new index names durable) and closes the files. A log
// that failed is closed without the clean mark, so the next open recovers
// it.
func (l *Log) Close() error {
	ferr := l.Flush()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mu.closed {
		return nil
	}
	l.mu.closed = true
	var err error
	if ferr == nil && l.mu.failed == nil {
		active := l.activeLocked()
		active.seal()
		err = active.flush() // its indexes too: a clean open trusts them
		if err == nil {
			err = l.mu.producers.WriteSnapshot(l.opts.FS, l.dir, l.mu.nextOffset)
		}
		if err == nil {
			err = l.checkpointLocked(true)
		}
	}
	for _, s := range l.mu.segments {
		s.release()
	}
	if errors.Is(ferr, ErrClosed) {
		ferr = nil
	}
	return errors.Join(ferr, err)
}

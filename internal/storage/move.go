package storage

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/samsa-io/samsa/internal/model"
	"github.com/samsa-io/samsa/internal/record"
)

// Moving a replica between data directories while it serves
// (AlterReplicaLogDirs), as Kafka's ReplicaAlterLogDirsThread does:
//
//  1. CreateFuture makes an empty log, the future replica, in the target
//     directory (<tp>.<id>-future).
//  2. CatchUpFuture copies the current log's batches into it as a
//     follower copies its leader's (AppendAsFollower: same offsets,
//     epochs, producer state), checking by leader epoch that the future
//     log is still a prefix of the current one, which the replica's own
//     truncations (as a follower) may change, and following its log start.
//     The current replica keeps serving throughout; it alone is
//     authoritative.
//  3. PromoteFuture, with the current log's writers held off by the
//     caller (replication.Partition holds its role lock), copies the last
//     batches, syncs the future log, and swaps: the current replica's
//     directory is renamed <tp>.<id>-delete (the commit point), the future
//     one renamed <tp>, each parent directory synced, the new log reopened
//     (a clean open: it was just closed), and the old directory removed.
//
// Crash safety (scanDirs at the next start): before the commit point the
// current replica is whole and the future one is resumed or dropped;
// after it, the future log is complete and synced, so a -delete replica
// whose future was not renamed yet gives way to it; -delete directories
// are removed. No crash leaves two current replicas.

// CreateFuture returns tp's future replica in dir, creating an empty one
// if there is none; an existing future replica in another directory (an
// earlier move to elsewhere) is deleted first. The current replica must be
// open. A replica already in dir has no future: ok is false.
func (m *Manager) CreateFuture(tp model.TopicPartition, dir string) (fut *Log, ok bool, err error) {
	target := m.dirIndex(dir)
	if target < 0 {
		return nil, false, fmt.Errorf("%w: %s", ErrLogDirNotFound, dir)
	}
	if !m.online(target) {
		return nil, false, fmt.Errorf("%w: %s", ErrLogDirOffline, dir)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	cur, open := m.mu.logs[tp]
	if !open {
		return nil, false, fmt.Errorf("%w: %s", ErrNoReplica, tp)
	}
	if m.mu.where.current[tp] == target {
		if err := m.dropFutureLocked(tp); err != nil {
			return nil, false, err
		}
		return nil, false, nil
	}
	if f, ok := m.mu.where.future[tp]; ok {
		if f.dir == target {
			if fl, open := m.mu.futures[tp]; open {
				return fl, true, nil
			}
		}
		if err := m.dropFutureLocked(tp); err != nil {
			return nil, false, err
		}
	}
	name := movedName(tp, futureSuffix)
	fl, err := Open(filepath.Join(m.dirs[target].path, name), cur.Config(), m.logOptions(target))
	if err != nil {
		if IsIOError(err) {
			m.markOffline(target, err)
		}
		return nil, false, err
	}
	m.mu.futures[tp] = fl
	m.mu.where.future[tp] = futureDir{dir: target, name: name}
	return fl, true, nil
}

// Future returns tp's open future replica and its data directory.
func (m *Manager) Future(tp model.TopicPartition) (*Log, string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	fl, ok := m.mu.futures[tp]
	if !ok {
		return nil, "", false
	}
	return fl, m.dirs[m.mu.where.future[tp].dir].path, true
}

// DropFuture deletes tp's future replica, if any (a move cancelled or
// failed). The current replica is untouched.
func (m *Manager) DropFuture(tp model.TopicPartition) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.dropFutureLocked(tp)
}

func (m *Manager) dropFutureLocked(tp model.TopicPartition) error {
	f, ok := m.mu.where.future[tp]
	if !ok {
		return nil
	}
	var err error
	if fl, open := m.mu.futures[tp]; open {
		err = fl.Close()
	}
	delete(m.mu.futures, tp)
	delete(m.mu.where.future, tp)
	if m.online(f.dir) {
		err = errors.Join(err, removeDurably(m.opts.FS, m.dirs[f.dir].path, f.name))
	}
	return err
}

// CatchUpFuture copies up to maxBytes of cur's batches past fut's end
// into fut, after bringing fut back to a prefix of cur by leader epoch
// and up to cur's log start, and returns how far fut still lags cur's log
// end (Kafka's offset lag of a future replica). cur may be appended to
// meanwhile; its truncations must not run during the call (the caller
// holds the partition's role lock shared).
func CatchUpFuture(cur, fut *Log, maxBytes int32) (int64, error) {
	if err := alignFuture(cur, fut); err != nil {
		return 0, err
	}
	from := fut.LogEndOffset()
	rr, err := cur.ReadWhole(from, maxBytes, -1)
	if err != nil {
		return 0, fmt.Errorf("storage: read %s for its future replica: %w", cur.dir, err)
	}
	data, err := rr.ReadAll()
	rr.Release()
	if err != nil {
		return 0, fmt.Errorf("storage: read %s for its future replica: %w", cur.dir, err)
	}
	if data = wholeBatches(data); len(data) > 0 {
		if _, err := fut.AppendAsFollower(data); err != nil {
			return 0, fmt.Errorf("storage: copy into %s: %w", fut.dir, err)
		}
	}
	return max(cur.LogEndOffset()-fut.LogEndOffset(), 0), nil
}

// alignFuture truncates fut to where it agrees with cur, by the leader
// epoch of its last batch as a follower's divergence check does, and moves
// its log start up to cur's.
func alignFuture(cur, fut *Log) error {
	curStart, curEnd := cur.LogStartOffset(), cur.LogEndOffset()
	for {
		end := fut.LogEndOffset()
		if end == fut.LogStartOffset() {
			break
		}
		trunc := min(end, curEnd)
		if last, ok := fut.LatestEpoch(); ok {
			epoch, epochEnd := cur.EndOffsetForEpoch(last.Epoch)
			switch {
			case epoch < 0:
				trunc = fut.LogStartOffset()
			case epoch == last.Epoch:
				trunc = min(trunc, epochEnd)
			default:
				// cur never had fut's last epoch: cut to where cur's
				// largest epoch below it ends, in both logs, and check
				// again one epoch further back.
				_, futEnd := fut.EndOffsetForEpoch(epoch)
				trunc = min(trunc, epochEnd, futEnd)
			}
		}
		if trunc >= end {
			break
		}
		if err := fut.TruncateTo(trunc); err != nil {
			return err
		}
	}
	switch end := fut.LogEndOffset(); {
	case end < curStart || end == fut.LogStartOffset() && fut.LogStartOffset() != curStart:
		return fut.TruncateFullyAndStartAt(curStart)
	case fut.LogStartOffset() < curStart:
		return fut.SetLogStartOffset(curStart)
	}
	return nil
}

// wholeBatches drops a trailing batch that maxBytes cut short.
func wholeBatches(data []byte) []byte {
	pos := 0
	for pos < len(data) {
		h, err := record.ParseHeader(data[pos:])
		if err != nil || record.CheckComplete(&h, data[pos:]) != nil {
			break
		}
		pos += h.Size()
	}
	return data[:pos]
}

// PromoteFuture makes tp's future replica its current one, cur being the
// current log: the caller holds off cur's writers (appends and
// truncations) until it returns, and then uses the returned log instead.
// It fails, changing nothing, unless the future replica holds everything
// cur does; a failure after the commit point (the rename of the old
// replica) takes the directory that failed offline.
func (m *Manager) PromoteFuture(tp model.TopicPartition, cur *Log) (*Log, error) {
	m.mu.Lock()
	fut, ok := m.mu.futures[tp]
	m.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("%w: %s has no future replica to promote", ErrNoReplica, tp)
	}
	for {
		lag, err := CatchUpFuture(cur, fut, 1<<20)
		if err != nil {
			return nil, err
		}
		if lag == 0 {
			break
		}
	}
	// A current-replica epoch entry with no batch yet (a leader that has
	// not written in its epoch) is carried over, so the new log answers
	// EndOffsetForEpoch as the old one did.
	if last, ok := cur.LatestEpoch(); ok {
		if fl, fok := fut.LatestEpoch(); !fok || fl.Epoch < last.Epoch {
			if err := fut.AssignEpoch(last.Epoch); err != nil {
				return nil, err
			}
		}
	}
	if err := sameLog(cur, fut); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	f := m.mu.where.future[tp]
	from, hasCurrent := m.mu.where.current[tp]
	if m.mu.futures[tp] != fut || !hasCurrent || m.mu.logs[tp] != cur {
		return nil, fmt.Errorf("%w: the future replica of %s changed during its promotion", ErrNoReplica, tp)
	}
	// Close syncs the future log and marks it clean: it is complete on
	// disk before anything depends on it.
	cfg := cur.Config()
	if err := fut.Close(); err != nil {
		return nil, fmt.Errorf("storage: close the future replica of %s: %w", tp, err)
	}
	delete(m.mu.futures, tp)
	delete(m.mu.where.future, tp)
	// From here the old log serves no more; a reader that pinned its
	// segments finishes on the open files.
	_ = cur.Close()
	delete(m.mu.logs, tp)
	srcDir, dstDir := m.dirs[from].path, m.dirs[f.dir].path
	deleted := movedName(tp, deleteSuffix)
	if err := renameDurably(m.opts.FS, srcDir, tp.String(), deleted); err != nil {
		// Not committed, but the source directory fails: its replicas,
		// this one included, are offline until a restart.
		m.markOffline(from, err)
		return nil, err
	}
	// Committed: a crash from here leaves the old replica as -delete and
	// the complete future one, which the next start promotes.
	m.mu.where.current[tp] = f.dir
	if err := renameDurably(m.opts.FS, dstDir, f.name, tp.String()); err != nil {
		m.markOffline(f.dir, err)
		return nil, err
	}
	l, err := Open(filepath.Join(dstDir, tp.String()), cfg, m.logOptions(f.dir))
	if err != nil {
		if IsIOError(err) {
			m.markOffline(f.dir, err)
		}
		return nil, err
	}
	m.mu.logs[tp] = l
	if err := removeDurably(m.opts.FS, srcDir, deleted); err != nil {
		m.opts.Logger.Warn("removing a moved replica's old directory failed; the next start removes it", "component", "storage",
			"partition", tp.String(), "dir", srcDir, "err", err)
	}
	m.opts.Logger.Info("moved a replica between log directories", "component", "storage", "partition", tp.String(),
		"from", srcDir, "to", dstDir, "log_end_offset", l.LogEndOffset())
	return l, nil
}

// sameLog checks that fut holds cur's log: the same bounds, and the same
// latest leader epoch ending at the same place.
func sameLog(cur, fut *Log) error {
	co, fo := cur.Offsets(), fut.Offsets()
	if co.LogStartOffset != fo.LogStartOffset || co.LogEndOffset != fo.LogEndOffset {
		return fmt.Errorf("storage: the future replica of %s holds [%d, %d), the current one [%d, %d)",
			cur.dir, fo.LogStartOffset, fo.LogEndOffset, co.LogStartOffset, co.LogEndOffset)
	}
	ce, cok := cur.LatestEpoch()
	fe, fok := fut.LatestEpoch()
	if cok != fok || ce.Epoch != fe.Epoch {
		return fmt.Errorf("storage: the future replica of %s has latest epoch %v, the current one %v", cur.dir, fe, ce)
	}
	return nil
}

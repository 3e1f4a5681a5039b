package storage

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/samsa-io/samsa/internal/vfs"
)

// Open opens the log in dir, creating it if missing, and recovers it if it
// was not closed cleanly. See the package doc.
func Open(dir string, cfg Config, opts Options) (*Log, error) {
	opts.fill()
	l := &Log{dir: dir, opts: opts}
	l.syncCond = sync.NewCond(&l.syncMu)
	l.mu.cfg = cfg
	if err := l.open(); err != nil {
		return nil, fmt.Errorf("storage: open %s: %w", dir, err)
	}
	return l, nil
}

// dirListing is what a partition directory holds, sorted out.
type dirListing struct {
	bases       []int64 // segments, from .log files, ascending
	hasIndex    map[int64]bool
	hasTime     map[int64]bool
	leftovers   []string       // temporary files of interrupted atomic writes
	orphanIndex []string       // indexes without a .log
	swapped     map[int64]bool // segments a cleaner swap touched: recovered, not trusted
}

// knownFiles are the non-segment files a partition directory may hold.
// partition.metadata is the broker's (topic ID), the rest ours.
var knownFiles = map[string]bool{checkpointFile: true, epochFile: true, cleanerCheckpointFile: true, gapMarkerFile: true, "partition.metadata": true}

func listDir(fsys vfs.FS, dir string) (dirListing, error) {
	names, err := fsys.ReadDir(dir)
	ls := dirListing{hasIndex: map[int64]bool{}, hasTime: map[int64]bool{}}
	if err != nil {
		return ls, err
	}
	logs := map[int64]bool{}
	for _, name := range names {
		if knownFiles[name] {
			continue
		}
		if _, ok := ParseSnapshotName(name); ok {
			continue // producer-state snapshots: loaded after the segments
		}
		if strings.HasSuffix(name, ".tmp") || strings.HasSuffix(name, ".deleted") || strings.HasSuffix(name, ".cleaned") {
			ls.leftovers = append(ls.leftovers, name)
			continue
		}
		base, suffix, ok := parseSegmentFile(name)
		if !ok {
			return ls, fmt.Errorf("%w: %s", ErrUnexpectedFile, filepath.Join(dir, name))
		}
		switch suffix {
		case logSuffix:
			logs[base] = true
			ls.bases = append(ls.bases, base)
		case indexSuffix:
			ls.hasIndex[base] = true
		case timeIndexSuffix:
			ls.hasTime[base] = true
		}
	}
	for base := range ls.hasIndex {
		if !logs[base] {
			ls.orphanIndex = append(ls.orphanIndex, segmentName(dir, base, indexSuffix))
		}
	}
	for base := range ls.hasTime {
		if !logs[base] {
			ls.orphanIndex = append(ls.orphanIndex, segmentName(dir, base, timeIndexSuffix))
		}
	}
	return ls, nil
}

// parseSegmentFile parses "00000000000000000042.log" and its index twins.
func parseSegmentFile(name string) (int64, string, bool) {
	for _, suffix := range []string{logSuffix, indexSuffix, timeIndexSuffix} {
		digits, ok := strings.CutSuffix(name, suffix)
		if !ok {
			continue
		}
		base, ok := parseFileOffset(digits)
		return base, suffix, ok
	}
	return 0, "", false
}

// parseFileOffset reads the 20 decimal digits that name segment and
// snapshot files. Only digits: strconv would also take a sign
// ("+0000000000000000042"), and a name that parses must be the name the
// log gives the file, or the log opens (or removes) a file that is not
// there.
func parseFileOffset(digits string) (int64, bool) {
	if len(digits) != 20 {
		return 0, false
	}
	for i := range len(digits) {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, false
		}
	}
	off, err := strconv.ParseInt(digits, 10, 64)
	return off, err == nil
}

func (l *Log) open() error {
	fsys := l.opts.FS
	// A new partition directory is synced into its parent before anything
	// is written in it: otherwise a crash could lose the directory, and
	// every batch synced in it, whatever the log acknowledged.
	if err := vfs.MkdirAllDurable(fsys, l.dir); err != nil {
		return err
	}
	swapped, err := completeSwaps(fsys, l.dir)
	if err != nil {
		return err
	}
	ls, err := listDir(fsys, l.dir)
	if err != nil {
		return err
	}
	ls.swapped = swapped
	if err := l.removeLeftovers(ls); err != nil {
		return err
	}
	cp, haveCP, err := readCheckpoint(fsys, l.dir)
	if err != nil {
		return err
	}
	if l.mu.epochs, err = loadEpochCache(fsys, l.dir); err != nil {
		return err
	}
	if err := l.loadGapMarker(); err != nil {
		return err
	}
	clean := haveCP && cp.clean
	if !clean {
		cp.clean = false
	}
	if err := l.loadSegments(ls, cp); err != nil {
		l.closeSegments()
		return err
	}
	if err := l.finishOpen(cp); err != nil {
		l.closeSegments()
		return err
	}
	if err := l.loadProducersLocked(); err != nil {
		l.closeSegments()
		return err
	}
	return nil
}

// loadProducersLocked rebuilds the producer-state table: the newest
// snapshot at or below the log end, brought up to the end by replaying
// the batches after it. After a clean close the snapshot is at the end and
// nothing is replayed.
func (l *Log) loadProducersLocked() error {
	end := l.mu.nextOffset
	if err := DeleteSnapshotsAfter(l.opts.FS, l.dir, end); err != nil {
		return err
	}
	t, off, err := LoadLatestSnapshot(l.opts.FS, l.dir, end)
	if err != nil {
		return err
	}
	if err := l.replayProducersLocked(t, max(off, l.mu.logStartOffset)); err != nil {
		return err
	}
	t.TrimAborted(l.mu.logStartOffset)
	l.mu.producers = t
	return nil
}

// replayProducersLocked applies every batch from offset from on to t.
func (l *Log) replayProducersLocked(t *ProducerStateTable, from int64) error {
	for i := l.segmentIndexLocked(from); i < len(l.mu.segments); i++ {
		s := l.mu.segments[i]
		r := newBatchReader(s.log, s.indexedPosition(from), s.size.Load())
		for {
			batch, _, _, err := r.next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return fmt.Errorf("storage: replay producer state in %s: %w", s.log.Name(), err)
			}
			if _, err := t.ReplayBatches(batch, from); err != nil {
				return err
			}
		}
	}
	return nil
}

func (l *Log) removeLeftovers(ls dirListing) error {
	for _, name := range ls.leftovers {
		if err := l.opts.FS.Remove(filepath.Join(l.dir, name)); err != nil {
			return err
		}
	}
	for _, name := range ls.orphanIndex {
		if err := l.opts.FS.Remove(name); err != nil {
			return err
		}
	}
	return nil
}

func (l *Log) closeSegments() {
	for _, s := range l.mu.segments {
		s.release()
	}
	l.mu.segments = nil
}

// loadSegments opens every segment: trusted from its indexes when below the
// recovery point (or after a clean shutdown), otherwise recovered batch by
// batch. A segment that recovery had to truncate ends the log: the segments
// after it are deleted, as Kafka does, because offsets must stay contiguous.
func (l *Log) loadSegments(ls dirListing, cp checkpoint) error {
	for i, base := range ls.bases {
		s, err := openSegment(l.opts.FS, l.dir, base, &l.mu.cfg, l.opts.Clock)
		if err != nil {
			return err
		}
		l.mu.segments = append(l.mu.segments, s)
		nextBase := int64(-1)
		if i+1 < len(ls.bases) {
			nextBase = ls.bases[i+1]
		}
		trusted := !ls.swapped[base] && (cp.clean || (nextBase >= 0 && nextBase <= cp.recoveryPoint && ls.hasIndex[base] && ls.hasTime[base]))
		truncated, err := l.loadSegment(s, trusted)
		if err != nil {
			return err
		}
		if nextBase >= 0 && s.nextOffset > nextBase {
			return fmt.Errorf("%w: %s ends at offset %d, past the next segment's base %d", ErrCorruptLog, s.log.Name(), s.nextOffset, nextBase)
		}
		// A roll starts the next segment exactly at this one's end, so a
		// recovered segment that ends short of the next base lost its
		// unsynced tail while the next segment's name survived. Nothing
		// after the hole was acknowledged as durable (a flush syncs
		// segments in order), so the log ends here.
		hole := !trusted && nextBase >= 0 && s.nextOffset < nextBase
		if (truncated || hole) && nextBase >= 0 {
			return l.deleteSegmentsFrom(ls.bases[i+1:])
		}
	}
	return nil
}

func (l *Log) loadSegment(s *segment, trusted bool) (truncated bool, err error) {
	maxEpoch := int32(-1)
	if e, ok := l.mu.epochs.latest(); ok {
		maxEpoch = e.Epoch
	}
	if trusted {
		rebuilt, err := s.loadTrusted(&l.mu.cfg, maxEpoch)
		if rebuilt && err == nil {
			l.opts.Logger.Warn("rebuilt a corrupt index", "component", "storage", "segment", s.log.Name())
		}
		return false, err
	}
	res, err := s.recover(&l.mu.cfg, maxEpoch)
	if err != nil {
		return false, err
	}
	if res.truncatedBytes > 0 {
		l.opts.Logger.Warn("truncated a torn or corrupt log tail", "component", "storage",
			"segment", s.log.Name(), "bytes", res.truncatedBytes, "valid_batches", res.batches)
	}
	return res.truncatedBytes > 0, nil
}

// deleteSegmentsFrom removes the files of segments recovery gave up on.
func (l *Log) deleteSegmentsFrom(bases []int64) error {
	for _, base := range bases {
		l.opts.Logger.Warn("deleting a segment after a truncated one", "component", "storage", "segment", segmentName(l.dir, base, logSuffix))
		for _, suffix := range []string{logSuffix, indexSuffix, timeIndexSuffix} {
			if err := l.opts.FS.Remove(segmentName(l.dir, base, suffix)); err != nil && !errors.Is(err, vfs.ErrNotExist) {
				return err
			}
		}
	}
	return l.opts.FS.SyncDir(l.dir)
}

// finishOpen sets the log's bounds from the segments and the checkpoint,
// checks a clean shutdown's record against the files, and clears the clean
// mark so a crash from now on is recovered.
func (l *Log) finishOpen(cp checkpoint) error {
	if len(l.mu.segments) == 0 {
		s, err := createSegment(l.opts.FS, l.dir, cp.logStartOffset, &l.mu.cfg, l.opts.Clock.Now())
		if err != nil {
			return err
		}
		l.mu.segments = append(l.mu.segments, s)
		if err := l.opts.FS.SyncDir(l.dir); err != nil {
			return err
		}
	}
	if err := l.restartPastLostTail(cp); err != nil {
		return err
	}
	active := l.activeLocked()
	l.mu.nextOffset = active.nextOffset
	if cp.clean && (cp.nextOffset != l.mu.nextOffset || cp.activeSize != active.size.Load()) {
		return fmt.Errorf("%w: %s: clean shutdown recorded log end %d and size %d, the files hold %d and %d",
			ErrCorruptLog, active.log.Name(), cp.nextOffset, cp.activeSize, l.mu.nextOffset, active.size.Load())
	}
	l.mu.logStartOffset = min(max(cp.logStartOffset, l.mu.segments[0].baseOffset), l.mu.nextOffset)
	l.mu.recoveryPoint = min(cp.recoveryPoint, l.mu.nextOffset)
	if cp.clean {
		l.mu.recoveryPoint = l.mu.nextOffset
	}
	l.durable.Store(l.mu.recoveryPoint)
	l.mu.lastFlushMs = l.opts.Clock.Now().UnixMilli()
	// From the start first: moving an epoch that began below the log
	// start up to it may leave it at the log end with no batch (a crash
	// lost them), and the cut at the end then drops it.
	if err := l.mu.epochs.truncateFromStart(l.mu.logStartOffset); err != nil {
		return err
	}
	if err := l.mu.epochs.truncateFromEnd(l.mu.nextOffset); err != nil {
		return err
	}
	fd, err := readCleanerCheckpoint(l.opts.FS, l.dir)
	if err != nil {
		return err
	}
	l.mu.firstDirty = fd
	if err := l.lowerFirstDirtyLocked(); err != nil {
		return err
	}
	return l.checkpointLocked(false)
}

// restartPastLostTail handles a crash that lost unsynced data below a log
// start offset that was checkpointed (DeleteRecords acknowledged): the log
// restarts empty at that start, as Kafka's loader does, so offsets below it
// are never handed out again.
func (l *Log) restartPastLostTail(cp checkpoint) error {
	if cp.logStartOffset <= l.activeLocked().nextOffset {
		return nil
	}
	l.opts.Logger.Warn("log end below the checkpointed log start; restarting the log there", "component", "storage",
		"dir", l.dir, "log_end", l.activeLocked().nextOffset, "log_start", cp.logStartOffset)
	old := l.mu.segments
	l.mu.segments = nil
	for _, s := range old {
		err := removeSegmentFiles(l.opts.FS, l.dir, s.baseOffset)
		s.release()
		if err != nil {
			return err
		}
	}
	s, err := createSegment(l.opts.FS, l.dir, cp.logStartOffset, &l.mu.cfg, l.opts.Clock.Now())
	if err != nil {
		return err
	}
	l.mu.segments = []*segment{s}
	return l.opts.FS.SyncDir(l.dir)
}

// completeSwaps finishes or undoes a cleaner swap a crash interrupted
// (cleaner.go). The cleaner renames .cleaned files to .swap, the log file
// last, then .swap to the final names, the log file last: a
// <base>.log.swap means the swap was committed and is completed here;
// without it, the leftover .swap indexes are removed. Either way the
// segment's indexes may not match its log, so it is recovered rather than
// trusted.
func completeSwaps(fsys vfs.FS, dir string) (map[int64]bool, error) {
	names, err := fsys.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	swaps := map[int64][]string{}
	for _, name := range names {
		if stem, ok := strings.CutSuffix(name, ".swap"); ok {
			if base, _, ok := parseSegmentFile(stem); ok {
				swaps[base] = append(swaps[base], stem)
			}
		}
	}
	if len(swaps) == 0 {
		return nil, nil
	}
	touched := map[int64]bool{}
	for base, stems := range swaps {
		committed := false
		for _, stem := range stems {
			committed = committed || strings.HasSuffix(stem, logSuffix)
		}
		slices.SortFunc(stems, func(a, b string) int { // the log file last
			return cmpBool(strings.HasSuffix(a, logSuffix), strings.HasSuffix(b, logSuffix))
		})
		for _, stem := range stems {
			from, to := filepath.Join(dir, stem+".swap"), filepath.Join(dir, stem)
			if committed {
				err = fsys.Rename(from, to)
			} else {
				err = fsys.Remove(from)
			}
			if err != nil {
				return nil, err
			}
		}
		touched[base] = true
		if committed {
			if err := removeMergedSegments(fsys, dir, names, base); err != nil {
				return nil, err
			}
		}
	}
	return touched, fsys.SyncDir(dir)
}

// removeMergedSegments deletes the segments a completed swap at base
// replaced besides its own: the cleaner merges consecutive segments into
// one, and a crash may leave the later ones behind. They are the segments
// whose base lies within the swapped segment's offsets, found by walking
// its batch headers to its last offset.
func removeMergedSegments(fsys vfs.FS, dir string, names []string, base int64) error {
	f, err := fsys.Open(segmentName(dir, base, logSuffix))
	if err != nil {
		return err
	}
	defer f.Close()
	size, err := f.Size()
	if err != nil {
		return err
	}
	last := base - 1
	for pos := int64(0); pos < size; {
		h, err := readHeader(f, pos, size)
		if err != nil {
			break // a torn tail: recovery deals with it
		}
		last = h.LastOffset()
		pos += int64(h.Size())
	}
	for _, name := range names {
		b, _, ok := parseSegmentFile(name)
		if ok && b > base && b <= last {
			if err := fsys.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, vfs.ErrNotExist) {
				return err
			}
		}
	}
	return nil
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

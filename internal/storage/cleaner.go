package storage

import (
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/samsa-io/samsa/internal/record"
	"github.com/samsa-io/samsa/internal/vfs"
)

// CleanOptions tune one cleaning pass.
type CleanOptions struct {
	// MapMemory is the dedupe buffer in bytes (Kafka's
	// log.cleaner.dedupe.buffer.size per cleaner thread).
	MapMemory int
	// NowMs is the time the pass runs at; 0 takes the log's clock.
	NowMs int64
}

// CleanStats says what one pass did.
type CleanStats struct {
	SegmentsCleaned int
	BytesRead       int64 // bytes of the segments rewritten
	BytesWritten    int64 // bytes of their cleaned replacements
	RecordsRemoved  int64
}

const (
	cleanedSuffix = ".cleaned" // a cleaned segment being written
	swapSuffix    = ".swap"    // a cleaned segment complete and synced, being swapped in
)

// ErrCleanerBusy: another pass is cleaning the same log.
var ErrCleanerBusy = errors.New("storage: log is already being cleaned")

// cleanTarget is a segment the pass rewrites, pinned, with its size when
// the pass started: segments below the active one change only through
// retention or truncation, which the swap checks for.
type cleanTarget struct {
	s    *segment
	size int64
}

// cleanPlan is what a pass learned under the log's lock.
type cleanPlan struct {
	cfg         Config
	nowMs       int64
	truncations int64
	aborted     []AbortedTxn
	targets     []cleanTarget
}

func (p *cleanPlan) release() {
	for _, t := range p.targets {
		t.s.release()
	}
	p.targets = nil
}

// Clean runs one synchronous cleaning pass over a compacted log, as Kafka's
// cleaner does for one log: it builds a map of each key's latest offset over
// the cleanable segments, rewrites each of them keeping only the latest
// record of every key (and tombstones younger than delete.retention.ms),
// and swaps the rewritten segments in. A log that is not compacted is left
// alone (zero stats, nil).
//
// The cleanable range runs from the first segment to the first uncleanable
// offset: the smallest of the active segment's base, the first unstable
// offset (the first offset of the earliest ongoing transaction) and the base
// of the first segment holding a batch younger than min.compaction.lag.ms.
// The lag is judged per segment by its largest timestamp, an approximation
// of Kafka's per-batch search that only ever cleans less. Only segments
// that end at or below the first uncleanable offset are cleaned; the active
// segment never is.
//
// The offset map covers the segments cleaned, in order. When it reaches its
// load factor (MapMemory too small for the keys), the pass cleans only the
// segments mapped up to and including the one during which it filled; the
// next pass goes further. A key the map could not take keeps all its
// records in that segment: an absent key is never dropped.
//
// The map is built and the cleaned files written without the log's lock;
// appends, reads and flushes go on. The swap takes the lock and gives up
// (returning what was done so far, nil) when the segment is no longer the
// one that was cleaned: retention deleted it, a truncation happened, or the
// log was closed.
//
// Crash safety (Kafka's scheme): a segment is written to <name>.cleaned,
// its indexes rebuilt by scanning it and all three files fsynced; under the
// lock they are renamed to <name>.swap and the directory synced, then each
// .swap is renamed over its final name and the directory synced again. A
// crash leaves either .cleaned files (to delete: the old segment is intact)
// or .swap files (to complete: rename each over its final name), which Open
// must handle.
//
// A cleaned segment keeps its base offset and, as an empty batch header if
// its last batch lost every record, its last offset, so it still ends where
// the next segment starts (loadSegments treats a recovered segment ending
// short of the next base as a lost tail).
func (l *Log) Clean(opts CleanOptions) (CleanStats, error) {
	var stats CleanStats
	if !l.cleaning.CompareAndSwap(false, true) {
		return stats, ErrCleanerBusy
	}
	defer l.cleaning.Store(false)

	plan, err := l.planClean(opts)
	if err != nil || len(plan.targets) == 0 {
		return stats, err
	}
	defer plan.release()

	m, err := newOffsetMap(opts.MapMemory, defaultOffsetMapLoadFactor)
	if err != nil {
		return stats, err
	}
	n, err := buildCleanMap(plan, m)
	if err != nil {
		return stats, fmt.Errorf("storage: clean %s: %w", l.dir, err)
	}
	co := compactOptions{
		DeleteHorizonMs: plan.nowMs - plan.cfg.DeleteRetentionMs,
		DropAborted:     abortedLookup(plan.aborted),
		MaxDecompressed: record.DefaultMaxDecompressedBytes,
	}
	if plan.cfg.DeleteRetentionMs < 0 || plan.cfg.DeleteRetentionMs > plan.nowMs {
		co.DeleteHorizonMs = -1 << 63 // keep tombstones
	}
	for _, t := range plan.targets[:n] {
		swapped, err := l.cleanSegment(plan, t, m, co, &stats)
		if err != nil {
			return stats, fmt.Errorf("storage: clean %s segment %d: %w", l.dir, t.s.baseOffset, err)
		}
		if !swapped {
			l.opts.Logger.Info("cleaning pass aborted: the log changed under it", "component", "storage", "dir", l.dir, "segment", t.s.baseOffset)
			break
		}
	}
	return stats, nil
}

// planClean picks the segments to clean and pins them.
func (l *Log) planClean(opts CleanOptions) (*cleanPlan, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	p := &cleanPlan{cfg: l.mu.cfg, nowMs: opts.NowMs, truncations: l.mu.truncations}
	if !p.cfg.Compacted {
		return p, nil
	}
	if err := l.writableLocked(); err != nil {
		return p, err
	}
	if p.nowMs == 0 {
		p.nowMs = l.opts.Clock.Now().UnixMilli()
	}
	segs := l.mu.segments
	firstUncleanable := l.activeLocked().baseOffset
	if fu := l.mu.producers.FirstUnstableOffset(); fu >= 0 {
		firstUncleanable = min(firstUncleanable, fu)
	}
	if lag := p.cfg.MinCompactionLagMs; lag > 0 {
		for _, s := range segs[:len(segs)-1] {
			if s.maxTimestamp > p.nowMs-lag {
				firstUncleanable = min(firstUncleanable, s.baseOffset)
				break
			}
		}
	}
	for i, s := range segs[:len(segs)-1] {
		if segs[i+1].baseOffset > firstUncleanable {
			break
		}
		size := s.size.Load()
		if size == 0 {
			continue
		}
		s.acquire()
		p.targets = append(p.targets, cleanTarget{s: s, size: size})
	}
	if len(p.targets) > 0 {
		p.aborted = l.mu.producers.AbortedIndex()
	}
	return p, nil
}

// abortedLookup answers compactOptions.DropAborted from the aborted
// transaction index (sorted by last offset; see AbortedTransactions for why
// the scan may stop at the first entry whose last stable offset passes off).
func abortedLookup(aborted []AbortedTxn) func(pid, off int64) bool {
	return func(pid, off int64) bool {
		i, _ := slices.BinarySearchFunc(aborted, off, func(a AbortedTxn, off int64) int { return cmpInt64(a.LastOffset, off) })
		for _, a := range aborted[i:] {
			if a.ProducerID == pid && a.FirstOffset <= off && off <= a.LastOffset {
				return true
			}
			if a.LastStableOffset > off {
				break
			}
		}
		return false
	}
}

// buildCleanMap puts every key of the targets into m with its latest
// offset, skipping control batches and aborted transactions (an aborted
// record must not hide the committed one before it). It returns how many
// targets the map covers: all of them, or those up to the one during which
// the map filled.
func buildCleanMap(p *cleanPlan, m *offsetMap) (int, error) {
	dropAborted := abortedLookup(p.aborted)
	for i, t := range p.targets {
		r := newBatchReader(t.s.log, 0, t.size)
		exhausted := false
		for {
			batch, h, _, err := r.next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return 0, err
			}
			if h.IsControl() || (h.IsTransactional() && dropAborted(h.ProducerID, h.BaseOffset)) {
				continue
			}
			err = record.Iterate(batch, record.DefaultMaxDecompressedBytes, func(rec *record.Record) bool {
				if rec.Key != nil && !m.Put(rec.Key, rec.Offset) {
					exhausted = true
				}
				return true
			})
			if err != nil {
				return 0, fmt.Errorf("segment %d batch at %d: %w", t.s.baseOffset, h.BaseOffset, err)
			}
		}
		if exhausted || m.Full() {
			return i + 1, nil
		}
	}
	return len(p.targets), nil
}

func segmentFileNames(dir string, base int64) [3]string {
	// The log file last: its rename completes a swap.
	return [3]string{segmentName(dir, base, indexSuffix), segmentName(dir, base, timeIndexSuffix), segmentName(dir, base, logSuffix)}
}

func (l *Log) removeFiles(names [3]string, suffix string) {
	for _, n := range names {
		if err := l.opts.FS.Remove(n + suffix); err != nil && !errors.Is(err, vfs.ErrNotExist) {
			l.opts.Logger.Warn("could not remove a cleaner file", "component", "storage", "file", n+suffix, "err", err)
		}
	}
}

// cleanSegment rewrites one segment and swaps it in; false when the log
// changed so that the swap was given up.
func (l *Log) cleanSegment(p *cleanPlan, t cleanTarget, m *offsetMap, co compactOptions, stats *CleanStats) (bool, error) {
	names := segmentFileNames(l.dir, t.s.baseOffset)
	ns, in, out, err := l.writeCleaned(p, t, names, m, co)
	if err != nil {
		l.removeFiles(names, cleanedSuffix)
		return false, err
	}
	swapped, err := l.swapCleaned(p, t, ns, names)
	if !swapped {
		ns.release()
		l.removeFiles(names, cleanedSuffix)
		return false, err
	}
	stats.SegmentsCleaned++
	stats.BytesRead += t.size
	stats.BytesWritten += ns.size.Load()
	stats.RecordsRemoved += in - out
	return true, nil
}

// writeCleaned writes the cleaned form of t to the .cleaned files, rebuilds
// its indexes by scanning it back (recover, which also checks every batch
// and fsyncs the three files) and seals its time index. It returns the new
// segment and the records read and written.
func (l *Log) writeCleaned(p *cleanPlan, t cleanTarget, names [3]string, m *offsetMap, co compactOptions) (*segment, int64, int64, error) {
	fsys := l.opts.FS
	ns := &segment{baseOffset: t.s.baseOffset, nextOffset: t.s.baseOffset, maxTimestamp: -1, rollTimestamp: -1, created: t.s.created}
	var files [3]vfs.File
	for i, n := range names {
		f, err := fsys.Create(n + cleanedSuffix)
		if err != nil {
			for _, g := range files[:i] {
				g.Close()
			}
			return nil, 0, 0, err
		}
		files[i] = f
	}
	ns.offsetIdx.file, ns.timeIdx.file, ns.log = files[0], files[1], files[2]
	ns.setConfig(&p.cfg)
	ns.refs.Store(1)
	fail := func(err error) (*segment, int64, int64, error) {
		ns.release()
		return nil, 0, 0, err
	}

	var (
		in, out   int64
		buf       []byte
		wpos      int64
		outNext   = t.s.baseOffset
		last      record.Header
		haveBatch bool
	)
	r := newBatchReader(t.s.log, 0, t.size)
	for {
		batch, h, _, err := r.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fail(err)
		}
		in += int64(h.NumRecords)
		last, haveBatch = h, true
		before := len(buf)
		if buf, err = compactBatches(buf, batch, m, co); err != nil {
			return fail(err)
		}
		if len(buf) > before {
			oh, err := record.ParseHeader(buf[before:])
			if err != nil {
				return fail(err)
			}
			out += int64(oh.NumRecords)
			outNext = oh.NextOffset()
		}
		if len(buf) >= readChunk {
			if _, err := ns.log.WriteAt(buf, wpos); err != nil {
				return fail(err)
			}
			wpos += int64(len(buf))
			buf = buf[:0]
		}
	}
	if haveBatch && outNext < last.NextOffset() {
		buf = record.AppendEmptyBatch(buf, &last)
	}
	if len(buf) > 0 {
		if _, err := ns.log.WriteAt(buf, wpos); err != nil {
			return fail(err)
		}
	}
	res, err := ns.recover(&p.cfg)
	if err != nil {
		return fail(err)
	}
	if res.truncatedBytes > 0 {
		return fail(fmt.Errorf("%w: cleaned segment has %d bad bytes at %d", ErrCorruptLog, res.truncatedBytes, ns.size.Load()))
	}
	if err := ns.seal(); err != nil {
		return fail(err)
	}
	if err := ns.timeIdx.file.Sync(); err != nil {
		return fail(err)
	}
	return ns, in, out, nil
}

// swapCleaned replaces t by ns, on disk and in the segment list, under the
// log's lock, if t is still what was cleaned. Holding the lock across the
// renames means no truncation or retention can slip between the check and
// the point where a crash would complete the swap.
func (l *Log) swapCleaned(p *cleanPlan, t cleanTarget, ns *segment, names [3]string) (bool, error) {
	fsys := l.opts.FS
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.writableLocked() != nil || l.mu.truncations != p.truncations {
		return false, nil
	}
	i := l.segmentIndexLocked(t.s.baseOffset)
	if i >= len(l.mu.segments)-1 || l.mu.segments[i] != t.s || t.s.size.Load() != t.size {
		return false, nil
	}
	for _, n := range names {
		if err := fsys.Rename(n+cleanedSuffix, n+swapSuffix); err != nil {
			// Some .swap names may already be durable (a reopen
			// completes a swap when it finds the .log.swap): the log
			// must not change until then.
			return false, l.failLocked(err)
		}
	}
	if err := fsys.SyncDir(l.dir); err != nil {
		// Whether the .swap names are durable is unknown, and a reopen
		// would complete the swap: the log must not change until then.
		return false, l.failLocked(err)
	}
	// From here a crash completes the swap on open.
	for _, n := range names {
		if err := fsys.Rename(n+swapSuffix, n); err != nil {
			return false, l.failLocked(err)
		}
	}
	if err := fsys.SyncDir(l.dir); err != nil {
		return false, l.failLocked(err)
	}
	// A new slice: flushOnce ranges over a slice of the old one after
	// dropping the lock.
	segs := slices.Clone(l.mu.segments)
	segs[i] = ns
	l.mu.segments = segs
	t.s.release() // the log's reference; readers and the plan keep theirs
	return true, nil
}

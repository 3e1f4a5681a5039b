package storage

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/samsa-io/samsa/internal/record"
	"github.com/samsa-io/samsa/internal/vfs"
)

// CleanOptions tune one cleaning pass.
type CleanOptions struct {
	// MapMemory is the dedupe buffer in bytes (Kafka's
	// log.cleaner.dedupe.buffer.size per cleaner thread). A pass allocates
	// no more than its dirty section can use.
	MapMemory int
	// NowMs is the time the pass runs at; 0 takes the log's clock.
	NowMs int64
	// MaxOffset, when positive, is an offset the pass must not clean at or
	// above: the high watermark, so that nothing a follower or a consumer
	// could still see differently is rewritten.
	MaxOffset int64
	// Throttle, when set, paces the pass's reads and writes
	// (log.cleaner.io.max.bytes.per.second, shared by every pass).
	Throttle *Throttle
}

// CleanStats says what one pass did.
type CleanStats struct {
	SegmentsCleaned int   // segments rewritten
	SegmentsWritten int   // segments they became (small ones are merged)
	BytesRead       int64 // bytes of the segments cleaned, swapped or found unchanged
	BytesWritten    int64 // bytes of their cleaned replacements
	RecordsRemoved  int64
	// BufferUtilization is the share of the dedupe buffer
	// (CleanOptions.MapMemory) the keys of the dirty section took: 1 when
	// they filled it, and the pass could not map the whole section.
	BufferUtilization float64
	// FirstDirtyOffset and EndOffset bound the dirty section the pass
	// mapped; EndOffset is the log's new first dirty offset.
	FirstDirtyOffset int64
	EndOffset        int64
}

const (
	cleanedSuffix = ".cleaned" // a cleaned segment being written
	swapSuffix    = ".swap"    // a cleaned segment complete and synced, being swapped in
)

// ErrCleanerBusy: another pass is cleaning the same log.
var ErrCleanerBusy = errors.New("storage: log is already being cleaned")

// cleanTarget is a segment the pass may rewrite, pinned, with what it was
// when the pass started: segments below the active one change only through
// retention, truncation or the cleaner itself, which the swap checks for.
type cleanTarget struct {
	s       *segment
	size    int64
	end     int64 // the next segment's base: where this one's offsets end
	entries int   // offset index entries
	// dirtyPos is the file position where the dirty section starts in
	// this segment (0 unless the first dirty offset falls inside it).
	dirtyPos int64
}

// cleanPlan is what a pass learned under the log's lock.
type cleanPlan struct {
	cfg         Config
	nowMs       int64
	truncations int64
	firstDirty  int64
	aborted     []AbortedTxn
	lastBatch   map[int64]int64 // producer ID -> last offset of its last data batch
	targets     []cleanTarget
}

func (p *cleanPlan) release() {
	for _, t := range p.targets {
		t.s.release()
	}
	p.targets = nil
}

// Clean runs one synchronous cleaning pass over a compacted log, as Kafka's
// cleaner does for one log. A log that is not compacted is left alone
// (zero stats, nil).
//
// The log is split at its first dirty offset (kept in the cleaner
// checkpoint, cleaner_checkpoint.go): below it every key appears once, as
// the last pass left it; above it is what was appended since. The pass maps
// each key of the dirty section to its latest offset, then rewrites every
// segment from the first up to the end of the mapped section, keeping a
// record unless the map holds a later offset for its key. The dirty section
// ends at the first uncleanable offset: the smallest of the active
// segment's base, the first unstable offset (the earliest open
// transaction), MaxOffset (the high watermark) and the base of the first
// segment holding a batch younger than min.compaction.lag.ms (judged per
// segment by its largest timestamp, which only ever cleans less). Only
// segments that end at or below it are touched; the active segment never
// is.
//
// The map is sized for the dirty section, capped by MapMemory. When it
// fills, the section ends before the next batch, and the next pass
// continues there. Records past the mapped end are rewritten (they share a
// segment with mapped ones) but only ever lose records that a later mapped
// record of the same key replaces.
//
// Tombstones and transaction markers follow KIP-534: the pass that first
// rewrites a batch holding them stamps it with a delete horizon (now +
// delete.retention.ms) and a later pass past the horizon removes them, so a
// consumer that reads the log from the start within delete.retention.ms
// always sees a delete, whatever timestamps producers chose. A marker goes
// only once no record of its transaction is left. Aborted transactional data
// is removed at once. A producer's last data batch stays, as an empty
// header if it lost every record, so its sequence survives (Kafka's
// RETAIN_EMPTY).
//
// Consecutive segments are cleaned into one as long as the result fits
// segment.bytes, the offset index and 32-bit relative offsets (Kafka's
// groupSegmentsBySize), so compaction does not leave a trail of tiny
// segments.
//
// The map is built and the cleaned files written without the log's lock;
// appends, reads and flushes go on. Each swap takes the lock and gives up
// (returning what was done so far, nil) when its segments are no longer the
// ones cleaned: retention deleted one, a truncation happened, or the log
// was closed.
//
// Crash safety (Kafka's scheme): a group is written to <base>.cleaned files,
// its indexes rebuilt by scanning it, all three files fsynced; under the
// lock they are renamed to <base>.swap (the log file last, which commits
// the swap) and the directory synced; the group's other segments are
// deleted, each .swap renamed over its final name and the directory synced
// again. Open deletes .cleaned files (the old segments are intact), drops
// .swap indexes without a .log.swap, and completes a committed swap: it
// renames the .swap files and deletes the segments the swapped one covers
// (open.go, completeSwaps).
//
// A cleaned segment keeps the base offset of its first old segment and, as
// an empty batch header if its last batch lost every record, the last
// offset of its last, so it still ends where the next segment starts
// (loadSegments treats a recovered segment ending short of the next base as
// a lost tail).
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
	stats.FirstDirtyOffset = plan.firstDirty
	stats.EndOffset = plan.firstDirty

	// With nothing dirty the pass still rewrites the clean section, for
	// tombstones past their horizon and segments to merge; a nil map
	// keeps every key.
	var m *offsetMap
	endOffset := plan.targets[len(plan.targets)-1].end
	if plan.firstDirty < endOffset {
		if m, err = newOffsetMap(mapMemoryFor(opts.MapMemory, endOffset-plan.firstDirty), defaultOffsetMapLoadFactor); err != nil {
			return stats, err
		}
		endOffset, err = buildCleanMap(plan, m, opts.Throttle)
		if opts.MapMemory > 0 {
			stats.BufferUtilization = min(1, float64(m.entries*offsetMapEntrySize)/float64(opts.MapMemory))
		}
		if err != nil {
			return stats, fmt.Errorf("storage: clean %s: %w", l.dir, err)
		}
	}
	return stats, l.cleanRange(plan, m, endOffset, opts.Throttle, &stats)
}

// mapMemoryFor sizes a pass's offset map: no more slots than the dirty
// section has offsets (at the load factor), and no more than the budget.
func mapMemoryFor(budget int, dirtyOffsets int64) int {
	need := float64(dirtyOffsets)/defaultOffsetMapLoadFactor + 2
	if need*offsetMapEntrySize < float64(budget) {
		return int(need) * offsetMapEntrySize
	}
	return budget
}

// cleanRange rewrites, group by group, the targets that start below
// endOffset, then moves the first dirty offset to endOffset.
func (l *Log) cleanRange(plan *cleanPlan, m *offsetMap, endOffset int64, th *Throttle, stats *CleanStats) error {
	n := 0
	for n < len(plan.targets) && plan.targets[n].s.baseOffset < endOffset {
		n++
	}
	co := compactOptions{
		NowMs:             plan.nowMs,
		DeleteRetentionMs: plan.cfg.DeleteRetentionMs,
		MapEnd:            endOffset,
		DropAborted:       abortedLookup(plan.aborted),
		LastBatchOfProducer: func(pid, lastOffset int64) bool {
			last, ok := plan.lastBatch[pid]
			return ok && last == lastOffset
		},
		MaxDecompressed: record.DefaultMaxDecompressedBytes,
		scratch:         &compactScratch{},
	}
	txns := newTxnTracker()
	co.MarkerDone = txns.markerDone
	co.DataKept = txns.dataKept
	var nextHorizon int64
	co.Horizon = func(ms int64) {
		if nextHorizon == 0 || ms < nextHorizon {
			nextHorizon = ms
		}
	}
	for _, g := range groupTargets(plan.targets[:n], &plan.cfg) {
		swapped, err := l.cleanGroup(plan, g, m, co, th, stats)
		if err != nil {
			return fmt.Errorf("storage: clean %s segment %d: %w", l.dir, g[0].s.baseOffset, err)
		}
		if !swapped {
			l.opts.Logger.Info("cleaning pass aborted: the log changed under it", "component", "storage", "dir", l.dir, "segment", g[0].s.baseOffset)
			return nil
		}
	}
	stats.EndOffset = endOffset
	return l.setFirstDirty(plan, endOffset, nextHorizon)
}

// planClean picks the segments a pass may touch and pins them.
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
	firstUncleanable := l.firstUncleanableLocked(&p.cfg, p.nowMs, opts.MaxOffset)
	p.firstDirty = max(l.mu.firstDirty, l.mu.logStartOffset)
	segs := l.mu.segments
	for i, s := range segs[:len(segs)-1] {
		end := segs[i+1].baseOffset
		if end > firstUncleanable {
			break
		}
		t := cleanTarget{s: s, size: s.size.Load(), end: end, entries: len(s.offsetIdx.entries)}
		if s.baseOffset < p.firstDirty && p.firstDirty < end {
			pos, err := s.positionOf(p.firstDirty, t.size)
			if err != nil {
				p.release()
				return p, err
			}
			t.dirtyPos = pos
		}
		s.acquire()
		p.targets = append(p.targets, t)
	}
	if len(p.targets) > 0 {
		p.aborted = l.mu.producers.AbortedIndex()
		p.lastBatch = map[int64]int64{}
		for _, ps := range l.mu.producers.producers {
			if n := len(ps.Batches); n > 0 {
				p.lastBatch[ps.ProducerID] = ps.Batches[n-1].LastOffset
			}
		}
	}
	return p, nil
}

// firstUncleanableLocked is the offset where the cleanable part of the log
// ends (see Clean).
func (l *Log) firstUncleanableLocked(cfg *Config, nowMs, maxOffset int64) int64 {
	segs := l.mu.segments
	off := l.activeLocked().baseOffset
	if fu := l.mu.producers.FirstUnstableOffset(); fu >= 0 {
		off = min(off, fu)
	}
	if maxOffset > 0 {
		off = min(off, maxOffset)
	}
	if lag := cfg.MinCompactionLagMs; lag > 0 {
		for _, s := range segs[:len(segs)-1] {
			if s.maxTimestamp > nowMs-lag {
				off = min(off, s.baseOffset)
				break
			}
		}
	}
	return off
}

// Cleanability is how much a compacted log would gain from a pass, as the
// Manager's cleaner judges it (Kafka's LogToClean).
type Cleanability struct {
	CleanBytes int64 // below the first dirty offset
	DirtyBytes int64 // from it to the first uncleanable offset
	// MaxLagExceeded: the dirty section holds a batch older than
	// max.compaction.lag.ms, so the log must be cleaned whatever its ratio.
	MaxLagExceeded bool
	// CompactionDelayMs is by how much that batch is late: its age less
	// max.compaction.lag.ms (Kafka's compaction delay); 0 when none is.
	CompactionDelayMs int64
	// HorizonDue: a batch stamped with a delete horizon by an earlier pass
	// of this process has reached it; its tombstones can go.
	HorizonDue bool
}

// Ratio is the dirty ratio, dirty / (clean + dirty).
func (c Cleanability) Ratio() float64 {
	if c.CleanBytes+c.DirtyBytes == 0 {
		return 0
	}
	return float64(c.DirtyBytes) / float64(c.CleanBytes+c.DirtyBytes)
}

// Cleanability measures the log at nowMs with the cleanable range bounded
// by maxOffset (the high watermark; 0 for none). A segment that straddles
// the first dirty offset counts in proportion to its offsets.
func (l *Log) Cleanability(nowMs, maxOffset int64) Cleanability {
	l.mu.RLock()
	defer l.mu.RUnlock()
	var c Cleanability
	if !l.mu.cfg.Compacted || l.mu.closed {
		return c
	}
	firstUncleanable := l.firstUncleanableLocked(&l.mu.cfg, nowMs, maxOffset)
	firstDirty := max(l.mu.firstDirty, l.mu.logStartOffset)
	segs := l.mu.segments
	sawDirty := false
	for i, s := range segs[:len(segs)-1] {
		end := segs[i+1].baseOffset
		if end > firstUncleanable {
			break
		}
		size := s.size.Load()
		switch {
		case end <= firstDirty:
			c.CleanBytes += size
			continue
		case s.baseOffset >= firstDirty:
			c.DirtyBytes += size
		default:
			d := size * (end - firstDirty) / (end - s.baseOffset)
			c.DirtyBytes += d
			c.CleanBytes += size - d
		}
		if !sawDirty {
			sawDirty = true
			first := s.rollTimestamp
			if first < 0 {
				first = s.maxTimestamp
			}
			lag := l.mu.cfg.MaxCompactionLagMs
			c.MaxLagExceeded = first >= 0 && lag > 0 && lag < nowMs && first < nowMs-lag
			if c.MaxLagExceeded {
				c.CompactionDelayMs = nowMs - lag - first
			}
		}
	}
	c.HorizonDue = l.mu.nextHorizonMs > 0 && l.mu.nextHorizonMs <= nowMs
	return c
}

// groupTargets splits the targets into runs that clean into one segment
// each: together within segment.bytes, the offset index and 32-bit
// relative offsets, counted before cleaning (Kafka's rule, which never
// needs to split a group's output).
func groupTargets(ts []cleanTarget, cfg *Config) [][]cleanTarget {
	var groups [][]cleanTarget
	for len(ts) > 0 {
		size, entries := ts[0].size, ts[0].entries
		n := 1
		for n < len(ts) {
			t := &ts[n]
			if size+t.size > cfg.SegmentBytes || entries+t.entries > cfg.maxIndexEntries() ||
				t.end-1-ts[0].s.baseOffset > math.MaxInt32 {
				break
			}
			size += t.size
			entries += t.entries
			n++
		}
		groups = append(groups, ts[:n])
		ts = ts[n:]
	}
	return groups
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

// txnTracker follows, through one pass in offset order, whether each
// producer's current transaction still has data in the cleaned log, so that
// its marker can go once none is left (Kafka's CleanedTransactionMetadata).
// Every pass starts at the log's first segment, so it sees every
// transaction whole.
type txnTracker struct{ kept map[int64]bool }

func newTxnTracker() *txnTracker { return &txnTracker{kept: map[int64]bool{}} }

func (t *txnTracker) dataKept(pid int64, kept bool) { t.kept[pid] = t.kept[pid] || kept }

func (t *txnTracker) markerDone(pid int64) bool {
	done := !t.kept[pid]
	delete(t.kept, pid)
	return done
}

// buildCleanMap puts every key of the dirty section into m with its latest
// offset, skipping control batches and aborted transactions (an aborted
// record must not hide the committed one before it). It returns where the
// mapped section ends: the end of the targets, or the first batch that did
// not fit once the map filled.
func buildCleanMap(p *cleanPlan, m *offsetMap, th *Throttle) (int64, error) {
	dropAborted := abortedLookup(p.aborted)
	for _, t := range p.targets {
		if t.end <= p.firstDirty {
			continue
		}
		pos := t.dirtyPos
		th.Wait(t.size - pos)
		r := newBatchReader(t.s.log, pos, t.size)
		for {
			batch, h, _, err := r.next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return 0, fmt.Errorf("segment %d: %w", t.s.baseOffset, err)
			}
			if h.NextOffset() <= p.firstDirty || h.IsControl() || (h.IsTransactional() && dropAborted(h.ProducerID, h.BaseOffset)) {
				continue
			}
			if m.Full() {
				return h.BaseOffset, nil
			}
			full := false
			err = record.Iterate(batch, record.DefaultMaxDecompressedBytes, func(rec *record.Record) bool {
				if rec.Key != nil && !m.Put(rec.Key, rec.Offset) {
					full = true
					return false
				}
				return true
			})
			if err != nil {
				return 0, fmt.Errorf("segment %d batch at %d: %w", t.s.baseOffset, h.BaseOffset, err)
			}
			if full {
				// Keys already put from this batch point past the end;
				// they only ever remove older copies, which is safe.
				return h.BaseOffset, nil
			}
		}
	}
	return p.targets[len(p.targets)-1].end, nil
}

// positionOf is the file position of the batch holding off, found by
// walking batch headers from the offset index's nearest entry. The caller
// holds the log's lock.
func (s *segment) positionOf(off, size int64) (int64, error) {
	rel, _ := s.relative(off)
	pos := s.offsetIdx.lookup(rel)
	for pos < size {
		h, err := readHeader(s.log, pos, size)
		if err != nil {
			return 0, err
		}
		if h.LastOffset() >= off {
			return pos, nil
		}
		pos += int64(h.Size())
	}
	return size, nil
}

func segmentFileNames(dir string, base int64) [3]string {
	// The log file last: its rename commits and completes a swap.
	return [3]string{segmentName(dir, base, indexSuffix), segmentName(dir, base, timeIndexSuffix), segmentName(dir, base, logSuffix)}
}

func (l *Log) removeFiles(names [3]string, suffix string) {
	for _, n := range names {
		if err := l.opts.FS.Remove(n + suffix); err != nil && !errors.Is(err, vfs.ErrNotExist) {
			l.opts.Logger.Warn("could not remove a cleaner file", "component", "storage", "file", n+suffix, "err", err)
		}
	}
}

// cleanGroup rewrites a group of segments into one and swaps it in; false
// when the log changed so that the swap was given up.
func (l *Log) cleanGroup(p *cleanPlan, g []cleanTarget, m *offsetMap, co compactOptions, th *Throttle, stats *CleanStats) (bool, error) {
	names := segmentFileNames(l.dir, g[0].s.baseOffset)
	ns, res, err := l.writeCleaned(p, g, names, m, co, th)
	if err != nil {
		l.removeFiles(names, cleanedSuffix)
		return false, err
	}
	var read int64
	for _, t := range g {
		read += t.size
	}
	if len(g) == 1 && !res.changed {
		// Nothing to remove or stamp: keep the old segment, skip the swap.
		ns.release()
		l.removeFiles(names, cleanedSuffix)
		stats.BytesRead += read
		return true, nil
	}
	swapped, err := l.swapCleaned(p, g, ns, names)
	if !swapped {
		ns.release()
		l.removeFiles(names, cleanedSuffix)
		return false, err
	}
	stats.SegmentsCleaned += len(g)
	stats.SegmentsWritten++
	stats.BytesRead += read
	stats.BytesWritten += ns.size.Load()
	stats.RecordsRemoved += res.in - res.out
	return true, nil
}

// cleanedResult is what writeCleaned did.
type cleanedResult struct {
	in, out int64 // records read and written
	changed bool  // some batch was not copied as it was
}

// writeCleaned writes the cleaned form of a group to the .cleaned files,
// rebuilds its indexes by scanning it back (recover, which also checks
// every batch and fsyncs the three files) and seals its time index.
func (l *Log) writeCleaned(p *cleanPlan, g []cleanTarget, names [3]string, m *offsetMap, co compactOptions, th *Throttle) (*segment, cleanedResult, error) {
	var res cleanedResult
	fsys := l.opts.FS
	first := g[0].s
	ns := &segment{baseOffset: first.baseOffset, nextOffset: first.baseOffset, maxTimestamp: -1, rollTimestamp: -1, created: first.created}
	f, err := fsys.Create(names[2] + cleanedSuffix)
	if err != nil {
		return nil, res, err
	}
	ns.fs, ns.log = fsys, f
	ns.offsetIdx.path, ns.timeIdx.path = names[0]+cleanedSuffix, names[1]+cleanedSuffix
	ns.setConfig(&p.cfg)
	ns.refs.Store(1)
	fail := func(err error) (*segment, cleanedResult, error) {
		ns.release()
		return nil, res, err
	}

	var (
		buf       []byte
		wpos      int64
		outNext   = first.baseOffset
		last      record.Header
		haveBatch bool
	)
	flushBuf := func() error {
		th.Wait(int64(len(buf)))
		if _, err := ns.log.WriteAt(buf, wpos); err != nil {
			return err
		}
		wpos += int64(len(buf))
		buf = buf[:0]
		return nil
	}
	for _, t := range g {
		th.Wait(t.size)
		r := newBatchReader(t.s.log, 0, t.size)
		for {
			batch, h, _, err := r.next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return fail(err)
			}
			res.in += int64(h.NumRecords)
			last, haveBatch = h, true
			before := len(buf)
			var changed bool
			if buf, changed, err = compactBatch(buf, batch, &h, m, &co); err != nil {
				return fail(fmt.Errorf("batch at offset %d: %w", h.BaseOffset, err))
			}
			res.changed = res.changed || changed
			if len(buf) > before {
				oh, err := record.ParseHeader(buf[before:])
				if err != nil {
					return fail(err)
				}
				res.out += int64(oh.NumRecords)
				outNext = oh.NextOffset()
			}
			if len(buf) >= readChunk {
				if err := flushBuf(); err != nil {
					return fail(err)
				}
			}
		}
	}
	if haveBatch && outNext < last.NextOffset() {
		buf = record.AppendEmptyBatch(buf, &last)
		res.changed = true
	}
	if len(buf) > 0 {
		if err := flushBuf(); err != nil {
			return fail(err)
		}
	}
	rec, err := ns.recover(&p.cfg, -1) // the cleaner keeps each batch's epoch
	if err != nil {
		return fail(err)
	}
	if rec.truncatedBytes > 0 {
		return fail(fmt.Errorf("%w: cleaned segment has %d bad bytes at %d", ErrCorruptLog, rec.truncatedBytes, ns.size.Load()))
	}
	ns.seal()
	if err := ns.writeIndexes(); err != nil { // with the final time entry
		return fail(err)
	}
	return ns, res, nil
}

// swapCleaned replaces the group g by ns, on disk and in the segment list,
// under the log's lock, if g is still what was cleaned. Holding the lock
// across the renames means no truncation or retention can slip between the
// check and the point where a crash would complete the swap.
func (l *Log) swapCleaned(p *cleanPlan, g []cleanTarget, ns *segment, names [3]string) (bool, error) {
	fsys := l.opts.FS
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.writableLocked() != nil || l.mu.truncations != p.truncations {
		return false, nil
	}
	i := l.segmentIndexLocked(g[0].s.baseOffset)
	if i+len(g) > len(l.mu.segments)-1 {
		return false, nil
	}
	for k, t := range g {
		if l.mu.segments[i+k] != t.s || t.s.size.Load() != t.size {
			return false, nil
		}
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
	for _, t := range g[1:] {
		if err := removeSegmentFiles(fsys, l.dir, t.s.baseOffset); err != nil {
			return false, l.failLocked(err)
		}
	}
	for _, n := range names {
		if err := fsys.Rename(n+swapSuffix, n); err != nil {
			return false, l.failLocked(err)
		}
	}
	if err := fsys.SyncDir(l.dir); err != nil {
		return false, l.failLocked(err)
	}
	ns.offsetIdx.path, ns.timeIdx.path = names[0], names[1]
	// A new slice: flushOnce ranges over a slice of the old one after
	// dropping the lock.
	segs := make([]*segment, 0, len(l.mu.segments)-len(g)+1)
	segs = append(segs, l.mu.segments[:i]...)
	segs = append(segs, ns)
	segs = append(segs, l.mu.segments[i+len(g):]...)
	l.mu.segments = segs
	for _, t := range g {
		t.s.release() // the log's reference; readers and the plan keep theirs
	}
	return true, nil
}

package storage

import (
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"sort"
	"sync/atomic"
	"time"

	"github.com/samsa-io/samsa/internal/clock"
	"github.com/samsa-io/samsa/internal/record"
	"github.com/samsa-io/samsa/internal/vfs"
)

const (
	logSuffix       = ".log"
	indexSuffix     = ".index"
	timeIndexSuffix = ".timeindex"
)

func segmentName(dir string, base int64, suffix string) string {
	return filepath.Join(dir, fmt.Sprintf("%020d%s", base, suffix))
}

// segment is one .log file, held open, and its two indexes, held in
// memory and written to their files only at a roll, a recovery or a clean
// close (index.go). Its mutable fields are guarded by the owning Log's mu
// (written under the write lock); size is also published atomically so
// readers can bound their reads without it.
type segment struct {
	baseOffset int64
	fs         vfs.FS
	log        vfs.File
	offsetIdx  offsetIndex
	timeIdx    timeIndex

	size            atomic.Int64
	nextOffset      int64 // offset after the last batch; baseOffset when empty
	maxTimestamp    int64 // largest batch max timestamp; -1 when empty
	rollTimestamp   int64 // first batch's max timestamp, for segment.ms; -1 when empty
	created         time.Time
	jitterMs        int64
	bytesSinceIndex int64
	lastBatchBase   int64 // base offset of the last batch, for the final time index entry

	// refs counts the log's own reference plus open reads. The log file
	// closes when it drops to zero, so a read racing a deletion still
	// reads valid bytes (on Linux the unlinked file lives on).
	refs atomic.Int32
}

func (s *segment) acquire() { s.refs.Add(1) }

func (s *segment) release() {
	if s.refs.Add(-1) == 0 {
		s.closeFiles()
	}
}

func (s *segment) closeFiles() error { return s.log.Close() }

func (s *segment) empty() bool { return s.size.Load() == 0 }

// createSegment makes the log file of a new, empty segment (its indexes
// get files when it rolls or the log closes).
func createSegment(fsys vfs.FS, dir string, base int64, cfg *Config, now time.Time) (*segment, error) {
	return newSegment(fsys, dir, base, cfg, now, fsys.Create)
}

// openSegment opens an existing segment's log file; the caller loads its
// indexes (loadTrusted) or rebuilds them (recover).
func openSegment(fsys vfs.FS, dir string, base int64, cfg *Config, clk clock.Clock) (*segment, error) {
	return newSegment(fsys, dir, base, cfg, clk.Now(), fsys.OpenReadWrite)
}

func newSegment(fsys vfs.FS, dir string, base int64, cfg *Config, now time.Time, open func(string) (vfs.File, error)) (*segment, error) {
	s := &segment{baseOffset: base, fs: fsys, nextOffset: base, maxTimestamp: -1, rollTimestamp: -1, created: now}
	var err error
	if s.log, err = open(segmentName(dir, base, logSuffix)); err != nil {
		return nil, err
	}
	s.offsetIdx.path = segmentName(dir, base, indexSuffix)
	s.timeIdx.path = segmentName(dir, base, timeIndexSuffix)
	s.setConfig(cfg)
	s.refs.Store(1)
	return s, nil
}

func (s *segment) setConfig(cfg *Config) {
	s.offsetIdx.max = cfg.maxIndexEntries()
	if cfg.SegmentJitterMs > 0 && s.jitterMs == 0 {
		s.jitterMs = int64(uint64(s.baseOffset*2654435761) % uint64(cfg.SegmentJitterMs))
	}
}

// relative converts an absolute offset to the segment's 32-bit relative form.
func (s *segment) relative(off int64) (uint32, bool) {
	d := off - s.baseOffset
	return uint32(d), d >= 0 && d <= math.MaxInt32
}

// shouldRoll says whether an append of size bytes whose first batch has
// timestamp ts, ending at lastOffset, must go to a new segment. An empty
// segment never rolls: a batch larger than segment.bytes still gets one.
func (s *segment) shouldRoll(cfg *Config, size int, ts, lastOffset int64, now time.Time) bool {
	if s.empty() {
		return false
	}
	if s.size.Load()+int64(size) > cfg.SegmentBytes || s.offsetIdx.full() {
		return true
	}
	if _, ok := s.relative(lastOffset); !ok {
		return true
	}
	waited := now.Sub(s.created).Milliseconds()
	if s.rollTimestamp >= 0 && ts >= 0 {
		waited = ts - s.rollTimestamp
	}
	return waited > cfg.rollMs()-s.jitterMs
}

// batchInfo is what an append learns from each batch header.
type batchInfo struct {
	baseOffset   int64
	lastOffset   int64
	maxTimestamp int64
	size         int
}

// append writes the batches at the end of the segment and indexes them.
// The caller has checked that the offsets fit (relative).
func (s *segment) append(data []byte, batches []batchInfo, cfg *Config) error {
	pos := s.size.Load()
	if _, err := s.log.WriteAt(data, pos); err != nil {
		return err
	}
	for _, b := range batches {
		s.indexBatch(b, pos, cfg)
		pos += int64(b.size)
	}
	s.size.Store(pos)
	return nil
}

// indexBatch records one batch at pos in the in-memory state and, every
// index.interval.bytes, in both indexes.
func (s *segment) indexBatch(b batchInfo, pos int64, cfg *Config) {
	if s.rollTimestamp < 0 {
		s.rollTimestamp = b.maxTimestamp
	}
	s.maxTimestamp = max(s.maxTimestamp, b.maxTimestamp)
	if s.bytesSinceIndex > cfg.IndexIntervalBytes {
		rel, _ := s.relative(b.baseOffset)
		s.offsetIdx.append(rel, uint32(pos))
		s.timeIdx.maybeAppend(s.maxTimestamp, rel)
		s.bytesSinceIndex = 0
	}
	s.bytesSinceIndex += int64(b.size)
	s.nextOffset = b.lastOffset + 1
	s.lastBatchBase = b.baseOffset
}

// seal adds the final time index entry when the segment stops being active,
// so a reopened segment knows its largest timestamp from the index alone.
func (s *segment) seal() {
	if s.maxTimestamp < 0 {
		return
	}
	rel, _ := s.relative(s.lastBatchBase)
	s.timeIdx.maybeAppend(s.maxTimestamp, rel)
}

// flush makes the segment's log and indexes durable.
func (s *segment) flush() error {
	if err := s.log.Sync(); err != nil {
		return err
	}
	return s.writeIndexes()
}

// writeIndexes writes both index files whole from memory and syncs them.
// A new file's name is durable once the caller syncs the directory; until
// then a crash may lose it, and loading rebuilds a missing index.
func (s *segment) writeIndexes() error {
	if err := vfs.WriteFileSynced(s.fs, s.offsetIdx.path, s.offsetIdx.encode()); err != nil {
		return err
	}
	return vfs.WriteFileSynced(s.fs, s.timeIdx.path, s.timeIdx.encode())
}

// readHeader reads the batch header at pos, bounded by end.
func readHeader(f vfs.File, pos, end int64) (record.Header, error) {
	var buf [record.HeaderSize]byte
	n := min(int64(len(buf)), end-pos)
	if n < record.LogOverhead {
		return record.Header{}, fmt.Errorf("%w: %d bytes left at position %d", record.ErrTruncated, n, pos)
	}
	if _, err := f.ReadAt(buf[:n], pos); err != nil && !errors.Is(err, io.EOF) {
		return record.Header{}, err
	}
	h, err := record.ParseHeader(buf[:n])
	if err != nil {
		return h, err
	}
	if pos+int64(h.Size()) > end {
		return h, fmt.Errorf("%w: batch at position %d ends past %d", record.ErrTruncated, pos, end)
	}
	return h, nil
}

// findPosition returns the position of the first batch at or after pos
// whose last offset is >= off, scanning headers up to end; end when none.
func (s *segment) findPosition(off, pos, end int64) (int64, record.Header, error) {
	for pos < end {
		h, err := readHeader(s.log, pos, end)
		if err != nil {
			return 0, h, fmt.Errorf("storage: %s at %d: %w", s.log.Name(), pos, err)
		}
		if h.LastOffset() >= off {
			return pos, h, nil
		}
		pos += int64(h.Size())
	}
	return end, record.Header{}, nil
}

// positionAtOrBefore is the position of the last indexed batch that starts
// at or before pos, 0 when none: a batch boundary to scan forward from.
// The caller holds the log's lock.
func (s *segment) positionAtOrBefore(pos int64) int64 {
	e := s.offsetIdx.entries
	i := sort.Search(len(e), func(i int) bool { return int64(e[i].position) > pos })
	if i == 0 {
		return 0
	}
	return int64(e[i-1].position)
}

// indexedPosition is where a scan for off should start, from the offset
// index. The caller holds the log's lock (the entries slice may change).
func (s *segment) indexedPosition(off int64) int64 {
	d := off - s.baseOffset
	if d <= 0 {
		return 0
	}
	return s.offsetIdx.lookup(uint32(min(d, math.MaxUint32)))
}

// batchReader reads whole batches sequentially through a buffer, for
// recovery and timestamp searches.
type batchReader struct {
	f        vfs.File
	pos, end int64
	buf      []byte
	bufPos   int64 // file position of buf[0]
	chunk    int64 // the next read's size: firstReadChunk, doubling to readChunk
}

func newBatchReader(f vfs.File, pos, end int64) *batchReader {
	return &batchReader{f: f, pos: pos, end: end, bufPos: pos, chunk: firstReadChunk}
}

// A reader's reads start small and double: a lookup (a ListOffsets by
// timestamp, an epoch's end) usually stops within a batch or two, and
// reading (and clearing) a whole 1 MiB chunk for each of a thousand
// partitions was most of such a request's time (measured: 100 ms for 333
// partitions); a scan of a whole segment (recovery, the cleaner) reaches
// 1 MiB reads after four.
const (
	firstReadChunk = 64 << 10
	readChunk      = 1 << 20
)

// next returns the next whole batch and its position, io.EOF at end, or a
// wrapped record error for bytes that do not form a batch.
func (r *batchReader) next() ([]byte, record.Header, int64, error) {
	if r.pos >= r.end {
		return nil, record.Header{}, r.pos, io.EOF
	}
	b, err := r.window(record.HeaderSize)
	if err != nil {
		return nil, record.Header{}, r.pos, err
	}
	h, err := record.ParseHeader(b)
	if err != nil {
		return nil, h, r.pos, err
	}
	if r.pos+int64(h.Size()) > r.end {
		return nil, h, r.pos, fmt.Errorf("%w: batch at %d needs %d bytes, %d left", record.ErrTruncated, r.pos, h.Size(), r.end-r.pos)
	}
	if b, err = r.window(h.Size()); err != nil {
		return nil, h, r.pos, err
	}
	pos := r.pos
	r.pos += int64(h.Size())
	return b[:h.Size()], h, pos, nil
}

// window returns at least n bytes at r.pos (fewer only at the end).
func (r *batchReader) window(n int) ([]byte, error) {
	off := r.pos - r.bufPos
	if off+int64(n) <= int64(len(r.buf)) {
		return r.buf[off:], nil
	}
	want := max(int64(n), r.chunk)
	want = min(want, r.end-r.pos)
	r.chunk = min(2*r.chunk, readChunk)
	if int64(cap(r.buf)) < want {
		r.buf = make([]byte, want)
	}
	r.buf = r.buf[:want]
	k, err := r.f.ReadAt(r.buf, r.pos)
	if err != nil && !(errors.Is(err, io.EOF) && int64(k) == want) {
		if !errors.Is(err, io.EOF) {
			return nil, err
		}
		r.buf = r.buf[:k]
	}
	r.bufPos = r.pos
	return r.buf, nil
}

// recoverResult says what recovering one segment found.
type recoverResult struct {
	truncatedBytes int64
	batches        int
}

// recover validates every batch from the start, rebuilds both indexes and
// the in-memory state, and truncates the file at the first bad batch.
// maxEpoch is the newest epoch of the log's epoch cache, -1 if it has none
// (see checkRecovered).
func (s *segment) recover(cfg *Config, maxEpoch int32) (recoverResult, error) {
	var res recoverResult
	size, err := s.log.Size()
	if err != nil {
		return res, err
	}
	s.resetIndexes()
	r := newBatchReader(s.log, 0, size)
	valid, epoch := int64(0), int32(-1)
	for {
		batch, h, pos, err := r.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err == nil {
			err = s.checkRecovered(batch, &h, cfg, &epoch, maxEpoch)
		}
		if err != nil {
			if !isDataError(err) {
				return res, err
			}
			break
		}
		info := batchInfo{baseOffset: h.BaseOffset, lastOffset: h.LastOffset(), maxTimestamp: h.MaxTimestamp, size: h.Size()}
		s.indexBatch(info, pos, cfg)
		valid = pos + int64(h.Size())
		res.batches++
	}
	if valid < size {
		res.truncatedBytes = size - valid
		if err := s.log.Truncate(valid); err != nil {
			return res, err
		}
	}
	s.size.Store(valid)
	// Make the repair durable before anything trusts it: an unsynced cut
	// could be undone by the next crash, after the recovery point has moved
	// past this segment, and rebuilt indexes must not be torn later.
	return res, s.flush()
}

// checkRecovered holds a batch read back from disk to what the log
// guarantees: intact CRC, offsets that move forward and fit the segment.
//
// The CRC does not cover the base offset, so a torn write that garbles only
// those 8 bytes passes it. Outside compacted topics offsets are contiguous,
// which catches that; a compacted log, or one that took gaps
// (Config.OffsetGaps), can only insist they grow.
//
// Nor does the CRC cover the partition leader epoch. A leader's epochs only
// grow along its log, and every batch's epoch entry is written before the
// batch (writeLocked), so a batch whose epoch is below the one before it
// (epoch, raised here), or above the newest the epoch cache knows
// (maxEpoch, unless the cache is empty), or below -1, is garbled.
func (s *segment) checkRecovered(batch []byte, h *record.Header, cfg *Config, epoch *int32, maxEpoch int32) error {
	if err := record.CheckCRC(batch); err != nil {
		return err
	}
	if ep := h.PartitionLeaderEpoch; ep < -1 || (ep >= 0 && (ep < *epoch || (maxEpoch >= 0 && ep > maxEpoch))) {
		return fmt.Errorf("%w: batch %d has leader epoch %d after %d, the newest known %d", record.ErrCorrupt, h.BaseOffset, ep, *epoch, maxEpoch)
	}
	*epoch = max(*epoch, h.PartitionLeaderEpoch)
	gap := h.BaseOffset != s.nextOffset && !cfg.gapsAllowed()
	if h.LastOffsetDelta < 0 || h.BaseOffset < s.nextOffset || gap {
		return fmt.Errorf("%w: batch offsets %d..%d after %d", record.ErrCorrupt, h.BaseOffset, h.LastOffset(), s.nextOffset)
	}
	if _, ok := s.relative(h.LastOffset()); !ok {
		return fmt.Errorf("%w: offset %d does not fit segment %d", record.ErrCorrupt, h.LastOffset(), s.baseOffset)
	}
	return nil
}

func isDataError(err error) bool {
	return errors.Is(err, record.ErrCorrupt) || errors.Is(err, record.ErrTruncated) || errors.Is(err, record.ErrUnsupportedMagic)
}

func (s *segment) resetIndexes() {
	s.offsetIdx.entries = nil
	s.timeIdx.entries = nil
	s.nextOffset, s.maxTimestamp, s.rollTimestamp, s.bytesSinceIndex = s.baseOffset, -1, -1, 0
}

// loadTrusted opens a segment below the recovery point from its indexes,
// rebuilding them from the log when they fail their sanity check. Its
// nextOffset is set by the caller (the next segment's base) unless it is
// the last one, which scanTail finishes.
func (s *segment) loadTrusted(cfg *Config, maxEpoch int32) (rebuilt bool, err error) {
	size, err := s.log.Size()
	if err != nil {
		return false, err
	}
	s.size.Store(size)
	entries, err := loadOffsetIndex(s.fs, s.offsetIdx.path, size)
	if err == nil {
		s.offsetIdx.entries = entries
		var tentries []timeEntry
		tentries, err = loadTimeIndex(s.fs, s.timeIdx.path, math.MaxUint32)
		s.timeIdx.entries = tentries
	}
	if err != nil {
		if !errors.Is(err, errIndexCorrupt) {
			return false, err
		}
		res, rerr := s.recover(cfg, maxEpoch)
		if rerr == nil && res.truncatedBytes > 0 {
			rerr = fmt.Errorf("%w: %s below the recovery point has %d bad bytes at %d", ErrCorruptLog, s.log.Name(), res.truncatedBytes, s.size.Load())
		}
		return true, rerr
	}
	if last, ok := s.timeIdx.last(); ok {
		s.maxTimestamp = last.timestamp
	}
	return false, s.scanTail()
}

// scanTail reads the batches after the last offset index entry, to learn
// the segment's next offset, largest timestamp and first timestamp, and
// checks each one; a trusted segment whose tail does not check out is
// corrupt, not torn.
func (s *segment) scanTail() error {
	size := s.size.Load()
	var from int64
	if n := len(s.offsetIdx.entries); n > 0 {
		from = int64(s.offsetIdx.entries[n-1].position)
	}
	if err := s.readRollTimestamp(size); err != nil {
		return err
	}
	r := newBatchReader(s.log, from, size)
	for {
		batch, h, pos, err := r.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err == nil {
			err = record.CheckCRC(batch)
		}
		if err != nil {
			return fmt.Errorf("%w: %s at %d: %v", ErrCorruptLog, s.log.Name(), pos, err)
		}
		s.maxTimestamp = max(s.maxTimestamp, h.MaxTimestamp)
		s.nextOffset = h.NextOffset()
		s.lastBatchBase = h.BaseOffset
		s.bytesSinceIndex = pos + int64(h.Size()) - from
	}
	return nil
}

func (s *segment) readRollTimestamp(size int64) error {
	if size == 0 {
		return nil
	}
	h, err := readHeader(s.log, 0, size)
	if err != nil {
		return fmt.Errorf("%w: %s first batch: %v", ErrCorruptLog, s.log.Name(), err)
	}
	s.rollTimestamp = h.MaxTimestamp
	return nil
}

// truncateTo removes every batch whose last offset is >= off and returns
// the segment's new next offset.
func (s *segment) truncateTo(off int64) error {
	size := s.size.Load()
	pos, _, err := s.findPosition(off, s.indexedPosition(off), size)
	if err != nil {
		return err
	}
	if pos == size {
		return nil
	}
	rel, _ := s.relative(off)
	if off < s.baseOffset {
		rel = 0
	}
	s.offsetIdx.truncateToPosition(pos)
	s.timeIdx.truncateToOffset(rel)
	if err := s.log.Truncate(pos); err != nil {
		return err
	}
	s.size.Store(pos)
	return s.rescanAfterTruncate()
}

// rescanAfterTruncate recomputes what truncation may have cut: the next
// offset, largest timestamp and the bytes since the last index entry.
func (s *segment) rescanAfterTruncate() error {
	s.nextOffset, s.maxTimestamp, s.rollTimestamp, s.bytesSinceIndex = s.baseOffset, -1, -1, 0
	if last, ok := s.timeIdx.last(); ok {
		s.maxTimestamp = last.timestamp
	}
	return s.scanTail()
}

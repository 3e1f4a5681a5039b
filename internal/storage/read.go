package storage

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"

	"github.com/samsa-io/samsa/internal/record"
	"github.com/samsa-io/samsa/internal/vfs"
)

// ReadResult is a range of one segment file holding whole batches from the
// requested offset on; like Kafka, the last batch may be cut short by
// maxBytes, and clients drop such a partial batch. The file stays open until
// Release, even if retention deletes the segment meanwhile, so the broker
// can sendfile the range after the log's locks are gone.
type ReadResult struct {
	File     vfs.File
	Position int64
	Size     int64
	seg      *segment
}

// Release lets the segment's files close. Safe to call twice and on an
// empty result.
func (r *ReadResult) Release() {
	if r.seg != nil {
		r.seg.release()
		r.seg = nil
	}
}

// ReadAll copies the range into memory (for TLS, tests and tools).
func (r *ReadResult) ReadAll() ([]byte, error) {
	if r.Size == 0 {
		return nil, nil
	}
	b := make([]byte, r.Size)
	n, err := r.File.ReadAt(b, r.Position)
	if err == io.EOF && int64(n) == r.Size {
		err = nil
	}
	return b[:n], err
}

// Read returns batches starting with the one that holds offset, up to
// maxBytes, and only batches below maxOffset (the high watermark or last
// stable offset; pass -1 for the log end). With minOneBatch, the first batch
// is returned whole even when larger than maxBytes, as Kafka does so a
// consumer can always make progress. Reading at the log end (or maxOffset)
// returns an empty result; outside [log start, log end] is
// ErrOffsetOutOfRange.
func (l *Log) Read(offset int64, maxBytes int32, maxOffset int64, minOneBatch bool) (ReadResult, error) {
	l.mu.RLock()
	if l.mu.closed {
		l.mu.RUnlock()
		return ReadResult{}, ErrClosed
	}
	if offset < l.mu.logStartOffset || offset > l.mu.nextOffset {
		err := fmt.Errorf("%w: %d not in [%d, %d]", ErrOffsetOutOfRange, offset, l.mu.logStartOffset, l.mu.nextOffset)
		l.mu.RUnlock()
		return ReadResult{}, err
	}
	if maxOffset < 0 || maxOffset > l.mu.nextOffset {
		maxOffset = l.mu.nextOffset
	}
	v, ok := l.pinLocked(l.segmentIndexLocked(offset), offset)
	l.mu.RUnlock()
	// Compaction (or a roll after a truncation) can leave a segment with
	// nothing at or after offset; the data then starts in a later one. Only
	// the segment being read is pinned, so a read near the start of a log
	// with thousands of segments costs the same as one at its end.
	for ok && offset < maxOffset && v.s.baseOffset < maxOffset {
		res, found, err := v.read(offset, maxBytes, maxOffset, minOneBatch)
		v.s.release()
		if err != nil && l.opts.OnIOError != nil && IsIOError(err) {
			l.opts.OnIOError(err)
		}
		if err != nil || found {
			return res, err
		}
		l.mu.RLock()
		v, ok = l.pinLocked(l.segmentAfterLocked(v.s.baseOffset), offset)
		l.mu.RUnlock()
	}
	if ok {
		v.s.release()
	}
	return ReadResult{}, nil
}

// ReadWhole is Read with minOneBatch, ending at the last whole batch: the
// batch a capped read would cut short is left for the next read, unless
// it is the first (returned whole, as Read does). A follower's fetch reads
// this way (replication: FollowerFetch). A cut batch is bytes the follower
// must drop, yet they cross the network and count against the replication
// throttle: with 800 KB batches and 1 MiB reads, a fifth of a throttled
// copy was such bytes, and the copy ran at 0.8× its throttle. Kafka's
// leader sends the cut batch; its followers drop it too.
//
// Finding the cut costs a search of the offset index and a few batch
// headers read past its entry (index.interval.bytes apart), only when the
// read was capped. Consumers' reads keep Kafka's cut batch: their clients
// expect it, and their reads are the hot path.
func (l *Log) ReadWhole(offset int64, maxBytes int32, maxOffset int64) (ReadResult, error) {
	res, err := l.Read(offset, maxBytes, maxOffset, true)
	// A read shorter than maxBytes ended at the segment's end or at
	// maxOffset, both batch boundaries: only a capped read can cut a
	// batch, so an in-sync follower's tail read costs nothing more.
	if err != nil || res.Size < int64(maxBytes) || res.seg == nil {
		return res, err
	}
	res.Size = l.wholeBatchEnd(res) - res.Position
	return res, nil
}

// wholeBatchEnd is the file position where the last whole batch of res's
// range ends: its end when the range holds whole batches, else the start of
// the batch it cuts, never before the end of the first batch. Anything
// unexpected (an I/O error, a batch that does not parse) keeps the range as
// it is: the follower drops what is not whole, as before.
func (l *Log) wholeBatchEnd(res ReadResult) int64 {
	end := res.Position + res.Size
	l.mu.RLock()
	from := res.seg.positionAtOrBefore(end)
	l.mu.RUnlock()
	pos := max(from, res.Position)
	for pos < end {
		h, err := readHeader(res.File, pos, end)
		switch {
		case errors.Is(err, record.ErrTruncated):
			if pos == res.Position {
				return end // the first batch: Read returned it whole
			}
			return pos
		case err != nil:
			return end
		}
		pos += int64(h.Size())
	}
	return end
}

// pinLocked pins segment i for a read of offset, copying out what the
// read needs; false when there is no such segment.
func (l *Log) pinLocked(i int, offset int64) (readView, bool) {
	if i < 0 || i >= len(l.mu.segments) {
		return readView{}, false
	}
	s := l.mu.segments[i]
	s.acquire()
	return readView{s: s, start: s.indexedPosition(offset), size: s.size.Load(), next: s.nextOffset}, true
}

// segmentAfterLocked is the index of the first segment based above base;
// len(segments) when none.
func (l *Log) segmentAfterLocked(base int64) int {
	return sort.Search(len(l.mu.segments), func(i int) bool { return l.mu.segments[i].baseOffset > base })
}

// readView is a segment pinned for a read, with the lock-guarded state the
// read needs copied out.
type readView struct {
	s     *segment
	start int64 // index position to scan from
	size  int64
	next  int64 // the segment's next offset
}

// read reads from one segment; found is false when the segment has no batch
// at or after offset.
func (v *readView) read(offset int64, maxBytes int32, maxOffset int64, minOneBatch bool) (ReadResult, bool, error) {
	pos, h, err := v.s.findPosition(offset, v.start, v.size)
	if err != nil || pos == v.size {
		return ReadResult{}, false, err
	}
	if h.BaseOffset >= maxOffset {
		return ReadResult{}, true, nil
	}
	end := v.size
	if maxOffset < v.next {
		if end, _, err = v.s.findPosition(maxOffset, pos, v.size); err != nil {
			return ReadResult{}, false, err
		}
	}
	n := min(end-pos, int64(max(maxBytes, 0)))
	if minOneBatch {
		n = max(n, min(int64(h.Size()), end-pos))
	}
	if n <= 0 {
		return ReadResult{}, true, nil
	}
	v.s.acquire()
	return ReadResult{File: v.s.log, Position: pos, Size: n, seg: v.s}, true, nil
}

// OffsetForTimestamp returns the offset and timestamp of the first record
// whose timestamp is >= ts, as ListOffsets does; found is false when every
// record is older.
func (l *Log) OffsetForTimestamp(ts int64) (offset, timestamp int64, found bool, err error) {
	views, logStart, release := l.timeViews(func(maxTs []int64) int64 { return ts })
	defer release()
	for _, v := range views {
		if v.maxTimestamp < ts {
			continue
		}
		offset, timestamp, found, err = v.offsetForTimestamp(ts, logStart)
		if err != nil || found {
			return offset, timestamp, found, err
		}
	}
	return -1, -1, false, nil
}

// MaxTimestamp returns the offset and timestamp of the first record holding
// the largest timestamp in the log (ListOffsets MAX_TIMESTAMP, KIP-734).
func (l *Log) MaxTimestamp() (offset, timestamp int64, found bool, err error) {
	views, logStart, release := l.timeViews(func(maxTs []int64) int64 { return slices.Max(maxTs) })
	defer release()
	best := -1
	for i, v := range views {
		if v.maxTimestamp >= 0 && (best < 0 || v.maxTimestamp > views[best].maxTimestamp) {
			best = i
		}
	}
	if best < 0 {
		return -1, -1, false, nil
	}
	return views[best].offsetForTimestamp(views[best].maxTimestamp, logStart)
}

// timeView is a segment pinned for a timestamp search, with what the search
// needs from its lock-guarded state copied out.
type timeView struct {
	s            *segment
	maxTimestamp int64
	start, size  int64 // where the scan for the target starts and stops
}

// timeViews pins every segment and, under the read lock, reads each one's
// largest timestamp and the index position to search from for the target
// that target computes from those timestamps.
func (l *Log) timeViews(target func(maxTs []int64) int64) ([]timeView, int64, func()) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	views := make([]timeView, len(l.mu.segments))
	maxTs := make([]int64, len(l.mu.segments))
	for i, s := range l.mu.segments {
		s.acquire()
		views[i] = timeView{s: s, maxTimestamp: s.maxTimestamp, size: s.size.Load()}
		maxTs[i] = s.maxTimestamp
	}
	ts := target(maxTs)
	for i := range views {
		s := views[i].s
		if rel, ok := s.timeIdx.lookupBefore(ts); ok {
			views[i].start = s.offsetIdx.lookup(rel)
		}
	}
	return views, l.mu.logStartOffset, func() {
		for _, v := range views {
			v.s.release()
		}
	}
}

func (v *timeView) offsetForTimestamp(ts, logStart int64) (int64, int64, bool, error) {
	r := newBatchReader(v.s.log, v.start, v.size)
	for {
		batch, h, _, err := r.next()
		if errors.Is(err, io.EOF) {
			return -1, -1, false, nil
		}
		if err != nil {
			return -1, -1, false, fmt.Errorf("storage: %s: %w", v.s.log.Name(), err)
		}
		if h.MaxTimestamp < ts || h.LastOffset() < logStart {
			continue
		}
		if off, t, ok, err := firstRecordAtOrAfter(batch, ts, logStart); err != nil || ok {
			return off, t, ok, err
		}
	}
}

// maxDecompressedLookup bounds a batch decompressed for a timestamp lookup.
const maxDecompressedLookup = 256 << 20

func firstRecordAtOrAfter(batch []byte, ts, logStart int64) (int64, int64, bool, error) {
	off, t, found := int64(-1), int64(-1), false
	err := record.Iterate(batch, maxDecompressedLookup, func(r *record.Record) bool {
		if r.Offset >= logStart && r.Timestamp >= ts {
			off, t, found = r.Offset, r.Timestamp, true
			return false
		}
		return true
	})
	return off, t, found, err
}

// LatestEpoch returns the newest leader epoch and where it starts. A
// follower sends it as its Fetch's LastFetchedEpoch, as Kafka sends
// UnifiedLog.latestEpoch: the epoch of its last batch, or one it began as
// a leader without writing in, which the leader's divergence answer then
// makes it truncate away (TruncateTo at the log end drops it).
func (l *Log) LatestEpoch() (EpochEntry, bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.mu.epochs.latest()
}

// Epochs returns a copy of the leader-epoch lineage.
func (l *Log) Epochs() []EpochEntry {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return append([]EpochEntry(nil), l.mu.epochs.entries...)
}

// EndOffsetForEpoch answers OffsetForLeaderEpoch: the largest known epoch
// <= epoch and the offset where it ends. An epoch older than every known
// one gets itself and the first known epoch's start offset, as in Kafka;
// a log without epochs, or epoch -1, gets (-1, -1).
func (l *Log) EndOffsetForEpoch(epoch int32) (int32, int64) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.mu.epochs.endOffsetFor(epoch, l.mu.nextOffset)
}

// AssignEpoch records a new leader epoch starting at the log end (a new
// leader does this before its first append, as Kafka does).
func (l *Log) AssignEpoch(epoch int32) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.writableLocked(); err != nil {
		return err
	}
	if err := l.mu.epochs.assign(epoch, l.mu.nextOffset, l.mu.nextOffset); err != nil {
		return l.failLocked(err)
	}
	return nil
}

// FirstUnstableOffset is the first offset of the oldest transaction still
// open on this log, or -1: the last stable offset is the smaller of it and
// the high watermark.
func (l *Log) FirstUnstableOffset() int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.mu.producers.FirstUnstableOffset()
}

// AbortedTransactions lists the aborted transactions that overlap
// [fetchOffset, upperBound), for a read_committed fetch to filter.
func (l *Log) AbortedTransactions(fetchOffset, upperBound int64) []AbortedTxn {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.mu.producers.AbortedTransactions(fetchOffset, upperBound)
}

// Producers lists the producers with state on this log (DescribeProducers).
func (l *Log) Producers() []ProducerState {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.mu.producers.Producers()
}

// ExpireProducers drops the state of producers idle for expirationMs
// (producer.id.expiration.ms) with no open transaction; it returns how
// many it dropped. The Manager calls it every
// producer.id.expiration.check.interval.ms.
func (l *Log) ExpireProducers(expirationMs int64) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.mu.producers.Expire(l.opts.Clock.Now().UnixMilli(), expirationMs)
}

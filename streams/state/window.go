package state

import (
	"encoding/binary"
	"fmt"
	"math"
	"path/filepath"
	"sync/atomic"
)

// Window is a window's bounds in milliseconds: [Start, End) for time
// windows, [Start, End] for sessions, as Kafka's.
type Window struct {
	Start, End int64
}

// WindowedIterator walks windowed entries: a key, its window, a value.
type WindowedIterator interface {
	Next() bool
	Key() []byte
	Window() Window
	Value() []byte
	Err() error
	Close() error
}

// WindowStore is Kafka Streams' WindowStore over bytes: values per key and
// window start, kept for the retention period after stream time passes them
// (whole segments are dropped, as in Kafka's segmented stores). Reads over
// one key are in window start order (then insertion order for duplicates);
// reads over key ranges are ordered by segment, key, window start, as
// Kafka's RocksDB window store.
type WindowStore interface {
	Store
	ReadOnlyWindowStore
	// Put stores value for key's window starting at windowStart; a nil
	// value deletes it (and is ignored when duplicates are retained). A
	// window older than the retention period is dropped, counted in
	// DroppedRecords.
	Put(key, value []byte, windowStart int64) error
	// ObservedStreamTime is the largest window start put (-1 before any).
	ObservedStreamTime() int64
	// DroppedRecords counts puts dropped as expired (Kafka's
	// dropped-records metric).
	DroppedRecords() int64
	// Committed is a view of the state as of the last Commit, safe for
	// use by other goroutines while the task writes (interactive queries).
	Committed() ReadOnlyWindowStore
}

// ReadOnlyWindowStore is the reading half of a WindowStore (Kafka's
// ReadOnlyWindowStore).
type ReadOnlyWindowStore interface {
	// Fetch returns the value of the window of key starting at windowStart
	// (the first one, with duplicates), nil when absent or expired.
	Fetch(key []byte, windowStart int64) ([]byte, error)
	// FetchTimeRange iterates over key's windows starting in
	// [timeFrom, timeTo].
	FetchTimeRange(key []byte, timeFrom, timeTo int64) (WindowedIterator, error)
	BackwardFetchTimeRange(key []byte, timeFrom, timeTo int64) (WindowedIterator, error)
	// FetchRange iterates over the windows starting in [timeFrom, timeTo]
	// of the keys in [keyFrom, keyTo] (nil: unbounded).
	FetchRange(keyFrom, keyTo []byte, timeFrom, timeTo int64) (WindowedIterator, error)
	BackwardFetchRange(keyFrom, keyTo []byte, timeFrom, timeTo int64) (WindowedIterator, error)
	FetchAll(timeFrom, timeTo int64) (WindowedIterator, error)
	BackwardFetchAll(timeFrom, timeTo int64) (WindowedIterator, error)
	All() (WindowedIterator, error)
	BackwardAll() (WindowedIterator, error)
}

// WindowOptions configure a window store.
type WindowOptions struct {
	// RetentionPeriod (ms) keeps a window until stream time is this far
	// past its start. Kafka requires at least WindowSize + grace.
	RetentionPeriod int64
	// WindowSize (ms) gives the windows' ends.
	WindowSize int64
	// SegmentInterval (ms): 0 is Kafka's max(retention/2, 60s).
	SegmentInterval int64
	// RetainDuplicates keeps every put as its own entry (stream-stream
	// joins), numbered by a sequence number as Kafka's.
	RetainDuplicates bool
}

func (o WindowOptions) validate() error {
	if o.WindowSize <= 0 {
		return fmt.Errorf("state: window size %d must be positive", o.WindowSize)
	}
	if o.RetentionPeriod < o.WindowSize {
		return fmt.Errorf("state: retention period %d must be at least the window size %d", o.RetentionPeriod, o.WindowSize)
	}
	return nil
}

const windowPrefix = 'w'

type windowStore struct {
	name   string
	opts   WindowOptions
	eng    engine
	seg    segments
	seqnum uint32
	closed bool
	// committedStreamTime is the stream time of the last commit, for the
	// committed views' retention.
	committedStreamTime atomic.Int64
}

// NewInMemoryWindowStore returns an empty window store in memory.
func NewInMemoryWindowStore(name string, o WindowOptions) (WindowStore, error) {
	return newWindowStore(name, o, newMemoryEngine())
}

// OpenPebbleWindowStore opens (or creates) a persistent window store in dir.
func OpenPebbleWindowStore(name, dir string, o WindowOptions, po PebbleOptions) (WindowStore, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	eng, err := openPebble(filepath.Clean(dir), po)
	if err != nil {
		return nil, err
	}
	s, err := newWindowStore(name, o, eng)
	if err != nil {
		eng.close()
		return nil, err
	}
	return s, nil
}

func newWindowStore(name string, o WindowOptions, eng engine) (*windowStore, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	if o.SegmentInterval == 0 {
		o.SegmentInterval = defaultSegmentInterval(o.RetentionPeriod)
	}
	seg, err := newSegments(o.RetentionPeriod, o.SegmentInterval)
	if err != nil {
		return nil, err
	}
	if err := seg.load(eng); err != nil {
		return nil, err
	}
	s := &windowStore{name: name, opts: o, eng: eng, seg: seg}
	s.committedStreamTime.Store(seg.streamTime)
	return s, nil
}

func (s *windowStore) Committed() ReadOnlyWindowStore {
	return &windowView{name: s.name, opts: s.opts, retention: s.seg.retention, interval: s.seg.interval,
		eng: s.eng.committed(), streamTime: &s.committedStreamTime}
}

// windowView reads a window store's committed state: each read runs the
// store's code over the committed engine with the committed stream time.
type windowView struct {
	name                string
	opts                WindowOptions
	retention, interval int64
	eng                 engine
	streamTime          *atomic.Int64
}

func (v *windowView) store() *windowStore {
	return &windowStore{name: v.name, opts: v.opts, eng: v.eng,
		seg: segments{retention: v.retention, interval: v.interval, streamTime: v.streamTime.Load()}}
}

func (v *windowView) Fetch(key []byte, windowStart int64) ([]byte, error) {
	return v.store().Fetch(key, windowStart)
}

func (v *windowView) FetchTimeRange(key []byte, from, to int64) (WindowedIterator, error) {
	return v.store().FetchTimeRange(key, from, to)
}

func (v *windowView) BackwardFetchTimeRange(key []byte, from, to int64) (WindowedIterator, error) {
	return v.store().BackwardFetchTimeRange(key, from, to)
}

func (v *windowView) FetchRange(keyFrom, keyTo []byte, from, to int64) (WindowedIterator, error) {
	return v.store().FetchRange(keyFrom, keyTo, from, to)
}

func (v *windowView) BackwardFetchRange(keyFrom, keyTo []byte, from, to int64) (WindowedIterator, error) {
	return v.store().BackwardFetchRange(keyFrom, keyTo, from, to)
}

func (v *windowView) FetchAll(from, to int64) (WindowedIterator, error) {
	return v.store().FetchAll(from, to)
}

func (v *windowView) BackwardFetchAll(from, to int64) (WindowedIterator, error) {
	return v.store().BackwardFetchAll(from, to)
}

func (v *windowView) All() (WindowedIterator, error)         { return v.store().All() }
func (v *windowView) BackwardAll() (WindowedIterator, error) { return v.store().BackwardAll() }

func (s *windowStore) Name() string              { return s.name }
func (s *windowStore) Persistent() bool          { return s.eng.persistent() }
func (s *windowStore) ObservedStreamTime() int64 { return s.seg.streamTime }
func (s *windowStore) DroppedRecords() int64     { return s.seg.droppedRecords }

func (s *windowStore) check(key []byte) error {
	if err := closedCheck(s.closed, s.name); err != nil {
		return err
	}
	if key == nil {
		return fmt.Errorf("state: %s: %w", s.name, ErrNilKey)
	}
	return nil
}

// windowKey is the local key [w][segment][escaped key][start][seqnum].
func (s *windowStore) windowKey(key []byte, start int64, seq uint32) []byte {
	b := segmentKey(windowPrefix, segmentID(start, s.seg.interval))
	b = appendEscaped(b, key)
	b = appendOrderedInt64(b, start)
	return binary.BigEndian.AppendUint32(b, seq)
}

func (s *windowStore) Put(key, value []byte, windowStart int64) error {
	_, err := s.put(key, value, windowStart)
	return err
}

// put returns the sequence number it wrote under, for the changelog: 0
// unless duplicates are retained, then the next of Kafka's 31-bit counter.
func (s *windowStore) put(key, value []byte, windowStart int64) (seq uint32, err error) {
	if err := s.check(key); err != nil {
		return 0, err
	}
	if value == nil && s.opts.RetainDuplicates {
		return 0, nil
	}
	if s.opts.RetainDuplicates {
		s.seqnum = (s.seqnum + 1) & math.MaxInt32
		seq = s.seqnum
	}
	return seq, s.putSeq(key, value, windowStart, seq)
}

// putSeq writes under a given sequence number: the put path and restore.
func (s *windowStore) putSeq(key, value []byte, windowStart int64, seq uint32) error {
	if !s.seg.observe(windowStart) {
		s.seg.droppedRecords++
		return nil
	}
	if value == nil {
		return s.eng.delete(s.windowKey(key, windowStart, seq))
	}
	return s.eng.set(s.windowKey(key, windowStart, seq), value)
}

func (s *windowStore) Fetch(key []byte, windowStart int64) ([]byte, error) {
	if !s.opts.RetainDuplicates {
		// One window, one key: a point read (the windowed aggregation's
		// read per record and window).
		if err := s.check(key); err != nil {
			return nil, err
		}
		if windowStart < s.seg.actualFrom(windowStart) {
			return nil, nil
		}
		return s.eng.get(s.windowKey(key, windowStart, 0))
	}
	it, err := s.FetchTimeRange(key, windowStart, windowStart)
	if err != nil {
		return nil, err
	}
	defer it.Close()
	if it.Next() {
		return it.Value(), nil
	}
	return nil, it.Err()
}

func (s *windowStore) FetchTimeRange(key []byte, from, to int64) (WindowedIterator, error) {
	if err := s.check(key); err != nil {
		return nil, err
	}
	return s.scan(key, key, from, to, false)
}

func (s *windowStore) BackwardFetchTimeRange(key []byte, from, to int64) (WindowedIterator, error) {
	if err := s.check(key); err != nil {
		return nil, err
	}
	return s.scan(key, key, from, to, true)
}

func (s *windowStore) FetchRange(keyFrom, keyTo []byte, from, to int64) (WindowedIterator, error) {
	return s.scan(keyFrom, keyTo, from, to, false)
}

func (s *windowStore) BackwardFetchRange(keyFrom, keyTo []byte, from, to int64) (WindowedIterator, error) {
	return s.scan(keyFrom, keyTo, from, to, true)
}

func (s *windowStore) FetchAll(from, to int64) (WindowedIterator, error) {
	return s.scan(nil, nil, from, to, false)
}

func (s *windowStore) BackwardFetchAll(from, to int64) (WindowedIterator, error) {
	return s.scan(nil, nil, from, to, true)
}

func (s *windowStore) All() (WindowedIterator, error) {
	return s.scan(nil, nil, math.MinInt64, math.MaxInt64, false)
}

func (s *windowStore) BackwardAll() (WindowedIterator, error) {
	return s.scan(nil, nil, math.MinInt64, math.MaxInt64, true)
}

func (s *windowStore) scan(keyFrom, keyTo []byte, from, to int64, reverse bool) (WindowedIterator, error) {
	if err := closedCheck(s.closed, s.name); err != nil {
		return nil, err
	}
	from = s.seg.actualFrom(from)
	sc, err := newSegmentedScan(s.eng, windowPrefix, seqnumBytes,
		segmentID(from, s.seg.interval), segmentID(to, s.seg.interval),
		segmentedScan{reverse: reverse, keyFrom: keyFrom, keyTo: keyTo, timeFrom: from, timeTo: to})
	if err != nil {
		return nil, err
	}
	return &windowIter{segmentedScan: sc, size: s.opts.WindowSize}, nil
}

// windowIter gives a window store entry's window: [start, start+size).
type windowIter struct {
	*segmentedScan
	size int64
}

func (it *windowIter) Key() []byte   { return it.key }
func (it *windowIter) Value() []byte { return it.value }

func (it *windowIter) Window() Window { return timeWindow(it.first, it.size) }

// timeWindow is [start, start+size), the end clamped on overflow.
func timeWindow(start, size int64) Window {
	end := start + size
	if end < start {
		end = math.MaxInt64
	}
	return Window{Start: start, End: end}
}

func (s *windowStore) Flush() error { return nil }

func (s *windowStore) Commit() error {
	if err := closedCheck(s.closed, s.name); err != nil {
		return err
	}
	// Whole segments that fell out of retention are deleted here, at the
	// end of the batch, not on the put that moved stream time: pebble's
	// indexed batch re-reads every range deletion it holds on each Get
	// (v2.1.7), so a deletion early in a batch slowed every read after it
	// (a quarter of the windowed benchmark's CPU). Reads already hide
	// expired windows by stream time, so nothing sees the difference.
	if err := s.seg.expire(s.eng, windowPrefix); err != nil {
		return err
	}
	if err := s.seg.commit(s.eng); err != nil {
		return err
	}
	s.committedStreamTime.Store(s.seg.streamTime)
	return nil
}

func (s *windowStore) Abort() error {
	if err := closedCheck(s.closed, s.name); err != nil {
		return err
	}
	return s.seg.abort(s.eng)
}

func (s *windowStore) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	return s.eng.close()
}

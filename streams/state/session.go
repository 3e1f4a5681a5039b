package state

import (
	"fmt"
	"math"
	"path/filepath"
	"sync/atomic"
)

// SessionStore is Kafka Streams' SessionStore over bytes: one value per key
// and session window [start, end], kept for the retention period after
// stream time (the largest session end put) passes the session's end.
// Sessions of one key come in end order, then start order; key ranges are
// ordered by segment (of the end), key, end, start, as Kafka's RocksDB
// session store.
type SessionStore interface {
	Store
	ReadOnlySessionStore
	// Put stores value for key's session; a nil value removes it. A
	// session that ended before the retention period is dropped.
	Put(key []byte, session Window, value []byte) error
	Remove(key []byte, session Window) error
	ObservedStreamTime() int64
	DroppedRecords() int64
	// Committed is a view of the state as of the last Commit, safe for
	// use by other goroutines while the task writes (interactive queries).
	Committed() ReadOnlySessionStore
}

// ReadOnlySessionStore is the reading half of a SessionStore (Kafka's
// ReadOnlySessionStore).
type ReadOnlySessionStore interface {
	// FetchSession returns the value of exactly that session, nil when
	// absent or expired.
	FetchSession(key []byte, sessionStart, sessionEnd int64) ([]byte, error)
	// FindSessions iterates over key's sessions that end at or after
	// earliestSessionEndTime and start at or before latestSessionStartTime:
	// the sessions a record at a time could merge with.
	FindSessions(key []byte, earliestSessionEndTime, latestSessionStartTime int64) (WindowedIterator, error)
	BackwardFindSessions(key []byte, earliestSessionEndTime, latestSessionStartTime int64) (WindowedIterator, error)
	// FindSessionsRange is FindSessions over keys keyFrom..keyTo (nil:
	// unbounded).
	FindSessionsRange(keyFrom, keyTo []byte, earliestSessionEndTime, latestSessionStartTime int64) (WindowedIterator, error)
	BackwardFindSessionsRange(keyFrom, keyTo []byte, earliestSessionEndTime, latestSessionStartTime int64) (WindowedIterator, error)
	// Fetch iterates over all of key's sessions.
	Fetch(key []byte) (WindowedIterator, error)
	BackwardFetch(key []byte) (WindowedIterator, error)
	FetchRange(keyFrom, keyTo []byte) (WindowedIterator, error)
	BackwardFetchRange(keyFrom, keyTo []byte) (WindowedIterator, error)
}

// SessionOptions configure a session store.
type SessionOptions struct {
	// RetentionPeriod (ms) keeps a session until stream time is this far
	// past its end. Kafka requires at least the inactivity gap + grace.
	RetentionPeriod int64
	// SegmentInterval (ms): 0 is Kafka's max(retention/2, 60s).
	SegmentInterval int64
}

const sessionPrefix = 's'

type sessionStore struct {
	name   string
	eng    engine
	seg    segments
	closed bool
	// committedStreamTime is the stream time of the last commit, for the
	// committed views' retention.
	committedStreamTime atomic.Int64
}

// NewInMemorySessionStore returns an empty session store in memory.
func NewInMemorySessionStore(name string, o SessionOptions) (SessionStore, error) {
	return newSessionStore(name, o, newMemoryEngine())
}

// OpenPebbleSessionStore opens (or creates) a persistent session store in
// dir.
func OpenPebbleSessionStore(name, dir string, o SessionOptions, po PebbleOptions) (SessionStore, error) {
	eng, err := openPebble(filepath.Clean(dir), po)
	if err != nil {
		return nil, err
	}
	s, err := newSessionStore(name, o, eng)
	if err != nil {
		eng.close()
		return nil, err
	}
	return s, nil
}

func newSessionStore(name string, o SessionOptions, eng engine) (*sessionStore, error) {
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
	s := &sessionStore{name: name, eng: eng, seg: seg}
	s.committedStreamTime.Store(seg.streamTime)
	return s, nil
}

func (s *sessionStore) Committed() ReadOnlySessionStore {
	return &sessionView{name: s.name, retention: s.seg.retention, interval: s.seg.interval,
		eng: s.eng.committed(), streamTime: &s.committedStreamTime}
}

// sessionView reads a session store's committed state, as windowView.
type sessionView struct {
	name                string
	retention, interval int64
	eng                 engine
	streamTime          *atomic.Int64
}

func (v *sessionView) store() *sessionStore {
	return &sessionStore{name: v.name, eng: v.eng,
		seg: segments{retention: v.retention, interval: v.interval, streamTime: v.streamTime.Load()}}
}

func (v *sessionView) FetchSession(key []byte, start, end int64) ([]byte, error) {
	return v.store().FetchSession(key, start, end)
}

func (v *sessionView) FindSessions(key []byte, earliestEnd, latestStart int64) (WindowedIterator, error) {
	return v.store().FindSessions(key, earliestEnd, latestStart)
}

func (v *sessionView) BackwardFindSessions(key []byte, earliestEnd, latestStart int64) (WindowedIterator, error) {
	return v.store().BackwardFindSessions(key, earliestEnd, latestStart)
}

func (v *sessionView) FindSessionsRange(keyFrom, keyTo []byte, earliestEnd, latestStart int64) (WindowedIterator, error) {
	return v.store().FindSessionsRange(keyFrom, keyTo, earliestEnd, latestStart)
}

func (v *sessionView) BackwardFindSessionsRange(keyFrom, keyTo []byte, earliestEnd, latestStart int64) (WindowedIterator, error) {
	return v.store().BackwardFindSessionsRange(keyFrom, keyTo, earliestEnd, latestStart)
}

func (v *sessionView) Fetch(key []byte) (WindowedIterator, error) { return v.store().Fetch(key) }

func (v *sessionView) BackwardFetch(key []byte) (WindowedIterator, error) {
	return v.store().BackwardFetch(key)
}

func (v *sessionView) FetchRange(keyFrom, keyTo []byte) (WindowedIterator, error) {
	return v.store().FetchRange(keyFrom, keyTo)
}

func (v *sessionView) BackwardFetchRange(keyFrom, keyTo []byte) (WindowedIterator, error) {
	return v.store().BackwardFetchRange(keyFrom, keyTo)
}

func (s *sessionStore) Name() string              { return s.name }
func (s *sessionStore) Persistent() bool          { return s.eng.persistent() }
func (s *sessionStore) ObservedStreamTime() int64 { return s.seg.streamTime }
func (s *sessionStore) DroppedRecords() int64     { return s.seg.droppedRecords }

func (s *sessionStore) check(key []byte) error {
	if err := closedCheck(s.closed, s.name); err != nil {
		return err
	}
	if key == nil {
		return fmt.Errorf("state: %s: %w", s.name, ErrNilKey)
	}
	return nil
}

// sessionKey is the local key [s][segment of end][escaped key][end][start].
func (s *sessionStore) sessionKey(key []byte, w Window) []byte {
	b := segmentKey(sessionPrefix, segmentID(w.End, s.seg.interval))
	b = appendEscaped(b, key)
	b = appendOrderedInt64(b, w.End)
	return appendOrderedInt64(b, w.Start)
}

func (s *sessionStore) Put(key []byte, w Window, value []byte) error {
	if err := s.check(key); err != nil {
		return err
	}
	if w.End < w.Start {
		return fmt.Errorf("state: %s: session end %d before its start %d", s.name, w.End, w.Start)
	}
	if !s.seg.observe(w.End) {
		s.seg.droppedRecords++
		return nil
	}
	if value == nil {
		return s.eng.delete(s.sessionKey(key, w))
	}
	return s.eng.set(s.sessionKey(key, w), value)
}

func (s *sessionStore) Remove(key []byte, w Window) error { return s.Put(key, w, nil) }

func (s *sessionStore) FetchSession(key []byte, start, end int64) ([]byte, error) {
	if err := s.check(key); err != nil {
		return nil, err
	}
	if end < s.seg.actualFrom(end) {
		return nil, nil
	}
	return s.eng.get(s.sessionKey(key, Window{Start: start, End: end}))
}

func (s *sessionStore) FindSessions(key []byte, earliestEnd, latestStart int64) (WindowedIterator, error) {
	if err := s.check(key); err != nil {
		return nil, err
	}
	return s.scan(key, key, earliestEnd, latestStart, false)
}

func (s *sessionStore) BackwardFindSessions(key []byte, earliestEnd, latestStart int64) (WindowedIterator, error) {
	if err := s.check(key); err != nil {
		return nil, err
	}
	return s.scan(key, key, earliestEnd, latestStart, true)
}

func (s *sessionStore) FindSessionsRange(keyFrom, keyTo []byte, earliestEnd, latestStart int64) (WindowedIterator, error) {
	return s.scan(keyFrom, keyTo, earliestEnd, latestStart, false)
}

func (s *sessionStore) BackwardFindSessionsRange(keyFrom, keyTo []byte, earliestEnd, latestStart int64) (WindowedIterator, error) {
	return s.scan(keyFrom, keyTo, earliestEnd, latestStart, true)
}

func (s *sessionStore) Fetch(key []byte) (WindowedIterator, error) {
	return s.FindSessions(key, 0, math.MaxInt64)
}

func (s *sessionStore) BackwardFetch(key []byte) (WindowedIterator, error) {
	return s.BackwardFindSessions(key, 0, math.MaxInt64)
}

func (s *sessionStore) FetchRange(keyFrom, keyTo []byte) (WindowedIterator, error) {
	return s.FindSessionsRange(keyFrom, keyTo, 0, math.MaxInt64)
}

func (s *sessionStore) BackwardFetchRange(keyFrom, keyTo []byte) (WindowedIterator, error) {
	return s.BackwardFindSessionsRange(keyFrom, keyTo, 0, math.MaxInt64)
}

func (s *sessionStore) scan(keyFrom, keyTo []byte, earliestEnd, latestStart int64, reverse bool) (WindowedIterator, error) {
	if err := closedCheck(s.closed, s.name); err != nil {
		return nil, err
	}
	from := s.seg.actualFrom(earliestEnd)
	sc, err := newSegmentedScan(s.eng, sessionPrefix, timestampBytes,
		segmentID(from, s.seg.interval), segmentID(math.MaxInt64, s.seg.interval),
		segmentedScan{reverse: reverse, keyFrom: keyFrom, keyTo: keyTo, timeFrom: from, timeTo: math.MaxInt64,
			filter: func(_ int64, rest []byte) bool { return orderedInt64(rest) <= latestStart }})
	if err != nil {
		return nil, err
	}
	return &sessionIter{sc}, nil
}

// sessionIter's first timestamp is the end, the rest the start.
type sessionIter struct{ *segmentedScan }

func (it *sessionIter) Key() []byte    { return it.key }
func (it *sessionIter) Value() []byte  { return it.value }
func (it *sessionIter) Window() Window { return Window{Start: orderedInt64(it.rest), End: it.first} }

func (s *sessionStore) Flush() error { return nil }

func (s *sessionStore) Commit() error {
	if err := closedCheck(s.closed, s.name); err != nil {
		return err
	}
	// Whole segments that fell out of retention are deleted here, at the
	// end of the batch, not on the put that moved stream time: pebble's
	// indexed batch re-reads every range deletion it holds on each Get
	// (v2.1.7), so a deletion early in a batch slowed every read after it
	// (a quarter of the windowed benchmark's CPU). Reads already hide
	// expired windows by stream time, so nothing sees the difference.
	if err := s.seg.expire(s.eng, sessionPrefix); err != nil {
		return err
	}
	if err := s.seg.commit(s.eng); err != nil {
		return err
	}
	s.committedStreamTime.Store(s.seg.streamTime)
	return nil
}

func (s *sessionStore) Abort() error {
	if err := closedCheck(s.closed, s.name); err != nil {
		return err
	}
	return s.seg.abort(s.eng)
}

func (s *sessionStore) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	return s.eng.close()
}

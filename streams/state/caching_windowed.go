package state

import (
	"bytes"
	"fmt"
	"iter"
	"math"

	"github.com/RaduBerinde/btreemap"
)

// WindowedFlushListener receives each dirty window or session a caching
// window or session store flushes, as FlushListener does for key-value
// stores (Kafka's CacheFlushListener over Windowed keys).
type WindowedFlushListener func(key []byte, window Window, newValue, oldValue []byte, timestamp int64)

// windowedCaching is what caching window and session stores share: cache
// keys are the inner store's local keys (so the cache sorts as the store
// iterates), a stream time of its own (writes reach the store only when
// flushed; retention is applied to reads by the later of the two), and
// the merge of the cache with the store's iterators.
type windowedCaching struct {
	nc       *namedCache
	rc       *RecordContext
	prefix   byte
	interval int64
	retain   int64
	// localKey encodes a key and window as the inner store does.
	localKey func(key []byte, w Window) []byte
	// decode reads a local key back.
	decode func(local []byte) (key []byte, w Window, err error)
	// first is the timestamp the store's segments and ranges go by.
	first func(w Window) int64
	// baseStreamTime is the inner store's observed stream time.
	baseStreamTime func() int64

	streamTime, committedStreamTime int64
}

func (c *windowedCaching) observe(w Window) {
	c.streamTime = max(c.streamTime, c.first(w))
}

// actualFrom is the earliest first timestamp a read may return.
func (c *windowedCaching) actualFrom(from int64) int64 {
	return max(from, max(c.streamTime, c.baseStreamTime())-c.retain+1)
}

func (c *windowedCaching) put(key []byte, w Window, value []byte) error {
	if key == nil {
		return ErrNilKey
	}
	c.observe(w)
	return c.nc.put(c.localKey(key, w), value, true, c.rc.Timestamp)
}

// get returns the cached value of one window and whether it is cached.
func (c *windowedCaching) get(key []byte, w Window) ([]byte, bool) {
	e, ok := c.nc.get(c.localKey(key, w))
	if !ok {
		return nil, false
	}
	return cloneValue(e.value), true
}

// flushTo writes the dirty entries through write (the inner store's put,
// which returns the old value for the listener) with each entry's own
// timestamp as the record context; deletes of windows the store does not
// hold are neither written nor forwarded, as Kafka's.
func (c *windowedCaching) flushTo(entries []dirtyEntry, fetch func([]byte, Window) ([]byte, error),
	write func([]byte, Window, []byte) error, listener WindowedFlushListener) error {
	saved := c.rc.Timestamp
	defer func() { c.rc.Timestamp = saved }()
	for _, e := range entries {
		key, w, err := c.decode(e.key)
		if err != nil {
			return err
		}
		old, err := fetch(key, w)
		if err != nil {
			return err
		}
		if e.value == nil && old == nil {
			continue
		}
		c.rc.Timestamp = e.timestamp
		if err := write(key, w, e.value); err != nil {
			return err
		}
		if listener != nil {
			listener(key, w, e.value, old, e.timestamp)
		}
	}
	return nil
}

// cachedWindow is one cache entry in a windowed scan.
type cachedWindow struct {
	local, key, value []byte
	window            Window
}

// scan is the cache's side of a range read: the entries of the segments
// of [from, to] whose key and first timestamp are in range and pass filter.
func (c *windowedCaching) scan(keyFrom, keyTo []byte, from, to int64, filter func(Window) bool, reverse bool) iter.Seq[cachedWindow] {
	lower := btreemap.GE(segmentKey(c.prefix, segmentID(from, c.interval)))
	upper := btreemap.LT([]byte{c.prefix + 1})
	if hi := segmentID(to, c.interval); hi < math.MaxInt64 {
		upper = btreemap.LT(segmentKey(c.prefix, hi+1))
	}
	snap := c.nc.entries.Clone()
	entries := snap.Ascend(lower, upper)
	if reverse {
		entries = snap.Descend(upper, lower)
	}
	return func(yield func(cachedWindow) bool) {
		for local, e := range entries {
			key, w, err := c.decode(local)
			if err != nil {
				continue // not a key this store wrote
			}
			f := c.first(w)
			if (keyFrom != nil && bytes.Compare(key, keyFrom) < 0) || (keyTo != nil && bytes.Compare(key, keyTo) > 0) ||
				f < from || f > to || (filter != nil && !filter(w)) {
				continue
			}
			if !yield(cachedWindow{local: local, key: key, value: e.value, window: w}) {
				return
			}
		}
	}
}

func (c *windowedCaching) commit() { c.committedStreamTime = c.streamTime }

func (c *windowedCaching) abort() {
	c.nc.clear()
	c.streamTime = c.committedStreamTime
}

// mergedWindowedIter merges a store's windowed iterator with the cache's
// entries in the same order; on the same window the cache wins and a
// cached delete hides the store's value.
type mergedWindowedIter struct {
	inner    WindowedIterator
	localKey func([]byte, Window) []byte
	pull     func() (cachedWindow, bool)
	stop     func()
	reverse  bool

	started, innerOK, cacheOK bool
	cached                    cachedWindow
	k, v                      []byte
	w                         Window
}

func newMergedWindowedIter(inner WindowedIterator, cached iter.Seq[cachedWindow], localKey func([]byte, Window) []byte, reverse bool) *mergedWindowedIter {
	pull, stop := iter.Pull(cached)
	return &mergedWindowedIter{inner: inner, localKey: localKey, pull: pull, stop: stop, reverse: reverse}
}

func (m *mergedWindowedIter) Next() bool {
	if !m.started {
		m.started = true
		m.innerOK = m.inner.Next()
		m.cached, m.cacheOK = m.pull()
	}
	for m.innerOK || m.cacheOK {
		c := 0
		switch {
		case !m.cacheOK:
			c = -1
		case !m.innerOK:
			c = 1
		default:
			c = bytes.Compare(m.localKey(m.inner.Key(), m.inner.Window()), m.cached.local)
			if m.reverse {
				c = -c
			}
		}
		if c < 0 {
			m.k, m.w, m.v = m.inner.Key(), m.inner.Window(), m.inner.Value()
			m.innerOK = m.inner.Next()
			return true
		}
		if c == 0 {
			m.innerOK = m.inner.Next()
		}
		e := m.cached
		m.cached, m.cacheOK = m.pull()
		if e.value != nil {
			m.k, m.w, m.v = e.key, e.window, cloneValue(e.value)
			return true
		}
	}
	m.k, m.v = nil, nil
	return false
}

func (m *mergedWindowedIter) Key() []byte    { return m.k }
func (m *mergedWindowedIter) Window() Window { return m.w }
func (m *mergedWindowedIter) Value() []byte  { return m.v }
func (m *mergedWindowedIter) Err() error     { return m.inner.Err() }

func (m *mergedWindowedIter) Close() error {
	m.stop()
	return m.inner.Close()
}

// CachingWindowStore is Kafka's CachingWindowStore: window writes go to
// the Cache and reach the inner store (usually a logged one) when flushed.
// Stores that retain duplicates (joins) are not cached, as in Kafka.
type CachingWindowStore struct {
	WindowStore
	base     *windowStore
	c        windowedCaching
	listener WindowedFlushListener
}

// baseWindowStore finds the store of this package under a logging layer.
func baseWindowStore(s WindowStore) (*windowStore, bool) {
	switch s := s.(type) {
	case *windowStore:
		return s, true
	case *LoggedWindowStore:
		return s.inner, true
	}
	return nil, false
}

// NewCachingWindowStore caches inner in cache under namespace (unique in
// the cache). listener may be nil.
func NewCachingWindowStore(inner WindowStore, cache *Cache, namespace string, rc *RecordContext, listener WindowedFlushListener) (*CachingWindowStore, error) {
	base, ok := baseWindowStore(inner)
	if !ok {
		return nil, fmt.Errorf("state: %s: caching needs a window store of this package, not %T", inner.Name(), inner)
	}
	if base.opts.RetainDuplicates {
		return nil, fmt.Errorf("state: %s: a window store that retains duplicates cannot be cached", inner.Name())
	}
	s := &CachingWindowStore{WindowStore: inner, base: base, listener: listener}
	s.c = windowedCaching{
		rc: rc, prefix: windowPrefix, interval: base.seg.interval, retain: base.seg.retention,
		localKey:       func(key []byte, w Window) []byte { return base.windowKey(key, w.Start, 0) },
		decode:         s.decode,
		first:          func(w Window) int64 { return w.Start },
		baseStreamTime: func() int64 { return base.seg.streamTime },
		streamTime:     base.seg.streamTime, committedStreamTime: base.seg.streamTime,
	}
	nc, err := cache.namedCache(namespace, s.flush)
	if err != nil {
		return nil, err
	}
	s.c.nc = nc
	return s, nil
}

func (s *CachingWindowStore) decode(local []byte) ([]byte, Window, error) {
	if len(local) < 1+timestampBytes {
		return nil, Window{}, errBadLocalKey
	}
	key, rest, err := readEscaped(local[1+timestampBytes:])
	if err != nil || len(rest) != timestampBytes+seqnumBytes {
		return nil, Window{}, errBadLocalKey
	}
	start := orderedInt64(rest)
	return key, s.window(start), nil
}

func (s *CachingWindowStore) window(start int64) Window {
	return timeWindow(start, s.base.opts.WindowSize)
}

func (s *CachingWindowStore) flush(entries []dirtyEntry) error {
	return s.c.flushTo(entries,
		func(key []byte, w Window) ([]byte, error) { return s.WindowStore.Fetch(key, w.Start) },
		func(key []byte, w Window, v []byte) error { return s.WindowStore.Put(key, v, w.Start) },
		s.listener)
}

func (s *CachingWindowStore) Put(key, value []byte, windowStart int64) error {
	if err := s.c.put(key, s.window(windowStart), value); err != nil {
		return fmt.Errorf("state: %s: %w", s.Name(), err)
	}
	return nil
}

func (s *CachingWindowStore) Fetch(key []byte, windowStart int64) ([]byte, error) {
	if key == nil {
		return s.WindowStore.Fetch(key, windowStart) // the inner store's error
	}
	if windowStart < s.c.actualFrom(windowStart) {
		return nil, nil
	}
	if v, ok := s.c.get(key, s.window(windowStart)); ok {
		return v, nil
	}
	return s.WindowStore.Fetch(key, windowStart)
}

func (s *CachingWindowStore) merged(keyFrom, keyTo []byte, from, to int64, reverse bool) (WindowedIterator, error) {
	from = s.c.actualFrom(from)
	var inner WindowedIterator
	var err error
	switch {
	case keyFrom != nil && keyTo != nil && bytes.Equal(keyFrom, keyTo) && reverse:
		inner, err = s.WindowStore.BackwardFetchTimeRange(keyFrom, from, to)
	case keyFrom != nil && keyTo != nil && bytes.Equal(keyFrom, keyTo):
		inner, err = s.WindowStore.FetchTimeRange(keyFrom, from, to)
	case reverse:
		inner, err = s.WindowStore.BackwardFetchRange(keyFrom, keyTo, from, to)
	default:
		inner, err = s.WindowStore.FetchRange(keyFrom, keyTo, from, to)
	}
	if err != nil {
		return nil, err
	}
	if from > to || (keyFrom != nil && keyTo != nil && bytes.Compare(keyFrom, keyTo) > 0) {
		return inner, nil
	}
	return newMergedWindowedIter(inner, s.c.scan(keyFrom, keyTo, from, to, nil, reverse), s.c.localKey, reverse), nil
}

func (s *CachingWindowStore) FetchTimeRange(key []byte, from, to int64) (WindowedIterator, error) {
	if key == nil {
		return s.WindowStore.FetchTimeRange(key, from, to)
	}
	return s.merged(key, key, from, to, false)
}

func (s *CachingWindowStore) BackwardFetchTimeRange(key []byte, from, to int64) (WindowedIterator, error) {
	if key == nil {
		return s.WindowStore.BackwardFetchTimeRange(key, from, to)
	}
	return s.merged(key, key, from, to, true)
}

func (s *CachingWindowStore) FetchRange(keyFrom, keyTo []byte, from, to int64) (WindowedIterator, error) {
	return s.merged(keyFrom, keyTo, from, to, false)
}

func (s *CachingWindowStore) BackwardFetchRange(keyFrom, keyTo []byte, from, to int64) (WindowedIterator, error) {
	return s.merged(keyFrom, keyTo, from, to, true)
}

func (s *CachingWindowStore) FetchAll(from, to int64) (WindowedIterator, error) {
	return s.merged(nil, nil, from, to, false)
}

func (s *CachingWindowStore) BackwardFetchAll(from, to int64) (WindowedIterator, error) {
	return s.merged(nil, nil, from, to, true)
}

func (s *CachingWindowStore) All() (WindowedIterator, error) {
	return s.merged(nil, nil, math.MinInt64, math.MaxInt64, false)
}

func (s *CachingWindowStore) BackwardAll() (WindowedIterator, error) {
	return s.merged(nil, nil, math.MinInt64, math.MaxInt64, true)
}

// ObservedStreamTime includes the cached writes.
func (s *CachingWindowStore) ObservedStreamTime() int64 {
	return max(s.c.streamTime, s.WindowStore.ObservedStreamTime())
}

// Flush writes the dirty windows to the inner store and the listener.
func (s *CachingWindowStore) Flush() error {
	if err := s.c.nc.flushDirty(nil); err != nil {
		return err
	}
	return s.WindowStore.Flush()
}

func (s *CachingWindowStore) Commit() error {
	if err := s.Flush(); err != nil {
		return err
	}
	if err := s.WindowStore.Commit(); err != nil {
		return err
	}
	s.c.commit()
	return nil
}

func (s *CachingWindowStore) Abort() error {
	s.c.abort()
	return s.WindowStore.Abort()
}

func (s *CachingWindowStore) Close() error {
	s.c.nc.cache.release(s.c.nc)
	return s.WindowStore.Close()
}

// CachingSessionStore is Kafka's CachingSessionStore: session writes go to
// the Cache and reach the inner store (usually a logged one) when flushed.
type CachingSessionStore struct {
	SessionStore
	c        windowedCaching
	listener WindowedFlushListener
}

// baseSessionStore finds the store of this package under a logging layer.
func baseSessionStore(s SessionStore) (*sessionStore, bool) {
	switch s := s.(type) {
	case *sessionStore:
		return s, true
	case *LoggedSessionStore:
		return baseSessionStore(s.SessionStore)
	}
	return nil, false
}

// NewCachingSessionStore caches inner in cache under namespace (unique in
// the cache). listener may be nil.
func NewCachingSessionStore(inner SessionStore, cache *Cache, namespace string, rc *RecordContext, listener WindowedFlushListener) (*CachingSessionStore, error) {
	base, ok := baseSessionStore(inner)
	if !ok {
		return nil, fmt.Errorf("state: %s: caching needs a session store of this package, not %T", inner.Name(), inner)
	}
	s := &CachingSessionStore{SessionStore: inner, listener: listener}
	s.c = windowedCaching{
		rc: rc, prefix: sessionPrefix, interval: base.seg.interval, retain: base.seg.retention,
		localKey:       base.sessionKey,
		decode:         decodeSessionLocalKey,
		first:          func(w Window) int64 { return w.End },
		baseStreamTime: func() int64 { return base.seg.streamTime },
		streamTime:     base.seg.streamTime, committedStreamTime: base.seg.streamTime,
	}
	nc, err := cache.namedCache(namespace, s.flush)
	if err != nil {
		return nil, err
	}
	s.c.nc = nc
	return s, nil
}

func decodeSessionLocalKey(local []byte) ([]byte, Window, error) {
	if len(local) < 1+timestampBytes {
		return nil, Window{}, errBadLocalKey
	}
	key, rest, err := readEscaped(local[1+timestampBytes:])
	if err != nil || len(rest) != 2*timestampBytes {
		return nil, Window{}, errBadLocalKey
	}
	return key, Window{Start: orderedInt64(rest[timestampBytes:]), End: orderedInt64(rest)}, nil
}

func (s *CachingSessionStore) flush(entries []dirtyEntry) error {
	return s.c.flushTo(entries,
		func(key []byte, w Window) ([]byte, error) { return s.SessionStore.FetchSession(key, w.Start, w.End) },
		func(key []byte, w Window, v []byte) error { return s.SessionStore.Put(key, w, v) },
		s.listener)
}

func (s *CachingSessionStore) Put(key []byte, w Window, value []byte) error {
	if w.End < w.Start {
		return fmt.Errorf("state: %s: session end %d before its start %d", s.Name(), w.End, w.Start)
	}
	if err := s.c.put(key, w, value); err != nil {
		return fmt.Errorf("state: %s: %w", s.Name(), err)
	}
	return nil
}

func (s *CachingSessionStore) Remove(key []byte, w Window) error { return s.Put(key, w, nil) }

func (s *CachingSessionStore) FetchSession(key []byte, start, end int64) ([]byte, error) {
	if key == nil {
		return s.SessionStore.FetchSession(key, start, end)
	}
	if end < s.c.actualFrom(end) {
		return nil, nil
	}
	if v, ok := s.c.get(key, Window{Start: start, End: end}); ok {
		return v, nil
	}
	return s.SessionStore.FetchSession(key, start, end)
}

func (s *CachingSessionStore) merged(keyFrom, keyTo []byte, earliestEnd, latestStart int64, reverse bool) (WindowedIterator, error) {
	from := s.c.actualFrom(earliestEnd)
	var inner WindowedIterator
	var err error
	switch {
	case keyFrom != nil && keyTo != nil && bytes.Equal(keyFrom, keyTo) && reverse:
		inner, err = s.SessionStore.BackwardFindSessions(keyFrom, from, latestStart)
	case keyFrom != nil && keyTo != nil && bytes.Equal(keyFrom, keyTo):
		inner, err = s.SessionStore.FindSessions(keyFrom, from, latestStart)
	case reverse:
		inner, err = s.SessionStore.BackwardFindSessionsRange(keyFrom, keyTo, from, latestStart)
	default:
		inner, err = s.SessionStore.FindSessionsRange(keyFrom, keyTo, from, latestStart)
	}
	if err != nil {
		return nil, err
	}
	if keyFrom != nil && keyTo != nil && bytes.Compare(keyFrom, keyTo) > 0 {
		return inner, nil
	}
	cached := s.c.scan(keyFrom, keyTo, from, math.MaxInt64, func(w Window) bool { return w.Start <= latestStart }, reverse)
	return newMergedWindowedIter(inner, cached, s.c.localKey, reverse), nil
}

func (s *CachingSessionStore) FindSessions(key []byte, earliestEnd, latestStart int64) (WindowedIterator, error) {
	if key == nil {
		return s.SessionStore.FindSessions(key, earliestEnd, latestStart)
	}
	return s.merged(key, key, earliestEnd, latestStart, false)
}

func (s *CachingSessionStore) BackwardFindSessions(key []byte, earliestEnd, latestStart int64) (WindowedIterator, error) {
	if key == nil {
		return s.SessionStore.BackwardFindSessions(key, earliestEnd, latestStart)
	}
	return s.merged(key, key, earliestEnd, latestStart, true)
}

func (s *CachingSessionStore) FindSessionsRange(keyFrom, keyTo []byte, earliestEnd, latestStart int64) (WindowedIterator, error) {
	return s.merged(keyFrom, keyTo, earliestEnd, latestStart, false)
}

func (s *CachingSessionStore) BackwardFindSessionsRange(keyFrom, keyTo []byte, earliestEnd, latestStart int64) (WindowedIterator, error) {
	return s.merged(keyFrom, keyTo, earliestEnd, latestStart, true)
}

func (s *CachingSessionStore) Fetch(key []byte) (WindowedIterator, error) {
	return s.FindSessions(key, 0, math.MaxInt64)
}

func (s *CachingSessionStore) BackwardFetch(key []byte) (WindowedIterator, error) {
	return s.BackwardFindSessions(key, 0, math.MaxInt64)
}

func (s *CachingSessionStore) FetchRange(keyFrom, keyTo []byte) (WindowedIterator, error) {
	return s.FindSessionsRange(keyFrom, keyTo, 0, math.MaxInt64)
}

func (s *CachingSessionStore) BackwardFetchRange(keyFrom, keyTo []byte) (WindowedIterator, error) {
	return s.BackwardFindSessionsRange(keyFrom, keyTo, 0, math.MaxInt64)
}

// ObservedStreamTime includes the cached writes.
func (s *CachingSessionStore) ObservedStreamTime() int64 {
	return max(s.c.streamTime, s.SessionStore.ObservedStreamTime())
}

// Flush writes the dirty sessions to the inner store and the listener.
func (s *CachingSessionStore) Flush() error {
	if err := s.c.nc.flushDirty(nil); err != nil {
		return err
	}
	return s.SessionStore.Flush()
}

func (s *CachingSessionStore) Commit() error {
	if err := s.Flush(); err != nil {
		return err
	}
	if err := s.SessionStore.Commit(); err != nil {
		return err
	}
	s.c.commit()
	return nil
}

func (s *CachingSessionStore) Abort() error {
	s.c.abort()
	return s.SessionStore.Abort()
}

func (s *CachingSessionStore) Close() error {
	s.c.nc.cache.release(s.c.nc)
	return s.SessionStore.Close()
}

package state

import (
	"bytes"
	"iter"

	"github.com/RaduBerinde/btreemap"
)

// FlushListener receives each dirty key a caching store flushes: the new
// value (nil: deleted), the value the store held before (nil: none) and the
// timestamp of the write. The DSL forwards downstream from it, which is how
// a KTable's updates are deduplicated by the cache, as Kafka's
// CacheFlushListener.
type FlushListener func(key, newValue, oldValue []byte, timestamp int64)

// CachingKeyValueStore is Kafka's CachingKeyValueStore: writes go to the
// Cache and reach the inner store (usually a logged one) only when flushed;
// reads see the cache first, ranges merge the cache with the store.
//
// Flush before the producer is flushed or the transaction committed (the
// inner store's changelog records must be in it); Commit flushes too, then
// commits the inner store.
type CachingKeyValueStore struct {
	KeyValueStore
	nc       *namedCache
	rc       *RecordContext
	listener FlushListener
}

// NewCachingKeyValueStore caches inner in cache under namespace (unique in
// the cache: Kafka uses the task and store names). listener may be nil.
func NewCachingKeyValueStore(inner KeyValueStore, cache *Cache, namespace string, rc *RecordContext, listener FlushListener) (*CachingKeyValueStore, error) {
	s := &CachingKeyValueStore{KeyValueStore: inner, rc: rc, listener: listener}
	nc, err := cache.namedCache(namespace, s.write)
	if err != nil {
		return nil, err
	}
	s.nc = nc
	return s, nil
}

// write puts flushed entries into the inner store with each entry's own
// timestamp as the record context, then tells the listener. A delete of a
// key the store never had is neither written nor forwarded, as in Kafka.
func (s *CachingKeyValueStore) write(entries []dirtyEntry) error {
	saved := s.rc.Timestamp
	defer func() { s.rc.Timestamp = saved }()
	for _, e := range entries {
		old, err := s.KeyValueStore.Get(e.key)
		if err != nil {
			return err
		}
		if e.value == nil && old == nil {
			continue
		}
		s.rc.Timestamp = e.timestamp
		if err := s.KeyValueStore.Put(e.key, e.value); err != nil {
			return err
		}
		if s.listener != nil {
			s.listener(e.key, e.value, old, e.timestamp)
		}
	}
	return nil
}

func (s *CachingKeyValueStore) Get(key []byte) ([]byte, error) {
	if key == nil {
		return s.KeyValueStore.Get(key) // the inner store's error
	}
	if e, ok := s.nc.get(key); ok {
		return cloneValue(e.value), nil
	}
	v, err := s.KeyValueStore.Get(key)
	if err != nil || v == nil {
		return v, err
	}
	return v, s.nc.put(key, v, false, 0)
}

func (s *CachingKeyValueStore) Put(key, value []byte) error {
	if key == nil {
		return s.KeyValueStore.Put(key, value)
	}
	return s.nc.put(key, value, true, s.rc.Timestamp)
}

func (s *CachingKeyValueStore) PutIfAbsent(key, value []byte) ([]byte, error) {
	old, err := s.Get(key)
	if err != nil || old != nil {
		return old, err
	}
	return nil, s.Put(key, value)
}

func (s *CachingKeyValueStore) PutAll(entries []KeyValue) error {
	for _, e := range entries {
		if err := s.Put(e.Key, e.Value); err != nil {
			return err
		}
	}
	return nil
}

func (s *CachingKeyValueStore) Delete(key []byte) ([]byte, error) {
	old, err := s.Get(key)
	if err != nil {
		return nil, err
	}
	return old, s.Put(key, nil)
}

func (s *CachingKeyValueStore) Range(from, to []byte) (KeyValueIterator, error) {
	inner, err := s.KeyValueStore.Range(from, to)
	return s.merge(inner, err, from, to, false)
}

func (s *CachingKeyValueStore) ReverseRange(from, to []byte) (KeyValueIterator, error) {
	inner, err := s.KeyValueStore.ReverseRange(from, to)
	return s.merge(inner, err, from, to, true)
}

func (s *CachingKeyValueStore) All() (KeyValueIterator, error) { return s.Range(nil, nil) }

func (s *CachingKeyValueStore) ReverseAll() (KeyValueIterator, error) {
	return s.ReverseRange(nil, nil)
}

func (s *CachingKeyValueStore) PrefixScan(prefix []byte) (KeyValueIterator, error) {
	inner, err := s.KeyValueStore.PrefixScan(prefix)
	if err != nil {
		return nil, err
	}
	upper := btreemap.Max[[]byte]()
	if succ := prefixSuccessor(prefix); succ != nil {
		upper = btreemap.LT(succ)
	}
	cached := s.nc.entries.Clone().Ascend(btreemap.GE(prefix), upper)
	return newMergedIter(inner, cached, false), nil
}

func (s *CachingKeyValueStore) merge(inner KeyValueIterator, err error, from, to []byte, reverse bool) (KeyValueIterator, error) {
	if err != nil {
		return nil, err
	}
	if from != nil && to != nil && bytes.Compare(from, to) > 0 {
		return inner, nil // empty
	}
	lower, upper := btreemap.Min[[]byte](), btreemap.Max[[]byte]()
	if from != nil {
		lower = btreemap.GE(from)
	}
	if to != nil {
		upper = btreemap.LE(to)
	}
	snap := s.nc.entries.Clone()
	cached := snap.Ascend(lower, upper)
	if reverse {
		cached = snap.Descend(upper, lower)
	}
	return newMergedIter(inner, cached, reverse), nil
}

// Flush writes the dirty entries to the inner store and the listener.
func (s *CachingKeyValueStore) Flush() error {
	if err := s.nc.flushDirty(nil); err != nil {
		return err
	}
	return s.KeyValueStore.Flush()
}

// Commit flushes, then commits the inner store.
func (s *CachingKeyValueStore) Commit() error {
	if err := s.Flush(); err != nil {
		return err
	}
	return s.KeyValueStore.Commit()
}

// Abort drops the cache (its clean entries may hold aborted reads too).
func (s *CachingKeyValueStore) Abort() error {
	s.nc.clear()
	return s.KeyValueStore.Abort()
}

// Close drops what was not committed, as the inner store does.
func (s *CachingKeyValueStore) Close() error {
	s.nc.cache.release(s.nc)
	return s.KeyValueStore.Close()
}

// mergedIter merges the store's iterator with a snapshot of the cache: on
// the same key the cache wins, and a cached delete hides the store's value.
type mergedIter struct {
	inner   KeyValueIterator
	pull    func() ([]byte, *cacheEntry, bool)
	stop    func()
	reverse bool

	innerOK, cacheOK bool
	cacheKey         []byte
	cacheEntry       *cacheEntry
	started          bool
	k, v             []byte
}

func newMergedIter(inner KeyValueIterator, cached iter.Seq2[[]byte, *cacheEntry], reverse bool) *mergedIter {
	pull, stop := iter.Pull2(cached)
	return &mergedIter{inner: inner, pull: pull, stop: stop, reverse: reverse}
}

func (m *mergedIter) advanceCache() { m.cacheKey, m.cacheEntry, m.cacheOK = m.pull() }

func (m *mergedIter) Next() bool {
	if !m.started {
		m.started = true
		m.innerOK = m.inner.Next()
		m.advanceCache()
	}
	for m.innerOK || m.cacheOK {
		c := 0 // <0: the store's key comes first, >0: the cache's, 0: same key
		switch {
		case !m.cacheOK:
			c = -1
		case !m.innerOK:
			c = 1
		default:
			c = bytes.Compare(m.inner.Key(), m.cacheKey)
			if m.reverse {
				c = -c
			}
		}
		if c < 0 {
			m.k, m.v = m.inner.Key(), m.inner.Value()
			m.innerOK = m.inner.Next()
			return true
		}
		if c == 0 {
			m.innerOK = m.inner.Next()
		}
		e := m.cacheEntry
		m.advanceCache()
		if e.value != nil {
			m.k, m.v = bytes.Clone(e.key), cloneValue(e.value)
			return true
		}
	}
	m.k, m.v = nil, nil
	return false
}

func (m *mergedIter) Key() []byte   { return m.k }
func (m *mergedIter) Value() []byte { return m.v }
func (m *mergedIter) Err() error    { return m.inner.Err() }

func (m *mergedIter) Close() error {
	m.stop()
	return m.inner.Close()
}

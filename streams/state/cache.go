package state

import (
	"bytes"
	"container/list"
	"fmt"

	"github.com/RaduBerinde/btreemap"
)

// Cache is Kafka Streams' ThreadCache: one byte budget
// (statestore.cache.max.bytes, divided among stream threads as Kafka does)
// shared by the caching stores of a stream thread, each with a named cache
// of its own. Writes stay in the cache as dirty entries, one per key (a
// later write to a key replaces the earlier one: that is the
// deduplication), until the store's Flush, or until the cache is over its
// budget and the least recently used entry of the store being written is
// evicted: evicting a dirty entry flushes all of that store's dirty entries,
// the evicted one first, then the others in the order they were last
// written, as Kafka's NamedCache. A budget of 0 caches nothing: every write
// is flushed at once.
//
// A Cache belongs to one goroutine (a stream thread), as Kafka's.
type Cache struct {
	maxBytes int64
	size     int64
	named    map[string]*namedCache
	// Stats, for the runtime's metrics.
	Hits, Misses, Evictions, Flushes int64
}

// NewCache returns a cache of maxBytes.
func NewCache(maxBytes int64) (*Cache, error) {
	if maxBytes < 0 {
		return nil, fmt.Errorf("state: cache size %d must not be negative", maxBytes)
	}
	return &Cache{maxBytes: maxBytes, named: map[string]*namedCache{}}, nil
}

// SizeBytes is what the cache holds now.
func (c *Cache) SizeBytes() int64 { return c.size }

// cacheEntryOverhead is counted per entry besides its key and value, as
// Kafka counts its entries' fixed fields (timestamp, offset, partition,
// pointers): the budget is of memory, not only of payload.
const cacheEntryOverhead = 64

// cacheEntry is one key's entry: value nil is a cached delete (dirty) or,
// never for clean entries, absence.
type cacheEntry struct {
	key        []byte
	value      []byte
	dirty      bool
	timestamp  int64
	prev, next *cacheEntry // LRU: head is the most recently used
}

func (e *cacheEntry) size() int64 { return int64(len(e.key)+len(e.value)) + cacheEntryOverhead }

// dirtyEntry is what a flush hands to its store.
type dirtyEntry struct {
	key, value []byte
	timestamp  int64
}

// namedCache is one store's part of the Cache (Kafka's NamedCache).
type namedCache struct {
	name       string
	cache      *Cache
	entries    *btreemap.BTreeMap[[]byte, *cacheEntry] // sorted, for ranges
	head, tail *cacheEntry
	dirty      *list.List // of []byte keys, in the order last written
	dirtyAt    map[string]*list.Element
	size       int64
	flush      func([]dirtyEntry) error
}

func (c *Cache) namedCache(name string, flush func([]dirtyEntry) error) (*namedCache, error) {
	if _, ok := c.named[name]; ok {
		return nil, fmt.Errorf("state: cache %q is already in use", name)
	}
	nc := &namedCache{
		name: name, cache: c, flush: flush,
		entries: btreemap.New[[]byte, *cacheEntry](memoryDegree, bytes.Compare),
		dirty:   list.New(), dirtyAt: map[string]*list.Element{},
	}
	c.named[name] = nc
	return nc, nil
}

func (c *Cache) release(nc *namedCache) {
	nc.clear()
	delete(c.named, nc.name)
}

func (nc *namedCache) get(key []byte) (*cacheEntry, bool) {
	_, e, ok := nc.entries.Get(key)
	if !ok {
		nc.cache.Misses++
		return nil, false
	}
	nc.cache.Hits++
	nc.unlink(e)
	nc.pushHead(e)
	return e, true
}

// put caches a value (dirty: a write; clean: a read from the store), then
// evicts while the whole cache is over budget.
func (nc *namedCache) put(key, value []byte, dirty bool, timestamp int64) error {
	if _, e, ok := nc.entries.Get(key); ok {
		nc.resize(-e.size())
		e.value, e.timestamp = cloneValue(value), timestamp
		e.dirty = e.dirty || dirty
		nc.resize(e.size())
		nc.unlink(e)
		nc.pushHead(e)
	} else {
		e := &cacheEntry{key: bytes.Clone(key), value: cloneValue(value), dirty: dirty, timestamp: timestamp}
		nc.entries.ReplaceOrInsert(e.key, e)
		nc.resize(e.size())
		nc.pushHead(e)
	}
	if dirty {
		if el, ok := nc.dirtyAt[string(key)]; ok {
			nc.dirty.MoveToBack(el)
		} else {
			nc.dirtyAt[string(key)] = nc.dirty.PushBack(bytes.Clone(key))
		}
	}
	return nc.maybeEvict()
}

// maybeEvict evicts from this store's cache only, as Kafka's: a put here
// may have been caused by a flush of another store, which is then busy.
func (nc *namedCache) maybeEvict() error {
	for nc.cache.size > nc.cache.maxBytes && nc.tail != nil {
		if err := nc.evict(); err != nil {
			return err
		}
	}
	return nil
}

func (nc *namedCache) evict() error {
	e := nc.tail
	nc.unlink(e)
	nc.entries.Delete(e.key)
	nc.resize(-e.size())
	nc.cache.Evictions++
	if !e.dirty {
		return nil
	}
	return nc.flushDirty(e)
}

// flushDirty hands the dirty entries to the store: evicted (already out of
// the cache) first, then the others in write order. They are marked clean
// before the store sees them, since writing them may re-enter the cache;
// flushed deletes leave the cache afterwards.
func (nc *namedCache) flushDirty(evicted *cacheEntry) error {
	if nc.dirty.Len() == 0 {
		return nil
	}
	nc.cache.Flushes++
	entries := make([]dirtyEntry, 0, nc.dirty.Len())
	if evicted != nil {
		entries = append(entries, dirtyEntry{key: evicted.key, value: evicted.value, timestamp: evicted.timestamp})
		if el, ok := nc.dirtyAt[string(evicted.key)]; ok {
			nc.dirty.Remove(el)
			delete(nc.dirtyAt, string(evicted.key))
		}
	}
	var deleted [][]byte
	for el := nc.dirty.Front(); el != nil; el = el.Next() {
		_, e, _ := nc.entries.Get(el.Value.([]byte))
		entries = append(entries, dirtyEntry{key: e.key, value: e.value, timestamp: e.timestamp})
		e.dirty = false
		if e.value == nil {
			deleted = append(deleted, e.key)
		}
	}
	nc.dirty.Init()
	clear(nc.dirtyAt)
	err := nc.flush(entries)
	for _, k := range deleted {
		if _, e, ok := nc.entries.Get(k); ok && !e.dirty {
			nc.remove(e)
		}
	}
	return err
}

func (nc *namedCache) remove(e *cacheEntry) {
	nc.unlink(e)
	nc.entries.Delete(e.key)
	nc.resize(-e.size())
}

// clear drops every entry, dirty or not (an abort, a close).
func (nc *namedCache) clear() {
	nc.cache.size -= nc.size
	nc.size = 0
	nc.entries.Clear(false)
	nc.head, nc.tail = nil, nil
	nc.dirty.Init()
	clear(nc.dirtyAt)
}

func (nc *namedCache) resize(delta int64) {
	nc.size += delta
	nc.cache.size += delta
}

func (nc *namedCache) pushHead(e *cacheEntry) {
	e.prev, e.next = nil, nc.head
	if nc.head != nil {
		nc.head.prev = e
	}
	nc.head = e
	if nc.tail == nil {
		nc.tail = e
	}
}

func (nc *namedCache) unlink(e *cacheEntry) {
	if e.prev != nil {
		e.prev.next = e.next
	} else {
		nc.head = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	} else {
		nc.tail = e.prev
	}
	e.prev, e.next = nil, nil
}

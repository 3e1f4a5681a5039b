package state

import (
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// TestCachingKeyValueStoreModel: through a cache of any size, reads,
// commits and aborts behave as the store's specification.
func TestCachingKeyValueStoreModel(t *testing.T) {
	for name, open := range kvVariants(t) {
		t.Run(name, func(t *testing.T) {
			rapid.Check(t, func(rt *rapid.T) {
				cache, err := NewCache(rapid.Int64Range(0, 400).Draw(rt, "cache bytes"))
				must(rt, err)
				s, err := NewCachingKeyValueStore(open(), cache, "0_0-kv", &RecordContext{}, nil)
				must(rt, err)
				checkKeyValueModel(rt, s)
				if cache.SizeBytes() != 0 {
					rt.Fatalf("cache holds %d bytes after its only store closed", cache.SizeBytes())
				}
			})
		})
	}
}

// flushRecord is one call of a FlushListener.
func flushRecord(key, newValue, oldValue []byte, ts int64) string {
	return fmt.Sprintf("%s:%s<-%s@%d", key, show(newValue), show(oldValue), ts)
}

func show(v []byte) string {
	if v == nil {
		return "null"
	}
	return string(v)
}

// cachedStore is a caching store over a logged memory store, recording the
// listener's calls and the changelog.
type cachedStore struct {
	*CachingKeyValueStore
	rc        *RecordContext
	flushed   []string
	changelog []string
}

func newCachedStore(t *testing.T, maxBytes int64) *cachedStore {
	cache, err := NewCache(maxBytes)
	must(t, err)
	c := &cachedStore{rc: &RecordContext{}}
	logged := LogKeyValueStore(NewInMemoryKeyValueStore("kv"), c.rc, func(k, v []byte, ts int64) {
		c.changelog = append(c.changelog, fmt.Sprintf("%s=%s@%d", k, show(v), ts))
	})
	c.CachingKeyValueStore, err = NewCachingKeyValueStore(logged, cache, "0_0-kv", c.rc, func(k, nv, ov []byte, ts int64) {
		c.flushed = append(c.flushed, flushRecord(k, nv, ov, ts))
	})
	must(t, err)
	return c
}

func (c *cachedStore) put(t *testing.T, key, value string, ts int64) {
	t.Helper()
	c.rc.Timestamp = ts
	var v []byte
	if value != "null" {
		v = []byte(value)
	}
	must(t, c.Put([]byte(key), v))
}

func (c *cachedStore) expect(t *testing.T, what string, flushed, changelog []string) {
	t.Helper()
	if !slices.Equal(c.flushed, flushed) || !slices.Equal(c.changelog, changelog) {
		t.Fatalf("%s:\nflushed   %q\nwant      %q\nchangelog %q\nwant      %q", what, c.flushed, flushed, c.changelog, changelog)
	}
	c.flushed, c.changelog = nil, nil
}

// TestCacheEvictionAndFlushOrder follows Kafka's NamedCache: room for three
// entries of 1-byte keys and values (66 bytes each); evicting a dirty entry
// flushes it first, then every other dirty entry in last-written order;
// a flushed entry keeps its own timestamp in the changelog.
func TestCacheEvictionAndFlushOrder(t *testing.T) {
	c := newCachedStore(t, 3*(2+cacheEntryOverhead))
	c.put(t, "a", "1", 10)
	c.put(t, "b", "1", 11)
	c.put(t, "c", "1", 12)
	c.put(t, "b", "2", 13) // dedup: b moves behind c in the dirty order
	c.expect(t, "within budget", nil, nil)

	c.put(t, "d", "1", 14) // over budget: a is least recently used
	c.expect(t, "evicting dirty a",
		[]string{"a:1<-null@10", "c:1<-null@12", "b:2<-null@13", "d:1<-null@14"},
		[]string{"a=1@10", "c=1@12", "b=2@13", "d=1@14"})
	if c.rc.Timestamp != 14 {
		t.Fatalf("record context %d after the flush; want 14 restored", c.rc.Timestamp)
	}

	if v, _ := c.Get([]byte("c")); string(v) != "1" { // c becomes most recent
		t.Fatalf("Get(c) = %q", v)
	}
	c.put(t, "e", "1", 15) // evicts clean b: nothing flushed
	c.expect(t, "evicting clean b", nil, nil)

	c.put(t, "c", "2", 16)
	c.put(t, "e", "2", 17)
	c.put(t, "d", "null", 18)
	must(t, c.Commit())
	c.expect(t, "commit",
		[]string{"c:2<-1@16", "e:2<-null@17", "d:null<-1@18"},
		[]string{"c=2@16", "e=2@17", "d=null@18"})
}

// TestCacheSizeZeroPassesWritesThrough: no caching, each write flushed at
// once (Kafka's statestore.cache.max.bytes=0).
func TestCacheSizeZeroPassesWritesThrough(t *testing.T) {
	c := newCachedStore(t, 0)
	c.put(t, "a", "1", 1)
	c.expect(t, "first put", []string{"a:1<-null@1"}, []string{"a=1@1"})
	c.put(t, "a", "2", 2)
	c.expect(t, "second put", []string{"a:2<-1@2"}, []string{"a=2@2"})
}

// TestCacheSkipsDeletesOfAbsentKeys: a key put and deleted between flushes
// that the store never held is neither written nor forwarded, as Kafka's.
func TestCacheSkipsDeletesOfAbsentKeys(t *testing.T) {
	c := newCachedStore(t, 1<<20)
	c.put(t, "a", "1", 1)
	if _, err := c.Delete([]byte("a")); err != nil {
		t.Fatal(err)
	}
	must(t, c.Commit())
	c.expect(t, "commit", nil, nil)
}

// TestCacheAbortDiscardsDirtyEntries: an aborted transaction's writes never
// reach the store, the changelog or the listener.
func TestCacheAbortDiscardsDirtyEntries(t *testing.T) {
	c := newCachedStore(t, 1<<20)
	c.put(t, "a", "1", 1)
	must(t, c.Commit())
	c.expect(t, "first commit", []string{"a:1<-null@1"}, []string{"a=1@1"})
	c.put(t, "a", "2", 2)
	c.put(t, "b", "1", 2)
	must(t, c.Abort())
	if v, _ := c.Get([]byte("a")); string(v) != "1" {
		t.Fatalf("Get(a) after abort = %q; want 1", v)
	}
	must(t, c.Commit())
	c.expect(t, "commit after abort", nil, nil)
}

func TestCacheRefusesNamespaceTwice(t *testing.T) {
	cache, err := NewCache(100)
	must(t, err)
	_, err = NewCachingKeyValueStore(NewInMemoryKeyValueStore("kv"), cache, "0_0-kv", &RecordContext{}, nil)
	must(t, err)
	if _, err := NewCachingKeyValueStore(NewInMemoryKeyValueStore("kv"), cache, "0_0-kv", &RecordContext{}, nil); err == nil {
		t.Fatal("second store on one named cache accepted")
	}
	if _, err := NewCache(-1); err == nil {
		t.Fatal("negative cache size accepted")
	}
}

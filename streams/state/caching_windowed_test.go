package state

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"
)

// TestCachingWindowStoreModel: through a cache of any size, a window store
// reads as its specification says (the same model as uncached).
func TestCachingWindowStoreModel(t *testing.T) {
	for name, open := range windowVariants(t, testWindowOptions) {
		t.Run(name, func(t *testing.T) {
			rapid.Check(t, func(rt *rapid.T) {
				cache, err := NewCache(rapid.Int64Range(0, 400).Draw(rt, "cache bytes"))
				must(rt, err)
				s, err := NewCachingWindowStore(open(), cache, "0_0-w", &RecordContext{}, nil)
				must(rt, err)
				checkWindowModel(rt, s, testWindowOptions)
				if cache.SizeBytes() != 0 {
					rt.Fatalf("cache holds %d bytes after its only store closed", cache.SizeBytes())
				}
			})
		})
	}
}

func TestCachingSessionStoreModel(t *testing.T) {
	for name, open := range sessionVariants(t, testSessionOptions) {
		t.Run(name, func(t *testing.T) {
			rapid.Check(t, func(rt *rapid.T) {
				cache, err := NewCache(rapid.Int64Range(0, 400).Draw(rt, "cache bytes"))
				must(rt, err)
				s, err := NewCachingSessionStore(open(), cache, "0_0-s", &RecordContext{}, nil)
				must(rt, err)
				checkSessionModel(rt, s, testSessionOptions)
			})
		})
	}
}

// TestCachingWindowStoreFlush: a windowed aggregation's updates to one
// window are deduplicated until the flush, which forwards the last value,
// the old one and the last write's timestamp, and logs it with that
// timestamp.
func TestCachingWindowStoreFlush(t *testing.T) {
	rc := &RecordContext{}
	var flushed, changelog []string
	inner, err := NewInMemoryWindowStore("w", WindowOptions{RetentionPeriod: 100, WindowSize: 10})
	must(t, err)
	logged, err := LogWindowStore(inner, rc, func(k, v []byte, ts int64) {
		changelog = append(changelog, fmt.Sprintf("%x=%s@%d", k, show(v), ts))
	})
	must(t, err)
	cache, err := NewCache(1 << 20)
	must(t, err)
	s, err := NewCachingWindowStore(logged, cache, "0_0-w", rc, func(k []byte, w Window, nv, ov []byte, ts int64) {
		flushed = append(flushed, fmt.Sprintf("%s[%d,%d):%s<-%s@%d", k, w.Start, w.End, show(nv), show(ov), ts))
	})
	must(t, err)
	put := func(v string, start, ts int64) {
		rc.Timestamp = ts
		must(t, s.Put([]byte("k"), []byte(v), start))
	}
	put("1", 0, 3)
	put("2", 0, 5)
	put("1", 10, 12)
	if v, err := s.Fetch([]byte("k"), 0); err != nil || string(v) != "2" {
		t.Fatalf("Fetch before the flush = %q, %v; want 2", v, err)
	}
	must(t, s.Commit())
	put("3", 0, 7)
	must(t, s.Commit())
	want := []string{"k[0,10):2<-null@5", "k[10,20):1<-null@12", "k[0,10):3<-2@7"}
	if fmt.Sprint(flushed) != fmt.Sprint(want) {
		t.Fatalf("flushed %q; want %q", flushed, want)
	}
	wantLog := []string{"6b000000000000000000000000=2@5", "6b000000000000000a00000000=1@12", "6b000000000000000000000000=3@7"}
	if fmt.Sprint(changelog) != fmt.Sprint(wantLog) {
		t.Fatalf("changelog %q; want %q", changelog, wantLog)
	}
}

func TestCachingWindowStoreRefusesDuplicates(t *testing.T) {
	inner, err := NewInMemoryWindowStore("w", WindowOptions{RetentionPeriod: 100, WindowSize: 10, RetainDuplicates: true})
	must(t, err)
	cache, err := NewCache(100)
	must(t, err)
	if _, err := NewCachingWindowStore(inner, cache, "0_0-w", &RecordContext{}, nil); err == nil {
		t.Fatal("a store retaining duplicates was cached")
	}
}

// TestCachingSessionStoreFlush: a session merged into a larger one is a
// delete of the old session and a put of the new; both reach the listener.
func TestCachingSessionStoreFlush(t *testing.T) {
	rc := &RecordContext{}
	var flushed []string
	inner, err := NewInMemorySessionStore("s", SessionOptions{RetentionPeriod: 100})
	must(t, err)
	cache, err := NewCache(1 << 20)
	must(t, err)
	s, err := NewCachingSessionStore(inner, cache, "0_0-s", rc, func(k []byte, w Window, nv, ov []byte, ts int64) {
		flushed = append(flushed, fmt.Sprintf("%s[%d,%d]:%s<-%s@%d", k, w.Start, w.End, show(nv), show(ov), ts))
	})
	must(t, err)
	rc.Timestamp = 5
	must(t, s.Put([]byte("k"), Window{Start: 5, End: 5}, []byte("1")))
	must(t, s.Commit())
	rc.Timestamp = 8
	must(t, s.Remove([]byte("k"), Window{Start: 5, End: 5}))
	must(t, s.Put([]byte("k"), Window{Start: 5, End: 8}, []byte("2")))
	it, err := s.FindSessions([]byte("k"), 5, 8)
	got := collectSessions(t, it, err)
	if len(got) != 1 || got[0].window != (Window{Start: 5, End: 8}) {
		t.Fatalf("FindSessions before the flush: %v", got)
	}
	must(t, s.Commit())
	want := []string{"k[5,5]:1<-null@5", "k[5,5]:null<-1@8", "k[5,8]:2<-null@8"}
	if fmt.Sprint(flushed) != fmt.Sprint(want) {
		t.Fatalf("flushed %q; want %q", flushed, want)
	}
}

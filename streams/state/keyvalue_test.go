package state

import (
	"bytes"
	"fmt"
	"slices"
	"sort"
	"testing"

	"pgregory.net/rapid"
)

// kvVariants opens the same store kind on each engine, so every test below
// runs against both.
func kvVariants(t testing.TB) map[string]func() KeyValueStore {
	return map[string]func() KeyValueStore{
		"memory": func() KeyValueStore { return NewInMemoryKeyValueStore("kv") },
		"pebble": func() KeyValueStore {
			s, err := OpenPebbleKeyValueStore("kv", t.TempDir(), PebbleOptions{})
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
	}
}

// fataler is what testing.TB and rapid.T share.
type fataler interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

func collect(t fataler, it KeyValueIterator, err error) []KeyValue {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var out []KeyValue
	for it.Next() {
		out = append(out, KeyValue{Key: it.Key(), Value: it.Value()})
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// kvModel is the specification: a map, sorted on read.
type kvModel map[string][]byte

func (m kvModel) rangeOf(from, to []byte, reverse bool) []KeyValue {
	var out []KeyValue
	if from != nil && to != nil && bytes.Compare(from, to) > 0 {
		return nil
	}
	for k, v := range m {
		kb := []byte(k)
		if (from == nil || bytes.Compare(kb, from) >= 0) && (to == nil || bytes.Compare(kb, to) <= 0) {
			out = append(out, KeyValue{Key: kb, Value: v})
		}
	}
	sort.Slice(out, func(i, j int) bool { return bytes.Compare(out[i].Key, out[j].Key) < 0 })
	if reverse {
		slices.Reverse(out)
	}
	return out
}

func (m kvModel) prefix(p []byte) []KeyValue {
	var out []KeyValue
	for _, kv := range m.rangeOf(nil, nil, false) {
		if bytes.HasPrefix(kv.Key, p) {
			out = append(out, kv)
		}
	}
	return out
}

func (m kvModel) clone() kvModel {
	c := kvModel{}
	for k, v := range m {
		c[k] = v
	}
	return c
}

// Keys from a small alphabet with 0x00 and 0xff collide, nest as prefixes
// and sit at the byte order's edges.
var genKey = rapid.SliceOfN(rapid.SampledFrom([]byte{0x00, 0x01, 'a', 'b', 0xff}), 0, 3)

func genValue() *rapid.Generator[[]byte] {
	return rapid.OneOf(rapid.Just[[]byte](nil), rapid.SliceOfN(rapid.Byte(), 0, 4))
}

func equalKVs(a, b []KeyValue) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i].Key, b[i].Key) || !bytes.Equal(a[i].Value, b[i].Value) || (a[i].Value == nil) != (b[i].Value == nil) {
			return false
		}
	}
	return true
}

// TestKeyValueStoreModel runs random operations, commits and aborts against
// a map and checks every read, on both engines.
func TestKeyValueStoreModel(t *testing.T) {
	for name, open := range kvVariants(t) {
		t.Run(name, func(t *testing.T) {
			rapid.Check(t, func(rt *rapid.T) { checkKeyValueModel(rt, open()) })
		})
	}
}

// checkKeyValueModel runs random operations, commits and aborts against s
// and a map, and checks every read.
func checkKeyValueModel(rt *rapid.T, s KeyValueStore) {
	defer s.Close()
	committed, current := kvModel{}, kvModel{}
	for i := range rapid.IntRange(1, 60).Draw(rt, "ops") {
		switch op := rapid.IntRange(0, 9).Draw(rt, fmt.Sprintf("op%d", i)); op {
		case 0, 1:
			k, v := genKey.Draw(rt, "k"), genValue().Draw(rt, "v")
			if err := s.Put(k, v); err != nil {
				rt.Fatal(err)
			}
			if v == nil {
				delete(current, string(k))
			} else {
				current[string(k)] = v
			}
		case 2:
			k := genKey.Draw(rt, "k")
			old, err := s.Delete(k)
			if err != nil || !bytes.Equal(old, current[string(k)]) {
				rt.Fatalf("Delete(%q) = %q, %v; want %q", k, old, err, current[string(k)])
			}
			delete(current, string(k))
		case 3:
			k, v := genKey.Draw(rt, "k"), rapid.SliceOfN(rapid.Byte(), 0, 3).Draw(rt, "v")
			old, err := s.PutIfAbsent(k, v)
			want := current[string(k)]
			if err != nil || !bytes.Equal(old, want) || (old == nil) != (want == nil) {
				rt.Fatalf("PutIfAbsent(%q) = %q, %v; want %q", k, old, err, want)
			}
			if want == nil {
				current[string(k)] = v
			}
		case 4:
			k := genKey.Draw(rt, "k")
			got, err := s.Get(k)
			want := current[string(k)]
			if err != nil || !bytes.Equal(got, want) || (got == nil) != (want == nil) {
				rt.Fatalf("Get(%q) = %q, %v; want %q", k, got, err, want)
			}
		case 5:
			from, to := rapid.OneOf(rapid.Just[[]byte](nil), genKey).Draw(rt, "from"), rapid.OneOf(rapid.Just[[]byte](nil), genKey).Draw(rt, "to")
			reverse := rapid.Bool().Draw(rt, "reverse")
			var it KeyValueIterator
			var err error
			if reverse {
				it, err = s.ReverseRange(from, to)
			} else {
				it, err = s.Range(from, to)
			}
			if got, want := collect(rt, it, err), current.rangeOf(from, to, reverse); !equalKVs(got, want) {
				rt.Fatalf("range %q..%q reverse=%v = %q; want %q", from, to, reverse, got, want)
			}
		case 6:
			p := genKey.Draw(rt, "prefix")
			it, err := s.PrefixScan(p)
			if got, want := collect(rt, it, err), current.prefix(p); !equalKVs(got, want) {
				rt.Fatalf("prefix %q = %q; want %q", p, got, want)
			}
		case 7:
			if err := s.Commit(); err != nil {
				rt.Fatal(err)
			}
			committed = current.clone()
		case 8:
			if err := s.Abort(); err != nil {
				rt.Fatal(err)
			}
			current = committed.clone()
		case 9:
			if _, cached := s.(*CachingKeyValueStore); cached {
				break // the store's count, without what the cache holds
			}
			n, err := s.ApproximateNumEntries()
			if err != nil || n != int64(len(current)) {
				rt.Fatalf("ApproximateNumEntries = %d, %v; want %d", n, err, len(current))
			}
		}
	}
	it, err := s.All()
	if got, want := collect(rt, it, err), current.rangeOf(nil, nil, false); !equalKVs(got, want) {
		rt.Fatalf("All = %q; want %q", got, want)
	}
}

// TestPebbleKeyValueStoreReopen: committed writes survive a close, aborted
// and uncommitted ones do not.
func TestPebbleKeyValueStoreReopen(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenPebbleKeyValueStore("kv", dir, PebbleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	must(t, s.Put([]byte("a"), []byte("1")))
	must(t, s.Commit())
	must(t, s.Put([]byte("b"), []byte("2")))
	must(t, s.Abort())
	must(t, s.Put([]byte("c"), []byte("3")))
	must(t, s.Close())
	s, err = OpenPebbleKeyValueStore("kv", dir, PebbleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	it, err := s.All()
	got := collect(t, it, err)
	if want := []KeyValue{{Key: []byte("a"), Value: []byte("1")}}; !equalKVs(got, want) {
		t.Fatalf("after reopen: %q; want %q", got, want)
	}
}

func TestKeyValueStoreRefusesNilKeyAndClosed(t *testing.T) {
	for name, open := range kvVariants(t) {
		t.Run(name, func(t *testing.T) {
			s := open()
			if err := s.Put(nil, []byte("v")); err == nil {
				t.Fatal("Put(nil) accepted")
			}
			must(t, s.Close())
			if _, err := s.Get([]byte("a")); err == nil {
				t.Fatal("Get after Close accepted")
			}
		})
	}
}

func must(t fataler, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

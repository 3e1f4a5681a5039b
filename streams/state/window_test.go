package state

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

var testWindowOptions = WindowOptions{RetentionPeriod: 30, WindowSize: 10, SegmentInterval: 10}

func windowVariants(t testing.TB, o WindowOptions) map[string]func() WindowStore {
	return map[string]func() WindowStore{
		"memory": func() WindowStore {
			s, err := NewInMemoryWindowStore("w", o)
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
		"pebble": func() WindowStore {
			s, err := OpenPebbleWindowStore("w", t.TempDir(), o, PebbleOptions{})
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
	}
}

type windowEntry struct {
	key   []byte
	start int64
	seq   uint32
	value []byte
}

func (e windowEntry) String() string {
	return fmt.Sprintf("%q@%d#%d=%q", e.key, e.start, e.seq, e.value)
}

// windowModel is the specification of a window store: every live put, and
// the rule that reads see only windows starting after streamTime-retention.
type windowModel struct {
	opts       WindowOptions
	entries    []windowEntry
	streamTime int64
}

func (m windowModel) clone() windowModel {
	m.entries = slices.Clone(m.entries)
	return m
}

func (m *windowModel) put(key, value []byte, start int64, seq uint32) {
	m.streamTime = max(m.streamTime, start)
	m.entries = slices.DeleteFunc(m.entries, func(e windowEntry) bool {
		return bytes.Equal(e.key, key) && e.start == start && e.seq == seq
	})
	if value != nil {
		m.entries = append(m.entries, windowEntry{key: key, start: start, seq: seq, value: value})
	}
}

// read is Kafka's RocksDB order: segment, key, start, seqnum.
func (m windowModel) read(keyFrom, keyTo []byte, from, to int64, reverse bool) []windowEntry {
	from = max(from, m.streamTime-m.opts.RetentionPeriod+1)
	var out []windowEntry
	for _, e := range m.entries {
		if (keyFrom == nil || bytes.Compare(e.key, keyFrom) >= 0) && (keyTo == nil || bytes.Compare(e.key, keyTo) <= 0) &&
			e.start >= from && e.start <= to {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b windowEntry) int {
		return cmp.Or(cmp.Compare(segmentID(a.start, m.opts.SegmentInterval), segmentID(b.start, m.opts.SegmentInterval)),
			bytes.Compare(a.key, b.key), cmp.Compare(a.start, b.start), cmp.Compare(a.seq, b.seq))
	})
	if reverse {
		slices.Reverse(out)
	}
	return out
}

func collectWindows(t fataler, it WindowedIterator, err error) []windowEntry {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var out []windowEntry
	for it.Next() {
		out = append(out, windowEntry{key: it.Key(), start: it.Window().Start, value: it.Value()})
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// sameWindows compares what a store can show: keys, starts, values in order.
func sameWindows(got, want []windowEntry) bool {
	return slices.EqualFunc(got, want, func(a, b windowEntry) bool {
		return bytes.Equal(a.key, b.key) && a.start == b.start && bytes.Equal(a.value, b.value)
	})
}

func TestWindowStoreModel(t *testing.T) {
	for _, dups := range []bool{false, true} {
		o := testWindowOptions
		o.RetainDuplicates = dups
		for name, open := range windowVariants(t, o) {
			t.Run(fmt.Sprintf("%s/duplicates=%v", name, dups), func(t *testing.T) {
				rapid.Check(t, func(rt *rapid.T) { checkWindowModel(rt, open(), o) })
			})
		}
	}
}

func checkWindowModel(rt *rapid.T, s WindowStore, o WindowOptions) {
	defer s.Close()
	current := windowModel{opts: o, streamTime: -1}
	committed := current.clone()
	var seqnum uint32
	genTime := rapid.Int64Range(0, 60)
	optKey := rapid.OneOf(rapid.Just[[]byte](nil), genKey)
	for i := range rapid.IntRange(1, 80).Draw(rt, "ops") {
		switch op := rapid.IntRange(0, 9).Draw(rt, fmt.Sprintf("op%d", i)); op {
		case 0, 1, 2:
			k, v, start := genKey.Draw(rt, "k"), genValue().Draw(rt, "v"), genTime.Draw(rt, "start")
			must(rt, s.Put(k, v, start))
			switch {
			case o.RetainDuplicates && v == nil:
			case o.RetainDuplicates:
				seqnum++
				current.put(k, v, start, seqnum)
			default:
				current.put(k, v, start, 0)
			}
		case 3:
			k, start := genKey.Draw(rt, "k"), genTime.Draw(rt, "start")
			got, err := s.Fetch(k, start)
			want := current.read(k, k, start, start, false)
			if err != nil || (len(want) == 0) != (got == nil) || (len(want) > 0 && !bytes.Equal(got, want[0].value)) {
				rt.Fatalf("Fetch(%q, %d) = %q, %v; want %v", k, start, got, err, want)
			}
		case 4:
			k, from, to, rev := genKey.Draw(rt, "k"), genTime.Draw(rt, "from"), genTime.Draw(rt, "to"), rapid.Bool().Draw(rt, "reverse")
			var it WindowedIterator
			var err error
			if rev {
				it, err = s.BackwardFetchTimeRange(k, from, to)
			} else {
				it, err = s.FetchTimeRange(k, from, to)
			}
			if got, want := collectWindows(rt, it, err), current.read(k, k, from, to, rev); !sameWindows(got, want) {
				rt.Fatalf("FetchTimeRange(%q, %d, %d, reverse=%v) = %v; want %v", k, from, to, rev, got, want)
			}
		case 5:
			kf, kt := optKey.Draw(rt, "keyFrom"), optKey.Draw(rt, "keyTo")
			from, to, rev := genTime.Draw(rt, "from"), genTime.Draw(rt, "to"), rapid.Bool().Draw(rt, "reverse")
			var it WindowedIterator
			var err error
			switch {
			case kf == nil && kt == nil && rev:
				it, err = s.BackwardFetchAll(from, to)
			case kf == nil && kt == nil:
				it, err = s.FetchAll(from, to)
			case rev:
				it, err = s.BackwardFetchRange(kf, kt, from, to)
			default:
				it, err = s.FetchRange(kf, kt, from, to)
			}
			if got, want := collectWindows(rt, it, err), current.read(kf, kt, from, to, rev); !sameWindows(got, want) {
				rt.Fatalf("FetchRange(%q, %q, %d, %d, reverse=%v) = %v; want %v", kf, kt, from, to, rev, got, want)
			}
		case 6:
			rev := rapid.Bool().Draw(rt, "reverse")
			var it WindowedIterator
			var err error
			if rev {
				it, err = s.BackwardAll()
			} else {
				it, err = s.All()
			}
			if got, want := collectWindows(rt, it, err), current.read(nil, nil, -1<<62, 1<<62, rev); !sameWindows(got, want) {
				rt.Fatalf("All(reverse=%v) = %v; want %v", rev, got, want)
			}
		case 7:
			must(rt, s.Commit())
			committed = current.clone()
		case 8:
			must(rt, s.Abort())
			current = committed.clone()
		case 9:
			if got := s.ObservedStreamTime(); got != current.streamTime {
				rt.Fatalf("ObservedStreamTime = %d; want %d", got, current.streamTime)
			}
		}
	}
}

func TestWindowStoreWindowBoundsAndDroppedRecords(t *testing.T) {
	for name, open := range windowVariants(t, testWindowOptions) {
		t.Run(name, func(t *testing.T) {
			s := open()
			defer s.Close()
			must(t, s.Put([]byte("a"), []byte("1"), 100))
			must(t, s.Put([]byte("a"), []byte("old"), 50)) // segment 5 < segment of 100-30
			if got := s.DroppedRecords(); got != 1 {
				t.Fatalf("DroppedRecords = %d; want 1", got)
			}
			it, err := s.FetchTimeRange([]byte("a"), 0, 200)
			got := collectWindows(t, it, err)
			if len(got) != 1 {
				t.Fatalf("got %v", got)
			}
			it, err = s.FetchTimeRange([]byte("a"), 0, 200)
			must(t, err)
			defer it.Close()
			if !it.Next() || it.Window() != (Window{Start: 100, End: 110}) {
				t.Fatalf("window = %v; want [100,110)", it.Window())
			}
		})
	}
}

// TestPebbleWindowStoreKeepsStreamTime: retention after a reopen goes on
// from the committed stream time.
func TestPebbleWindowStoreKeepsStreamTime(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenPebbleWindowStore("w", dir, testWindowOptions, PebbleOptions{})
	must(t, err)
	must(t, s.Put([]byte("a"), []byte("1"), 10))
	must(t, s.Put([]byte("b"), []byte("2"), 100))
	must(t, s.Commit())
	must(t, s.Close())
	s, err = OpenPebbleWindowStore("w", dir, testWindowOptions, PebbleOptions{})
	must(t, err)
	defer s.Close()
	if got := s.ObservedStreamTime(); got != 100 {
		t.Fatalf("ObservedStreamTime = %d; want 100", got)
	}
	must(t, s.Put([]byte("c"), []byte("3"), 20))
	it, err := s.All()
	if got := collectWindows(t, it, err); len(got) != 1 || string(got[0].key) != "b" {
		t.Fatalf("All = %v; want only b", got)
	}
}

// TestWindowStoreBoundaries: windows at exactly the ends of a time range
// and keys that are prefixes of each other, forward and backward.
func TestWindowStoreBoundaries(t *testing.T) {
	o := WindowOptions{RetentionPeriod: 1000, WindowSize: 10, SegmentInterval: 10}
	for name, open := range windowVariants(t, o) {
		t.Run(name, func(t *testing.T) {
			s := open()
			defer s.Close()
			for _, k := range []string{"a", "a\x00", "ab", "b"} {
				for _, start := range []int64{20, 26, 28} {
					must(t, s.Put([]byte(k), []byte(fmt.Sprintf("%s%d", k, start)), start))
				}
			}
			cases := []struct {
				name string
				open func() (WindowedIterator, error)
				want []string
			}{
				{"key forward", func() (WindowedIterator, error) { return s.FetchTimeRange([]byte("a"), 20, 26) }, []string{"a20", "a26"}},
				{"key backward", func() (WindowedIterator, error) { return s.BackwardFetchTimeRange([]byte("a"), 20, 26) }, []string{"a26", "a20"}},
				{"range forward", func() (WindowedIterator, error) { return s.FetchRange([]byte("a"), []byte("a\x00"), 26, 28) },
					[]string{"a26", "a28", "a\x0026", "a\x0028"}},
				{"range backward", func() (WindowedIterator, error) { return s.BackwardFetchRange([]byte("a\x00"), []byte("ab"), 26, 26) },
					[]string{"ab26", "a\x0026"}},
			}
			for _, c := range cases {
				it, err := c.open()
				var got []string
				for _, e := range collectWindows(t, it, err) {
					got = append(got, string(e.value))
				}
				if !slices.Equal(got, c.want) {
					t.Errorf("%s: %q; want %q", c.name, got, c.want)
				}
			}
		})
	}
}

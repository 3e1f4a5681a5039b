package state

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

var testSessionOptions = SessionOptions{RetentionPeriod: 30, SegmentInterval: 10}

func sessionVariants(t testing.TB, o SessionOptions) map[string]func() SessionStore {
	return map[string]func() SessionStore{
		"memory": func() SessionStore {
			s, err := NewInMemorySessionStore("s", o)
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
		"pebble": func() SessionStore {
			s, err := OpenPebbleSessionStore("s", t.TempDir(), o, PebbleOptions{})
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
	}
}

type sessionEntry struct {
	key    []byte
	window Window
	value  []byte
}

func (e sessionEntry) String() string {
	return fmt.Sprintf("%q[%d,%d]=%q", e.key, e.window.Start, e.window.End, e.value)
}

type sessionModel struct {
	opts       SessionOptions
	entries    []sessionEntry
	streamTime int64
}

func (m sessionModel) clone() sessionModel {
	m.entries = slices.Clone(m.entries)
	return m
}

func (m *sessionModel) put(key []byte, w Window, value []byte) {
	m.streamTime = max(m.streamTime, w.End)
	m.entries = slices.DeleteFunc(m.entries, func(e sessionEntry) bool { return bytes.Equal(e.key, key) && e.window == w })
	if value != nil {
		m.entries = append(m.entries, sessionEntry{key: key, window: w, value: value})
	}
}

// find is Kafka's findSessions: end at or after earliestEnd (and inside
// retention), start at or before latestStart; RocksDB's order.
func (m sessionModel) find(keyFrom, keyTo []byte, earliestEnd, latestStart int64, reverse bool) []sessionEntry {
	earliestEnd = max(earliestEnd, m.streamTime-m.opts.RetentionPeriod+1)
	var out []sessionEntry
	for _, e := range m.entries {
		if (keyFrom == nil || bytes.Compare(e.key, keyFrom) >= 0) && (keyTo == nil || bytes.Compare(e.key, keyTo) <= 0) &&
			e.window.End >= earliestEnd && e.window.Start <= latestStart {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b sessionEntry) int {
		return cmp.Or(cmp.Compare(segmentID(a.window.End, m.opts.SegmentInterval), segmentID(b.window.End, m.opts.SegmentInterval)),
			bytes.Compare(a.key, b.key), cmp.Compare(a.window.End, b.window.End), cmp.Compare(a.window.Start, b.window.Start))
	})
	if reverse {
		slices.Reverse(out)
	}
	return out
}

func collectSessions(t fataler, it WindowedIterator, err error) []sessionEntry {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var out []sessionEntry
	for it.Next() {
		out = append(out, sessionEntry{key: it.Key(), window: it.Window(), value: it.Value()})
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func sameSessions(a, b []sessionEntry) bool {
	return slices.EqualFunc(a, b, func(x, y sessionEntry) bool {
		return bytes.Equal(x.key, y.key) && x.window == y.window && bytes.Equal(x.value, y.value)
	})
}

func TestSessionStoreModel(t *testing.T) {
	for name, open := range sessionVariants(t, testSessionOptions) {
		t.Run(name, func(t *testing.T) {
			rapid.Check(t, func(rt *rapid.T) { checkSessionModel(rt, open(), testSessionOptions) })
		})
	}
}

func checkSessionModel(rt *rapid.T, s SessionStore, o SessionOptions) {
	defer s.Close()
	current := sessionModel{opts: o, streamTime: -1}
	committed := current.clone()
	genTime := rapid.Int64Range(0, 60)
	genWindow := rapid.Custom(func(t *rapid.T) Window {
		start := genTime.Draw(t, "start")
		return Window{Start: start, End: start + rapid.Int64Range(0, 15).Draw(t, "length")}
	})
	optKey := rapid.OneOf(rapid.Just[[]byte](nil), genKey)
	for i := range rapid.IntRange(1, 80).Draw(rt, "ops") {
		switch op := rapid.IntRange(0, 7).Draw(rt, fmt.Sprintf("op%d", i)); op {
		case 0, 1, 2:
			k, w, v := genKey.Draw(rt, "k"), genWindow.Draw(rt, "w"), genValue().Draw(rt, "v")
			must(rt, s.Put(k, w, v))
			current.put(k, w, v)
		case 3:
			k, w := genKey.Draw(rt, "k"), genWindow.Draw(rt, "w")
			got, err := s.FetchSession(k, w.Start, w.End)
			want := current.find(k, k, w.End, w.Start, false)
			want = slices.DeleteFunc(want, func(e sessionEntry) bool { return e.window != w })
			if err != nil || (len(want) == 0) != (got == nil) || (len(want) > 0 && !bytes.Equal(got, want[0].value)) {
				rt.Fatalf("FetchSession(%q, %v) = %q, %v; want %v", k, w, got, err, want)
			}
		case 4:
			k, earliestEnd, latestStart, rev := genKey.Draw(rt, "k"), genTime.Draw(rt, "earliestEnd"), genTime.Draw(rt, "latestStart"), rapid.Bool().Draw(rt, "reverse")
			var it WindowedIterator
			var err error
			if rev {
				it, err = s.BackwardFindSessions(k, earliestEnd, latestStart)
			} else {
				it, err = s.FindSessions(k, earliestEnd, latestStart)
			}
			if got, want := collectSessions(rt, it, err), current.find(k, k, earliestEnd, latestStart, rev); !sameSessions(got, want) {
				rt.Fatalf("FindSessions(%q, %d, %d, reverse=%v) = %v; want %v", k, earliestEnd, latestStart, rev, got, want)
			}
		case 5:
			kf, kt, rev := optKey.Draw(rt, "keyFrom"), optKey.Draw(rt, "keyTo"), rapid.Bool().Draw(rt, "reverse")
			var it WindowedIterator
			var err error
			if rev {
				it, err = s.BackwardFetchRange(kf, kt)
			} else {
				it, err = s.FetchRange(kf, kt)
			}
			if got, want := collectSessions(rt, it, err), current.find(kf, kt, 0, 1<<62, rev); !sameSessions(got, want) {
				rt.Fatalf("FetchRange(%q, %q, reverse=%v) = %v; want %v", kf, kt, rev, got, want)
			}
		case 6:
			must(rt, s.Commit())
			committed = current.clone()
		case 7:
			must(rt, s.Abort())
			current = committed.clone()
		}
	}
}

func TestSessionStoreRefusesEndBeforeStart(t *testing.T) {
	for name, open := range sessionVariants(t, testSessionOptions) {
		t.Run(name, func(t *testing.T) {
			s := open()
			defer s.Close()
			if err := s.Put([]byte("a"), Window{Start: 10, End: 5}, []byte("v")); err == nil {
				t.Fatal("session ending before its start accepted")
			}
		})
	}
}

// TestSessionStoreFindSessionsBounds: both bounds are inclusive, as
// Kafka's findSessions; keys that are prefixes of each other stay apart.
func TestSessionStoreFindSessionsBounds(t *testing.T) {
	o := SessionOptions{RetentionPeriod: 1000, SegmentInterval: 10}
	for name, open := range sessionVariants(t, o) {
		t.Run(name, func(t *testing.T) {
			s := open()
			defer s.Close()
			for _, k := range []string{"a", "a\x00"} {
				must(t, s.Put([]byte(k), Window{Start: 10, End: 20}, []byte(k+"1")))
				must(t, s.Put([]byte(k), Window{Start: 15, End: 25}, []byte(k+"2")))
			}
			for _, c := range []struct {
				earliestEnd, latestStart int64
				backward                 bool
				want                     []string
			}{
				{20, 15, false, []string{"a1", "a2"}},
				{20, 15, true, []string{"a2", "a1"}},
				{21, 15, false, []string{"a2"}},
				{20, 14, false, []string{"a1"}},
				{21, 14, false, nil},
			} {
				var it WindowedIterator
				var err error
				if c.backward {
					it, err = s.BackwardFindSessions([]byte("a"), c.earliestEnd, c.latestStart)
				} else {
					it, err = s.FindSessions([]byte("a"), c.earliestEnd, c.latestStart)
				}
				var got []string
				for _, e := range collectSessions(t, it, err) {
					got = append(got, string(e.value))
				}
				if !slices.Equal(got, c.want) {
					t.Errorf("FindSessions(a, %d, %d, backward=%v) = %q; want %q", c.earliestEnd, c.latestStart, c.backward, got, c.want)
				}
			}
		})
	}
}

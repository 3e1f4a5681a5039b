package storage

import (
	"encoding/binary"
	"fmt"
	"testing"
)

func mustOffsetMap(t testing.TB, memory int, loadFactor float64) *offsetMap {
	t.Helper()
	m, err := newOffsetMap(memory, loadFactor)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestCompactOffsetMapPutGet(t *testing.T) {
	type put struct {
		key    string
		offset int64
	}
	for _, tc := range []struct {
		name string
		puts []put
		want map[string]int64 // absent keys must miss
	}{
		{name: "empty", want: map[string]int64{"a": -1}},
		{name: "one", puts: []put{{"a", 0}}, want: map[string]int64{"a": 0, "b": -1}},
		{name: "latest wins", puts: []put{{"a", 1}, {"a", 5}}, want: map[string]int64{"a": 5}},
		{name: "max, not last", puts: []put{{"a", 5}, {"a", 3}}, want: map[string]int64{"a": 5}},
		{name: "empty key differs from others", puts: []put{{"", 7}, {"a", 8}}, want: map[string]int64{"": 7, "a": 8, "b": -1}},
		{name: "several", puts: []put{{"a", 1}, {"b", 2}, {"c", 3}, {"b", 4}}, want: map[string]int64{"a": 1, "b": 4, "c": 3, "d": -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := mustOffsetMap(t, 1<<10, 0.9)
			for _, p := range tc.puts {
				if !m.Put([]byte(p.key), p.offset) {
					t.Fatalf("Put(%q, %d) refused", p.key, p.offset)
				}
			}
			for k, want := range tc.want {
				got, ok := m.Get([]byte(k))
				if want < 0 {
					if ok {
						t.Errorf("Get(%q) = %d, want a miss", k, got)
					}
					continue
				}
				if !ok || got != want {
					t.Errorf("Get(%q) = %d, %v; want %d", k, got, ok, want)
				}
			}
		})
	}
}

func TestCompactOffsetMapFullAndClear(t *testing.T) {
	m := mustOffsetMap(t, 10*offsetMapEntrySize, 0.5)
	if m.Slots() != 10 {
		t.Fatalf("Slots = %d, want 10", m.Slots())
	}
	key := func(i int) []byte { return fmt.Appendf(nil, "key-%d", i) }
	for i := range 5 {
		if m.Full() {
			t.Fatalf("Full after %d keys", i)
		}
		m.Put(key(i), int64(i))
	}
	if !m.Full() {
		t.Fatal("not Full at the load factor")
	}
	// Past the load factor new keys still go in, up to one free slot.
	for i := 5; i < 9; i++ {
		if !m.Put(key(i), int64(i)) {
			t.Fatalf("Put of key %d refused below the hard limit", i)
		}
	}
	if m.Put(key(9), 9) {
		t.Fatal("Put filled the last free slot")
	}
	if !m.Put(key(3), 100) {
		t.Fatal("update of an existing key refused in a full map")
	}
	for i := range 9 {
		want := int64(i)
		if i == 3 {
			want = 100
		}
		if got, ok := m.Get(key(i)); !ok || got != want {
			t.Errorf("Get(key %d) = %d, %v; want %d", i, got, ok, want)
		}
	}
	if _, ok := m.Get(key(9)); ok {
		t.Error("refused key is present")
	}
	if m.Len() != 9 || m.LastOffset() != 100 {
		t.Errorf("Len, LastOffset = %d, %d; want 9, 100", m.Len(), m.LastOffset())
	}
	m.Clear()
	if m.Len() != 0 || m.Full() || m.LastOffset() != -1 {
		t.Fatalf("after Clear: Len %d Full %v LastOffset %d", m.Len(), m.Full(), m.LastOffset())
	}
	if _, ok := m.Get(key(0)); ok {
		t.Error("key survived Clear")
	}
}

func TestCompactOffsetMapConfig(t *testing.T) {
	for _, tc := range []struct {
		memory int
		lf     float64
		ok     bool
	}{
		{memory: 2 * offsetMapEntrySize, lf: 0.9, ok: true},
		{memory: 2*offsetMapEntrySize - 1, lf: 0.9},
		{memory: 1 << 20, lf: 0},
		{memory: 1 << 20, lf: 1, ok: true},
		{memory: 1 << 20, lf: 1.5},
	} {
		_, err := newOffsetMap(tc.memory, tc.lf)
		if (err == nil) != tc.ok {
			t.Errorf("newOffsetMap(%d, %v): err %v, want ok %v", tc.memory, tc.lf, err, tc.ok)
		}
	}
}

func benchKeys(n int) [][]byte {
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = binary.BigEndian.AppendUint64([]byte("user-"), uint64(i))
	}
	return keys
}

func BenchmarkCompactOffsetMapPut(b *testing.B) {
	keys := benchKeys(1 << 16)
	m := mustOffsetMap(b, 1<<16*offsetMapEntrySize*2, defaultOffsetMapLoadFactor)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		m.Put(keys[i&(len(keys)-1)], int64(i))
	}
}

func BenchmarkCompactOffsetMapGet(b *testing.B) {
	keys := benchKeys(1 << 16)
	m := mustOffsetMap(b, 1<<16*offsetMapEntrySize*2, defaultOffsetMapLoadFactor)
	for i, k := range keys {
		m.Put(k, int64(i))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, ok := m.Get(keys[i&(len(keys)-1)]); !ok {
			b.Fatal("miss")
		}
	}
}

package state

import (
	"bytes"
	"testing"

	"pgregory.net/rapid"
)

// TestEscapedKeysOrderAndParse: the local key encoding sorts as the keys
// do, no encoding is a prefix of another's, and it reads back.
func TestEscapedKeysOrderAndParse(t *testing.T) {
	anyKey := rapid.SliceOfN(rapid.SampledFrom([]byte{0x00, 0x01, 0x02, 0xfe, 0xff}), 0, 6)
	rapid.Check(t, func(rt *rapid.T) {
		a, b := anyKey.Draw(rt, "a"), anyKey.Draw(rt, "b")
		ea, eb := appendEscaped(nil, a), appendEscaped(nil, b)
		if got, want := bytes.Compare(ea, eb), bytes.Compare(a, b); got != want {
			rt.Fatalf("compare(enc(%x), enc(%x)) = %d; want %d", a, b, got, want)
		}
		if !bytes.Equal(a, b) && (bytes.HasPrefix(ea, eb) || bytes.HasPrefix(eb, ea)) {
			rt.Fatalf("enc(%x) and enc(%x) are prefixes", a, b)
		}
		key, rest, err := readEscaped(append(ea, 0x07))
		if err != nil || !bytes.Equal(key, a) || !bytes.Equal(rest, []byte{0x07}) {
			rt.Fatalf("readEscaped(enc(%x)) = %x, %x, %v", a, key, rest, err)
		}
	})
}

func TestOrderedInt64(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		a, b := rapid.Int64().Draw(rt, "a"), rapid.Int64().Draw(rt, "b")
		ea, eb := appendOrderedInt64(nil, a), appendOrderedInt64(nil, b)
		if got := bytes.Compare(ea, eb); got != cmpInt(a, b) || orderedInt64(ea) != a {
			rt.Fatalf("%d vs %d encode as %x vs %x", a, b, ea, eb)
		}
	})
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func FuzzReadEscaped(f *testing.F) {
	f.Add([]byte{0x61, 0x00, 0xff, 0x00, 0x01, 0x05})
	f.Fuzz(func(t *testing.T, b []byte) {
		key, rest, err := readEscaped(b)
		if err != nil {
			return
		}
		if !bytes.Equal(append(appendEscaped(nil, key), rest...), b) {
			t.Fatalf("readEscaped(%x) = %x, %x does not encode back", b, key, rest)
		}
	})
}

// TestExpiredSegmentsAreDeleted: expiry removes the data, not only hides
// it (reads hide it either way).
func TestExpiredSegmentsAreDeleted(t *testing.T) {
	for name, open := range windowVariants(t, testWindowOptions) {
		t.Run(name, func(t *testing.T) {
			s := open()
			defer s.Close()
			ws := s.(*windowStore)
			must(t, s.Put([]byte("a"), []byte("1"), 0))
			must(t, s.Put([]byte("b"), []byte("1"), 15))
			must(t, s.Commit())
			if n := rawKeys(t, ws.eng, windowPrefix); n != 2 {
				t.Fatalf("%d window keys; want 2", n)
			}
			must(t, s.Put([]byte("c"), []byte("1"), 50)) // expires segments below 2
			must(t, s.Commit())
			if n := rawKeys(t, ws.eng, windowPrefix); n != 1 {
				t.Fatalf("%d window keys after expiry; want 1", n)
			}
		})
	}
}

func rawKeys(t *testing.T, eng engine, prefix byte) int {
	it, err := eng.newIter([]byte{prefix}, []byte{prefix + 1}, false)
	must(t, err)
	defer it.close()
	n := 0
	for ok := it.first(); ok; ok = it.next() {
		n++
	}
	return n
}

package serde

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/sr"
)

func TestHeaderRoundTrip(t *testing.T) {
	for _, id := range []int{0, 1, 255, 256, 1 << 24, 1<<31 - 1} {
		b := AppendHeader([]byte("x"), id)
		got, rest, err := ParseHeader(append(b[1:], 'v'))
		if err != nil || got != id || string(rest) != "v" {
			t.Errorf("id %d: got %d %q %v", id, got, rest, err)
		}
	}
	if got := AppendHeader(nil, 0x01020304); !bytes.Equal(got, []byte{0, 1, 2, 3, 4}) {
		t.Errorf("header of 0x01020304: % x", got)
	}
}

func TestParseHeaderErrors(t *testing.T) {
	for _, c := range []struct {
		name    string
		payload []byte
		want    error
	}{
		{"empty", nil, ErrShortPayload},
		{"magic only", []byte{0}, ErrShortPayload},
		{"four bytes", []byte{0, 0, 0, 1}, ErrShortPayload},
		{"bad magic", []byte{1, 0, 0, 0, 1}, ErrUnknownMagicByte},
		{"text", []byte(`{"a":1}`), ErrUnknownMagicByte},
	} {
		if _, _, err := ParseHeader(c.payload); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
}

func TestMessageIndexes(t *testing.T) {
	for _, c := range []struct {
		indexes []int
		wire    []byte
	}{
		{[]int{0}, []byte{0}},                // Confluent's shortcut for the first message
		{[]int{1}, []byte{2, 2}},             // count 1, index 1 (zigzag)
		{[]int{0, 0}, []byte{4, 0, 0}},       // nested: the first message's first
		{[]int{2, 1, 3}, []byte{6, 4, 2, 6}}, // three levels
		{[]int{64}, []byte{2, 0x80, 0x01}},   // a two-byte varint
		{[]int{1, 0}, []byte{4, 2, 0}},
	} {
		got := AppendMessageIndexes(nil, c.indexes)
		if !bytes.Equal(got, c.wire) {
			t.Errorf("%v: wrote % x, want % x", c.indexes, got, c.wire)
		}
		// franz-go's Confluent header writes the same bytes.
		franz, _ := (&sr.ConfluentHeader{}).AppendEncode(nil, 9, c.indexes)
		if ours := AppendMessageIndexes(AppendHeader(nil, 9), c.indexes); !bytes.Equal(franz, ours) {
			t.Errorf("%v: franz-go writes % x, we write % x", c.indexes, franz, ours)
		}
		back, rest, err := ParseMessageIndexes(append(got, 0xAA))
		if err != nil || !slices.Equal(back, c.indexes) || !bytes.Equal(rest, []byte{0xAA}) {
			t.Errorf("%v: read %v % x %v", c.indexes, back, rest, err)
		}
	}
}

func TestParseMessageIndexesErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		b    []byte
	}{
		{"empty", nil},
		{"unterminated count", []byte{0x80}},
		{"negative count", []byte{1}},
		{"count beyond the bytes", []byte{4, 2}},
		{"huge count", []byte{0xfe, 0xff, 0xff, 0xff, 0x0f}},
		{"negative index", []byte{2, 1}},
		{"unterminated index", []byte{2, 0x80}},
	} {
		_, _, err := ParseMessageIndexes(c.b)
		if !errors.Is(err, ErrBadMessageIndexes) {
			t.Errorf("%s: %v, want ErrBadMessageIndexes", c.name, err)
		}
	}
}

// FuzzParse: the wire format's readers never panic, and what they accept
// writes back to bytes that read the same (varints may come in a longer
// form than Go writes, and [0] has two forms).
func FuzzParse(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 1, 0, 'x'})
	f.Add([]byte{0, 0, 0, 0, 1, 6, 4, 2, 6})
	f.Add([]byte{1, 2})
	f.Fuzz(func(t *testing.T, b []byte) {
		id, rest, err := ParseHeader(b)
		if err != nil {
			return
		}
		if !bytes.Equal(AppendHeader(nil, id), b[:5]) {
			t.Fatalf("header % x read as id %d", b[:5], id)
		}
		indexes, after, err := ParseMessageIndexes(rest)
		if err != nil {
			return
		}
		wrote := AppendMessageIndexes(nil, indexes)
		again, left, err := ParseMessageIndexes(wrote)
		if err != nil || len(left) != 0 || !slices.Equal(again, indexes) {
			t.Fatalf("indexes %v (from % x) written as % x read back as %v, %v", indexes, rest[:len(rest)-len(after)], wrote, again, err)
		}
	})
}

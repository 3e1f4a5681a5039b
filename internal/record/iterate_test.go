package record

import (
	"encoding/binary"
	"errors"
	"runtime"
	"testing"
)

// rawRecord assembles a record body from pre-encoded fields, length first,
// so tests can write any lie the format allows.
func rawRecord(length int64, fields ...[]byte) []byte {
	var body []byte
	for _, f := range fields {
		body = append(body, f...)
	}
	if length < 0 {
		length = int64(len(body))
	}
	return append(binary.AppendVarint(nil, length), body...)
}

func vi(v int64) []byte { return binary.AppendVarint(nil, v) }

func TestIterateMalformed(t *testing.T) {
	base := build(t, producerBatch(CodecNone, 1)) // header for one record, delta 0
	attrs, ts, off := []byte{0}, vi(0), vi(0)
	key, value := append(vi(1), 'k'), append(vi(1), 'v')
	cases := []struct {
		name    string
		records []byte
	}{
		{"no records", nil},
		{"length past end", rawRecord(1000, attrs, ts, off, key, value, vi(0))},
		{"negative length", rawRecord(-5, attrs)},
		{"length max int32", rawRecord(1<<31-1, attrs)},
		{"length overflows int32", append(vi(1<<40), 0)},
		{"varint too long", []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x01}},
		{"varint unterminated", []byte{0x80}},
		{"varlong too long", rawRecord(-1, attrs, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})},
		{"key past record", rawRecord(-1, attrs, ts, off, vi(50), []byte("k"))},
		{"value past record", rawRecord(-1, attrs, ts, off, key, vi(50), []byte("v"))},
		{"missing header count", rawRecord(-1, attrs, ts, off, key, value)},
		{"negative header count", rawRecord(-1, attrs, ts, off, key, value, vi(-1))},
		{"lying header count", rawRecord(-1, attrs, ts, off, key, value, vi(1<<30), make([]byte, 8))},
		{"null header key", rawRecord(-1, attrs, ts, off, key, value, vi(1), vi(-1), vi(-1))},
		{"header key past record", rawRecord(-1, attrs, ts, off, key, value, vi(1), vi(9), []byte("h"), vi(-1))},
		{"length longer than fields", rawRecord(-1, attrs, ts, off, key, value, vi(0), []byte{0})},
		{"bytes after last record", append(rawRecord(-1, attrs, ts, off, key, value, vi(0)), 7)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			batch := rewrap(base, CodecNone, c.records)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			err := Iterate(batch, 1<<20, func(*Record) bool { return true })
			runtime.ReadMemStats(&after)
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("err %v, want ErrCorrupt", err)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 256<<10 {
				t.Errorf("allocated %d KiB decoding %d bytes", alloc>>10, len(batch))
			}
			if _, err := Validate(batch, ValidateConfig{}); !errors.Is(err, ErrInvalidRecord) {
				t.Errorf("Validate: %v, want ErrInvalidRecord", err)
			}
		})
	}
	good := rawRecord(-1, attrs, ts, off, key, value, vi(1), vi(1), []byte("h"), vi(-1))
	if err := Iterate(rewrap(base, CodecNone, good), 1<<20, func(*Record) bool { return true }); err != nil {
		t.Fatalf("control case: %v", err)
	}
}

func TestIterateFraming(t *testing.T) {
	batch := build(t, producerBatch(CodecGzip, 4))
	negative := append([]byte(nil), batch...)
	binary.BigEndian.PutUint32(negative[offNumRecords:], 1<<31)
	cases := []struct {
		name  string
		batch []byte
		want  error
	}{
		{"truncated", batch[:len(batch)-1], ErrTruncated},
		{"trailing bytes", append(append([]byte(nil), batch...), 0), ErrCorrupt},
		{"header only", batch[:HeaderSize], ErrTruncated},
		{"negative count", negative, ErrCorrupt},
		{"unknown codec", rewrap(batch, 6, batch[HeaderSize:]), ErrUnsupportedCodec},
		{"bomb bound", batch, ErrDecompressedTooLarge},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Iterate(c.batch, 50, func(*Record) bool { return true })
			if !errors.Is(err, c.want) {
				t.Fatalf("err %v, want %v", err, c.want)
			}
		})
	}
}

// TestIterateStops: returning false stops the walk without an error, even
// before a malformed record further on.
func TestIterateStops(t *testing.T) {
	batch := build(t, producerBatch(CodecNone, 3))
	records := append(recordsOf(t, batch), 0xff) // trailing garbage
	batch = rewrap(batch, CodecNone, records)
	n := 0
	err := Iterate(batch, 0, func(r *Record) bool {
		n++
		return r.Offset < 1
	})
	if err != nil || n != 2 {
		t.Fatalf("err %v after %d records, want nil after 2", err, n)
	}
}

// TestIterateAllocs: iterating an uncompressed batch allocates nothing per
// record beyond header keys (strings), and a compressed one reuses pooled
// buffers.
func TestIterateAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes allocation counts")
	}
	for _, c := range []Codec{CodecNone, CodecZstd, CodecLZ4, CodecSnappy, CodecGzip} {
		batch := sizedBatch(t, c, 16<<10)
		allocs := testing.AllocsPerRun(50, func() {
			if err := Iterate(batch, 1<<20, func(*Record) bool { return true }); err != nil {
				t.Fatal(err)
			}
		})
		if allocs > 3 {
			t.Errorf("%s: %.0f allocations per Iterate", c, allocs)
		}
	}
}

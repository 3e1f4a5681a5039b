package record

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRecompress(t *testing.T) {
	src := Batch{
		BaseOffset: 0, PartitionLeaderEpoch: -1, Codec: CodecGzip, Transactional: true,
		ProducerID: 7, ProducerEpoch: 2, BaseSequence: 40,
		Records: []Record{
			{Offset: 0, Timestamp: 1000, Key: []byte("k0"), Value: []byte("v0"), Headers: []RecordHeader{{Key: "h", Value: []byte("x")}}},
			{Offset: 1, Timestamp: 990, Key: nil, Value: []byte("v1")},
			{Offset: 2, Timestamp: 1010, Key: []byte("k2"), Value: nil},
		},
	}
	in, err := src.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	inH, _ := ParseHeader(in)
	for _, tt := range []struct {
		codec Codec
		level int
	}{
		{CodecNone, 0}, {CodecGzip, 1}, {CodecGzip, 9}, {CodecSnappy, 0}, {CodecLZ4, DefaultLZ4Level},
		{CodecLZ4, 1}, {CodecLZ4, 17}, {CodecZstd, DefaultZstdLevel}, {CodecZstd, -5}, {CodecZstd, 19},
	} {
		prefix := []byte("keep")
		out, err := Recompress(prefix, in, tt.codec, tt.level, 0)
		if err != nil {
			t.Fatalf("%s level %d: %v", tt.codec, tt.level, err)
		}
		if string(out[:4]) != "keep" {
			t.Fatal("dst prefix lost")
		}
		out = out[4:]
		if _, err := Validate(out, ValidateConfig{}); err != nil {
			t.Fatalf("%s level %d: rebuilt batch invalid: %v", tt.codec, tt.level, err)
		}
		h, _ := ParseHeader(out)
		if h.Codec() != tt.codec {
			t.Errorf("codec %s, want %s", h.Codec(), tt.codec)
		}
		want := inH
		want.Attributes = inH.Attributes&^CompressionMask | int16(tt.codec)
		want.BatchLength, want.CRC = h.BatchLength, h.CRC
		if diff := cmp.Diff(want, h); diff != "" {
			t.Errorf("%s: header (-want +got):\n%s", tt.codec, diff)
		}
		if diff := cmp.Diff(records(t, in), records(t, out)); diff != "" {
			t.Errorf("%s: records (-before +after):\n%s", tt.codec, diff)
		}
	}
}

func TestRecompressBounds(t *testing.T) {
	b := Batch{Codec: CodecZstd, ProducerID: NoProducerID, ProducerEpoch: NoProducerEpoch, BaseSequence: NoSequence,
		Records: []Record{{Value: make([]byte, 4096)}}}
	in, _ := b.AppendTo(nil)
	if _, err := Recompress(nil, in, CodecGzip, 0, 1024); !errors.Is(err, ErrDecompressedTooLarge) {
		t.Errorf("past the decompression bound: %v", err)
	}
	if _, err := Recompress(nil, in, Codec(5), 0, 0); !errors.Is(err, ErrUnsupportedCodec) {
		t.Errorf("codec 5: %v", err)
	}
	if _, err := Recompress(nil, in[:len(in)-1], CodecGzip, 0, 0); err == nil {
		t.Error("truncated batch accepted")
	}
}

// records copies a batch's records.
func records(t *testing.T, batch []byte) []Record {
	t.Helper()
	var out []Record
	err := Iterate(batch, DefaultMaxDecompressedBytes, func(r *Record) bool {
		c := *r
		c.Key, c.Value = clone(r.Key), clone(r.Value)
		c.Headers = nil
		for _, h := range r.Headers {
			c.Headers = append(c.Headers, RecordHeader{Key: h.Key, Value: clone(h.Value)})
		}
		out = append(out, c)
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}

// Levels are honoured: the fastest and the strongest level of each codec give different
// output for the same input, and every output decompresses to it.
func TestCompressLevel(t *testing.T) {
	words := []string{"offset ", "batch ", "leader ", "epoch ", "record ", "topic ", "12", "7", "\n", "partition "}
	var src []byte
	x := uint32(1)
	for range 20000 {
		x = x*1664525 + 1013904223
		src = append(src, words[x>>28%uint32(len(words))]...)
	}
	for _, tt := range []struct {
		codec        Codec
		fast, strong int
	}{{CodecGzip, 1, 9}, {CodecLZ4, DefaultLZ4Level, 17}, {CodecZstd, -7, 22}} {
		a, err := CompressLevel(tt.codec, tt.fast, nil, src)
		if err != nil {
			t.Fatal(err)
		}
		b, err := CompressLevel(tt.codec, tt.strong, nil, src)
		if err != nil {
			t.Fatal(err)
		}
		if len(a) == len(b) {
			t.Errorf("%s: levels %d and %d both give %d bytes", tt.codec, tt.fast, tt.strong, len(a))
		}
		for _, c := range [][]byte{a, b} {
			got, err := Decompress(tt.codec, c, nil, len(src))
			if err != nil || string(got) != string(src) {
				t.Fatalf("%s: round trip: %v", tt.codec, err)
			}
		}
	}
}

package record

import (
	"fmt"
	"testing"
)

var benchSizes = []struct {
	name string
	size int
}{{"1KiB", 1 << 10}, {"64KiB", 64 << 10}}

// BenchmarkValidate is the produce hot path: every batch a producer sends
// goes through it once. Bytes/s are of the batch as sent (compressed).
func BenchmarkValidate(b *testing.B) {
	for _, c := range allCodecs {
		for _, s := range benchSizes {
			batch := sizedBatch(b, c, s.size)
			b.Run(fmt.Sprintf("%s/%s", c, s.name), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(batch)))
				for b.Loop() {
					if _, err := Validate(batch, ValidateConfig{MaxMessageBytes: 1 << 20}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func BenchmarkAssignOffsets(b *testing.B) {
	for _, s := range benchSizes {
		for _, lat := range []bool{false, true} {
			name := "CreateTime/" + s.name
			if lat {
				name = "LogAppendTime/" + s.name
			}
			batch := sizedBatch(b, CodecNone, s.size)
			b.Run(name, func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(batch)))
				off := int64(0)
				for b.Loop() {
					off++
					ts := int64(-1)
					if lat {
						// A new append time each round, so the CRC is
						// recomputed rather than skipped as unchanged.
						ts = testTime + off
					}
					AssignOffsets(batch, off, 3, ts)
				}
			})
		}
	}
}

func BenchmarkIterate(b *testing.B) {
	for _, c := range []Codec{CodecNone, CodecLZ4, CodecZstd} {
		for _, s := range benchSizes {
			batch := sizedBatch(b, c, s.size)
			b.Run(fmt.Sprintf("%s/%s", c, s.name), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(batch)))
				for b.Loop() {
					n := 0
					err := Iterate(batch, 1<<20, func(r *Record) bool {
						n += len(r.Value)
						return true
					})
					if err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func BenchmarkAppendTo(b *testing.B) {
	for _, c := range allCodecs {
		batch := producerBatch(c, 100)
		b.Run(c.String(), func(b *testing.B) {
			b.ReportAllocs()
			var dst []byte
			for b.Loop() {
				var err error
				if dst, err = batch.AppendTo(dst[:0]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDecompress measures the codecs alone on 64 KiB of records;
// bytes/s are of decompressed output.
func BenchmarkDecompress(b *testing.B) {
	raw := recordsOf(b, sizedBatch(b, CodecNone, 64<<10))
	for _, c := range allCodecs[1:] {
		comp, err := Compress(c, nil, raw)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.String(), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(raw)))
			dst := make([]byte, 0, len(raw))
			for b.Loop() {
				if _, err := Decompress(c, comp, dst, len(raw)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

package record

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
)

const fuzzMaxOut = 1 << 20

// seedBatches are valid batches of every codec and shape, for the fuzz
// corpora: the fuzzer mutates from inside the format, not from noise.
func seedBatches(tb testing.TB) [][]byte {
	var seeds [][]byte
	for _, c := range allCodecs {
		seeds = append(seeds, build(tb, producerBatch(c, 4)))
	}
	seeds = append(seeds,
		xerialBatch(tb, build(tb, producerBatch(CodecNone, 4))),
		build(tb, Batch{Control: true, Transactional: true, ProducerID: 1, BaseSequence: -1,
			Records: []Record{EndTxnMarker(true, 1)}}),
		build(tb, Batch{BaseOffset: 10, LogAppendTime: true, Codec: CodecZstd, ProducerID: -1, BaseSequence: -1,
			Records: []Record{{Offset: 12, Key: []byte("k")}, {Offset: 19, Value: []byte("v")}}}),
	)
	return seeds
}

// configFromFlags spreads the rule sets Validate supports over one byte.
func configFromFlags(flags byte) ValidateConfig {
	cfg := ValidateConfig{
		FromLog:              flags&1 != 0,
		AllowControl:         flags&2 != 0,
		CompactedTopic:       flags&4 != 0,
		TopicLogAppendTime:   flags&8 != 0,
		MaxDecompressedBytes: fuzzMaxOut,
	}
	if flags&16 != 0 {
		cfg.NowMs, cfg.TimestampBeforeMaxMs, cfg.TimestampAfterMaxMs = testTime, 1000, 1000
	}
	if flags&32 != 0 {
		cfg.MaxMessageBytes = 200
	}
	return cfg
}

// FuzzValidate: Validate never panics, and a batch it accepts Iterate
// walks completely, with the offsets the accepted rules promise.
func FuzzValidate(f *testing.F) {
	for _, s := range seedBatches(f) {
		f.Add(s, byte(0))
		f.Add(s, byte(1|64))
		f.Add(s, byte(2|4|16|64))
	}
	f.Fuzz(func(t *testing.T, data []byte, flags byte) {
		cfg := configFromFlags(flags)
		if flags&64 != 0 && len(data) >= HeaderSize {
			// Repair length and CRC so mutations reach the record rules
			// instead of dying at the checksum.
			data = append([]byte(nil), data...)
			binary.BigEndian.PutUint32(data[offBatchLength:], uint32(len(data)-LogOverhead))
			fixCRC(data)
		}
		h, err := Validate(data, cfg)
		if err != nil {
			return
		}
		if h.Size() != len(data) {
			t.Fatalf("accepted %d bytes as a %d-byte batch", len(data), h.Size())
		}
		n := int32(0)
		prev := int64(-1)
		err = Iterate(data, fuzzMaxOut, func(r *Record) bool {
			if r.Offset <= prev || r.Offset > h.LastOffset() || r.Offset < h.BaseOffset {
				t.Fatalf("offset %d after %d outside [%d, %d]", r.Offset, prev, h.BaseOffset, h.LastOffset())
			}
			if !cfg.FromLog && r.Offset != h.BaseOffset+int64(n) {
				t.Fatalf("record %d has offset %d, base %d", n, r.Offset, h.BaseOffset)
			}
			prev = r.Offset
			n++
			return true
		})
		if err != nil {
			t.Fatalf("Validate accepted what Iterate refuses: %v", err)
		}
		if n != h.NumRecords {
			t.Fatalf("iterated %d records, header says %d", n, h.NumRecords)
		}
	})
}

// FuzzIterate: Iterate never panics or runs away on any bytes, and never
// yields more records than the header promises.
func FuzzIterate(f *testing.F) {
	for _, s := range seedBatches(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var n int64
		err := Iterate(data, fuzzMaxOut, func(r *Record) bool {
			n++
			_ = len(r.Key) + len(r.Value) + len(r.Headers)
			return true
		})
		if err == nil {
			h, _ := ParseHeader(data)
			if n != int64(h.NumRecords) {
				t.Fatalf("iterated %d records, header says %d", n, h.NumRecords)
			}
		}
	})
}

// FuzzDecompress: every codec's decoder survives any input, keeps to the
// bound, and what it decodes survives a round trip.
func FuzzDecompress(f *testing.F) {
	src := compressible(300) // small seeds keep minimization quick
	for _, c := range allCodecs {
		comp, err := Compress(c, nil, src)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(byte(c), comp)
	}
	f.Add(byte(CodecSnappy), xerialFrame(src, 100))
	f.Fuzz(func(t *testing.T, codec byte, data []byte) {
		c := Codec(codec % 8)
		out, err := Decompress(c, data, []byte("x"), fuzzMaxOut)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrDecompressedTooLarge) && !errors.Is(err, ErrUnsupportedCodec) {
				t.Fatalf("unmarked error %v", err)
			}
			return
		}
		if len(out)-1 > fuzzMaxOut || out[0] != 'x' {
			t.Fatalf("%d bytes out, bound %d", len(out)-1, fuzzMaxOut)
		}
		comp, err := Compress(c, nil, out[1:])
		if err != nil {
			t.Fatal(err)
		}
		again, err := Decompress(c, comp, nil, fuzzMaxOut)
		if err != nil || !bytes.Equal(again, out[1:]) {
			t.Fatalf("round trip of decoded output: %v", err)
		}
	})
}

// FuzzForEachBatch: the batches it yields tile the input exactly.
func FuzzForEachBatch(f *testing.F) {
	seeds := seedBatches(f)
	f.Add(bytes.Join(seeds, nil))
	f.Add(seeds[0])
	f.Fuzz(func(t *testing.T, data []byte) {
		total := 0
		err := ForEachBatch(data, func(batch []byte, h Header) error {
			if len(batch) != h.Size() {
				t.Fatalf("batch of %d bytes, header size %d", len(batch), h.Size())
			}
			total += len(batch)
			return nil
		})
		if err == nil && total != len(data) {
			t.Fatalf("walked %d of %d bytes", total, len(data))
		}
		if err != nil && !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrTruncated) && !errors.Is(err, ErrUnsupportedMagic) {
			t.Fatalf("unmarked error %v", err)
		}
	})
}

// FuzzParseEndTxnMarker: what parses re-encodes to a marker that parses
// the same.
func FuzzParseEndTxnMarker(f *testing.F) {
	r := EndTxnMarker(true, 5)
	f.Add(r.Key, r.Value)
	f.Fuzz(func(t *testing.T, key, value []byte) {
		commit, epoch, err := ParseEndTxnMarker(key, value)
		if err != nil {
			return
		}
		m := EndTxnMarker(commit, epoch)
		c2, e2, err := ParseEndTxnMarker(m.Key, m.Value)
		if err != nil || c2 != commit || e2 != epoch {
			t.Fatalf("re-encoded marker parses as %v %d %v", c2, e2, err)
		}
	})
}

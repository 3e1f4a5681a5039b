package record

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"testing"
)

// craftRecords encodes records with the offset deltas given, bypassing
// the checks AppendTo makes, to build batches a buggy producer could send.
func craftRecords(deltas ...int32) []byte {
	var out []byte
	for _, d := range deltas {
		out = appendRecord(out, &Record{Key: []byte("k"), Value: []byte("v")}, d, 0)
	}
	return out
}

func setU32(off int, v uint32) func([]byte) []byte {
	return func(b []byte) []byte {
		binary.BigEndian.PutUint32(b[off:], v)
		return fixCRC(b)
	}
}

func TestValidate(t *testing.T) {
	good := func() []byte { return build(t, producerBatch(CodecNone, 5)) }
	goodZstd := func() []byte { return build(t, producerBatch(CodecZstd, 5)) }
	compressed := func(codec Codec, records []byte) []byte {
		comp, err := Compress(codec, nil, records)
		if err != nil {
			t.Fatal(err)
		}
		return rewrap(good(), codec, comp)
	}
	cases := []struct {
		name  string
		batch []byte
		cfg   ValidateConfig
		want  error // nil: accepted
	}{
		{"good", good(), ValidateConfig{}, nil},
		{"good zstd", goodZstd(), ValidateConfig{}, nil},
		{"at max.message.bytes", good(), ValidateConfig{MaxMessageBytes: len(good())}, nil},
		{"over max.message.bytes", good(), ValidateConfig{MaxMessageBytes: len(good()) - 1}, ErrTooLarge},

		// Framing.
		{"empty", nil, ValidateConfig{}, ErrTruncated},
		{"partial header", good()[:30], ValidateConfig{}, ErrTruncated},
		{"truncated", good()[:len(good())-1], ValidateConfig{}, ErrTruncated},
		{"length claims more", setU32(offBatchLength, uint32(len(good())))(good()), ValidateConfig{}, ErrTruncated},
		{"length claims less", setU32(offBatchLength, uint32(len(good())-LogOverhead-1))(good()), ValidateConfig{}, ErrCorrupt},
		{"length below header", setU32(offBatchLength, 48)(good()), ValidateConfig{}, ErrCorrupt},
		{"negative length", setU32(offBatchLength, math.MaxUint32)(good()), ValidateConfig{}, ErrCorrupt},
		{"two batches", append(good(), good()...), ValidateConfig{}, ErrInvalidRecord},
		{"bad magic", func() []byte { b := good(); b[offMagic] = 1; return b }(), ValidateConfig{}, ErrUnsupportedMagic},
		{"bad crc", func() []byte { b := good(); b[len(b)-1] ^= 1; return b }(), ValidateConfig{}, ErrCorrupt},
		{"bad stored crc", func() []byte { b := good(); b[offCRC] ^= 1; return b }(), ValidateConfig{}, ErrCorrupt},

		// Batch rules of LogValidator.validateBatch.
		{"base offset not 0", func() []byte { b := good(); SetBaseOffset(b, 5); return b }(), ValidateConfig{}, ErrInvalidRecord},
		{"base offset from log", func() []byte { b := good(); SetBaseOffset(b, 5); return b }(), ValidateConfig{FromLog: true}, nil},
		{"count above range", setU32(offNumRecords, 6)(good()), ValidateConfig{}, ErrInvalidRecord},
		{"count below range", setU32(offNumRecords, 4)(good()), ValidateConfig{}, ErrInvalidRecord},
		{"last delta mismatch", setU32(offLastOffsetDelta, 5)(good()), ValidateConfig{}, ErrInvalidRecord},
		{"empty batch", rewrap(setU32(offLastOffsetDelta, math.MaxUint32)(setU32(offNumRecords, 0)(good())), CodecNone, nil), ValidateConfig{}, ErrInvalidRecord},
		{"negative count", setU32(offNumRecords, math.MaxUint32)(good()), ValidateConfig{}, ErrInvalidRecord},
		{"sequence missing", func() []byte {
			b := producerBatch(CodecNone, 2)
			b.ProducerID = 7
			return build(t, b)
		}(), ValidateConfig{}, ErrInvalidRecord},
		{"unknown codec", rewrap(good(), 5, good()[HeaderSize:]), ValidateConfig{}, ErrUnsupportedCodec},
		{"codec 7", rewrap(good(), 7, good()[HeaderSize:]), ValidateConfig{}, ErrUnsupportedCodec},
		{"control from client", controlBatch(t), ValidateConfig{}, ErrControlFromClient},
		{"control is invalid record", controlBatch(t), ValidateConfig{}, ErrInvalidRecord},
		{"control allowed", controlBatch(t), ValidateConfig{AllowControl: true}, nil},
		{"control from log", controlBatch(t), ValidateConfig{FromLog: true}, nil},

		// Records.
		{"deltas out of order", rewrap(setU32(offNumRecords, 2)(setU32(offLastOffsetDelta, 1)(good())), CodecNone, craftRecords(1, 0)), ValidateConfig{}, ErrInvalidRecord},
		{"deltas with a gap", rewrap(setU32(offNumRecords, 3)(setU32(offLastOffsetDelta, 2)(good())), CodecNone, craftRecords(0, 2, 2)), ValidateConfig{}, ErrInvalidRecord},
		{"compressed bad deltas", compressed(CodecZstd, craftRecords(0, 1, 3, 2, 4)), ValidateConfig{}, ErrInvalidRecord},
		{"repeated delta from log", rewrap(setU32(offNumRecords, 2)(setU32(offLastOffsetDelta, 1)(good())), CodecNone, craftRecords(0, 0)), ValidateConfig{FromLog: true}, ErrCorrupt},
		{"delta past range from log", rewrap(setU32(offNumRecords, 2)(setU32(offLastOffsetDelta, 1)(good())), CodecNone, craftRecords(0, 2)), ValidateConfig{FromLog: true}, ErrCorrupt},
		{"compacted from log", rewrap(setU32(offNumRecords, 2)(setU32(offLastOffsetDelta, 9)(good())), CodecNone, craftRecords(3, 9)), ValidateConfig{FromLog: true}, nil},
		{"emptied by compaction", rewrap(setU32(offNumRecords, 0)(good()), CodecNone, nil), ValidateConfig{FromLog: true}, nil},
		{"fewer records than count", rewrap(good(), CodecNone, craftRecords(0, 1, 2, 3)), ValidateConfig{}, ErrInvalidRecord},
		{"bytes after last record", rewrap(good(), CodecNone, append(craftRecords(0, 1, 2, 3, 4), 0)), ValidateConfig{}, ErrInvalidRecord},
		{"malformed record from log", rewrap(good(), CodecNone, craftRecords(0, 1, 2, 3)), ValidateConfig{FromLog: true}, ErrCorrupt},
		{"garbage records", rewrap(good(), CodecNone, bytes.Repeat([]byte{0xff}, 40)), ValidateConfig{}, ErrInvalidRecord},
		{"garbage compressed", rewrap(good(), CodecGzip, bytes.Repeat([]byte{0xff}, 40)), ValidateConfig{}, ErrCorrupt},
		{"garbage zstd", rewrap(good(), CodecZstd, []byte{0x28, 0xb5, 0x2f, 0xfd, 0, 0, 1, 2, 3}), ValidateConfig{}, ErrCorrupt},
		{"decompressed too large", goodZstd(), ValidateConfig{MaxDecompressedBytes: 100}, ErrDecompressedTooLarge},
		{"decompressed too large is too large", goodZstd(), ValidateConfig{MaxDecompressedBytes: 100}, ErrTooLarge},
		{"no key on compacted topic", good(), ValidateConfig{CompactedTopic: true}, ErrInvalidRecord},
		{"keys on compacted topic", keyedBatch(t), ValidateConfig{CompactedTopic: true}, nil},

		// Timestamps (LogValidator.validateTimestamp).
		{"timestamps in window", good(), ValidateConfig{NowMs: testTime, TimestampBeforeMaxMs: 100, TimestampAfterMaxMs: 100}, nil},
		{"timestamp too old", good(), ValidateConfig{NowMs: testTime + 1000, TimestampBeforeMaxMs: 100, TimestampAfterMaxMs: 100}, ErrInvalidTimestamp},
		{"timestamp too new", good(), ValidateConfig{NowMs: testTime - 1000, TimestampBeforeMaxMs: 100, TimestampAfterMaxMs: 100}, ErrInvalidTimestamp},
		{"unbounded window", good(), ValidateConfig{NowMs: 1, TimestampBeforeMaxMs: math.MaxInt64, TimestampAfterMaxMs: math.MaxInt64}, nil},
		{"producer set LogAppendTime on LogAppendTime topic", latBatch(t, testTime), ValidateConfig{TopicLogAppendTime: true}, ErrInvalidTimestamp},
		{"producer set LogAppendTime, timestamp -1", latBatch(t, -1), ValidateConfig{}, ErrInvalidTimestamp},
		{"producer set LogAppendTime, CreateTime topic", latBatch(t, testTime), ValidateConfig{}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Validate(c.batch, c.cfg)
			if c.want == nil {
				if err != nil {
					t.Fatalf("rejected: %v", err)
				}
				return
			}
			if !errors.Is(err, c.want) {
				t.Fatalf("err %v, want %v", err, c.want)
			}
		})
	}
}

func controlBatch(t *testing.T) []byte {
	return build(t, Batch{
		Control: true, Transactional: true, ProducerID: 5, ProducerEpoch: 1, BaseSequence: -1,
		Records: []Record{EndTxnMarker(true, 3)},
	})
}

func keyedBatch(t *testing.T) []byte {
	b := producerBatch(CodecSnappy, 5)
	for i := range b.Records {
		b.Records[i].Key = []byte("k")
	}
	return build(t, b)
}

// latBatch is a producer batch with the LogAppendTime bit set by mistake.
func latBatch(t *testing.T, ts int64) []byte {
	b := producerBatch(CodecNone, 3)
	b.LogAppendTime = true
	for i := range b.Records {
		b.Records[i].Timestamp = ts
	}
	return build(t, b)
}

// TestValidateRecordError: record failures carry the record's index.
func TestValidateRecordError(t *testing.T) {
	b := producerBatch(CodecLZ4, 6)
	b.Records[4].Timestamp = 0 // far outside the window
	_, err := Validate(build(t, b), ValidateConfig{NowMs: testTime, TimestampBeforeMaxMs: 3600_000, TimestampAfterMaxMs: 3600_000})
	var re *RecordError
	if !errors.As(err, &re) || re.BatchIndex != 4 || !errors.Is(err, ErrInvalidTimestamp) {
		t.Fatalf("err %v, want a RecordError at index 4", err)
	}
}

func TestForEachBatch(t *testing.T) {
	a, b := build(t, producerBatch(CodecNone, 2)), build(t, producerBatch(CodecGzip, 3))
	set := append(append([]byte(nil), a...), b...)
	badLength := make([]byte, 70) // magic 2, batch length 0
	badLength[offMagic] = Magic
	cases := []struct {
		name  string
		set   []byte
		sizes []int
		want  error
	}{
		{"empty", nil, nil, nil},
		{"two", set, []int{len(a), len(b)}, nil},
		{"partial header", set[:len(a)+20], []int{len(a)}, ErrTruncated},
		{"partial batch", set[:len(set)-1], []int{len(a)}, ErrTruncated},
		{"bad length", append(append([]byte(nil), a...), badLength...), []int{len(a)}, ErrCorrupt},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var sizes []int
			err := ForEachBatch(c.set, func(batch []byte, h Header) error {
				if len(batch) != h.Size() || cap(batch) != len(batch) {
					t.Errorf("batch len %d cap %d, header size %d", len(batch), cap(batch), h.Size())
				}
				sizes = append(sizes, len(batch))
				return nil
			})
			if (c.want == nil && err != nil) || !errors.Is(err, c.want) {
				t.Fatalf("err %v, want %v", err, c.want)
			}
			if len(sizes) != len(c.sizes) {
				t.Fatalf("sizes %v, want %v", sizes, c.sizes)
			}
		})
	}
	stop := errors.New("stop")
	if err := ForEachBatch(set, func([]byte, Header) error { return stop }); err != stop {
		t.Errorf("fn error %v, want it returned as is", err)
	}
}

// EachRecord sees every record of a valid batch, compressed or not, with
// its key and value, and none past the first invalid one.
func TestValidateEachRecord(t *testing.T) {
	for _, codec := range []Codec{CodecNone, CodecZstd} {
		b := producerBatch(codec, 5)
		var seen []int
		_, err := Validate(build(t, b), ValidateConfig{EachRecord: func(i int, key, value []byte) {
			if !bytes.Equal(key, b.Records[i].Key) || !bytes.Equal(value, b.Records[i].Value) {
				t.Errorf("%s record %d: %q %q", codec, i, key, value)
			}
			seen = append(seen, i)
		}})
		if err != nil || len(seen) != 5 || seen[4] != 4 {
			t.Errorf("%s: %v, seen %v", codec, err, seen)
		}
	}
	keyless := producerBatch(CodecNone, 3)
	keyless.Records[1].Key = nil
	var seen []int
	_, err := Validate(build(t, keyless), ValidateConfig{CompactedTopic: true, EachRecord: func(i int, _, _ []byte) { seen = append(seen, i) }})
	if !errors.Is(err, ErrInvalidRecord) || len(seen) != 1 {
		t.Errorf("keyless record on a compacted topic: %v, seen %v", err, seen)
	}
}

package record

import (
	"bytes"
	"errors"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

// TestRoundTrip: Build -> Validate -> Iterate gives back the records, for
// every codec and for xerial-framed snappy.
func TestRoundTrip(t *testing.T) {
	type tc struct {
		name  string
		batch []byte
	}
	var cases []tc
	for _, c := range allCodecs {
		cases = append(cases, tc{c.String(), build(t, producerBatch(c, 40))})
	}
	cases = append(cases, tc{"snappy-xerial", xerialBatch(t, build(t, producerBatch(CodecNone, 40)))})
	want := testRecords(0, 40)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, err := Validate(c.batch, ValidateConfig{MaxMessageBytes: 1 << 20})
			if err != nil {
				t.Fatalf("Validate: %v", err)
			}
			if h.NumRecords != 40 || h.LastOffsetDelta != 39 || h.BaseTimestamp != want[0].Timestamp {
				t.Fatalf("header %+v", h)
			}
			if h.MaxTimestamp != testTime+13 {
				t.Errorf("MaxTimestamp %d, want %d", h.MaxTimestamp, testTime+13)
			}
			if diff := cmp.Diff(want, collect(t, c.batch)); diff != "" {
				t.Errorf("records (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBuildHeaderFields(t *testing.T) {
	b := Batch{
		BaseOffset:           1000,
		PartitionLeaderEpoch: 7,
		Codec:                CodecLZ4,
		LogAppendTime:        true,
		Transactional:        true,
		ProducerID:           42,
		ProducerEpoch:        3,
		BaseSequence:         17,
		// A compacted batch: offsets with gaps, timestamps out of order.
		Records: []Record{
			{Offset: 1002, Timestamp: 50, Key: []byte("a")},
			{Offset: 1005, Timestamp: 90, Key: []byte("b")},
			{Offset: 1009, Timestamp: 70, Key: []byte("c")},
		},
	}
	batch := build(t, b)
	h, err := Validate(batch, ValidateConfig{FromLog: true})
	if err != nil {
		t.Fatal(err)
	}
	want := Header{
		BaseOffset: 1000, BatchLength: int32(len(batch) - LogOverhead), PartitionLeaderEpoch: 7,
		Magic: 2, CRC: ComputeCRC(batch), Attributes: int16(CodecLZ4) | TimestampTypeMask | TransactionalMask,
		LastOffsetDelta: 9, BaseTimestamp: 50, MaxTimestamp: 90,
		ProducerID: 42, ProducerEpoch: 3, BaseSequence: 17, NumRecords: 3,
	}
	if diff := cmp.Diff(want, h); diff != "" {
		t.Errorf("header (-want +got):\n%s", diff)
	}
	var offsets, stamps []int64
	if err := Iterate(batch, 1<<20, func(r *Record) bool {
		offsets = append(offsets, r.Offset)
		stamps = append(stamps, r.Timestamp)
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int64{1002, 1005, 1009}, offsets); diff != "" {
		t.Errorf("offsets: %s", diff)
	}
	// LogAppendTime: every record reports MaxTimestamp.
	if diff := cmp.Diff([]int64{90, 90, 90}, stamps); diff != "" {
		t.Errorf("timestamps: %s", diff)
	}
}

func TestBuildErrors(t *testing.T) {
	rec := func(off int64) Record { return Record{Offset: off} }
	cases := []struct {
		name string
		b    Batch
		want error
	}{
		{"no records", Batch{}, ErrInvalidRecord},
		{"codec 5", Batch{Codec: 5, Records: []Record{rec(0)}}, ErrUnsupportedCodec},
		{"codec -1", Batch{Codec: -1, Records: []Record{rec(0)}}, ErrUnsupportedCodec},
		{"offset below base", Batch{BaseOffset: 10, Records: []Record{rec(9)}}, ErrInvalidRecord},
		{"offsets not increasing", Batch{Records: []Record{rec(0), rec(2), rec(2)}}, ErrInvalidRecord},
		{"delta past int32", Batch{Records: []Record{rec(0), rec(math.MaxInt32 + 1)}}, ErrInvalidRecord},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dst := []byte("prefix")
			out, err := c.b.AppendTo(dst)
			if !errors.Is(err, c.want) {
				t.Fatalf("err %v, want %v", err, c.want)
			}
			if !bytes.Equal(out, dst) {
				t.Errorf("dst changed on error: %q", out)
			}
		})
	}
}

// TestAppendToAppends: AppendTo keeps what dst held and batches can be
// appended back to back into one record set.
func TestAppendToAppends(t *testing.T) {
	var set []byte
	var err error
	for i, c := range allCodecs {
		b := producerBatch(c, 3)
		b.BaseOffset = int64(i * 3)
		for j := range b.Records {
			b.Records[j].Offset += b.BaseOffset
		}
		if set, err = b.AppendTo(set); err != nil {
			t.Fatal(err)
		}
	}
	var next int64
	err = ForEachBatch(set, func(batch []byte, h Header) error {
		if h.BaseOffset != next {
			t.Errorf("base offset %d, want %d", h.BaseOffset, next)
		}
		next = h.NextOffset()
		_, err := Validate(batch, ValidateConfig{FromLog: true})
		return err
	})
	if err != nil || next != int64(3*len(allCodecs)) {
		t.Fatalf("ForEachBatch: %v, next %d", err, next)
	}
}

// TestRapidRoundTrip: any batch AppendTo encodes, Validate accepts as log
// data and Iterate returns unchanged.
func TestRapidRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		b := rapidBatch(t)
		batch, err := b.AppendTo(nil)
		if err != nil {
			t.Fatalf("AppendTo: %v", err)
		}
		if _, err := Validate(batch, ValidateConfig{FromLog: true}); err != nil {
			t.Fatalf("Validate: %v", err)
		}
		got := collect(t, batch)
		want := b.Records
		if b.LogAppendTime {
			want = append([]Record(nil), want...)
			maxTs := want[0].Timestamp
			for _, r := range want {
				maxTs = max(maxTs, r.Timestamp)
			}
			for i := range want {
				want[i].Timestamp = maxTs
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("records (-want +got):\n%s", diff)
		}
	})
}

func rapidBatch(t *rapid.T) Batch {
	b := Batch{
		BaseOffset:    rapid.Int64Range(0, math.MaxInt64/2).Draw(t, "base"),
		Codec:         Codec(rapid.IntRange(0, 4).Draw(t, "codec")),
		LogAppendTime: rapid.Bool().Draw(t, "lat"),
		ProducerID:    rapid.Int64Range(-1, 1<<40).Draw(t, "pid"),
		ProducerEpoch: rapid.Int16().Draw(t, "epoch"),
		BaseSequence:  rapid.Int32().Draw(t, "seq"),
	}
	n := rapid.IntRange(1, 20).Draw(t, "n")
	off := b.BaseOffset
	baseTs := rapid.Int64Range(-1, 1<<45).Draw(t, "ts")
	bytesOrNil := func(label string) []byte {
		if rapid.Bool().Draw(t, label+"-null") {
			return nil
		}
		return rapid.SliceOfN(rapid.Byte(), 0, 64).Draw(t, label)
	}
	for i := range n {
		off += rapid.Int64Range(1, 1000).Draw(t, "gap")
		if i == 0 {
			off = b.BaseOffset + rapid.Int64Range(0, 5).Draw(t, "first")
		}
		r := Record{
			Offset:     off,
			Timestamp:  baseTs + rapid.Int64Range(-1e6, 1e6).Draw(t, "dts"),
			Attributes: rapid.Int8().Draw(t, "attrs"),
			Key:        bytesOrNil("key"),
			Value:      bytesOrNil("value"),
		}
		for range rapid.IntRange(0, 3).Draw(t, "headers") {
			r.Headers = append(r.Headers, RecordHeader{
				Key:   rapid.String().Draw(t, "hkey"),
				Value: bytesOrNil("hvalue"),
			})
		}
		b.Records = append(b.Records, r)
	}
	return b
}

// TestBuildDeleteHorizon: a batch stamped with a delete horizon (KIP-534)
// carries it as its base timestamp with the attribute set, and its records
// keep their own timestamps, with any codec.
func TestBuildDeleteHorizon(t *testing.T) {
	for _, c := range allCodecs {
		t.Run(c.String(), func(t *testing.T) {
			recs := []Record{
				{Offset: 10, Timestamp: 5000, Key: []byte("a")},
				{Offset: 12, Timestamp: 4000, Key: []byte("b")},
			}
			b := Batch{BaseOffset: 10, Codec: c, ProducerID: NoProducerID, ProducerEpoch: NoProducerEpoch, BaseSequence: NoSequence,
				DeleteHorizonMs: 86_405_000, Records: recs}
			batch := build(t, b)
			h, err := Validate(batch, ValidateConfig{FromLog: true})
			if err != nil {
				t.Fatal(err)
			}
			if ms, ok := h.DeleteHorizonMs(); !ok || ms != 86_405_000 {
				t.Errorf("DeleteHorizonMs %d %v, want 86405000 true", ms, ok)
			}
			if h.MaxTimestamp != 5000 {
				t.Errorf("MaxTimestamp %d, want 5000", h.MaxTimestamp)
			}
			if diff := cmp.Diff(recs, collect(t, batch)); diff != "" {
				t.Errorf("records (-want +got):\n%s", diff)
			}
			plain := build(t, Batch{BaseOffset: 10, Codec: c, ProducerID: NoProducerID, ProducerEpoch: NoProducerEpoch, BaseSequence: NoSequence, Records: recs})
			if h, _ := ParseHeader(plain); h.Attributes&DeleteHorizonSetMask != 0 {
				t.Errorf("a batch without a horizon has the attribute")
			} else if _, ok := h.DeleteHorizonMs(); ok {
				t.Errorf("a batch without a horizon reports one")
			}
		})
	}
}

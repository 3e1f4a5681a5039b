package storage

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/samsa-io/samsa/internal/record"
)

const compactTestMaxDecompressed = 1 << 20

// kv is a record to write in a compaction test: value "" with del set is a
// tombstone, an empty key with nokey set has no key.
type kv struct {
	key, value string
	del, nokey bool
}

func (r kv) record(offset, ts int64) record.Record {
	rec := record.Record{Offset: offset, Timestamp: ts, Key: []byte(r.key), Value: []byte(r.value)}
	if r.del {
		rec.Value = nil
	}
	if r.nokey {
		rec.Key = nil
	}
	return rec
}

// buildCompactBatch builds b with recs with records at offsets base.., timestamps ts...
func buildCompactBatch(t fataler, b record.Batch, ts int64, recs ...kv) []byte {
	for i, r := range recs {
		b.Records = append(b.Records, r.record(b.BaseOffset+int64(i), ts+int64(i)))
	}
	out, err := b.AppendTo(nil)
	if err != nil {
		t.Fatalf("build batch: %v", err)
	}
	return out
}

func plainBatch(base int64) record.Batch {
	return record.Batch{BaseOffset: base, ProducerID: record.NoProducerID,
		ProducerEpoch: record.NoProducerEpoch, BaseSequence: record.NoSequence}
}

// mapOf builds an offset map over every keyed record of segment.
func mapOf(t fataler, segment []byte) *offsetMap {
	m, err := newOffsetMap(1<<16, defaultOffsetMapLoadFactor)
	if err != nil {
		t.Fatalf("%v", err)
	}
	err = record.ForEachBatch(segment, func(batch []byte, h record.Header) error {
		if h.IsControl() {
			return nil
		}
		return record.Iterate(batch, compactTestMaxDecompressed, func(r *record.Record) bool {
			if r.Key != nil {
				m.Put(r.Key, r.Offset)
			}
			return true
		})
	})
	if err != nil {
		t.Fatalf("build map: %v", err)
	}
	return m
}

// outBatch is a cleaned batch as the tests see it.
type outBatch struct {
	Base, Last int64
	Codec      record.Codec
	Producer   int64
	Sequence   int32
	Control    bool
	Horizon    int64    // the delete horizon stamped, 0 if none
	Records    []string // "offset key=value", value "<nil>" for a tombstone
}

// decodeCompacted checks every batch of out (CRC, iteration, offsets strictly
// increasing and inside the batch's range) and describes them.
func decodeCompacted(t fataler, out []byte) []outBatch {
	var got []outBatch
	prev := int64(-1)
	err := record.ForEachBatch(out, func(batch []byte, h record.Header) error {
		if err := record.CheckCRC(batch); err != nil {
			return err
		}
		ob := outBatch{Base: h.BaseOffset, Last: h.LastOffset(), Codec: h.Codec(),
			Producer: h.ProducerID, Sequence: h.BaseSequence, Control: h.IsControl()}
		ob.Horizon, _ = h.DeleteHorizonMs()
		err := record.Iterate(batch, compactTestMaxDecompressed, func(r *record.Record) bool {
			if r.Offset <= prev || r.Offset < h.BaseOffset || r.Offset > h.LastOffset() {
				t.Fatalf("record offset %d after %d in batch [%d, %d]", r.Offset, prev, h.BaseOffset, h.LastOffset())
			}
			prev = r.Offset
			v := "<nil>"
			if r.Value != nil {
				v = string(r.Value)
			}
			ob.Records = append(ob.Records, fmt.Sprintf("%d %s=%s", r.Offset, r.Key, v))
			return true
		})
		if err != nil {
			return err
		}
		if int(h.NumRecords) != len(ob.Records) {
			return fmt.Errorf("batch %d: NumRecords %d, iterated %d", h.BaseOffset, h.NumRecords, len(ob.Records))
		}
		prev = max(prev, h.LastOffset())
		got = append(got, ob)
		return nil
	})
	if err != nil {
		t.Fatalf("decode compacted output: %v", err)
	}
	return got
}

func TestCompactBatches(t *testing.T) {
	idem := record.Batch{BaseOffset: 20, ProducerID: 7, ProducerEpoch: 2, BaseSequence: 40}
	txn := record.Batch{BaseOffset: 30, ProducerID: 9, ProducerEpoch: 0, BaseSequence: 0, Transactional: true}
	marker := record.Batch{BaseOffset: 33, ProducerID: 9, ProducerEpoch: 0, BaseSequence: -1,
		Transactional: true, Control: true, Records: []record.Record{record.EndTxnMarker(false, 1)}}
	marker.Records[0].Offset, marker.Records[0].Timestamp = 33, 100
	markerBytes, err := marker.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	stampedMarker := marker
	stampedMarker.DeleteHorizonMs = 1000
	stampedMarkerBytes, err := stampedMarker.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	markerRec := fmt.Sprintf("33 %s=%s", marker.Records[0].Key, marker.Records[0].Value)
	always := func(int64, int64) bool { return true }
	done := func(int64) bool { return true }
	stamped := func(b record.Batch, ms int64) record.Batch { b.DeleteHorizonMs = ms; return b }
	// Passes run at 1000 ms with delete.retention.ms 50.
	at := func(o compactOptions) compactOptions { o.NowMs, o.DeleteRetentionMs = 1000, 50; return o }

	for _, tc := range []struct {
		name string
		// segment is cleaned with a map over segment and then dirty.
		segment, dirty []byte
		opts           compactOptions
		want           []outBatch
	}{
		{
			name:    "latest per key kept, gaps, offsets and producer fields preserved",
			segment: buildCompactBatch(t, idem, 100, kv{key: "a", value: "1"}, kv{key: "b", value: "1"}, kv{key: "a", value: "2"}, kv{key: "c", value: "1"}, kv{key: "b", value: "2"}, kv{key: "x", value: "old"}),
			dirty:   buildCompactBatch(t, plainBatch(50), 200, kv{key: "b", value: "3"}, kv{key: "x", value: "new"}),
			opts:    at(compactOptions{}),
			want: []outBatch{{Base: 20, Last: 25, Producer: 7, Sequence: 40,
				Records: []string{"22 a=2", "23 c=1"}}},
		},
		{
			name:    "nothing to drop: copied",
			segment: buildCompactBatch(t, plainBatch(0), 100, kv{key: "a", value: "1"}, kv{key: "b", value: "1"}),
			opts:    at(compactOptions{}),
			want:    []outBatch{{Base: 0, Last: 1, Producer: -1, Sequence: -1, Records: []string{"0 a=1", "1 b=1"}}},
		},
		{
			name:    "tombstone seen first: kept and stamped with now + delete.retention.ms",
			segment: buildCompactBatch(t, plainBatch(0), 100, kv{key: "a", value: "1"}, kv{key: "a", del: true}),
			opts:    at(compactOptions{}),
			want:    []outBatch{{Base: 0, Last: 1, Producer: -1, Sequence: -1, Horizon: 1050, Records: []string{"1 a=<nil>"}}},
		},
		{
			name:    "tombstone with an old timestamp is stamped too, not dropped",
			segment: buildCompactBatch(t, plainBatch(0), 1, kv{key: "a", del: true}),
			opts:    at(compactOptions{}),
			want:    []outBatch{{Base: 0, Last: 0, Producer: -1, Sequence: -1, Horizon: 1050, Records: []string{"0 a=<nil>"}}},
		},
		{
			name:    "stamped tombstone before its horizon: copied",
			segment: buildCompactBatch(t, stamped(plainBatch(0), 1001), 100, kv{key: "b", value: "1"}, kv{key: "a", del: true}),
			opts:    at(compactOptions{}),
			want:    []outBatch{{Base: 0, Last: 1, Producer: -1, Sequence: -1, Horizon: 1001, Records: []string{"0 b=1", "1 a=<nil>"}}},
		},
		{
			name:    "stamped tombstone past its horizon dropped, the batch keeps its horizon",
			segment: buildCompactBatch(t, stamped(plainBatch(0), 1000), 100, kv{key: "b", value: "1"}, kv{key: "a", del: true}),
			opts:    at(compactOptions{}),
			want:    []outBatch{{Base: 0, Last: 1, Producer: -1, Sequence: -1, Horizon: 1000, Records: []string{"0 b=1"}}},
		},
		{
			name:    "stamped tombstone past its horizon but beyond the mapped end: kept",
			segment: buildCompactBatch(t, stamped(plainBatch(10), 900), 100, kv{key: "a", del: true}),
			opts:    at(compactOptions{MapEnd: 10}),
			want:    []outBatch{{Base: 10, Last: 10, Producer: -1, Sequence: -1, Horizon: 900, Records: []string{"10 a=<nil>"}}},
		},
		{
			name:    "keyless records dropped",
			segment: buildCompactBatch(t, plainBatch(0), 100, kv{nokey: true, value: "1"}, kv{key: "a", value: "1"}),
			opts:    at(compactOptions{}),
			want:    []outBatch{{Base: 0, Last: 1, Producer: -1, Sequence: -1, Records: []string{"1 a=1"}}},
		},
		{
			name:    "aborted transaction dropped; its marker, now done, stamped",
			segment: append(buildCompactBatch(t, txn, 90, kv{key: "a", value: "t"}), markerBytes...),
			opts:    at(compactOptions{DropAborted: always, MarkerDone: done}),
			want:    []outBatch{{Base: 33, Last: 33, Producer: 9, Sequence: -1, Control: true, Horizon: 1050, Records: []string{markerRec}}},
		},
		{
			name:    "aborted transaction, last batch of its producer: empty header kept",
			segment: buildCompactBatch(t, txn, 90, kv{key: "a", value: "t"}, kv{key: "b", value: "t"}),
			opts:    at(compactOptions{DropAborted: always, LastBatchOfProducer: always}),
			want:    []outBatch{{Base: 30, Last: 31, Producer: 9, Sequence: 0}},
		},
		{
			name:    "marker of a transaction with data: copied, not stamped",
			segment: markerBytes,
			opts:    at(compactOptions{}),
			want:    []outBatch{{Base: 33, Last: 33, Producer: 9, Sequence: -1, Control: true, Records: []string{markerRec}}},
		},
		{
			name:    "stamped marker past its horizon kept while its transaction has data",
			segment: stampedMarkerBytes,
			opts:    at(compactOptions{}),
			want:    []outBatch{{Base: 33, Last: 33, Producer: 9, Sequence: -1, Control: true, Horizon: 1000, Records: []string{markerRec}}},
		},
		{
			name:    "stamped marker past its horizon dropped once done",
			segment: stampedMarkerBytes,
			opts:    at(compactOptions{MarkerDone: done}),
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The map covers the segment being cleaned and the dirty section after it.
			m := mapOf(t, append(bytes.Clone(tc.segment), tc.dirty...))
			tc.opts.MaxDecompressed = compactTestMaxDecompressed
			out, err := compactBatches([]byte("prefix"), tc.segment, m, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(out, []byte("prefix")) {
				t.Fatal("dst prefix lost")
			}
			got := decodeCompacted(t, out[len("prefix"):])
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("cleaned batches (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCompactBatchesUntouchedIsCopied(t *testing.T) {
	seg := buildCompactBatch(t, record.Batch{BaseOffset: 5, Codec: record.CodecZstd, ProducerID: 1, BaseSequence: 3},
		100, kv{key: "a", value: "1"}, kv{key: "b", value: "2"})
	out, err := compactBatches(nil, seg, mapOf(t, seg), compactOptions{MaxDecompressed: compactTestMaxDecompressed})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, seg) {
		t.Fatal("a batch that lost nothing was rewritten")
	}
}

func TestCompactBatchesKeepsCodec(t *testing.T) {
	for _, codec := range []record.Codec{record.CodecNone, record.CodecGzip, record.CodecSnappy, record.CodecLZ4, record.CodecZstd} {
		t.Run(codec.String(), func(t *testing.T) {
			b := plainBatch(100)
			b.Codec = codec
			seg := buildCompactBatch(t, b, 100, kv{key: "a", value: "1"}, kv{key: "b", value: "1"}, kv{key: "a", value: "2"})
			out, err := compactBatches(nil, seg, mapOf(t, seg), compactOptions{MaxDecompressed: compactTestMaxDecompressed})
			if err != nil {
				t.Fatal(err)
			}
			want := []outBatch{{Base: 100, Last: 102, Codec: codec, Producer: -1, Sequence: -1,
				Records: []string{"101 b=1", "102 a=2"}}}
			if diff := cmp.Diff(want, decodeCompacted(t, out)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestCompactBatchesHeadersAndLogAppendTime(t *testing.T) {
	b := plainBatch(0)
	b.LogAppendTime = true
	b.Records = []record.Record{
		{Offset: 0, Key: []byte("a"), Value: []byte("1"), Headers: []record.RecordHeader{{Key: "h", Value: []byte("x")}}},
		{Offset: 1, Key: []byte("a"), Value: []byte("2"), Headers: []record.RecordHeader{{Key: "h", Value: []byte("y")}, {Key: "n"}}},
	}
	for i := range b.Records {
		b.Records[i].Timestamp = 500
	}
	seg, err := b.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	out, err := compactBatches(nil, seg, mapOf(t, seg), compactOptions{MaxDecompressed: compactTestMaxDecompressed})
	if err != nil {
		t.Fatal(err)
	}
	h, err := record.ParseHeader(out)
	if err != nil {
		t.Fatal(err)
	}
	if !h.LogAppendTime() || h.MaxTimestamp != 500 || h.LastOffsetDelta != 1 || h.NumRecords != 1 {
		t.Fatalf("header %+v", h)
	}
	var got []record.RecordHeader
	err = record.Iterate(out, compactTestMaxDecompressed, func(r *record.Record) bool {
		got = append(got, r.Headers...)
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []record.RecordHeader{{Key: "h", Value: []byte("y")}, {Key: "n"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("headers (-want +got):\n%s", diff)
	}
}

func TestCompactBatchesCorrupt(t *testing.T) {
	seg := buildCompactBatch(t, plainBatch(0), 100, kv{key: "a", value: "1"}, kv{key: "a", value: "2"})
	seg[len(seg)-1] ^= 0xff
	out, err := compactBatches([]byte("dst"), seg, mapOf(t, buildCompactBatch(t, plainBatch(0), 0, kv{key: "a"})),
		compactOptions{MaxDecompressed: compactTestMaxDecompressed})
	if !errors.Is(err, record.ErrCorrupt) {
		t.Fatalf("err %v, want ErrCorrupt", err)
	}
	if string(out) != "dst" {
		t.Fatalf("dst changed on error: %q", out)
	}
}

// TestCompactBatchesProperty writes random puts and deletes over a few keys
// into batches, cleans them with a map over the whole log, and checks the
// result against a model: the latest value of every key, tombstones only
// when their batch is not past the horizon.
func TestCompactBatchesProperty(t *testing.T) {
	codecs := []record.Codec{record.CodecNone, record.CodecGzip, record.CodecSnappy, record.CodecLZ4, record.CodecZstd}
	rapid.Check(t, func(t *rapid.T) {
		type latest struct {
			value string
			del   bool
			maxTs int64
		}
		model := map[string]latest{}
		var seg []byte
		type span struct{ base, last int64 }
		inputs := map[span]bool{}
		offset := rapid.Int64Range(0, 1000).Draw(t, "base")
		nBatches := rapid.IntRange(1, 8).Draw(t, "batches")
		for bi := range nBatches {
			b := plainBatch(offset)
			b.Codec = rapid.SampledFrom(codecs).Draw(t, "codec")
			if rapid.Bool().Draw(t, "idempotent") {
				b.ProducerID, b.ProducerEpoch, b.BaseSequence = int64(bi%2), 0, int32(offset)
			}
			ts := int64(bi) * 10
			n := rapid.IntRange(1, 6).Draw(t, "records")
			var recs []kv
			for range n {
				r := kv{key: fmt.Sprintf("k%d", rapid.IntRange(0, 4).Draw(t, "key"))}
				if r.del = rapid.IntRange(0, 3).Draw(t, "op") == 0; !r.del {
					r.value = fmt.Sprintf("v%d", offset+int64(len(recs)))
				}
				recs = append(recs, r)
			}
			for _, r := range recs {
				model[r.key] = latest{value: r.value, del: r.del, maxTs: ts + int64(n) - 1}
			}
			seg = append(seg, buildCompactBatch(t, b, ts, recs...)...)
			inputs[span{offset, offset + int64(n) - 1}] = true
			offset += int64(n) + int64(rapid.IntRange(0, 3).Draw(t, "gap"))
		}
		// Passes at now with delete.retention.ms 5: the first pass stamps
		// every batch keeping a tombstone, a pass past the horizon drops
		// the tombstones.
		now := rapid.Int64Range(1, 1000).Draw(t, "now")
		opts := compactOptions{NowMs: now, DeleteRetentionMs: 5, MaxDecompressed: compactTestMaxDecompressed}

		out, err := compactBatches(nil, seg, mapOf(t, seg), opts)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{}
		for k, l := range model {
			if l.del {
				want[k] = "<nil>"
			} else {
				want[k] = l.value
			}
		}
		got := map[string]string{}
		for _, ob := range decodeCompacted(t, out) {
			if !inputs[span{ob.Base, ob.Last}] {
				t.Fatalf("output batch [%d, %d] does not keep an input batch's offsets", ob.Base, ob.Last)
			}
			for _, r := range ob.Records {
				var off int64
				var kvs string
				if _, err := fmt.Sscanf(r, "%d %s", &off, &kvs); err != nil {
					t.Fatal(err)
				}
				k, v, _ := bytes.Cut([]byte(kvs), []byte("="))
				if _, dup := got[string(k)]; dup {
					t.Fatalf("key %s kept twice", k)
				}
				got[string(k)] = string(v)
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("latest values (-want +got):\n%s", diff)
		}

		// Cleaning again before the horizon changes nothing.
		again, err := compactBatches(nil, out, mapOf(t, seg), opts)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again, out) {
			t.Fatal("a second cleaning before the horizon changed the output")
		}
		// Past the horizon the tombstones go and nothing else.
		opts.NowMs = now + 5
		past, err := compactBatches(nil, out, mapOf(t, seg), opts)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range want {
			if v == "<nil>" {
				delete(want, k)
			}
		}
		got = map[string]string{}
		for _, ob := range decodeCompacted(t, past) {
			for _, r := range ob.Records {
				var off int64
				var kvs string
				if _, err := fmt.Sscanf(r, "%d %s", &off, &kvs); err != nil {
					t.Fatal(err)
				}
				k, v, _ := bytes.Cut([]byte(kvs), []byte("="))
				got[string(k)] = string(v)
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("values past the horizon (-want +got):\n%s", diff)
		}
	})
}

// compactBatches appends to dst the cleaned form of segment, a run of whole
// RecordBatch v2 batches, and returns it (compactBatch on each). Every input
// batch must pass its CRC: a corrupt batch is an error, never rewritten with
// a fresh CRC. On error dst is returned unchanged.
func compactBatches(dst, segment []byte, m *offsetMap, o compactOptions) ([]byte, error) {
	start := len(dst)
	err := record.ForEachBatch(segment, func(batch []byte, h record.Header) error {
		var err error
		dst, _, err = compactBatch(dst, batch, &h, m, &o)
		if err != nil {
			return fmt.Errorf("storage: compact batch at offset %d: %w", h.BaseOffset, err)
		}
		return nil
	})
	if err != nil {
		return dst[:start], err
	}
	return dst, nil
}

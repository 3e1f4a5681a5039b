package record

// franz-go's kmsg is an independent implementation of the wire format:
// these tests decode our bytes with it and ours with its bytes.

import (
	"bytes"
	stdgzip "compress/gzip"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestKmsgDecodesOurs: kmsg reads the header and every record of batches
// we build, for every codec.
func TestKmsgDecodesOurs(t *testing.T) {
	for _, c := range allCodecs {
		t.Run(c.String(), func(t *testing.T) {
			b := producerBatch(c, 25)
			b.BaseOffset, b.PartitionLeaderEpoch, b.Transactional = 0, 4, true
			b.ProducerID, b.ProducerEpoch, b.BaseSequence = 99, 2, 1000
			batch := build(t, b)

			var kb kmsg.RecordBatch
			if err := kb.ReadFrom(batch); err != nil {
				t.Fatal(err)
			}
			if uint32(kb.CRC) != ComputeCRC(batch) || int(kb.Length) != len(batch)-LogOverhead {
				t.Errorf("crc %08x length %d", uint32(kb.CRC), kb.Length)
			}
			wantHdr := kmsg.RecordBatch{
				FirstOffset: 0, Length: kb.Length, PartitionLeaderEpoch: 4, Magic: 2, CRC: kb.CRC,
				Attributes: int16(c) | TransactionalMask, LastOffsetDelta: 24,
				FirstTimestamp: b.Records[0].Timestamp, MaxTimestamp: testTime + 13,
				ProducerID: 99, ProducerEpoch: 2, FirstSequence: 1000, NumRecords: 25, Records: kb.Records,
			}
			if diff := cmp.Diff(wantHdr, kb); diff != "" {
				t.Errorf("header (-want +got):\n%s", diff)
			}
			raw, err := Decompress(c, kb.Records, nil, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			got := kmsgRecords(t, raw, int(kb.NumRecords))
			if diff := cmp.Diff(toKmsg(b.Records, 0, b.Records[0].Timestamp), got); diff != "" {
				t.Errorf("records (-want +got):\n%s", diff)
			}
		})
	}
}

// TestOursDecodesKmsg: a batch kmsg encodes passes Validate and Iterate
// gives back its records. The gzip case compresses with the standard
// library, a second independent encoder.
func TestOursDecodesKmsg(t *testing.T) {
	want := testRecords(0, 30)
	var raw []byte
	for _, r := range toKmsg(want, 0, want[0].Timestamp) {
		r.Length = 0
		body := len(r.AppendTo(nil)) - 1 // minus the one-byte varint of 0
		r.Length = int32(body)
		raw = r.AppendTo(raw)
	}
	var gz bytes.Buffer
	zw := stdgzip.NewWriter(&gz)
	if _, err := zw.Write(raw); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		codec   Codec
		records []byte
	}{{CodecNone, raw}, {CodecGzip, gz.Bytes()}} {
		t.Run(c.codec.String(), func(t *testing.T) {
			kb := kmsg.RecordBatch{
				Length: int32(HeaderSize - LogOverhead + len(c.records)), Magic: 2,
				Attributes: int16(c.codec), LastOffsetDelta: 29,
				FirstTimestamp: want[0].Timestamp, MaxTimestamp: testTime + 13,
				ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1, NumRecords: 30, Records: c.records,
			}
			batch := fixCRC(kb.AppendTo(nil))
			if _, err := Validate(batch, ValidateConfig{}); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			if diff := cmp.Diff(want, collect(t, batch)); diff != "" {
				t.Errorf("records (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStdlibGunzipsOurs: our gzip output is standard gzip.
func TestStdlibGunzipsOurs(t *testing.T) {
	src := bytes.Repeat([]byte("samsa gzip check "), 1000)
	comp, err := Compress(CodecGzip, nil, src)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := stdgzip.NewReader(bytes.NewReader(comp))
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(zr)
	if err != nil || !bytes.Equal(got, src) {
		t.Fatalf("stdlib gunzip: %v, equal %v", err, bytes.Equal(got, src))
	}
}

func toKmsg(rs []Record, base, baseTs int64) []kmsg.Record {
	out := make([]kmsg.Record, len(rs))
	for i, r := range rs {
		kr := kmsg.Record{
			Attributes:       r.Attributes,
			TimestampDelta64: r.Timestamp - baseTs,
			TimestampDelta:   int32(r.Timestamp - baseTs),
			OffsetDelta:      int32(r.Offset - base),
			Key:              r.Key,
			Value:            r.Value,
		}
		for _, h := range r.Headers {
			kr.Headers = append(kr.Headers, kmsg.Header{Key: h.Key, Value: h.Value})
		}
		out[i] = kr
	}
	return out
}

// kmsgRecords decodes n records with kmsg, zeroing Length (not part of
// what we compare).
func kmsgRecords(t *testing.T, raw []byte, n int) []kmsg.Record {
	t.Helper()
	var out []kmsg.Record
	for range n {
		var r kmsg.Record
		if err := r.ReadFrom(raw); err != nil {
			t.Fatalf("kmsg record: %v", err)
		}
		size := int(r.Length) + varintSize(int64(r.Length))
		r.Length = 0
		out = append(out, r)
		raw = raw[size:]
	}
	if len(raw) != 0 {
		t.Fatalf("%d bytes after %d records", len(raw), n)
	}
	return out
}

package record

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/klauspost/compress/snappy"
)

var allCodecs = []Codec{CodecNone, CodecGzip, CodecSnappy, CodecLZ4, CodecZstd}

const testTime = 1_700_000_000_000 // a fixed wall clock for deterministic batches

// testRecords returns n producer records starting at offset base, with
// keys, values and headers in every shape the format allows.
func testRecords(base int64, n int) []Record {
	rs := make([]Record, n)
	for i := range rs {
		r := Record{
			Offset:    base + int64(i),
			Timestamp: testTime + int64(i%7)*3 - 5,
			Key:       []byte(fmt.Sprintf("key-%d", i)),
			Value:     []byte(fmt.Sprintf(`{"user":%d,"event":"click","page":"/p/%d"}`, i*31, i%13)),
		}
		switch i % 4 {
		case 1:
			r.Key = nil
		case 2:
			r.Value = nil // a tombstone
			r.Headers = []RecordHeader{{Key: "trace", Value: []byte("abc")}, {Key: "null", Value: nil}}
		case 3:
			r.Key, r.Value = []byte{}, []byte{}
			r.Headers = []RecordHeader{{Key: "", Value: []byte{}}}
		}
		rs[i] = r
	}
	return rs
}

// producerBatch is a batch as a non-idempotent producer sends it.
func producerBatch(codec Codec, n int) Batch {
	return Batch{
		Codec:         codec,
		ProducerID:    NoProducerID,
		ProducerEpoch: NoProducerEpoch,
		BaseSequence:  NoSequence,
		Records:       testRecords(0, n),
	}
}

func build(tb testing.TB, b Batch) []byte {
	tb.Helper()
	out, err := b.AppendTo(nil)
	if err != nil {
		tb.Fatalf("AppendTo: %v", err)
	}
	return out
}

// sizedBatch builds a producer batch whose uncompressed records section is
// about size bytes of semi-compressible JSON, the shape of typical traffic.
func sizedBatch(tb testing.TB, codec Codec, size int) []byte {
	tb.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	var rs []Record
	total := 0
	for total < size {
		v := fmt.Appendf(nil, `{"user":%d,"session":"%x","event":"page_view","page":"/products/%d","ms":%d}`,
			rng.IntN(1e6), rng.Uint64(), rng.IntN(500), rng.IntN(3000))
		k := fmt.Appendf(nil, "user-%d", rng.IntN(1e6))
		rs = append(rs, Record{Offset: int64(len(rs)), Timestamp: testTime + int64(len(rs)), Key: k, Value: v})
		total += len(v) + len(k) + 8
	}
	b := Batch{Codec: codec, ProducerID: NoProducerID, ProducerEpoch: NoProducerEpoch, BaseSequence: NoSequence, Records: rs}
	return build(tb, b)
}

// recordsOf returns the records section of a batch, decompressed.
func recordsOf(tb testing.TB, batch []byte) []byte {
	tb.Helper()
	h, err := ParseHeader(batch)
	if err != nil {
		tb.Fatal(err)
	}
	out, err := Decompress(h.Codec(), batch[HeaderSize:], nil, 1<<30)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// rewrap returns a copy of batch with a new codec attribute and records
// section, its length and CRC fixed: the tool for crafting batches that
// are well framed but wrong inside.
func rewrap(batch []byte, codec Codec, records []byte) []byte {
	out := append([]byte(nil), batch[:HeaderSize]...)
	out = append(out, records...)
	attrs := binary.BigEndian.Uint16(out[offAttributes:])
	binary.BigEndian.PutUint16(out[offAttributes:], attrs&^CompressionMask|uint16(codec))
	binary.BigEndian.PutUint32(out[offBatchLength:], uint32(len(out)-LogOverhead))
	return fixCRC(out)
}

func fixCRC(b []byte) []byte {
	binary.BigEndian.PutUint32(b[offCRC:], ComputeCRC(b))
	return b
}

// xerialFrame frames data the way snappy-java's SnappyOutputStream does,
// in chunks of chunk bytes.
func xerialFrame(data []byte, chunk int) []byte {
	out := append([]byte(nil), xerialMagic...)
	out = binary.BigEndian.AppendUint32(out, 1) // version
	out = binary.BigEndian.AppendUint32(out, 1) // compatible version
	for len(data) > 0 {
		n := min(chunk, len(data))
		block := snappy.Encode(nil, data[:n])
		out = binary.BigEndian.AppendUint32(out, uint32(len(block)))
		out = append(out, block...)
		data = data[n:]
	}
	return out
}

// xerialBatch re-encodes a batch's records as xerial-framed snappy, as a
// Java producer sends them.
func xerialBatch(tb testing.TB, batch []byte) []byte {
	tb.Helper()
	return rewrap(batch, CodecSnappy, xerialFrame(recordsOf(tb, batch), 64))
}

// fataler is what collect needs of testing.TB, which *rapid.T also offers.
type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

// collect iterates a batch and returns deep copies of its records.
func collect(tb fataler, batch []byte) []Record {
	tb.Helper()
	var out []Record
	err := Iterate(batch, 1<<30, func(r *Record) bool {
		out = append(out, cloneRecord(r))
		return true
	})
	if err != nil {
		tb.Fatalf("Iterate: %v", err)
	}
	return out
}

func cloneRecord(r *Record) Record {
	c := *r
	c.Key = cloneBytes(r.Key)
	c.Value = cloneBytes(r.Value)
	c.Headers = nil
	for _, h := range r.Headers {
		c.Headers = append(c.Headers, RecordHeader{Key: h.Key, Value: cloneBytes(h.Value)})
	}
	return c
}

// cloneBytes keeps the nil / empty distinction the format makes.
func cloneBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}

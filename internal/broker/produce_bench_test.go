package broker

import (
	"encoding/binary"
	"io"
	"testing"
	"time"
)

// BenchmarkProducePath measures the broker's produce path alone: a raw
// client sends pre-encoded Produce requests (one batch of 100 records of
// 100 bytes, acks=1) over loopback and reads each response, so almost all
// CPU is the broker's: framing, decoding, validation, the append and the
// response.
func BenchmarkProducePath(b *testing.B) {
	br := startBrokerWith(b, Config{LogDir: b.TempDir()})
	createTopic(b, br, "bench", 1)
	recs := make([]rawRecord, 100)
	for i := range recs {
		recs[i] = rawRecord{Key: []byte("key"), Value: make([]byte, 100)}
	}
	batch := rawBatch(rawBatchOptions{timestamp: time.Now().UnixMilli()}, recs...)
	req := rawProduceReq("bench", 0, 1, batch)
	body := encodeRequest(req, 1)
	frame := binary.BigEndian.AppendUint32(nil, uint32(len(body)))
	frame = append(frame, body...)
	r := dialRaw(b, br)
	r.nc.SetDeadline(time.Time{})
	var size [4]byte
	b.SetBytes(int64(len(batch)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := r.nc.Write(frame); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(r.nc, size[:]); err != nil {
			b.Fatal(err)
		}
		if _, err := io.CopyN(io.Discard, r.nc, int64(binary.BigEndian.Uint32(size[:]))); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*100)/b.Elapsed().Seconds(), "records/s")
}

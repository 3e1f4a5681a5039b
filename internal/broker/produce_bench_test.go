package broker

import (
	"encoding/binary"
	"io"
	"maps"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/config"
)

// BenchmarkProducePath measures the broker's produce path alone: a raw
// client sends pre-encoded Produce requests (one batch of 100 records of
// 100 bytes, acks=1, and the same with acks=all, which a single node also
// answers once appended) over loopback and reads each response, so almost
// all CPU is the broker's: framing, decoding, validation, the append and the
// response.
func BenchmarkProducePath(b *testing.B) {
	for _, c := range []struct {
		name            string
		records, valLen int
		acks            int16
		configs         map[string]string
	}{
		{"100x100B", 100, 100, 1, nil},
		{"1000x1KiB", 1000, 1024, 1, nil},
		{"100x100B-acks-all", 100, 100, -1, nil},
		// With the StandardAuthorizer: no ACL names the topic, so each
		// check looks up every pattern before allow-everyone decides.
		{"100x100B-authorizer", 100, 100, 1, map[string]string{
			"authorizer.class.name": config.StandardAuthorizer, "allow.everyone.if.no.acl.found": "true"}},
	} {
		b.Run(c.name, func(b *testing.B) { benchProducePath(b, c.records, c.valLen, c.acks, c.configs) })
	}
}

// benchProducePath sends one batch of n records of valLen-byte values per
// request on one connection and reads each response.
func benchProducePath(b *testing.B, n, valLen int, acks int16, configs map[string]string) {
	cfg := Config{LogDir: b.TempDir()}
	if configs != nil {
		raw := maps.Clone(samsaDefaults)
		maps.Copy(raw, configs)
		v, err := config.Parse(config.Broker, raw)
		if err != nil {
			b.Fatal(err)
		}
		cfg.Values = v
	}
	br := startBrokerWith(b, cfg)
	createTopic(b, br, "bench", 1)
	recs := make([]rawRecord, n)
	for i := range recs {
		recs[i] = rawRecord{Key: []byte("key"), Value: make([]byte, valLen)}
	}
	batch := rawBatch(rawBatchOptions{timestamp: time.Now().UnixMilli()}, recs...)
	req := rawProduceReq("bench", 0, acks, batch)
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
	b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "records/s")
}

package broker

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"io"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// BenchmarkFetchPath measures the broker's fetch path from page cache to
// socket, with sendfile and with the copy through user space it replaces.
// The client reads each 1 MiB response into io.Discard over loopback.
func BenchmarkFetchPath(b *testing.B) {
	for _, mode := range []struct {
		name     string
		disabled bool
	}{{"sendfile", false}, {"copy", true}} {
		b.Run(mode.name, func(b *testing.B) {
			br := startBrokerWith(b, Config{LogDir: b.TempDir(), DisableSendfile: mode.disabled})
			end := fillTopic(b, br, "bench", 64<<20)
			r := dialRaw(b, br)
			r.nc.SetDeadline(time.Time{})
			req := kmsg.NewPtrFetchRequest()
			req.Version = 11
			req.MaxBytes = 1 << 20
			rt := kmsg.NewFetchRequestTopic()
			rt.Topic = "bench"
			rp := kmsg.NewFetchRequestTopicPartition()
			rp.PartitionMaxBytes = 1 << 20
			rt.Partitions = []kmsg.FetchRequestTopicPartition{rp}
			req.Topics = []kmsg.FetchRequestTopic{rt}
			fetchLoop(b, r, req, end)
		})
	}
}

// BenchmarkFetchPathTLS is BenchmarkFetchPath over TLS, where sendfile
// cannot run: the segment bytes go through a pooled buffer into crypto/tls
// (conn.go sendRange). Compare its bytes/s and allocations with the
// sendfile and copy cases.
func BenchmarkFetchPathTLS(b *testing.B) {
	ca := newTestCA(b)
	ks, ts := ca.writeBrokerStore(b, b.TempDir(), 2)
	v, err := LoadConfig("", map[string]string{"node.id": "1", "log.dirs": b.TempDir(),
		"listeners":         "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0",
		"ssl.keystore.type": "PEM", "ssl.keystore.location": ks, "ssl.truststore.type": "PEM", "ssl.truststore.location": ts})
	if err != nil {
		b.Fatal(err)
	}
	cfg, err := testConfigFromValues(v)
	if err != nil {
		b.Fatal(err)
	}
	cfg.Logger = quiet
	br, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	if err := br.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	defer br.Close()
	end := fillTopic(b, br, "bench", 64<<20)
	var addr string
	for _, l := range br.Listeners() {
		if l.Name == "SSL" {
			addr = net.JoinHostPort(l.Host, strconv.Itoa(l.Port))
		}
	}
	nc, err := tls.Dial("tcp", addr, ca.clientTLS(b, ""))
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	r := &rawConn{t: b, nc: nc}
	req := kmsg.NewPtrFetchRequest()
	req.Version = 11
	req.MaxBytes = 1 << 20
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = "bench"
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.PartitionMaxBytes = 1 << 20
	rt.Partitions = []kmsg.FetchRequestTopicPartition{rp}
	req.Topics = []kmsg.FetchRequestTopic{rt}
	fetchLoop(b, r, req, end)
}

// BenchmarkReplicaFetch measures a leader answering a follower's fetch of
// 1 MiB of 1 KiB uncompressed records, from the request to the last byte on a loopback
// socket: the records a follower copies, as a consumer's, should cost the
// leader no copy through user space.
func BenchmarkReplicaFetch(b *testing.B) {
	br := startBrokerWith(b, Config{LogDir: b.TempDir()})
	end := fillTopic(b, br, "bench", 16<<20, uncompressed)
	id := addFollower(b, br, "bench")
	r := dialRaw(b, br)
	r.nc.SetDeadline(time.Time{})
	req := replicaFetchReq(id, 0, 1<<20)
	// A refused fetch would be quick and measure nothing.
	got := r.roundTrip(req, -1).(*kmsg.FetchResponse)
	if p := got.Topics[0].Partitions[0]; p.ErrorCode != 0 || len(p.RecordBatches) == 0 {
		b.Fatalf("replica fetch: error %d, %d record bytes", p.ErrorCode, len(p.RecordBatches))
	}
	fetchLoop(b, r, req, end)
}

// fillTopic produces about size bytes of 1 KiB records and returns the
// log end offset. The records are zeros, so the producer's default snappy
// shrinks them; opts can say otherwise.
func fillTopic(tb testing.TB, br *Broker, topic string, size int, opts ...kgo.Opt) int64 {
	tb.Helper()
	ctx := context.Background()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(br.Addr()), kgo.AllowAutoTopicCreation(), kgo.DisableIdempotentWrite(),
		kgo.ProducerBatchMaxBytes(1 << 20), kgo.ProducerLinger(5 * time.Millisecond)}, opts...)...)
	if err != nil {
		tb.Fatal(err)
	}
	defer cl.Close()
	val := make([]byte, 1024)
	n := size / len(val)
	for range n {
		cl.Produce(ctx, &kgo.Record{Topic: topic, Value: val}, func(_ *kgo.Record, err error) {
			if err != nil {
				tb.Error(err)
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		tb.Fatal(err)
	}
	return int64(n)
}

// fetchLoop sends req b.N times on r, each from the next thousand offsets
// (wrapping at end), and reads each response whole into io.Discard.
func fetchLoop(b *testing.B, r *rawConn, req *kmsg.FetchRequest, end int64) {
	var bytes int64
	off := int64(0)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		req.Topics[0].Partitions[0].FetchOffset = off
		r.sendFrame(encodeRequest(req, int32(i)))
		var size [4]byte
		if _, err := io.ReadFull(r.nc, size[:]); err != nil {
			b.Fatal(err)
		}
		n, err := io.CopyN(io.Discard, r.nc, int64(binary.BigEndian.Uint32(size[:])))
		if err != nil {
			b.Fatal(err)
		}
		bytes += n
		off = (off + 1000) % end
	}
	b.SetBytes(bytes / int64(b.N))
}

package restproxy

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// BenchmarkRestProduce produces one 100-byte STRING value per request,
// one request at a time (the non-streaming endpoint's use), against a
// real broker; BenchmarkRestProduceNative is the same through a franz-go
// client directly, for the ratio the proxy costs.
func BenchmarkRestProduce(b *testing.B) {
	tp := startProxy(b, Config{})
	createBenchTopic(b, tp)
	body := `{"value":{"type":"STRING","data":"` + strings.Repeat("v", 100) + `"}}`
	url := tp.url + tp.v3("/topics/bench/records")
	b.ReportAllocs()
	for b.Loop() {
		resp, err := http.Post(url, "application/json", strings.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("status %d", resp.StatusCode)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

func BenchmarkRestProduceNative(b *testing.B) {
	tp := startProxy(b, Config{})
	createBenchTopic(b, tp)
	cl, err := kgo.NewClient(kgo.SeedBrokers(tp.broker), kgo.ProducerLinger(0))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	value := []byte(strings.Repeat("v", 100))
	b.ReportAllocs()
	for b.Loop() {
		if err := cl.ProduceSync(b.Context(), &kgo.Record{Topic: "bench", Value: value}).FirstErr(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

func createBenchTopic(b *testing.B, tp *testProxy) {
	b.Helper()
	ctx, cancel := context.WithTimeout(b.Context(), 30*time.Second)
	defer cancel()
	if _, err := tp.admin.CreateTopic(ctx, 1, 1, nil, "bench"); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkRestProduceStream streams b.N 100-byte STRING values in one
// chunked request and reads every result line; BenchmarkRestProduceStreamNative
// is the same through a franz-go client producing asynchronously and
// waiting for every acknowledgement, for the ratio the proxy costs.
func BenchmarkRestProduceStream(b *testing.B) {
	tp := startProxy(b, Config{})
	createBenchTopic(b, tp)
	record := `{"value":{"type":"STRING","data":"` + strings.Repeat("v", 100) + `"}}` + "\n"
	pr, pw := io.Pipe()
	go func() {
		bw := bufio.NewWriter(pw)
		for range b.N {
			_, _ = bw.WriteString(record)
		}
		_ = bw.Flush()
		pw.Close()
	}()
	req, err := http.NewRequestWithContext(b.Context(), "POST", tp.url+tp.v3("/topics/bench/records"), pr)
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Content-Type", jsonType)
	b.ReportAllocs()
	b.ResetTimer()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	n := 0
	for sc.Scan() {
		if !bytes.HasPrefix(sc.Bytes(), []byte(`{"error_code":200,`)) {
			b.Fatalf("result %d: %s", n, sc.Bytes())
		}
		n++
	}
	if n != b.N {
		b.Fatalf("%d results for %d records (%v)", n, b.N, sc.Err())
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

func BenchmarkRestProduceStreamNative(b *testing.B) {
	tp := startProxy(b, Config{})
	createBenchTopic(b, tp)
	cl, err := kgo.NewClient(kgo.SeedBrokers(tp.broker), kgo.ProducerLinger(0))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	value := []byte(strings.Repeat("v", 100))
	var failed atomic.Pointer[error]
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		cl.Produce(b.Context(), &kgo.Record{Topic: "bench", Value: value}, func(_ *kgo.Record, err error) {
			if err != nil {
				failed.Store(&err)
			}
		})
	}
	if err := cl.Flush(b.Context()); err != nil {
		b.Fatal(err)
	}
	if e := failed.Load(); e != nil {
		b.Fatal(*e)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkV2Consume reads b.N 100-byte records, produced beforehand, with
// a v2 consumer instance (binary format, one-partition topic), one GET
// .../records after another, each answer decoded as a client would;
// BenchmarkV2ConsumeNative reads them with a franz-go group consumer's
// PollFetches, for the ratio the proxy costs.
func BenchmarkV2Consume(b *testing.B) {
	tp := startProxy(b, Config{})
	createBenchTopic(b, tp)
	produceBench(b, tp.broker, b.N)
	base := tp.url + "/consumers/bench/instances/b"
	v2Do(b, "POST", tp.url+"/consumers/bench", "", `{"name":"b","auto.offset.reset":"earliest","auto.commit.enable":"false","fetch.min.bytes":1}`).want(b, "create", 200, "")
	v2Do(b, "POST", base+"/subscription", "", `{"topics":["bench"]}`).want(b, "subscribe", 204, "")
	// The group's join (3 s of initial rebalance delay) is not reading:
	// time from the assignment on.
	for {
		a := v2Do(b, "GET", base+"/assignments", "", "")
		if len(a.body.(map[string]any)["partitions"].([]any)) > 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	b.ReportAllocs()
	b.ResetTimer()
	n := 0
	for n < b.N {
		n += len(readV2(b, base, v2BinaryType))
	}
	b.StopTimer()
	if n != b.N {
		b.Fatalf("%d records read, %d produced", n, b.N)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

func BenchmarkV2ConsumeNative(b *testing.B) {
	tp := startProxy(b, Config{})
	createBenchTopic(b, tp)
	produceBench(b, tp.broker, b.N)
	assigned := make(chan struct{})
	cl, err := kgo.NewClient(kgo.SeedBrokers(tp.broker), kgo.ConsumerGroup("bench"), kgo.ConsumeTopics("bench"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit(),
		kgo.OnPartitionsAssigned(func(context.Context, *kgo.Client, map[string][]int32) { close(assigned) }))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	<-assigned // as above: time from the assignment on
	b.ReportAllocs()
	b.ResetTimer()
	n := 0
	for n < b.N {
		fs := cl.PollFetches(b.Context())
		if err := fs.Err0(); err != nil {
			b.Fatal(err)
		}
		n += fs.NumRecords()
	}
	b.StopTimer()
	if n != b.N {
		b.Fatalf("%d records read, %d produced", n, b.N)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

// produceBench produces n 100-byte values to the bench topic.
func produceBench(b *testing.B, broker string, n int) {
	b.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	value := []byte(strings.Repeat("v", 100))
	for range n {
		cl.Produce(b.Context(), &kgo.Record{Topic: "bench", Value: value}, nil)
	}
	if err := cl.Flush(b.Context()); err != nil {
		b.Fatal(err)
	}
}

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

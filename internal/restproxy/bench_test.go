package restproxy

import (
	"context"
	"io"
	"net/http"
	"strings"
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

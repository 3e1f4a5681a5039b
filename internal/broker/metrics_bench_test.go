package broker

import (
	"io"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// BenchmarkMetricsRequestPath is what metrics cost one request that
// produces to a partition and one that fetches from it: the per-topic
// counts and the per-API count and times (queue, handler, send, total).
// It must not allocate.
func BenchmarkMetricsRequestPath(b *testing.B) {
	br := startBrokerWith(b, Config{LogDir: b.TempDir()})
	createTopic(b, br, "bench", 1)
	ts, _ := br.topics.byTopicName("bench")
	batch := rawBatch(rawBatchOptions{timestamp: time.Now().UnixMilli()}, rawRecord{Value: make([]byte, 100)})
	fp := fetchPart{ts: ts}
	var r fetchResult
	r.rr.Size = int64(len(batch))
	produce := requestMark{key: kmsg.Produce, version: 11, start: time.Now()}
	fetch := requestMark{key: kmsg.Fetch, version: 16, start: time.Now()}
	began := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		ts.countProduce(0, batch, 0)
		br.metrics.rt.handlerDone(kmsg.Produce, produce.start, began, 0)
		br.metrics.rt.responseSent(&produce, began)
		br.metrics.requestDone(&produce)
		fp.countFetch(&r)
		br.metrics.rt.handlerDone(kmsg.Fetch, fetch.start, began, time.Microsecond)
		br.metrics.rt.responseSent(&fetch, began)
		br.metrics.requestDone(&fetch)
	}
	if allocs := testing.AllocsPerRun(100, func() {
		ts.countProduce(0, batch, 0)
		br.metrics.rt.handlerDone(kmsg.Produce, produce.start, began, 0)
		br.metrics.rt.responseSent(&produce, began)
		br.metrics.requestDone(&produce)
		fp.countFetch(&r)
		br.metrics.rt.handlerDone(kmsg.Fetch, fetch.start, began, time.Microsecond)
		br.metrics.rt.responseSent(&fetch, began)
		br.metrics.requestDone(&fetch)
	}); allocs != 0 {
		b.Fatalf("%v allocations per request", allocs)
	}
}

// BenchmarkMetricsScrape is one scrape of /metrics (through its handler,
// without the socket) of a broker hosting 1,000 partitions: what an
// operator's Prometheus costs the broker every scrape interval.
func BenchmarkMetricsScrape(b *testing.B) {
	br := startBrokerWith(b, Config{LogDir: b.TempDir()})
	createTopic(b, br, "wide", 1000)
	h := promhttp.HandlerFor(br.metrics.registry, promhttp.HandlerOpts{})
	req := httptest.NewRequest("GET", "/metrics", nil)
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != 200 {
			b.Fatal(rec.Code)
		}
		io.Copy(io.Discard, rec.Body)
	}
}

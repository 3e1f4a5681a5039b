package restproxy

import (
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// v2Batch is the records per request of the v2 benchmarks: a v2 client
// batches, as v2 has no streaming.
const v2Batch = 100

// BenchmarkRestV2ProduceBatch produces 100 100-byte binary values per v2
// request, one request at a time; BenchmarkRestV2ProduceAvro the same as
// Avro records ({"id": long, "note": string}, schema by ID);
// BenchmarkRestV2ProduceBatchNative produces 100 such records per
// ProduceSync with franz-go, for the ratio. records/s counts records.
func BenchmarkRestV2ProduceBatch(b *testing.B) {
	tp := startProxy(b, Config{})
	createBenchTopic(b, tp)
	rec := fmt.Sprintf(`{"value":%q}`, base64.StdEncoding.EncodeToString([]byte(strings.Repeat("v", 100))))
	benchV2(b, tp.url+"/topics/bench", v2Type("binary"), `{"records":[`+strings.TrimSuffix(strings.Repeat(rec+",", v2Batch), ",")+`]}`)
}

func BenchmarkRestV2ProduceAvro(b *testing.B) {
	tp := startV2Proxy(b, true)
	createBenchTopic(b, tp.testProxy)
	schema := `{"type":"record","name":"Order","fields":[{"name":"id","type":"long"},{"name":"note","type":"string"}]}`
	rec := `{"value":{"id":12345,"note":"` + strings.Repeat("v", 90) + `"}}`
	records := strings.TrimSuffix(strings.Repeat(rec+",", v2Batch), ",")
	// The first request registers the schema; the rest find it cached.
	benchV2(b, tp.url+"/topics/bench", v2Type("avro"), fmt.Sprintf(`{"value_schema":%q,"records":[%s]}`, schema, records))
}

func BenchmarkRestV2ProduceBatchNative(b *testing.B) {
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
		recs := make([]*kgo.Record, v2Batch)
		for i := range recs {
			recs[i] = &kgo.Record{Topic: "bench", Value: value}
		}
		if err := cl.ProduceSync(b.Context(), recs...).FirstErr(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*v2Batch)/b.Elapsed().Seconds(), "records/s")
}

func benchV2(b *testing.B, url, contentType, body string) {
	b.ReportAllocs()
	for b.Loop() {
		resp, err := http.Post(url, contentType, strings.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || strings.Contains(string(raw), `"error_code":5`) {
			b.Fatalf("status %d: %s", resp.StatusCode, raw)
		}
	}
	b.ReportMetric(float64(b.N*v2Batch)/b.Elapsed().Seconds(), "records/s")
}

package s3sink

import (
	"testing"
	"time"

	"github.com/samsa-io/samsa/connect"
)

// BenchmarkPutJSON measures records per second through Put into JSON files
// of 10,000 records against gofakes3 on loopback (uploads included).
func BenchmarkPutJSON(b *testing.B) {
	s3 := newFakeS3(b)
	task, _ := startTask(b, s3.props(cfgFlushSize, "10000"), nil, tp0)
	s := connect.NewStruct("V").Field("id", connect.Int64Schema).Field("name", connect.StringSchema).MustBuild()
	const batch = 500
	recs := make([]connect.SinkRecord, batch)
	b.ReportAllocs()
	b.ResetTimer()
	off := int64(0)
	for i := 0; i < b.N; i++ {
		for j := range recs {
			recs[j] = rec(tp0, off, time.Now(), s, connect.NewStructValue(s).MustPut("id", off).MustPut("name", "customer-name"))
			off++
		}
		if err := task.Put(b.Context(), recs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(off)/b.Elapsed().Seconds(), "records/s")
}

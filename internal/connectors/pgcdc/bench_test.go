package pgcdc

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkSnapshotAndStream measures rows per second through the snapshot
// and through the stream (one transaction of b.N inserts), on the local
// test server.
func BenchmarkSnapshotAndStream(b *testing.B) {
	srv := newFixtureB(b)
	srv.execB(b, `CREATE TABLE bench (id int PRIMARY KEY, name text NOT NULL, price numeric(10,2), at timestamptz)`)
	srv.execB(b, fmt.Sprintf(`INSERT INTO bench SELECT g, 'name-' || g, g / 100.0, now() FROM generate_series(1, %d) g`, b.N))
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	task := srv.startB(b, srv.props())
	n := 0
	for n < b.N {
		recs, err := task.Poll(b.Context())
		if err != nil {
			b.Fatal(err)
		}
		n += len(recs)
	}
	snap := time.Since(start)
	srv.execB(b, fmt.Sprintf(`INSERT INTO bench SELECT g, 'name-' || g, g / 100.0, now() FROM generate_series(%d, %d) g`, b.N+1, 2*b.N))
	start = time.Now()
	for n = 0; n < b.N; {
		recs, err := task.Poll(b.Context())
		if err != nil {
			b.Fatal(err)
		}
		n += len(recs)
	}
	b.ReportMetric(float64(b.N)/snap.Seconds(), "snapshot-rows/s")
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "stream-rows/s")
	task.Stop()
}

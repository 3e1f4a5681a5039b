package jdbc

import (
	"context"
	"fmt"
	"testing"

	"github.com/samsa-io/samsa/connect"
)

func benchDBs(b *testing.B, f func(b *testing.B, db *testDB)) {
	b.Run("sqlite", func(b *testing.B) { f(b, startSQLite(b)) })
	b.Run("postgres", func(b *testing.B) { f(b, startPG(b)) })
}

// BenchmarkSinkUpsert writes Puts of 1000 records, upserting by key.
func BenchmarkSinkUpsert(b *testing.B) {
	benchDBs(b, func(b *testing.B, db *testDB) {
		task := startSink(b, props(cfgConnectionURL, db.url, cfgInsertMode, insertModeUpsert, cfgPKMode, pkModeRecordKey, cfgAutoCreate, "true"))
		recs := make([]connect.SinkRecord, 1000)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			for j := range recs {
				recs[j] = userRecord(int64(i*1000+j), int32(j), fmt.Sprintf("name%d", i), float64(j))
			}
			if err := task.Put(context.Background(), recs); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N*1000)/b.Elapsed().Seconds(), "rows/s")
	})
}

// BenchmarkSourceIncrementing reads a 10000-row table from the start.
func BenchmarkSourceIncrementing(b *testing.B) {
	benchDBs(b, func(b *testing.B, db *testDB) {
		db.exec(b, "CREATE TABLE big (id INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, score DOUBLE PRECISION)")
		if db.kind == sqlite {
			db.exec(b, "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 10000) INSERT INTO big SELECT i, 'row' || i, i * 1.5 FROM n")
		} else {
			db.exec(b, "INSERT INTO big SELECT i, 'row' || i, i * 1.5 FROM generate_series(1, 10000) i")
		}
		cfg := props(cfgConnectionURL, db.url, cfgMode, modeIncrementing, cfgIncrementingColumn, "id", cfgTopicPrefix, "", cfgPollInterval, "60000")
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			_, _, tasks := startSource(b, cfg, 1, newOffsetStore())
			n := 0
			for n < 10000 {
				recs, err := tasks[0].Poll(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				n += len(recs)
			}
			tasks[0].Stop()
		}
		b.ReportMetric(float64(b.N*10000)/b.Elapsed().Seconds(), "rows/s")
	})
}

package jdbc

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/samsa-io/samsa/connect"
)

// toSinkRecords is what the runtime does between a source and a sink, less
// the converters: each source record becomes a sink record at an offset.
func toSinkRecords(recs []connect.SourceRecord, first int64) []connect.SinkRecord {
	out := make([]connect.SinkRecord, len(recs))
	for i, r := range recs {
		out[i] = sinkRecord(r.Topic, first+int64(i), r.KeySchema, r.Key, r.ValueSchema, r.Value)
	}
	return out
}

// Rows of a PostgreSQL table go through the source's records into the sink,
// which writes them (auto.create, upsert) to a SQLite table and to a table
// in another PostgreSQL database; reading those tables back gives the same
// values. An update at the source reaches both without a duplicate row.
func TestRoundTripPostgresToSQLiteAndPostgres(t *testing.T) {
	src := startPG(t)
	dst := newPGDatabase(t, src.pg, "dest")
	lite := startSQLite(t)
	src.exec(t, `CREATE TABLE products (
  id INT NOT NULL PRIMARY KEY, name TEXT NOT NULL, price NUMERIC(10,2), weight REAL, ratio DOUBLE PRECISION,
  qty SMALLINT, big BIGINT, active BOOLEAN, photo BYTEA, born DATE, opens TIME, modified TIMESTAMP NOT NULL, free NUMERIC)`)
	for i := 1; i <= 25; i++ {
		src.exec(t, fmt.Sprintf(`INSERT INTO products VALUES (%d, 'p%d', %d.%02d, %d.5, %d.25, %d, %d, %v, '\x%02x', '2024-01-%02d', '08:%02d:00.5', '2024-01-01 00:00:%02d.25', %d.125)`,
			i, i, i*10, i, i, i, i, int64(i)*1e10, i%2 == 0, i, i, i, i, i))
	}
	src.exec(t, "INSERT INTO products (id, name, modified) VALUES (26, 'nulls', '2024-01-01 00:00:30')")

	srcCfg := props(cfgConnectionURL, src.url, cfgMode, modeTimestampIncrement, cfgIncrementingColumn, "id",
		cfgTimestampColumns, "modified", cfgTopicPrefix, "shop_", cfgPollInterval, "50", cfgBatchMaxRows, "7")
	_, _, tasks := startSource(t, srcCfg, 1, newOffsetStore())
	recs := pollN(t, tasks[0], 26, 200*time.Millisecond)

	sinkCfg := func(db *testDB) map[string]string {
		return props(cfgConnectionURL, db.url, cfgInsertMode, insertModeUpsert, cfgPKMode, pkModeRecordValue, cfgPKFields, "id",
			cfgAutoCreate, "true", cfgTableNameFormat, "copy_${topic}", cfgBatchSize, "10")
	}
	sinks := map[string]*testDB{"sqlite": lite, "postgres": dst}
	for _, db := range sinks {
		put(t, startSink(t, sinkCfg(db)), toSinkRecords(recs, 0)...)
	}

	// An update at the source: read again, upserted over the old row.
	src.exec(t, "UPDATE products SET name = 'renamed', modified = '2024-01-02 00:00:00' WHERE id = 3")
	upd := pollN(t, tasks[0], 1, 200*time.Millisecond)
	for _, db := range sinks {
		put(t, startSink(t, sinkCfg(db)), toSinkRecords(upd, 26)...)
	}

	want := readTable(t, src, "products")
	for name, db := range sinks {
		got := readTable(t, db, "copy_shop_products")
		if len(got) != len(want) {
			t.Fatalf("%s: %d rows, want %d", name, len(got), len(want))
		}
		for i := range want {
			compareRows(t, name, db.kind, want[i], got[i])
		}
	}
}

// readTable reads a table back through the source in bulk mode, ordered by id.
func readTable(t *testing.T, db *testDB, table string) []*connect.Struct {
	t.Helper()
	cfg := props(cfgConnectionURL, db.url, cfgMode, modeBulk, cfgTopicPrefix, "", cfgTableIncludeList, table, cfgPollInterval, "60000", cfgBatchMaxRows, "1000")
	_, _, tasks := startSource(t, cfg, 1, newOffsetStore())
	recs, err := tasks[0].Poll(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := make([]*connect.Struct, len(recs))
	for _, r := range recs {
		st := r.Value.(*connect.Struct)
		id, _ := st.Get("id")
		out[toI64(id)-1] = st
	}
	return out
}

func toI64(v any) int64 {
	switch x := v.(type) {
	case int32:
		return int64(x)
	case int64:
		return x
	}
	panic(fmt.Sprintf("%T", v))
}

// compareRows compares field by field; SQLite widens integers to INT64 and
// floats to FLOAT64 (its storage classes), PostgreSQL keeps every type.
func compareRows(t *testing.T, where string, kind dbKind, want, got *connect.Struct) {
	t.Helper()
	for _, f := range want.Schema().Fields {
		gf, ok := got.Schema().Field(f.Name)
		if !ok {
			t.Errorf("%s: no column %s", where, f.Name)
			continue
		}
		w, g := want.GetField(f), got.GetField(gf)
		if kind == postgres {
			if gf.Schema.Type != f.Schema.Type || gf.Schema.Name != f.Schema.Name || gf.Schema.Optional != f.Schema.Optional {
				t.Errorf("%s: %s schema %v optional=%v, want %v optional=%v", where, f.Name, gf.Schema, gf.Schema.Optional, f.Schema, f.Schema.Optional)
			}
		} else {
			w, g = widen(w), widen(g)
		}
		if !connect.ValuesEqual(w, g) {
			t.Errorf("%s: row %v column %s = %#v, want %#v", where, want, f.Name, g, w)
		}
	}
}

func widen(v any) any {
	switch x := v.(type) {
	case int8:
		return int64(x)
	case int16:
		return int64(x)
	case int32:
		return int64(x)
	case float32:
		return float64(x)
	}
	return v
}

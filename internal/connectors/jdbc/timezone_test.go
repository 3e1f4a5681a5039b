package jdbc

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/samsa-io/samsa/connect"
)

// db.timezone: zoneless timestamps are wall clocks in that zone, both ways.
// The source compares them with now - delay in that zone (a row an hour
// ahead of New York's clock is not read yet, one an hour behind is), and
// the sink writes New York's wall clock.
func TestDBTimezone(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	bothDBs(t, func(t *testing.T, db *testDB) {
		now := time.Now().In(ny)
		db.exec(t, "CREATE TABLE ev (id INTEGER NOT NULL, at TIMESTAMP NOT NULL)",
			fmt.Sprintf("INSERT INTO ev VALUES (1, '%s')", now.Add(-time.Hour).Format(sqliteTimeLayout)),
			fmt.Sprintf("INSERT INTO ev VALUES (2, '%s')", now.Add(time.Hour).Format(sqliteTimeLayout)))
		cfg := props(cfgConnectionURL, db.url, cfgMode, modeTimestamp, cfgTimestampColumns, "at", cfgTopicPrefix, "",
			cfgPollInterval, "50", cfgDBTimezone, "America/New_York")
		_, _, tasks := startSource(t, cfg, 1, newOffsetStore())
		recs := pollN(t, tasks[0], 1, 300*time.Millisecond)
		if ids(t, recs, "id")[0] != 1 {
			t.Fatalf("read %v", describeRecords(recs))
		}
		if got := field(t, recs[0], "at").(time.Time); got.Sub(now.Add(-time.Hour)).Abs() > time.Millisecond {
			t.Fatalf("read %v, want %v", got, now.Add(-time.Hour))
		}

		schema := connect.NewStruct("v").Field("id", connect.Int32Schema).Field("at", connect.TimestampSchema()).MustBuild()
		at := time.Date(2024, 7, 1, 16, 0, 0, 0, time.UTC) // 12:00 in New York (EDT)
		v := connect.NewStructValue(schema).MustPut("id", int32(1)).MustPut("at", at)
		sink := startSink(t, props(cfgConnectionURL, db.url, cfgAutoCreate, "true", cfgDBTimezone, "America/New_York"))
		if err := sink.Put(context.Background(), []connect.SinkRecord{sinkRecord("written", 0, nil, nil, schema, v)}); err != nil {
			t.Fatal(err)
		}
		q := "SELECT to_char(at, 'YYYY-MM-DD HH24:MI:SS') FROM written"
		if db.kind == sqlite {
			q = "SELECT strftime('%Y-%m-%d %H:%M:%S', at) FROM written"
		}
		if got := rowsOf(t, db, q); got != "2024-07-01 12:00:00" {
			t.Fatalf("stored %s, want New York's 12:00", got)
		}
	})
}

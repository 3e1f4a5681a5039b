package jdbc

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/samsa-io/samsa/connect"
)

func seq(from, to int64) []int64 {
	var out []int64
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

func insertRows(t *testing.T, db *testDB, table string, from, to int) {
	t.Helper()
	for i := from; i <= to; i++ {
		db.exec(t, fmt.Sprintf("INSERT INTO %s (id, name) VALUES (%d, 'row%d')", table, i, i))
	}
}

// Incrementing mode reads new rows in id order, batch.max.rows at a time;
// a task restarted from the offsets of the records delivered so far reads
// the rest: none twice, none skipped.
func TestSourceIncrementingRestartFromOffset(t *testing.T) {
	bothDBs(t, func(t *testing.T, db *testDB) {
		db.exec(t, "CREATE TABLE orders (id INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL)")
		insertRows(t, db, "orders", 1, 5)
		cfg := props(cfgConnectionURL, db.url, cfgMode, modeIncrementing, cfgIncrementingColumn, "id",
			cfgTopicPrefix, "db-", cfgPollInterval, "50", cfgBatchMaxRows, "2", cfgTableWhitelist, "orders")
		offsets := newOffsetStore()
		_, _, tasks := startSource(t, cfg, 3, offsets)
		if len(tasks) != 1 {
			t.Fatalf("%d tasks for one table, want 1", len(tasks))
		}
		recs := pollN(t, tasks[0], 5, 200*time.Millisecond)
		if got := ids(t, recs, "id"); !slices.Equal(got, seq(1, 5)) {
			t.Fatalf("ids %v", got)
		}
		last := recs[4]
		if last.Topic != "db-orders" || partitionKey(last.SourcePartition) != `{"table":"orders"}` {
			t.Fatalf("topic %s partition %v", last.Topic, last.SourcePartition)
		}
		if fmt.Sprint(last.SourceOffset) != "map[incrementing:5]" {
			t.Fatalf("offset %v", last.SourceOffset)
		}
		if f, _ := last.ValueSchema.Field("name"); f.Schema.Type != connect.String || f.Schema.Optional {
			t.Fatalf("name's schema %v optional=%v", f.Schema, f.Schema.Optional)
		}
		if last.ValueSchema.Name != "orders" {
			t.Fatalf("schema name %q", last.ValueSchema.Name)
		}

		// Only the first three reached Kafka before the task stopped.
		offsets.commit(t, recs[:3])
		tasks[0].Stop()
		insertRows(t, db, "orders", 6, 7)
		again := startSourceTask(t, tasksConfig(t, cfg), offsets)
		recs = pollN(t, again, 4, 200*time.Millisecond)
		if got := ids(t, recs, "id"); !slices.Equal(got, seq(4, 7)) {
			t.Fatalf("after restart ids %v, want 4..7", got)
		}
	})
}

// tasksConfig is the single task config of a one-table source.
func tasksConfig(t *testing.T, cfg map[string]string) map[string]string {
	t.Helper()
	c := &SourceConnector{}
	if err := c.Start(&connectorCtx{}, cfg); err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	configs, err := c.TaskConfigs(1)
	if err != nil || len(configs) != 1 {
		t.Fatalf("%v %v", configs, err)
	}
	return configs[0]
}

// timestamp+incrementing reads inserts and updates (a newer timestamp),
// rows sharing a timestamp in id order across batch boundaries, and
// restarts from any delivered record without duplicate or gap.
func TestSourceTimestampIncrementing(t *testing.T) {
	bothDBs(t, func(t *testing.T, db *testDB) {
		db.exec(t, "CREATE TABLE items (id INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, modified TIMESTAMP NOT NULL)")
		for i := 1; i <= 6; i++ {
			// Three rows share each timestamp.
			db.exec(t, fmt.Sprintf("INSERT INTO items VALUES (%d, 'v1', '2024-01-01 00:00:0%d')", i, (i-1)/3))
		}
		cfg := props(cfgConnectionURL, db.url, cfgMode, modeTimestampIncrement, cfgIncrementingColumn, "id",
			cfgTimestampColumns, "modified", cfgTopicPrefix, "", cfgPollInterval, "50", cfgBatchMaxRows, "2")
		offsets := newOffsetStore()
		_, _, tasks := startSource(t, cfg, 1, offsets)
		recs := pollN(t, tasks[0], 6, 200*time.Millisecond)
		if got := ids(t, recs, "id"); !slices.Equal(got, seq(1, 6)) {
			t.Fatalf("ids %v", got)
		}
		ts := field(t, recs[5], "modified").(time.Time)
		if want := time.Date(2024, 1, 1, 0, 0, 1, 0, time.UTC); !ts.Equal(want) {
			t.Fatalf("modified %v, want %v", ts, want)
		}
		off := recs[5].SourceOffset
		if off["incrementing"] != int64(6) || off["timestamp"] != ts.UnixMilli() || off["timestamp_nanos"] != int64(0) {
			t.Fatalf("offset %v", off)
		}

		// An update moves row 2 to a later time: it is read again, after the rest.
		db.exec(t, "UPDATE items SET name = 'v2', modified = '2024-01-01 00:00:05' WHERE id = 2")
		recs2 := pollN(t, tasks[0], 1, 200*time.Millisecond)
		if field(t, recs2[0], "id") == nil || field(t, recs2[0], "name") != "v2" {
			t.Fatalf("update read as %v", describeRecords(recs2))
		}

		// Restart after record 4 (id 4: in the middle of the second timestamp).
		offsets.commit(t, recs[:4])
		tasks[0].Stop()
		again := startSourceTask(t, tasksConfig(t, cfg), offsets)
		recs3 := pollN(t, again, 3, 200*time.Millisecond)
		if got := ids(t, recs3, "id"); !slices.Equal(got, []int64{5, 6, 2}) {
			t.Fatalf("after restart ids %v, want 5 6 2", got)
		}
	})
}

// Timestamp mode moves its offset to a timestamp only when the next row is
// later, so a restart between rows that share a timestamp reads them again
// (at least once) rather than skip one.
func TestSourceTimestampModeSharedTimestamps(t *testing.T) {
	// A query.suffix keeps the result open across polls (no LIMIT can be
	// added), the other path through timestamp mode.
	for _, suffix := range []string{"", "-- a suffix"} {
		t.Run("suffix="+suffix, func(t *testing.T) { sharedTimestamps(t, suffix) })
	}
}

func sharedTimestamps(t *testing.T, suffix string) {
	bothDBs(t, func(t *testing.T, db *testDB) {
		db.exec(t, "CREATE TABLE events (id INTEGER NOT NULL, modified TIMESTAMP NOT NULL)",
			"INSERT INTO events VALUES (1, '2024-01-01 00:00:01')",
			"INSERT INTO events VALUES (2, '2024-01-01 00:00:02')",
			"INSERT INTO events VALUES (3, '2024-01-01 00:00:02')",
			"INSERT INTO events VALUES (4, '2024-01-01 00:00:03')")
		cfg := props(cfgConnectionURL, db.url, cfgMode, modeTimestamp, cfgTimestampColumns, "modified",
			cfgTopicPrefix, "t-", cfgPollInterval, "50", cfgBatchMaxRows, "10", cfgQuerySuffix, suffix)
		offsets := newOffsetStore()
		_, _, tasks := startSource(t, cfg, 1, offsets)
		recs := pollN(t, tasks[0], 4, 200*time.Millisecond)
		second := time.Date(2024, 1, 1, 0, 0, 1, 0, time.UTC).UnixMilli()
		if recs[1].SourceOffset["timestamp"] != second {
			t.Fatalf("record 2's offset %v: it must stay at the first row's timestamp while row 3 shares its own", recs[1].SourceOffset)
		}
		offsets.commit(t, recs[:2])
		tasks[0].Stop()
		again := startSourceTask(t, tasksConfig(t, cfg), offsets)
		recs2 := pollN(t, again, 3, 200*time.Millisecond)
		got := ids(t, recs2, "id")
		slices.Sort(got)
		if !slices.Equal(got, []int64{2, 3, 4}) {
			t.Fatalf("after restart %v, want 2 3 4", got)
		}

		// An update with a new timestamp is read again.
		db.exec(t, "UPDATE events SET modified = '2024-01-02 00:00:00' WHERE id = 1")
		recs3 := pollN(t, again, 1, 200*time.Millisecond)
		if ids(t, recs3, "id")[0] != 1 {
			t.Fatalf("update read as %v", describeRecords(recs3))
		}
	})
}

// timestamp.delay.interval.ms holds back rows newer than now minus the delay.
func TestSourceTimestampDelay(t *testing.T) {
	bothDBs(t, func(t *testing.T, db *testDB) {
		db.exec(t, "CREATE TABLE events (id INTEGER NOT NULL, modified TIMESTAMP NOT NULL)")
		now := time.Now().UTC()
		db.exec(t, fmt.Sprintf("INSERT INTO events VALUES (1, '%s')", now.Add(-time.Hour).Format(sqliteTimeLayout)),
			fmt.Sprintf("INSERT INTO events VALUES (2, '%s')", now.Add(-time.Second).Format(sqliteTimeLayout)))
		cfg := props(cfgConnectionURL, db.url, cfgMode, modeTimestamp, cfgTimestampColumns, "modified",
			cfgTopicPrefix, "t-", cfgPollInterval, "50", cfgTimestampDelay, "600000")
		_, _, tasks := startSource(t, cfg, 1, newOffsetStore())
		recs := pollN(t, tasks[0], 1, 300*time.Millisecond)
		if ids(t, recs, "id")[0] != 1 {
			t.Fatalf("read %v", describeRecords(recs))
		}
	})
}

// Bulk mode copies the whole table every poll.interval.ms.
func TestSourceBulk(t *testing.T) {
	bothDBs(t, func(t *testing.T, db *testDB) {
		db.exec(t, "CREATE TABLE colours (id INTEGER NOT NULL, name TEXT)")
		insertRows(t, db, "colours", 1, 3)
		cfg := props(cfgConnectionURL, db.url, cfgMode, modeBulk, cfgTopicPrefix, "bulk-", cfgPollInterval, "300", cfgBatchMaxRows, "2")
		_, _, tasks := startSource(t, cfg, 1, newOffsetStore())
		recs := pollN(t, tasks[0], 3, 0)
		if len(recs[0].SourceOffset) != 0 {
			t.Fatalf("bulk offset %v, want none", recs[0].SourceOffset)
		}
		recs = pollN(t, tasks[0], 3, 0)
		if got := ids(t, recs, "id"); !slices.Equal(got, seq(1, 3)) {
			t.Fatalf("second copy %v", got)
		}
	})
}

// Query mode runs the query with the mode's WHERE clause appended, in one
// task, to the topic named by topic.prefix, under the partition {"query": "query"}.
func TestSourceQueryMode(t *testing.T) {
	bothDBs(t, func(t *testing.T, db *testDB) {
		db.exec(t, "CREATE TABLE a (id INTEGER NOT NULL, name TEXT NOT NULL)", "CREATE TABLE b (id INTEGER NOT NULL, colour TEXT NOT NULL)")
		insertRows(t, db, "a", 1, 4)
		db.exec(t, "INSERT INTO b VALUES (1, 'red')", "INSERT INTO b VALUES (2, 'blue')", "INSERT INTO b VALUES (3, 'green')")
		cfg := props(cfgConnectionURL, db.url, cfgMode, modeIncrementing, cfgIncrementingColumn, "id",
			cfgQuery, "SELECT * FROM (SELECT a.id, a.name, b.colour FROM a JOIN b ON a.id = b.id) joined",
			cfgTopicPrefix, "joined", cfgPollInterval, "50")
		offsets := newOffsetStore()
		c, _, tasks := startSource(t, cfg, 4, offsets)
		if len(tasks) != 1 {
			t.Fatalf("query mode made %d tasks", len(tasks))
		}
		recs := pollN(t, tasks[0], 3, 200*time.Millisecond)
		if recs[0].Topic != "joined" || partitionKey(recs[0].SourcePartition) != `{"query":"query"}` || field(t, recs[2], "colour") != "green" {
			t.Fatalf("records %v partition %v", describeRecords(recs), recs[0].SourcePartition)
		}
		offsets.commit(t, recs)
		tasks[0].Stop()
		db.exec(t, "INSERT INTO a VALUES (5, 'row5')", "INSERT INTO b VALUES (5, 'black')")
		configs, _ := c.TaskConfigs(1)
		again := startSourceTask(t, configs[0], offsets)
		recs = pollN(t, again, 1, 200*time.Millisecond)
		if ids(t, recs, "id")[0] != 5 {
			t.Fatalf("after restart %v", describeRecords(recs))
		}
	})
}

// Tables are filtered by the include and exclude lists, split over tasks,
// and a table created later is found by the monitor, which asks for new
// task configs.
func TestSourceTableFiltersAndNewTables(t *testing.T) {
	bothDBs(t, func(t *testing.T, db *testDB) {
		for _, n := range []string{"t1", "t2", "t3", "skipped"} {
			db.exec(t, "CREATE TABLE "+n+" (id INTEGER NOT NULL, name TEXT)")
			insertRows(t, db, n, 1, 2)
		}
		cfg := props(cfgConnectionURL, db.url, cfgMode, modeIncrementing, cfgIncrementingColumn, "id",
			cfgTopicPrefix, "p-", cfgPollInterval, "50", cfgTablePollInterval, "100", cfgTableExcludeList, "skipped")
		c, cctx, tasks := startSource(t, cfg, 2, newOffsetStore())
		if len(tasks) != 2 {
			t.Fatalf("%d tasks for 3 tables and max 2", len(tasks))
		}
		topics := map[string]int{}
		for _, task := range tasks {
			for _, r := range pollN(t, task, 2*len(task.queriers), 100*time.Millisecond) {
				topics[r.Topic]++
			}
		}
		if fmt.Sprint(topics) != "map[p-t1:2 p-t2:2 p-t3:2]" {
			t.Fatalf("topics %v", topics)
		}

		db.exec(t, "CREATE TABLE t4 (id INTEGER NOT NULL, name TEXT)")
		deadline := time.Now().Add(10 * time.Second)
		for cctx.reconfigs.Load() == 0 {
			if time.Now().After(deadline) {
				t.Fatal("the new table did not ask for a reconfiguration")
			}
			time.Sleep(20 * time.Millisecond)
		}
		configs, _ := c.TaskConfigs(2)
		var all []string
		for _, tc := range configs {
			all = append(all, strings.Split(tc[taskConfigTables], ",")...)
		}
		slices.Sort(all)
		want := []string{"t1", "t2", "t3", "t4"}
		if db.kind == postgres {
			want = []string{"public.t1", "public.t2", "public.t3", "public.t4"}
		}
		if !slices.Equal(all, want) {
			t.Fatalf("tables after the new one %v", all)
		}

		// An include list names exactly the tables to copy.
		inc := props(cfgConnectionURL, db.url, cfgMode, modeBulk, cfgTopicPrefix, "p-", cfgTableIncludeList, "t2,t4", cfgTablePollInterval, "0")
		c2 := &SourceConnector{}
		if err := c2.Start(&connectorCtx{}, inc); err != nil {
			t.Fatal(err)
		}
		defer c2.Stop()
		configs, _ = c2.TaskConfigs(5)
		if len(configs) != 2 {
			t.Fatalf("include list gave %d task configs", len(configs))
		}
	})
}

// validate.non.null refuses a nullable incrementing column.
func TestSourceRefusesNullableColumns(t *testing.T) {
	bothDBs(t, func(t *testing.T, db *testDB) {
		db.exec(t, "CREATE TABLE loose (id INTEGER, modified TIMESTAMP)", "INSERT INTO loose VALUES (1, '2024-01-01 00:00:00')")
		cfg := props(cfgConnectionURL, db.url, cfgMode, modeIncrementing, cfgIncrementingColumn, "id", cfgTopicPrefix, "x-", cfgPollInterval, "50")
		_, _, tasks := startSource(t, cfg, 1, newOffsetStore())
		_, err := tasks[0].Poll(t.Context())
		if err == nil || !strings.Contains(err.Error(), "nullable") {
			t.Fatalf("poll error %v, want one about the nullable column", err)
		}
		cfg[cfgValidateNonNull] = "false"
		_, _, tasks = startSource(t, cfg, 1, newOffsetStore())
		pollN(t, tasks[0], 1, 0)

		cfg = props(cfgConnectionURL, db.url, cfgMode, modeIncrementing, cfgIncrementingColumn, "nope", cfgTopicPrefix, "x-", cfgPollInterval, "50")
		_, _, tasks = startSource(t, cfg, 1, newOffsetStore())
		if _, err := tasks[0].Poll(t.Context()); err == nil || !strings.Contains(err.Error(), "not a column") {
			t.Fatalf("poll error %v, want one about the missing column", err)
		}
	})
}

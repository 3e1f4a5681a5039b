package jdbc

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/samsa-io/samsa/connect"
)

// A database failure while polling (here the table dropped under the task)
// is a retriable error, so the runtime polls again rather than fail.
func TestSourceDatabaseErrorIsRetriable(t *testing.T) {
	db := startSQLite(t)
	db.exec(t, "CREATE TABLE gone (id INTEGER NOT NULL)", "INSERT INTO gone VALUES (1)")
	cfg := props(cfgConnectionURL, db.url, cfgMode, modeIncrementing, cfgIncrementingColumn, "id", cfgTopicPrefix, "", cfgPollInterval, "20")
	_, _, tasks := startSource(t, cfg, 1, newOffsetStore())
	pollN(t, tasks[0], 1, 0)
	db.exec(t, "DROP TABLE gone")
	var err error
	for deadline := time.Now().Add(5 * time.Second); err == nil && time.Now().Before(deadline); {
		_, err = tasks[0].Poll(context.Background())
	}
	if err == nil || !connect.IsRetriable(err) {
		t.Fatalf("poll of a dropped table: %v, want a retriable error", err)
	}
}

// Poll returns within about a second when nothing is due, and at once when
// its context ends, so the runtime can commit and stop on time.
func TestSourcePollReturnsWhenIdle(t *testing.T) {
	db := startSQLite(t)
	db.exec(t, "CREATE TABLE idle (id INTEGER NOT NULL)", "INSERT INTO idle VALUES (1)")
	cfg := props(cfgConnectionURL, db.url, cfgMode, modeIncrementing, cfgIncrementingColumn, "id", cfgTopicPrefix, "", cfgPollInterval, "600000")
	_, _, tasks := startSource(t, cfg, 1, newOffsetStore())
	pollN(t, tasks[0], 1, 0)
	start := time.Now()
	// The timeout only bounds a broken Poll; a working one returns first.
	bounded, stop := context.WithTimeout(context.Background(), 3*time.Second)
	defer stop()
	if recs, err := tasks[0].Poll(bounded); err != nil || len(recs) != 0 {
		t.Fatalf("idle poll: %v %v", recs, err)
	}
	if took := time.Since(start); took > 1500*time.Millisecond {
		t.Fatalf("idle poll took %v", took)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start = time.Now()
	tasks[0].Poll(ctx)
	if took := time.Since(start); took > 100*time.Millisecond {
		t.Fatalf("poll with an ended context took %v", took)
	}
}

// timestamp.initial=-1 starts at the database's now; a positive value at
// that epoch millisecond.
func TestSourceTimestampInitial(t *testing.T) {
	db := startSQLite(t)
	db.exec(t, "CREATE TABLE ev (id INTEGER NOT NULL, at TIMESTAMP NOT NULL)",
		"INSERT INTO ev VALUES (1, '2020-01-01 00:00:00')", "INSERT INTO ev VALUES (2, '2023-01-01 00:00:00')")
	cfg := props(cfgConnectionURL, db.url, cfgMode, modeTimestamp, cfgTimestampColumns, "at", cfgTopicPrefix, "", cfgPollInterval, "50",
		cfgTimestampInitial, "1640995200000") // 2022-01-01
	_, _, tasks := startSource(t, cfg, 1, newOffsetStore())
	if got := ids(t, pollN(t, tasks[0], 1, 200*time.Millisecond), "id"); got[0] != 2 {
		t.Fatalf("from 2022: %v", got)
	}
	cfg[cfgTimestampInitial] = "-1"
	_, _, tasks = startSource(t, cfg, 1, newOffsetStore())
	pollN(t, tasks[0], 0, 200*time.Millisecond)
	db.exec(t, "INSERT INTO ev VALUES (3, '"+time.Now().UTC().Add(-50*time.Millisecond).Format(sqliteTimeLayout)+"')")
	if got := ids(t, pollN(t, tasks[0], 1, 200*time.Millisecond), "id"); got[0] != 3 {
		t.Fatalf("from now: %v", got)
	}
}

// Offsets a Confluent worker stored under the V1 partition
// ({"protocol": "1", "table": fully qualified name}) are picked up.
func TestSourceReadsConfluentV1Offsets(t *testing.T) {
	db := startSQLite(t)
	db.exec(t, "CREATE TABLE orders (id INTEGER NOT NULL, name TEXT)")
	insertRows(t, db, "orders", 1, 4)
	offsets := newOffsetStore()
	offsets.m[partitionKey(map[string]any{"protocol": "1", "table": "orders"})] = map[string]any{"incrementing": float64(2)}
	cfg := props(cfgConnectionURL, db.url, cfgMode, modeIncrementing, cfgIncrementingColumn, "id", cfgTopicPrefix, "", cfgPollInterval, "50")
	_, _, tasks := startSource(t, cfg, 1, offsets)
	if got := ids(t, pollN(t, tasks[0], 2, 200*time.Millisecond), "id"); !slices.Equal(got, []int64{3, 4}) {
		t.Fatalf("from a V1 offset: %v", got)
	}
}

// schema.pattern narrows PostgreSQL tables to matching schemas; query.suffix
// is appended to the query.
func TestSourceSchemaPatternAndQuerySuffix(t *testing.T) {
	db := startPG(t)
	db.exec(t, "CREATE SCHEMA sales", "CREATE SCHEMA hr",
		"CREATE TABLE sales.deals (id INT NOT NULL)", "CREATE TABLE hr.people (id INT NOT NULL)",
		"INSERT INTO sales.deals VALUES (1), (2), (3)")
	cfg := props(cfgConnectionURL, db.url, cfgMode, modeIncrementing, cfgIncrementingColumn, "id", cfgTopicPrefix, "pg-",
		cfgSchemaPattern, "sal%", cfgPollInterval, "50", cfgQuerySuffix, "FOR SHARE")
	c, _, tasks := startSource(t, cfg, 4, newOffsetStore())
	configs, _ := c.TaskConfigs(4)
	if len(configs) != 1 || configs[0][taskConfigTables] != "sales.deals" {
		t.Fatalf("task configs %v", configs)
	}
	recs := pollN(t, tasks[0], 3, 200*time.Millisecond)
	if recs[0].Topic != "pg-deals" {
		t.Fatalf("topic %s", recs[0].Topic)
	}

	cfg[cfgQuerySuffix] = "NONSENSE"
	_, _, tasks = startSource(t, cfg, 1, newOffsetStore())
	if _, err := tasks[0].Poll(context.Background()); err == nil || !strings.Contains(err.Error(), "NONSENSE") {
		t.Fatalf("a bad suffix did not reach the query: %v", err)
	}
}

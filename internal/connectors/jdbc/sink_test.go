package jdbc

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/samsa-io/samsa/connect"
)

var (
	userKey = connect.NewStruct("key").Field("id", connect.Int32Schema).MustBuild()
	userV1  = connect.NewStruct("user").
		Field("id", connect.Int32Schema).
		Field("name", connect.StringSchema).
		Field("score", connect.OptionalFloat64).MustBuild()
	// userV2 adds an optional field (auto.evolve adds a nullable column).
	userV2 = connect.NewStruct("user").
		Field("id", connect.Int32Schema).
		Field("name", connect.StringSchema).
		Field("score", connect.OptionalFloat64).
		Field("email", connect.OptionalString).MustBuild()
)

func userRecord(offset int64, id int32, name string, score any) connect.SinkRecord {
	k := connect.NewStructValue(userKey).MustPut("id", id)
	v := connect.NewStructValue(userV1).MustPut("id", id).MustPut("name", name).MustPut("score", score)
	return sinkRecord("users", offset, userKey, k, userV1, v)
}

func tombstone(offset int64, id int32) connect.SinkRecord {
	k := connect.NewStructValue(userKey).MustPut("id", id)
	return sinkRecord("users", offset, userKey, k, nil, nil)
}

func put(t *testing.T, task *SinkTask, recs ...connect.SinkRecord) {
	t.Helper()
	if err := task.Put(context.Background(), recs); err != nil {
		t.Fatalf("put: %v", err)
	}
	if err := task.Flush(context.Background(), nil); err != nil {
		t.Fatalf("flush: %v", err)
	}
}

func rowsOf(t *testing.T, db *testDB, q string) string {
	t.Helper()
	var lines []string
	for _, r := range db.queryStrings(t, q) {
		lines = append(lines, strings.Join(r, "|"))
	}
	return strings.Join(lines, "\n")
}

// Upsert by record key: auto.create makes the table, redelivering the same
// records changes nothing, a newer value replaces the row, and a tombstone
// deletes it.
func TestSinkUpsertAndDelete(t *testing.T) {
	bothDBs(t, func(t *testing.T, db *testDB) {
		task := startSink(t, props(cfgConnectionURL, db.url, cfgInsertMode, insertModeUpsert, cfgPKMode, pkModeRecordKey,
			cfgAutoCreate, "true", cfgDeleteEnabled, "true", cfgBatchSize, "2"))
		batch := []connect.SinkRecord{userRecord(0, 1, "ann", 1.5), userRecord(1, 2, "bob", nil), userRecord(2, 3, "cy", 3.0)}
		put(t, task, batch...)
		put(t, task, batch...) // redelivery after a crash before the offset commit
		const q = `SELECT id, name, score FROM users ORDER BY id`
		if got := rowsOf(t, db, q); got != "1|ann|1.5\n2|bob|NULL\n3|cy|3" {
			t.Fatalf("after upserts:\n%s", got)
		}
		// Two records of one key in one statement: the later wins.
		put(t, task, userRecord(3, 2, "bob2", 2.0), userRecord(4, 2, "bob3", 2.5), tombstone(5, 3))
		if got := rowsOf(t, db, q); got != "1|ann|1.5\n2|bob3|2.5" {
			t.Fatalf("after update and delete:\n%s", got)
		}
		// The created table has the key as its primary key.
		var pk string
		if db.kind == postgres {
			pk = rowsOf(t, db, `SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey) WHERE i.indrelid = 'users'::regclass AND i.indisprimary`)
		} else {
			pk = rowsOf(t, db, `SELECT name FROM pragma_table_info('users') WHERE pk > 0`)
		}
		if pk != "id" {
			t.Fatalf("primary key %q", pk)
		}
	})
}

// insert.mode=insert writes rows as they come; a batch that fails part way
// (here a duplicate key in its third record) leaves none of its rows, and
// fails the task once max.retries are used up.
func TestSinkFailedBatchRollsBack(t *testing.T) {
	bothDBs(t, func(t *testing.T, db *testDB) {
		task := startSink(t, props(cfgConnectionURL, db.url, cfgPKMode, pkModeRecordKey, cfgAutoCreate, "true",
			cfgMaxRetries, "1", cfgRetryBackoff, "10", cfgBatchSize, "1"))
		put(t, task, userRecord(0, 1, "ann", nil))
		bad := []connect.SinkRecord{userRecord(1, 2, "bob", nil), userRecord(2, 3, "cy", nil), userRecord(3, 1, "dup", nil)}
		err := task.Put(context.Background(), bad)
		if err == nil || !connect.IsRetriable(err) {
			t.Fatalf("first failure %v, want a retriable error", err)
		}
		if got := rowsOf(t, db, "SELECT id, name FROM users ORDER BY id"); got != "1|ann" {
			t.Fatalf("a failed batch left rows:\n%s", got)
		}
		err = task.Put(context.Background(), bad)
		if err == nil || connect.IsRetriable(err) {
			t.Fatalf("after max.retries: %v, want a final error", err)
		}
		if got := rowsOf(t, db, "SELECT id, name FROM users ORDER BY id"); got != "1|ann" {
			t.Fatalf("a failed batch left rows:\n%s", got)
		}
	})
}

// auto.evolve adds a nullable column for a new optional field; a new
// required field without a default cannot be added; without auto.evolve a
// missing column is an error.
func TestSinkAutoEvolve(t *testing.T) {
	bothDBs(t, func(t *testing.T, db *testDB) {
		cfg := props(cfgConnectionURL, db.url, cfgInsertMode, insertModeUpsert, cfgPKMode, pkModeRecordValue, cfgPKFields, "id", cfgAutoCreate, "true")
		task := startSink(t, cfg)
		put(t, task, userRecord(0, 1, "ann", nil))
		v2 := connect.NewStructValue(userV2).MustPut("id", int32(2)).MustPut("name", "bob").MustPut("email", "bob@example.com")
		rec2 := sinkRecord("users", 1, nil, nil, userV2, v2)
		if err := task.Put(context.Background(), []connect.SinkRecord{rec2}); err == nil || !strings.Contains(err.Error(), "auto-evolution is disabled") {
			t.Fatalf("without auto.evolve: %v", err)
		}
		cfg[cfgAutoEvolve] = "true"
		task = startSink(t, cfg)
		put(t, task, rec2)
		if got := rowsOf(t, db, "SELECT id, name, email FROM users ORDER BY id"); got != "1|ann|NULL\n2|bob|bob@example.com" {
			t.Fatalf("after evolve:\n%s", got)
		}
		v3schema := connect.NewStruct("user").Field("id", connect.Int32Schema).Field("name", connect.StringSchema).Field("age", connect.Int32Schema).MustBuild()
		v3 := connect.NewStructValue(v3schema).MustPut("id", int32(3)).MustPut("name", "cy").MustPut("age", int32(5))
		err := task.Put(context.Background(), []connect.SinkRecord{sinkRecord("users", 2, nil, nil, v3schema, v3)})
		if err == nil || !strings.Contains(err.Error(), "not optional and does not have a default value") {
			t.Fatalf("required new field: %v", err)
		}
	})
}

// pk.mode=kafka keys rows by topic, partition and offset; fields.whitelist
// limits the columns; table.name.format names the table; insert.mode=update
// changes existing rows only.
func TestSinkKafkaKeyWhitelistAndUpdate(t *testing.T) {
	bothDBs(t, func(t *testing.T, db *testDB) {
		task := startSink(t, props(cfgConnectionURL, db.url, cfgInsertMode, insertModeUpsert, cfgPKMode, pkModeKafka,
			cfgAutoCreate, "true", cfgFieldsWhitelist, "name", cfgTableNameFormat, "kafka_${topic}"))
		put(t, task, userRecord(7, 1, "ann", 1.0), userRecord(8, 2, "bob", 2.0))
		put(t, task, userRecord(8, 2, "bob", 2.0))
		if got := rowsOf(t, db, "SELECT * FROM kafka_users ORDER BY __connect_offset"); got != "users|0|7|ann\nusers|0|8|bob" {
			t.Fatalf("kafka keyed rows:\n%s", got)
		}

		db.exec(t, "CREATE TABLE upd (id INTEGER NOT NULL PRIMARY KEY, name TEXT, score REAL)", "INSERT INTO upd VALUES (1, 'old', NULL)")
		task = startSink(t, props(cfgConnectionURL, db.url, cfgInsertMode, insertModeUpdate, cfgPKMode, pkModeRecordKey, cfgTableNameFormat, "upd"))
		put(t, task, userRecord(0, 1, "new", 4.0), userRecord(1, 2, "nobody", nil))
		if got := rowsOf(t, db, "SELECT id, name, score FROM upd ORDER BY id"); got != "1|new|4" {
			t.Fatalf("update mode:\n%s", got)
		}
	})
}

// Records the sink cannot write fail clearly and are not retried.
func TestSinkRecordErrors(t *testing.T) {
	db := startSQLite(t)
	task := startSink(t, props(cfgConnectionURL, db.url, cfgPKMode, pkModeRecordKey, cfgAutoCreate, "true"))
	cases := []struct {
		rec  connect.SinkRecord
		want string
	}{
		{sinkRecord("users", 0, nil, nil, nil, map[string]any{"id": 1}), "non-null Struct value and non-null Struct schema"},
		{tombstone(1, 1), "delete.enabled=false"},
		{sinkRecord("users", 2, nil, nil, userV1, connect.NewStructValue(userV1).MustPut("id", int32(1)).MustPut("name", "x")), "record key schema is missing"},
		{sinkRecord("users", 3, connect.Int32Schema, int32(1), userV1, connect.NewStructValue(userV1).MustPut("id", int32(1)).MustPut("name", "x")), "Need exactly one PK column"},
	}
	for _, c := range cases {
		err := task.Put(context.Background(), []connect.SinkRecord{c.rec})
		if err == nil || connect.IsRetriable(err) || !strings.Contains(strings.ToLower(err.Error()), strings.ToLower(c.want)) {
			t.Errorf("record %d: error %v, want a final one containing %q", c.rec.Offset(), err, c.want)
		}
	}
	missing := startSink(t, props(cfgConnectionURL, db.url, cfgPKMode, pkModeRecordKey, cfgTableNameFormat, "absent"))
	if err := missing.Put(context.Background(), []connect.SinkRecord{userRecord(0, 1, "a", nil)}); err == nil || !strings.Contains(err.Error(), "auto-creation is disabled") {
		t.Errorf("missing table: %v", err)
	}
	mapSchema := connect.NewStruct("m").Field("id", connect.Int32Schema).Field("tags", connect.MapOf(connect.StringSchema, connect.StringSchema)).MustBuild()
	v := connect.NewStructValue(mapSchema).MustPut("id", int32(1)).MustPut("tags", map[any]any{"a": "b"})
	k := connect.NewStructValue(userKey).MustPut("id", int32(1))
	if err := task.Put(context.Background(), []connect.SinkRecord{sinkRecord("maps", 0, userKey, k, mapSchema, v)}); err == nil || !strings.Contains(err.Error(), "no SQL type") {
		t.Errorf("map field: %v", err)
	}
	if got := rowsOf(t, db, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"); got != "" {
		t.Errorf("failed puts left tables: %s", got)
	}
}

// Bad configs are refused with the config's name in the message, by Start
// and by Validate (config/validate).
func TestConfigErrors(t *testing.T) {
	dbFile := "jdbc:sqlite:" + t.TempDir() + "/x.db"
	src := func(kv ...string) map[string]string {
		return props(append([]string{cfgConnectionURL, dbFile, cfgMode, modeBulk, cfgTopicPrefix, "p"}, kv...)...)
	}
	sink := func(kv ...string) map[string]string {
		return props(append([]string{cfgConnectionURL, dbFile}, kv...)...)
	}
	cases := []struct {
		name   string
		sink   bool
		props  map[string]string
		key    string
		substr string
	}{
		{"mysql", false, src(cfgConnectionURL, "jdbc:mysql://localhost/db"), cfgConnectionURL, `subprotocol "mysql" is not supported`},
		{"not jdbc", false, src(cfgConnectionURL, "postgres://x/y"), cfgConnectionURL, "not a JDBC URL"},
		{"pg param", false, src(cfgConnectionURL, "jdbc:postgresql://h/db?loggerLevel=DEBUG"), cfgConnectionURL, `"loggerLevel" is not supported`},
		{"memory", false, src(cfgConnectionURL, "jdbc:sqlite::memory:"), cfgConnectionURL, "memory"},
		{"dialect mismatch", false, src(cfgDialectName, postgresDialectName), cfgDialectName, "does not match"},
		{"dialect unknown", false, src(cfgDialectName, "OracleDatabaseDialect"), cfgDialectName, "String must be one of"},
		{"no mode", false, props(cfgConnectionURL, dbFile, cfgTopicPrefix, "p"), cfgMode, "mode must be set"},
		{"bad mode", false, src(cfgMode, "sometimes"), cfgMode, "String must be one of"},
		{"inc no column", false, src(cfgMode, modeIncrementing), cfgIncrementingColumn, "must be set"},
		{"ts no column", false, src(cfgMode, modeTimestamp), cfgTimestampColumns, "at least one column"},
		{"no prefix", false, props(cfgConnectionURL, dbFile, cfgMode, modeBulk), cfgTopicPrefix, "Missing required configuration"},
		{"both lists", false, src(cfgTableWhitelist, "a", cfgTableBlacklist, "b"), cfgTableWhitelist, "cannot both be set"},
		{"query and list", false, src(cfgQuery, "SELECT 1", cfgTableIncludeList, "a"), cfgQuery, "do not set"},
		{"table type", false, src(cfgTableTypes, "SYNONYM"), cfgTableTypes, "not supported"},
		{"numeric mapping", false, src(cfgNumericMapping, "precision_only"), cfgNumericMapping, "not supported"},
		{"timezone", false, src(cfgDBTimezone, "Mars/Olympus"), cfgDBTimezone, "Invalid time zone"},
		{"batch rows", false, src(cfgBatchMaxRows, "0"), cfgBatchMaxRows, "at least 1"},
		{"unsupported", false, src("catalog.pattern", "x"), cfgConnectionURL, "catalog.pattern=x is not supported"},
		{"unsupported value", true, sink("date.timezone", "DB_TIMEZONE"), cfgConnectionURL, "date.timezone=DB_TIMEZONE is not supported"},
		{"delete needs record_key", true, sink(cfgDeleteEnabled, "true", cfgPKMode, pkModeRecordValue), cfgDeleteEnabled, "only supported for pk.mode record_key"},
		{"upsert needs key", true, sink(cfgInsertMode, insertModeUpsert), cfgInsertMode, "needs a primary key"},
		{"kafka pk fields", true, sink(cfgPKMode, pkModeKafka, cfgPKFields, "a,b"), cfgPKFields, "exactly 3"},
		{"bad insert mode", true, sink(cfgInsertMode, "merge"), cfgInsertMode, "String must be one of"},
		{"sqlite user", true, sink(cfgConnectionUser, "me"), cfgConnectionUser, "do not apply to SQLite"},
	}
	// Confluent configs set to what Samsa does anyway are accepted.
	ok := src("timestamp.granularity", "connect_logical", "transaction.isolation.mode", "DEFAULT")
	accepting := &SourceConnector{}
	if err := accepting.Start(&connectorCtx{}, ok); err != nil {
		t.Errorf("accepted defaults refused: %v", err)
	}
	accepting.Stop()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var conn connect.Connector = &SourceConnector{}
			if c.sink {
				conn = &SinkConnector{}
			}
			err := conn.Start(&connectorCtx{}, c.props)
			if err == nil || !strings.Contains(err.Error(), c.substr) {
				t.Fatalf("Start: %v, want %q", err, c.substr)
			}
			conn.Stop()
			values := conn.(connect.ConnectorValidator).Validate(c.props)
			i := slices.IndexFunc(values, func(v connect.ConfigValue) bool { return v.Name == c.key })
			if i < 0 || len(values[i].Errors) == 0 || !strings.Contains(fmt.Sprint(values[i].Errors), c.substr) {
				t.Fatalf("Validate put no %q error on %s: %+v", c.substr, c.key, values)
			}
		})
	}
}

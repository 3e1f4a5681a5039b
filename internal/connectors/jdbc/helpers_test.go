package jdbc

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/samsa-io/samsa/connect"
	"github.com/samsa-io/samsa/internal/connectors/pgtest"
)

// testDB is a database the tests write with plain SQL and point the
// connectors at.
type testDB struct {
	kind dbKind
	url  string // connection.url
	db   *sql.DB
	pg   *pgtest.Server
}

func (d *testDB) exec(t testing.TB, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := d.db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

func (d *testDB) queryStrings(t testing.TB, q string) [][]string {
	t.Helper()
	rows, err := d.db.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out [][]string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		row := make([]string, len(cols))
		for i, v := range vals {
			if v.Valid {
				row[i] = v.String
			} else {
				row[i] = "NULL"
			}
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// startPG starts a PostgreSQL with a fresh database for the test.
func startPG(t testing.TB) *testDB {
	t.Helper()
	srv := pgtest.Start(t)
	return openTestDB(t, srv.JDBCURL("postgres")+"?user="+srv.User+"&sslmode=disable", srv)
}

// newPGDatabase makes another database on the same server.
func newPGDatabase(t testing.TB, srv *pgtest.Server, name string) *testDB {
	t.Helper()
	if _, err := srv.Exec(context.Background(), "postgres", "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	return openTestDB(t, srv.JDBCURL(name)+"?user="+srv.User+"&sslmode=disable", srv)
}

func startSQLite(t testing.TB) *testDB {
	t.Helper()
	return openTestDB(t, "jdbc:sqlite:"+filepath.Join(t.TempDir(), "test.db"), nil)
}

func openTestDB(t testing.TB, url string, srv *pgtest.Server) *testDB {
	t.Helper()
	c, err := parseConnectionURL(url, "", "")
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open(c.driver, c.dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return &testDB{kind: c.kind, url: url, db: db, pg: srv}
}

// bothDBs runs f on SQLite and on a PostgreSQL started once for the test.
func bothDBs(t *testing.T, f func(t *testing.T, db *testDB)) {
	t.Run("sqlite", func(t *testing.T) { f(t, startSQLite(t)) })
	t.Run("postgres", func(t *testing.T) { f(t, startPG(t)) })
}

var quietLogger = slog.New(slog.NewTextHandler(io.Discard, nil))

// connectorCtx is a ConnectorContext counting reconfiguration requests.
type connectorCtx struct {
	reconfigs atomic.Int32
	mu        sync.Mutex
	errs      []error
}

func (c *connectorCtx) RequestTaskReconfiguration() { c.reconfigs.Add(1) }
func (c *connectorCtx) RaiseError(err error) {
	c.mu.Lock()
	c.errs = append(c.errs, err)
	c.mu.Unlock()
}
func (c *connectorCtx) Logger() *slog.Logger { return quietLogger }

// offsetStore is the runtime's offset store, as a test holds it: offsets
// go in only when the test says the records were delivered.
type offsetStore struct {
	mu sync.Mutex
	m  map[string]map[string]any
}

func newOffsetStore() *offsetStore { return &offsetStore{m: map[string]map[string]any{}} }

func partitionKey(p map[string]any) string {
	b, _ := json.Marshal(p)
	return string(b)
}

// commit stores the records' offsets as the runtime does once they are in
// Kafka; the values go through JSON as the offset topic's do.
func (o *offsetStore) commit(t testing.TB, records []connect.SourceRecord) {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, r := range records {
		b, err := json.Marshal(r.SourceOffset)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		o.m[partitionKey(r.SourcePartition)] = m
	}
}

type sourceTaskCtx struct {
	offsets *offsetStore
	config  map[string]string
}

func (c *sourceTaskCtx) Offset(p map[string]any) (map[string]any, error) {
	c.offsets.mu.Lock()
	defer c.offsets.mu.Unlock()
	return c.offsets.m[partitionKey(p)], nil
}
func (c *sourceTaskCtx) Config() map[string]string { return c.config }
func (c *sourceTaskCtx) Logger() *slog.Logger      { return quietLogger }

// startSource starts the connector and one task per task config.
func startSource(t testing.TB, props map[string]string, maxTasks int, offsets *offsetStore) (*SourceConnector, *connectorCtx, []*SourceTask) {
	t.Helper()
	c := &SourceConnector{}
	cctx := &connectorCtx{}
	if err := c.Start(cctx, props); err != nil {
		t.Fatalf("source connector start: %v", err)
	}
	t.Cleanup(func() { c.Stop() })
	configs, err := c.TaskConfigs(maxTasks)
	if err != nil {
		t.Fatal(err)
	}
	var tasks []*SourceTask
	for _, tc := range configs {
		tasks = append(tasks, startSourceTask(t, tc, offsets))
	}
	return c, cctx, tasks
}

func startSourceTask(t testing.TB, config map[string]string, offsets *offsetStore) *SourceTask {
	t.Helper()
	st := c2task()
	if err := st.Start(&sourceTaskCtx{offsets: offsets, config: config}, config); err != nil {
		t.Fatalf("source task start: %v", err)
	}
	t.Cleanup(func() { st.Stop() })
	return st
}

func c2task() *SourceTask { return (&SourceConnector{}).NewTask().(*SourceTask) }

// pollN polls until n records came, then polls on for quiet to check no
// more come.
func pollN(t testing.TB, task *SourceTask, n int, quiet time.Duration) []connect.SourceRecord {
	t.Helper()
	var out []connect.SourceRecord
	deadline := time.Now().Add(20 * time.Second)
	for len(out) < n {
		if time.Now().After(deadline) {
			t.Fatalf("got %d records, want %d: %v", len(out), n, describeRecords(out))
		}
		recs, err := task.Poll(context.Background())
		if err != nil {
			t.Fatalf("poll: %v", err)
		}
		out = append(out, recs...)
	}
	end := time.Now().Add(quiet)
	for time.Now().Before(end) {
		recs, err := task.Poll(context.Background())
		if err != nil {
			t.Fatalf("poll: %v", err)
		}
		out = append(out, recs...)
	}
	if len(out) != n {
		t.Fatalf("got %d records, want %d: %v", len(out), n, describeRecords(out))
	}
	return out
}

func describeRecords(recs []connect.SourceRecord) []string {
	var out []string
	for i, r := range recs {
		if i == 20 {
			out = append(out, fmt.Sprintf("... %d more", len(recs)-20))
			break
		}
		out = append(out, r.Topic+":"+r.Value.(*connect.Struct).String())
	}
	return out
}

// field reads a struct field of a record's value.
func field(t testing.TB, r connect.SourceRecord, name string) any {
	t.Helper()
	v, err := r.Value.(*connect.Struct).Get(name)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// ids reads an integer field of every record.
func ids(t testing.TB, recs []connect.SourceRecord, name string) []int64 {
	t.Helper()
	var out []int64
	for _, r := range recs {
		switch v := field(t, r, name).(type) {
		case int32:
			out = append(out, int64(v))
		case int64:
			out = append(out, v)
		default:
			t.Fatalf("field %s is %T", name, v)
		}
	}
	return out
}

type sinkTaskCtx struct {
	config map[string]string
}

func (c *sinkTaskCtx) Config() map[string]string                          { return c.config }
func (c *sinkTaskCtx) Assignment() []connect.TopicPartition               { return nil }
func (c *sinkTaskCtx) Offset(map[connect.TopicPartition]int64)            {}
func (c *sinkTaskCtx) Pause(...connect.TopicPartition)                    {}
func (c *sinkTaskCtx) Resume(...connect.TopicPartition)                   {}
func (c *sinkTaskCtx) RequestCommit()                                     {}
func (c *sinkTaskCtx) ErrantRecordReporter() connect.ErrantRecordReporter { return nil }
func (c *sinkTaskCtx) Logger() *slog.Logger                               { return quietLogger }

func startSink(t testing.TB, props map[string]string) *SinkTask {
	t.Helper()
	c := &SinkConnector{}
	if err := c.Start(&connectorCtx{}, props); err != nil {
		t.Fatalf("sink connector start: %v", err)
	}
	configs, err := c.TaskConfigs(1)
	if err != nil || len(configs) != 1 {
		t.Fatalf("sink task configs: %v %v", configs, err)
	}
	st := c.NewTask().(*SinkTask)
	if err := st.Start(&sinkTaskCtx{config: configs[0]}, configs[0]); err != nil {
		t.Fatalf("sink task start: %v", err)
	}
	t.Cleanup(func() { st.Stop() })
	return st
}

// sinkRecord makes a record as the runtime hands it to Put.
func sinkRecord(topic string, offset int64, keySchema *connect.Schema, key any, valueSchema *connect.Schema, value any) connect.SinkRecord {
	off := offset
	return connect.SinkRecord{
		Record: connect.Record{
			Topic: topic, Partition: connect.PartitionOf(0), KeySchema: keySchema, Key: key,
			ValueSchema: valueSchema, Value: value, KafkaOffset: &off,
		},
		TimestampType: connect.CreateTime, OriginalTopic: topic, OriginalOffset: offset,
	}
}

func props(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

package pgcdc

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pglogrepl"

	"github.com/samsa-io/samsa/connect"
	"github.com/samsa-io/samsa/internal/connectors/pgtest"
)

// runtime plays the Connect runtime's part for one task: it keeps the
// stored offsets (as the offset topic would, surviving a task), commits
// records as Kafka would acknowledge them, and calls Commit.
type runtime struct {
	mu     sync.Mutex
	stored map[string]any
	props  map[string]string
}

func (r *runtime) Offset(p map[string]any) (map[string]any, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stored == nil {
		return nil, nil
	}
	out := map[string]any{}
	for k, v := range r.stored {
		out[k] = v
	}
	return out, nil
}

func (r *runtime) Config() map[string]string { return r.props }

func (r *runtime) Logger() *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// commit acknowledges records in order and stores the last one's offset,
// then tells the task (Kafka's WorkerSourceTask: commitRecord per ack, the
// offset flush, then commit()).
func (r *runtime) commit(t *testing.T, task *Task, recs []connect.SourceRecord) {
	t.Helper()
	for _, rec := range recs {
		if err := task.CommitRecord(rec, &connect.RecordMetadata{Topic: rec.Topic}); err != nil {
			t.Fatal(err)
		}
	}
	if len(recs) > 0 {
		r.mu.Lock()
		r.stored = recs[len(recs)-1].SourceOffset
		r.mu.Unlock()
	}
	if err := task.Commit(); err != nil {
		t.Fatal(err)
	}
}

type fixture struct {
	srv *pgtest.Server
	rt  *runtime
}

func newFixture(t *testing.T) *fixture { return newFixtureB(t) }

func newFixtureB(t testing.TB) *fixture {
	t.Helper()
	return &fixture{srv: pgtest.Start(t), rt: &runtime{}}
}

func (f *fixture) props(extra ...string) map[string]string {
	p := map[string]string{
		cfgHostname:       f.srv.Host,
		cfgPort:           strconv.Itoa(f.srv.Port),
		cfgUser:           f.srv.User,
		cfgDBName:         "postgres",
		cfgTopicPrefix:    "dbserver1",
		cfgPollInterval:   "100",
		cfgStatusInterval: "100",
	}
	for i := 0; i+1 < len(extra); i += 2 {
		p[extra[i]] = extra[i+1]
	}
	return p
}

func (f *fixture) exec(t *testing.T, sql string) string { return f.execB(t, sql) }

func (f *fixture) execB(t testing.TB, sql string) string {
	t.Helper()
	out, err := f.srv.Exec(context.Background(), "postgres", sql)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(out)
}

// start starts a task the way the runtime does.
func (f *fixture) start(t *testing.T, props map[string]string) *Task { return f.startB(t, props) }

func (f *fixture) startB(t testing.TB, props map[string]string) *Task {
	t.Helper()
	c := Plugins()[0].New().(*Connector)
	if err := c.Start(nil, props); err != nil {
		t.Fatal(err)
	}
	cfgs, err := c.TaskConfigs(4)
	if err != nil || len(cfgs) != 1 {
		t.Fatalf("TaskConfigs(4) = %d configs, %v; want one", len(cfgs), err)
	}
	task := c.NewTask().(*Task)
	f.rt.props = cfgs[0]
	if err := task.Start(f.rt, cfgs[0]); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = task.Stop() }) // a second Stop is harmless
	return task
}

// poll polls until n records came (or fails after a while); errors fail
// the test unless they are retriable.
func poll(t *testing.T, task *Task, n int) []connect.SourceRecord {
	t.Helper()
	var out []connect.SourceRecord
	deadline := time.Now().Add(20 * time.Second)
	for len(out) < n {
		if time.Now().After(deadline) {
			t.Fatalf("got %d records, want %d: %s", len(out), n, describe(out))
		}
		recs, err := task.Poll(context.Background())
		if err != nil {
			t.Fatalf("poll: %v", err)
		}
		out = append(out, recs...)
	}
	if len(out) != n {
		t.Fatalf("got %d records, want %d: %s", len(out), n, describe(out))
	}
	return out
}

// quiet polls for a while and fails on any record.
func quiet(t *testing.T, task *Task, d time.Duration) {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); {
		recs, err := task.Poll(context.Background())
		if err != nil {
			t.Fatalf("poll: %v", err)
		}
		if len(recs) > 0 {
			t.Fatalf("want no records, got %s", describe(recs))
		}
	}
}

func describe(recs []connect.SourceRecord) string {
	var b strings.Builder
	for _, r := range recs {
		fmt.Fprintf(&b, "\n  %s key=%v op=%s after=%v", r.Topic, r.Key, field(r, "op"), field(r, "after"))
	}
	return b.String()
}

// field is a top-level field of a record's value, nil for a tombstone.
func field(r connect.SourceRecord, name string) any {
	st, ok := r.Value.(*connect.Struct)
	if !ok {
		return nil
	}
	v, _ := st.Get(name)
	return v
}

// get reads a nested field: get(r, "after", "name").
func get(t *testing.T, r connect.SourceRecord, path ...string) any {
	t.Helper()
	var cur any = r.Value
	for _, p := range path {
		st, ok := cur.(*connect.Struct)
		if !ok {
			t.Fatalf("%s: %v is not a struct at %q", r.Topic, cur, p)
		}
		v, err := st.Get(p)
		if err != nil {
			t.Fatal(err)
		}
		cur = v
	}
	return cur
}

func ops(recs []connect.SourceRecord) string {
	var b []string
	for _, r := range recs {
		if r.Value == nil {
			b = append(b, "tombstone")
			continue
		}
		b = append(b, fmt.Sprint(field(r, "op")))
	}
	return strings.Join(b, ",")
}

// slotFlushed is the slot's confirmed_flush_lsn.
func (f *fixture) slotFlushed(t *testing.T, slot string) uint64 {
	t.Helper()
	out := f.exec(t, "SELECT confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = '"+slot+"'")
	lsn, err := pglogrepl.ParseLSN(out)
	if err != nil {
		t.Fatalf("slot %s: %q: %v", slot, out, err)
	}
	return uint64(lsn)
}

func offsetLSN(t *testing.T, m map[string]any, key string) uint64 {
	t.Helper()
	n, err := toInt64(m[key])
	if err != nil {
		t.Fatalf("offset %s: %v", key, err)
	}
	return uint64(n)
}

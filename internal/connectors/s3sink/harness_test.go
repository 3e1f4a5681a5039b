package s3sink

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/samsa-io/samsa/connect"
	"github.com/samsa-io/samsa/internal/clock"
)

const testBucket = "sink-bucket"

// fakeS3 is gofakes3 over an in-memory backend on a loopback port, behind
// a handler that can fail requests (500) the test picks.
type fakeS3 struct {
	t       testing.TB
	backend *s3mem.Backend
	handler http.Handler
	srv     *httptest.Server
	addr    string

	mu   sync.Mutex
	fail func(r *http.Request) bool
	// requests counts what reached the fake, by kind.
	puts atomic.Int64
}

func newFakeS3(t testing.TB) *fakeS3 {
	t.Helper()
	f := &fakeS3{t: t, backend: s3mem.New()}
	if err := f.backend.CreateBucket(testBucket); err != nil {
		t.Fatal(err)
	}
	f.handler = gofakes3.New(f.backend).Server()
	f.start("127.0.0.1:0")
	return f
}

func (f *fakeS3) start(addr string) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		f.t.Fatal(err)
	}
	f.srv = httptest.NewUnstartedServer(http.HandlerFunc(f.serve))
	f.srv.Listener.Close()
	f.srv.Listener = l
	f.srv.Start()
	f.addr = l.Addr().String()
	f.t.Cleanup(f.srv.Close)
}

func (f *fakeS3) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	fail := f.fail
	f.mu.Unlock()
	if r.Method == http.MethodPut {
		f.puts.Add(1)
	}
	if fail != nil && fail(r) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>InternalError</Code><Message>injected</Message></Error>`)
		return
	}
	f.handler.ServeHTTP(w, r)
}

// failWhen makes requests matching pred answer 500 (nil: none).
func (f *fakeS3) failWhen(pred func(r *http.Request) bool) {
	f.mu.Lock()
	f.fail = pred
	f.mu.Unlock()
}

// stop closes the server; restart opens it again on the same address with
// the same objects.
func (f *fakeS3) stop()    { f.srv.Close() }
func (f *fakeS3) restart() { f.start(f.addr) }

func (f *fakeS3) url() string { return "http://" + f.addr }

// objects are the bucket's keys and bodies.
func (f *fakeS3) objects() map[string][]byte {
	f.t.Helper()
	list, err := f.backend.ListBucket(testBucket, &gofakes3.Prefix{}, gofakes3.ListBucketPage{})
	if err != nil {
		f.t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, o := range list.Contents {
		obj, err := f.backend.GetObject(testBucket, o.Key, nil)
		if err != nil {
			f.t.Fatal(err)
		}
		b, err := io.ReadAll(obj.Contents)
		obj.Contents.Close()
		if err != nil {
			f.t.Fatal(err)
		}
		out[o.Key] = b
	}
	return out
}

func (f *fakeS3) keys() []string {
	var keys []string
	for k := range f.objects() {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// baseProps are a working config against the fake; overrides win.
func (f *fakeS3) props(overrides ...string) map[string]string {
	p := map[string]string{
		"connector.class":  ConnectorClass,
		"topics":           "orders",
		cfgBucket:          testBucket,
		cfgRegion:          "us-east-1",
		cfgStoreURL:        f.url(),
		cfgAccessKeyID:     "test-key",
		cfgSecretAccessKey: "test-secret",
		cfgFormatClass:     formatJSON,
		cfgFlushSize:       "3",
		cfgPartRetries:     "0",
		cfgRetryBackoffMs:  "1",
	}
	for i := 0; i+1 < len(overrides); i += 2 {
		p[overrides[i]] = overrides[i+1]
	}
	return p
}

// taskContext is the runtime as a sink task sees it, recording seeks.
type taskContext struct {
	props      map[string]string
	assignment []connect.TopicPartition
	reporter   connect.ErrantRecordReporter

	mu    sync.Mutex
	seeks map[connect.TopicPartition]int64
}

func (c *taskContext) Config() map[string]string                          { return c.props }
func (c *taskContext) Assignment() []connect.TopicPartition               { return c.assignment }
func (c *taskContext) Pause(...connect.TopicPartition)                    {}
func (c *taskContext) Resume(...connect.TopicPartition)                   {}
func (c *taskContext) RequestCommit()                                     {}
func (c *taskContext) ErrantRecordReporter() connect.ErrantRecordReporter { return c.reporter }
func (c *taskContext) Logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}
func (c *taskContext) Offset(offsets map[connect.TopicPartition]int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seeks == nil {
		c.seeks = map[connect.TopicPartition]int64{}
	}
	for tp, o := range offsets {
		c.seeks[tp] = o
	}
}

func (c *taskContext) seek(tp connect.TopicPartition) (int64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	o, ok := c.seeks[tp]
	return o, ok
}

// startTask makes a task through the plugin, as the runtime would, starts
// it and opens the partitions.
func startTask(t testing.TB, props map[string]string, clk clock.Clock, partitions ...connect.TopicPartition) (*sinkTask, *taskContext) {
	t.Helper()
	p := Plugins()[0]
	conn := p.New().(connect.SinkConnector)
	if err := conn.Start(nil, props); err != nil {
		t.Fatalf("connector start: %v", err)
	}
	cfgs, err := conn.TaskConfigs(1)
	if err != nil {
		t.Fatal(err)
	}
	task := conn.NewTask().(*sinkTask)
	if clk != nil {
		task.clock = clk
	}
	ctx := &taskContext{props: cfgs[0]}
	if err := task.Start(ctx, cfgs[0]); err != nil {
		t.Fatalf("task start: %v", err)
	}
	if err := task.Open(partitions); err != nil {
		t.Fatalf("open: %v", err)
	}
	return task, ctx
}

var tp0 = connect.TopicPartition{Topic: "orders", Partition: 0}

// rec is a sink record as the runtime hands it over.
func rec(tp connect.TopicPartition, offset int64, ts time.Time, schema *connect.Schema, value any) connect.SinkRecord {
	o := offset
	return connect.SinkRecord{
		Record: connect.Record{
			Topic: tp.Topic, Partition: connect.PartitionOf(tp.Partition),
			ValueSchema: schema, Value: value, Timestamp: ts, KafkaOffset: &o,
		},
		TimestampType: connect.CreateTime, OriginalTopic: tp.Topic, OriginalPartition: tp.Partition, OriginalOffset: offset,
	}
}

// jsonRecs are records offset from..to-1 whose value is {"n": offset}.
func jsonRecs(tp connect.TopicPartition, from, to int64) []connect.SinkRecord {
	var out []connect.SinkRecord
	for o := from; o < to; o++ {
		out = append(out, rec(tp, o, time.UnixMilli(1_700_000_000_000+o), nil, map[string]any{"n": o}))
	}
	return out
}

func put(t *testing.T, task *sinkTask, records []connect.SinkRecord) {
	t.Helper()
	if err := task.Put(context.Background(), records); err != nil {
		t.Fatalf("put: %v", err)
	}
}

func preCommit(t *testing.T, task *sinkTask) map[connect.TopicPartition]int64 {
	t.Helper()
	out, err := task.PreCommit(context.Background(), nil)
	if err != nil {
		t.Fatalf("precommit: %v", err)
	}
	return out
}

// lines splits a JSON-lines body.
func lines(b []byte) []string {
	s := strings.TrimSuffix(string(b), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

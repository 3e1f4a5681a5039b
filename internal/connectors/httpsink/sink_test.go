package httpsink

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/samsa-io/samsa/connect"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

type connectorCtx struct{}

func (connectorCtx) RequestTaskReconfiguration() {}
func (connectorCtx) RaiseError(error)            {}
func (connectorCtx) Logger() *slog.Logger        { return quiet }

// sinkCtx stands in for the runtime; reporter is its dead letter queue.
type sinkCtx struct {
	reporter *reporter
}

func (c sinkCtx) Config() map[string]string               { return nil }
func (c sinkCtx) Assignment() []connect.TopicPartition    { return nil }
func (c sinkCtx) Offset(map[connect.TopicPartition]int64) {}
func (c sinkCtx) Pause(...connect.TopicPartition)         {}
func (c sinkCtx) Resume(...connect.TopicPartition)        {}
func (c sinkCtx) RequestCommit()                          {}
func (c sinkCtx) Logger() *slog.Logger                    { return quiet }
func (c sinkCtx) ErrantRecordReporter() connect.ErrantRecordReporter {
	if c.reporter == nil {
		return nil
	}
	return c.reporter
}

type reporter struct {
	mu      sync.Mutex
	values  []any
	reasons []error
}

func (r *reporter) Report(ctx context.Context, rec connect.SinkRecord, err error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.values = append(r.values, rec.Value)
	r.reasons = append(r.reasons, err)
	return nil
}

// request is what the server received.
type request struct {
	Method, Path, Body, ContentType, Auth, Custom string
}

// server is a real loopback HTTP server that answers each request with the
// next status of its script (200 once the script is used up).
type server struct {
	*httptest.Server
	mu       sync.Mutex
	requests []request
	script   []int
	hold     chan struct{} // while open, requests to /slow wait
}

func newServer(t *testing.T, script ...int) *server {
	s := &server{script: script, hold: make(chan struct{})}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.requests = append(s.requests, request{r.Method, r.URL.EscapedPath(), string(body), r.Header.Get("Content-Type"),
			r.Header.Get("Authorization"), strings.Join(r.Header.Values("X-Custom"), ";")})
		code := http.StatusOK
		if len(s.script) > 0 {
			code, s.script = s.script[0], s.script[1:]
		}
		s.mu.Unlock()
		if r.URL.Path == "/slow" {
			<-s.hold
		}
		w.WriteHeader(code)
		io.WriteString(w, "answer "+http.StatusText(code))
	}))
	t.Cleanup(func() { close(s.hold); s.Close() })
	return s
}

func (s *server) got() []request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]request(nil), s.requests...)
}

func (s *server) bodies() []string {
	var out []string
	for _, r := range s.got() {
		out = append(out, r.Body)
	}
	return out
}

var bg = context.Background()

func start(t *testing.T, ctx sinkCtx, props map[string]string) *Task {
	t.Helper()
	c := NewConnector()
	if err := c.Start(connectorCtx{}, props); err != nil {
		t.Fatalf("connector start: %v", err)
	}
	cfgs, _ := c.TaskConfigs(2)
	if len(cfgs) != 2 || !cmp.Equal(cfgs[0], props) {
		t.Fatalf("task configs %v", cfgs)
	}
	task := c.NewTask().(*Task)
	if err := task.Start(ctx, cfgs[0]); err != nil {
		t.Fatalf("task start: %v", err)
	}
	t.Cleanup(func() { task.Stop() })
	return task
}

func props(url string, kv ...string) map[string]string {
	p := map[string]string{"http.api.url": url, "retry.backoff.ms": "1"}
	for i := 0; i < len(kv); i += 2 {
		p[kv[i]] = kv[i+1]
	}
	return p
}

func recs(values ...any) []connect.SinkRecord {
	out := make([]connect.SinkRecord, len(values))
	for i, v := range values {
		off := int64(i)
		out[i] = connect.SinkRecord{Record: connect.Record{Topic: "orders", Key: "k" + string(rune('0'+i)), Value: v, KafkaOffset: &off}}
	}
	return out
}

func TestPlugins(t *testing.T) {
	p := Plugins()[0]
	if p.Class != "io.confluent.connect.http.HttpSinkConnector" || p.Type != connect.PluginSink ||
		!strings.Contains(strings.Join(p.Aliases, ","), "HttpSink") {
		t.Fatalf("plugin %+v", p)
	}
	if _, ok := p.New().(connect.SinkConnector); !ok {
		t.Fatal("not a sink connector")
	}
}

// Records are buffered: a batch goes when full, the rest on Flush.
func TestBatching(t *testing.T) {
	srv := newServer(t)
	task := start(t, sinkCtx{}, props(srv.URL+"/in", "batch.max.size", "3", "batch.prefix", "<", "batch.suffix", ">", "batch.separator", "\n"))
	if err := task.Put(bg, recs("a", "b", "c", "d", "e")); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"<a\nb\nc>"}, srv.bodies()); diff != "" {
		t.Fatalf("after put (-want +got):\n%s", diff)
	}
	if err := task.Flush(bg, nil); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"<a\nb\nc>", "<d\ne>"}, srv.bodies()); diff != "" {
		t.Fatalf("after flush (-want +got):\n%s", diff)
	}
	r := srv.got()[0]
	if r.Method != "POST" || r.Path != "/in" || r.ContentType != "text/plain; charset=utf-8" {
		t.Fatalf("request %+v", r)
	}
	if err := task.Flush(bg, nil); err != nil || len(srv.got()) != 2 {
		t.Fatalf("an empty flush sent something: %v %d", err, len(srv.got()))
	}
}

func TestDefaultBatchIsOneRecord(t *testing.T) {
	srv := newServer(t)
	task := start(t, sinkCtx{}, props(srv.URL, "request.method", "put"))
	task.Put(bg, recs("x", 1.0, int32(7)))
	if diff := cmp.Diff([]string{"x", "1.0", "7"}, srv.bodies()); diff != "" {
		t.Fatalf("bodies (-want +got):\n%s", diff)
	}
	if srv.got()[0].Method != "PUT" {
		t.Fatalf("method %s", srv.got()[0].Method)
	}
}

func TestJSONBodies(t *testing.T) {
	schema := connect.NewStruct("order").Field("id", connect.Int32Schema).Field("item", connect.OptionalString).
		Field("at", connect.TimestampSchema()).MustBuild()
	st := connect.NewStructValue(schema).MustPut("id", int32(7)).MustPut("at", time.UnixMilli(1700000000123))
	values := []any{st, map[string]any{"b": []any{true, nil}, "a": 1.5}, "plain", `{"already":"json"}`, []byte{1, 2}}

	srv := newServer(t)
	rs := recs(values...)
	rs[0].ValueSchema = schema
	task := start(t, sinkCtx{}, props(srv.URL, "request.body.format", "json", "batch.max.size", "10", "batch.json.as.array", "true"))
	task.Put(bg, rs)
	task.Flush(bg, nil)
	want := `[{"id":7,"item":null,"at":1700000000123},{"a":1.5,"b":[true,null]},"plain",{"already":"json"},"AQI="]`
	if diff := cmp.Diff([]string{want}, srv.bodies()); diff != "" {
		t.Fatalf("body (-want +got):\n%s", diff)
	}
	if ct := srv.got()[0].ContentType; ct != "application/json" {
		t.Fatalf("content type %q", ct)
	}
}

func TestHeadersAndBasicAuth(t *testing.T) {
	srv := newServer(t)
	task := start(t, sinkCtx{}, props(srv.URL, "headers", "X-Custom:one;X-Custom: two:2;Content-Type:application/x-lines",
		"header.separator", ";", "auth.type", "BASIC", "connection.user", "alice", "connection.password", "s3cret"))
	task.Put(bg, recs("x"))
	r := srv.got()[0]
	if r.Custom != "one;two:2" || r.ContentType != "application/x-lines" || r.Auth != "Basic YWxpY2U6czNjcmV0" {
		t.Fatalf("request %+v", r)
	}
}

func TestBearerTokenThroughHeaders(t *testing.T) {
	srv := newServer(t)
	task := start(t, sinkCtx{}, props(srv.URL, "headers", "Authorization:Bearer abc.def"))
	task.Put(bg, recs("x"))
	if got := srv.got()[0].Auth; got != "Bearer abc.def" {
		t.Fatalf("authorization %q", got)
	}
}

// A 5xx is sent again after the backoff until it succeeds.
func TestServerErrorRetried(t *testing.T) {
	srv := newServer(t, 503, 500)
	task := start(t, sinkCtx{}, props(srv.URL, "retry.backoff.ms", "40", "retry.backoff.policy", "CONSTANT_VALUE", "max.retries", "2"))
	began := time.Now()
	if err := task.Put(bg, recs("x")); err != nil {
		t.Fatalf("put: %v", err)
	}
	if took := time.Since(began); took < 80*time.Millisecond {
		t.Fatalf("two retries took %v, less than their backoff", took)
	}
	if diff := cmp.Diff([]string{"x", "x", "x"}, srv.bodies()); diff != "" {
		t.Fatalf("bodies (-want +got):\n%s", diff)
	}
}

func TestRetriesRunOut(t *testing.T) {
	srv := newServer(t, 503, 503, 503, 503)
	task := start(t, sinkCtx{}, props(srv.URL, "max.retries", "2"))
	err := task.Put(bg, recs("x"))
	if err == nil || !strings.Contains(err.Error(), "failed after 3 attempts: HTTP 503 Service Unavailable: answer Service Unavailable") {
		t.Fatalf("put error = %v", err)
	}
	var se *StatusError
	if !errors.As(err, &se) || se.Code != 503 {
		t.Fatalf("error %v is not the status", err)
	}
	if len(srv.got()) != 3 {
		t.Fatalf("%d requests, want 3", len(srv.got()))
	}
}

// A 4xx outside retry.on.status.codes fails the task at once.
func TestClientErrorNotRetriedFails(t *testing.T) {
	srv := newServer(t, 400)
	task := start(t, sinkCtx{}, props(srv.URL, "retry.on.status.codes", "500-"))
	err := task.Put(bg, recs("x"))
	if err == nil || !strings.Contains(err.Error(), "failed after 1 attempts: HTTP 400 Bad Request") {
		t.Fatalf("put error = %v", err)
	}
	if len(srv.got()) != 1 {
		t.Fatalf("%d requests, want 1", len(srv.got()))
	}
}

func TestRetryCodes(t *testing.T) {
	for _, tc := range []struct {
		codes    string
		status   int
		requests int
	}{
		{"400-", 404, 2}, // Confluent's default retries every error
		{"500-", 404, 1},
		{"404,500-", 404, 2},
		{"400-403", 404, 1},
		{"400-404", 404, 2},
		{"500-", 429, 2}, // always retried
		{"500-", 408, 2},
		{"", 503, 1},
	} {
		srv := newServer(t, tc.status, tc.status)
		task := start(t, sinkCtx{}, props(srv.URL, "retry.on.status.codes", tc.codes, "max.retries", "1"))
		task.Put(bg, recs("x"))
		if n := len(srv.got()); n != tc.requests {
			t.Errorf("codes %q status %d: %d requests, want %d", tc.codes, tc.status, n, tc.requests)
		}
	}
}

// behavior.on.error=log skips the failed batch and hands its records to the
// errant record reporter (the dead letter queue); the next batch goes on.
func TestErrorLoggedAndReported(t *testing.T) {
	srv := newServer(t, 400)
	rep := &reporter{}
	task := start(t, sinkCtx{reporter: rep}, props(srv.URL, "behavior.on.error", "log", "retry.on.status.codes", "500-", "batch.max.size", "2"))
	if err := task.Put(bg, recs("a", "b", "c")); err != nil {
		t.Fatalf("put: %v", err)
	}
	if err := task.Flush(bg, nil); err != nil {
		t.Fatalf("flush: %v", err)
	}
	if diff := cmp.Diff([]any{"a", "b"}, rep.values); diff != "" {
		t.Fatalf("reported (-want +got):\n%s", diff)
	}
	var se *StatusError
	if !errors.As(rep.reasons[0], &se) || se.Code != 400 {
		t.Fatalf("reason %v", rep.reasons[0])
	}
	if diff := cmp.Diff([]string{"a,b", "c"}, srv.bodies()); diff != "" {
		t.Fatalf("bodies (-want +got):\n%s", diff)
	}
}

func TestErrorLoggedWithoutReporter(t *testing.T) {
	srv := newServer(t, 400)
	task := start(t, sinkCtx{}, props(srv.URL, "behavior.on.error", "log", "retry.on.status.codes", "500-"))
	if err := task.Put(bg, recs("a")); err != nil {
		t.Fatalf("put: %v", err)
	}
}

func TestErrorIgnored(t *testing.T) {
	srv := newServer(t, 500)
	rep := &reporter{}
	task := start(t, sinkCtx{reporter: rep}, props(srv.URL, "behavior.on.error", "ignore", "max.retries", "0"))
	if err := task.Put(bg, recs("a", "b")); err != nil {
		t.Fatalf("put: %v", err)
	}
	if len(rep.values) != 0 || len(srv.got()) != 2 {
		t.Fatalf("reported %v, %d requests", rep.values, len(srv.got()))
	}
}

func TestNullValues(t *testing.T) {
	t.Run("ignore", func(t *testing.T) {
		srv := newServer(t)
		task := start(t, sinkCtx{}, props(srv.URL, "batch.max.size", "5"))
		task.Put(bg, recs("a", nil, "c"))
		task.Flush(bg, nil)
		if diff := cmp.Diff([]string{"a,c"}, srv.bodies()); diff != "" {
			t.Fatalf("bodies (-want +got):\n%s", diff)
		}
	})
	t.Run("delete", func(t *testing.T) {
		srv := newServer(t)
		task := start(t, sinkCtx{}, props(srv.URL+"/items/${key}", "batch.max.size", "5", "behavior.on.null.values", "delete"))
		rs := recs("a", nil, "c")
		rs[1].Key = "key/1"
		task.Put(bg, rs)
		task.Flush(bg, nil)
		got := srv.got()
		want := []request{
			{Method: "POST", Path: "/items/k0", Body: "a", ContentType: "text/plain; charset=utf-8"},
			{Method: "DELETE", Path: "/items/key%2F1"},
			{Method: "POST", Path: "/items/k2", Body: "c", ContentType: "text/plain; charset=utf-8"},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("requests (-want +got):\n%s", diff)
		}
	})
	t.Run("fail", func(t *testing.T) {
		srv := newServer(t)
		task := start(t, sinkCtx{}, props(srv.URL, "behavior.on.null.values", "fail"))
		err := task.Put(bg, recs("a", nil))
		if err == nil || !strings.Contains(err.Error(), "the record at orders-0 offset 1 has a null value and behavior.on.null.values is fail") {
			t.Fatalf("put error = %v", err)
		}
	})
	t.Run("fail reported", func(t *testing.T) {
		srv := newServer(t)
		rep := &reporter{}
		task := start(t, sinkCtx{reporter: rep}, props(srv.URL, "behavior.on.null.values", "fail", "behavior.on.error", "log"))
		if err := task.Put(bg, recs(nil, "b")); err != nil {
			t.Fatal(err)
		}
		if len(rep.values) != 1 || rep.values[0] != nil || len(srv.got()) != 1 {
			t.Fatalf("reported %v, %d requests", rep.values, len(srv.got()))
		}
	})
}

// Records for different URLs go in different batches, in order.
func TestURLTemplate(t *testing.T) {
	srv := newServer(t)
	task := start(t, sinkCtx{}, props(srv.URL+"/t/${topic}/k/${key}", "batch.max.size", "10"))
	rs := recs("a", "b", "c")
	rs[0].Key, rs[1].Key, rs[2].Key = "x", "x", "y y"
	task.Put(bg, rs)
	task.Flush(bg, nil)
	var paths []string
	for _, r := range srv.got() {
		paths = append(paths, r.Path+" "+r.Body)
	}
	if diff := cmp.Diff([]string{"/t/orders/k/x a,b", "/t/orders/k/y%20y c"}, paths); diff != "" {
		t.Fatalf("requests (-want +got):\n%s", diff)
	}
}

// A request that outlasts http.request.timeout.ms fails, and is retried.
func TestRequestTimeout(t *testing.T) {
	srv := newServer(t)
	task := start(t, sinkCtx{}, props(srv.URL+"/slow", "http.request.timeout.ms", "50", "max.retries", "1"))
	err := task.Put(bg, recs("x"))
	if err == nil || !strings.Contains(err.Error(), "failed after 2 attempts") || !strings.Contains(err.Error(), "Timeout") {
		t.Fatalf("put error = %v", err)
	}
}

// A connection refused is retried, then fails the task.
func TestConnectionRefused(t *testing.T) {
	srv := newServer(t)
	url := srv.URL
	srv.Close()
	task := start(t, sinkCtx{}, props(url, "max.retries", "1"))
	err := task.Put(bg, recs("x"))
	if err == nil || !strings.Contains(err.Error(), "failed after 2 attempts") {
		t.Fatalf("put error = %v", err)
	}
}

// A stopping runtime does not wait out the backoff.
func TestBackoffEndsWithContext(t *testing.T) {
	srv := newServer(t, 503, 503)
	task := start(t, sinkCtx{}, props(srv.URL, "retry.backoff.ms", "3600000"))
	ctx, cancel := context.WithTimeout(bg, 50*time.Millisecond)
	defer cancel()
	began := time.Now()
	err := task.Put(ctx, recs("x"))
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(began) > 10*time.Second {
		t.Fatalf("put = %v after %v", err, time.Since(began))
	}
}

func TestExponentialBackoff(t *testing.T) {
	task := &Task{s: settings{backoff: 100 * time.Millisecond, exponential: true}}
	for attempt, want := range []time.Duration{100, 200, 400, 800} {
		want *= time.Millisecond
		for range 20 {
			if d := task.backoff(attempt); d < want/2 || d > want {
				t.Fatalf("attempt %d: backoff %v outside [%v, %v]", attempt, d, want/2, want)
			}
		}
	}
	for _, attempt := range []int{9, 40, 100} {
		if d := task.backoff(attempt); d < backoffCap/2 || d > backoffCap {
			t.Fatalf("attempt %d: backoff %v outside [%v, %v]", attempt, d, backoffCap/2, backoffCap)
		}
	}
	task.s.backoff = time.Minute // more than the cap: the cap is the backoff
	if d := task.backoff(3); d < 30*time.Second || d > time.Minute {
		t.Fatalf("a one-minute backoff: %v", d)
	}
	task.s.exponential, task.s.backoff = false, 100*time.Millisecond
	if d := task.backoff(5); d != 100*time.Millisecond {
		t.Fatalf("constant backoff %v", d)
	}
}

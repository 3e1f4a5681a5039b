package rest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/samsa-io/samsa/internal/connectrt/api"
)

// seen records the requests a server took before its handler.
type seen struct {
	mu   sync.Mutex
	reqs []*http.Request
}

func (s *seen) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.reqs = append(s.reqs, r.Clone(r.Context()))
		s.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

func (s *seen) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.reqs)
}

func (s *seen) last(t *testing.T) *http.Request {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.reqs) == 0 {
		t.Fatal("the server took no request")
	}
	return s.reqs[len(s.reqs)-1]
}

// worker is one REST server over a memHerder on a real loopback listener.
type testWorker struct {
	herder *memHerder
	url    string
	seen   *seen
	srv    *httptest.Server
}

func startWorker(t *testing.T, leaderURL string) *testWorker {
	t.Helper()
	h := newMemHerder("")
	h.mu.leaderURL = leaderURL
	s, err := New(Config{Herder: h, Loggers: NewLevelVars(0)})
	if err != nil {
		t.Fatal(err)
	}
	sn := &seen{}
	srv := httptest.NewServer(sn.wrap(s))
	t.Cleanup(srv.Close)
	h.workerID = strings.TrimPrefix(srv.URL, "http://")
	return &testWorker{herder: h, url: srv.URL, seen: sn, srv: srv}
}

func do(t *testing.T, method, url, body string, header ...string) (int, string) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

const fileSource = `{"name":"my conn","config":{"connector.class":"FileStreamSource","topic":"t"}}`

// TestForwardToLeader: a write to a worker that is not the leader goes to
// the leader, with the method, path, query, body and Authorization header,
// and forward=true; the leader's answer (201, 200, 202, errors) comes back
// as it is.
func TestForwardToLeader(t *testing.T) {
	leader := startWorker(t, "")
	follower := startWorker(t, leader.url)

	req, _ := http.NewRequest("POST", follower.url+"/connectors", strings.NewReader(fileSource))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Basic dTpw")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated || !strings.Contains(string(b), `"name":"my conn"`) ||
		resp.Header.Get("Location") != follower.url+"/connectors/my%20conn" {
		t.Fatalf("create through the follower: %d %s, Location %q", resp.StatusCode, b, resp.Header.Get("Location"))
	}
	got := leader.seen.last(t)
	if got.Method != "POST" || got.URL.Path != "/connectors" || got.URL.Query().Get("forward") != "true" {
		t.Errorf("the leader got %s %s", got.Method, got.URL)
	}
	if got.Header.Get("Authorization") != "Basic dTpw" {
		t.Errorf("Authorization not forwarded: %q", got.Header.Get("Authorization"))
	}
	if names, _ := leader.herder.Connectors(t.Context()); len(names) != 1 || names[0] != "my conn" {
		t.Errorf("the leader's connectors: %v", names)
	}
	if calls := follower.herder.writes(); len(calls) != 0 {
		t.Errorf("the follower's herder took writes: %v", calls)
	}

	var status int
	var body string
	// The leader's statuses: 409, 200 for a replaced config (201 for a
	// new one was the create), 202 with a restart's status.
	if status, body := do(t, "POST", follower.url+"/connectors", fileSource); status != http.StatusConflict ||
		!strings.Contains(body, `"message":"Connector my conn already exists"`) {
		t.Errorf("a duplicate through the follower: %d %s", status, body)
	}
	if status, _ := do(t, "PUT", follower.url+"/connectors/my%20conn/config", `{"connector.class":"FileStreamSource","topic":"u"}`); status != http.StatusOK {
		t.Errorf("replacing through the follower: %d", status)
	}
	if got := leader.seen.last(t); got.URL.EscapedPath() != "/connectors/my%20conn/config" {
		t.Errorf("the leader got path %q", got.URL.EscapedPath())
	}
	status, body = do(t, "POST", follower.url+"/connectors/my%20conn/restart?includeTasks=true", "")
	if status != http.StatusAccepted || !strings.Contains(body, `"state":"RESTARTING"`) {
		t.Errorf("restart through the follower: %d %s", status, body)
	}
	if q := leader.seen.last(t).URL.Query(); q.Get("includeTasks") != "true" || q.Get("forward") != "true" {
		t.Errorf("the leader got query %v", q)
	}
	if status, _ := do(t, "DELETE", follower.url+"/connectors/my%20conn", ""); status != http.StatusNoContent {
		t.Errorf("delete through the follower: %d", status)
	}
}

// TestForwardTwoHops: a worker whose idea of the leader is stale forwards
// to another follower, which forwards once more with forward=false; a
// third hop is refused with Kafka's 409.
func TestForwardTwoHops(t *testing.T) {
	leader := startWorker(t, "")
	second := startWorker(t, leader.url)
	first := startWorker(t, second.url)
	if status, body := do(t, "POST", first.url+"/connectors", fileSource); status != http.StatusCreated {
		t.Fatalf("create through two followers: %d %s", status, body)
	}
	if f := second.seen.last(t).URL.Query().Get("forward"); f != "true" {
		t.Errorf("the first hop carried forward=%q", f)
	}
	if f := leader.seen.last(t).URL.Query().Get("forward"); f != "false" {
		t.Errorf("the second hop carried forward=%q", f)
	}

	// A request that arrives with forward=false at a worker that is still
	// not the leader has used its two hops.
	third := startWorker(t, first.url)
	status, body := do(t, "POST", third.url+"/connectors?forward=false", fileSource)
	assertError(t, status, body, http.StatusConflict, msgTooManyHops)
	if first.seen.count() != 1 {
		t.Errorf("the worker forwarded a request that had used its hops")
	}
}

// TestForwardNoLeader: no leader known is Kafka's 409; a leader that does
// not answer is a 500 naming the I/O error.
func TestForwardNoLeader(t *testing.T) {
	w := startWorker(t, "")
	w.herder.setLeader("", true)
	status, body := do(t, "PUT", w.url+"/connectors/c/pause", "")
	assertError(t, status, body, http.StatusConflict, msgNoLeaderURL)

	gone := startWorker(t, "")
	gone.srv.Close()
	w.herder.setLeader(gone.url, false)
	status, body = do(t, "DELETE", w.url+"/connectors/c", "")
	if status != http.StatusInternalServerError || !strings.Contains(body, msgForwardIOErr) {
		t.Errorf("a leader that is gone: %d %s", status, body)
	}
}

func assertError(t *testing.T, status int, body string, wantStatus int, wantMessage string) {
	t.Helper()
	var e errorMessage
	if err := json.Unmarshal([]byte(body), &e); err != nil {
		t.Fatalf("%d %s: %v", status, body, err)
	}
	if status != wantStatus || e.ErrorCode != wantStatus || e.Message != wantMessage {
		t.Errorf("got %d %+v; want %d %q", status, e, wantStatus, wantMessage)
	}
}

var _ api.Herder = (*memHerder)(nil)

package schemaregistry

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// groupRegistry is one instance of a registry group on a loopback port.
type groupRegistry struct {
	reg *Registry
	srv *httptest.Server
	url string
}

func (g *groupRegistry) close() {
	g.srv.Close()
	g.reg.Close()
}

func startGroupRegistry(t *testing.T, b *testBroker, topic, group string) *groupRegistry {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	reg, err := New(Config{ClientOpts: []kgo.Opt{kgo.SeedBrokers(b.addr)}, Topic: topic, Timeout: 20 * time.Second,
		GroupID: group, URL: url})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	if err := reg.Start(ctx); err != nil {
		reg.Close()
		t.Fatal(err)
	}
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: reg.Handler()}}
	srv.Start()
	g := &groupRegistry{reg: reg, srv: srv, url: url}
	t.Cleanup(g.close)
	return g
}

// waitPrimary waits until the instance knows want as the primary.
func waitPrimary(t *testing.T, g *groupRegistry, want string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	for {
		ch := g.reg.election.changed.Wait()
		if g.reg.election.current() == want {
			return
		}
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatalf("%s: primary %q, want %q", g.url, g.reg.election.current(), want)
		}
	}
}

// waitStep repeats a read until it answers as expected: a secondary
// reads a write the primary made once its own reader has applied it.
func waitStep(t *testing.T, base string, s apiStep) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		status, got, _ := do(t, base, s)
		if status == s.status && matches(got, s) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s %s on %s: got %d %s, want %d %s", s.method, s.path, base, status, got, s.status, s.want)
		}
		time.Sleep(20 * time.Millisecond) // the reader has no event for the test to wait on
	}
}

// TestPrimaryElection: two instances on one store elect one primary; a
// write through the other is forwarded to it; when the primary leaves,
// the other takes over and numbers on without renumbering a schema.
func TestPrimaryElection(t *testing.T) {
	b := startBroker(t)
	a := startGroupRegistry(t, b, "_schemas", "schema-registry")
	waitPrimary(t, a, a.url)
	c := startGroupRegistry(t, b, "_schemas", "schema-registry")
	waitPrimary(t, c, a.url)
	waitPrimary(t, a, a.url) // the rebalance kept the primary

	for _, s := range []apiStep{
		{method: "POST", path: "/subjects/x/versions", body: body(s1), status: 200, want: `{"id":1}`},
		{method: "PUT", path: "/config/x", body: `{"compatibility":"FULL"}`, status: 200, want: `{"compatibility":"FULL"}`},
		{method: "POST", path: "/subjects/x/versions", body: body(s3), status: 409, contains: []string{`"error_code":409`, "compatibility: 'FULL'"}},
	} {
		if status, got, _ := do(t, c.url, s); status != s.status || !matches(got, s) {
			t.Fatalf("%s %s through the secondary: got %d %s", s.method, s.path, status, got)
		}
	}
	waitStep(t, a.url, apiStep{method: "GET", path: "/subjects/x/versions/1", status: 200, want: version("x", 1, 1, s1)})
	waitStep(t, c.url, apiStep{method: "GET", path: "/subjects/x/versions/1", status: 200, want: version("x", 1, 1, s1)})

	a.close()
	waitPrimary(t, c, c.url)
	for _, s := range []apiStep{
		{method: "POST", path: "/subjects/y/versions", body: body(s4), status: 200, want: `{"id":2}`},
		{method: "POST", path: "/subjects/y2/versions", body: body(s1), status: 200, want: `{"id":1}`},
		{method: "GET", path: "/schemas/ids/1", status: 200, want: body(s1)},
		{method: "GET", path: "/config/x", status: 200, want: `{"compatibilityLevel":"FULL"}`},
	} {
		if status, got, _ := do(t, c.url, s); status != s.status || !matches(got, s) {
			t.Errorf("%s %s on the new primary: got %d %s", s.method, s.path, status, got)
		}
	}
}

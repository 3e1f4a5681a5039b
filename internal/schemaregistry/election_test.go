package schemaregistry

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/task"
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

// TestPrimaryElection: two instances on one store elect one primary;
// writes through either land (the secondary forwards them), both read
// them; when the primary leaves, the other takes over and numbers on
// without renumbering a schema. TestPrimaryKilled has the primary killed
// instead.
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
	if s := (apiStep{method: "POST", path: "/subjects/z/versions", body: body(s4), status: 200, want: `{"id":2}`}); true {
		if status, got, _ := do(t, a.url, s); status != s.status || !matches(got, s) {
			t.Fatalf("%s %s through the primary: got %d %s", s.method, s.path, status, got)
		}
	}
	for _, g := range []*groupRegistry{a, c} {
		waitStep(t, g.url, apiStep{method: "GET", path: "/subjects/x/versions/1", status: 200, want: version("x", 1, 1, s1)})
		waitStep(t, g.url, apiStep{method: "GET", path: "/subjects/z/versions/1", status: 200, want: version("z", 1, 2, s4)})
		waitStep(t, g.url, apiStep{method: "GET", path: "/config/x", status: 200, want: `{"compatibilityLevel":"FULL"}`})
	}

	a.close()
	waitPrimary(t, c, c.url)
	for _, s := range []apiStep{
		{method: "POST", path: "/subjects/y/versions", body: body(s4), status: 200, want: `{"id":2}`},
		{method: "POST", path: "/subjects/y2/versions", body: body(s1), status: 200, want: `{"id":1}`},
		{method: "POST", path: "/subjects/x/versions", body: body(s2), status: 200, want: `{"id":3}`},
		{method: "GET", path: "/schemas/ids/1", status: 200, want: body(s1)},
		{method: "GET", path: "/subjects/x/versions/1", status: 200, want: version("x", 1, 1, s1)},
		{method: "GET", path: "/subjects/z/versions/1", status: 200, want: version("z", 1, 2, s4)},
		{method: "GET", path: "/config/x", status: 200, want: `{"compatibilityLevel":"FULL"}`},
	} {
		if status, got, _ := do(t, c.url, s); status != s.status || !matches(got, s) {
			t.Errorf("%s %s on the new primary: got %d %s", s.method, s.path, status, got)
		}
	}
}

// registryProc is `samsa registry` in a child process, so that it can be
// killed as a crash kills it: no leaving the group, no flush.
type registryProc struct {
	cmd *exec.Cmd
	url string
}

var servingRE = regexp.MustCompile(`schema registry serving on (http://[0-9.:]+)`)

func startRegistryProc(t *testing.T, b *testBroker, group string) *registryProc {
	t.Helper()
	cmd := exec.Command(samsaBinary(t), "registry", "--bootstrap-server", b.addr,
		"--listener", "127.0.0.1:0", "--group", group)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var logs strings.Builder // only read after Wait
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &registryProc{cmd: cmd}
	found := make(chan string, 1)
	g := task.NewGroup(context.Background())
	g.Go(func(context.Context) {
		sc := bufio.NewScanner(out) // ends when the process does
		for sc.Scan() {
			if m := servingRE.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	})
	// Cleanups run last first: the kill ends the reader's pipe, then
	// the reader is waited for.
	t.Cleanup(g.Stop)
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			t.Logf("%s log:\n%s", p.url, logs.String())
		}
	})
	select {
	case p.url = <-found:
	case <-time.After(60 * time.Second):
		t.Fatal("samsa registry did not start")
	}
	return p
}

// kill is kill -9.
func (p *registryProc) kill() {
	if p.cmd.ProcessState == nil {
		p.cmd.Process.Kill()
		p.cmd.Wait()
	}
}

// TestPrimaryKilled: two `samsa registry` processes in one group; writes
// through either, reads from both; the primary killed with SIGKILL (its
// session left to expire), the other takes writes within the session
// timeout and a little, keeps every schema under its ID and version, and
// gives the next new schema the next ID.
func TestPrimaryKilled(t *testing.T) {
	b := startBroker(t)
	primary := startRegistryProc(t, b, "sr-killed") // alone: the primary
	secondary := startRegistryProc(t, b, "sr-killed")

	for _, w := range []struct {
		via  *registryProc
		step apiStep
	}{
		{primary, apiStep{method: "POST", path: "/subjects/a/versions", body: body(s1), status: 200, want: `{"id":1}`}},
		{secondary, apiStep{method: "POST", path: "/subjects/b/versions", body: body(s4), status: 200, want: `{"id":2}`}},
		{secondary, apiStep{method: "POST", path: "/subjects/a/versions", body: body(s2), status: 200, want: `{"id":3}`}},
		{primary, apiStep{method: "POST", path: "/subjects/c/versions", body: body(s4), status: 200, want: `{"id":2}`}},
	} {
		if status, got, _ := do(t, w.via.url, w.step); status != w.step.status || !matches(got, w.step) {
			t.Fatalf("%s %s through %s: got %d %s", w.step.method, w.step.path, w.via.url, status, got)
		}
	}
	kept := []apiStep{
		{method: "GET", path: "/subjects/a/versions/1", status: 200, want: version("a", 1, 1, s1)},
		{method: "GET", path: "/subjects/a/versions/2", status: 200, want: version("a", 2, 3, s2)},
		{method: "GET", path: "/subjects/b/versions/1", status: 200, want: version("b", 1, 2, s4)},
		{method: "GET", path: "/subjects/c/versions/1", status: 200, want: version("c", 1, 2, s4)},
		{method: "GET", path: "/schemas/ids/3", status: 200, want: body(s2)},
	}
	for _, p := range []*registryProc{primary, secondary} {
		for _, s := range kept {
			waitStep(t, p.url, s)
		}
	}

	primary.kill()
	killed := time.Now()
	// Until the coordinator expires the dead primary's session, the
	// survivor forwards to it and fails (50003), or knows no primary
	// (50004).
	next := apiStep{method: "POST", path: "/subjects/d/versions", body: body(s3), status: 200, want: `{"id":4}`}
	for {
		status, got, _ := do(t, secondary.url, next)
		if status == next.status {
			if !matches(got, next) {
				t.Fatalf("the first new schema after the takeover: %s, want %s", got, next.want)
			}
			break
		}
		if !strings.Contains(got, `"error_code":5000`) {
			t.Fatalf("a write while the primary is dead: %d %s, want 50003 or 50004", status, got)
		}
		// Confluent's 10 s session and a rebalance: franz-go's 45 s
		// default session would not make it.
		if time.Since(killed) > 25*time.Second {
			t.Fatalf("no write through the survivor %s after the kill: %d %s", time.Since(killed), status, got)
		}
		time.Sleep(100 * time.Millisecond) // the session's expiry has no event the test can see
	}
	t.Logf("the survivor took writes %s after the kill", time.Since(killed).Round(time.Millisecond))
	for _, s := range kept {
		if status, got, _ := do(t, secondary.url, s); status != s.status || !matches(got, s) {
			t.Errorf("%s %s on the survivor: got %d %s", s.method, s.path, status, got)
		}
	}
	again := apiStep{method: "POST", path: "/subjects/b/versions", body: body(s4), status: 200, want: `{"id":2}`}
	if status, got, _ := do(t, secondary.url, again); status != again.status || !matches(got, again) {
		t.Errorf("registering b's schema again on the survivor: %d %s, want its old id", status, got)
	}
}

// TestSecondaryReadsItsWrites: a write through the secondary is answered
// once the secondary has read it too, so a read sent there next sees it
// (each of 40 registrations is read back at once, never waited for).
func TestSecondaryReadsItsWrites(t *testing.T) {
	b := startBroker(t)
	a := startGroupRegistry(t, b, "_schemas", "schema-registry")
	waitPrimary(t, a, a.url)
	c := startGroupRegistry(t, b, "_schemas", "schema-registry")
	waitPrimary(t, c, a.url)
	for i := range 40 {
		subject := fmt.Sprintf("ryw-%d", i)
		schema := fmt.Sprintf(`{"type":"record","name":"r%d","fields":[{"name":"a","type":"int"}]}`, i)
		if status, got, _ := do(t, c.url, apiStep{method: "POST", path: "/subjects/" + subject + "/versions", body: body(schema)}); status != 200 {
			t.Fatalf("register %s through the secondary: %d %s", subject, status, got)
		}
		if status, got, _ := do(t, c.url, apiStep{method: "GET", path: "/subjects/" + subject + "/versions/1"}); status != 200 {
			t.Fatalf("read %s back from the secondary at once: %d %s", subject, status, got)
		}
	}
}

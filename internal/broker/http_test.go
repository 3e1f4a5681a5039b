package broker

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/config"
	"github.com/samsa-io/samsa/internal/controller"
)

// testConfigFromValues is ConfigFromValues for a test broker, with the
// HTTP listener off: samsa.http.listener's default port may be taken, and
// the tests run many brokers at once. A test of the listener asks for
// port 0.
func testConfigFromValues(v config.Values) (Config, error) {
	cfg, err := ConfigFromValues(v)
	cfg.HTTPListener = ""
	return cfg, err
}

// startHTTPBroker starts a single node whose HTTP listener has a free
// loopback port.
func startHTTPBroker(t testing.TB) *Broker {
	t.Helper()
	b := startBrokerWith(t, Config{LogDir: t.TempDir(), HTTPListener: "127.0.0.1:0"})
	if b.HTTPAddr() == "" {
		t.Fatal("no HTTP listener bound")
	}
	return b
}

// httpGet fetches path from the broker's HTTP listener.
func httpGet(t testing.TB, b *Broker, path string) (int, string) {
	t.Helper()
	cl := &http.Client{Timeout: 10 * time.Second}
	resp, err := cl.Get("http://" + b.HTTPAddr() + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return resp.StatusCode, string(body)
}

// `samsa serve` with no flags has the HTTP listener on 127.0.0.1:9644, the
// project's port for it; an empty samsa.http.listener turns it off.
func TestHTTPListenerConfig(t *testing.T) {
	for _, c := range []struct {
		overrides map[string]string
		want      string
	}{
		{nil, "127.0.0.1:9644"},
		{map[string]string{"samsa.http.listener": ""}, ""},
		{map[string]string{"samsa.http.listener": "0.0.0.0:9100"}, "0.0.0.0:9100"},
	} {
		v, err := LoadConfig("", c.overrides)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := ConfigFromValues(v)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.HTTPListener != c.want {
			t.Errorf("overrides %v: HTTPListener %q, want %q", c.overrides, cfg.HTTPListener, c.want)
		}
	}
	if _, err := LoadConfig("", map[string]string{"samsa.http.listener": "9644"}); err == nil ||
		!strings.Contains(err.Error(), "samsa.http.listener") {
		t.Errorf("a listener without a host was accepted: %v", err)
	}
}

// With the listener off nothing is bound: the broker starts, and says so.
func TestHTTPListenerOff(t *testing.T) {
	b := startBrokerWith(t, Config{LogDir: t.TempDir()})
	if addr := b.HTTPAddr(); addr != "" {
		t.Fatalf("HTTPAddr %q with the listener off", addr)
	}
	b.mu.Lock()
	ln := b.mu.httpLn
	b.mu.Unlock()
	if ln != nil {
		t.Fatal("an HTTP listener is bound with the listener off")
	}
}

// A port in use refuses the broker with an error that names the config,
// and leaves nothing held: the same directory serves at once after.
func TestHTTPListenerPortInUse(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	dir := t.TempDir()
	_, err = New(Config{NodeID: 1, LogDir: dir, Logger: quiet, HTTPListener: taken.Addr().String(),
		Listeners: []Listener{{Name: "PLAINTEXT", Host: "127.0.0.1"}}})
	if err == nil {
		t.Fatal("New bound an HTTP port already in use")
	}
	if !errors.Is(err, syscall.EADDRINUSE) || !strings.Contains(err.Error(), "samsa.http.listener "+taken.Addr().String()) {
		t.Fatalf("error %q does not say samsa.http.listener's port is in use", err)
	}
	b := startBrokerWith(t, Config{LogDir: dir, HTTPListener: "127.0.0.1:0"})
	if code, _ := httpGet(t, b, "/healthz"); code != http.StatusOK {
		t.Fatalf("/healthz %d after a refused start on the same directory", code)
	}
}

// A started single node is healthy and ready; once closed it serves
// nothing.
func TestHealthzAndReadyz(t *testing.T) {
	b := startHTTPBroker(t)
	if code, body := httpGet(t, b, "/healthz"); code != http.StatusOK || body != "ok\n" {
		t.Errorf("/healthz: %d %q", code, body)
	}
	if code, body := httpGet(t, b, "/readyz"); code != http.StatusOK || body != "ready\n" {
		t.Errorf("/readyz: %d %q", code, body)
	}
	if code, _ := httpGet(t, b, "/nothing-here"); code != http.StatusNotFound {
		t.Errorf("/nothing-here: %d, want 404", code)
	}
	addr := b.HTTPAddr()
	b.Close()
	if got := b.notReady(); got != "shutting down" {
		t.Errorf("a closed broker is not ready because %q, want shutting down", got)
	}
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Fatal("the HTTP listener still accepts after Close")
	}
}

// A node of a three-voter quorum waits in Start until a second voter is
// up. Meanwhile it is healthy but not ready, and /readyz says why; once
// Start returns it is ready.
func TestReadyzWaitsForTheQuorum(t *testing.T) {
	c := layoutTestCluster(t, 3, nil)
	first := c.nodes[0]
	cfg, err := ConfigFromValues(c.values(first))
	if err != nil {
		t.Fatal(err)
	}
	cfg.LogDir, cfg.Logger = first.dir, quiet
	b, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	started := make(chan error, 1)
	go func() { started <- b.Start(context.Background()) }()

	// The HTTP listener was bound in New: /healthz answers at once, while
	// Start waits for the quorum.
	if code, _ := httpGet(t, b, "/healthz"); code != http.StatusOK {
		t.Fatalf("/healthz %d while waiting for the quorum", code)
	}
	code, body := httpGet(t, b, "/readyz")
	if code != http.StatusServiceUnavailable || body != "not ready: waiting for the controller quorum to elect a leader (3 voters)\n" {
		t.Fatalf("/readyz without a quorum: %d %q", code, body)
	}
	// /metrics serves too, without what Start has not set up yet.
	if s, _ := scrapeHTTP(t, b); !s.has("samsa_build_info") || s.has("samsa_controller_active") {
		t.Errorf("/metrics while waiting for the quorum: build info %v, controller %v", s.has("samsa_build_info"), s.has("samsa_controller_active"))
	}
	select {
	case err := <-started:
		t.Fatalf("Start returned without a quorum: %v", err)
	default:
	}

	second := c.nodes[1]
	secondDone := make(chan struct{})
	go func() {
		defer close(secondDone)
		c.start(second)
	}()
	t.Cleanup(func() {
		if b := second.get(); b != nil {
			b.Close()
		}
	})
	// The second node's Start reports to t: it must end within the test
	// (on a loaded machine it may still run when the first one's returns).
	t.Cleanup(func() {
		select {
		case <-secondDone:
		case <-time.After(60 * time.Second):
			t.Error("the second node's Start did not return")
		}
	})
	select {
	case err := <-started:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("Start did not return once a quorum could form")
	}
	if code, body := httpGet(t, b, "/readyz"); code != http.StatusOK {
		t.Fatalf("/readyz after Start: %d %q", code, body)
	}
}

// notReady names what the start waits for, by the node's place in the
// quorum and how far Start has come.
func TestNotReadyReasons(t *testing.T) {
	voters := []controller.Voter{{ID: 1, Addr: "a:1"}, {ID: 2, Addr: "b:2"}, {ID: 3, Addr: "c:3"}}
	single := quorumSettings{broker: true, controller: true}
	combined := quorumSettings{voters: voters, broker: true, controller: true}
	bootstrapped := quorumSettings{bootstrap: []string{"a:1", "b:2"}, broker: true, controller: true}
	brokerOnly := quorumSettings{bootstrap: []string{"a:1"}, broker: true}
	const (
		notStarted = iota
		ctrlReady
		started
		closing
	)
	for _, c := range []struct {
		q     quorumSettings
		stage int
		want  string
	}{
		{single, notStarted, "opening the metadata log"},
		{single, ctrlReady, "loading the metadata, partitions and coordinators"},
		{single, started, "no metadata applied"}, // a real broker has applied some by then

		{single, closing, "shutting down"},
		{combined, notStarted, "waiting for the controller quorum to elect a leader (3 voters)"},
		{combined, ctrlReady, "waiting for the active controller to register and unfence this broker, and for its metadata to catch up"},
		{combined, started, "no metadata applied"},
		{bootstrapped, notStarted, "waiting for the controller quorum to elect a leader (controller.quorum.bootstrap.servers a:1,b:2)"},
		{brokerOnly, notStarted, "starting to follow the metadata quorum"},
		{brokerOnly, ctrlReady, "waiting for the active controller to register and unfence this broker, and for its metadata to catch up"},
	} {
		b := &Broker{cfg: Config{quorum: c.q}, started: make(chan struct{}), ctrlReady: make(chan struct{})}
		if c.stage >= ctrlReady {
			close(b.ctrlReady)
		}
		if c.stage >= started {
			close(b.started)
		}
		if c.stage >= closing {
			b.shuttingDown.Store(true)
		}
		if got := b.notReady(); got != c.want {
			t.Errorf("%+v at stage %d: %q, want %q", c.q, c.stage, got, c.want)
		}
	}
}

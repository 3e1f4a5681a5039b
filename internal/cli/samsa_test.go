package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/devcluster"
	"github.com/samsa-io/samsa/internal/task"
)

// The tests that need a real Samsa broker (a process to kill or freeze,
// topic configs kfake ignores) or the samsa binary itself (signals) build
// cmd/samsa once per test run. The CLI's own code never imports the broker;
// the binary is the same one users run.
func TestMain(m *testing.M) {
	code := m.Run()
	devcluster.RemoveBuilt()
	os.Exit(code)
}

// samsaBinary builds cmd/samsa on first use and returns its path.
func samsaBinary(t *testing.T) string {
	t.Helper()
	bin, err := devcluster.BuildOnce(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// samsaBroker is a single-node Samsa broker running as a child process.
type samsaBroker struct {
	*testCluster
	proc  *exec.Cmd
	serve *devcluster.Serve
	// listeners are the bound address of each listener, by name.
	listeners map[string]string
}

// newSamsaBroker starts "samsa serve" on a loopback port with its data in a
// temporary directory; extra are more serve flags.
func newSamsaBroker(t *testing.T, extra ...string) *samsaBroker {
	t.Helper()
	return startSamsa(t, samsaArgs(t, extra...)...)
}

// samsaArgs are newSamsaBroker's serve flags.
func samsaArgs(t *testing.T, extra ...string) []string {
	return append([]string{"--listeners", "PLAINTEXT://127.0.0.1:0",
		"--log.dirs", filepath.Join(t.TempDir(), "data")}, extra...)
}

// startSamsa runs "samsa serve args..."; the listeners must include a
// PLAINTEXT one, which the broker's testCluster dials. The HTTP listener
// is off: its default port may be taken, and tests run side by side. So is
// the Schema Registry.
func startSamsa(t *testing.T, args ...string) *samsaBroker {
	t.Helper()
	b, _ := serveSamsa(t, nil, args)
	return b
}

// serveSamsa is startSamsa that also waits for a log line matching each of
// more, and returns their submatches.
func serveSamsa(t *testing.T, more []*regexp.Regexp, args []string) (*samsaBroker, [][]string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	serve, found, err := devcluster.StartServe(ctx, samsaBinary(t), append([]string{"--override", "samsa.http.listener=", "--override", "samsa.schema.registry.listener=", "--override", "samsa.rest.listener="}, args...),
		append([]*regexp.Regexp{servingRE}, more...)...)
	if err != nil {
		t.Fatal(err)
	}
	b := &samsaBroker{proc: serve.Cmd, serve: serve, listeners: map[string]string{}}
	t.Cleanup(func() {
		b.kill()
		if t.Failed() {
			t.Logf("broker log (last lines):\n%s", serve.Tail())
		}
	})
	for _, l := range listenerRE.FindAllStringSubmatch(found[0][1], -1) {
		b.listeners[l[1]] = l[2]
	}
	b.testCluster = &testCluster{t: t, addr: b.listeners["PLAINTEXT"]}
	return b, found[1:]
}

// on is the broker's testCluster dialling the listener called name.
func (b *samsaBroker) on(name string) *testCluster {
	b.t.Helper()
	addr, ok := b.listeners[name]
	if !ok {
		b.t.Fatalf("no listener %s among %v", name, b.listeners)
	}
	cp := *b.testCluster
	cp.addr = addr
	return &cp
}

// kill ends the broker at once, as a crash or a power cut does: its
// connections are reset and nothing listens on its port any more.
func (b *samsaBroker) kill() { b.serve.Kill() }

// freeze stops the broker process (SIGSTOP): the kernel still accepts
// connections and takes requests, but nothing ever answers. It returns
// once the process is stopped, which the signal alone does not promise.
func (b *samsaBroker) freeze() {
	b.t.Helper()
	if err := b.proc.Process.Signal(syscall.SIGSTOP); err != nil {
		b.t.Fatal(err)
	}
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for range 10_000 {
		if b.allThreadsStopped() {
			return
		}
		<-tick.C
	}
	b.t.Fatal("the broker did not stop")
}

// allThreadsStopped reports whether every thread of the broker is in state
// T (stopped) in /proc.
func (b *samsaBroker) allThreadsStopped() bool {
	stats, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", b.proc.Process.Pid))
	if err != nil || len(stats) == 0 {
		b.t.Fatalf("threads of the broker: %v", err)
	}
	for _, stat := range stats {
		raw, err := os.ReadFile(stat)
		if err != nil {
			return false // a thread that just ended; look again
		}
		// "tid (comm) state ...": the state follows the last ')'.
		fields := strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+1:]))
		if len(fields) == 0 || fields[0] != "T" {
			return false
		}
	}
	return true
}

// servingRE finds the listeners the broker logs once it serves:
// listeners="PLAINTEXT://127.0.0.1:40001 (bound 127.0.0.1:40001), SASL_PLAINTEXT://...",
// and listenerRE each one's name and bound address.
var (
	servingRE  = regexp.MustCompile(`samsa serving.*listeners="([^"]*)"`)
	listenerRE = regexp.MustCompile(`([A-Z_]+)://[^ ,]* \(bound ([0-9.]+:[0-9]+)\)`)
	// registryRE finds the Schema Registry's address when serve logs it
	// (samsa.schema.registry.listener set).
	registryRE = regexp.MustCompile(`msg="schema registry serving".* listener=([0-9.:]+)`)
)

// silentListener accepts connections and never answers a request: a broker
// whose process hangs, or a firewall that swallows packets after the
// handshake. It returns a cluster whose address is the listener.
func silentListener(t *testing.T) *testCluster {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := task.NewGroup(context.Background())
	var mu sync.Mutex
	var conns []net.Conn
	g.Go(func(context.Context) {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			g.Go(func(context.Context) { io.Copy(io.Discard, c) }) // read and drop, never write
		}
	})
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		g.Stop()
	})
	return &testCluster{t: t, addr: ln.Addr().String()}
}

// noRegistry are the overrides of a test's dev cluster: no Schema Registry
// on its nodes, whose _schemas topic and group would change what the
// cluster tests count (internal/devcluster's tests cover the registries).
func noRegistry() map[string]string {
	return map[string]string{"samsa.schema.registry.listener": ""}
}

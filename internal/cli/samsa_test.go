package cli

import (
	"bufio"
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
var samsa struct {
	once sync.Once
	dir  string
	path string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if samsa.dir != "" {
		os.RemoveAll(samsa.dir)
	}
	os.Exit(code)
}

// samsaBinary builds cmd/samsa on first use and returns its path.
func samsaBinary(t *testing.T) string {
	t.Helper()
	samsa.once.Do(func() {
		if samsa.dir, samsa.err = os.MkdirTemp("", "samsa-cli-test"); samsa.err != nil {
			return
		}
		samsa.path = filepath.Join(samsa.dir, "samsa")
		samsa.err = devcluster.Build(context.Background(), samsa.path)
	})
	if samsa.err != nil {
		t.Fatal(samsa.err)
	}
	return samsa.path
}

// samsaBroker is a single-node Samsa broker running as a child process.
type samsaBroker struct {
	*testCluster
	proc *exec.Cmd
	log  *lineTail
	// listeners are the bound address of each listener, by name.
	listeners map[string]string
}

// newSamsaBroker starts "samsa serve" on a loopback port with its data in a
// temporary directory; extra are more serve flags.
func newSamsaBroker(t *testing.T, extra ...string) *samsaBroker {
	t.Helper()
	return startSamsa(t, append([]string{"--listeners", "PLAINTEXT://127.0.0.1:0",
		"--log.dirs", filepath.Join(t.TempDir(), "data")}, extra...)...)
}

// startSamsa runs "samsa serve args..."; the listeners must include a
// PLAINTEXT one, which the broker's testCluster dials. The HTTP listener
// is off: its default port may be taken, and tests run side by side. So is
// the Schema Registry.
func startSamsa(t *testing.T, args ...string) *samsaBroker {
	t.Helper()
	proc := exec.Command(samsaBinary(t), append([]string{"serve", "--override", "samsa.http.listener=", "--override", "samsa.schema.registry.listener="}, args...)...)
	stderr, err := proc.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := proc.Start(); err != nil {
		t.Fatal(err)
	}
	b := &samsaBroker{proc: proc, log: &lineTail{registry: make(chan string, 1)}}
	listeners := make(chan map[string]string, 1)
	g := task.NewGroup(context.Background())
	g.Go(func(context.Context) { b.log.scan(stderr, listeners) })
	t.Cleanup(func() {
		b.kill()
		g.Stop()
		if t.Failed() {
			t.Logf("broker log (last lines):\n%s", b.log.String())
		}
	})
	select {
	case b.listeners = <-listeners:
		b.testCluster = &testCluster{t: t, addr: b.listeners["PLAINTEXT"]}
	case <-time.After(30 * time.Second):
		t.Fatalf("samsa serve did not start:\n%s", b.log.String())
	}
	return b
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
func (b *samsaBroker) kill() {
	if b.proc.ProcessState == nil {
		b.proc.Process.Kill()
		b.proc.Wait()
	}
}

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

// lineTail keeps the last lines of a process's output and reports the
// listener address once the broker logs it.
type lineTail struct {
	mu    sync.Mutex
	lines []string
	// registry gets the Schema Registry's address when serve logs it
	// (samsa.schema.registry.listener set).
	registry chan string
}

// listenersRE finds the listeners the broker logs once it serves:
// listeners="PLAINTEXT://127.0.0.1:40001 (bound 127.0.0.1:40001), SASL_PLAINTEXT://...".
var (
	listenersRE = regexp.MustCompile(`listeners="([^"]*)"`)
	listenerRE  = regexp.MustCompile(`([A-Z_]+)://[^ ,]* \(bound ([0-9.]+:[0-9]+)\)`)
	registryRE  = regexp.MustCompile(`msg="schema registry serving".* listener=([0-9.:]+)`)
)

func (l *lineTail) scan(r io.Reader, listeners chan<- map[string]string) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.Contains(line, `msg="loaded __`) {
			continue // one line per internal partition at start-up
		}
		if m := listenersRE.FindStringSubmatch(line); m != nil && strings.Contains(line, "samsa serving") {
			found := map[string]string{}
			for _, l := range listenerRE.FindAllStringSubmatch(m[1], -1) {
				found[l[1]] = l[2]
			}
			select {
			case listeners <- found:
			default:
			}
		}
		if m := registryRE.FindStringSubmatch(line); m != nil && l.registry != nil {
			select {
			case l.registry <- m[1]:
			default:
			}
		}
		l.mu.Lock()
		l.lines = append(l.lines, line)
		if len(l.lines) > 50 {
			l.lines = l.lines[1:]
		}
		l.mu.Unlock()
	}
}

func (l *lineTail) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

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

package schemaregistry

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/devcluster"
	"github.com/samsa-io/samsa/internal/task"
)

// The registry's store in these tests is a real Samsa broker: cmd/samsa
// built once per test run and started as "samsa serve", as the CLI's
// tests do. The package itself never imports the broker.
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

func samsaBinary(t testing.TB) string {
	t.Helper()
	samsa.once.Do(func() {
		if samsa.dir, samsa.err = os.MkdirTemp("", "samsa-sr-test"); samsa.err != nil {
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

// testBroker is a single-node Samsa broker in a child process.
type testBroker struct {
	addr string
	// saslAddr is the SASL_PLAINTEXT listener's address, when it has one.
	saslAddr string
	proc     *exec.Cmd
	mu       sync.Mutex
	tail     []string
}

var (
	listenerRE     = regexp.MustCompile(`(?:^|[^A-Z_])PLAINTEXT://[^ ,]* \(bound ([0-9.]+:[0-9]+)\)`)
	saslListenerRE = regexp.MustCompile(`SASL_PLAINTEXT://[^ ,]* \(bound ([0-9.]+:[0-9]+)\)`)
)

// saslBrokerArgs add a SASL_PLAINTEXT listener taking PLAIN logins of one
// user to startBroker's PLAINTEXT one.
func saslBrokerArgs(user, password string) []string {
	return []string{"--listeners", "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
		"--override", "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT",
		"--override", "listener.name.sasl_plaintext.sasl.enabled.mechanisms=PLAIN",
		"--override", fmt.Sprintf(`listener.name.sasl_plaintext.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_%s="%s";`, user, password)}
}

// startBroker starts a broker with a PLAINTEXT listener; args (a
// --listeners of their own, overrides) come after the defaults and win.
func startBroker(t testing.TB, args ...string) *testBroker {
	t.Helper()
	proc := exec.Command(samsaBinary(t), append([]string{"serve", "--override", "samsa.http.listener=", "--override", "samsa.schema.registry.listener=",
		"--listeners", "PLAINTEXT://127.0.0.1:0", "--log.dirs", filepath.Join(t.TempDir(), "data")}, args...)...)
	stderr, err := proc.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := proc.Start(); err != nil {
		t.Fatal(err)
	}
	b := &testBroker{proc: proc}
	found := make(chan [2]string, 1)
	g := task.NewGroup(context.Background())
	g.Go(func(context.Context) { b.scan(stderr, found) })
	t.Cleanup(func() {
		b.kill(nil)
		g.Stop()
		if t.Failed() {
			b.mu.Lock()
			t.Logf("broker log (last lines):\n%s", strings.Join(b.tail, "\n"))
			b.mu.Unlock()
		}
	})
	select {
	case addrs := <-found:
		b.addr, b.saslAddr = addrs[0], addrs[1]
	case <-time.After(60 * time.Second):
		t.Fatal("samsa serve did not start")
	}
	return b
}

func (b *testBroker) scan(r io.Reader, found chan<- [2]string) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := listenerRE.FindStringSubmatch(line); m != nil && strings.Contains(line, "samsa serving") {
			addrs := [2]string{m[1]}
			if s := saslListenerRE.FindStringSubmatch(line); s != nil {
				addrs[1] = s[1]
			}
			select {
			case found <- addrs:
			default:
			}
		}
		b.mu.Lock()
		b.tail = append(b.tail, line)
		if len(b.tail) > 40 {
			b.tail = b.tail[1:]
		}
		b.mu.Unlock()
	}
}

// freeze stops the broker (SIGSTOP): the kernel still accepts
// connections, nothing answers. The kill at cleanup ends it.
func (b *testBroker) freeze(t *testing.T) {
	t.Helper()
	if err := b.proc.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// The signal is delivered asynchronously: wait until every thread is
	// in state T, or a request could still be answered.
	stats, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", b.proc.Process.Pid))
	for _, stat := range stats {
		for range 10_000 {
			raw, err := os.ReadFile(stat)
			if err != nil {
				break // the thread ended
			}
			if f := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+1:])); len(f) > 0 && f[0] == "T" {
				break
			}
			time.Sleep(time.Millisecond) // polling /proc: there is no event to wait on
		}
	}
}

func (b *testBroker) kill(*testing.T) {
	if b.proc.ProcessState == nil {
		b.proc.Process.Kill()
		b.proc.Wait()
	}
}

// startRegistry starts a registry on the broker's topic and serves its
// API on a loopback httptest server.
func startRegistry(t testing.TB, b *testBroker, topic string) (*Registry, *httptest.Server) {
	t.Helper()
	return startRegistryTimeout(t, b, topic, 20*time.Second)
}

// startRegistryTimeout is startRegistry with another write timeout.
func startRegistryTimeout(t testing.TB, b *testBroker, topic string, timeout time.Duration) (*Registry, *httptest.Server) {
	t.Helper()
	reg, err := New(Config{ClientOpts: []kgo.Opt{kgo.SeedBrokers(b.addr)}, Topic: topic, Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	if err := reg.Start(ctx); err != nil {
		reg.Close()
		t.Fatal(err)
	}
	srv := httptest.NewServer(reg.Handler())
	t.Cleanup(func() {
		srv.Close()
		reg.Close()
	})
	return reg, srv
}

package connectdiff

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/devcluster"
	"github.com/samsa-io/samsa/internal/freeport"
	"github.com/samsa-io/samsa/internal/task"
)

func TestMain(m *testing.M) {
	code := m.Run()
	devcluster.RemoveBuilt()
	os.Exit(code)
}

// worker is one Connect worker under test: its REST URL, and what its
// answers are normalised by (its directory and topic become $DIR and
// $TOPIC, its host:port $WORKER).
type worker struct {
	url   string
	dir   string
	topic string
	// clusterID is the broker's, which GET / must answer
	// ($CLUSTER_ID).
	clusterID string
	// version is what GET / answers, the version of the worker's plugins.
	version string
}

// readVersion asks the worker's GET / for its version.
func (w *worker) readVersion(ctx context.Context) error {
	req, _ := http.NewRequestWithContext(ctx, "GET", w.url+"/", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var info struct{ Version string }
	if err := json.NewDecoder(resp.Body).Decode(&info); err != nil {
		return err
	}
	w.version = info.Version
	return nil
}

// broker is the Samsa broker both workers run on.
type broker struct {
	bin, addr, clusterID string
}

var (
	brokerServingRE = regexp.MustCompile(`samsa serving.*`)
	listenerRE      = regexp.MustCompile(`(?:^|[^A-Z_])PLAINTEXT://[^ ,]* \(bound ([0-9.]+:[0-9]+)\)`)
	clusterIDRE     = regexp.MustCompile(`cluster_id=([A-Za-z0-9_-]+)`)
)

// startBroker starts a single-node Samsa broker, or with
// CONNECTDIFF_BOOTSTRAP set (test/compat/connect/run.sh: the compatibility
// suite's broker or cluster) uses that one.
func startBroker(t *testing.T) broker {
	t.Helper()
	bin, err := devcluster.BuildOnce(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if addr := os.Getenv("CONNECTDIFF_BOOTSTRAP"); addr != "" {
		return broker{bin: bin, addr: addr, clusterID: clusterID(t, addr)}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	serve, found, err := devcluster.StartServe(ctx, bin, []string{
		"--override", "samsa.http.listener=", "--override", "samsa.schema.registry.listener=", "--override", "samsa.rest.listener=",
		"--listeners", "PLAINTEXT://127.0.0.1:0", "--log.dirs", filepath.Join(t.TempDir(), "data"),
	}, brokerServingRE)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		serve.Kill()
		if t.Failed() {
			t.Logf("broker log (last lines):\n%s", serve.Tail())
		}
	})
	m := listenerRE.FindStringSubmatch(found[0][0])
	id := clusterIDRE.FindStringSubmatch(found[0][0])
	if m == nil || id == nil {
		t.Fatalf("no PLAINTEXT listener or cluster ID in %q", found[0][0])
	}
	return broker{bin: bin, addr: m[1], clusterID: id[1]}
}

// clusterID asks the cluster for its ID, as a client does.
func clusterID(t *testing.T, addr string) string {
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(addr, ",")...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	md, err := kadm.NewClient(cl).BrokerMetadata(ctx)
	if err != nil {
		t.Fatalf("the cluster's ID: %v", err)
	}
	return md.Cluster
}

// workerDir makes the worker's directory and the source connectors'
// input files.
func workerDir(t *testing.T) string {
	dir := t.TempDir()
	for _, f := range []string{"in.txt", "in2.txt"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("a\nb\nc\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// requireJava skips when the machine has no Java or Maven, except in CI
// (CI=true), where the test must run.
func requireJava(t *testing.T) {
	for _, tool := range []string{"java", "mvn"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is needed for the Java worker: %v", tool, err)
			}
			t.Skipf("no %s on this machine: the Java worker cannot run", tool)
		}
	}
}

// startJavaWorker runs Apache Kafka's distributed worker
// (test/compat/connect/java-worker.sh) against the broker and waits until
// GET /health answers 200.
func startJavaWorker(t *testing.T, b broker) *worker {
	t.Helper()
	requireJava(t)
	dir := workerDir(t)
	port, err := freeport.One()
	if err != nil {
		t.Fatal(err)
	}
	_, file, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(file), "..", "compat", "connect", "java-worker.sh")
	cmd := exec.Command(script)
	cmd.Env = append(os.Environ(), "CONNECT_BOOTSTRAP="+b.addr, "CONNECT_DIR="+dir,
		"CONNECT_PORT="+strconv.Itoa(port), "CONNECT_GROUP=connect-diff-java")
	log := &tail{}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := waitFor(t, cmd)
	t.Cleanup(func() {
		stopWorker(cmd, exited)
		if t.Failed() {
			t.Logf("Java worker log (last lines):\n%s", log.String())
		}
	})
	w := &worker{url: fmt.Sprintf("http://127.0.0.1:%d", port), dir: dir, topic: "cdiff-java", clusterID: b.clusterID}
	// The first run copies the jars from Maven Central: minutes.
	if err := waitHealthy(t.Context(), w.url, 10*time.Minute, exited); err != nil {
		t.Fatalf("the Java worker did not start: %v\n%s", err, log.String())
	}
	if err := w.readVersion(t.Context()); err != nil {
		t.Fatal(err)
	}
	return w
}

// startSamsaWorker runs `samsa connect --config worker.properties` with
// Kafka's worker config names against the broker and waits until GET
// /health answers 200.
func startSamsaWorker(t *testing.T, b broker) (*worker, error) {
	t.Helper()
	dir := workerDir(t)
	port, err := freeport.One()
	if err != nil {
		return nil, err
	}
	props := strings.Join([]string{
		"bootstrap.servers=" + b.addr,
		"group.id=connect-diff-samsa",
		"config.storage.topic=connect-diff-samsa-configs",
		"offset.storage.topic=connect-diff-samsa-offsets",
		"status.storage.topic=connect-diff-samsa-status",
		"config.storage.replication.factor=1",
		"offset.storage.replication.factor=1",
		"status.storage.replication.factor=1",
		fmt.Sprintf("listeners=http://127.0.0.1:%d", port),
		"key.converter=org.apache.kafka.connect.json.JsonConverter",
		"value.converter=org.apache.kafka.connect.json.JsonConverter",
		"offset.flush.interval.ms=1000",
	}, "\n") + "\n"
	config := filepath.Join(dir, "worker.properties")
	if err := os.WriteFile(config, []byte(props), 0o644); err != nil {
		return nil, err
	}
	cmd := exec.Command(b.bin, "connect", "--config", config)
	log := &tail{}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := waitFor(t, cmd)
	t.Cleanup(func() {
		stopWorker(cmd, exited)
		if t.Failed() {
			t.Logf("samsa connect log (last lines):\n%s", log.String())
		}
	})
	w := &worker{url: fmt.Sprintf("http://127.0.0.1:%d", port), dir: dir, topic: "cdiff-samsa", clusterID: b.clusterID}
	if err := waitHealthy(t.Context(), w.url, 2*time.Minute, exited); err != nil {
		return nil, fmt.Errorf("samsa connect did not start: %w\n%s", err, log.String())
	}
	if err := w.readVersion(t.Context()); err != nil {
		return nil, err
	}
	return w, nil
}

// stopWorker stops a worker as an operator does (SIGTERM), so its sink
// tasks leave their consumer groups: on a broker shared with the other
// worker's run (make compat), a member left behind until its session
// times out would make that run's offset changes fail. SIGKILL after 20 s.
func stopWorker(cmd *exec.Cmd, exited <-chan struct{}) {
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		<-exited
	}
}

// waitFor waits for the process in a goroutine of the test's own; the
// channel closes when it has exited.
func waitFor(t *testing.T, cmd *exec.Cmd) <-chan struct{} {
	g := task.NewGroup(context.Background())
	exited := make(chan struct{})
	g.Go(func(context.Context) {
		cmd.Wait()
		close(exited)
	})
	t.Cleanup(g.Stop)
	return exited
}

// waitHealthy polls GET /health until 200, the process exits, or limit.
func waitHealthy(ctx context.Context, url string, limit time.Duration, exited <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		req, _ := http.NewRequestWithContext(ctx, "GET", url+"/health", nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-exited:
			return errors.New("the process exited")
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// tail keeps a process's last 64 KiB of output.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - 64<<10; over > 0 {
		t.buf = t.buf[over:]
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := string(t.buf)
	if i := strings.LastIndex(s, "\n"); i > 0 && len(s) > 8<<10 {
		s = s[len(s)-8<<10:]
	}
	return s
}

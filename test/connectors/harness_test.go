package connectors

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/devcluster"
)

// One broker (with its Schema Registry) serves every test of the package:
// each test has its own worker group, internal topics and data topics.
var (
	bin      string
	broker   string
	registry string
)

var (
	brokerServingRE = regexp.MustCompile(`samsa serving.*`)
	listenerRE      = regexp.MustCompile(`(?:^|[^A-Z_])PLAINTEXT://[^ ,]* \(bound ([0-9.]+:[0-9]+)\)`)
	registryRE      = regexp.MustCompile(`msg="schema registry serving".* listener=([0-9.:]+)`)
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	defer devcluster.RemoveBuilt()
	var err error
	bin, err = devcluster.BuildOnce(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	dir, err := os.MkdirTemp("", "samsa-connectors-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	serve, found, err := devcluster.StartServe(ctx, bin, []string{
		"--override", "samsa.http.listener=", "--override", "samsa.rest.listener=",
		"--override", "samsa.schema.registry.listener=127.0.0.1:0",
		"--listeners", "PLAINTEXT://127.0.0.1:0", "--log.dirs", filepath.Join(dir, "data"),
	}, brokerServingRE, registryRE)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer serve.Kill()
	l := listenerRE.FindStringSubmatch(found[0][0])
	if l == nil {
		fmt.Fprintf(os.Stderr, "no PLAINTEXT listener in %q\n", found[0][0])
		return 1
	}
	broker, registry = l[1], "http://"+found[1][1]
	code := m.Run()
	if code != 0 || os.Getenv("CONNECTORS_E2E_LOGS") != "" {
		fmt.Fprintf(os.Stderr, "broker log (last lines):\n%s\n", serve.Tail())
	}
	return code
}

// group is the workers of one Connect cluster (one group.id).
type group struct {
	t       *testing.T
	dir     string
	props   string
	workers []*devcluster.ConnectWorker
}

// jsonConverters are the workers' converters unless a test says otherwise:
// JsonConverter with schemas, as Kafka's sample worker config.
var jsonConverters = []string{
	"key.converter=org.apache.kafka.connect.json.JsonConverter",
	"value.converter=org.apache.kafka.connect.json.JsonConverter",
	"key.converter.schemas.enable=true",
	"value.converter.schemas.enable=true",
}

// startGroup starts one worker of a new Connect cluster named name.
func startGroup(t *testing.T, name string, extra ...string) *group {
	t.Helper()
	props := append([]string{
		"bootstrap.servers=" + broker,
		"group.id=" + name,
		"config.storage.topic=" + name + "-configs",
		"offset.storage.topic=" + name + "-offsets",
		"status.storage.topic=" + name + "-status",
		"config.storage.replication.factor=1",
		"offset.storage.replication.factor=1",
		"status.storage.replication.factor=1",
		"offset.flush.interval.ms=500",
		"session.timeout.ms=6000",
		"heartbeat.interval.ms=1000",
		"scheduled.rebalance.max.delay.ms=1000",
	}, jsonConverters...)
	g := &group{t: t, dir: t.TempDir(), props: strings.Join(append(props, extra...), "\n") + "\n"}
	g.start()
	return g
}

// start runs another worker process and waits until it is healthy.
func (g *group) start() *devcluster.ConnectWorker {
	t := g.t
	t.Helper()
	var more io.Writer
	if d := os.Getenv("CONNECTORS_E2E_LOGS"); d != "" {
		// Whole worker logs (goroutine dumps included) for debugging.
		f, err := os.Create(filepath.Join(d, fmt.Sprintf("%s-%d.log", t.Name(), len(g.workers))))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		more = f
	}
	w := devcluster.StartConnectWorker(t, bin, g.dir, g.props, more)
	g.workers = append(g.workers, w)
	return w
}

// stop ends a worker with SIGTERM (an orderly stop) and waits for it; one
// that does not stop in 30 s dumps its goroutines to its log and fails
// the test.
func (g *group) stop(w *devcluster.ConnectWorker) {
	g.t.Helper()
	if err := w.Stop(30 * time.Second); err != nil {
		g.t.Fatal(err)
	}
}

// kill ends a worker with SIGKILL: no leave, no flush, no commit.
func (g *group) kill(w *devcluster.ConnectWorker) { w.Kill() }

func (g *group) alive() *devcluster.ConnectWorker {
	for _, w := range g.workers {
		if w.Alive() {
			return w
		}
	}
	g.t.Fatal("no worker alive")
	return nil
}

// call makes a REST call to a live worker and decodes a 2xx answer into
// out; it answers the status and the body.
func (g *group) call(method, path string, body any, out any) (int, string) {
	g.t.Helper()
	code, data, err := g.alive().Call(method, path, body, out)
	if err != nil {
		g.t.Fatal(err)
	}
	return code, string(data)
}

// create makes a connector through PUT /connectors/<name>/config.
func (g *group) create(name string, config map[string]string) {
	g.t.Helper()
	if code, body := g.call("PUT", "/connectors/"+name+"/config", config, nil); code != 201 && code != 200 {
		g.t.Fatalf("create %s: %d %s", name, code, body)
	}
}

type connectorStatus struct {
	Connector struct {
		State    string `json:"state"`
		WorkerID string `json:"worker_id"`
		Trace    string `json:"trace"`
	} `json:"connector"`
	Tasks []struct {
		ID       int    `json:"id"`
		State    string `json:"state"`
		WorkerID string `json:"worker_id"`
		Trace    string `json:"trace"`
	} `json:"tasks"`
}

// running waits until the connector and its tasks run on a live worker;
// a FAILED connector or task fails the test with its trace.
func (g *group) running(name string, tasks int) {
	g.t.Helper()
	alive := map[string]bool{}
	for _, w := range g.workers {
		if w.Alive() {
			alive[w.ID] = true
		}
	}
	eventually(g.t, 90*time.Second, name+" running", func() (bool, string) {
		var st connectorStatus
		if code, body := g.call("GET", "/connectors/"+name+"/status", nil, &st); code != 200 {
			return false, fmt.Sprint(code, body)
		}
		if st.Connector.State == "FAILED" {
			g.t.Fatalf("%s failed: %s", name, st.Connector.Trace)
		}
		if st.Connector.State != "RUNNING" || !alive[st.Connector.WorkerID] || len(st.Tasks) != tasks {
			return false, fmt.Sprintf("%+v", st)
		}
		for _, ts := range st.Tasks {
			if ts.State == "FAILED" {
				g.t.Fatalf("%s task %d failed: %s", name, ts.ID, ts.Trace)
			}
			if ts.State != "RUNNING" || !alive[ts.WorkerID] {
				return false, fmt.Sprintf("%+v", st)
			}
		}
		return true, ""
	})
}

// failIfFailed fails the test when a connector or one of its tasks failed:
// checked while a test waits for data, so a failure shows as its trace
// rather than as a timeout.
func (g *group) failIfFailed(name string) {
	g.t.Helper()
	var st connectorStatus
	if code, _ := g.call("GET", "/connectors/"+name+"/status", nil, &st); code != 200 {
		return
	}
	if st.Connector.State == "FAILED" {
		g.t.Fatalf("%s failed: %s", name, st.Connector.Trace)
	}
	for _, ts := range st.Tasks {
		if ts.State == "FAILED" {
			g.t.Fatalf("%s task %d failed: %s", name, ts.ID, ts.Trace)
		}
	}
}

func eventually(t *testing.T, d time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(d)
	last := ""
	for time.Now().Before(deadline) {
		ok, state := cond()
		if ok {
			return
		}
		last = state
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%s: not after %s (last: %s)", what, d, last)
}

func newClient(t *testing.T, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(broker)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// jsonEnvelope is a value as JsonConverter writes it with schemas.
func jsonEnvelope(schema string, payload any) []byte {
	p, _ := json.Marshal(payload)
	return []byte(`{"schema":` + schema + `,"payload":` + string(p) + `}`)
}

// readAll reads topic from the start until done says it has enough (or
// the time is up), answering every record read in order.
func readAll(t *testing.T, topic string, d time.Duration, done func([]*kgo.Record) bool) []*kgo.Record {
	t.Helper()
	cl := newClient(t, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	ctx, cancel := context.WithTimeout(t.Context(), d)
	defer cancel()
	var out []*kgo.Record
	for !done(out) {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("topic %s: not complete after %s (%d records)", topic, d, len(out))
		}
		fs.EachRecord(func(r *kgo.Record) { out = append(out, r) })
	}
	return out
}

// checkReplays checks a sequence of indices is 0..n-1 in order, where a
// repeat may only be a replay: the sequence goes back to an earlier index
// and runs forward again (at least once from a committed position). It
// answers how many were delivered twice.
func checkReplays(t *testing.T, what string, got []int, n int) (dups int) {
	t.Helper()
	next, prev := 0, -1
	for i, v := range got {
		switch {
		case v == prev+1 && v == next:
			next++
		case v == prev+1 && v < next:
			dups++
		case v <= prev:
			if v > next {
				t.Fatalf("%s: item %d: %d after %d skips %d", what, i, v, prev, next)
			}
			if v < next {
				dups++
			} else {
				next++
			}
		default:
			t.Fatalf("%s: item %d: %d after %d: a gap (%d..%d missing); sequence %v", what, i, v, prev, prev+1, v-1, got)
		}
		prev = v
	}
	if next != n {
		t.Fatalf("%s: the sequence ends at %d of %d: %v", what, next, n, got)
	}
	return dups
}

func createTopic(t *testing.T, topic string, partitions int32) {
	t.Helper()
	admin := kadm.NewClient(newClient(t))
	resp, err := admin.CreateTopic(t.Context(), partitions, 1, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("create topic %s: %v", topic, err)
	}
}

// The guide's examples run here as a user runs them: a binary's command line
// (connect/worker), a standalone worker with Kafka's property files, a real
// Samsa broker, the REST API, and a restart that must continue from the
// offset the worker stored.
package example_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/connect/example/counter"
	"github.com/samsa-io/samsa/connect/example/linesink"
	"github.com/samsa-io/samsa/connect/worker"
	"github.com/samsa-io/samsa/internal/devcluster"
	"github.com/samsa-io/samsa/internal/freeport"
)

var (
	workerURLRE = regexp.MustCompile(`serving on (http://\S+)`)
)

// startBroker runs `samsa serve` on a loopback port for the test.
func startBroker(t *testing.T) string {
	t.Helper()
	addr, _ := devcluster.StartTestBroker(t)
	return addr
}

func writeProps(t *testing.T, path string, props ...string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(strings.Join(props, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// syncBuffer is the command's output, read by the test while the worker runs.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// runningWorker is worker.Command running in the test, stopped as an
// interrupt stops it.
type runningWorker struct {
	url    string
	cancel context.CancelFunc
	done   chan error
	out    *syncBuffer
}

func startWorker(t *testing.T, args ...string) *runningWorker {
	t.Helper()
	cmd := worker.Command(counter.Plugin(), linesink.Plugin())
	out := &syncBuffer{}
	cmd.SetOut(out)
	cmd.SetErr(out)
	cmd.SetArgs(args)
	ctx, cancel := context.WithCancel(t.Context())
	w := &runningWorker{cancel: cancel, done: make(chan error, 1), out: out}
	go func() { w.done <- cmd.ExecuteContext(ctx) }()
	eventually(t, 30*time.Second, "the worker serves", func() (bool, string) {
		select {
		case err := <-w.done:
			t.Fatalf("worker exited: %v\n%s", err, out)
		default:
		}
		m := workerURLRE.FindStringSubmatch(out.String())
		if m == nil {
			return false, out.String()
		}
		w.url = m[1]
		return true, ""
	})
	t.Cleanup(func() { w.stop(t) })
	return w
}

func (w *runningWorker) stop(t *testing.T) {
	if w.cancel == nil {
		return
	}
	w.cancel()
	w.cancel = nil
	select {
	case err := <-w.done:
		if err != nil {
			t.Errorf("worker: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Errorf("worker did not stop\n%s", w.out)
	}
}

// status is GET /connectors/<name>/status, what `curl` shows the user.
func (w *runningWorker) status(name string) (connector string, tasks []string) {
	resp, err := http.Get(w.url + "/connectors/" + name + "/status")
	if err != nil {
		return err.Error(), nil
	}
	defer resp.Body.Close()
	var s struct {
		Connector struct{ State string }   `json:"connector"`
		Tasks     []struct{ State string } `json:"tasks"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		return err.Error(), nil
	}
	for _, x := range s.Tasks {
		tasks = append(tasks, x.State)
	}
	return s.Connector.State, tasks
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
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("timed out waiting until %s (last: %s)", what, last)
}

// counts reads the counter's topic from the start: each record's count, in
// the partition's order.
func counts(t *testing.T, broker, topic string) []int64 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	end := endOffset(t, broker, topic)
	var out []int64
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	for int64(len(out)) < end {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("read %d of %d records of %s: %v", len(out), end, topic, err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			var v struct {
				Task  int32 `json:"task"`
				Count int64 `json:"count"`
				At    int64 `json:"at"`
			}
			if err := json.Unmarshal(r.Value, &v); err != nil {
				t.Fatalf("record %d: %v: %s", r.Offset, err, r.Value)
			}
			if string(r.Key) != "task-0" || v.At == 0 {
				t.Fatalf("record %d: key %q value %s", r.Offset, r.Key, r.Value)
			}
			out = append(out, v.Count)
		})
	}
	return out
}

// endOffset is the topic's high watermark (the topic has one partition).
func endOffset(t *testing.T, broker, topic string) int64 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for {
		cl.ForceMetadataRefresh()
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		off, err := listEnd(ctx, cl, topic)
		cancel()
		if err == nil {
			return off
		}
		if t.Context().Err() != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// storedOffset is the counter's offset in the standalone worker's offsets
// file (Samsa's JSON: connector, partition, offset).
func storedOffset(t *testing.T, path string) int64 {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var entries []struct {
		Connector string         `json:"connector"`
		Partition map[string]any `json:"partition"`
		Offset    map[string]any `json:"offset"`
	}
	if err := json.Unmarshal(data, &entries); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	for _, e := range entries {
		if e.Connector == "counter" && e.Partition["task"] == float64(0) {
			return int64(e.Offset["count"].(float64))
		}
	}
	t.Fatalf("no offset of the counter in %s", data)
	return 0
}

func TestCounterThroughAWorkerRestartsFromItsOffset(t *testing.T) {
	broker := startBroker(t)
	dir := t.TempDir()
	port, err := freeport.One()
	if err != nil {
		t.Fatal(err)
	}
	offsets := filepath.Join(dir, "connect.offsets")
	lines := filepath.Join(dir, "lines.txt")
	workerProps := writeProps(t, filepath.Join(dir, "worker.properties"),
		"bootstrap.servers="+broker,
		"key.converter=org.apache.kafka.connect.storage.StringConverter",
		"value.converter=org.apache.kafka.connect.json.JsonConverter",
		"value.converter.schemas.enable=false",
		"offset.storage.file.filename="+offsets,
		"offset.flush.interval.ms=200",
		fmt.Sprintf("listeners=http://127.0.0.1:%d", port))
	counterProps := writeProps(t, filepath.Join(dir, "counter.properties"),
		"name=counter", "connector.class=CounterSource", "tasks.max=1",
		"topic=counts", "interval.ms=20", "batch.size=5")
	sinkProps := writeProps(t, filepath.Join(dir, "lines.properties"),
		"name=lines", "connector.class=com.example.LineSinkConnector", "tasks.max=1",
		"topics=counts", "file="+lines)

	w := startWorker(t, "--standalone", workerProps, counterProps, sinkProps)
	for _, name := range []string{"counter", "lines"} {
		eventually(t, 30*time.Second, name+" runs", func() (bool, string) {
			c, tasks := w.status(name)
			return c == "RUNNING" && slices.Equal(tasks, []string{"RUNNING"}), fmt.Sprint(c, tasks)
		})
	}
	eventually(t, 30*time.Second, "40 records are in the topic", func() (bool, string) {
		n := endOffset(t, broker, "counts")
		return n >= 40, fmt.Sprint(n)
	})
	w.stop(t)

	first := counts(t, broker, "counts")
	for i, c := range first {
		if c != int64(i) {
			t.Fatalf("first run: record %d has count %d", i, c)
		}
	}
	// A clean stop commits everything the task produced: the stored
	// offset is the last count in Kafka, so nothing is sent again.
	stored := storedOffset(t, offsets)
	if last := first[len(first)-1]; stored != last {
		t.Fatalf("stored offset after a clean stop = %d, want the last count produced, %d", stored, last)
	}

	// The second run counts up to the limit and stops there, so that the
	// sink's last lines are written by its Flush, not by a full buffer.
	limit := int64(len(first) + 20)
	counterProps = writeProps(t, filepath.Join(dir, "counter.properties"),
		"name=counter", "connector.class=CounterSource", "tasks.max=1",
		"topic=counts", "interval.ms=20", "batch.size=5", fmt.Sprintf("limit=%d", limit))
	w = startWorker(t, "--standalone", workerProps, counterProps, sinkProps)
	want := int64(len(first)) + limit - (stored + 1)
	eventually(t, 30*time.Second, "the restarted counter reaches its limit", func() (bool, string) {
		n := endOffset(t, broker, "counts")
		return n >= want, fmt.Sprint(n)
	})
	all := counts(t, broker, "counts")
	for i, c := range all[len(first):] {
		if c != stored+1+int64(i) {
			t.Fatalf("second run: record %d has count %d, want %d: the counter did not continue from its stored offset %d", i, c, stored+1+int64(i), stored)
		}
	}
	if int64(len(all)) != want {
		t.Fatalf("%d records, want %d (the limit %d reached from the stored offset %d)", len(all), want, limit, stored)
	}

	// The sink wrote what it read, in order, to its file: every record,
	// while the worker runs (the runtime flushes every
	// offset.flush.interval.ms).
	eventually(t, 30*time.Second, "the sink's file has every record", func() (bool, string) {
		data, _ := os.ReadFile(lines)
		got := strings.Split(strings.TrimSpace(string(data)), "\n")
		if len(got) != len(all) {
			return false, fmt.Sprint(len(got), " lines")
		}
		for i, c := range all {
			if !strings.HasPrefix(got[i], fmt.Sprintf("counts 0 %d map[", i)) || !strings.Contains(got[i], fmt.Sprintf("count:%d ", c)) {
				return false, got[i]
			}
		}
		return true, ""
	})
}

func listEnd(ctx context.Context, cl *kgo.Client, topic string) (int64, error) {
	adm := kadm.NewClient(cl)
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return 0, err
	}
	o, ok := ends.Lookup(topic, 0)
	if !ok {
		return 0, fmt.Errorf("no partition 0 of %s", topic)
	}
	return o.Offset, o.Err
}

package connectrt

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/connectrt/api"
)

// startStandalone runs a standalone worker against the broker.
func startStandalone(t *testing.T, broker string, offsetFile string) *Worker {
	t.Helper()
	cfg, err := ParseWorkerConfig(map[string]string{
		"bootstrap.servers":            broker,
		"key.converter":                "org.apache.kafka.connect.storage.StringConverter",
		"value.converter":              "org.apache.kafka.connect.storage.StringConverter",
		"offset.storage.file.filename": offsetFile,
		"offset.flush.interval.ms":     "200",
		"listeners":                    "http://127.0.0.1:18083",
	}, false)
	if err != nil {
		t.Fatal(err)
	}
	w, err := New(Options{Config: cfg, Plugins: testPlugins(), ClientOpts: []kgo.Opt{kgo.SeedBrokers(broker)}, URL: "http://127.0.0.1:18083", Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return w
}

func writeLines(t *testing.T, path string, from, to int) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for i := from; i < to; i++ {
		fmt.Fprintf(f, "line-%d\n", i)
	}
}

func readLines(path string) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}

// eventually polls cond until it holds or the deadline passes.
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
	t.Fatalf("%s: not after %s (last: %s)", what, d, last)
}

func wantLines(t *testing.T, path string, n int) {
	t.Helper()
	eventually(t, 30*time.Second, fmt.Sprintf("%s has %d lines", path, n), func() (bool, string) {
		got := readLines(path)
		if len(got) > n {
			t.Fatalf("%s has %d lines, more than the %d written: duplicates %v", path, len(got), n, got[n:])
		}
		for i, l := range got {
			if l != fmt.Sprintf("line-%d", i) {
				t.Fatalf("%s line %d is %q", path, i, l)
			}
		}
		return len(got) == n, fmt.Sprintf("%d lines", len(got))
	})
}

func wantState(t *testing.T, w *Worker, name, state string, tasks int) {
	t.Helper()
	eventually(t, 30*time.Second, name+" "+state, func() (bool, string) {
		st, err := w.ConnectorStatus(context.Background(), name)
		if err != nil {
			return false, err.Error()
		}
		if st.Connector.State != state || len(st.Tasks) != tasks {
			return false, fmt.Sprintf("%+v", st)
		}
		for _, ts := range st.Tasks {
			if ts.State != state {
				return false, fmt.Sprintf("%+v", st)
			}
		}
		return true, ""
	})
}

// TestStandaloneFileToKafkaToFile runs Kafka's quickstart pipeline on a
// standalone worker: FileStreamSource into a topic, FileStreamSink out of
// it, and checks every line arrives once, in order, across a pause, a
// restart of the worker from its offsets file, and a stop.
func TestStandaloneFileToKafkaToFile(t *testing.T) {
	broker := startBroker(t)
	dir := t.TempDir()
	in, out, offsets := filepath.Join(dir, "in.txt"), filepath.Join(dir, "out.txt"), filepath.Join(dir, "offsets.json")
	writeLines(t, in, 0, 100)
	w := startStandalone(t, broker, offsets)
	ctx := context.Background()

	if _, created, err := w.PutConnectorConfig(ctx, "src", map[string]string{"connector.class": "FileStreamSource", "file": in, "topic": "lines"}, false, ""); err != nil || !created {
		t.Fatalf("create source: created %v, %v", created, err)
	}
	if _, _, err := w.PutConnectorConfig(ctx, "src", map[string]string{"connector.class": "FileStreamSource", "file": in, "topic": "lines"}, false, ""); !isStatus(err, 409) {
		t.Fatalf("duplicate create: %v, want 409", err)
	}
	if _, _, err := w.PutConnectorConfig(ctx, "sink", map[string]string{"connector.class": "FileStreamSink", "file": out, "topics": "lines"}, false, ""); err != nil {
		t.Fatal(err)
	}
	wantLines(t, out, 100)
	// The sink commits what it flushed: its group's offset reaches the end.
	eventually(t, 30*time.Second, "sink offsets committed", func() (bool, string) {
		offs, err := w.Offsets(ctx, "sink")
		if err != nil || len(offs.Offsets) != 1 {
			return false, fmt.Sprint(offs, err)
		}
		o, _ := asInt64(offs.Offsets[0].Offset["kafka_offset"])
		return o == 100, fmt.Sprint(offs)
	})
	wantState(t, w, "src", api.StateRunning, 1)
	wantState(t, w, "sink", api.StateRunning, 1)

	// Paused, the source reads nothing new; resumed, it catches up.
	if err := w.PauseConnector(ctx, "src"); err != nil {
		t.Fatal(err)
	}
	wantState(t, w, "src", api.StatePaused, 1)
	writeLines(t, in, 100, 150)
	time.Sleep(500 * time.Millisecond) // a paused task must not move: nothing to wait on but time
	if n := len(readLines(out)); n != 100 {
		t.Fatalf("a paused source delivered: %d lines", n)
	}
	if err := w.ResumeConnector(ctx, "src"); err != nil {
		t.Fatal(err)
	}
	wantLines(t, out, 150)

	offs, err := w.Offsets(ctx, "src")
	if err != nil || len(offs.Offsets) != 1 || offs.Offsets[0].Partition["filename"] != in {
		t.Fatalf("source offsets %+v, %v", offs, err)
	}
	st, _ := os.Stat(in)
	eventually(t, 10*time.Second, "source offset at the end of the file", func() (bool, string) {
		offs, _ := w.Offsets(ctx, "src")
		return len(offs.Offsets) == 1 && offs.Offsets[0].Offset["position"] == st.Size(), fmt.Sprint(offs)
	})

	// A new worker on the same offsets file continues where the first stopped.
	w.Stop()
	writeLines(t, in, 150, 170)
	w2 := startStandalone(t, broker, offsets)
	for _, c := range []struct{ name, class, key, topicKey, topic string }{{"src", "FileStreamSource", in, "topic", "lines"}, {"sink", "FileStreamSink", out, "topics", "lines"}} {
		if _, _, err := w2.PutConnectorConfig(ctx, c.name, map[string]string{"connector.class": c.class, "file": c.key, c.topicKey: c.topic}, false, ""); err != nil {
			t.Fatal(err)
		}
	}
	wantLines(t, out, 170)

	// Offsets change only when the connector is stopped (KIP-875).
	if _, err := w2.ResetOffsets(ctx, "src"); !isStatus(err, 400) {
		t.Fatalf("reset of a running connector: %v, want 400", err)
	}
	if err := w2.StopConnector(ctx, "src"); err != nil {
		t.Fatal(err)
	}
	wantState(t, w2, "src", api.StateStopped, 0)
	msg, err := w2.ResetOffsets(ctx, "src")
	if err != nil || !strings.Contains(msg.Message, "reset successfully") {
		t.Fatalf("reset: %+v, %v", msg, err)
	}
	if offs, _ := w2.Offsets(ctx, "src"); len(offs.Offsets) != 0 {
		t.Fatalf("offsets after reset: %+v", offs)
	}
	if err := w2.DeleteConnector(ctx, "src"); err != nil {
		t.Fatal(err)
	}
	if _, err := w2.ConnectorStatus(ctx, "src"); !isStatus(err, 404) {
		t.Fatalf("status of a deleted connector: %v", err)
	}
}

func isStatus(err error, code int) bool {
	var e *api.Error
	return errors.As(err, &e) && e.Status == code
}

// TestSourceTopicCreation: a source connector with topic.creation.* makes
// its topics with the group's settings (KIP-158); half a default group is
// refused before the connector is created.
func TestSourceTopicCreation(t *testing.T) {
	broker := startBroker(t)
	dir := t.TempDir()
	in := filepath.Join(dir, "in.txt")
	writeLines(t, in, 0, 10)
	w := startStandalone(t, broker, filepath.Join(dir, "offsets.json"))
	ctx := context.Background()
	cfg := map[string]string{"connector.class": "FileStreamSource", "file": in, "topic": "created",
		"topic.creation.default.partitions": "3"}
	if _, _, err := w.PutConnectorConfig(ctx, "src", cfg, false, ""); !isStatus(err, 400) || !strings.Contains(err.Error(), "replication.factor") {
		t.Fatalf("half a default group: %v, want 400 naming replication.factor", err)
	}
	cfg["topic.creation.default.replication.factor"] = "1"
	cfg["topic.creation.default.cleanup.policy"] = "compact"
	if _, _, err := w.PutConnectorConfig(ctx, "src", cfg, false, ""); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "topic created with 3 partitions", func() (bool, string) {
		td, err := w.admin.ListTopics(ctx, "created")
		if err != nil || td["created"].Err != nil {
			return false, fmt.Sprint(err, td)
		}
		return len(td["created"].Partitions) == 3, fmt.Sprintf("%d partitions", len(td["created"].Partitions))
	})
	rc, err := w.admin.DescribeTopicConfigs(ctx, "created")
	if err != nil {
		t.Fatal(err)
	}
	c, err := rc.On("created", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range c.Configs {
		if kv.Key == "cleanup.policy" && (kv.Value == nil || *kv.Value != "compact") {
			t.Fatalf("cleanup.policy = %v, want compact from topic.creation.default.cleanup.policy", kv.Value)
		}
	}
}

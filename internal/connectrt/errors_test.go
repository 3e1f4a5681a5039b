package connectrt

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/connectrt/api"
)

// TestSinkErrorTolerance: records a converter refuses fail the task with
// errors.tolerance=none, and with all are skipped and sent to the dead
// letter queue as they were read, with Kafka's context headers.
func TestSinkErrorTolerance(t *testing.T) {
	broker := startBroker(t)
	dir := t.TempDir()
	w := startStandalone(t, broker, filepath.Join(dir, "offsets.json"))
	ctx := context.Background()
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var recs []*kgo.Record
	for i := range 10 {
		v := fmt.Sprintf("line-%d", i)
		if i == 3 || i == 7 {
			v = fmt.Sprintf("bad-%d", i)
		}
		recs = append(recs, &kgo.Record{Topic: "mixed", Key: []byte(fmt.Sprint(i)), Value: []byte(v), Headers: []kgo.RecordHeader{{Key: "h", Value: []byte("x")}}})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}

	strict := filepath.Join(dir, "strict.txt")
	if _, _, err := w.PutConnectorConfig(ctx, "strict", map[string]string{"connector.class": "FileStreamSink", "file": strict, "topics": "mixed",
		"value.converter": "picky.Converter"}, false, ""); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "strict sink fails", func() (bool, string) {
		st, err := w.ConnectorStatus(ctx, "strict")
		if err != nil || len(st.Tasks) != 1 {
			return false, fmt.Sprint(st, err)
		}
		return st.Tasks[0].State == api.StateFailed && strings.Contains(st.Tasks[0].Trace, "Tolerance exceeded"), fmt.Sprintf("%+v", st.Tasks[0])
	})

	tolerant := filepath.Join(dir, "tolerant.txt")
	if _, _, err := w.PutConnectorConfig(ctx, "tolerant", map[string]string{"connector.class": "FileStreamSink", "file": tolerant, "topics": "mixed",
		"value.converter": "picky.Converter", "errors.tolerance": "all", "errors.log.enable": "true",
		"errors.deadletterqueue.topic.name": "dlq", "errors.deadletterqueue.topic.replication.factor": "1",
		"errors.deadletterqueue.context.headers.enable": "true"}, false, ""); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "tolerant sink writes the good records", func() (bool, string) {
		got := readLines(tolerant)
		return len(got) == 8, fmt.Sprint(got)
	})
	for _, l := range readLines(tolerant) {
		if strings.HasPrefix(l, "bad") {
			t.Fatalf("a refused record was written: %q", l)
		}
	}
	dlq, err := kgo.NewClient(kgo.SeedBrokers(broker), kgo.ConsumeTopics("dlq"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer dlq.Close()
	var got []*kgo.Record
	pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for len(got) < 2 && pctx.Err() == nil {
		dlq.PollFetches(pctx).EachRecord(func(r *kgo.Record) { got = append(got, r) })
	}
	if len(got) != 2 {
		t.Fatalf("dead letter queue has %d records, want the 2 refused", len(got))
	}
	for i, r := range got {
		want := []string{"bad-3", "bad-7"}[i]
		if string(r.Value) != want || string(r.Key) != want[4:] {
			t.Fatalf("DLQ record %d: key %q value %q, want the record as read (%q)", i, r.Key, r.Value, want)
		}
		h := map[string]string{}
		for _, x := range r.Headers {
			h[x.Key] = string(x.Value)
		}
		if h["h"] != "x" || h["__connect.errors.topic"] != "mixed" || h["__connect.errors.stage"] != "VALUE_CONVERTER" ||
			h["__connect.errors.connector.name"] != "tolerant" || !strings.Contains(h["__connect.errors.exception.message"], "is bad") {
			t.Fatalf("DLQ record %d headers: %v", i, h)
		}
	}
}

// TestPanickingTaskFailsAlone: a task whose plugin code panics is FAILED
// with the panic as its trace; the worker and its other connectors run on.
func TestPanickingTaskFailsAlone(t *testing.T) {
	broker := startBroker(t)
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.txt"), filepath.Join(dir, "out.txt")
	writeLines(t, in, 0, 10)
	w := startStandalone(t, broker, filepath.Join(dir, "offsets.json"))
	ctx := context.Background()
	if _, _, err := w.PutConnectorConfig(ctx, "bad", map[string]string{"connector.class": "test.PanickingSource"}, false, ""); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the panicking task fails", func() (bool, string) {
		st, err := w.ConnectorStatus(ctx, "bad")
		if err != nil || len(st.Tasks) != 1 {
			return false, fmt.Sprint(st, err)
		}
		return st.Tasks[0].State == api.StateFailed && strings.Contains(st.Tasks[0].Trace, "panic: boom") &&
			st.Connector.State == api.StateRunning, fmt.Sprintf("%+v", st)
	})
	for _, c := range []struct{ name, class, key, topic string }{{"src", "FileStreamSource", "topic", "good"}, {"sink", "FileStreamSink", "topics", "good"}} {
		file := in
		if c.name == "sink" {
			file = out
		}
		if _, _, err := w.PutConnectorConfig(ctx, c.name, map[string]string{"connector.class": c.class, "file": file, c.key: c.topic}, false, ""); err != nil {
			t.Fatal(err)
		}
	}
	wantLines(t, out, 10)
}

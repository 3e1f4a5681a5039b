package connectors

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestCleanStopCommitsOffsets: a worker stopped with SIGTERM commits what
// its tasks have done before it exits, as Kafka's worker does (a source's
// last offsets, a sink's consumer offsets): the next worker neither sends
// the source's lines again nor writes the sink's records again. The
// periodic commit is made too rare to happen, so only the commit on stop
// can pass this.
func TestCleanStopCommitsOffsets(t *testing.T) {
	const n = 500
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.txt"), filepath.Join(dir, "out.txt")
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "line-%04d\n", i)
	}
	if err := os.WriteFile(in, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	g := startGroup(t, "e2e-stop", "offset.flush.interval.ms=600000")
	g.create("lines-in", map[string]string{"connector.class": "FileStreamSource", "file": in, "topic": "lines"})
	g.create("lines-out", map[string]string{"connector.class": "FileStreamSink", "file": out, "topics": "lines"})
	g.running("lines-in", 1)
	g.running("lines-out", 1)
	eventually(t, 60*time.Second, "every line written by the sink", func() (bool, string) {
		got := len(readLines(out))
		return got >= n, fmt.Sprint(got)
	})
	stopAt := time.Now()
	g.stop(g.workers[0])
	took := time.Since(stopAt)
	t.Logf("the worker stopped %s after SIGTERM", took.Round(100*time.Millisecond))
	// The last commits are quick with the cluster there: a stop that waits
	// out its timeouts (task.shutdown.graceful.timeout.ms is 5 s) is stuck.
	if took > 5*time.Second {
		t.Fatalf("the worker took %s to stop after SIGTERM", took.Round(100*time.Millisecond))
	}
	g.start()
	g.running("lines-in", 1)
	g.running("lines-out", 1)
	// One more line: once it is through, anything sent again is too.
	f, err := os.OpenFile(in, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "line-%04d\n", n)
	f.Close()
	eventually(t, 60*time.Second, "the new line written by the sink", func() (bool, string) {
		lines := readLines(out)
		return len(lines) > 0 && lines[len(lines)-1] == fmt.Sprintf("line-%04d", n), fmt.Sprint(len(lines), " lines")
	})
	recs := readAll(t, "lines", 30*time.Second, func(rs []*kgo.Record) bool { return len(rs) >= n+1 })
	time.Sleep(time.Second)
	if got := len(readLines(out)); len(recs) != n+1 || got != n+1 {
		t.Fatalf("after a clean stop and a new worker: %d records in the topic and %d lines written for %d lines; want each once", len(recs), got, n+1)
	}
}

func readLines(path string) []string {
	data, err := os.ReadFile(path)
	if err != nil || len(data) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/devcluster"
	"github.com/samsa-io/samsa/streams"
	"github.com/samsa-io/samsa/streams/serde"
)

func TestMain(m *testing.M) {
	code := m.Run()
	devcluster.RemoveBuilt()
	os.Exit(code)
}

// TestWordCountAppOnBroker builds the program, runs it against a real
// broker under exactly_once_v2, checks the counts on the output topic
// (read committed), stops it with SIGTERM (it must exit 0), then runs it
// again over more lines: the counts go on from the changelog.
func TestWordCountAppOnBroker(t *testing.T) {
	bootstrap, _ := devcluster.StartTestBroker(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "wordcount-app")
	if out, err := exec.Command("go", "build", "-tags", "pebblegozstd", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for _, topic := range []string{"lines", "word-counts"} {
		if _, err := kadm.NewClient(cl).CreateTopic(context.Background(), 2, 1, nil, topic); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]int64{}
	produce(t, cl, want, "the quick brown fox", "The lazy dog", "a quick dog, a lazy fox")
	stateDir := filepath.Join(dir, "state")
	stop := startApp(t, bin, bootstrap, stateDir)
	readCounts(t, bootstrap, want)
	stop()

	produce(t, cl, want, "the end", "quick quick")
	stop = startApp(t, bin, bootstrap, stateDir)
	readCounts(t, bootstrap, want)
	stop()
}

// produce writes lines to "lines" and adds their words to want.
func produce(t *testing.T, cl *kgo.Client, want map[string]int64, lines ...string) {
	t.Helper()
	var recs []*kgo.Record
	for _, line := range lines {
		for _, w := range strings.FieldsFunc(strings.ToLower(line), func(r rune) bool { return r == ' ' || r == ',' }) {
			want[w]++
		}
		recs = append(recs, &kgo.Record{Topic: "lines", Value: []byte(line)})
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// startApp runs the program until it says it started; the returned
// function sends SIGTERM and checks that it exits cleanly.
func startApp(t *testing.T, bin, bootstrap, stateDir string) (stop func()) {
	t.Helper()
	cmd := exec.Command(bin, "--bootstrap-server", bootstrap, "--application-id", "wordcount",
		"--input", "lines", "--output", "word-counts", "--state-dir", stateDir,
		"--processing-guarantee", streams.ExactlyOnceV2)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	started := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		ok := sc.Scan() && sc.Text() == "started"
		started <- ok
		for sc.Scan() {
		}
		exited <- cmd.Wait()
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	if !<-started {
		t.Fatalf("the program did not start: %s", stderr.String())
	}
	return func() {
		t.Helper()
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-exited:
			if err != nil {
				t.Fatalf("after SIGTERM: %v\n%s", err, stderr.String())
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("no exit 30 s after SIGTERM\n%s", stderr.String())
		}
	}
}

// readCounts reads "word-counts" (read committed) until every word's
// latest count is want's, and fails on a count of a word want lacks or
// past want's.
func readCounts(t *testing.T, bootstrap string, want map[string]int64) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.ConsumeTopics("word-counts"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	latest := map[string]int64{}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		fs := cl.PollFetches(ctx)
		cancel()
		fs.EachRecord(func(r *kgo.Record) {
			n, err := serde.Int64().Deserialize(r.Topic, r.Value)
			if err != nil {
				t.Fatalf("count of %q: %v", r.Key, err)
			}
			if n > want[string(r.Key)] {
				t.Fatalf("%q counted %d, want at most %d", r.Key, n, want[string(r.Key)])
			}
			latest[string(r.Key)] = n
		})
		if fmt.Sprint(latest) == fmt.Sprint(want) {
			return
		}
	}
	t.Fatalf("counts %v, want %v", latest, want)
}

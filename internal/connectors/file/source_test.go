package file

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/samsa-io/samsa/connect"
	"github.com/samsa-io/samsa/internal/clock"
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func appendFile(t *testing.T, path, content string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(content); err != nil {
		t.Fatal(err)
	}
}

var testClock = clock.NewManual(time.UnixMilli(1_700_000_000_000))

// startSource starts a task the way the runtime does, through the
// connector's task config, with a short idle wait.
func startSource(t *testing.T, ctx *sourceCtx) *SourceTask {
	t.Helper()
	c := NewSourceConnector()
	if err := c.Start(connectorCtx{}, ctx.props); err != nil {
		t.Fatalf("connector start: %v", err)
	}
	cfgs, err := c.TaskConfigs(3)
	if err != nil || len(cfgs) != 1 {
		t.Fatalf("task configs = %v, %v; want one", cfgs, err)
	}
	task := c.NewTask().(*SourceTask)
	task.clock, task.idle = testClock, 5*time.Millisecond
	if err := task.Start(ctx, cfgs[0]); err != nil {
		t.Fatalf("task start: %v", err)
	}
	t.Cleanup(func() { task.Stop() })
	return task
}

type line struct {
	Value    string
	Position any
}

func poll(t *testing.T, task *SourceTask) []line {
	t.Helper()
	records, err := task.Poll(bg)
	if err != nil {
		t.Fatalf("poll: %v", err)
	}
	var out []line
	for _, r := range records {
		out = append(out, line{r.Value.(string), r.SourceOffset[PositionField]})
	}
	return out
}

func wantLines(t *testing.T, got []line, want ...line) {
	t.Helper()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("lines (-want +got):\n%s", diff)
	}
}

func TestSourceRecordsAreKafkas(t *testing.T) {
	path := filepath.Join(t.TempDir(), "in.txt")
	writeFile(t, path, "hello\n")
	task := startSource(t, newSourceCtx(map[string]string{"file": path, "topic": "lines"}))
	records, err := task.Poll(bg)
	if err != nil || len(records) != 1 {
		t.Fatalf("poll = %v, %v", records, err)
	}
	r := records[0]
	want := connect.SourceRecord{
		Record: connect.Record{
			Topic: "lines", ValueSchema: connect.StringSchema, Value: "hello", Timestamp: testClock.Now(),
		},
		SourcePartition: map[string]any{"filename": path},
		SourceOffset:    map[string]any{"position": int64(6)},
	}
	if diff := cmp.Diff(want, r); diff != "" {
		t.Fatalf("record (-want +got):\n%s", diff)
	}
}

func TestSourceLineEndings(t *testing.T) {
	path := filepath.Join(t.TempDir(), "in.txt")
	writeFile(t, path, "a\nb\r\nc\rd")
	task := startSource(t, newSourceCtx(map[string]string{"file": path, "topic": "t"}))
	wantLines(t, poll(t, task), line{"a", int64(2)}, line{"b", int64(5)}, line{"c", int64(7)})
	// "d" has no end yet: it waits for one.
	wantLines(t, poll(t, task))
	appendFile(t, path, "\n\ne\r")
	wantLines(t, poll(t, task), line{"d", int64(9)}, line{"", int64(10)})
	// A \r at the end may be the start of \r\n: not a line yet.
	wantLines(t, poll(t, task))
	appendFile(t, path, "\nf\n")
	wantLines(t, poll(t, task), line{"e", int64(13)}, line{"f", int64(15)})
}

func TestSourceBatchSize(t *testing.T) {
	path := filepath.Join(t.TempDir(), "in.txt")
	writeFile(t, path, "1\n2\n3\n4\n5\n")
	task := startSource(t, newSourceCtx(map[string]string{"file": path, "topic": "t", "batch.size": "2"}))
	wantLines(t, poll(t, task), line{"1", int64(2)}, line{"2", int64(4)})
	wantLines(t, poll(t, task), line{"3", int64(6)}, line{"4", int64(8)})
	wantLines(t, poll(t, task), line{"5", int64(10)})
	wantLines(t, poll(t, task))
}

func TestSourceLongLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "in.txt")
	long := strings.Repeat("x", 3*readChunk+17)
	writeFile(t, path, long+"\nshort\n")
	task := startSource(t, newSourceCtx(map[string]string{"file": path, "topic": "t"}))
	got := poll(t, task)
	n := int64(len(long) + 1)
	wantLines(t, got, line{long, n}, line{"short", n + 6})
}

// The position is in bytes, which is what a restart skips: a line of
// multi-byte characters moves it by its bytes.
func TestSourcePositionInBytes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "in.txt")
	writeFile(t, path, "héllo wörld\nnext\n")
	sctx := newSourceCtx(map[string]string{"file": path, "topic": "t", "batch.size": "1"})
	task := startSource(t, sctx)
	records, _ := task.Poll(bg)
	sctx.commit(t, records)
	wantLines(t, []line{{records[0].Value.(string), records[0].SourceOffset["position"]}}, line{"héllo wörld", int64(14)})
	task.Stop()
	again := startSource(t, sctx)
	wantLines(t, poll(t, again), line{"next", int64(19)})
}

func TestSourceInvalidUTF8(t *testing.T) {
	path := filepath.Join(t.TempDir(), "in.txt")
	writeFile(t, path, "a\xff\xfeb\n")
	task := startSource(t, newSourceCtx(map[string]string{"file": path, "topic": "t"}))
	wantLines(t, poll(t, task), line{"a\uFFFD\uFFFDb", int64(5)})
}

func TestSourceRestartFromStoredOffset(t *testing.T) {
	path := filepath.Join(t.TempDir(), "in.txt")
	writeFile(t, path, "one\ntwo\nthree\n")
	sctx := newSourceCtx(map[string]string{"file": path, "topic": "t", "batch.size": "2"})
	task := startSource(t, sctx)
	records, err := task.Poll(bg)
	if err != nil || len(records) != 2 {
		t.Fatalf("poll = %v, %v", records, err)
	}
	sctx.commit(t, records) // one and two are in Kafka; three was not polled
	task.Stop()

	appendFile(t, path, "four\n")
	again := startSource(t, sctx)
	wantLines(t, poll(t, again), line{"three", int64(14)}, line{"four", int64(19)})
}

// A restart skips the stored number of bytes of whatever the file now is,
// as Kafka's task does: a rotated file loses its first bytes, a truncated
// one is read once it grows past the position.
func TestSourceRestartAfterRotation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "in.txt")
	writeFile(t, path, "aaaa\nbbbb\n")
	sctx := newSourceCtx(map[string]string{"file": path, "topic": "t"})
	task := startSource(t, sctx)
	records, _ := task.Poll(bg)
	sctx.commit(t, records) // position 10
	task.Stop()

	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, "new1\nnew2\nnew3\n")
	again := startSource(t, sctx)
	wantLines(t, poll(t, again), line{"new3", int64(15)})
}

func TestSourceRestartAfterTruncation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "in.txt")
	writeFile(t, path, "aaaa\nbbbb\n")
	sctx := newSourceCtx(map[string]string{"file": path, "topic": "t"})
	task := startSource(t, sctx)
	records, _ := task.Poll(bg)
	sctx.commit(t, records) // position 10
	task.Stop()

	writeFile(t, path, "cc\n") // truncated to 3 bytes
	again := startSource(t, sctx)
	wantLines(t, poll(t, again))
	appendFile(t, path, "dddddd\neeee\n") // 3+7 = 10: eeee starts at the position
	wantLines(t, poll(t, again), line{"eeee", int64(15)})
}

// While the task runs it reads the file it opened: a truncation leaves its
// position where it was, a rotation leaves it on the old file.
func TestSourceRunningFileTruncatedAndRotated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "in.txt")
	writeFile(t, path, "aaaa\n")
	task := startSource(t, newSourceCtx(map[string]string{"file": path, "topic": "t"}))
	wantLines(t, poll(t, task), line{"aaaa", int64(5)})

	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	appendFile(t, path, "xy\n")
	wantLines(t, poll(t, task))
	appendFile(t, path, "zzz\nnext\n") // "xy\nzz" before the old position 5
	wantLines(t, poll(t, task), line{"z", int64(7)}, line{"next", int64(12)})

	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, "in the new file\n")
	appendFile(t, path+".1", "still old\n")
	wantLines(t, poll(t, task), line{"still old", int64(22)})
}

func TestSourceWaitsForMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "later.txt")
	task := startSource(t, newSourceCtx(map[string]string{"file": path, "topic": "t"}))
	wantLines(t, poll(t, task))
	wantLines(t, poll(t, task))
	writeFile(t, path, "here\n")
	wantLines(t, poll(t, task), line{"here", int64(5)})
}

func TestSourceStoredOffsetRefused(t *testing.T) {
	for _, tc := range []struct {
		name   string
		offset map[string]any
		want   string
	}{
		{"string position", map[string]any{"position": "12"}, "Offset position is the incorrect type"},
		{"float position", map[string]any{"position": 12.0}, "Offset position is the incorrect type"},
		{"negative position", map[string]any{"position": int64(-1)}, "is negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "in.txt")
			writeFile(t, path, "x\n")
			sctx := newSourceCtx(map[string]string{"file": path, "topic": "t"})
			sctx.offsets[partitionKey(t, map[string]any{"filename": path})] = tc.offset
			task := startSource(t, sctx)
			_, err := task.Poll(bg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("poll error = %v, want %q", err, tc.want)
			}
		})
	}
}

// A stored offset with a null position reads from the start, as Kafka's.
func TestSourceStoredNullPosition(t *testing.T) {
	path := filepath.Join(t.TempDir(), "in.txt")
	writeFile(t, path, "x\n")
	sctx := newSourceCtx(map[string]string{"file": path, "topic": "t"})
	sctx.offsets[partitionKey(t, map[string]any{"filename": path})] = map[string]any{"position": nil}
	wantLines(t, poll(t, startSource(t, sctx)), line{"x", int64(2)})
}

func TestSourcePollReturnsWhenContextEnds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "in.txt")
	writeFile(t, path, "")
	task := startSource(t, newSourceCtx(map[string]string{"file": path, "topic": "t"}))
	task.idle = time.Hour
	ctx, cancel := context.WithCancel(bg)
	cancel()
	done := make(chan struct{})
	go func() { task.Poll(ctx); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("poll did not return after its context ended")
	}
}

func TestSourceStdin(t *testing.T) {
	chunks := make(chan []byte, 4)
	c := NewSourceConnector()
	props := map[string]string{"topic": "t"}
	if err := c.Start(connectorCtx{}, props); err != nil {
		t.Fatal(err)
	}
	task := NewSourceTask()
	task.idle = time.Millisecond
	task.stdin = func() <-chan []byte { return chunks }
	if err := task.Start(newSourceCtx(props), props); err != nil {
		t.Fatal(err)
	}
	chunks <- []byte("first\nsec")
	chunks <- []byte("ond\n")
	records, err := task.Poll(bg)
	if err != nil || len(records) != 2 {
		t.Fatalf("poll = %v, %v", records, err)
	}
	for i, want := range []string{"first", "second"} {
		r := records[i]
		if r.Value != want || !cmp.Equal(r.SourcePartition, map[string]any{"filename": nil}) ||
			!cmp.Equal(r.SourceOffset, map[string]any{"position": nil}) {
			t.Fatalf("record %d = %+v", i, r)
		}
	}
	close(chunks)
	wantLines(t, poll(t, task))
	wantLines(t, poll(t, task))
}

func TestSourceExactlyOnceSupport(t *testing.T) {
	c := NewSourceConnector()
	for props, want := range map[*map[string]string]connect.ExactlyOnceSupport{
		{"topic": "t", "file": "/x"}: connect.ExactlyOnceSupported,
		{"topic": "t"}:               connect.ExactlyOnceUnsupported,
		{"topic": "t", "file": ""}:   connect.ExactlyOnceUnsupported,
		{"topic": "", "file": "/x"}:  connect.ExactlyOnceUnsupported,
	} {
		if got := c.ExactlyOnceSupport(*props); got != want {
			t.Errorf("ExactlyOnceSupport(%v) = %v, want %v", *props, got, want)
		}
	}
}

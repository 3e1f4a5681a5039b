package connectfail

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/task"
)

const lineFormat = "line-%07d"

// appendLines writes n numbered lines to path, rate per second, in the
// background; done closes when all are written.
func appendLines(t *testing.T, g *task.Group, path string, n, rate int) <-chan struct{} {
	done := make(chan struct{})
	g.Go(func(ctx context.Context) {
		defer close(done)
		f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			t.Error(err)
			return
		}
		defer f.Close()
		batch := max(rate/20, 1)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for i := 0; i < n; {
			var b strings.Builder
			for j := 0; j < batch && i < n; j++ {
				fmt.Fprintf(&b, lineFormat+"\n", i)
				i++
			}
			if _, err := f.WriteString(b.String()); err != nil {
				t.Error(err)
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	})
	return done
}

func lineNumber(t *testing.T, s string) int {
	n, err := strconv.Atoi(strings.TrimPrefix(s, "line-"))
	if err != nil || !strings.HasPrefix(s, "line-") {
		t.Fatalf("not a line: %q", s)
	}
	return n
}

// readTopic reads a one-partition topic from the start until it holds n
// distinct lines (read_committed), and answers the values in order.
func readTopic(t *testing.T, broker, topic string, n int) []int {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var out []int
	seen := map[int]bool{}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	for len(seen) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("topic %s: %d of %d lines after 2 minutes", topic, len(seen), n)
		}
		fs.EachRecord(func(r *kgo.Record) {
			v := lineNumber(t, string(r.Value))
			out = append(out, v)
			seen[v] = true
		})
	}
	return out
}

// checkReplays checks a sequence is every number 0..n-1, in order, where
// a repeat may only be a replay: the sequence goes back to an earlier
// number and runs forward again (at least once from a committed offset).
// It answers how many records were delivered twice and how many replays.
func checkReplays(t *testing.T, got []int, n int) (dups, replays int) {
	t.Helper()
	next := 0 // the lowest number not yet seen
	prev := -1
	for i, v := range got {
		switch {
		case v == prev+1 && v == next:
			next++
		case v == prev+1 && v < next:
			dups++
		case v <= prev:
			// A replay restarts earlier and must continue from there.
			replays++
			if v > next {
				t.Fatalf("record %d: %d after %d skips %d", i, v, prev, next)
			}
			if v < next {
				dups++
			} else {
				next++
			}
		default:
			t.Fatalf("record %d: %d after %d: a gap (lines %d..%d missing)", i, v, prev, prev+1, v-1)
		}
		prev = v
	}
	if next != n {
		t.Fatalf("the sequence ends at %d of %d", next, n)
	}
	return dups, replays
}

func testKillSourceWorker(t *testing.T, exactlyOnce bool) {
	t.Parallel() // most of each test is waiting for a session to time out
	bin, broker := startBroker(t)
	var extra []string
	if exactlyOnce {
		extra = append(extra, "exactly.once.source.support=enabled")
	}
	c := startCluster(t, bin, broker, 3, extra...)
	in := filepath.Join(c.dir, "in.txt")
	const n = 30000
	done := appendLines(t, c.tasks, in, n, 3000)
	c.create("src", map[string]string{"connector.class": "FileStreamSource", "file": in, "topic": "lines", "batch.size": "200"})
	st := c.running("src", 1, "")
	victim := st.Tasks[0].WorkerID
	admin := kadm.NewClient(mustClient(t, broker))
	eventually(t, time.Minute, "source progress", func() (bool, string) {
		ends, err := admin.ListEndOffsets(t.Context(), "lines")
		if err != nil {
			return false, err.Error()
		}
		o, _ := ends.Lookup("lines", 0)
		return o.Offset >= 5000, fmt.Sprint(o.Offset)
	})
	killedAt := time.Now()
	c.kill(victim)
	st = c.running("src", 1, victim)
	t.Logf("source task moved from %s to %s in %s", victim, st.Tasks[0].WorkerID, time.Since(killedAt).Round(100*time.Millisecond))
	<-done
	got := readTopic(t, broker, "lines", n)
	dups, replays := checkReplays(t, got, n)
	t.Logf("%d records read, %d lines, %d delivered twice in %d replays", len(got), n, dups, replays)
	if exactlyOnce && dups > 0 {
		t.Fatalf("exactly-once source: %d duplicates", dups)
	}
	if replays > 1 {
		t.Fatalf("%d replays after one kill", replays)
	}
}

// TestKillWorkerRunningSource: a FileStreamSource's worker is killed while
// lines are appended; the task resumes on a survivor from the last
// committed offset: every line arrives, duplicates only as one replay.
func TestKillWorkerRunningSource(t *testing.T) { testKillSourceWorker(t, false) }

// TestKillWorkerRunningExactlyOnceSource: the same with
// exactly.once.source.support=enabled: the killed task's open transaction
// is aborted when its successor's producer fences it, and the successor
// starts from the offsets committed with the last transaction: every line
// once.
func TestKillWorkerRunningExactlyOnceSource(t *testing.T) { testKillSourceWorker(t, true) }

func mustClient(t *testing.T, broker string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(broker)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// TestKillWorkerRunningSink: three FileStreamSink tasks on three workers
// drain a three-partition topic while it is produced to; the worker of one
// is killed; its partitions move to the survivors, which start from the
// committed offsets: every record is written, and records written twice
// are only of the killed worker's partitions.
func TestKillWorkerRunningSink(t *testing.T) {
	t.Parallel()
	bin, broker := startBroker(t)
	cl := mustClient(t, broker, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	admin := kadm.NewClient(cl)
	if _, err := admin.CreateTopic(t.Context(), 3, 1, nil, "in"); err != nil {
		t.Fatal(err)
	}
	c := startCluster(t, bin, broker, 3)
	out := filepath.Join(c.dir, "out.txt")
	const n = 30000
	produced := make(chan struct{})
	c.tasks.Go(func(ctx context.Context) {
		defer close(produced)
		for i := 0; i < n; i++ {
			r := &kgo.Record{Topic: "in", Partition: int32(i % 3), Value: []byte(fmt.Sprintf(lineFormat, i))}
			cl.Produce(ctx, r, func(_ *kgo.Record, err error) {
				if err != nil && ctx.Err() == nil {
					t.Errorf("produce: %v", err)
				}
			})
			if i%150 == 0 {
				time.Sleep(100 * time.Millisecond)
			}
		}
		cl.Flush(ctx)
	})
	c.create("snk", map[string]string{"connector.class": "FileStreamSink", "file": out, "topics": "in", "tasks.max": "3"})
	st := c.running("snk", 3, "")
	// Kill in the steady state: every task has committed what it wrote.
	eventually(t, time.Minute, "sink offsets committed on every partition", func() (bool, string) {
		var offs struct {
			Offsets []struct {
				Offset struct {
					KafkaOffset int64 `json:"kafka_offset"`
				} `json:"offset"`
			} `json:"offsets"`
		}
		c.call("GET", "/connectors/snk/offsets", nil, &offs)
		committed := 0
		for _, o := range offs.Offsets {
			if o.Offset.KafkaOffset > 500 {
				committed++
			}
		}
		return committed == 3, fmt.Sprintf("%+v", offs)
	})
	victim := st.Tasks[0].WorkerID
	owned := victimPartitions(t, admin, victim)
	select {
	case <-produced:
		t.Fatal("every record was produced before the kill: the kill would not be mid-stream")
	default:
	}
	killedAt := time.Now()
	c.kill(victim)
	st = c.running("snk", 3, victim)
	t.Logf("sink tasks moved off %s in %s", victim, time.Since(killedAt).Round(100*time.Millisecond))
	<-produced
	var lines []string
	eventually(t, 2*time.Minute, "every record written", func() (bool, string) {
		lines = readLines(out)
		seen := map[string]bool{}
		for _, l := range lines {
			seen[l] = true
		}
		return len(seen) == n, fmt.Sprintf("%d distinct of %d", len(seen), n)
	})
	// Per partition, the file is that partition's records in order with
	// replays only (three tasks append to one file, interleaved).
	byPartition := map[int][]int{}
	for _, l := range lines {
		v := lineNumber(t, l)
		byPartition[v%3] = append(byPartition[v%3], v/3)
	}
	total := 0
	for p := range 3 {
		count := n / 3
		if p < n%3 {
			count++
		}
		dups, replays := checkReplays(t, byPartition[p], count)
		if dups > 0 && !owned[int32(p)] {
			t.Errorf("partition %d was not the killed worker's (%v), yet %d of its records were written twice", p, owned, dups)
		}
		total += dups
		t.Logf("partition %d: %d records written twice in %d replays", p, dups, replays)
	}
	t.Logf("%d lines written for %d records: %d twice", len(lines), n, total)
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

// victimPartitions are the partitions of the sink's group that the worker's
// task consumes, found by the task clients' IDs (connect-<worker>-...).
func victimPartitions(t *testing.T, admin *kadm.Client, worker string) map[int32]bool {
	t.Helper()
	owned := map[int32]bool{}
	eventually(t, 30*time.Second, "the sink group's assignment", func() (bool, string) {
		groups, err := admin.DescribeGroups(t.Context(), "connect-snk")
		if err != nil {
			return false, err.Error()
		}
		g := groups["connect-snk"]
		for _, m := range g.Members {
			if !strings.HasPrefix(m.ClientID, "connect-"+worker+"-") {
				continue
			}
			if a, ok := m.Assigned.AsConsumer(); ok {
				for _, tp := range a.Topics {
					for _, p := range tp.Partitions {
						owned[p] = true
					}
				}
			}
		}
		return len(owned) > 0, fmt.Sprintf("%+v", g.Members)
	})
	return owned
}

package mirrorfail

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/devcluster"
	"github.com/samsa-io/samsa/test/kafkaref"
)

func TestMain(m *testing.M) {
	code := m.Run()
	devcluster.RemoveBuilt()
	os.Exit(code)
}

// soak is how long the load and the kills last: SAMSA_MIRROR_SOAK (a Go
// duration) for `make mirror-soak`, 12 s in make test.
func soak(t *testing.T) time.Duration {
	if s := os.Getenv("SAMSA_MIRROR_SOAK"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	return 12 * time.Second
}

// mirrorProc is one `samsa mirror` process.
type mirrorProc struct {
	cmd  *exec.Cmd
	done chan struct{}
}

func startMirror(t *testing.T, bin, config, logPath string) *mirrorProc {
	t.Helper()
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "mirror", "--config", config, "--clusters", "B")
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &mirrorProc{cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		f.Close()
		close(p.done)
	}()
	t.Cleanup(p.kill)
	return p
}

func (p *mirrorProc) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// acked is what the source acknowledged: value -> (partition, offset).
type acked struct {
	mu   sync.Mutex
	recs map[string][2]int64
}

// load produces to topic with acks=all until ctx ends, in bursts, each
// record a value of its own.
func load(ctx context.Context, t *testing.T, addr, topic string, a *acked) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerLinger(2*time.Millisecond))
	if err != nil {
		return err
	}
	defer cl.Close()
	seq := 0
	for ctx.Err() == nil {
		var wg sync.WaitGroup
		for i := 0; i < 200; i++ {
			seq++
			r := &kgo.Record{Key: []byte(fmt.Sprintf("k%d", seq%31)), Value: []byte(fmt.Sprintf("v-%08d", seq))}
			wg.Add(1)
			cl.Produce(context.Background(), r, func(r *kgo.Record, err error) {
				defer wg.Done()
				if err != nil {
					return // not acknowledged: the mirror owes nothing for it
				}
				a.mu.Lock()
				a.recs[string(r.Value)] = [2]int64{int64(r.Partition), r.Offset}
				a.mu.Unlock()
			})
		}
		wg.Wait()
		time.Sleep(20 * time.Millisecond)
	}
	return nil
}

// readCommitted reads a topic to its end, read_committed.
func readCommitted(t *testing.T, addr, topic string) []*kgo.Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ends, err := kadm.NewClient(cl).ListCommittedOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	todo := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err == nil && o.Offset > 0 {
			todo[o.Partition] = o.Offset
		}
	})
	var out []*kgo.Record
	idle := 0
	for len(todo) > 0 && idle < 4 {
		pctx, pcancel := context.WithTimeout(ctx, time.Second)
		fs := cl.PollFetches(pctx)
		pcancel()
		if ctx.Err() != nil {
			t.Fatalf("reading %s: %v", topic, ctx.Err())
		}
		if fs.NumRecords() == 0 {
			idle++ // only markers left before the end
			continue
		}
		idle = 0
		fs.EachRecord(func(r *kgo.Record) {
			out = append(out, r)
			if end, ok := todo[r.Partition]; ok && r.Offset+1 >= end {
				delete(todo, r.Partition)
			}
		})
	}
	return out
}

type mode struct {
	name   string
	extra  string // more mm2.properties lines
	offset bool   // offsets preserved
}

var modes = []mode{
	{name: "exactly-once", extra: "B.exactly.once.source.support = enabled\ntasks.max = 2\n"},
	{name: "offset-preserving", extra: "samsa.offset.preserving.enabled = true\n", offset: true},
}

// runKills mirrors source->target under a continuous acks=all load while
// the mirror process is killed with SIGKILL three times, then checks every
// acknowledged record is on the target exactly once (and, offset
// preserving, at its source offset).
func runKills(t *testing.T, source, target string, m mode) {
	bin, err := devcluster.BuildOnce(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	adm, err := kgo.NewClient(kgo.SeedBrokers(source))
	if err != nil {
		t.Fatal(err)
	}
	defer adm.Close()
	if _, err := kadm.NewClient(adm).CreateTopic(context.Background(), 3, 1, nil, "events"); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(dir, "mm2.properties")
	props := fmt.Sprintf(`clusters = A, B
A.bootstrap.servers = %s
B.bootstrap.servers = %s
A->B.enabled = true
A->B.topics = events
replication.factor = 1
offset-syncs.topic.replication.factor = 1
checkpoints.topic.replication.factor = 1
heartbeats.topic.replication.factor = 1
refresh.topics.interval.seconds = 1
emit.checkpoints.interval.seconds = 1
%s`, source, target, m.extra)
	if err := os.WriteFile(config, []byte(props), 0o644); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "mirror.log")
	defer func() {
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			if len(b) > 6000 {
				b = b[len(b)-6000:]
			}
			t.Logf("mirror log (end):\n%s", b)
		}
	}()

	a := &acked{recs: map[string][2]int64{}}
	ctx, stop := context.WithTimeout(context.Background(), soak(t))
	defer stop()
	loadDone := make(chan error, 1)
	go func() { loadDone <- load(ctx, t, source, "events", a) }()

	p := startMirror(t, bin, config, logPath)
	kills := 0
	every := soak(t) / 4
	for kills < 3 {
		select {
		case <-time.After(every):
		case <-ctx.Done():
		}
		p.kill()
		kills++
		t.Logf("killed the mirror (%d)", kills)
		p = startMirror(t, bin, config, logPath)
	}
	if err := <-loadDone; err != nil {
		t.Fatal(err)
	}
	a.mu.Lock()
	want := len(a.recs)
	a.mu.Unlock()
	t.Logf("%d records acknowledged by the source, %d kills", want, kills)
	if want == 0 {
		t.Fatal("no record acknowledged")
	}

	// Wait for the mirror to catch up, then check.
	deadline := time.Now().Add(90 * time.Second)
	for {
		got := readCommitted(t, target, "A.events")
		seen := map[string]int{}
		var problems []string
		for _, r := range got {
			v := string(r.Value)
			seen[v]++
			if seen[v] == 2 {
				problems = append(problems, fmt.Sprintf("%s twice", v))
			}
			if src, ok := a.recs[v]; ok && m.offset && (int64(r.Partition) != src[0] || r.Offset != src[1]) {
				problems = append(problems, fmt.Sprintf("%s at %d/%d, on the source %d/%d", v, r.Partition, r.Offset, src[0], src[1]))
			}
		}
		missing := 0
		for v := range a.recs {
			if seen[v] == 0 {
				missing++
			}
		}
		if len(problems) > 0 {
			if len(problems) > 10 {
				problems = problems[:10]
			}
			t.Fatalf("%s", strings.Join(problems, "\n"))
		}
		if missing == 0 {
			t.Logf("all %d acknowledged records on the target exactly once (%d records there)", want, len(got))
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d acknowledged records missing on the target", missing, want)
		}
		time.Sleep(2 * time.Second)
	}
}

// TestSamsaToSamsaUnderKills: both modes between two Samsa brokers.
func TestSamsaToSamsaUnderKills(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			source, _ := devcluster.StartTestBroker(t)
			target, _ := devcluster.StartTestBroker(t)
			runKills(t, source, target, m)
		})
	}
}

// TestKafkaToSamsaUnderKills: both modes with Apache Kafka 4.4 as the
// source and a Samsa broker as the target.
func TestKafkaToSamsaUnderKills(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			source := kafkaref.StartKafka(t)
			target, _ := devcluster.StartTestBroker(t)
			runKills(t, source.Bootstrap, target, m)
		})
	}
}

package cluster

import (
	"context"
	"crypto/rand"
	byteorder "encoding/binary"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/devcluster"
	"github.com/samsa-io/samsa/internal/history"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

var (
	growBulkMB   = flag.Int("grow.bulk-mb", 24, "MiB written to the bulk topic before TestGrowRebalanceDecommission moves it")
	growSteady   = flag.Duration("grow.steady", 5*time.Second, "how long TestGrowRebalanceDecommission measures the steady acks=all rate")
	growHistory  = flag.String("grow.history", "", "keep TestGrowRebalanceDecommission's history in this file")
	growMinShare = flag.Float64("grow.min-share", 0.3, "the least share of the steady acks=all rate the load must keep while partitions move")
	growThrottle = flag.Int64("grow.throttle", 2<<20, "replication throttle of the moves in TestGrowRebalanceDecommission, bytes per second")
)

const (
	growTopic      = "grow"
	growPartitions = 3
	growBulkTopic  = "grow-bulk"
	growBulkParts  = 6
	growBulkRecord = 16 << 10
)

// growRoles: nodes 1-3 are combined (the quorum), node 4 a broker that
// joins later.
func growRoles(id int32) string {
	if id <= 3 {
		return "broker,controller"
	}
	return "broker"
}

// TestGrowRebalanceDecommission is issue 15's cluster operation end to end,
// with processes and the samsa CLI as an operator runs it: three brokers
// take acks=all load (two idempotent producers and a read_committed
// consumer, every outcome in a history) over a small topic and hold a
// bulk topic of incompressible data; a fourth broker starts and gets
// nothing until `samsa cluster rebalance` moves replicas onto it; then
// `samsa cluster rebalance --drain 1` empties broker 1, which is stopped.
// Afterwards the history checker finds no acknowledged record lost and
// none duplicated, the bulk topic reads back whole, every replica's log
// holds the same batches, and the test logs the acks=all rate during each
// phase as a share of the steady rate (failing below -grow.min-share) and
// the rate at which broker 4 took in data. `make grow-soak` runs it with
// more data.
func TestGrowRebalanceDecommission(t *testing.T) {
	c := startGrowCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	createTopic(t, c, growTopic, growPartitions, 3, 2)
	createTopic(t, c, growBulkTopic, growBulkParts, 3, 2)
	bulk := writeBulk(t, c, *growBulkMB<<20)

	histPath := *growHistory
	if histPath == "" {
		histPath = filepath.Join(t.TempDir(), "history.jsonl")
	}
	w, err := history.Create(histPath)
	if err != nil {
		t.Fatal(err)
	}
	load := startLoad(t, c, w, growTopic, growPartitions)
	time.Sleep(time.Second) // the producers' connections and first batches
	steadyFrom := time.Now()
	time.Sleep(*growSteady)
	steady := load.rate(steadyFrom, time.Now())
	t.Logf("steady: %.0f acks=all records/s over %v", steady, *growSteady)

	// A new broker registers and is given nothing.
	if err := c.Node(4).Start(); err != nil {
		t.Fatal(err)
	}
	waitReady(t, c)
	if n := replicasOn(t, c, 4); n != 0 {
		t.Fatalf("the new broker holds %d replicas before any rebalance", n)
	}

	sampler := sampleBytes(ctx, c, 4)
	rates := sampleThrottleRates(ctx, c)
	growFrom := time.Now()
	throttle := strconv.FormatInt(*growThrottle, 10)
	rounds := rebalanceUntilDone(t, c, "--throttle", throttle)
	growTo := settle(growFrom)
	samples := sampler.stop()
	t.Logf("grow: the brokers' own throttled byte rates while moving (median, max of 1 s samples): %s", rates.stop())
	intake, bursts, intakeText := intakeRate(samples, float64(*growThrottle))
	t.Logf("grow: %d rebalance runs, window %v; acks=all rate %.0f/s, %.0f%% of steady; broker 4 took in data at %s, throttle %.2f MiB/s",
		rounds, growTo.Sub(growFrom).Round(time.Millisecond), load.rate(growFrom, growTo),
		100*load.rate(growFrom, growTo)/steady, intakeText, float64(*growThrottle)/(1<<20))
	// The new broker's follower throttle paces what it copies: from copy
	// burst to copy burst, within 10% of the throttle (the issue's ±10%)
	// over a copy of minBursts bursts or more (make grow-soak's). A
	// CI-sized copy lasts some 7 s, 8-12 bursts of one batch per leader
	// (1 MiB here) each: one burst more or less in the window is 10-15%,
	// so below minBursts the floor is 0.8×; the ceiling holds either way.
	lo := 0.9
	if bursts < minBursts {
		lo = 0.8
	}
	if r := intake / float64(*growThrottle); r < lo || r > 1.1 {
		t.Errorf("broker 4 copied at %.2f× the throttle, want %.1f-1.1× (%d copy bursts)", r, lo, bursts)
	} else {
		t.Logf("broker 4 copied at %.2f× the throttle (%d copy bursts; band %.1f-1.1×)", r, bursts, lo)
	}
	if n := replicasOn(t, c, 4); n == 0 {
		t.Fatal("the rebalance moved nothing onto the new broker")
	}
	t.Logf("grow: longest gap between acknowledgements per partition: %s", load.longestGap(growFrom, growTo))
	checkShare(t, "growing", load.rate(growFrom, growTo), steady)

	// Decommission one of the original brokers.
	drainFrom := time.Now()
	rounds = rebalanceUntilDone(t, c, "--drain", "1", "--throttle", throttle)
	drainTo := settle(drainFrom)
	t.Logf("drain of broker 1: %d rebalance runs, window %v; acks=all rate %.0f/s, %.0f%% of steady",
		rounds, drainTo.Sub(drainFrom).Round(time.Millisecond), load.rate(drainFrom, drainTo), 100*load.rate(drainFrom, drainTo)/steady)
	if n := replicasOn(t, c, 1); n != 0 {
		t.Fatalf("broker 1 still holds %d replicas after its drain", n)
	}
	t.Logf("drain: longest gap between acknowledgements per partition: %s", load.longestGap(drainFrom, drainTo))
	checkShare(t, "draining", load.rate(drainFrom, drainTo), steady)
	if err := c.Node(1).Stop(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second) // the load runs on without broker 1

	load.stopProducers(t)
	for _, topic := range []string{growTopic, growBulkTopic} {
		if err := waitFullISR(ctx, c, topic, 3); err != nil {
			t.Fatal(err)
		}
	}
	ends := endOffsets(t, c, growTopic)
	load.drainConsumer(t, ends)
	finalRead(t, c, w, growTopic, ends)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	load.report(t)
	checkHistory(t, histPath)
	bulk.check(t, c)

	replicas := replicaNodes(t, c, growTopic)
	bulkReplicas := replicaNodes(t, c, growBulkTopic)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	assertReplicasIdentical(t, c, growTopic, replicas)
	assertReplicasIdentical(t, c, growBulkTopic, bulkReplicas)
}

// startGrowCluster lays out four nodes and starts the first three.
func startGrowCluster(t *testing.T) *devcluster.Cluster {
	t.Helper()
	cfg := devcluster.Config{Binary: binary, Dir: t.TempDir(), Nodes: 4, Roles: growRoles, StopTimeout: 30 * time.Second,
		Overrides: map[string]string{"samsa.schema.registry.listener": ""}} // as startClusterWith
	c, err := devcluster.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("node logs:\n%s", c.LogTails(60))
		}
		if err := c.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	for id := int32(1); id <= 3; id++ {
		if err := c.Node(id).Start(); err != nil {
			t.Fatal(err)
		}
	}
	waitReady(t, c)
	return c
}

// rebalanceUntilDone runs samsa cluster rebalance (which waits for its
// moves) until a plan has no moves; it returns how many runs moved
// something.
func rebalanceUntilDone(t *testing.T, c *devcluster.Cluster, args ...string) int {
	t.Helper()
	for run := 0; run < 20; run++ {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		cmd := exec.CommandContext(ctx, binary, append([]string{"cluster", "rebalance", "--bootstrap-server", strings.Join(runningAddrs(c), ",")}, args...)...)
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("samsa cluster rebalance %v: %v\n%s", args, err, out)
		}
		if strings.Contains(string(out), "\nno moves\n") {
			return run
		}
		t.Logf("rebalance %v, run %d:\n%s", args, run+1, out)
	}
	t.Fatalf("samsa cluster rebalance %v still moves after 20 runs", args)
	return 0
}

// minPhase is the shortest window a phase's rate is measured over: a
// phase of small moves ends within a second, where one leader change's
// retry back-off (franz-go's, some 250-500 ms) would stand for the whole
// phase.
const minPhase = 3 * time.Second

// settle waits until at least minPhase has passed since from and returns
// the end of the phase's window.
func settle(from time.Time) time.Time {
	time.Sleep(time.Until(from.Add(minPhase)))
	return time.Now()
}

// replicasOn counts the replicas broker id holds, as the metadata says.
func replicasOn(t *testing.T, c *devcluster.Cluster, id int32) int {
	t.Helper()
	n := 0
	for _, topic := range []string{growTopic, growBulkTopic} {
		for _, rs := range replicaNodes(t, c, topic) {
			if slices.Contains(rs, id) {
				n++
			}
		}
	}
	return n
}

// checkShare fails when the rate during a phase falls below the stated
// share of the steady rate.
func checkShare(t *testing.T, phase string, rate, steady float64) {
	t.Helper()
	if steady > 0 && rate < *growMinShare*steady {
		t.Errorf("while %s the acks=all rate was %.0f/s, %.0f%% of the steady %.0f/s, below the %.0f%% stated", phase, rate, 100*rate/steady, steady, 100**growMinShare)
	}
}

// rate is the acknowledgements per second learned in [from, to).
func (l *load) rate(from, to time.Time) float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, acks := range l.mu.acks {
		for _, a := range acks {
			if !a.Before(from) && a.Before(to) {
				n++
			}
		}
	}
	return float64(n) / to.Sub(from).Seconds()
}

// longestGap is, per partition, the longest time in [from, to] without an
// acknowledgement, as text.
func (l *load) longestGap(from, to time.Time) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var parts []string
	for p := range l.partitions {
		last, gap := from, time.Duration(0)
		for _, a := range l.mu.acks[p] {
			if a.Before(from) || a.After(to) {
				continue
			}
			gap = max(gap, a.Sub(last))
			last = a
		}
		gap = max(gap, to.Sub(last))
		parts = append(parts, fmt.Sprintf("%d: %v", p, gap.Round(time.Millisecond)))
	}
	return strings.Join(parts, ", ")
}

// bulkData is what the bulk writer had acknowledged: per partition, the
// sequence numbers in the order of their offsets.
type bulkData struct {
	acked map[int32][]uint64
}

// writeBulk fills the bulk topic with about size bytes of incompressible
// records, acks=all, each starting with its sequence number.
func writeBulk(t *testing.T, c *devcluster.Cluster, size int) *bulkData {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Addrs()...), kgo.DefaultProduceTopic(growBulkTopic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchMaxBytes(1<<20))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	b := &bulkData{acked: map[int32][]uint64{}}
	var mu sync.Mutex
	var failed error
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for seq := range uint64(size / growBulkRecord) {
		v := make([]byte, growBulkRecord)
		rand.Read(v[8:])
		byteorder.BigEndian.PutUint64(v, seq)
		p := int32(seq % growBulkParts)
		cl.Produce(ctx, &kgo.Record{Partition: p, Value: v}, func(r *kgo.Record, err error) {
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed = err
				return
			}
			b.acked[p] = append(b.acked[p], seq)
		})
	}
	if err := cl.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if failed != nil {
		t.Fatalf("bulk write: %v", failed)
	}
	return b
}

// check reads the bulk topic back and demands exactly what was
// acknowledged, in order, in each partition.
func (b *bulkData) check(t *testing.T, c *devcluster.Cluster) {
	t.Helper()
	offsets := map[int32]kgo.Offset{}
	for p := range int32(growBulkParts) {
		offsets[p] = kgo.NewOffset().AtStart()
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(runningAddrs(c)...), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{growBulkTopic: offsets}),
		kgo.FetchMaxBytes(8<<20))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	got := map[int32][]uint64{}
	want := 0
	for _, seqs := range b.acked {
		want += len(seqs)
	}
	for n := 0; n < want; {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("bulk read: %d of %d records: %v", n, want, ctx.Err())
		}
		fs.EachRecord(func(r *kgo.Record) {
			got[r.Partition] = append(got[r.Partition], byteorder.BigEndian.Uint64(r.Value))
			n++
		})
	}
	for p, seqs := range b.acked {
		if !slices.Equal(got[p], seqs) {
			t.Errorf("%s-%d read back %d records, %d acknowledged, or in another order", growBulkTopic, p, len(got[p]), len(seqs))
		}
	}
}

// byteSample is the bytes a broker held at a moment.
type byteSample struct {
	at    time.Time
	bytes int64
}

type sampler struct {
	stopc chan struct{}
	done  chan []byteSample
}

// sampleBytes asks broker id for the size of its replicas (DescribeLogDirs)
// every 250 ms until stop.
func sampleBytes(ctx context.Context, c *devcluster.Cluster, id int32) *sampler {
	s := &sampler{stopc: make(chan struct{}), done: make(chan []byteSample, 1)}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Node(id).Addr()))
	if err != nil {
		s.done <- nil
		return s
	}
	adm := kadm.NewClient(cl)
	go func() { // stopped by stop, which waits for its samples
		defer cl.Close()
		var out []byteSample
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-s.stopc:
				s.done <- out
				return
			case <-ctx.Done():
				s.done <- out
				return
			case <-tick.C:
			}
			dirs, err := adm.DescribeBrokerLogDirs(ctx, id, nil)
			if err != nil {
				continue
			}
			var total int64
			dirs.Each(func(d kadm.DescribedLogDir) {
				d.Topics.Each(func(p kadm.DescribedLogDirPartition) { total += p.Size })
			})
			out = append(out, byteSample{at: time.Now(), bytes: total})
		}
	}()
	return s
}

func (s *sampler) stop() []byteSample {
	close(s.stopc)
	return <-s.done
}

// minBursts is the copy bursts a measure of the copy's rate needs before
// it is held to ±10% of the throttle.
const minBursts = 30

// copyPause is the longest pause between two copy bursts of one stretch
// of copying: a longer one is a rebalance run ending and the next
// starting, or copying onto other brokers, and is left out.
const copyPause = 5 * time.Second

// intakeRate is the rate at which broker 4 copied data while it copied,
// from its log sizes sampled every 250 ms (ss), against the throttle
// (bytes per second).
//
// A throttled follower copies in bursts: a fetch brings what the rate
// allows (whole batches, up to replica.fetch.max.bytes per partition, from
// each leader at once), then the follower waits until the rate allows
// more. So the rate is measured from burst to burst: an interval is a copy
// burst when it grew by more than a quarter of what the throttle allows in
// it (the partitions in sync grow by far less: the acks=all load's share);
// within each stretch of bursts no more than copyPause apart, the bytes
// after the stretch's first burst, up to and including its last, over the
// time from the first to the last. Counting the first burst too, or the
// time before it, or the pauses between stretches, would measure the
// rebalance's own steps (planning, the metadata, the move's completion)
// rather than the copy, which is what the throttle paces. whole is the
// plain figure for comparison: all growth over the first to the last
// sample.
func intakeRate(ss []byteSample, throttle float64) (rate float64, bursts int, text string) {
	var bytes int64
	var secs float64
	first, last := -1, -1 // the current stretch's first and last burst
	flush := func() {
		if first >= 0 && last > first {
			bytes += ss[last].bytes - ss[first].bytes
			secs += ss[last].at.Sub(ss[first].at).Seconds()
		}
	}
	for i := 1; i < len(ss); i++ {
		dt := ss[i].at.Sub(ss[i-1].at).Seconds()
		if float64(ss[i].bytes-ss[i-1].bytes) <= throttle*dt/4 {
			continue
		}
		bursts++
		if last >= 0 && ss[i].at.Sub(ss[last].at) > copyPause {
			flush()
			first = -1
		}
		if first < 0 {
			first = i
		}
		last = i
	}
	flush()
	whole := ""
	if n := len(ss); n > 1 {
		whole = fmt.Sprintf("; over the whole window %.2f MiB/s", float64(ss[n-1].bytes-ss[0].bytes)/ss[n-1].at.Sub(ss[0].at).Seconds()/(1<<20))
	}
	if secs == 0 {
		return 0, bursts, fmt.Sprintf("too few copy bursts (%d) to measure%s", bursts, whole)
	}
	rate = float64(bytes) / secs
	return rate, bursts, fmt.Sprintf("%.2f MiB/s (%.1f MiB in %.1f s between %d copy bursts%s)", rate/(1<<20), float64(bytes)/(1<<20), secs, bursts, whole)
}

// rateSampler scrapes every node's replication throttle byte rates (the
// brokers' own measure, samsa_replication_throttle_byte_rate) once a second.
type rateSampler struct {
	stopc chan struct{}
	done  chan string
}

var throttleRateLine = regexp.MustCompile(`^samsa_replication_throttle_byte_rate\{side="(leader|follower)"\} ([0-9.e+]+)$`)

func sampleThrottleRates(ctx context.Context, c *devcluster.Cluster) *rateSampler {
	s := &rateSampler{stopc: make(chan struct{}), done: make(chan string, 1)}
	go func() { // stopped by stop, which waits for its report
		got := map[string][]float64{}
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-s.stopc:
			case <-ctx.Done():
			case <-tick.C:
				for _, n := range c.Nodes() {
					if !n.Running() || n.HTTPAddr() == "" {
						continue
					}
					resp, err := http.Get("http://" + n.HTTPAddr() + "/metrics")
					if err != nil {
						continue
					}
					body, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					for _, line := range strings.Split(string(body), "\n") {
						if m := throttleRateLine.FindStringSubmatch(line); m != nil {
							if v, err := strconv.ParseFloat(m[2], 64); err == nil && v > 0 {
								key := fmt.Sprintf("node %d %s", n.ID, m[1])
								got[key] = append(got[key], v)
							}
						}
					}
				}
				continue
			}
			var parts []string
			for _, k := range slices.Sorted(maps.Keys(got)) {
				vs := got[k]
				slices.Sort(vs)
				parts = append(parts, fmt.Sprintf("%s %.2f/%.2f MiB/s", k, vs[len(vs)/2]/(1<<20), vs[len(vs)-1]/(1<<20)))
			}
			s.done <- strings.Join(parts, ", ")
			return
		}
	}()
	return s
}

func (s *rateSampler) stop() string {
	close(s.stopc)
	return <-s.done
}

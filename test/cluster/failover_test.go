package cluster

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/devcluster"
	"github.com/samsa-io/samsa/internal/history"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

var (
	failoverKills   = flag.Int("failover.kills", 3, "leader kills (SIGKILL) in TestFailoverUnderLoad")
	failoverTerms   = flag.Int("failover.terms", 2, "leader stops (SIGTERM, controlled shutdown) in TestFailoverUnderLoad")
	failoverHistory = flag.String("failover.history", "", "keep TestFailoverUnderLoad's history in this file")
)

const (
	failoverTopic      = "failover"
	failoverPartitions = 3
	failoverNodes      = 5
	// failoverInFlight bounds each producer's unacknowledged records.
	failoverInFlight = 32
)

// TestFailoverUnderLoad is the failover test of issue 12 on five broker
// processes: two acks=all idempotent producers and a read_committed
// consumer run while the leader of one partition after another is killed
// (SIGKILL) or stopped (SIGTERM, a controlled shutdown) and then started
// again, rejoining every ISR before the next round. Afterwards every
// client's observations and a final read go through the history checker
// (no acknowledged record lost, no duplicate, no offset with two values,
// no consumer going backwards or skipping), every error a client saw must
// be retriable, and every replica's log must hold the same batches offset
// by offset. It logs the time from each fault to a new leader, to the
// first acknowledged produce after a kill, and the longest gap between
// acknowledgements around a controlled shutdown; the soak run
// (`make failover-soak`) prints their median and p99.
func TestFailoverUnderLoad(t *testing.T) {
	c := startCluster(t, failoverNodes, nil)
	createTopic(t, c, failoverTopic, failoverPartitions, 3, 2)

	histPath := *failoverHistory
	if histPath == "" {
		histPath = filepath.Join(t.TempDir(), "history.jsonl")
	}
	w, err := history.Create(histPath)
	if err != nil {
		t.Fatal(err)
	}
	load := startLoad(t, c, w, failoverTopic, failoverPartitions)

	var kills, terms []faultTiming
	for i, kind := range faultPlan(*failoverKills, *failoverTerms) {
		ft := fault(t, c, load, kind, int32(i%failoverPartitions))
		t.Logf("round %d: %s", i+1, ft)
		if kind == "kill" {
			kills = append(kills, ft)
		} else {
			terms = append(terms, ft)
		}
	}

	load.stopProducers(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := waitFullISR(ctx, c, failoverTopic, 3); err != nil {
		t.Fatal(err)
	}
	ends := endOffsets(t, c, failoverTopic)
	load.drainConsumer(t, ends)
	finalRead(t, c, w, failoverTopic, ends)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	load.report(t)
	checkHistory(t, histPath)
	for _, group := range []struct {
		name  string
		fs    []faultTiming
		toAck bool
	}{
		{"kill -9", kills, true}, {"SIGTERM", terms, false},
	} {
		reportFaults(t, group.name, group.fs, group.toAck)
		var ctrl, other []faultTiming
		for _, f := range group.fs {
			if f.controller {
				ctrl = append(ctrl, f)
			} else {
				other = append(other, f)
			}
		}
		if len(ctrl) > 0 && len(other) > 0 {
			reportFaults(t, group.name+" of a leader that is not the controller", other, group.toAck)
			reportFaults(t, group.name+" of a leader that is the controller", ctrl, group.toAck)
		}
	}

	replicas := replicaNodes(t, c, failoverTopic)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	assertReplicasIdentical(t, c, failoverTopic, replicas)
}

// faultPlan interleaves kills and stops: kill, term, kill, term ... then
// the rest of the larger kind.
func faultPlan(kills, terms int) []string {
	var plan []string
	for kills > 0 || terms > 0 {
		if kills > 0 {
			plan = append(plan, "kill")
			kills--
		}
		if terms > 0 {
			plan = append(plan, "term")
			terms--
		}
	}
	return plan
}

// faultTiming is what one round measured, each from the moment the signal
// was sent.
type faultTiming struct {
	kind   string
	victim int32
	// controller: the victim was the active controller, so a new one was
	// elected first, and it starts every broker's session afresh.
	controller bool
	toLeader   time.Duration // until a running node named another leader
	// toAck is until the first acknowledgement on the partition after the
	// signal; gap the longest time without one from the signal until the
	// new leader's first. After a kill both are the unavailability; during
	// a controlled shutdown the old leader acknowledges until it hands
	// over, so gap is.
	toAck, gap time.Duration
}

func (f faultTiming) String() string {
	role := ""
	if f.controller {
		role = " (the active controller)"
	}
	return fmt.Sprintf("%s of leader %d%s: new leader after %v, first ack after %v, longest ack gap %v",
		f.kind, f.victim, role, f.toLeader.Round(time.Millisecond), f.toAck.Round(time.Millisecond), f.gap.Round(time.Millisecond))
}

// fault kills or stops the leader of a partition, measures the failover,
// then starts the node again and waits until it is back in every ISR.
func fault(t *testing.T, c *devcluster.Cluster, load *load, kind string, p int32) faultTiming {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	victim := leaderOf(ctx, c, failoverTopic, p)
	if victim < 0 {
		t.Fatalf("%s-%d has no leader", failoverTopic, p)
	}
	ft := faultTiming{kind: kind, victim: victim, controller: activeController(ctx, c) == victim}
	t0 := time.Now()
	stopped := make(chan error, 1)
	if kind == "kill" {
		stopped <- c.Node(victim).Kill()
	} else {
		go func() { stopped <- c.Node(victim).Stop(30 * time.Second) }()
	}
	for {
		if l := leaderOf(ctx, c, failoverTopic, p, victim); l >= 0 && l != victim {
			ft.toLeader = time.Since(t0)
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("%s of node %d: %s-%d has no new leader after %v", kind, victim, failoverTopic, p, time.Since(t0))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := <-stopped; err != nil {
		t.Fatalf("%s of node %d: %v", kind, victim, err)
	}
	leaderAt := t0.Add(ft.toLeader)
	first, gap, ok := load.acksAfter(ctx, p, t0, leaderAt)
	if !ok {
		t.Fatalf("%s of node %d: no acknowledgement on %s-%d within %v", kind, victim, failoverTopic, p, time.Since(t0))
	}
	ft.toAck, ft.gap = first.Sub(t0), gap
	if err := c.Node(victim).Start(); err != nil {
		t.Fatal(err)
	}
	waitReady(t, c)
	if err := waitFullISR(ctx, c, failoverTopic, 3); err != nil {
		t.Fatal(err)
	}
	return ft
}

// reportFaults logs the median and p99 of a kind of round.
func reportFaults(t *testing.T, kind string, fs []faultTiming, toAck bool) {
	t.Helper()
	if len(fs) == 0 {
		return
	}
	pick := func(f func(faultTiming) time.Duration) string {
		ds := make([]time.Duration, len(fs))
		for i, ft := range fs {
			ds[i] = f(ft)
		}
		slices.Sort(ds)
		p99 := ds[min(len(ds)-1, (len(ds)*99+99)/100-1)]
		return fmt.Sprintf("median %v, p99 %v, max %v", ds[len(ds)/2].Round(time.Millisecond), p99.Round(time.Millisecond), ds[len(ds)-1].Round(time.Millisecond))
	}
	t.Logf("%d × %s: new leader %s", len(fs), kind, pick(func(f faultTiming) time.Duration { return f.toLeader }))
	if toAck {
		t.Logf("%d × %s: first ack %s", len(fs), kind, pick(func(f faultTiming) time.Duration { return f.toAck }))
	}
	t.Logf("%d × %s: longest ack gap %s", len(fs), kind, pick(func(f faultTiming) time.Duration { return f.gap }))
}

// load is the producers and the consumer of the failover test.
type load struct {
	w          *history.Writer
	topic      string
	partitions int32
	producers  sync.WaitGroup
	stop       context.CancelFunc
	consumer   struct {
		sync.WaitGroup
		stop context.CancelFunc
		cl   *kgo.Client
		mu   sync.Mutex
		next map[int32]int64
		errs map[string]int
	}
	mu struct {
		sync.Mutex
		acks  map[int32][]time.Time // per partition, in the order learned
		errs  map[string]int        // produce errors, "retriable: text"
		fatal []string
	}
}

func startLoad(t *testing.T, c *devcluster.Cluster, w *history.Writer, topic string, partitions int32) *load {
	t.Helper()
	l := &load{w: w, topic: topic, partitions: partitions}
	l.mu.acks = map[int32][]time.Time{}
	l.mu.errs = map[string]int{}
	ctx, cancel := context.WithCancel(context.Background())
	l.stop = cancel
	for _, name := range []string{"p1", "p2"} {
		cl, err := kgo.NewClient(kgo.SeedBrokers(c.Addrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()),
			kgo.DefaultProduceTopic(topic),
			// A dead leader's partition is looked up again at once, not
			// after franz-go's 5 s default.
			kgo.MetadataMinAge(250*time.Millisecond),
			kgo.RecordDeliveryTimeout(30*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		l.producers.Go(func() {
			defer cl.Close()
			l.produce(ctx, cl, name)
		})
	}

	offsets := map[int32]kgo.Offset{}
	for p := range partitions {
		offsets[p] = kgo.NewOffset().AtStart()
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Addrs()...), kgo.MetadataMinAge(250*time.Millisecond),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: offsets}))
	if err != nil {
		t.Fatal(err)
	}
	cctx, ccancel := context.WithCancel(context.Background())
	l.consumer.stop, l.consumer.cl = ccancel, cl
	l.consumer.next = map[int32]int64{}
	l.consumer.errs = map[string]int{}
	l.consumer.Go(func() { l.consume(cctx, cl) })
	return l
}

// produce sends records until ctx ends, at most failoverInFlight
// unacknowledged, each value unique, round-robin over the partitions, and
// writes each outcome to the history.
func (l *load) produce(ctx context.Context, cl *kgo.Client, name string) {
	sem := make(chan struct{}, failoverInFlight)
	for seq := 0; ; seq++ {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			cl.Flush(context.Background())
			return
		}
		p := int32(seq) % l.partitions
		value := fmt.Sprintf("%s-%d", name, seq)
		// The records outlive ctx: stopping the load stops new records,
		// and Flush waits for the ones sent.
		cl.Produce(context.Background(), &kgo.Record{Partition: p, Value: []byte(value)}, func(r *kgo.Record, err error) {
			l.record(name, p, value, r, err)
			<-sem
		})
	}
}

func (l *load) record(client string, p int32, value string, r *kgo.Record, err error) {
	ev := history.Produce{Client: client, Idempotent: true, Topic: l.topic, Partition: p, Value: value, Offset: -1, Time: time.Now()}
	l.mu.Lock()
	switch {
	case err == nil:
		ev.Outcome, ev.Offset = history.OutcomeAck, r.Offset
		pid, epoch := r.ProducerID, r.ProducerEpoch
		ev.ProducerID, ev.ProducerEpoch = &pid, &epoch
		l.mu.acks[p] = append(l.mu.acks[p], ev.Time)
	case errors.Is(err, kgo.ErrRecordTimeout), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		ev.Outcome, ev.Error = history.OutcomeUnknown, err.Error()
		l.mu.errs["unknown: "+err.Error()]++
	case isConnectionError(err):
		// The connection died under the request (a killed broker): the
		// record may or may not be in the log. franz-go gives up on a
		// connection that dies right after its first request (it takes
		// that for missing SASL) instead of retrying it; to Kafka this
		// is a network error, which is retriable.
		ev.Outcome, ev.Error, ev.Retriable = history.OutcomeUnknown, err.Error(), true
		l.mu.errs["unknown, connection lost: "+err.Error()]++
	default:
		ev.Outcome, ev.Error, ev.Retriable = history.OutcomeFail, err.Error(), kerr.IsRetriable(err)
		l.mu.errs[fmt.Sprintf("retriable=%v: %v", ev.Retriable, err)]++
		if !ev.Retriable {
			l.mu.fatal = append(l.mu.fatal, fmt.Sprintf("%s %s: %v", client, value, err))
		}
	}
	l.mu.Unlock()
	if werr := l.w.Write(ev); werr != nil {
		panic(werr) // a history that cannot be written is a broken test
	}
}

// isConnectionError says whether a produce error is the connection's,
// not an answer from a broker.
func isConnectionError(err error) bool {
	var firstRead *kgo.ErrFirstReadEOF
	var ne net.Error
	return errors.As(err, &firstRead) || errors.As(err, &ne) || errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) || errors.Is(err, syscall.ECONNRESET)
}

// acksAfter waits for the first acknowledgement on partition p learned
// after leaderAt, and returns the first one after t0 and the longest gap
// between t0 and that first acknowledgement after leaderAt.
func (l *load) acksAfter(ctx context.Context, p int32, t0, leaderAt time.Time) (first time.Time, gap time.Duration, ok bool) {
	for ctx.Err() == nil {
		l.mu.Lock()
		acks := l.mu.acks[p]
		i := len(acks)
		for i > 0 && acks[i-1].After(t0) {
			i--
		}
		after := acks[i:]
		last := t0
		for _, a := range after {
			gap = max(gap, a.Sub(last))
			last = a
			if a.After(leaderAt) {
				l.mu.Unlock()
				return after[0], gap, true
			}
		}
		l.mu.Unlock()
		gap = 0
		time.Sleep(20 * time.Millisecond)
	}
	return time.Time{}, 0, false
}

// stopProducers stops sending and waits for every outcome.
func (l *load) stopProducers(t *testing.T) {
	l.stop()
	l.producers.Wait()
}

// consume reads until ctx ends, writing every record to the history.
func (l *load) consume(ctx context.Context, cl *kgo.Client) {
	for {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return
		}
		now := time.Now()
		fs.EachError(func(topic string, p int32, err error) {
			// A connection that died under a fetch (a broker killed or
			// stopping as the client connected) is a network error:
			// retriable to Kafka, and the consumer goes on.
			l.consumer.mu.Lock()
			l.consumer.errs[fmt.Sprintf("retriable=%v: %v", kerr.IsRetriable(err) || isConnectionError(err), err)]++
			l.consumer.mu.Unlock()
		})
		fs.EachRecord(func(r *kgo.Record) {
			epoch := r.LeaderEpoch
			ev := history.Consume{Consumer: "c1", Session: "s1", Isolation: history.ReadCommitted,
				Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Value: string(r.Value), LeaderEpoch: &epoch, Time: now}
			if err := l.w.Write(ev); err != nil {
				panic(err)
			}
			l.consumer.mu.Lock()
			l.consumer.next[r.Partition] = r.Offset + 1
			l.consumer.mu.Unlock()
		})
	}
}

// drainConsumer waits until the consumer has read to the end offsets, then
// stops it.
func (l *load) drainConsumer(t *testing.T, ends map[int32]int64) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		l.consumer.mu.Lock()
		done := reached(l.consumer.next, ends)
		at := fmt.Sprint(l.consumer.next)
		l.consumer.mu.Unlock()
		if done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the consumer is at %s after 60 s, the end offsets are %v", at, ends)
		}
		time.Sleep(50 * time.Millisecond)
	}
	l.consumer.stop()
	l.consumer.Wait()
	l.consumer.cl.Close()
}

// report logs what the clients saw and fails on any error that is not
// retriable.
func (l *load) report(t *testing.T) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, acks := range l.mu.acks {
		n += len(acks)
	}
	t.Logf("producers: %d acknowledged; errors: %v", n, l.mu.errs)
	l.consumer.mu.Lock()
	t.Logf("consumer: fetch errors: %v", l.consumer.errs)
	for e := range l.consumer.errs {
		if strings.HasPrefix(e, "retriable=false") {
			t.Errorf("the consumer saw an error that is not retriable: %s", e)
		}
	}
	l.consumer.mu.Unlock()
	for _, f := range l.mu.fatal {
		t.Errorf("a producer saw an error that is not retriable: %s", f)
	}
}

// finalRead reads every partition from its start to ends, read_uncommitted,
// into the history.
func finalRead(t *testing.T, c *devcluster.Cluster, w *history.Writer, topic string, ends map[int32]int64) {
	t.Helper()
	offsets := map[int32]kgo.Offset{}
	for p := range ends {
		offsets[p] = kgo.NewOffset().AtStart()
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Addrs()...), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: offsets}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	next := map[int32]int64{}
	for !reached(next, ends) {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("final read at %v of %v: %v", next, ends, ctx.Err())
		}
		fs.EachError(func(_ string, p int32, err error) { t.Logf("final read of %d: %v", p, err) })
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset >= ends[r.Partition] {
				return
			}
			if err := w.Write(history.Final{Isolation: history.ReadUncommitted, Topic: topic, Partition: r.Partition, Offset: r.Offset, Value: string(r.Value)}); err != nil {
				t.Fatal(err)
			}
			next[r.Partition] = r.Offset + 1
		})
	}
	for p, end := range ends {
		if err := w.Write(history.FinalEnd{Isolation: history.ReadUncommitted, Topic: topic, Partition: p, HighWatermark: end}); err != nil {
			t.Fatal(err)
		}
	}
}

// checkHistory runs the checker over the history file and fails on any
// anomaly, printing the report.
func checkHistory(t *testing.T, path string) {
	t.Helper()
	h, err := history.ReadFiles(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := history.Check(h)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	r.WriteText(&b)
	if r.Failed(true) {
		t.Errorf("the history checker found anomalies (%s):\n%s", path, b.String())
		return
	}
	t.Logf("history %s:\n%s", path, b.String())
}

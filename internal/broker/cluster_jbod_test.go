package broker

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/model"
	"github.com/samsa-io/samsa/internal/vfs"
)

// TestClusterJBODFailedLogDirTakesOnlyItsReplicasOffline: three brokers of
// two log directories each; node 1 leads every partition, its replicas
// spread over its two directories. One of them starts failing every I/O
// (EIO) while acks=all producers write to every partition: node 1 takes
// that directory offline and tells the controller, which moves the
// leadership of exactly the partitions whose node-1 replica was there to
// in-sync replicas on the other brokers and takes node 1 out of their
// ISRs; Metadata lists those replicas offline, and the producers go on
// writing to those partitions through the new leaders. Node 1 keeps
// leading the partitions in its healthy directory and keeps serving. No
// acknowledged record is lost. Once the disk is fixed and node 1
// restarted, its replicas there catch up and rejoin the ISRs.
func TestClusterJBODFailedLogDirTakesOnlyItsReplicasOffline(t *testing.T) {
	f := newJBODFixture(t, 3, nil)
	c, ctx, ctrl, n1, b1, failDir, inFail, inOK := f.c, f.ctx, f.ctrl, f.n1, f.n1.get(), f.failDir, f.inFail, f.inOK
	const parts = jbodParts
	load := startNumberedLoad(t, ctx, c, "jbod", parts)
	defer load.stop()
	waitAcks := load.waitAcks
	waitAcks("before the failure", append(slices.Clone(inFail), inOK...), 20)

	f.fail(true)
	start := time.Now()
	// Node 1's writes to the failing directory fail; it takes it offline,
	// and the controller moves those leaderships away.
	await(t, ctrl, "the failed directory's partitions led elsewhere", func() bool {
		img := c.activeController().get().ctrl.Image()
		for _, p := range inFail {
			pi, _ := img.Partition(model.TopicPartition{Topic: "jbod", Partition: p})
			if pi.Leader == 1 || pi.Leader < 0 || slices.Contains(pi.ISR, 1) || img.ReplicaOnline(pi, 1) {
				return false
			}
		}
		return true
	})
	t.Logf("leaderships moved %v after the directory started failing", time.Since(start).Round(time.Millisecond))
	img := c.activeController().get().ctrl.Image()
	for _, p := range inOK {
		pi, _ := img.Partition(model.TopicPartition{Topic: "jbod", Partition: p})
		if pi.Leader != 1 || !slices.Contains(pi.ISR, 1) {
			t.Errorf("partition %d, whose node-1 replica is on the healthy directory: leader %d, ISR %v", p, pi.Leader, pi.ISR)
		}
	}
	if b1.Failure() != nil {
		t.Fatalf("node 1 stopped: %v", b1.Failure())
	}
	// Producers go on, to every partition: through the new leaders for
	// the failed directory's, through node 1 for the others.
	waitAcks("after the failure", append(slices.Clone(inFail), inOK...), 50)
	t.Logf("producers acknowledged again on every partition %v after the failure", time.Since(start).Round(time.Millisecond))

	// Clients see the failed replicas offline, and node 1 reports the
	// directory offline.
	md, err := kadm.NewClient(c.liveClient()).Metadata(ctx, "jbod")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range md.Topics["jbod"].Partitions {
		offline := slices.Contains(p.OfflineReplicas, 1)
		if offline != slices.Contains(inFail, p.Partition) {
			t.Errorf("partition %d: offline replicas %v", p.Partition, p.OfflineReplicas)
		}
	}
	dirs, err := kadm.NewClient(newFranz(t, b1.Addr())).DescribeBrokerLogDirs(ctx, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := dirs[failDir]; d.Err != kerr.KafkaStorageError {
		t.Errorf("DescribeLogDirs of the failed directory: %v", d.Err)
	}
	if d := dirs[n1.dir+"/d0"]; d.Err != nil || len(d.Topics["jbod"]) != len(inOK) {
		t.Errorf("DescribeLogDirs of the healthy directory: %v, %d partitions", d.Err, len(d.Topics["jbod"]))
	}
	load.stop()
	load.verify(ctx)

	// The disk is repaired and node 1 restarted: its replicas there are
	// online again, catch up, and rejoin the ISRs.
	c.stop(n1)
	f.fail(false)
	c.start(n1)
	c.waitLive(3)
	await(t, c.activeController().get(), "node 1's repaired replicas back in the ISRs", func() bool {
		img := c.activeController().get().ctrl.Image()
		for _, p := range inFail {
			pi, _ := img.Partition(model.TopicPartition{Topic: "jbod", Partition: p})
			if !slices.Contains(pi.ISR, 1) || !img.ReplicaOnline(pi, 1) {
				return false
			}
		}
		return true
	})
}

// jbodParts is the partitions of the JBOD tests' topic.
const jbodParts = 6

// jbodFixture is a cluster whose node 1 has two log directories, one of
// which (failDir) fails every I/O on fail(true), and topic "jbod" of
// jbodParts partitions on nodes 1, 2 and 3 (min ISR 2), led by node 1,
// its replicas there spread evenly: inFail are the partitions in failDir,
// inOK those in the other.
type jbodFixture struct {
	c            *testCluster
	ctx          context.Context
	ctrl         *Broker
	n1           *clusterNode
	failDir      string
	inFail, inOK []int32
	fail         func(bool)
}

func newJBODFixture(t *testing.T, nodes int, extra map[string]string) *jbodFixture {
	t.Helper()
	var mu sync.Mutex
	failing := ""
	faulty := vfs.NewFaulty(vfs.OS, func(op vfs.Op, name string) error {
		mu.Lock()
		defer mu.Unlock()
		if failing != "" && (name == failing || strings.HasPrefix(name, failing+"/")) {
			return fmt.Errorf("%w: %s %s: %w", vfs.ErrInjected, op, name, syscall.EIO)
		}
		return nil
	})
	cfg := map[string]string{"replica.fetch.backoff.ms": "50", "replica.lag.time.max.ms": "10000"}
	maps.Copy(cfg, extra)
	c := layoutTestClusterWith(t, nodes, cfg, func(c *testCluster) { c.logDirs, c.fs = 2, map[int32]vfs.FS{1: faulty} })
	startTestCluster(c)
	_, ctx := c.admin()
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "jbod", -1, -1
	for p := range int32(jbodParts) {
		ra := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
		ra.Partition, ra.Replicas = p, []int32{1, 2, 3}
		rt.ReplicaAssignment = append(rt.ReplicaAssignment, ra)
	}
	rc := kmsg.NewCreateTopicsRequestTopicConfig()
	rc.Name, rc.Value = "min.insync.replicas", kmsg.StringPtr("2")
	rt.Configs = append(rt.Configs, rc)
	req.Topics, req.TimeoutMillis = append(req.Topics, rt), 10000
	resp, err := req.RequestWith(ctx, c.liveClient())
	if err != nil || resp.Topics[0].ErrorCode != 0 {
		t.Fatalf("create: %v %v", err, resp)
	}
	f := &jbodFixture{c: c, ctx: ctx, n1: c.node(1), failDir: c.node(1).dir + "/d1", fail: func(on bool) {
		mu.Lock()
		defer mu.Unlock()
		failing = ""
		if on {
			failing = c.node(1).dir + "/d1"
		}
	}}
	// Every broker tells the controller where its replicas went.
	f.ctrl = c.activeController().get()
	await(t, f.ctrl, "node 1's replicas assigned to directories", func() bool {
		for p := range int32(jbodParts) {
			pi, ok := f.ctrl.ctrl.Image().Partition(model.TopicPartition{Topic: "jbod", Partition: p})
			if !ok || pi.Directory(1) == "" || len(pi.ISR) != 3 {
				return false
			}
		}
		return true
	})
	for p := range int32(jbodParts) {
		d, _ := f.n1.get().logs.DirOf(model.TopicPartition{Topic: "jbod", Partition: p})
		if d == f.failDir {
			f.inFail = append(f.inFail, p)
		} else {
			f.inOK = append(f.inOK, p)
		}
	}
	if len(f.inFail) != jbodParts/2 {
		t.Fatalf("node 1 placed %v in %s, want half of the partitions", f.inFail, f.failDir)
	}
	return f
}

// TestClusterJBODFailedDirReplicasMoveElsewhere: with the balancer on, the
// replicas of a log directory that failed on a live broker are copied to
// another broker once the down timeout passes (the issue's "re-replicated
// elsewhere"): four brokers, topic on 1, 2 and 3; node 1's directory d1
// fails under acks=all load; its partitions get node 4 in place of node 1,
// with a full ISR of online replicas, while the partitions in node 1's
// healthy directory keep their node-1 replica. No acknowledged record is
// lost. Without the balancer (TestClusterJBODFailedLogDirTakesOnlyIts-
// ReplicasOffline) they stay offline until the disk is repaired.
func TestClusterJBODFailedDirReplicasMoveElsewhere(t *testing.T) {
	// Spreads wide enough that only the failed directory's replicas
	// move; interval and timeout short for the test.
	f := newJBODFixture(t, 4, map[string]string{"samsa.balancer.enable": "true", "samsa.balancer.interval.ms": "200",
		"samsa.balancer.broker.down.timeout.ms": "1000", "samsa.balancer.replica.spread": "100",
		"samsa.balancer.leader.spread": "100", "samsa.balancer.bytes.spread": "0"})
	load := startNumberedLoad(t, f.ctx, f.c, "jbod", jbodParts)
	defer load.stop()
	all := append(slices.Clone(f.inFail), f.inOK...)
	load.waitAcks("before the failure", all, 20)
	f.fail(true)
	start := time.Now()
	await(t, f.ctrl, "the failed directory's replicas moved to node 4", func() bool {
		img := f.c.activeController().get().ctrl.Image()
		for _, p := range all {
			pi, _ := img.Partition(model.TopicPartition{Topic: "jbod", Partition: p})
			want := []model.NodeID{1, 2, 3}
			if slices.Contains(f.inFail, p) {
				want = []model.NodeID{2, 3, 4}
			}
			if pi.Reassigning() || !slices.Equal(slices.Sorted(slices.Values(pi.Replicas)), want) || len(pi.ISR) != 3 {
				return false
			}
			for _, r := range pi.Replicas {
				if !img.ReplicaOnline(pi, r) {
					return false
				}
			}
		}
		return true
	})
	t.Logf("the failed directory's replicas were on node 4 and in sync %v after the failure", time.Since(start).Round(time.Millisecond))
	load.waitAcks("after the move", all, 20)
	load.stop()
	load.verify(f.ctx)
}

// numberedLoad writes numbered records to every partition of a topic, one
// acks=all idempotent producer per partition, and checks that every
// acknowledged record is read back in order, once.
type numberedLoad struct {
	t      *testing.T
	c      *testCluster
	topic  string
	prod   *kgo.Client
	stopc  chan struct{}
	wg     sync.WaitGroup
	once   sync.Once
	mu     sync.Mutex
	acked  []int
	failed error
}

func startNumberedLoad(t *testing.T, ctx context.Context, c *testCluster, topic string, parts int) *numberedLoad {
	t.Helper()
	prod, err := kgo.NewClient(kgo.SeedBrokers(c.bootstrap()...), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(time.Millisecond), kgo.MetadataMinAge(100*time.Millisecond),
		kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond }))
	if err != nil {
		t.Fatal(err)
	}
	l := &numberedLoad{t: t, c: c, topic: topic, prod: prod, stopc: make(chan struct{}), acked: make([]int, parts)}
	for p := range int32(parts) {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for i := 0; ; i++ {
				select {
				case <-l.stopc:
					return
				default:
				}
				if err := prod.ProduceSync(ctx, &kgo.Record{Partition: p, Value: fmt.Appendf(nil, "%d", i)}).FirstErr(); err != nil {
					l.mu.Lock()
					l.failed = fmt.Errorf("partition %d record %d: %w", p, i, err)
					l.mu.Unlock()
					return
				}
				l.mu.Lock()
				l.acked[p] = i + 1
				l.mu.Unlock()
				time.Sleep(2 * time.Millisecond)
			}
		}()
	}
	return l
}

// ackedOf is how many records partition p has had acknowledged; a failed
// produce fails the test.
func (l *numberedLoad) ackedOf(p int32) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.failed != nil {
		l.t.Fatal(l.failed)
	}
	return l.acked[p]
}

// waitAcks waits until each of ps has had n more records acknowledged.
func (l *numberedLoad) waitAcks(what string, ps []int32, n int) {
	l.t.Helper()
	want := map[int32]int{}
	for _, p := range ps {
		want[p] = l.ackedOf(p) + n
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, p := range ps {
		for l.ackedOf(p) < want[p] {
			if time.Now().After(deadline) {
				l.t.Fatalf("%s: partition %d stalled at %d acknowledged records", what, p, l.ackedOf(p))
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// stop ends the producers and waits for them; safe to call twice.
func (l *numberedLoad) stop() {
	l.once.Do(func() {
		close(l.stopc)
		l.wg.Wait()
		l.prod.Close()
	})
}

// verify reads every partition from the start, after stop: each holds
// its acknowledged records in order, none missing, none twice.
func (l *numberedLoad) verify(ctx context.Context) {
	l.t.Helper()
	offsets := map[int32]kgo.Offset{}
	for p := range int32(len(l.acked)) {
		offsets[p] = kgo.NewOffset().AtStart()
	}
	cons, err := kgo.NewClient(kgo.SeedBrokers(l.c.bootstrap()...), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{l.topic: offsets}))
	if err != nil {
		l.t.Fatal(err)
	}
	defer cons.Close()
	next := make([]int, len(l.acked))
	for {
		done := true
		for p := range l.acked {
			done = done && next[p] >= l.acked[p]
		}
		if done {
			return
		}
		fs := cons.PollFetches(ctx)
		if ctx.Err() != nil {
			l.t.Fatalf("read %v of %v acknowledged records", next, l.acked)
		}
		fs.EachRecord(func(r *kgo.Record) {
			var i int
			fmt.Sscanf(string(r.Value), "%d", &i)
			if i != next[r.Partition] {
				l.t.Fatalf("partition %d offset %d holds record %d, want %d", r.Partition, r.Offset, i, next[r.Partition])
			}
			next[r.Partition]++
		})
	}
}

// await waits until cond holds in b's metadata image.
func await(t *testing.T, b *Broker, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	b.awaitImage(ctx, cond)
	if !cond() {
		t.Fatalf("never: %s", what)
	}
}

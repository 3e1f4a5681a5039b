package broker

import (
	"context"
	"fmt"
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
	c := layoutTestClusterWith(t, 3, map[string]string{"replica.fetch.backoff.ms": "50", "replica.lag.time.max.ms": "10000"},
		func(c *testCluster) { c.logDirs, c.fs = 2, map[int32]vfs.FS{1: faulty} })
	startTestCluster(c)
	_, ctx := c.admin()
	const parts = 6
	assign := map[int32][]int32{}
	for p := range int32(parts) {
		assign[p] = []int32{1, 2, 3}
	}
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "jbod", -1, -1
	for p, rs := range assign {
		ra := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
		ra.Partition, ra.Replicas = p, rs
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
	n1 := c.node(1)
	b1 := n1.get()
	failDir := n1.dir + "/d1"
	// Every broker tells the controller where its replicas went.
	ctrl := c.activeController().get()
	await(t, ctrl, "node 1's replicas assigned to directories", func() bool {
		for p := range int32(parts) {
			pi, ok := ctrl.ctrl.Image().Partition(model.TopicPartition{Topic: "jbod", Partition: p})
			if !ok || pi.Directory(1) == "" || len(pi.ISR) != 3 {
				return false
			}
		}
		return true
	})
	var inFail, inOK []int32
	for p := range int32(parts) {
		d, _ := b1.logs.DirOf(model.TopicPartition{Topic: "jbod", Partition: p})
		if d == failDir {
			inFail = append(inFail, p)
		} else {
			inOK = append(inOK, p)
		}
	}
	if len(inFail) != parts/2 {
		t.Fatalf("node 1 placed %v in %s, want half of the partitions", inFail, failDir)
	}

	// Producers: acks=all, idempotent, to every partition, numbered.
	prod, err := kgo.NewClient(kgo.SeedBrokers(c.bootstrap()...), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.DefaultProduceTopic("jbod"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(time.Millisecond), kgo.MetadataMinAge(100*time.Millisecond),
		kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond }))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	var amu sync.Mutex
	acked := make([]int, parts)
	var produceErr error
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for p := range int32(parts) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if err := prod.ProduceSync(ctx, &kgo.Record{Partition: p, Value: fmt.Appendf(nil, "%d", i)}).FirstErr(); err != nil {
					amu.Lock()
					produceErr = fmt.Errorf("partition %d record %d: %w", p, i, err)
					amu.Unlock()
					return
				}
				amu.Lock()
				acked[p] = i + 1
				amu.Unlock()
				time.Sleep(2 * time.Millisecond)
			}
		}()
	}
	ackedOf := func(p int32) int {
		amu.Lock()
		defer amu.Unlock()
		if produceErr != nil {
			t.Fatal(produceErr)
		}
		return acked[p]
	}
	waitAcks := func(what string, ps []int32, n int) {
		t.Helper()
		want := map[int32]int{}
		for _, p := range ps {
			want[p] = ackedOf(p) + n
		}
		for _, p := range ps {
			for ackedOf(p) < want[p] {
				if ctx.Err() != nil {
					t.Fatalf("%s: partition %d stalled at %d acknowledged records", what, p, ackedOf(p))
				}
				time.Sleep(5 * time.Millisecond)
			}
		}
	}
	waitAcks("before the failure", append(slices.Clone(inFail), inOK...), 20)

	mu.Lock()
	failing = failDir
	mu.Unlock()
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
	close(stop)
	wg.Wait()

	// Nothing acknowledged is lost.
	offsets := map[int32]kgo.Offset{}
	for p := range int32(parts) {
		offsets[p] = kgo.NewOffset().AtStart()
	}
	cons, err := kgo.NewClient(kgo.SeedBrokers(c.bootstrap()...), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"jbod": offsets}))
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	next := make([]int, parts)
	for {
		done := true
		for p := range parts {
			done = done && next[p] >= acked[p]
		}
		if done {
			break
		}
		fs := cons.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %v of %v acknowledged records", next, acked)
		}
		fs.EachRecord(func(r *kgo.Record) {
			var i int
			fmt.Sscanf(string(r.Value), "%d", &i)
			if i != next[r.Partition] {
				t.Fatalf("partition %d offset %d holds record %d, want %d", r.Partition, r.Offset, i, next[r.Partition])
			}
			next[r.Partition]++
		})
	}

	// The disk is repaired and node 1 restarted: its replicas there are
	// online again, catch up, and rejoin the ISRs.
	c.stop(n1)
	mu.Lock()
	failing = ""
	mu.Unlock()
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

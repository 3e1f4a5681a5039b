package cluster

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/devcluster"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestControllerFailover kills the active controller of three: another
// takes over and topic creation works again within seconds (the time is
// logged). Then two of the three are killed: metadata writes stop, while
// the surviving broker keeps serving the partitions it leads, as in Kafka:
// their committed records are read, and acks=1 produces are acknowledged
// (they become readable once the ISR can shrink, which needs the quorum).
// When one of the two returns, topic creation works again and the
// records produced during the outage are read.
func TestControllerFailover(t *testing.T) {
	c := startCluster(t, 3, nil)
	createTopic(t, c, "kept", 3, 3, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	first := activeController(ctx, c)
	if first < 0 {
		t.Fatal("no active controller")
	}
	t0 := time.Now()
	if err := c.Node(first).Kill(); err != nil {
		t.Fatal(err)
	}
	took := createUntil(t, c, "after-controller-kill", t0, 60*time.Second)
	t.Logf("killed the active controller (node %d): a topic was created %v later", first, took.Round(time.Millisecond))
	if err := c.Node(first).Start(); err != nil {
		t.Fatal(err)
	}
	waitReady(t, c)
	if err := waitFullISR(ctx, c, "kept", 3); err != nil {
		t.Fatal(err)
	}

	for p := range int32(3) {
		produceTo(t, c.Addrs(), "kept", p, fmt.Sprintf("before-%d", p), kgo.AllISRAcks())
	}

	// Two of three down: no quorum. The survivor leads kept-0.
	survivor := leaderOf(ctx, c, "kept", 0)
	var down []int32
	for _, n := range c.Nodes() {
		if n.ID != survivor {
			down = append(down, n.ID)
		}
	}
	active := activeController(ctx, c)
	for _, id := range down {
		if err := c.Node(id).Kill(); err != nil {
			t.Fatal(err)
		}
	}
	other := down[0]
	t.Logf("killed nodes %s (the active controller was %d); node %d survives", nodeList(down), active, survivor)
	adm := survivorAdmin(t, c.Node(survivor))
	wctx, wcancel := context.WithTimeout(ctx, 5*time.Second)
	resp, err := adm.CreateTopic(wctx, 1, 1, nil, "without-quorum")
	wcancel()
	if err == nil && resp.Err == nil {
		t.Fatal("a topic was created with one controller of three")
	}
	t.Logf("topic creation without a quorum: %v", errors.Join(err, resp.Err))
	served := serveLed(t, ctx, c, survivor, "kept")
	t.Logf("node %d served fetches and acks=1 produces on the partitions it leads: %v", survivor, served)

	t1 := time.Now()
	if err := c.Node(other).Start(); err != nil {
		t.Fatal(err)
	}
	took = createUntil(t, c, "quorum-back", t1, 60*time.Second)
	t.Logf("one node back: a topic was created %v after its start", took.Round(time.Millisecond))
	if err := c.Node(down[1]).Start(); err != nil {
		t.Fatal(err)
	}
	waitReady(t, c)
	for _, p := range served {
		if !readBack(ctx, c.Addrs(), "kept", p, fmt.Sprintf("during-%d", p)) {
			t.Errorf("kept-%d: the record acknowledged without a quorum was never read", p)
		}
	}
}

// produceTo produces one record to a partition and fails the test on an
// error.
func produceTo(t *testing.T, addrs []string, topic string, p int32, value string, acks kgo.Acks) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.RequiredAcks(acks), kgo.DisableIdempotentWrite(),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DefaultProduceTopic(topic))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, &kgo.Record{Partition: p, Value: []byte(value)}).FirstErr(); err != nil {
		t.Fatalf("produce %s to %s-%d: %v", value, topic, p, err)
	}
}

// readBack reads a partition from its start until it finds value, for up
// to 20 seconds.
func readBack(ctx context.Context, addrs []string, topic string, p int32, value string) bool {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {p: kgo.NewOffset().AtStart()}}))
	if err != nil {
		return false
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	found := false
	for !found && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) { found = found || string(r.Value) == value })
	}
	return found
}

// createUntil creates a topic through the running nodes, trying again
// until it succeeds, and returns how long after since that was.
func createUntil(t *testing.T, c *devcluster.Cluster, topic string, since time.Time, limit time.Duration) time.Duration {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(runningAddrs(c)...), kgo.RetryTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	var last error
	for time.Since(since) < limit {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		resp, err := adm.CreateTopic(ctx, 1, -1, nil, topic)
		cancel()
		if err == nil && resp.Err == nil {
			return time.Since(since)
		}
		last = errors.Join(err, resp.Err)
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no topic created within %v: %v", limit, last)
	return 0
}

// survivorAdmin is an admin client of one node only.
func survivorAdmin(t *testing.T, n *devcluster.Node) *kadm.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(n.Addr()), kgo.RetryTimeout(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return kadm.NewClient(cl)
}

// serveLed reads the committed record of each partition of topic the
// node leads, and produces one more with acks=1, through that node alone;
// it lists them, and fails when the node leads none or serves one not.
func serveLed(t *testing.T, ctx context.Context, c *devcluster.Cluster, node int32, topic string) []int32 {
	t.Helper()
	addr := []string{c.Node(node).Addr()}
	ps, err := partitions(ctx, addr[0], topic)
	if err != nil {
		t.Fatal(err)
	}
	var led []int32
	for _, p := range ps {
		if p.Leader != node {
			continue
		}
		led = append(led, p.Partition)
		if !readBack(ctx, addr, topic, p.Partition, fmt.Sprintf("before-%d", p.Partition)) {
			t.Fatalf("node %d, leading %s-%d without a quorum, did not serve its committed record", node, topic, p.Partition)
		}
		produceTo(t, addr, topic, p.Partition, fmt.Sprintf("during-%d", p.Partition), kgo.LeaderAck())
	}
	if len(led) == 0 {
		t.Fatalf("node %d leads no partition of %s", node, topic)
	}
	return led
}

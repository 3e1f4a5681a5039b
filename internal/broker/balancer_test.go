package broker

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/controller"
	"github.com/samsa-io/samsa/internal/metadata"
	"github.com/samsa-io/samsa/internal/model"
)

// createAssigned creates a topic with the given replica lists.
func (c *testCluster) createAssigned(topic string, assign [][]int32, configs map[string]string) {
	c.t.Helper()
	_, ctx := c.admin()
	req := kmsg.NewPtrCreateTopicsRequest()
	ct := kmsg.NewCreateTopicsRequestTopic()
	ct.Topic, ct.NumPartitions, ct.ReplicationFactor = topic, -1, -1
	for p, rs := range assign {
		a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
		a.Partition, a.Replicas = int32(p), rs
		ct.ReplicaAssignment = append(ct.ReplicaAssignment, a)
	}
	for k, v := range configs {
		cc := kmsg.NewCreateTopicsRequestTopicConfig()
		cc.Name, cc.Value = k, kmsg.StringPtr(v)
		ct.Configs = append(ct.Configs, cc)
	}
	req.Topics = append(req.Topics, ct)
	resp, err := req.RequestWith(ctx, c.liveClient())
	if err != nil || resp.Topics[0].ErrorCode != 0 {
		c.t.Fatalf("create %s: %v %+v", topic, err, resp)
	}
}

// setBalancer sets cluster-default configs, as `kafka-configs
// --entity-default --alter` does.
func (c *testCluster) setBalancer(kv ...string) {
	c.t.Helper()
	c.alterBroker(nil, kv...)
}

// alterBroker sets configs of one broker (nil: the cluster default).
func (c *testCluster) alterBroker(broker *int32, kv ...string) {
	c.t.Helper()
	adm, ctx := c.admin()
	var cfgs []kadm.AlterConfig
	for i := 0; i < len(kv); i += 2 {
		cfgs = append(cfgs, kadm.AlterConfig{Op: kadm.SetConfig, Name: kv[i], Value: kmsg.StringPtr(kv[i+1])})
	}
	var brokers []int32
	if broker != nil {
		brokers = []int32{*broker}
	}
	rs, err := adm.AlterBrokerConfigs(ctx, cfgs, brokers...)
	if err != nil {
		c.t.Fatalf("alter broker configs %v: %v", kv, err)
	}
	for _, r := range rs {
		if r.Err != nil {
			c.t.Fatalf("alter broker configs %v: %v %s", kv, r.Err, r.ErrMessage)
		}
	}
}

// image is the metadata of a running node.
func (c *testCluster) image() *metadata.Image {
	for _, n := range c.nodes {
		if b := n.get(); b != nil {
			return b.ctrl.Image()
		}
	}
	c.t.Fatal("no node runs")
	return nil
}

func countReplicas(img *metadata.Image, topic string) (map[model.NodeID]int, int) {
	counts, moving := map[model.NodeID]int{}, 0
	t, ok := img.Topic(topic)
	if !ok {
		return counts, 0
	}
	for _, p := range t.Partitions {
		for _, id := range p.Replicas {
			counts[id]++
		}
		if p.Reassigning() {
			moving++
		}
	}
	return counts, moving
}

// waitImage waits until cond holds on a running node's image.
func (c *testCluster) waitBalanced(what string, timeout time.Duration, cond func(*metadata.Image) bool) *metadata.Image {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		img := c.image()
		if cond(img) {
			return img
		}
		if time.Now().After(deadline) {
			counts, moving := countReplicas(img, "grow")
			c.t.Fatalf("%s: not within %v (replicas of grow %v, %d moving; balancer %+v)", what, timeout, counts, moving,
				c.activeController().get().ctrl.BalancerStatus())
		}
		select {
		case <-c.activeController().get().ctrl.Changed():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// loadProducer writes acks=all to topic until stopped and returns what was
// acknowledged.
type loadProducer struct {
	stop  context.CancelFunc
	wg    sync.WaitGroup
	mu    sync.Mutex
	acked map[string]bool
}

func (c *testCluster) startLoad(topic string) *loadProducer {
	lp := &loadProducer{acked: map[string]bool{}}
	ctx, stop := context.WithCancel(context.Background())
	lp.stop = stop
	lp.wg.Add(1)
	go func() {
		defer lp.wg.Done()
		cl, err := kgo.NewClient(kgo.SeedBrokers(c.bootstrap()...), kgo.RequiredAcks(kgo.AllISRAcks()),
			kgo.RecordPartitioner(kgo.RoundRobinPartitioner()), kgo.MetadataMinAge(100*time.Millisecond))
		if err != nil {
			c.t.Error(err)
			return
		}
		defer cl.Close()
		for i := 0; ctx.Err() == nil; i++ {
			v := fmt.Sprintf("load-%d", i)
			cl.Produce(ctx, &kgo.Record{Topic: topic, Value: []byte(v)}, func(_ *kgo.Record, err error) {
				if err == nil {
					lp.mu.Lock()
					lp.acked[v] = true
					lp.mu.Unlock()
				}
			})
			time.Sleep(time.Millisecond)
		}
		cl.Flush(context.Background())
	}()
	return lp
}

// finish stops the producer and checks every acknowledged record is read
// back.
func (lp *loadProducer) finish(c *testCluster, topic string) {
	c.t.Helper()
	lp.stop()
	lp.wg.Wait()
	c.waitHighWatermarks(topic)
	lp.mu.Lock()
	defer lp.mu.Unlock()
	if len(lp.acked) == 0 {
		c.t.Fatal("nothing acknowledged while the balancer moved replicas")
	}
	got := c.consumeAll(topic)
	var lost []string
	for v := range lp.acked {
		if !got[v] {
			lost = append(lost, v)
		}
	}
	if len(lost) > 0 {
		c.t.Fatalf("%d of %d acknowledged records lost, e.g. %v", len(lost), len(lp.acked), lost[:min(5, len(lost))])
	}
	c.t.Logf("%d acknowledged records, all read back", len(lp.acked))
}

// waitHighWatermarks waits until the replicas hosting each partition of
// topic agree on its high watermark: a replica just elected leader learns
// the high watermark from its followers' next fetches, and a consumer
// reads only below it.
func (c *testCluster) waitHighWatermarks(topic string) {
	c.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var differ []string
		img := c.image()
		top, _ := img.Topic(topic)
		for _, p := range top.Partitions {
			hws := map[int64]bool{}
			line := fmt.Sprintf("%s-%d:", topic, p.Partition)
			for _, id := range p.Replicas {
				b := c.node(int32(id)).get()
				if b == nil {
					continue
				}
				ts, ok := b.topics.byTopicName(topic)
				if !ok {
					hws[-1] = true
					continue
				}
				rp, code := ts.partition(p.Partition)
				if code != 0 || rp == nil {
					hws[-1] = true
					continue
				}
				hws[rp.HighWatermark()] = true
				line += fmt.Sprintf(" node %d at %d", id, rp.HighWatermark())
			}
			if len(hws) != 1 {
				differ = append(differ, line)
			}
		}
		if len(differ) == 0 {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("high watermarks differ: %v", differ)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// balancerHTTP reads GET /v1/balancer of a node.
func balancerHTTP(t *testing.T, b *Broker) controller.BalancerStatus {
	t.Helper()
	resp, err := http.Get("http://" + b.HTTPAddr() + "/v1/balancer")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st controller.BalancerStatus
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /v1/balancer: %s", resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	return st
}

// growAssignment places 8 partitions of RF 2 over brokers 1-3 of racks
// a, a, b, b: one replica in each rack, all of rack b's on broker 3, so
// broker 4 (rack b) is the broker just added.
var growAssignment = [][]int32{{1, 3}, {3, 2}, {2, 3}, {3, 1}, {1, 3}, {3, 2}, {2, 3}, {3, 1}}

// TestClusterBalancerFillsAnAddedBroker: four brokers in two racks, the
// fourth empty. With the balancer off nothing moves; turned on with one
// config, it moves replicas onto the new broker (within its rack, so every
// partition keeps a replica in each) until the counts are within the
// spread, while an acks=all producer writes; nothing acknowledged is lost.
func TestClusterBalancerFillsAnAddedBroker(t *testing.T) {
	c := newRackCluster(t, map[string]string{"replica.fetch.backoff.ms": "50"}, "a", "a", "b", "b")
	c.createAssigned("grow", growAssignment, nil)
	c.produceN("grow", 400, "before")
	load := c.startLoad("grow")

	// Off (the default): a short interval, and still nothing moves.
	c.setBalancer("samsa.balancer.interval.ms", "200", "samsa.balancer.replica.spread", "1")
	time.Sleep(time.Second) // five intervals: nothing may happen
	if counts, moving := countReplicas(c.image(), "grow"); counts[4] != 0 || moving != 0 {
		t.Fatalf("the balancer is off, yet broker 4 has %d replicas and %d partitions move", counts[4], moving)
	}

	c.setBalancer("samsa.balancer.enable", "true")
	img := c.waitBalanced("broker 4 filled", 60*time.Second, func(img *metadata.Image) bool {
		counts, moving := countReplicas(img, "grow")
		return moving == 0 && counts[3]-counts[4] <= 1 && c.activeController().get().ctrl.BalancerStatus().State == controller.BalancerBalanced
	})
	time.Sleep(300 * time.Millisecond) // writes to the new replicas too
	load.finish(c, "grow")

	counts, _ := countReplicas(img, "grow")
	if counts[4] < 3 {
		t.Errorf("broker 4 has %d replicas: %v", counts[4], counts)
	}
	racks := map[model.NodeID]string{1: "a", 2: "a", 3: "b", 4: "b"}
	top, _ := img.Topic("grow")
	for _, p := range top.Partitions {
		if len(p.Replicas) != 2 || racks[p.Replicas[0]] == racks[p.Replicas[1]] {
			t.Errorf("grow-%d replicas %v: not one per rack", p.Partition, p.Replicas)
		}
	}
	st := balancerHTTP(t, c.activeController().get())
	if !st.Active || !st.Enabled || st.MovesStarted == 0 || st.MovesCompleted != st.MovesStarted || len(st.Brokers) != 4 {
		t.Errorf("GET /v1/balancer: %+v", st)
	}
	if st.SizesNote != "" {
		t.Errorf("replica sizes unknown: %s", st.SizesNote)
	}
	// The other nodes stand by and name the active controller.
	for _, n := range c.nodes {
		if b := n.get(); b != nil && !b.ctrl.Active() {
			if other := balancerHTTP(t, b); other.Active || other.State != controller.BalancerStandby || int32(other.ControllerID) != c.activeController().id {
				t.Errorf("node %d: %+v", n.id, other)
			}
		}
	}
}

// TestClusterBalancerDrainsABroker: samsa.broker.draining=true on broker 4
// (IncrementalAlterConfigs on the broker) empties it while a producer
// writes.
func TestClusterBalancerDrainsABroker(t *testing.T) {
	c := newTestCluster(t, 4, map[string]string{"replica.fetch.backoff.ms": "50"})
	c.createAssigned("grow", [][]int32{{1, 4}, {4, 2}, {3, 4}, {4, 1}, {2, 3}, {4, 3}}, nil)
	c.produceN("grow", 400, "before")
	load := c.startLoad("grow")
	c.setBalancer("samsa.balancer.interval.ms", "200", "samsa.balancer.enable", "true")
	four := int32(4)
	c.alterBroker(&four, "samsa.broker.draining", "true")
	c.waitBalanced("broker 4 drained", 60*time.Second, func(img *metadata.Image) bool {
		counts, moving := countReplicas(img, "grow")
		return moving == 0 && counts[4] == 0
	})
	time.Sleep(300 * time.Millisecond)
	load.finish(c, "grow")
}

// TestClusterBalancerEvacuatesADownBroker: a broker stopped for longer
// than samsa.balancer.broker.down.timeout.ms loses its replicas to the
// others.
func TestClusterBalancerEvacuatesADownBroker(t *testing.T) {
	c := newTestCluster(t, 4, map[string]string{"replica.fetch.backoff.ms": "50"})
	c.createAssigned("grow", [][]int32{{1, 4}, {4, 2}, {3, 4}, {4, 1}, {2, 3}, {4, 3}}, nil)
	c.produceN("grow", 400, "before")
	c.setBalancer("samsa.balancer.interval.ms", "200", "samsa.balancer.broker.down.timeout.ms", "2000", "samsa.balancer.enable", "true")
	// Taken before the stop: the broker counts as down from its controlled
	// shutdown's start, before stop returns.
	stopped := time.Now()
	c.stop(c.node(4))
	c.waitBalanced("broker 4 evacuated", 60*time.Second, func(img *metadata.Image) bool {
		counts, moving := countReplicas(img, "grow")
		return moving == 0 && counts[4] == 0
	})
	if d := time.Since(stopped); d < 2*time.Second {
		t.Errorf("evacuated %v after the stop, before the 2 s timeout", d)
	}
	c.waitHighWatermarks("grow")
	got := c.consumeAll("grow")
	for i := range 400 {
		if !got[fmt.Sprintf("before-%d", i)] {
			t.Fatalf("before-%d lost", i)
		}
	}
}

// TestClusterBalancerSurvivesControllerFailover kills the active
// controller as soon as the balancer has started moves; the next active
// controller adopts them (they are reassignments in the metadata), never
// runs more than max.concurrent.moves at once nor moves a partition
// twice, and the moves finish once the killed node is back.
func TestClusterBalancerSurvivesControllerFailover(t *testing.T) {
	c := newRackCluster(t, map[string]string{"replica.fetch.backoff.ms": "50"}, "a", "a", "b", "b")
	c.createAssigned("grow", growAssignment, nil)
	c.produceN("grow", 2000, "before")

	// Watch every image some node applies: never more than 2 moving, and
	// every replica list of RF 2 apart from moves.
	var worst atomic.Int32
	var bad atomic.Value
	wctx, stopWatch := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	watch := func(b *Broker) {
		defer wg.Done()
		for wctx.Err() == nil {
			ch := b.ctrl.Changed()
			img := b.ctrl.Image()
			if top, ok := img.Topic("grow"); ok {
				moving := int32(0)
				for _, p := range top.Partitions {
					if p.Reassigning() {
						moving++
						if len(p.AddingReplicas) != 1 || len(p.RemovingReplicas) != 1 {
							bad.Store(fmt.Sprintf("grow-%d moves %v -> adding %v removing %v", p.Partition, p.Replicas, p.AddingReplicas, p.RemovingReplicas))
						}
					} else if len(p.Replicas) != 2 {
						bad.Store(fmt.Sprintf("grow-%d has replicas %v", p.Partition, p.Replicas))
					}
				}
				for w := worst.Load(); moving > w && !worst.CompareAndSwap(w, moving); w = worst.Load() {
				}
			}
			select {
			case <-ch:
			case <-wctx.Done():
			}
		}
	}
	for _, n := range c.nodes {
		wg.Add(1)
		go watch(n.get())
	}
	defer func() { stopWatch(); wg.Wait() }()

	active := c.activeController()
	c.setBalancer("samsa.balancer.interval.ms", "200", "samsa.balancer.max.concurrent.moves", "2",
		"samsa.balancer.replica.spread", "1", "samsa.balancer.enable", "true")
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, moving := countReplicas(active.get().ctrl.Image(), "grow"); moving > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the balancer started no move")
		}
		time.Sleep(time.Millisecond)
	}
	_, movingAtKill := countReplicas(active.get().ctrl.Image(), "grow")
	c.kill(active)
	t.Logf("killed the active controller, node %d, with %d moves in progress", active.id, movingAtKill)
	if next := c.activeController(); next == active {
		t.Fatal("no new active controller")
	}
	c.start(active)
	img := c.waitBalanced("broker 4 filled after the failover", 90*time.Second, func(img *metadata.Image) bool {
		counts, moving := countReplicas(img, "grow")
		return moving == 0 && counts[3]-counts[4] <= 1
	})
	stopWatch()
	wg.Wait()
	if w := worst.Load(); w > 2 {
		t.Errorf("%d partitions moved at once, max.concurrent.moves is 2", w)
	}
	if b := bad.Load(); b != nil {
		t.Errorf("a move doubled: %v", b)
	}
	top, _ := img.Topic("grow")
	for _, p := range top.Partitions {
		if sorted := slices.Sorted(slices.Values(p.Replicas)); len(slices.Compact(sorted)) != 2 {
			t.Errorf("grow-%d replicas %v", p.Partition, p.Replicas)
		}
	}
	c.waitHighWatermarks("grow")
	got := c.consumeAll("grow")
	var lost []string
	for i := range 2000 {
		if !got[fmt.Sprintf("before-%d", i)] {
			lost = append(lost, fmt.Sprintf("before-%d", i))
		}
	}
	if len(lost) > 0 {
		for _, p := range top.Partitions {
			line := fmt.Sprintf("grow-%d replicas %v isr %v leader %d epoch %d:", p.Partition, p.Replicas, p.ISR, p.Leader, p.LeaderEpoch)
			for _, n := range c.nodes {
				if b := n.get(); b != nil {
					if ts, ok := b.topics.byTopicName("grow"); ok {
						if rp, code := ts.partition(p.Partition); code == 0 && rp != nil {
							line += fmt.Sprintf(" node%d hw=%d", n.id, rp.HighWatermark())
						}
					}
				}
			}
			t.Log(line)
		}
		t.Fatalf("%d of 2000 records written before the moves lost, e.g. %v", len(lost), lost[:min(5, len(lost))])
	}
}

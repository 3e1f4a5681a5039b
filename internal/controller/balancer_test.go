package controller

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/config"
	"github.com/samsa-io/samsa/internal/metadata"
	"github.com/samsa-io/samsa/internal/model"
)

// balancerFixture is a controller with brokers 1-4 registered and topic
// "t" of 6 partitions of RF 2 placed over brokers 1-3 only: broker 4 is
// the broker just added.
func balancerFixture(t *testing.T) *Controller {
	t.Helper()
	c := open(t, testConfig(t.TempDir()))
	registerBrokers(t, c, 2, 3, 4)
	assign := map[int32][]int32{0: {1, 2}, 1: {2, 3}, 2: {3, 1}, 3: {1, 3}, 4: {2, 1}, 5: {3, 2}}
	if res := createOne(t, c, CreateTopic{Name: "t", NumPartitions: -1, ReplicationFactor: -1, Assignments: assign}); res.ErrorCode != 0 {
		t.Fatalf("create: %s", res.ErrorMessage)
	}
	return c
}

// setCluster sets cluster-default dynamic configs, as kafka-configs
// --entity-default does.
func setCluster(t *testing.T, c *Controller, kv ...string) {
	t.Helper()
	setBroker(t, c, "", kv...)
}

func setBroker(t *testing.T, c *Controller, resource string, kv ...string) {
	t.Helper()
	var ops []config.AlterOp
	for i := 0; i < len(kv); i += 2 {
		ops = append(ops, config.AlterOp{Name: kv[i], Value: sp(kv[i+1]), Op: config.OpSet})
	}
	res := c.IncrementalAlterConfigs(ctx(t), []IncrementalAlterConfigsResource{{Type: metadata.ResourceBroker, Name: resource, Ops: ops}}, false)
	if res[0].ErrorCode != 0 {
		t.Fatalf("alter configs %v: %s", kv, res[0].ErrorMessage)
	}
}

// catchUp plays the partition leaders: every reassignment's new replicas
// join the ISR (what the leaders' AlterPartition does once they have
// fetched), which completes the moves.
func catchUp(t *testing.T, c *Controller) {
	t.Helper()
	img := c.Image()
	for _, tp := range img.Topics() {
		for _, p := range tp.Partitions {
			if !p.Reassigning() {
				continue
			}
			isr := slices.DeleteFunc(slices.Clone(p.Replicas), func(id model.NodeID) bool { return !c.usable(img, id) })
			b, _ := img.Broker(p.Leader)
			res, err := c.AlterPartition(ctx(t), p.Leader, b.Epoch, []ISRChange{{TopicID: tp.ID, Partition: p.Partition,
				LeaderEpoch: p.LeaderEpoch, PartitionEpoch: p.PartitionEpoch, ISR: isr}})
			if err != nil {
				t.Fatalf("AlterPartition: %v", err)
			}
			// A stale epoch (the balancer changed the partition meanwhile)
			// is caught up on the next call.
			_ = res
		}
	}
}

// replicaCounts are each broker's replicas in img.
func replicaCounts(img *metadata.Image) map[model.NodeID]int {
	n := map[model.NodeID]int{}
	for _, t := range img.Topics() {
		for _, p := range t.Partitions {
			for _, id := range p.Replicas {
				n[id]++
			}
		}
	}
	return n
}

func reassigningCount(img *metadata.Image) int {
	n := 0
	for _, t := range img.Topics() {
		for _, p := range t.Partitions {
			if p.Reassigning() {
				n++
			}
		}
	}
	return n
}

// runBalancer plays the brokers' side until the balancer has nothing in
// progress and nothing more to start, and checks at every step that no
// more than max partitions move at once.
func runBalancer(t *testing.T, c *Controller, max int, done func(*metadata.Image) bool) *metadata.Image {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		img := c.Image()
		if n := reassigningCount(img); n > max {
			t.Fatalf("%d partitions move at once, max.concurrent.moves is %d", n, max)
		}
		if done(img) {
			return img
		}
		if time.Now().After(deadline) {
			t.Fatalf("not done: replicas %v, status %+v", replicaCounts(img), c.BalancerStatus())
		}
		catchUp(t, c)
		select {
		case <-c.Changed():
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func settled(c *Controller) func(*metadata.Image) bool {
	return func(img *metadata.Image) bool {
		st := c.BalancerStatus()
		return reassigningCount(img) == 0 && (st.State == BalancerBalanced || st.State == BalancerBlocked) && st.MovesStarted > 0
	}
}

// The balancer, turned on with one config, moves replicas onto the new
// broker two at a time until the counts are within the spread, and moves
// leadership to the preferred replicas it chose.
func TestBalancerFillsANewBroker(t *testing.T) {
	c := balancerFixture(t)
	setCluster(t, c, "samsa.balancer.interval.ms", "100", "samsa.balancer.max.concurrent.moves", "2",
		"samsa.balancer.replica.spread", "1", "samsa.balancer.enable", "true")
	// Moves not caught up stay in progress: later rounds start no more.
	waitRound(t, c, "")
	for _, spread := range []string{"3", "2"} {
		last := c.BalancerStatus().LastPlan
		setCluster(t, c, "samsa.balancer.leader.spread", spread)
		waitRound(t, c, last)
		if n := reassigningCount(c.Image()); n != 2 {
			t.Fatalf("%d partitions moving, max.concurrent.moves is 2", n)
		}
	}
	img := runBalancer(t, c, 2, settled(c))
	counts := replicaCounts(img)
	if counts[4] < 2 || counts[4] > 4 {
		t.Fatalf("broker 4 has %d replicas of 12 over 4 brokers: %v", counts[4], counts)
	}
	st := c.BalancerStatus()
	if st.MovesCompleted != st.MovesStarted || st.State != BalancerBalanced || len(st.Notes) != 0 {
		t.Errorf("status %+v", st)
	}
	// Every partition is led by its preferred replica.
	for _, p := range imageTopic(t, img, "t").Partitions {
		if p.Leader != p.Replicas[0] {
			t.Errorf("t-%d led by %d, prefers %d", p.Partition, p.Leader, p.Replicas[0])
		}
	}
	if len(st.Brokers) != 4 {
		t.Errorf("status loads %+v", st.Brokers)
	}
}

// waitRound waits for a round planned after the one at last.
func waitRound(t *testing.T, c *Controller, last string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for c.BalancerStatus().LastPlan == last {
		if time.Now().After(deadline) {
			t.Fatal("no balancer round")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func imageTopic(t *testing.T, img *metadata.Image, name string) *metadata.TopicImage {
	t.Helper()
	tp, ok := img.Topic(name)
	if !ok {
		t.Fatalf("no topic %s", name)
	}
	return tp
}

// With the switch off (the default) a round moves nothing, and so does the
// loop.
func TestBalancerOffMovesNothing(t *testing.T) {
	c := balancerFixture(t)
	before := c.Image()
	s := readBalancerSettings(c.brokerValues(before))
	if err := c.balanceRound(ctx(t), s); err != nil {
		t.Fatal(err)
	}
	setCluster(t, c, "samsa.balancer.interval.ms", "100")
	setBroker(t, c, "3", "samsa.broker.draining", "true")
	time.Sleep(500 * time.Millisecond) // five intervals: nothing may happen
	if n := reassigningCount(c.Image()); n != 0 || replicaCounts(c.Image())[4] != 0 {
		t.Fatalf("the balancer is off, yet %d partitions move", n)
	}
	if st := c.BalancerStatus(); st.State != BalancerOff || st.MovesStarted != 0 {
		t.Errorf("status %+v", st)
	}
}

// Marking a broker draining empties it, and a move onto it in progress
// (started by hand) is cancelled rather than waited for.
func TestBalancerDrainsABroker(t *testing.T) {
	c := balancerFixture(t)
	if r := reassign(t, c, true, "t", 0, ids(4, 2)); r.ErrorCode != 0 {
		t.Fatalf("reassign: %s", r.ErrorMessage)
	}
	setBroker(t, c, "4", "samsa.broker.draining", "true")
	setCluster(t, c, "samsa.balancer.interval.ms", "100", "samsa.balancer.enable", "true")
	// The move is not caught up: it would wait for broker 4.
	deadline := time.Now().Add(10 * time.Second)
	for c.BalancerStatus().MovesCancelled == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the move onto the draining broker was not cancelled: %+v", c.BalancerStatus())
		}
		time.Sleep(10 * time.Millisecond)
	}
	img := runBalancer(t, c, 10, func(img *metadata.Image) bool {
		return reassigningCount(img) == 0 && replicaCounts(img)[4] == 0 && c.BalancerStatus().MovesCancelled > 0
	})
	// Back to its replicas before the move (perhaps reordered since, for
	// the leaders' balance).
	if p, _ := img.Partition(model.TopicPartition{Topic: "t", Partition: 0}); !slices.Equal(slices.Sorted(slices.Values(p.Replicas)), ids(1, 2)) {
		t.Errorf("t-0 %v: the cancelled move should have gone back to 1 and 2", p.Replicas)
	}
	st := c.BalancerStatus()
	if len(st.Moves) == 0 || st.Moves[0].Kind != "cancel" || !strings.Contains(st.Moves[0].Reason, "broker 4 is draining") {
		t.Errorf("decisions %+v", st.Moves)
	}
}

// A broker fenced longer than samsa.balancer.broker.down.timeout.ms, by
// the time the metadata records, is evacuated; one down for less keeps its
// replicas.
func TestBalancerEvacuatesABrokerDownPastTheTimeout(t *testing.T) {
	c := balancerFixture(t)
	b3, _ := c.Image().Broker(3)
	c.writeMu.Lock()
	err := c.proposeLocked(ctx(t), []metadata.Record{metadata.BrokerFence{NodeID: 3, Epoch: b3.Epoch, Fenced: true,
		FencedAtMs: time.Now().Add(-50 * time.Minute).UnixMilli()}})
	c.writeMu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	setCluster(t, c, "samsa.balancer.interval.ms", "100", "samsa.balancer.broker.down.timeout.ms", "3600000",
		"samsa.balancer.enable", "true")
	// Broker 4 fills up from 1 and 2; broker 3 keeps its replicas.
	img := runBalancer(t, c, 10, settled(c))
	if n := replicaCounts(img)[3]; n != 4 {
		t.Fatalf("down 50 minutes of 60, broker 3 has %d replicas of its 4", n)
	}
	setCluster(t, c, "samsa.balancer.broker.down.timeout.ms", "2400000") // 40 minutes
	img = runBalancer(t, c, 10, func(img *metadata.Image) bool { return reassigningCount(img) == 0 && replicaCounts(img)[3] == 0 })
	if counts := replicaCounts(img); counts[1]+counts[2]+counts[4] != 12 {
		t.Errorf("replicas %v", counts)
	}
}

// When the brokers enforce the replication throttle, the balancer sets it
// on the brokers and topics of its moves and takes it away at the end.
func TestBalancerThrottlesItsMoves(t *testing.T) {
	c := balancerFixture(t)
	setCluster(t, c, "samsa.balancer.interval.ms", "100", "samsa.balancer.max.concurrent.moves", "1",
		"samsa.balancer.throttle.bytes.per.second", "12345", "samsa.balancer.enable", "true")
	deadline := time.Now().Add(10 * time.Second)
	for reassigningCount(c.Image()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no move started")
		}
		time.Sleep(10 * time.Millisecond)
	}
	img := c.Image()
	var moving metadata.PartitionImage
	for _, p := range imageTopic(t, img, "t").Partitions {
		if p.Reassigning() {
			moving = p
		}
	}
	cfg := img.TopicConfig("t")
	if !strings.Contains(cfg[followerThrottledReplicas], ":4") || cfg[leaderThrottledReplicas] == "" {
		t.Errorf("topic throttle %v for move %v", cfg, moving)
	}
	for _, id := range moving.Replicas {
		if got := img.BrokerConfig(nodeResource(id))[leaderThrottledRate]; got != "12345" {
			t.Errorf("broker %d leader rate %q", id, got)
		}
	}
	img = runBalancer(t, c, 1, settled(c))
	// The last round ran after the last move ended.
	deadline = time.Now().Add(5 * time.Second)
	for len(img.TopicConfig("t")) != 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
		img = c.Image()
	}
	if cfg := img.TopicConfig("t"); len(cfg) != 0 {
		t.Errorf("throttle left on the topic: %v", cfg)
	}
	for id := model.NodeID(1); id <= 4; id++ {
		if cfg := img.BrokerConfig(nodeResource(id)); len(cfg) != 0 {
			t.Errorf("throttle left on broker %d: %v", id, cfg)
		}
	}
}

package broker

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/metadata"
	"github.com/samsa-io/samsa/internal/model"
)

// waitImage waits until cond holds on node n's image, and fails the test
// after timeout.
func (c *testCluster) waitImage(n *clusterNode, timeout time.Duration, what string, cond func(*metadata.Image) bool) {
	c.t.Helper()
	b := n.get()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	b.awaitImage(ctx, func() bool { return cond(b.ctrl.Image()) })
	if !cond(b.ctrl.Image()) {
		c.t.Fatalf("node %d: %s: not within %v", n.id, what, timeout)
	}
}

// displaced kills a broker that is not the active controller but is the
// preferred replica of some partitions of topic, waits until they are led
// elsewhere, restarts it and waits until it is back in their ISRs. It
// returns the broker and those partitions, which are now in sync with
// their preferred replica but not led by it.
func (c *testCluster) displaced(topic string, partitions int32) (*clusterNode, []int32) {
	c.t.Helper()
	active := c.activeController()
	img := active.get().ctrl.Image()
	var victim *clusterNode
	var prefer []int32
	for _, n := range c.nodes {
		if n == active {
			continue
		}
		prefer = prefer[:0]
		for p := range partitions {
			pi, _ := img.Partition(model.TopicPartition{Topic: topic, Partition: p})
			if int32(pi.Replicas[0]) == n.id {
				prefer = append(prefer, p)
			}
		}
		if len(prefer) > 0 {
			victim = n
			break
		}
	}
	if victim == nil {
		c.t.Fatal("only the active controller is a preferred replica")
	}
	c.kill(victim)
	c.waitImage(active, 20*time.Second, "leadership moved off the killed broker", func(img *metadata.Image) bool {
		return ledBy(img, topic, prefer, func(id model.NodeID) bool { return int32(id) != victim.id && id >= 0 })
	})
	return victim, prefer
}

// ledBy reports whether every one of partitions has a leader ok accepts.
func ledBy(img *metadata.Image, topic string, partitions []int32, ok func(model.NodeID) bool) bool {
	for _, p := range partitions {
		pi, found := img.Partition(model.TopicPartition{Topic: topic, Partition: p})
		if !found || !ok(pi.Leader) {
			return false
		}
	}
	return true
}

// rejoin restarts a displaced broker and waits until it is back in the ISR
// of partitions.
func (c *testCluster) rejoin(n *clusterNode, topic string, partitions []int32) {
	c.t.Helper()
	c.start(n)
	c.waitLive(3)
	c.waitImage(c.activeController(), 20*time.Second, "the restarted broker back in the ISR", func(img *metadata.Image) bool {
		for _, p := range partitions {
			pi, _ := img.Partition(model.TopicPartition{Topic: topic, Partition: p})
			if !slices.Contains(pi.ISR, model.NodeID(n.id)) {
				return false
			}
		}
		return true
	})
}

func electResult(t *testing.T, rs kadm.ElectLeadersResults, topic string, p int32) error {
	t.Helper()
	r, ok := rs[topic][p]
	if !ok {
		t.Fatalf("no result for %s-%d in %v", topic, p, rs)
	}
	return r.Err
}

// TestElectLeadersPreferred: with automatic rebalancing off, a broker that
// died and returned stays a follower of the partitions it prefers; while
// it is down ElectLeaders PREFERRED answers PREFERRED_LEADER_NOT_AVAILABLE,
// once it is back in the ISR the election moves leadership back to it, and
// then answers ELECTION_NOT_NEEDED, as UNCLEAN does for a led partition. A
// request to a broker that is not the active controller is forwarded and
// answered once that broker's image has the new leader.
func TestElectLeadersPreferred(t *testing.T) {
	c := newTestCluster(t, 3, map[string]string{"auto.leader.rebalance.enable": "false", "replica.fetch.backoff.ms": "50"})
	adm, ctx := c.admin()
	const topic = "elect"
	if resp, err := adm.CreateTopic(ctx, 6, 3, nil, topic); err != nil || resp.Err != nil {
		t.Fatalf("create: %v %v", err, resp.Err)
	}
	c.produceN(topic, 60, "before")
	victim, prefer := c.displaced(topic, 6)
	if len(prefer) < 2 {
		t.Fatalf("broker %d prefers %v; the test needs two partitions", victim.id, prefer)
	}

	rs, err := adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, kadm.TopicsSet{topic: {prefer[0]: {}, 99: {}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := electResult(t, rs, topic, prefer[0]); !errors.Is(err, kerr.PreferredLeaderNotAvailable) {
		t.Errorf("preferred replica down: %v, want PREFERRED_LEADER_NOT_AVAILABLE", err)
	}
	if err := electResult(t, rs, topic, 99); !errors.Is(err, kerr.UnknownTopicOrPartition) {
		t.Errorf("partition 99: %v, want UNKNOWN_TOPIC_OR_PARTITION", err)
	}

	c.rejoin(victim, topic, prefer)
	active := c.activeController()
	if !ledBy(active.get().ctrl.Image(), topic, prefer, func(id model.NodeID) bool { return int32(id) != victim.id }) {
		t.Fatal("leadership went back to the preferred replica without an election")
	}
	rs, err = adm.ElectLeaders(ctx, kadm.ElectPreferredReplica, kadm.TopicsSet{topic: {prefer[0]: {}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := electResult(t, rs, topic, prefer[0]); err != nil {
		t.Fatalf("preferred election: %v", err)
	}
	if !ledBy(active.get().ctrl.Image(), topic, prefer[:1], func(id model.NodeID) bool { return int32(id) == victim.id }) {
		t.Fatal("the answer came before the controller's image had the preferred leader")
	}

	// Again, and UNCLEAN on a led partition: nothing to do.
	for _, how := range []kadm.ElectLeadersHow{kadm.ElectPreferredReplica, kadm.ElectLiveReplica} {
		rs, err = adm.ElectLeaders(ctx, how, kadm.TopicsSet{topic: {prefer[0]: {}}})
		if err != nil {
			t.Fatal(err)
		}
		if err := electResult(t, rs, topic, prefer[0]); !errors.Is(err, kerr.ElectionNotNeeded) {
			t.Errorf("election %d of a partition its preferred replica leads: %v, want ELECTION_NOT_NEEDED", how, err)
		}
	}

	// Through a broker that is not the active controller, for every
	// partition (a null topic list): only the one that moved is answered.
	var other *clusterNode
	for _, n := range c.nodes {
		if n != active && n != victim {
			other = n
		}
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(other.get().Addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	req := kmsg.NewPtrElectLeadersRequest()
	req.Version, req.ElectionType, req.TimeoutMillis = 2, 0, 10000
	raw, err := cl.SeedBrokers()[0].Request(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	resp := raw.(*kmsg.ElectLeadersResponse)
	var moved []int32
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			if rt.Topic != topic || rp.ErrorCode != 0 {
				t.Errorf("all-partitions election answered %s-%d: %v", rt.Topic, rp.Partition, kerr.ErrorForCode(rp.ErrorCode))
			}
			moved = append(moved, rp.Partition)
		}
	}
	if resp.ErrorCode != 0 || !slices.Equal(moved, prefer[1:]) {
		t.Errorf("all-partitions election: %v, moved %v, want %v", kerr.ErrorForCode(resp.ErrorCode), moved, prefer[1:])
	}
	if !ledBy(other.get().ctrl.Image(), topic, prefer, func(id model.NodeID) bool { return int32(id) == victim.id }) {
		t.Error("the forwarding broker answered before its image had the new leaders")
	}

	// The moved partitions take acks=all writes at their new leader, and
	// every replica ends up with the same log.
	c.produceN(topic, 60, "after")
	c.waitReplicasEqual(topic, 6)
}

// TestElectLeadersBadType: an election type Kafka does not know is the
// request's INVALID_REQUEST, at the top level and for every partition.
func TestElectLeadersBadType(t *testing.T) {
	b := startBroker(t)
	r := dialRaw(t, b)
	req := kmsg.NewPtrElectLeadersRequest()
	req.Version, req.ElectionType = 2, 7
	req.Topics = []kmsg.ElectLeadersRequestTopic{{Topic: "any", Partitions: []int32{0, 1}}}
	resp := r.roundTrip(req, 1).(*kmsg.ElectLeadersResponse)
	if resp.ErrorCode != kerr.InvalidRequest.Code || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 2 ||
		resp.Topics[0].Partitions[1].ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("got %+v", resp)
	}
}

// TestAutoLeaderRebalance: with a one-second leader.imbalance check, a
// broker that returns gets the partitions it prefers back without a
// request, once it is in their ISRs.
func TestAutoLeaderRebalance(t *testing.T) {
	c := newTestCluster(t, 3, map[string]string{"leader.imbalance.check.interval.seconds": "1", "replica.fetch.backoff.ms": "50"})
	adm, ctx := c.admin()
	const topic = "rebalance"
	if resp, err := adm.CreateTopic(ctx, 6, 3, nil, topic); err != nil || resp.Err != nil {
		t.Fatalf("create: %v %v", err, resp.Err)
	}
	c.produceN(topic, 60, "before")
	victim, prefer := c.displaced(topic, 6)
	start := time.Now()
	c.start(victim)
	c.waitImage(c.activeController(), 30*time.Second, "leadership back on the preferred replica", func(img *metadata.Image) bool {
		return ledBy(img, topic, prefer, func(id model.NodeID) bool { return int32(id) == victim.id })
	})
	t.Logf("broker %d leads %v again %v after its restart began", victim.id, prefer, time.Since(start))
	c.produceN(topic, 60, "after")
}

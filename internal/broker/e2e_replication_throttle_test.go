package broker

import (
	"context"
	"crypto/rand"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/model"
	"github.com/samsa-io/samsa/internal/quota"
)

// fillTopic writes about n bytes of incompressible 1 KiB records to
// topic-0 with acks=all, in batches of at most 16 KiB, so that one batch
// is a small part of a throttled second.
func (c *testCluster) fillTopic(topic string, n int, opts ...kgo.Opt) {
	c.t.Helper()
	cl := c.liveClient(append([]kgo.Opt{kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.ProducerBatchMaxBytes(16 << 10), kgo.DefaultProduceTopic(topic)}, opts...)...)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for sent := 0; sent < n; {
		var recs []*kgo.Record
		for range 256 {
			v := make([]byte, 1024)
			rand.Read(v)
			recs = append(recs, &kgo.Record{Value: v})
			sent += len(v)
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			c.t.Fatalf("fill %s: %v", topic, err)
		}
	}
}

// replicaSize is the bytes of node's log of topic-0, 0 while it has none.
func (c *testCluster) replicaSize(node int32, topic string) int64 {
	ts, ok := c.node(node).get().topics.byTopicName(topic)
	if !ok {
		return 0
	}
	p, code := ts.partition(0)
	if code != 0 {
		return 0
	}
	return p.Size()
}

// awaitCopy samples node's log of topic-0 until it holds each size of
// marks (ascending), and returns when it first did. A copy's pace is a
// timing: sampling it every 10 ms is the measurement, not a wait.
func (c *testCluster) awaitCopy(node int32, topic string, marks ...int64) []time.Time {
	c.t.Helper()
	out := make([]time.Time, 0, len(marks))
	deadline := time.Now().Add(60 * time.Second)
	for len(out) < len(marks) {
		if size := c.replicaSize(node, topic); size >= marks[len(out)] {
			out = append(out, time.Now())
			continue
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("node %d's %s-0 holds %d bytes after a minute, want %d", node, topic, c.replicaSize(node, topic), marks[len(out)])
		}
		time.Sleep(10 * time.Millisecond)
	}
	return out
}

// alter sends one IncrementalAlterConfigs for a broker (or the cluster
// default, name "") or a topic.
func alter(t *testing.T, ctx context.Context, adm *kadm.Client, broker bool, name string, configs ...kadm.AlterConfig) {
	t.Helper()
	var rs kadm.AlterConfigsResponses
	var err error
	if broker {
		var ids []int32
		if name != "" {
			var id int32
			fmt.Sscan(name, &id)
			ids = []int32{id}
		}
		rs, err = adm.AlterBrokerConfigs(ctx, configs, ids...)
	} else {
		rs, err = adm.AlterTopicConfigs(ctx, configs, name)
	}
	if err == nil {
		err = rs[0].Err
	}
	if err != nil {
		t.Fatalf("alter %s: %v", name, err)
	}
}

func set(name, value string) kadm.AlterConfig {
	return kadm.AlterConfig{Op: kadm.SetConfig, Name: name, Value: &value}
}

func unset(name string) kadm.AlterConfig { return kadm.AlterConfig{Op: kadm.DeleteConfig, Name: name} }

// TestClusterReplicationThrottleHoldsAReassignment adds a replica to
// partitions of a few MiB: unthrottled; with the leader's throttle alone,
// then the follower's alone; then with both, as kafka-reassign-partitions.sh
// --throttle 524288 sets them (both rates on every broker of the move, the
// current replicas listed as leaders, the new one as follower). Throttled,
// the new replica copies at the throttle, and an acks=all producer on the
// partition keeps its pace meanwhile (its ISR is not throttled); removing
// the lists lets the rest of the copy go at full speed at once.
func TestClusterReplicationThrottleHoldsAReassignment(t *testing.T) {
	c := newTestCluster(t, 3, nil)
	adm, _ := c.admin()
	// The test's phases copy 12 MiB, 10 of it throttled: well past the
	// admin context's 30 s under the race detector on a busy machine.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const throttle = 512 << 10
	// prepare fills topic-0, on 1 and 2 and led by 1, with fill bytes, and
	// sets the topic's lists as kafka-reassign-partitions.sh sets them for
	// a throttled move that adds 3.
	prepare := func(topic string, fill int, throttled bool) {
		c.fillTopic(topic, fill)
		if throttled {
			alter(t, ctx, adm, false, topic, set("leader.replication.throttled.replicas", "0:1,0:2"), set("follower.replication.throttled.replicas", "0:3"))
			for _, n := range c.nodes {
				b := n.get()
				awaitThrottle(t, b, fmt.Sprintf("node %d's lists of %s", n.id, topic), func() bool {
					ts, _ := b.topics.byTopicName(topic)
					return ts != nil && ts.throttles.leader.Has(0) == (n.id != 3) && ts.throttles.follower.Has(0) == (n.id == 3)
				})
			}
		}
	}
	// reassign adds node 3 to topic-0, and returns the size of the log it
	// is to copy.
	reassign := func(topic string) (size int64) {
		size = c.replicaSize(1, topic)
		var req kadm.AlterPartitionAssignmentsReq
		req.Assign(topic, 0, []int32{1, 2, 3})
		if res, err := adm.AlterPartitionAssignments(ctx, req); err != nil || res.Error() != nil {
			t.Fatalf("reassign %s: %v %v", topic, err, res.Error())
		}
		return size
	}
	awaitMoved := func(topic string) {
		deadline := time.Now().Add(30 * time.Second)
		for len(c.reassigning(ctx, adm, topic, 1)) > 0 {
			if time.Now().After(deadline) {
				t.Fatalf("%s still reassigning", topic)
			}
			time.Sleep(20 * time.Millisecond)
		}
		if got := c.replicasOf(topic, 0); !slices.Equal(got, []model.NodeID{1, 2, 3}) {
			t.Fatalf("%s-0 replicas %v, want [1 2 3]", topic, got)
		}
	}
	// rates sets both rates on every broker ("" removes one).
	rates := func(leader, follower string) {
		for _, n := range c.nodes {
			var cs []kadm.AlterConfig
			for name, v := range map[string]string{"leader.replication.throttled.rate": leader, "follower.replication.throttled.rate": follower} {
				if v == "" {
					cs = append(cs, unset(name))
				} else {
					cs = append(cs, set(name, v))
				}
			}
			alter(t, ctx, adm, true, fmt.Sprint(n.id), cs...)
		}
		for _, n := range c.nodes {
			b := n.get()
			want := func(v string) int64 {
				if v == "" {
					return quota.Unlimited
				}
				var n int64
				fmt.Sscan(v, &n)
				return n
			}
			awaitThrottle(t, b, fmt.Sprintf("node %d's rates", n.id), func() bool {
				return b.replThrottle.leader.q.Limit() == want(leader) && b.replThrottle.follower.q.Limit() == want(follower)
			})
		}
	}
	// pace is the copy's bytes per second between two sizes of node 3's
	// log. The first second's worth of a throttle comes at once (the rate
	// is measured over one second at least), so from is past it.
	pace := func(topic string, from, to int64) float64 {
		marks := c.awaitCopy(3, topic, from, to)
		return float64(to-from) / marks[1].Sub(marks[0]).Seconds()
	}
	inBand := func(what string, got float64) {
		if got < 0.7*throttle || got > 1.3*throttle {
			t.Errorf("%s: copied at %.0f KiB/s, want %d KiB/s within 30%%", what, got/1024, throttle>>10)
		}
	}
	held := func(node int32, side string) float64 {
		return scrapeRegistry(t, c.node(node).get()).sum("samsa_replication_throttled_partitions_total", `side="`+side+`"`)
	}

	// Unthrottled, the copy is as fast as the nodes go.
	c.createAssigned("free", [][]int32{{1, 2}}, nil)
	prepare("free", 4<<20, false)
	size := reassign("free")
	start := time.Now()
	free := float64(size) / c.awaitCopy(3, "free", size)[0].Sub(start).Seconds()
	if free < 4*throttle {
		t.Errorf("unthrottled copy at %.0f KiB/s: not clearly faster than the throttle", free/1024)
	}
	awaitMoved("free")

	// Each side alone holds the copy to the throttle.
	rates(fmt.Sprint(throttle), "")
	c.createAssigned("lead", [][]int32{{1, 2}}, nil)
	prepare("lead", 2<<20, true)
	reassign("lead")
	leaderPace := pace("lead", 3<<18, 7<<18)
	inBand("the leader's throttle alone", leaderPace)
	if held(1, "leader") == 0 || held(3, "follower") != 0 {
		t.Errorf("the leader's throttle alone: the leader held back %v partitions, the follower %v", held(1, "leader"), held(3, "follower"))
	}
	awaitMoved("lead")
	rates("", fmt.Sprint(throttle))
	c.createAssigned("follow", [][]int32{{1, 2}}, nil)
	prepare("follow", 2<<20, true)
	reassign("follow")
	followerPace := pace("follow", 3<<18, 7<<18)
	inBand("the follower's throttle alone", followerPace)
	if held(3, "follower") == 0 {
		t.Error("the follower's throttle alone held back nothing")
	}
	awaitMoved("follow")

	// Both, as kafka-reassign-partitions.sh sets them, under an acks=all
	// producer that writes a small record every 20 ms throughout.
	rates(fmt.Sprint(throttle), fmt.Sprint(throttle))
	c.createAssigned("slow", [][]int32{{1, 2}}, nil)
	var mu sync.Mutex
	var acks []time.Time
	pctx, stop := context.WithCancel(context.Background())
	defer stop()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		cl := c.liveClient(kgo.RequiredAcks(kgo.AllISRAcks()), kgo.DefaultProduceTopic("slow"))
		for i := 0; pctx.Err() == nil; i++ {
			cl.Produce(pctx, &kgo.Record{Value: fmt.Appendf(nil, "during-%d", i)}, func(_ *kgo.Record, err error) {
				if err == nil {
					mu.Lock()
					acks = append(acks, time.Now())
					mu.Unlock()
				}
			})
			time.Sleep(20 * time.Millisecond)
		}
	}()
	prepare("slow", 4<<20, true)
	size = reassign("slow")
	start = time.Now()
	marks := c.awaitCopy(3, "slow", 3<<18, 11<<18)
	bothPace := float64(2<<20) / marks[1].Sub(marks[0]).Seconds()
	inBand("both throttles", bothPace)
	leader, _ := c.node(1).get().topics.byTopicName("slow")
	if isr := leader.partitions[0].ISR(); !slices.Equal(isr, []int32{1, 2}) {
		t.Errorf("ISR during the throttled copy %v, want [1 2]", isr)
	}

	// The lists removed, the rest (1.25 MiB, two and a half throttled
	// seconds) goes at once.
	removed := time.Now()
	alter(t, ctx, adm, false, "slow", unset("leader.replication.throttled.replicas"), unset("follower.replication.throttled.replicas"))
	end := c.awaitCopy(3, "slow", size)[0]
	if rest := end.Sub(removed); rest > 1250*time.Millisecond {
		t.Errorf("the last 1.25 MiB took %v once the throttle was removed, half the throttle's pace or less", rest)
	}
	awaitMoved("slow")
	stop()
	wg.Wait()

	// The producer kept its pace while the copy was throttled.
	mu.Lock()
	var during []time.Time
	for _, a := range acks {
		if !a.Before(start) && !a.After(marks[1]) {
			during = append(during, a)
		}
	}
	mu.Unlock()
	span := marks[1].Sub(start)
	gap := time.Duration(0)
	for i := 1; i < len(during); i++ {
		gap = max(gap, during[i].Sub(during[i-1]))
	}
	if len(during) < int(span/(20*time.Millisecond))/4 || gap > 2*time.Second {
		t.Errorf("acks=all during the %v throttled copy: %d acknowledged, longest gap %v", span.Round(time.Millisecond), len(during), gap)
	}

	// What each side did shows on /metrics.
	for _, m := range []struct {
		node int32
		side string
	}{{1, "leader"}, {3, "follower"}} {
		s := scrapeRegistry(t, c.node(m.node).get())
		label := `side="` + m.side + `"`
		if got := s.sum("samsa_replication_throttled_bytes_total", label); got < 6<<20 {
			t.Errorf("node %d: %s throttled bytes %v, want the throttled copies' 6.75 MiB", m.node, m.side, got)
		}
		if got := s.sum("samsa_replication_throttle_limit_bytes_per_second", label); got != throttle {
			t.Errorf("node %d: %s limit %v", m.node, m.side, got)
		}
		if !s.has("samsa_replication_throttle_byte_rate") {
			t.Errorf("node %d: no byte rate", m.node)
		}
	}
	t.Logf("copies: unthrottled %.1f MiB/s; throttled to %d KiB/s: the leader's %.0f KiB/s, the follower's %.0f, both %.0f; "+
		"%d acks=all records meanwhile, longest gap %v",
		free/(1<<20), throttle>>10, leaderPace/1024, followerPace/1024, bothPace/1024, len(during), gap.Round(time.Millisecond))
}

// TestClusterReplicationThrottleSparesTheISR throttles each side in turn
// to a byte a second on every replica of a partition whose replicas are
// all in sync: acks=all writes of a megabyte go through as fast as
// without it, the ISR stays whole, and nothing is held back, although the
// bytes count against the throttle.
func TestClusterReplicationThrottleSparesTheISR(t *testing.T) {
	c := newTestCluster(t, 2, nil)
	adm, ctx := c.admin()
	c.createAssigned("synced", [][]int32{{1, 2}}, nil)
	c.fillTopic("synced", 64<<10)
	for _, side := range []string{"leader", "follower"} {
		t.Run(side, func(t *testing.T) {
			rate, list := side+".replication.throttled.rate", side+".replication.throttled.replicas"
			for _, id := range []string{"1", "2"} {
				alter(t, ctx, adm, true, id, set(rate, "1"))
			}
			alter(t, ctx, adm, false, "synced", set(list, "*"))
			for _, n := range c.nodes {
				b := n.get()
				s := &b.replThrottle.leader
				if side == "follower" {
					s = &b.replThrottle.follower
				}
				awaitThrottle(t, b, "the throttle", func() bool {
					ts, _ := b.topics.byTopicName("synced")
					l := ts.throttles.leader
					if side == "follower" {
						l = ts.throttles.follower
					}
					return s.q.Limit() == 1 && l.Has(0)
				})
			}
			// Throttled, the follower would not have these in 10 s, and
			// the ISR would not shrink for 30 (replica.lag.time.max.ms).
			c.fillTopic("synced", 1<<20, kgo.RecordDeliveryTimeout(10*time.Second))
			leader, _ := c.node(1).get().topics.byTopicName("synced")
			if isr := leader.partitions[0].ISR(); !slices.Equal(isr, []int32{1, 2}) {
				t.Errorf("ISR %v, want [1 2]", isr)
			}
			for _, n := range c.nodes {
				b := n.get()
				s := &b.replThrottle.leader
				if side == "follower" {
					s = &b.replThrottle.follower
				}
				if held := s.held.Load(); held != 0 {
					t.Errorf("node %d held back %d partitions of an in-sync replica", n.id, held)
				}
				if n.id == 1 && side == "leader" || n.id == 2 && side == "follower" {
					// The follower counts a fetch's bytes after it appends them,
					// which may be after the acks: most of the megabyte, then.
					if got := s.bytes.Load(); got < 1<<19 {
						t.Errorf("node %d counted %d bytes against its %s throttle, want most of the megabyte", n.id, got, side)
					}
				}
			}
			for _, id := range []string{"1", "2"} {
				alter(t, ctx, adm, true, id, unset(rate))
			}
			alter(t, ctx, adm, false, "synced", unset(list))
		})
	}
}

package group

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"pgregory.net/rapid"
)

// simClient is a consumer-protocol client as the simulation drives it:
// it owns what it was last assigned, except that a slow client keeps
// reporting what it had until it is told to stop being slow.
type simClient struct {
	id       string
	topics   []string
	epoch    int32
	joined   bool
	owned    topicPartitions
	assigned topicPartitions
	slow     bool
}

// TestConsumerGroupSimulation drives a consumer group with random joins,
// leaves, heartbeats (some from members slow to revoke), topic changes,
// time passing and coordinator restarts, and checks after every step that
// no partition is owned by two members and that the group's indexes match
// its members. At the end every member heartbeats until the group settles:
// it must become Stable with every partition assigned.
func TestConsumerGroupSimulation(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		h := newHarness(t)
		defer h.close()
		h.cfg.OffsetsTopicNumPartitions = 1
		h.setTopics("t:6,u:3")
		h.c.Stop()
		h.start()
		assignor := rapid.SampledFrom([]string{"uniform", "range"}).Draw(rt, "assignor")
		clients := make([]*simClient, rapid.IntRange(1, 5).Draw(rt, "clients"))
		for i := range clients {
			topics := rapid.SampledFrom([][]string{{"t"}, {"u"}, {"t", "u"}}).Draw(rt, "topics")
			clients[i] = &simClient{id: fmt.Sprintf("m%d", i), topics: topics}
		}
		steps := rapid.IntRange(1, 60).Draw(rt, "steps")
		for range steps {
			c := rapid.SampledFrom(clients).Draw(rt, "client")
			switch rapid.IntRange(0, 9).Draw(rt, "action") {
			case 0:
				simHeartbeat(h, c, leaveEpoch, assignor)
			case 1:
				c.slow = !c.slow
			case 2:
				h.clock.Advance(time.Duration(rapid.IntRange(1, 50).Draw(rt, "seconds")) * time.Second)
				h.c.tick()
			case 3:
				h.setTopics(rapid.SampledFrom([]string{"t:6,u:3", "t:8,u:3", "t:6", "t:6,u:3,v:2"}).Draw(rt, "topicSet"))
			case 4:
				before := simSnapshot(h)
				h.c.Stop()
				h.start()
				if after := simSnapshot(h); after != before {
					rt.Fatalf("restart changed the group:\n%s\nnow\n%s", before, after)
				}
			default:
				simHeartbeat(h, c, c.epoch, assignor)
			}
			simCheck(rt, h)
		}
		// Everyone comes back, stops being slow, and heartbeats until
		// the group settles.
		h.setTopics("t:6,u:3")
		for _, c := range clients {
			c.slow = false
		}
		for round := range 12 {
			for _, c := range clients {
				simHeartbeat(h, c, c.epoch, assignor)
				simCheck(rt, h)
			}
			if round > 8 {
				break
			}
		}
		g, _ := h.c.lockGroup("g", false)
		if g == nil {
			rt.Fatalf("group gone")
		}
		defer g.mu.Unlock()
		cg := &g.consumer
		if st := cg.stateName(); st != "Stable" {
			rt.Fatalf("group %s after everyone heartbeat many times:\n%s", st, simSnapshotLocked(h, g))
		}
		subscribed := map[string]bool{}
		for _, c := range clients {
			for _, t := range c.topics {
				subscribed[t] = true
			}
		}
		want := 0
		for name := range subscribed {
			want += int(h.topics[name])
		}
		if got := len(cg.owners); got != want {
			rt.Fatalf("%d partitions owned, want %d:\n%s", got, want, simSnapshotLocked(h, g))
		}
	})
}

func simHeartbeat(h *harness, c *simClient, epoch int32, assignor string) {
	req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	req.Version, req.Group, req.MemberID, req.MemberEpoch = 1, "g", c.id, epoch
	if !c.joined && epoch != leaveEpoch {
		req.MemberEpoch = joinEpoch
	}
	switch {
	case req.MemberEpoch == joinEpoch:
		req.RebalanceTimeoutMillis, req.SubscribedTopicNames, req.ServerAssignor = 30000, c.topics, new(assignor)
		c.owned, c.assigned = topicPartitions{}, topicPartitions{}
	case epoch == leaveEpoch && !c.joined:
		return
	}
	owned := c.owned
	if !c.slow {
		owned = c.assigned
		c.owned = c.assigned
	}
	req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	for _, t := range owned.topics() {
		req.Topics = append(req.Topics, kmsg.ConsumerGroupHeartbeatRequestTopic{TopicID: t, Partitions: owned[t]})
	}
	resp := h.c.ConsumerGroupHeartbeat(context.Background(), req)
	switch {
	case epoch == leaveEpoch:
		c.joined, c.epoch, c.owned, c.assigned = false, 0, nil, nil
	case resp.ErrorCode == codeFencedMemberEpoch || resp.ErrorCode == codeUnknownMemberID:
		c.joined, c.epoch, c.owned, c.assigned = false, 0, nil, nil
	case resp.ErrorCode == 0:
		c.joined, c.epoch = true, resp.MemberEpoch
		if resp.Assignment != nil {
			m := make(map[[16]byte][]int32)
			for _, t := range resp.Assignment.Topics {
				m[t.TopicID] = append(m[t.TopicID], t.Partitions...)
			}
			c.assigned = newTopicPartitions(m)
			if !c.slow {
				c.owned = c.assigned
			} else {
				// A slow client takes new partitions at once but gives
				// up revoked ones only later.
				c.owned = c.owned.union(c.assigned)
			}
		}
	}
}

// simCheck checks the group's invariants.
func simCheck(t *rapid.T, h *harness) {
	g, _ := h.c.lockGroup("g", false)
	if g == nil {
		return
	}
	defer g.mu.Unlock()
	if g.kind != protocolConsumer {
		return
	}
	cg := &g.consumer
	owners := map[tpID]string{}
	for _, m := range cg.sortedMembers() {
		m.owns(func(tp tpID) {
			if other, ok := owners[tp]; ok {
				t.Fatalf("%v owned by %s and %s:\n%s", tp, other, m.id, simSnapshotLocked(h, g))
			}
			owners[tp] = m.id
		})
		if m.assigned.overlaps(m.pendingRevocation) {
			t.Fatalf("%s both has and revokes a partition", m.id)
		}
		if m.state == memberUnrevoked && m.pendingRevocation.count() == 0 {
			t.Fatalf("%s revoking nothing", m.id)
		}
	}
	if len(owners) != len(cg.owners) {
		t.Fatalf("owners index has %d partitions, members own %d", len(cg.owners), len(owners))
	}
	for tp, id := range owners {
		if cg.owners[tp] != id {
			t.Fatalf("owners index: %v is %s's, not %s's", tp, id, cg.owners[tp])
		}
	}
	refs := map[string]int{}
	for _, m := range cg.members {
		for _, t := range m.subscribedTopics {
			refs[t]++
		}
	}
	if fmt.Sprint(refs) != fmt.Sprint(cg.topicRefs) {
		t.Fatalf("topic refs %v, members subscribe %v", cg.topicRefs, refs)
	}
}

// simSnapshot renders what a restart must keep of the group.
func simSnapshot(h *harness) string {
	g, _ := h.c.lockGroup("g", false)
	if g == nil {
		return "none"
	}
	defer g.mu.Unlock()
	return simSnapshotLocked(h, g)
}

func simSnapshotLocked(h *harness, g *group) string {
	if g.kind != protocolConsumer {
		return "classic " + g.stateName()
	}
	lines := h.consumerState(g)
	slices.Sort(lines[1:])
	return fmt.Sprint(lines)
}

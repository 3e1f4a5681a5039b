package group

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"pgregory.net/rapid"
)

// sgSimClient is a streams member as the simulation drives it: it owns
// what it was last assigned, except that a slow one keeps reporting the
// tasks it was told to revoke.
type sgSimClient struct {
	id, process string
	joined      bool
	epoch       int32
	owned       streamsTasks
	slow        bool
}

// TestStreamsGroupSimulation drives a streams group with random joins,
// leaves, heartbeats (some from members slow to revoke), time passing and
// coordinator restarts, and checks after every step that no task is
// active on two members that still belong to the group. At the end every
// member heartbeats until the group settles: Stable, every task active on
// exactly one member.
func TestStreamsGroupSimulation(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		h := newSGHarness(t)
		h.cfg.Streams.NumStandbyReplicas = rapid.IntRange(0, 1).Draw(rt, "standbys")
		h.restart()
		h.createTopic("input", 4)
		for _, name := range []string{"app-rep-repartition", "app-store-changelog", "app-agg-changelog"} {
			h.createTopic(name, 4)
		}
		clients := make([]*sgSimClient, rapid.IntRange(1, 4).Draw(rt, "clients"))
		for i := range clients {
			clients[i] = &sgSimClient{id: fmt.Sprintf("m%d", i), process: fmt.Sprintf("p%d", i%2)}
		}
		for range rapid.IntRange(1, 60).Draw(rt, "steps") {
			c := rapid.SampledFrom(clients).Draw(rt, "client")
			switch rapid.IntRange(0, 7).Draw(rt, "action") {
			case 0:
				if c.joined {
					sgSimHeartbeat(h, c, leaveEpoch)
				}
			case 1:
				c.slow = !c.slow
			case 2:
				h.clock.Advance(time.Duration(rapid.IntRange(1, 40).Draw(rt, "seconds")) * time.Second)
				h.c.tick()
				sgSimDropFenced(h, clients)
			case 3:
				h.restart()
			default:
				sgSimHeartbeat(h, c, c.epoch)
			}
			sgSimCheck(rt, clients)
		}
		for _, c := range clients {
			c.slow = false
		}
		for range 30 {
			for _, c := range clients {
				sgSimHeartbeat(h, c, c.epoch)
				sgSimCheck(rt, clients)
			}
			if h.state("app") == "Stable" {
				break
			}
		}
		if s := h.state("app"); s != "Stable" {
			rt.Fatalf("the group did not settle: %s", s)
		}
		active := 0
		for _, c := range clients {
			active += c.owned.active.count()
		}
		if active != 8 {
			rt.Fatalf("%d tasks active once settled, want 8", active)
		}
	})
}

func sgSimHeartbeat(h *sgHarness, c *sgSimClient, epoch int32) {
	req := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	req.Version = 1
	req.Group, req.MemberID, req.MemberEpoch = "app", c.id, epoch
	req.ActiveTasks, req.StandbyTasks, req.WarmupTasks = wireTasks(c.owned.active), wireTasks(c.owned.standby), wireTasks(c.owned.warmup)
	if !c.joined || epoch == joinEpoch {
		req.MemberEpoch = joinEpoch
		req.RebalanceTimeoutMillis = 20000
		topo := statefulTopology()
		req.Topology = &topo
		req.ProcessID = new(c.process)
		req.ActiveTasks, req.StandbyTasks, req.WarmupTasks = []kmsg.TaskIDs{}, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
		c.owned = streamsTasks{}
	}
	resp := h.c.StreamsGroupHeartbeat(context.Background(), req)
	switch {
	case epoch == leaveEpoch:
		c.joined, c.epoch, c.owned = false, 0, streamsTasks{}
		return
	case resp.ErrorCode != 0:
		// Fenced or unknown: the member gives up its tasks and rejoins.
		c.joined, c.epoch, c.owned = false, 0, streamsTasks{}
		return
	}
	c.joined, c.epoch = true, resp.MemberEpoch
	if resp.ActiveTasks == nil {
		return
	}
	next := streamsTasks{active: tasksFromWire(resp.ActiveTasks), standby: tasksFromWire(resp.StandbyTasks), warmup: tasksFromWire(resp.WarmupTasks)}
	if c.slow {
		// It keeps what it had on top of what it got.
		next = streamsTasks{
			active:  taskSetOf(append(c.owned.active.list(), next.active.list()...)),
			standby: taskSetOf(append(c.owned.standby.list(), next.standby.list()...)),
			warmup:  taskSetOf(append(c.owned.warmup.list(), next.warmup.list()...)),
		}
	}
	c.owned = next
}

// sgSimDropFenced makes the members the coordinator removed give up their
// tasks, as a member does when its session or rebalance timeout passes.
func sgSimDropFenced(h *sgHarness, clients []*sgSimClient) {
	in := map[string]bool{}
	for _, m := range h.describe("app").Members {
		in[m.MemberID] = true
	}
	for _, c := range clients {
		if c.joined && !in[c.id] {
			c.joined, c.epoch, c.owned = false, 0, streamsTasks{}
		}
	}
}

func sgSimCheck(rt *rapid.T, clients []*sgSimClient) {
	owner := map[taskID]string{}
	for _, c := range clients {
		for _, task := range c.owned.active.list() {
			if o, twice := owner[task]; twice {
				rt.Fatalf("task %v active on %s and %s", task, o, c.id)
			}
			owner[task] = c.id
		}
	}
}

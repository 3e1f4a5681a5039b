package broker

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// streamsMember plays a Kafka Streams member with raw StreamsGroupHeartbeat
// requests: it owns what it was last assigned (revoking at once).
type streamsMember struct {
	// group is "wc" unless set.
	group       string
	id, process string
	epoch       int32
	active      []kmsg.TaskIDs
	standby     []kmsg.TaskIDs
	warmup      []kmsg.TaskIDs
	last        *kmsg.StreamsGroupHeartbeatResponse
}

func wordCountTopology() *kmsg.StreamsGroupHeartbeatRequestTopology {
	topicInfo := func(name string, configs ...string) kmsg.TopicInfo {
		ti := kmsg.NewTopicInfo()
		ti.Topic = name
		for i := 0; i+1 < len(configs); i += 2 {
			ti.Configs = append(ti.Configs, kmsg.TopicInfoConfig{Key: configs[i], Value: configs[i+1]})
		}
		return ti
	}
	t := kmsg.NewStreamsGroupHeartbeatRequestTopology()
	s0 := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
	s0.SubtopologyID = "0"
	s0.SourceTopics = []string{"words"}
	s0.RepartitionSinkTopics = []string{"wc-rep-repartition"}
	s1 := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
	s1.SubtopologyID = "1"
	s1.RepartitionSourceTopics = []kmsg.TopicInfo{topicInfo("wc-rep-repartition", "cleanup.policy", "delete")}
	s1.StateChangelogTopics = []kmsg.TopicInfo{topicInfo("wc-count-changelog", "cleanup.policy", "compact")}
	t.Subtopologies = []kmsg.StreamsGroupHeartbeatRequestTopologySubtopology{s0, s1}
	return &t
}

// streamsConn sends raw requests to a broker: franz-go's client does not
// route StreamsGroupHeartbeat yet.
type streamsConn struct {
	r    *rawConn
	corr int32
}

func (c *streamsConn) send(req kmsg.Request) kmsg.Response {
	c.corr++
	req.SetVersion(1)
	return c.r.roundTrip(req, c.corr)
}

func (m *streamsMember) heartbeat(t *testing.T, c *streamsConn) *kmsg.StreamsGroupHeartbeatResponse {
	t.Helper()
	req := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	req.Group, req.MemberID, req.MemberEpoch = m.group, m.id, m.epoch
	if req.Group == "" {
		req.Group = "wc"
	}
	req.ActiveTasks, req.StandbyTasks, req.WarmupTasks = nonNil(m.active), nonNil(m.standby), nonNil(m.warmup)
	if m.epoch == 0 {
		req.RebalanceTimeoutMillis = 30000
		req.Topology = wordCountTopology()
		req.ProcessID = kmsg.StringPtr(m.process)
	}
	resp := c.send(req).(*kmsg.StreamsGroupHeartbeatResponse)
	switch resp.ErrorCode {
	case 14, 15, 16: // loading, not available, not the coordinator yet
		return resp
	case 0:
	default:
		t.Fatalf("%s: heartbeat: error %d %v", m.id, resp.ErrorCode, resp.ErrorMessage)
	}
	m.epoch, m.last = resp.MemberEpoch, resp
	if resp.ActiveTasks != nil {
		m.active, m.standby, m.warmup = resp.ActiveTasks, resp.StandbyTasks, resp.WarmupTasks
	}
	return resp
}

func nonNil(ts []kmsg.TaskIDs) []kmsg.TaskIDs {
	if ts == nil {
		return []kmsg.TaskIDs{}
	}
	return ts
}

func taskCount(ts []kmsg.TaskIDs) int {
	n := 0
	for _, t := range ts {
		n += len(t.Partitions)
	}
	return n
}

// TestE2EStreamsGroup: Kafka Streams members speaking StreamsGroupHeartbeat
// to a real broker. The first member's heartbeats report
// MISSING_INTERNAL_TOPICS until the broker has created the repartition and
// changelog topics (with the repartition topic's partition count derived
// from its writer's source topic, and the configs the topology asks for);
// then it runs every task. A second member takes half, only once the
// first gave them up; StreamsGroupDescribe and ListGroups show the group.
// At streams.version 0 the API answers UNSUPPORTED_VERSION.
func TestE2EStreamsGroup(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b, "words", 3)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	adm := kadm.NewClient(newFranz(t, b.Addr()))
	raw := dialRaw(t, b)
	raw.nc.SetDeadline(time.Now().Add(60 * time.Second))
	c := &streamsConn{r: raw}
	// What a client does first: find the coordinator, which creates
	// __consumer_offsets.
	adm.FindGroupCoordinators(ctx, "wc")

	a := &streamsMember{id: "member-a", process: "process-a"}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	sawMissing := false
	for {
		resp := a.heartbeat(t, c)
		for _, s := range resp.Status {
			sawMissing = sawMissing || s.StatusCode == 3
		}
		if resp.ErrorCode == 0 && len(resp.Status) == 0 && taskCount(a.active) == 6 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("member a never got its 6 tasks: %+v", resp)
		case <-tick.C:
		}
	}
	if !sawMissing {
		t.Error("no heartbeat reported MISSING_INTERNAL_TOPICS before the internal topics were created")
	}
	// The coordinator sees a topic once this broker installed it; the
	// Metadata answer follows with the image a moment later.
	var details kadm.TopicDetails
	eventually(t, ctx, "the internal topics in the metadata", func() bool {
		var err error
		details, err = adm.ListTopics(ctx, "wc-rep-repartition", "wc-count-changelog")
		return err == nil && details["wc-rep-repartition"].Err == nil && details["wc-count-changelog"].Err == nil
	})
	for _, name := range []string{"wc-rep-repartition", "wc-count-changelog"} {
		if d := details[name]; d.Err != nil || len(d.Partitions) != 3 {
			t.Errorf("%s: %v, %d partitions; want 3", name, d.Err, len(d.Partitions))
		}
	}
	rc, err := adm.DescribeTopicConfigs(ctx, "wc-count-changelog")
	if err != nil {
		t.Fatal(err)
	}
	if v, err := rc.On("wc-count-changelog", nil); err != nil || !slices.ContainsFunc(v.Configs, func(c kadm.Config) bool {
		return c.Key == "cleanup.policy" && c.Value != nil && *c.Value == "compact"
	}) {
		t.Errorf("wc-count-changelog configs: %+v %v", v.Configs, err)
	}

	bm := &streamsMember{id: "member-b", process: "process-b"}
	for {
		bm.heartbeat(t, c)
		a.heartbeat(t, c)
		if taskCount(a.active)+taskCount(bm.active) > 6 {
			t.Fatalf("a task is active twice: a %v b %v", a.active, bm.active)
		}
		if taskCount(a.active) == 3 && taskCount(bm.active) == 3 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("tasks never balanced: a %v b %v", a.active, bm.active)
		case <-tick.C:
		}
	}

	dreq := kmsg.NewPtrStreamsGroupDescribeRequest()
	dreq.Groups = []string{"wc"}
	dresp := c.send(dreq).(*kmsg.StreamsGroupDescribeResponse)
	if g := dresp.Groups[0]; g.ErrorCode != 0 || len(g.Members) != 2 || g.Topology == nil || len(g.Topology.Subtopologies) != 2 {
		t.Errorf("StreamsGroupDescribe: %+v", g)
	}
	listed, err := adm.ListGroupsByType(ctx, []string{"streams"})
	if err != nil || len(listed) != 1 || listed["wc"].GroupType != "streams" {
		t.Errorf("ListGroups(streams): %+v %v", listed, err)
	}

	if _, err := adm.UpdateFeatures(ctx, false, kadm.FeatureUpdate{Feature: "streams.version", MaxVersionLevel: 0, UpgradeType: 2}); err != nil {
		t.Fatal(err)
	}
	req := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	req.Group, req.MemberID, req.MemberEpoch = "wc", a.id, a.epoch
	if resp := c.send(req).(*kmsg.StreamsGroupHeartbeatResponse); resp.ErrorCode != 35 {
		t.Errorf("StreamsGroupHeartbeat at streams.version 0: %+v; want UNSUPPORTED_VERSION", resp)
	}
}

// TestClusterStreamsGroupCreatesInternalTopicsThroughTheController: a
// streams group whose coordinator is not the active controller gets its
// internal topics created through the controller (a CreateTopics request to
// it), and its member then runs every task.
func TestClusterStreamsGroupCreatesInternalTopicsThroughTheController(t *testing.T) {
	c := newTestCluster(t, 3, map[string]string{"offsets.topic.num.partitions": "6", "offsets.topic.replication.factor": "1"})
	active := c.activeController()
	adm, ctx := c.admin()
	if resp, err := adm.CreateTopic(ctx, 3, 1, nil, "words"); err != nil || resp.Err != nil {
		t.Fatalf("create words: %v %v", err, resp.Err)
	}
	// A group whose coordinator is another node than the active controller.
	var group string
	var coordinator *clusterNode
	for i := 0; coordinator == nil; i++ {
		if i == 50 {
			t.Fatal("every group's coordinator is the active controller")
		}
		name := fmt.Sprintf("wc-%d", i)
		coords := adm.FindGroupCoordinators(ctx, name)
		co, ok := coords[name]
		if !ok || co.Err != nil {
			t.Fatalf("FindCoordinator %s: %+v", name, coords)
		}
		if co.NodeID != active.id {
			for _, n := range c.nodes {
				if n.id == co.NodeID {
					group, coordinator = name, n
				}
			}
		}
	}
	raw := dialRaw(t, coordinator.get())
	raw.nc.SetDeadline(time.Now().Add(60 * time.Second))
	conn := &streamsConn{r: raw}
	m := &streamsMember{group: group, id: "member-a", process: "process-a"}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		resp := m.heartbeat(t, conn)
		if resp.ErrorCode == 0 && len(resp.Status) == 0 && taskCount(m.active) == 6 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the member never got its 6 tasks: %+v", resp)
		case <-tick.C:
		}
	}
	img := active.get().ctrl.Image()
	for _, name := range []string{"wc-rep-repartition", "wc-count-changelog"} {
		top, ok := img.Topic(name)
		if !ok || len(top.Partitions) != 3 {
			t.Errorf("%s on the controller: %v, %+v; want 3 partitions", name, ok, top)
		}
	}
	if got := img.TopicConfig("wc-count-changelog")["cleanup.policy"]; got != "compact" {
		t.Errorf("wc-count-changelog cleanup.policy %q, want compact", got)
	}
}

// TestStreamsGroupsOffWithoutTheProtocol: a broker whose
// group.coordinator.rebalance.protocols leaves streams out (Kafka 4.0's
// default list) answers StreamsGroupHeartbeat UNSUPPORTED_VERSION.
func TestStreamsGroupsOffWithoutTheProtocol(t *testing.T) {
	b := startBrokerValues(t, map[string]string{"group.coordinator.rebalance.protocols": "classic,consumer"})
	c := &streamsConn{r: dialRaw(t, b)}
	req := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	req.Group, req.MemberID, req.MemberEpoch = "wc", "m", 0
	if resp := c.send(req).(*kmsg.StreamsGroupHeartbeatResponse); resp.ErrorCode != kerr.UnsupportedVersion.Code {
		t.Errorf("StreamsGroupHeartbeat without streams in the protocols: %+v; want UNSUPPORTED_VERSION", resp)
	}
}

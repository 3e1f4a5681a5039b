package group

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/clock"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// sgHarness drives streams groups on a Coordinator over a MemLog, with a
// manual clock and topics the test creates; Deps.CreateTopics creates the
// internal topics it is asked for and reports each call on created.
type sgHarness struct {
	t     *testing.T
	clock *clock.Manual
	log   *MemLog
	cfg   Config
	c     *Coordinator

	mu      sync.Mutex
	topics  map[string]int32
	created chan []NewTopic
	// noCreate makes CreateTopics report the call without creating;
	// createErr makes it fail.
	noCreate  bool
	createErr error
}

func newSGHarness(t *testing.T) *sgHarness {
	h := &sgHarness{t: t, clock: clock.NewManual(epoch), log: NewMemLog(), topics: map[string]int32{},
		created: make(chan []NewTopic, 100)}
	h.cfg = DefaultConfig()
	h.cfg.OffsetsTopicNumPartitions = 1
	h.start()
	t.Cleanup(func() { h.c.Stop() })
	return h
}

func (h *sgHarness) start() {
	h.c = New(h.cfg, Deps{
		Log:    h.log,
		Clock:  h.clock,
		Logger: slog.New(slog.DiscardHandler),
		TopicPartitions: func(name string) ([16]byte, int32, bool) {
			h.mu.Lock()
			defer h.mu.Unlock()
			n, ok := h.topics[name]
			var id [16]byte
			copy(id[:], name)
			return id, n, ok
		},
		TopicNames: func() []string {
			h.mu.Lock()
			defer h.mu.Unlock()
			return sortedKeys(h.topics)
		},
		CreateTopics: func(ctx context.Context, topics []NewTopic) error {
			h.mu.Lock()
			if h.createErr != nil {
				err := h.createErr
				h.mu.Unlock()
				h.created <- topics
				return err
			}
			if !h.noCreate {
				for _, t := range topics {
					h.topics[t.Name] = t.Partitions
				}
			}
			h.mu.Unlock()
			h.created <- topics
			return nil
		},
	})
	if err := h.c.Load(context.Background(), 0); err != nil {
		h.t.Fatal(err)
	}
}

func (h *sgHarness) restart() {
	h.c.Stop()
	h.start()
}

func (h *sgHarness) createTopic(name string, partitions int32) {
	h.mu.Lock()
	h.topics[name] = partitions
	h.mu.Unlock()
}

// waitCreated waits for the next CreateTopics call.
func (h *sgHarness) waitCreated() []NewTopic {
	select {
	case ts := <-h.created:
		slices.SortFunc(ts, func(a, b NewTopic) int { return cmpString(a.Name, b.Name) })
		return ts
	case <-time.After(10 * time.Second):
		h.t.Fatal("no CreateTopics call")
		return nil
	}
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// sgClient is a streams member as the harness plays it: it owns what it
// was last assigned (it revokes at once) unless hold says otherwise.
type sgClient struct {
	h        *sgHarness
	group    string
	id       string
	process  string
	endpoint *kmsg.StreamsGroupHeartbeatRequestUserEndpoint
	topology kmsg.StreamsGroupHeartbeatRequestTopology
	epoch    int32
	owned    streamsTasks
	// endpointEpoch is the endpoint information epoch last answered.
	endpointEpoch int32
	last          *kmsg.StreamsGroupHeartbeatResponse
	// offsets, when set, are reported as the member's task offsets (50000:
	// more state than the acceptable recovery lag), and as its end offsets
	// too with ends set (Kafka Streams 4.4 reports none).
	offsets []taskID
	ends    bool
}

func (h *sgHarness) member(group, id, process string, topology kmsg.StreamsGroupHeartbeatRequestTopology) *sgClient {
	return &sgClient{h: h, group: group, id: id, process: process, topology: topology}
}

func toWire(ts taskSet) []kmsg.TaskIDs { return wireTasks(ts) }

func (m *sgClient) request() *kmsg.StreamsGroupHeartbeatRequest {
	req := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	req.Version = 1
	req.Group, req.MemberID, req.MemberEpoch = m.group, m.id, m.epoch
	req.EndpointInformationEpoch = m.endpointEpoch
	req.ActiveTasks, req.StandbyTasks, req.WarmupTasks = toWire(m.owned.active), toWire(m.owned.standby), toWire(m.owned.warmup)
	if m.epoch == 0 {
		req.RebalanceTimeoutMillis = 30000
		topo := m.topology
		req.Topology = &topo
		req.ProcessID = new(m.process)
		req.UserEndpoint = m.endpoint
	}
	for _, t := range m.offsets {
		req.TaskOffsets = append(req.TaskOffsets, kmsg.TaskOffset{SubtopologyID: t.subtopology, Partition: t.partition, Offset: 50000})
		if m.ends {
			req.TaskEndOffsets = append(req.TaskEndOffsets, kmsg.TaskOffset{SubtopologyID: t.subtopology, Partition: t.partition, Offset: 50000})
		}
	}
	return req
}

func (m *sgClient) heartbeat() *kmsg.StreamsGroupHeartbeatResponse {
	m.h.t.Helper()
	resp := m.h.c.StreamsGroupHeartbeat(context.Background(), m.request())
	m.last = resp
	if resp.ErrorCode != 0 {
		m.h.t.Fatalf("%s: heartbeat: error %d %v", m.id, resp.ErrorCode, resp.ErrorMessage)
	}
	m.epoch = resp.MemberEpoch
	if resp.ActiveTasks != nil {
		m.owned = streamsTasks{active: tasksFromWire(resp.ActiveTasks), standby: tasksFromWire(resp.StandbyTasks), warmup: tasksFromWire(resp.WarmupTasks)}
	}
	m.endpointEpoch = resp.EndpointInformationEpoch // as the Java client does, from every answer
	return resp
}

func (m *sgClient) leave() {
	req := m.request()
	req.MemberEpoch = leaveEpoch
	if resp := m.h.c.StreamsGroupHeartbeat(context.Background(), req); resp.ErrorCode != 0 {
		m.h.t.Fatalf("%s: leave: %d", m.id, resp.ErrorCode)
	}
}

// converge heartbeats every member in turn until the group is Stable,
// checking after each heartbeat that no task is active on two members.
func (h *sgHarness) converge(ms ...*sgClient) {
	h.t.Helper()
	for range 20 {
		for _, m := range ms {
			m.heartbeat()
			checkExclusive(h.t, ms)
		}
		if h.state(ms[0].group) == "Stable" {
			return
		}
	}
	h.t.Fatalf("group %s did not settle: %s", ms[0].group, h.state(ms[0].group))
}

func checkExclusive(t *testing.T, ms []*sgClient) {
	t.Helper()
	owner := map[taskID]string{}
	for _, m := range ms {
		for _, task := range m.owned.active.list() {
			if o, ok := owner[task]; ok {
				t.Fatalf("task %v active on %s and %s", task, o, m.id)
			}
			owner[task] = m.id
		}
	}
}

func (h *sgHarness) describe(group string) kmsg.StreamsGroupDescribeResponseGroup {
	req := kmsg.NewPtrStreamsGroupDescribeRequest()
	req.Groups = []string{group}
	return h.c.StreamsGroupDescribe(context.Background(), req).Groups[0]
}

func (h *sgHarness) state(group string) string { return h.describe(group).State }

func statusCodes(resp *kmsg.StreamsGroupHeartbeatResponse) []int8 {
	var out []int8
	for _, s := range resp.Status {
		out = append(out, s.StatusCode)
	}
	return out
}

func topicInfo(name string, partitions int32, configs ...string) kmsg.TopicInfo {
	ti := kmsg.NewTopicInfo()
	ti.Topic, ti.NumPartitions = name, partitions
	for i := 0; i+1 < len(configs); i += 2 {
		ti.Configs = append(ti.Configs, kmsg.TopicInfoConfig{Key: configs[i], Value: configs[i+1]})
	}
	return ti
}

// statefulTopology is "0" reading input and writing app-rep-repartition,
// with a store, and "1" reading the repartition topic, with a store.
func statefulTopology() kmsg.StreamsGroupHeartbeatRequestTopology {
	t := kmsg.NewStreamsGroupHeartbeatRequestTopology()
	t.Epoch = 0
	s0 := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
	s0.SubtopologyID = "0"
	s0.SourceTopics = []string{"input"}
	s0.RepartitionSinkTopics = []string{"app-rep-repartition"}
	s0.StateChangelogTopics = []kmsg.TopicInfo{topicInfo("app-store-changelog", 0, "cleanup.policy", "compact")}
	s1 := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
	s1.SubtopologyID = "1"
	s1.RepartitionSourceTopics = []kmsg.TopicInfo{topicInfo("app-rep-repartition", 0, "cleanup.policy", "delete", "retention.ms", "-1")}
	s1.StateChangelogTopics = []kmsg.TopicInfo{topicInfo("app-agg-changelog", 0, "cleanup.policy", "compact")}
	t.Subtopologies = []kmsg.StreamsGroupHeartbeatRequestTopologySubtopology{s0, s1}
	return t
}

// statelessTopology is one subtopology reading input, with no state.
func statelessTopology() kmsg.StreamsGroupHeartbeatRequestTopology {
	t := kmsg.NewStreamsGroupHeartbeatRequestTopology()
	s0 := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
	s0.SubtopologyID = "0"
	s0.SourceTopics = []string{"input"}
	t.Subtopologies = []kmsg.StreamsGroupHeartbeatRequestTopologySubtopology{s0}
	return t
}

// TestStreamsInternalTopics: a topology's internal topics are created with
// the partition counts derived from it (the repartition topic from its
// writer's source, the changelogs from their subtopology's tasks) and the
// configs it asks for; until they exist the member hears
// MISSING_INTERNAL_TOPICS and gets no task.
func TestStreamsInternalTopics(t *testing.T) {
	h := newSGHarness(t)
	h.createTopic("input", 4)
	h.noCreate = true
	a := h.member("app", "a", "p1", statefulTopology())
	resp := a.heartbeat()
	if got := statusCodes(resp); !slices.Equal(got, []int8{streamsStatusMissingInternalTopics}) {
		t.Fatalf("statuses %v, want MISSING_INTERNAL_TOPICS", got)
	}
	if a.owned.count() != 0 || h.state("app") != "NotReady" {
		t.Fatalf("tasks %v in state %s before the internal topics exist", a.owned, h.state("app"))
	}
	created := h.waitCreated()
	want := []string{"app-agg-changelog:4:cleanup.policy=compact", "app-rep-repartition:4:cleanup.policy=delete,retention.ms=-1", "app-store-changelog:4:cleanup.policy=compact"}
	var got []string
	for _, ct := range created {
		var cfgs []string
		for _, k := range sortedKeys(ct.Configs) {
			cfgs = append(cfgs, k+"="+ct.Configs[k])
		}
		got = append(got, fmt.Sprintf("%s:%d:%s", ct.Name, ct.Partitions, joinComma(cfgs)))
		if ct.ReplicationFactor != -1 {
			t.Errorf("%s: replication factor %d, want the default (-1)", ct.Name, ct.ReplicationFactor)
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("created %v\nwant %v", got, want)
	}
	h.mu.Lock()
	h.noCreate = false
	h.mu.Unlock()
	for _, ct := range created {
		h.createTopic(ct.Name, ct.Partitions)
	}
	h.converge(a)
	if a.owned.active.count() != 8 {
		t.Fatalf("active %v, want the 8 tasks of both subtopologies", a.owned.active)
	}
	if len(a.last.Status) != 0 {
		t.Errorf("statuses %v once ready", statusCodes(a.last))
	}
	d := h.describe("app")
	if d.Topology == nil || len(d.Topology.Subtopologies) != 2 || d.Topology.Subtopologies[1].RepartitionSourceTopics[0].NumPartitions != 4 ||
		d.Topology.Subtopologies[1].StateChangelogTopics[0].NumPartitions != 4 {
		t.Errorf("described topology %+v", d.Topology)
	}
}

func joinComma(ss []string) string {
	out := ""
	for i, s := range ss {
		if i > 0 {
			out += ","
		}
		out += s
	}
	return out
}

// TestStreamsMissingSourceTopics: without its source topic the group is
// NotReady, the member hears MISSING_SOURCE_TOPICS and has no task; once
// the topic exists the next heartbeats assign it.
func TestStreamsMissingSourceTopics(t *testing.T) {
	h := newSGHarness(t)
	a := h.member("app", "a", "p1", statelessTopology())
	resp := a.heartbeat()
	if got := statusCodes(resp); !slices.Equal(got, []int8{streamsStatusMissingSourceTopics}) {
		t.Fatalf("statuses %v, want MISSING_SOURCE_TOPICS", got)
	}
	if a.owned.count() != 0 || h.state("app") != "NotReady" {
		t.Fatalf("tasks %v, state %s", a.owned, h.state("app"))
	}
	if d := h.describe("app"); d.Topology == nil || d.Topology.Subtopologies != nil {
		t.Errorf("described topology of a group that is not ready: %+v, want its epoch and no subtopologies", d.Topology)
	}
	h.createTopic("input", 3)
	h.converge(a)
	if a.owned.active.count() != 3 || len(a.last.Status) != 0 {
		t.Fatalf("active %v statuses %v once input exists", a.owned.active, statusCodes(a.last))
	}
}

// TestStreamsCopartitioning: user topics of a copartition group with
// different partition counts are INCORRECTLY_PARTITIONED_TOPICS; a
// repartition topic copartitioned with a user topic gets its count.
func TestStreamsCopartitioning(t *testing.T) {
	h := newSGHarness(t)
	h.createTopic("left", 3)
	h.createTopic("right", 5)
	topo := kmsg.NewStreamsGroupHeartbeatRequestTopology()
	s0 := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
	s0.SubtopologyID = "0"
	s0.SourceTopics = []string{"left", "right"}
	s0.CopartitionGroups = []kmsg.StreamsGroupHeartbeatRequestTopologySubtopologyCopartitionGroup{{SourceTopics: []int16{0, 1}}}
	topo.Subtopologies = append(topo.Subtopologies, s0)
	a := h.member("bad", "a", "p1", topo)
	if got := statusCodes(a.heartbeat()); !slices.Equal(got, []int8{streamsStatusIncorrectlyPartitionedTopics}) {
		t.Fatalf("statuses %v, want INCORRECTLY_PARTITIONED_TOPICS", got)
	}

	// left (3) joined with a repartition topic that "1" writes from right (5).
	topo = kmsg.NewStreamsGroupHeartbeatRequestTopology()
	s0 = kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
	s0.SubtopologyID = "0"
	s0.SourceTopics = []string{"right"}
	s0.RepartitionSinkTopics = []string{"j-repartition"}
	s1 := kmsg.NewStreamsGroupHeartbeatRequestTopologySubtopology()
	s1.SubtopologyID = "1"
	s1.SourceTopics = []string{"left"}
	s1.RepartitionSourceTopics = []kmsg.TopicInfo{topicInfo("j-repartition", 0)}
	s1.CopartitionGroups = []kmsg.StreamsGroupHeartbeatRequestTopologySubtopologyCopartitionGroup{{SourceTopics: []int16{0}, RepartitionSourceTopics: []int16{0}}}
	topo.Subtopologies = append(topo.Subtopologies, s0, s1)
	b := h.member("join", "b", "p1", topo)
	b.heartbeat()
	created := h.waitCreated()
	if len(created) != 1 || created[0].Name != "j-repartition" || created[0].Partitions != 3 {
		t.Fatalf("created %+v, want j-repartition with left's 3 partitions", created)
	}
}

// converged3 starts three members in three processes and lets them settle.
func converged3(t *testing.T, h *sgHarness, topo kmsg.StreamsGroupHeartbeatRequestTopology) []*sgClient {
	ms := []*sgClient{h.member("app", "a", "p1", topo), h.member("app", "b", "p2", topo), h.member("app", "c", "p3", topo)}
	for _, m := range ms {
		m.heartbeat()
	}
	for range 5 {
		select {
		case <-h.created:
		default:
		}
	}
	h.converge(ms...)
	return ms
}

// TestStreamsActiveAndStandbyAcrossThreeMembers: with one standby replica,
// every stateful task has one active and one standby member, in different
// processes, and the counts are balanced.
func TestStreamsActiveAndStandbyAcrossThreeMembers(t *testing.T) {
	h := newSGHarness(t)
	h.cfg.Streams.NumStandbyReplicas = 1
	h.restart()
	h.createTopic("input", 3)
	for _, name := range []string{"app-rep-repartition", "app-store-changelog", "app-agg-changelog"} {
		h.createTopic(name, 3)
	}
	ms := converged3(t, h, statefulTopology())
	active, standby := map[taskID]string{}, map[taskID]string{}
	for _, m := range ms {
		if m.owned.active.count() != 2 || m.owned.standby.count() != 2 {
			t.Errorf("%s: active %v standby %v, want 2 of each", m.id, m.owned.active, m.owned.standby)
		}
		for _, task := range m.owned.active.list() {
			active[task] = m.id
		}
		for _, task := range m.owned.standby.list() {
			if _, twice := standby[task]; twice {
				t.Errorf("task %v has two standbys", task)
			}
			standby[task] = m.id
		}
	}
	if len(active) != 6 || len(standby) != 6 {
		t.Fatalf("active %v standby %v, want all 6 tasks in each role", active, standby)
	}
	for task, id := range standby {
		if active[task] == id {
			t.Errorf("task %v is active and standby on %s", task, id)
		}
	}
}

// TestStreamsStickyAfterLeaveAndRejoin: when a member leaves, the others
// keep their tasks and share its; when it comes back, the others only give
// tasks away, and counts end balanced.
func TestStreamsStickyAfterLeaveAndRejoin(t *testing.T) {
	h := newSGHarness(t)
	h.createTopic("input", 6)
	ms := converged3(t, h, statelessTopology())
	a, b, c := ms[0], ms[1], ms[2]
	before := map[string]taskSet{"a": a.owned.active, "b": b.owned.active}
	c.leave()
	h.converge(a, b)
	for _, m := range []*sgClient{a, b} {
		if !before[m.id].subsetOf(m.owned.active) || m.owned.active.count() != 3 {
			t.Errorf("%s after c left: %v, had %v", m.id, m.owned.active, before[m.id])
		}
	}
	during := map[string]taskSet{"a": a.owned.active, "b": b.owned.active}
	c = h.member("app", "c2", "p3", statelessTopology())
	c.heartbeat()
	h.converge(a, b, c)
	for _, m := range []*sgClient{a, b} {
		if !m.owned.active.subsetOf(during[m.id]) || m.owned.active.count() != 2 {
			t.Errorf("%s after c rejoined: %v, had %v", m.id, m.owned.active, during[m.id])
		}
	}
	if c.owned.active.count() != 2 {
		t.Errorf("c2: %v, want 2 tasks", c.owned.active)
	}
}

// TestStreamsWarmup: a member joining a stateful application gets the tasks
// that would move to it as warm-up tasks while their owners keep them
// active (their owner reported more state than the acceptable recovery
// lag, and no end offsets, as Kafka Streams 4.4 does); once it reports
// their state caught up, they move to it.
func TestStreamsWarmup(t *testing.T) {
	h := newSGHarness(t)
	h.createTopic("input", 2)
	for _, name := range []string{"app-rep-repartition", "app-store-changelog", "app-agg-changelog"} {
		h.createTopic(name, 2)
	}
	a := h.member("app", "a", "p1", statefulTopology())
	a.heartbeat()
	h.converge(a)
	if a.owned.active.count() != 4 {
		t.Fatalf("a: %v", a.owned.active)
	}
	a.offsets = a.owned.active.list()
	a.heartbeat()
	b := h.member("app", "b", "p2", statefulTopology())
	b.heartbeat()
	h.converge(a, b)
	if a.owned.active.count() != 4 || b.owned.active.count() != 0 || b.owned.warmup.count() != 2 {
		t.Fatalf("while warming up: a %v, b active %v warm-up %v; want a to keep 4, b to warm 2", a.owned.active, b.owned.active, b.owned.warmup)
	}
	warm := b.owned.warmup
	b.offsets = warm.list()
	b.heartbeat()
	h.converge(a, b)
	if a.owned.active.count() != 2 || !b.owned.active.equal(warm) || b.owned.warmup.count() != 0 {
		t.Fatalf("after catching up: a %v, b active %v warm-up %v; want b to run %v", a.owned.active, b.owned.active, b.owned.warmup, warm)
	}
}

// TestStreamsRevokeBeforeAssign: a task moves to its new member only once
// the previous owner no longer reports it owned.
func TestStreamsRevokeBeforeAssign(t *testing.T) {
	h := newSGHarness(t)
	h.createTopic("input", 2)
	a := h.member("app", "a", "p1", statelessTopology())
	h.converge(a)
	b := h.member("app", "b", "p2", statelessTopology())
	b.heartbeat()
	if b.owned.active.count() != 0 {
		t.Fatalf("b got %v before a revoked", b.owned.active)
	}
	keep := a.owned
	a.heartbeat() // told to revoke one
	if a.owned.active.count() != 1 {
		t.Fatalf("a: %v after the target moved", a.owned.active)
	}
	// a says it still owns both: b still waits.
	a.owned = keep
	req := a.request()
	h.c.StreamsGroupHeartbeat(context.Background(), req)
	b.heartbeat()
	if b.owned.active.count() != 0 {
		t.Fatalf("b got %v while a still owned it", b.owned.active)
	}
	a.owned.active = taskSetOf(a.owned.active.list()[:1])
	a.heartbeat()
	b.heartbeat()
	if b.owned.active.count() != 1 {
		t.Fatalf("b: %v once a revoked", b.owned.active)
	}
}

// TestStreamsReplay: a restarted coordinator loads the group from
// __consumer_offsets with its epochs, topology, members and tasks; the
// members go on at their epochs.
func TestStreamsReplay(t *testing.T) {
	h := newSGHarness(t)
	h.cfg.Streams.NumStandbyReplicas = 1
	h.restart()
	h.createTopic("input", 3)
	for _, name := range []string{"app-rep-repartition", "app-store-changelog", "app-agg-changelog"} {
		h.createTopic(name, 3)
	}
	ms := converged3(t, h, statefulTopology())
	before := h.describe("app")
	h.restart()
	after := h.describe("app")
	if after.ErrorCode != 0 || after.Epoch != before.Epoch || after.AssignmentEpoch != before.AssignmentEpoch ||
		len(after.Members) != 3 || after.Topology == nil || len(after.Topology.Subtopologies) != 2 {
		t.Fatalf("after restart: %+v\nbefore: %+v", after, before)
	}
	for i := range after.Members {
		am, bm := after.Members[i], before.Members[i]
		if am.MemberID != bm.MemberID || am.MemberEpoch != bm.MemberEpoch || am.ProcessID != bm.ProcessID ||
			!slices.EqualFunc(am.Assignment.ActiveTasks, bm.Assignment.ActiveTasks, sameTaskIDs) ||
			!slices.EqualFunc(am.Assignment.StandbyTasks, bm.Assignment.StandbyTasks, sameTaskIDs) ||
			!slices.EqualFunc(am.TargetAssignment.ActiveTasks, bm.TargetAssignment.ActiveTasks, sameTaskIDs) {
			t.Errorf("member %s after restart: %+v\nbefore: %+v", am.MemberID, am, bm)
		}
	}
	epochs := map[string]int32{}
	for _, m := range ms {
		epochs[m.id] = m.epoch
		m.heartbeat()
		if m.epoch != epochs[m.id] {
			t.Errorf("%s: epoch %d after the restart, was %d", m.id, m.epoch, epochs[m.id])
		}
	}
	lg := h.c.ListGroups(context.Background(), &kmsg.ListGroupsRequest{Version: 5, TypesFilter: []string{"streams"}})
	if len(lg.Groups) != 1 || lg.Groups[0].Group != "app" || lg.Groups[0].GroupType != "streams" || lg.Groups[0].GroupState != "Stable" {
		t.Errorf("ListGroups(streams): %+v", lg.Groups)
	}
}

func sameTaskIDs(a, b kmsg.TaskIDs) bool {
	return a.SubtopologyID == b.SubtopologyID && slices.Equal(a.Partitions, b.Partitions)
}

// TestStreamsEndpoints: members with a user endpoint learn which topic
// partitions each endpoint's active tasks read.
func TestStreamsEndpoints(t *testing.T) {
	h := newSGHarness(t)
	h.createTopic("input", 2)
	a := h.member("app", "a", "p1", statelessTopology())
	a.endpoint = &kmsg.StreamsGroupHeartbeatRequestUserEndpoint{Host: "a.local", Port: 7001}
	b := h.member("app", "b", "p2", statelessTopology())
	b.endpoint = &kmsg.StreamsGroupHeartbeatRequestUserEndpoint{Host: "b.local", Port: 7002}
	a.heartbeat()
	b.heartbeat()
	h.converge(a, b)
	a.endpointEpoch = 0
	resp := a.heartbeat()
	got := map[string][]int32{}
	for _, e := range resp.PartitionsByUserEndpoint {
		for _, p := range e.ActivePartitions {
			got[e.UserEndpoint.Host] = append(got[e.UserEndpoint.Host], p.Partitions...)
			if p.Topic != "input" {
				t.Errorf("endpoint %s: topic %s", e.UserEndpoint.Host, p.Topic)
			}
		}
	}
	if len(got["a.local"]) != 1 || len(got["b.local"]) != 1 || got["a.local"][0] == got["b.local"][0] {
		t.Fatalf("partitions by endpoint %v", got)
	}
}

// TestStreamsShutdownApplication: a member's request to shut the
// application down reaches every member, until the group is empty.
func TestStreamsShutdownApplication(t *testing.T) {
	h := newSGHarness(t)
	h.createTopic("input", 2)
	a, b := h.member("app", "a", "p1", statelessTopology()), h.member("app", "b", "p2", statelessTopology())
	a.heartbeat()
	b.heartbeat()
	req := a.request()
	req.ShutdownApplication = true
	h.c.StreamsGroupHeartbeat(context.Background(), req)
	if got := statusCodes(b.heartbeat()); !slices.Contains(got, streamsStatusShutdownApplication) {
		t.Fatalf("b's statuses %v, want SHUTDOWN_APPLICATION", got)
	}
	a.leave()
	b.leave()
	c := h.member("app", "c", "p3", statelessTopology())
	if got := statusCodes(c.heartbeat()); slices.Contains(got, streamsStatusShutdownApplication) {
		t.Fatalf("a new member of the emptied group hears %v", got)
	}
}

// TestStreamsDeleteAndTypes: a streams group is listed with its type, is
// not a consumer group, may be deleted once empty, and its tombstones leave
// nothing to load.
func TestStreamsDeleteAndTypes(t *testing.T) {
	h := newSGHarness(t)
	h.createTopic("input", 1)
	a := h.member("app", "a", "p1", statelessTopology())
	h.converge(a)
	cg := h.c.ConsumerGroupHeartbeat(context.Background(), &kmsg.ConsumerGroupHeartbeatRequest{Version: 1, Group: "app", MemberID: "x",
		RebalanceTimeoutMillis: 1000, SubscribedTopicNames: []string{"input"}, Topics: []kmsg.ConsumerGroupHeartbeatRequestTopic{}})
	if cg.ErrorCode != codeGroupIDNotFound {
		t.Errorf("ConsumerGroupHeartbeat to a streams group: %d, want GROUP_ID_NOT_FOUND", cg.ErrorCode)
	}
	del := func() int16 {
		return h.c.DeleteGroups(context.Background(), &kmsg.DeleteGroupsRequest{Groups: []string{"app"}}).Groups[0].ErrorCode
	}
	if code := del(); code != codeNonEmptyGroup {
		t.Fatalf("delete with a member: %d, want NON_EMPTY_GROUP", code)
	}
	a.leave()
	if code := del(); code != 0 {
		t.Fatalf("delete: %d", code)
	}
	h.restart()
	if d := h.describe("app"); d.ErrorCode != codeGroupIDNotFound {
		t.Fatalf("after delete and restart: %+v", d)
	}
}

// TestStreamsEndpointEpochSettles: the endpoint information is sent once
// per change, and every answer carries the epoch (the Java client takes it
// from each answer), so a member that is up to date is not sent it again.
func TestStreamsEndpointEpochSettles(t *testing.T) {
	h := newSGHarness(t)
	h.createTopic("input", 1)
	a := h.member("app", "a", "p1", statelessTopology())
	a.endpoint = &kmsg.StreamsGroupHeartbeatRequestUserEndpoint{Host: "a.local", Port: 7001}
	h.converge(a)
	for range 3 {
		if resp := a.heartbeat(); resp.PartitionsByUserEndpoint != nil || resp.EndpointInformationEpoch == 0 {
			t.Fatalf("a settled member got endpoint information again: epoch %d, %+v", resp.EndpointInformationEpoch, resp.PartitionsByUserEndpoint)
		}
	}
}

// TestStreamsSessionsAndGroupConfigs: the group's own streams.* configs
// override the broker's: the heartbeat interval answered, the session
// after which a silent member is removed (its tasks going to the others),
// and the standby replicas, whose change alone moves the group epoch.
func TestStreamsSessionsAndGroupConfigs(t *testing.T) {
	h := newSGHarness(t)
	overrides := map[string]string{"streams.session.timeout.ms": "2000", "streams.heartbeat.interval.ms": "700"}
	var mu sync.Mutex
	h.c.deps.GroupConfigs = func(string) map[string]string {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(overrides)
	}
	h.createTopic("input", 2)
	for _, name := range []string{"app-rep-repartition", "app-store-changelog", "app-agg-changelog"} {
		h.createTopic(name, 2)
	}
	a, b := h.member("app", "a", "p1", statefulTopology()), h.member("app", "b", "p2", statefulTopology())
	a.heartbeat()
	b.heartbeat()
	h.converge(a, b)
	if a.last.HeartbeatIntervalMillis != 700 {
		t.Errorf("heartbeat interval %d, want the group's 700", a.last.HeartbeatIntervalMillis)
	}
	if a.owned.standby.count()+b.owned.standby.count() != 0 {
		t.Fatalf("standbys without streams.num.standby.replicas: %v %v", a.owned.standby, b.owned.standby)
	}
	epoch := a.epoch
	mu.Lock()
	overrides["streams.num.standby.replicas"] = "1"
	mu.Unlock()
	h.converge(a, b)
	if a.epoch <= epoch || a.owned.standby.count() != 2 || b.owned.standby.count() != 2 {
		t.Fatalf("after streams.num.standby.replicas=1: epoch %d (was %d), standbys %v %v", a.epoch, epoch, a.owned.standby, b.owned.standby)
	}

	h.clock.Advance(1500 * time.Millisecond)
	a.heartbeat()
	h.clock.Advance(1000 * time.Millisecond) // b silent for 2.5s
	h.c.tick()
	if d := h.describe("app"); len(d.Members) != 1 || d.Members[0].MemberID != "a" {
		t.Fatalf("after b's session: %+v", d.Members)
	}
	h.converge(a)
	if a.owned.active.count() != 4 {
		t.Errorf("a after b's session ended: %v, want all 4 tasks", a.owned.active)
	}
}

// TestStreamsTopologyUpdate: while a member runs the group's topology, one
// joining with a newer topology epoch hears STALE_TOPOLOGY and the group
// keeps its topology; once nobody runs it, a join with the newer one
// replaces it.
func TestStreamsTopologyUpdate(t *testing.T) {
	h := newSGHarness(t)
	h.createTopic("input", 2)
	h.createTopic("other", 3)
	a := h.member("app", "a", "p1", statelessTopology())
	h.converge(a)
	newer := statelessTopology()
	newer.Epoch = 1
	newer.Subtopologies[0].SourceTopics = []string{"other"}
	b := h.member("app", "b", "p2", newer)
	if got := statusCodes(b.heartbeat()); !slices.Contains(got, streamsStatusStaleTopology) {
		t.Fatalf("b with topology epoch 1 in a group at 0: statuses %v, want STALE_TOPOLOGY", got)
	}
	if d := h.describe("app"); d.Topology.Epoch != 0 {
		t.Fatalf("the group's topology moved to %d while a runs 0", d.Topology.Epoch)
	}
	a.leave()
	b.leave()
	b = h.member("app", "b2", "p2", newer)
	b.heartbeat()
	h.converge(b)
	if d := h.describe("app"); d.Topology.Epoch != 1 || b.owned.active.count() != 3 {
		t.Fatalf("after the old members left: topology epoch %d, b's tasks %v", d.Topology.Epoch, b.owned.active)
	}
}

// TestStreamsInternalTopicCreationFails: a failed creation is retried by
// the next heartbeat, which says why it failed in its
// MISSING_INTERNAL_TOPICS status.
func TestStreamsInternalTopicCreationFails(t *testing.T) {
	h := newSGHarness(t)
	h.createTopic("input", 1)
	h.mu.Lock()
	h.createErr = errors.New("INVALID_CONFIG: no such config")
	h.mu.Unlock()
	a := h.member("app", "a", "p1", statefulTopology())
	a.heartbeat()
	h.waitCreated()
	h.waitNoCreation()
	resp := a.heartbeat()
	for _, st := range resp.Status {
		if st.StatusCode == streamsStatusMissingInternalTopics && strings.Contains(st.StatusDetail, "INVALID_CONFIG: no such config") {
			h.waitCreated() // and it tried again
			return
		}
	}
	t.Fatalf("no status says why the creation failed: %+v", resp.Status)
}

// waitNoCreation waits until no CreateTopics call is under way: the
// coordinator records a call's outcome after it returns.
func (h *sgHarness) waitNoCreation() {
	deadline := time.Now().Add(10 * time.Second)
	for {
		h.c.creating.mu.Lock()
		n := len(h.c.creating.inFlight)
		h.c.creating.mu.Unlock()
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatal("a CreateTopics call never ended")
		}
		time.Sleep(time.Millisecond)
	}
}

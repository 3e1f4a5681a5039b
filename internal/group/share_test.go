package group

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// shareClient is a share group member as the tests drive it: the epoch its
// last answer gave it and the assignment it holds.
type shareClient struct {
	epoch    int32
	assigned string
}

type shareHarness struct {
	*harness
	members map[string]*shareClient
	states  *fakeShareStates
	// deleted records the DeleteShareState calls: group, then the
	// partitions as formatted.
	deleted []string
	hw      map[string]int64
}

func newShareHarness(t *testing.T, topics string) *shareHarness {
	h := &shareHarness{harness: newHarness(t), members: map[string]*shareClient{},
		states: &fakeShareStates{state: map[string]ShareSummary{}}, hw: map[string]int64{}}
	t.Cleanup(h.close)
	h.setTopics(topics)
	h.restart()
	return h
}

// restart builds a new coordinator over the same log, as a failover does.
func (h *shareHarness) restart() {
	h.c.Stop()
	h.start()
	h.c.deps.ShareStates = h.states
	h.c.deps.DeleteShareState = func(_ context.Context, group string, topics map[[16]byte][]int32) error {
		h.deleted = append(h.deleted, group+" "+h.formatPartitions(newTopicPartitions(topics)))
		return nil
	}
	h.c.deps.HighWatermark = func(topic string, p int32) (int64, bool) {
		hw, ok := h.hw[fmt.Sprintf("%s-%d", topic, p)]
		return hw, ok
	}
}

// hb sends a heartbeat from member at the epoch it last got (0 to join,
// with topics), or at epoch when given, and renders the answer.
func (h *shareHarness) hb(member string, epoch int32, topics ...string) string {
	h.t.Helper()
	c := h.members[member]
	if c == nil {
		c = &shareClient{}
		h.members[member] = c
	}
	req := kmsg.NewPtrShareGroupHeartbeatRequest()
	req.Version = 1
	req.GroupID, req.MemberID = "g", member
	req.MemberEpoch = c.epoch
	if epoch != -99 {
		req.MemberEpoch = epoch
	}
	if len(topics) > 0 {
		req.SubscribedTopicNames = topics
	}
	resp := h.c.ShareGroupHeartbeat(context.Background(), req)
	if resp.ErrorCode != 0 {
		return errName(resp.ErrorCode)
	}
	c.epoch = resp.MemberEpoch
	out := fmt.Sprintf("epoch=%d", resp.MemberEpoch)
	if resp.Assignment != nil {
		m := map[[16]byte][]int32{}
		for _, t := range resp.Assignment.TopicPartitions {
			m[t.TopicID] = t.Partitions
		}
		c.assigned = h.formatPartitions(newTopicPartitions(m))
		out += " assignment=" + c.assigned
	}
	return out
}

// next heartbeats at the member's current epoch.
func (h *shareHarness) next(member string) string { return h.hb(member, -99) }

func (h *shareHarness) describe() string {
	resp := h.c.ShareGroupDescribe(context.Background(), &kmsg.ShareGroupDescribeRequest{Version: 1, GroupIDs: []string{"g"}})
	g := resp.Groups[0]
	if g.ErrorCode != 0 {
		return errName(g.ErrorCode)
	}
	out := fmt.Sprintf("%s epoch=%d assignment-epoch=%d assignor=%s", g.GroupState, g.GroupEpoch, g.AssignmentEpoch, g.Assignor)
	for _, m := range g.Members {
		tps := map[[16]byte][]int32{}
		for _, t := range m.Assignment.TopicPartitions {
			tps[t.TopicID] = t.Partitions
		}
		out += fmt.Sprintf("; %s epoch=%d topics=%s assigned=%s", m.MemberID, m.MemberEpoch,
			strings.Join(m.SubscribedTopicNames, ","), h.formatPartitions(newTopicPartitions(tps)))
	}
	return out
}

func expect(t *testing.T, what, got, want string) {
	t.Helper()
	if got != want {
		t.Errorf("%s:\n got %s\nwant %s", what, got, want)
	}
}

// Members join with their own IDs and get the simple assignor's target at
// once: with more members than partitions a partition goes to several.
func TestShareJoinAndShare(t *testing.T) {
	h := newShareHarness(t, "t:2")
	expect(t, "a joins", h.hb("a", 0, "t"), "epoch=1 assignment=[t-0 t-1]")
	expect(t, "b joins", h.hb("b", 0, "t"), "epoch=2 assignment=[t-1]")
	expect(t, "a heartbeats", h.next("a"), "epoch=2 assignment=[t-0]")
	expect(t, "c joins", h.hb("c", 0, "t"), "epoch=3 assignment=[t-0]")
	expect(t, "a heartbeats", h.next("a"), "epoch=3")
	expect(t, "b heartbeats", h.next("b"), "epoch=3")
	expect(t, "describe", h.describe(),
		"Stable epoch=3 assignment-epoch=3 assignor=simple; a epoch=3 topics=t assigned=[t-0]; b epoch=3 topics=t assigned=[t-1]; c epoch=3 topics=t assigned=[t-0]")

	// A topic that grows bumps the epoch at the next heartbeat.
	h.setTopics("t:3")
	expect(t, "a after growth", h.next("a"), "epoch=4")
	expect(t, "c after growth", h.next("c"), "epoch=4 assignment=[t-2]")
}

// Epochs are checked as Kafka does: the current one or the previous one;
// an unknown member is told so; a member leaves with -1.
func TestShareFenceAndLeave(t *testing.T) {
	h := newShareHarness(t, "t:2")
	h.hb("a", 0, "t")
	h.hb("b", 0, "t")
	expect(t, "epoch ahead", h.hb("a", 7), "FENCED_MEMBER_EPOCH")
	expect(t, "previous epoch", h.hb("a", 1), "epoch=2 assignment=[t-0]")
	expect(t, "rejoin with epoch 0", h.hb("a", 0, "t"), "epoch=2 assignment=[t-0]")
	expect(t, "unknown member", h.hb("x", 3), "UNKNOWN_MEMBER_ID")
	expect(t, "b leaves", h.hb("b", -1), "epoch=-1")
	expect(t, "b is gone", h.hb("b", 2), "UNKNOWN_MEMBER_ID")
	expect(t, "a takes all", h.next("a"), "epoch=3 assignment=[t-0 t-1]")
	expect(t, "stale epoch", h.hb("a", 1), "FENCED_MEMBER_EPOCH")
	expect(t, "a leaves", h.hb("a", -1), "epoch=-1")
	expect(t, "describe", h.describe(), "Empty epoch=4 assignment-epoch=3 assignor=simple")
}

// A member that stops heartbeating is removed after
// group.share.session.timeout.ms; group.share.max.size bounds the group.
func TestShareSessionAndMaxSize(t *testing.T) {
	h := newShareHarness(t, "t:1")
	h.c.cfg.ShareMaxSize = 2
	h.hb("a", 0, "t")
	h.hb("b", 0, "t")
	expect(t, "third member", h.hb("c", 0, "t"), "GROUP_MAX_SIZE_REACHED")
	h.clock.Advance(30 * time.Second)
	h.next("a")
	h.clock.Advance(20 * time.Second) // b's 45s session is over, a's not
	h.c.tick()
	expect(t, "after b's session", h.describe(), "Stable epoch=3 assignment-epoch=2 assignor=simple; a epoch=2 topics=t assigned=[t-0]")
	expect(t, "b heartbeats late", h.next("b"), "UNKNOWN_MEMBER_ID")
	expect(t, "c may join now", h.hb("c", 0, "t"), "epoch=4 assignment=[t-0]")
}

// A group ID taken by a classic or consumer group is not a share group, and
// a share group is not one of theirs.
func TestShareGroupKinds(t *testing.T) {
	h := newShareHarness(t, "t:1")
	commit := kmsg.NewPtrOffsetCommitRequest()
	commit.Version, commit.Group, commit.Generation = 8, "g", -1
	ct := kmsg.NewOffsetCommitRequestTopic()
	ct.Topic = "t"
	ct.Partitions = []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 5, LeaderEpoch: -1}}
	commit.Topics = []kmsg.OffsetCommitRequestTopic{ct}
	h.c.OffsetCommit(context.Background(), commit)
	expect(t, "offsets group", h.hb("a", 0, "t"), "GROUP_ID_NOT_FOUND")

	h2 := newShareHarness(t, "t:1")
	h2.hb("a", 0, "t")
	cg := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	cg.Version, cg.Group, cg.MemberID, cg.RebalanceTimeoutMillis = 1, "g", "m", 30000
	cg.SubscribedTopicNames, cg.Topics = []string{"t"}, []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	expect(t, "consumer heartbeat", errName(h2.c.ConsumerGroupHeartbeat(context.Background(), cg).ErrorCode), "GROUP_ID_NOT_FOUND")
	commit.Generation = -1
	resp := h2.c.OffsetCommit(context.Background(), commit)
	expect(t, "commit", errName(resp.Topics[0].Partitions[0].ErrorCode), "GROUP_ID_NOT_FOUND")
	dg := h2.c.ConsumerGroupDescribe(context.Background(), &kmsg.ConsumerGroupDescribeRequest{Version: 1, Groups: []string{"g"}})
	expect(t, "consumer describe", errName(dg.Groups[0].ErrorCode), "GROUP_ID_NOT_FOUND")
	d := h2.c.DescribeGroups(context.Background(), &kmsg.DescribeGroupsRequest{Version: 6, Groups: []string{"g"}})
	expect(t, "describe groups", errName(d.Groups[0].ErrorCode)+" "+d.Groups[0].State, "GROUP_ID_NOT_FOUND Dead")
}

// The group survives a coordinator failover: epochs, members, assignments
// and initialized partitions are replayed from __consumer_offsets.
func TestShareReplay(t *testing.T) {
	h := newShareHarness(t, "t:2,u:1")
	h.hb("a", 0, "t")
	h.hb("b", 0, "t", "u")
	h.next("a")
	before := h.describe()
	initBefore := h.initialized()
	h.restart()
	expect(t, "describe after restart", h.describe(), before)
	expect(t, "initialized after restart", h.initialized(), initBefore)
	if initBefore != "[t-0 t-1 u-0]" {
		t.Errorf("initialized = %s", initBefore)
	}
	expect(t, "a heartbeats at its epoch", h.next("a"), "epoch=2")
	expect(t, "b leaves", h.hb("b", -1), "epoch=-1")
	h.restart()
	expect(t, "after leave and restart", h.describe(),
		"Stable epoch=3 assignment-epoch=2 assignor=simple; a epoch=2 topics=t assigned=[t-0]")
	expect(t, "a catches up", h.next("a"), "epoch=3 assignment=[t-0 t-1]")
}

func (h *shareHarness) initialized() string {
	g, _ := h.c.lockGroup("g", false)
	if g == nil {
		return "none"
	}
	defer g.mu.Unlock()
	return h.formatPartitions(newTopicPartitions(g.share.initializedPartitions()))
}

// ListGroups shows share groups as type "share"; DeleteGroups refuses a
// group with members, and deletes an empty one's share state first.
func TestShareListAndDelete(t *testing.T) {
	h := newShareHarness(t, "t:2")
	h.hb("a", 0, "t")
	list := func(types ...string) string {
		resp := h.c.ListGroups(context.Background(), &kmsg.ListGroupsRequest{Version: 5, TypesFilter: types})
		var out []string
		for _, g := range resp.Groups {
			out = append(out, fmt.Sprintf("%s %s %s %s", g.Group, g.GroupType, g.ProtocolType, g.GroupState))
		}
		return strings.Join(out, "; ")
	}
	expect(t, "list share", list("share"), "g share share Stable")
	expect(t, "list consumer", list("consumer"), "")
	del := func() string {
		resp := h.c.DeleteGroups(context.Background(), &kmsg.DeleteGroupsRequest{Version: 2, Groups: []string{"g"}})
		return errName(resp.Groups[0].ErrorCode)
	}
	expect(t, "delete with a member", del(), "NON_EMPTY_GROUP")
	if len(h.deleted) != 0 {
		t.Errorf("share state deleted for a refused delete: %q", h.deleted)
	}
	h.hb("a", -1)
	h.clock.Advance(8 * 24 * time.Hour)
	h.c.expireOffsets()
	expect(t, "an empty share group is not expired", list("share"), "g share share Empty")
	expect(t, "delete empty", del(), "NONE")
	expect(t, "share state deleted", strings.Join(h.deleted, ";"), "g [t-0 t-1]")
	expect(t, "gone", h.describe(), "GROUP_ID_NOT_FOUND")
	h.restart()
	expect(t, "gone after restart", h.describe(), "GROUP_ID_NOT_FOUND")
	expect(t, "a new group under the ID", h.hb("a", 0, "t"), "epoch=1 assignment=[t-0 t-1]")
}

// A failed DeleteShareState keeps the group.
func TestShareDeleteStateFails(t *testing.T) {
	h := newShareHarness(t, "t:1")
	h.hb("a", 0, "t")
	h.hb("a", -1)
	h.c.deps.DeleteShareState = func(context.Context, string, map[[16]byte][]int32) error {
		return kerr.CoordinatorNotAvailable
	}
	resp := h.c.DeleteGroups(context.Background(), &kmsg.DeleteGroupsRequest{Version: 2, Groups: []string{"g"}})
	expect(t, "delete", errName(resp.Groups[0].ErrorCode), "COORDINATOR_NOT_AVAILABLE")
	expect(t, "kept", h.describe(), "Empty epoch=2 assignment-epoch=1 assignor=simple")
}

// fakeShareStates is an in-memory share coordinator for the admin APIs.
type fakeShareStates struct {
	state map[string]ShareSummary // by "group topic-byte partition"
	calls []string
	fail  error
}

func fakeKey(group string, topic [16]byte, p int32) string {
	return fmt.Sprintf("%s %d %d", group, topic[0], p)
}

func (f *fakeShareStates) Summary(_ context.Context, group string, topic [16]byte, partitions []int32) (map[int32]ShareSummary, error) {
	if f.fail != nil {
		return nil, f.fail
	}
	out := map[int32]ShareSummary{}
	for _, p := range partitions {
		s, ok := f.state[fakeKey(group, topic, p)]
		if !ok {
			s = ShareSummary{StartOffset: -1, LeaderEpoch: -1}
		}
		out[p] = s
	}
	return out, nil
}

func (f *fakeShareStates) Initialize(_ context.Context, group string, topic [16]byte, p int32, offset int64) error {
	f.calls = append(f.calls, fmt.Sprintf("init %s %d", fakeKey(group, topic, p), offset))
	f.state[fakeKey(group, topic, p)] = ShareSummary{StartOffset: offset}
	return nil
}

func (f *fakeShareStates) Delete(_ context.Context, group string, topic [16]byte, partitions []int32) error {
	f.calls = append(f.calls, fmt.Sprintf("delete %s %d %v", group, topic[0], partitions))
	for _, p := range partitions {
		delete(f.state, fakeKey(group, topic, p))
	}
	return nil
}

func (h *shareHarness) describeOffsets(version int16, topics ...string) string {
	rg := kmsg.NewDescribeShareGroupOffsetsRequestGroup()
	rg.GroupID = "g"
	for _, t := range topics {
		name, ps, _ := strings.Cut(t, ":")
		rt := kmsg.NewDescribeShareGroupOffsetsRequestGroupTopic()
		rt.Topic = name
		for _, p := range strings.Split(ps, ",") {
			var n int32
			fmt.Sscan(p, &n)
			rt.Partitions = append(rt.Partitions, n)
		}
		rg.Topics = append(rg.Topics, rt)
	}
	resp := h.c.DescribeShareGroupOffsets(context.Background(), &kmsg.DescribeShareGroupOffsetsRequest{Version: version, Groups: []kmsg.DescribeShareGroupOffsetsRequestGroup{rg}})
	g := resp.Groups[0]
	if g.ErrorCode != 0 {
		return errName(g.ErrorCode)
	}
	var out []string
	for _, t := range g.Topics {
		for _, p := range t.Partitions {
			s := fmt.Sprintf("%s-%d start=%d lag=%d", t.Topic, p.Partition, p.StartOffset, p.Lag)
			if p.ErrorCode != 0 {
				s = fmt.Sprintf("%s-%d %s", t.Topic, p.Partition, errName(p.ErrorCode))
			}
			out = append(out, s)
		}
	}
	return strings.Join(out, "; ")
}

func (h *shareHarness) alter(topic string, p int32, offset int64) string {
	req := kmsg.NewPtrAlterShareGroupOffsetsRequest()
	req.GroupID = "g"
	rt := kmsg.NewAlterShareGroupOffsetsRequestTopic()
	rt.Topic = topic
	rt.Partitions = []kmsg.AlterShareGroupOffsetsRequestTopicPartition{{Partition: p, StartOffset: offset}}
	req.Topics = []kmsg.AlterShareGroupOffsetsRequestTopic{rt}
	resp := h.c.AlterShareGroupOffsets(context.Background(), req)
	return errName(resp.ErrorCode) + " " + errName(resp.Topics[0].Partitions[0].ErrorCode)
}

func (h *shareHarness) deleteOffsets(topics ...string) string {
	req := kmsg.NewPtrDeleteShareGroupOffsetsRequest()
	req.GroupID = "g"
	for _, t := range topics {
		req.Topics = append(req.Topics, kmsg.DeleteShareGroupOffsetsRequestTopic{Topic: t})
	}
	resp := h.c.DeleteShareGroupOffsets(context.Background(), req)
	out := errName(resp.ErrorCode)
	for _, t := range resp.Topics {
		out += fmt.Sprintf(" %s:%s", t.Topic, errName(t.ErrorCode))
	}
	return out
}

// DescribeShareGroupOffsets reads the share coordinator's state of the
// initialized partitions; Alter and Delete need an empty group.
func TestShareOffsetsAdmin(t *testing.T) {
	h := newShareHarness(t, "t:2,u:1")
	expect(t, "no group", h.describeOffsets(1), "GROUP_ID_NOT_FOUND")
	h.hb("a", 0, "t")
	tid := h.topicIDs["t"]
	h.states.state[fakeKey("g", tid, 0)] = ShareSummary{StartOffset: 10, DeliveryComplete: 3}
	h.hw["t-0"] = 20
	expect(t, "describe all v1", h.describeOffsets(1), "t-0 start=10 lag=7; t-1 start=-1 lag=-1")
	expect(t, "describe all v0", h.describeOffsets(0), "t-0 start=10 lag=-1; t-1 start=-1 lag=-1")
	expect(t, "describe named", h.describeOffsets(1, "u:0", "nope:0"), "u-0 start=-1 lag=-1; nope-0 UNKNOWN_TOPIC_OR_PARTITION")
	h.states.fail = kerr.CoordinatorLoadInProgress
	expect(t, "summary fails", h.describeOffsets(1), "t-0 COORDINATOR_LOAD_IN_PROGRESS; t-1 COORDINATOR_LOAD_IN_PROGRESS")
	h.states.fail = nil

	expect(t, "alter with a member", h.alter("t", 0, 5), "NON_EMPTY_GROUP NON_EMPTY_GROUP")
	expect(t, "delete with a member", h.deleteOffsets("t"), "NON_EMPTY_GROUP")
	h.hb("a", -1)
	expect(t, "alter", h.alter("u", 0, 4), "NONE NONE")
	expect(t, "alter unknown partition", h.alter("u", 3, 4), "NONE UNKNOWN_TOPIC_OR_PARTITION")
	expect(t, "u initialized", h.initialized(), "[t-0 t-1 u-0]")
	expect(t, "describe after alter", h.describeOffsets(1, "u:0"), "u-0 start=4 lag=-1")
	expect(t, "delete", h.deleteOffsets("t", "nope"), "NONE t:NONE nope:UNKNOWN_TOPIC_OR_PARTITION")
	expect(t, "t no longer initialized", h.initialized(), "[u-0]")
	h.restart()
	expect(t, "initialized after restart", h.initialized(), "[u-0]")
	if want := []string{fmt.Sprintf("init g %d 0 4", h.topicIDs["u"][0]), fmt.Sprintf("delete g %d [0 1]", tid[0])}; !slices.Equal(h.states.calls, want) {
		t.Errorf("share state calls = %q, want %q", h.states.calls, want)
	}

	h.c.deps.ShareStates = nil
	expect(t, "no share states", h.describeOffsets(1), "u-0 UNKNOWN_SERVER_ERROR")
	expect(t, "alter without share states", h.alter("u", 0, 1), "NONE UNKNOWN_SERVER_ERROR")
}

// The simple assignor's rules: exclusive partitions while members are
// fewer, shared ones when they are more, balanced and sticky.
func TestSimpleAssignor(t *testing.T) {
	tid := func(b byte) [16]byte { return [16]byte{b} }
	topics := map[[16]byte]topicMeta{tid(1): {name: "t", partitions: 4}, tid(2): {name: "u", partitions: 1}}
	member := func(id string, prev topicPartitions, subscribed ...byte) assignMember {
		m := assignMember{id: id, previous: prev}
		for _, b := range subscribed {
			m.subscribed = append(m.subscribed, tid(b))
		}
		return m
	}
	tp := func(b byte, ps ...int32) topicPartitions { return topicPartitions{tid(b): ps} }
	for _, c := range []struct {
		name    string
		members []assignMember
		want    map[string]topicPartitions
	}{
		{"fewer members: exclusive and balanced", []assignMember{member("a", nil, 1), member("b", nil, 1), member("c", nil, 1)},
			map[string]topicPartitions{"a": tp(1, 0, 3), "b": tp(1, 1), "c": tp(1, 2)}},
		{"more members: shared", []assignMember{member("a", nil, 2), member("b", nil, 2), member("c", nil, 2)},
			map[string]topicPartitions{"a": tp(2, 0), "b": tp(2, 0), "c": tp(2, 0)}},
		{"sticky", []assignMember{member("a", tp(1, 2, 3), 1), member("b", tp(1, 0, 1), 1)},
			map[string]topicPartitions{"a": tp(1, 2, 3), "b": tp(1, 0, 1)}},
		{"sticky within balance", []assignMember{member("a", tp(1, 0, 1, 2, 3), 1), member("b", nil, 1)},
			map[string]topicPartitions{"a": tp(1, 0, 1), "b": tp(1, 2, 3)}},
		{"heterogeneous: each topic among its subscribers", []assignMember{member("a", nil, 1, 2), member("b", nil, 2)},
			map[string]topicPartitions{"a": topicPartitions{tid(1): {0, 1, 2, 3}, tid(2): {0}}, "b": tp(2, 0)}},
	} {
		got := simpleAssignor{}.assign(&assignInput{members: c.members, topics: topics})
		for id, want := range c.want {
			if !got[id].equal(want) {
				t.Errorf("%s: %s got %v, want %v", c.name, id, got[id], want)
			}
		}
	}
	// Many members over few partitions: each member one partition, the
	// partitions' member counts within one.
	var ms []assignMember
	for i := range 7 {
		ms = append(ms, member(fmt.Sprintf("m%d", i), nil, 1))
	}
	got := simpleAssignor{}.assign(&assignInput{members: ms, topics: topics})
	holders := map[int32]int{}
	for _, m := range ms {
		if got[m.id].count() != 1 {
			t.Errorf("%s got %v", m.id, got[m.id])
		}
		got[m.id].each(func(tp tpID) { holders[tp.partition]++ })
	}
	for p := range int32(4) {
		if holders[p] < 1 || holders[p] > 2 {
			t.Errorf("partition %d has %d members", p, holders[p])
		}
	}
}

// The share records decode to what was encoded.
func TestShareRecordsRoundTrip(t *testing.T) {
	e, hash, err := decodeShareGroupMetadataValue(shareGroupMetadataValue(7, -3))
	if err != nil || e != 7 || hash != -3 {
		t.Errorf("metadata = %d %d %v", e, hash, err)
	}
	mv := shareMemberValue{rackID: new("r"), clientID: "c", clientHost: "/h", subscribedTopics: []string{"a", "b"}}
	got, err := decodeShareMemberValue(mv.encode())
	if err != nil || *got.rackID != "r" || got.clientID != "c" || got.clientHost != "/h" || !slices.Equal(got.subscribedTopics, mv.subscribedTopics) {
		t.Errorf("member = %+v %v", got, err)
	}
	init := map[[16]byte]initializedTopic{{1}: {name: "t", partitions: []int32{0, 2}, createdMs: 5}}
	back, err := decodeShareStatePartitionValue(shareStatePartitionValue(init))
	if err != nil || len(back) != 1 || back[[16]byte{1}].name != "t" || !slices.Equal(back[[16]byte{1}].partitions, []int32{0, 2}) || back[[16]byte{1}].createdMs != 5 {
		t.Errorf("state partition = %+v %v", back, err)
	}
	if _, err := decodeShareCurrentValue([]byte{0, 0, 1}); !errors.Is(err, errBadRecord) {
		t.Errorf("short current value: %v", err)
	}
}

// FuzzShareReplay folds an arbitrary record into a replay that holds a share
// group, then builds the groups and expires their members: nothing may
// panic.
func FuzzShareReplay(f *testing.F) {
	t0 := [16]byte{7}
	m := &shareMember{id: "m", rackID: "r", subscribedTopics: []string{"t"}, epoch: 4, previousEpoch: 3,
		assigned: topicPartitions{t0: {0, 1}}}
	for _, r := range []kv{
		shareEpochRecord("g", 4, 99),
		shareMemberRecord("g", m),
		shareTargetMemberRecord("g", "m", topicPartitions{t0: {0, 1}}),
		shareTargetEpochRecord("g", 4),
		shareCurrentRecord("g", m),
		shareStatePartitionRecord("g", map[[16]byte]initializedTopic{t0: {name: "t", partitions: []int32{0, 1}, createdMs: 1}}),
	} {
		f.Add(r.key, r.value)
		f.Add(r.key, []byte(nil))
	}
	cfg := DefaultConfig()
	f.Fuzz(func(t *testing.T, key, value []byte) {
		r := newReplay()
		epochRec := shareEpochRecord("g", 1, 0)
		r.apply(epochRec.key, epochRec.value)
		r.apply(key, value)
		for _, g := range r.groups(0, epoch, &cfg) {
			s := &step{now: epoch.Add(time.Hour), cfg: &cfg, log: slog.New(slog.DiscardHandler), stats: new(stats)}
			g.share.tick(s)
			g.share.stateName()
			g.share.initializedPartitions()
		}
	})
}

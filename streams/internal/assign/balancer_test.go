package assign

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// topologySource is a TaskSource as the runtime's: one task per partition
// of each subtopology's co-partitioned source topics.
type topologySource struct {
	subtopologies []testSubtopology
	err           error // answered instead, when set
}

type testSubtopology struct {
	topics   []string
	stateful bool
}

func (s *topologySource) Tasks(_ context.Context, topics map[string]int32) (Tasks, error) {
	if s.err != nil {
		return Tasks{}, s.err
	}
	out := Tasks{Partitions: map[TaskID][]TopicPartition{}, Stateful: map[TaskID]bool{}}
	for i, st := range s.subtopologies {
		n := int32(-1)
		for _, topic := range st.topics {
			count, ok := topics[topic]
			if !ok {
				return Tasks{}, fmt.Errorf("source topic %s not found: %w", topic, ErrIncompleteSourceTopicMetadata)
			}
			if n >= 0 && count != n {
				return Tasks{}, fmt.Errorf("source topics %v are not co-partitioned: %w", st.topics, ErrIncompleteSourceTopicMetadata)
			}
			n = count
		}
		for p := range n {
			id := TaskID{int32(i), p}
			for _, topic := range st.topics {
				out.Partitions[id] = append(out.Partitions[id], TopicPartition{topic, p})
			}
			if st.stateful {
				out.Stateful[id] = true
			}
		}
	}
	return out, nil
}

// wordsAndClicks: subtopology 0 reads words (stateful), 1 reads clicks.
func wordsAndClicks() *topologySource {
	return &topologySource{subtopologies: []testSubtopology{{[]string{"words"}, true}, {[]string{"clicks"}, false}}}
}

type testMember struct {
	id string
	b  *Balancer
}

func newTestMember(t *testing.T, id, process, endpoint string, src TaskSource) testMember {
	t.Helper()
	b, err := NewBalancer(Config{ProcessID: process, Endpoint: endpoint, Source: src, NumStandbyReplicas: 1})
	if err != nil {
		t.Fatal(err)
	}
	return testMember{id, b}
}

// leaderRound runs one rebalance in process: every member's JoinGroup
// metadata, the first member balancing as leader, every member parsing
// its SyncGroup assignment.
func leaderRound(t *testing.T, members []testMember, topics map[string]int32) (map[string]map[string][]int32, error) {
	t.Helper()
	interests := sortedKeys(topics)
	var join []kmsg.JoinGroupResponseMember
	for _, m := range members {
		join = append(join, kmsg.JoinGroupResponseMember{MemberID: m.id, ProtocolMetadata: m.b.JoinGroupMetadata(interests, nil, 1)})
	}
	mb, wanted, err := members[0].b.MemberBalancer(join)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(sortedKeys(wanted), interests) {
		t.Fatalf("member topics %v, want %v", sortedKeys(wanted), interests)
	}
	into, err := mb.(kgo.GroupMemberBalancerOrError).BalanceOrError(topics)
	if err != nil {
		return nil, err
	}
	got := map[string]map[string][]int32{}
	for _, a := range into.IntoSyncAssignment() {
		i := slices.IndexFunc(members, func(m testMember) bool { return m.id == a.MemberID })
		if i < 0 {
			t.Fatalf("assignment for unknown member %s", a.MemberID)
		}
		parts, err := members[i].b.ParseSyncAssignment(a.MemberAssignment)
		if err != nil {
			t.Fatal(err)
		}
		got[a.MemberID] = parts
	}
	if len(got) != len(members) {
		t.Fatalf("%d assignments for %d members", len(got), len(members))
	}
	return got, nil
}

func TestBalancerLeaderRound(t *testing.T) {
	src := wordsAndClicks()
	members := []testMember{
		newTestMember(t, "m1a", "p1", "h1:1", src),
		newTestMember(t, "m1b", "p1", "h1:1", src),
		newTestMember(t, "m2", "p2", "", src),
		newTestMember(t, "m3", "p3", "h3:3", src),
	}
	if members[0].b.ProtocolName() != "samsa-stream" || members[0].b.IsCooperative() {
		t.Fatalf("protocol %q cooperative %v", members[0].b.ProtocolName(), members[0].b.IsCooperative())
	}
	topics := map[string]int32{"words": 6, "clicks": 2}
	got, err := leaderRound(t, members, topics)
	if err != nil {
		t.Fatal(err)
	}
	owner := map[TopicPartition]string{}
	process := map[string]string{"m1a": "p1", "m1b": "p1", "m2": "p2", "m3": "p3"}
	for _, m := range members {
		ud := m.b.LastAssignment()
		if ud.ErrorCode != ErrNone {
			t.Fatalf("%s: error %v", m.id, ud.ErrorCode)
		}
		var fromTasks []TopicPartition
		for _, task := range ud.Active {
			fromTasks = append(fromTasks, TopicPartition{[]string{"words", "clicks"}[task.Subtopology], task.Partition})
		}
		var parts []TopicPartition
		for topic, ps := range got[m.id] {
			for _, p := range ps {
				parts = append(parts, TopicPartition{topic, p})
				if prev, dup := owner[TopicPartition{topic, p}]; dup {
					t.Fatalf("%s-%d assigned to %s and %s", topic, p, prev, m.id)
				}
				owner[TopicPartition{topic, p}] = m.id
			}
		}
		slices.SortFunc(parts, TopicPartition.compare)
		slices.SortFunc(fromTasks, TopicPartition.compare)
		if !slices.Equal(parts, fromTasks) {
			t.Errorf("%s: partitions %v, its active tasks %v", m.id, parts, ud.Active)
		}
		if n := len(ud.Active); n != 2 {
			t.Errorf("%s: %d active tasks, want 2 of 8 over 4 members", m.id, n)
		}
		for _, task := range ud.Standby {
			if task.Subtopology != 0 {
				t.Errorf("%s: standby of stateless task %s", m.id, task)
			}
			if owner := activeProcess(members, task); owner == process[m.id] {
				t.Errorf("%s: standby of %s, which its process runs", m.id, task)
			}
		}
		if len(ud.ActiveHosts) != 2 || len(ud.StandbyHosts) != 2 {
			t.Errorf("%s: hosts %v / %v, want h1:1 and h3:3 only", m.id, ud.ActiveHosts, ud.StandbyHosts)
		}
	}
	if len(owner) != 8 {
		t.Fatalf("%d of 8 partitions assigned", len(owner))
	}
	// The host map names the partitions each endpoint's process runs.
	hosts := members[0].b.LastAssignment().ActiveHosts
	for tp, m := range owner {
		endpoint := map[string]string{"p1": "h1:1", "p3": "h3:3"}[process[m]]
		if endpoint != "" && !slices.Contains(hosts[endpoint], tp) {
			t.Errorf("%v runs on %s but the host map's %s lacks it: %v", tp, m, endpoint, hosts)
		}
	}
}

func activeProcess(members []testMember, task TaskID) string {
	for _, m := range members {
		if slices.Contains(m.b.LastAssignment().Active, task) {
			return m.b.cfg.ProcessID
		}
	}
	return ""
}

func TestBalancerSendsErrorsToEveryMember(t *testing.T) {
	cases := []struct {
		name    string
		src     *topologySource
		topics  map[string]int32
		corrupt func([]testMember) // before the round
		want    AssignmentError
	}{
		{name: "missing source topic", src: wordsAndClicks(), topics: map[string]int32{"words": 3}, want: ErrIncompleteSourceTopicMetadata},
		{
			name:   "not co-partitioned",
			src:    &topologySource{subtopologies: []testSubtopology{{[]string{"left", "right"}, true}}},
			topics: map[string]int32{"left": 3, "right": 4},
			want:   ErrIncompleteSourceTopicMetadata,
		},
		{name: "shutdown requested", src: &topologySource{err: ErrShutdownRequested}, topics: map[string]int32{"words": 1}, want: ErrShutdownRequested},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			members := []testMember{newTestMember(t, "a", "p1", "", tc.src), newTestMember(t, "b", "p2", "", tc.src)}
			got, err := leaderRound(t, members, tc.topics)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range members {
				if code := m.b.LastAssignment().ErrorCode; code != tc.want {
					t.Errorf("%s: error code %d, want %d", m.id, code, tc.want)
				}
				if len(got[m.id]) != 0 {
					t.Errorf("%s: partitions %v with an error", m.id, got[m.id])
				}
			}
		})
	}
}

// A member whose user data is of a version the leader cannot read makes
// the leader send VERSION_PROBING to all.
func TestBalancerUnknownSubscriptionVersion(t *testing.T) {
	src := wordsAndClicks()
	members := []testMember{newTestMember(t, "a", "p1", "", src), newTestMember(t, "b", "p2", "", src)}
	var seen []AssignmentError
	members[1].b.cfg.OnAssignment = func(ud MemberUserData) { seen = append(seen, ud.ErrorCode) }
	topics := map[string]int32{"words": 2, "clicks": 2}
	var join []kmsg.JoinGroupResponseMember
	for _, m := range members {
		meta := kmsg.NewConsumerMemberMetadata()
		if err := meta.ReadFrom(m.b.JoinGroupMetadata(sortedKeys(topics), nil, 1)); err != nil {
			t.Fatal(err)
		}
		if m.id == "b" {
			binary.BigEndian.PutUint32(meta.UserData, 2)
		}
		join = append(join, kmsg.JoinGroupResponseMember{MemberID: m.id, ProtocolMetadata: meta.AppendTo(nil)})
	}
	mb, _, err := members[0].b.MemberBalancer(join)
	if err != nil {
		t.Fatal(err)
	}
	into, err := mb.(kgo.GroupMemberBalancerOrError).BalanceOrError(topics)
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range into.IntoSyncAssignment() {
		if _, err := members[i].b.ParseSyncAssignment(a.MemberAssignment); err != nil {
			t.Fatal(err)
		}
		if code := members[i].b.LastAssignment().ErrorCode; code != ErrVersionProbing {
			t.Errorf("%s: error code %d, want VERSION_PROBING", a.MemberID, code)
		}
	}
	if !slices.Equal(seen, []AssignmentError{ErrVersionProbing}) {
		t.Errorf("OnAssignment saw %v", seen)
	}
}

// Any other failure of the TaskSource fails the round, so the members
// join again (a timeout creating a repartition topic is worth a retry).
func TestBalancerRetriesOtherSourceErrors(t *testing.T) {
	src := &topologySource{err: errors.New("create repartition topic: timed out")}
	_, err := leaderRound(t, []testMember{newTestMember(t, "a", "p1", "", src)}, map[string]int32{"words": 1})
	if err == nil || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("err = %v, want the source's error", err)
	}
}

func TestBalancerRejectsBadData(t *testing.T) {
	b := newTestMember(t, "a", "p1", "", wordsAndClicks()).b
	ca := kmsg.NewConsumerMemberAssignment()
	ca.UserData = []byte{0, 0, 0, 1}
	if _, err := b.ParseSyncAssignment(ca.AppendTo(nil)); !errors.Is(err, ErrTruncated) {
		t.Errorf("truncated user data: err = %v", err)
	}
	if _, err := b.ParseSyncAssignment([]byte{0}); err == nil {
		t.Error("a one-byte assignment parsed")
	}
}

func TestNewBalancerRejects(t *testing.T) {
	src := wordsAndClicks()
	cases := []struct {
		cfg  Config
		want string
	}{
		{Config{Source: src}, "process ID is required"},
		{Config{ProcessID: "p"}, "TaskSource is required"},
		{Config{ProcessID: "p", Source: src, NumStandbyReplicas: -1}, "negative"},
		{Config{ProcessID: "p", Source: src, Endpoint: strings.Repeat("h", 1<<15)}, "longer than"},
		{Config{ProcessID: "p", Source: src, TaskTimeout: -1}, "negative"},
	}
	for _, tc := range cases {
		if _, err := NewBalancer(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err = %v, want %q", tc.cfg, err, tc.want)
		}
	}
}

// A member told of an error runs nothing, whatever partitions came along.
func TestBalancerErrorAssignmentHasNoPartitions(t *testing.T) {
	b := newTestMember(t, "a", "p1", "", wordsAndClicks()).b
	ud, err := EncodeAssignment(MemberUserData{ErrorCode: ErrAssignment, Active: tasks("0_0")})
	if err != nil {
		t.Fatal(err)
	}
	ca := kmsg.NewConsumerMemberAssignment()
	ca.Topics = []kmsg.ConsumerMemberAssignmentTopic{{Topic: "words", Partitions: []int32{0}}}
	ca.UserData = ud
	parts, err := b.ParseSyncAssignment(ca.AppendTo(nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(parts) != 0 || b.LastAssignment().ErrorCode != ErrAssignment {
		t.Fatalf("partitions %v, error %v", parts, b.LastAssignment().ErrorCode)
	}
}

package broker

// Bad input to the group APIs gets Apache Kafka's error for it and changes
// nothing: after each bad request the group under attack has the same
// state, members, assignment and committed offsets, its member is still in
// its generation, no group appeared, and the broker keeps serving. The
// requests are built by hand (rawMember in e2e_groups_clients_test.go):
// no client sends most of them.

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// codeName is a Kafka error code as Kafka spells it; NONE for 0.
func codeName(code int16) string {
	if code == 0 {
		return "NONE"
	}
	if ke, ok := kerr.ErrorForCode(code).(*kerr.Error); ok {
		return ke.Message
	}
	return fmt.Sprint("code ", code)
}

// codeNames spells a list of codes.
func codeNames(codes ...int16) string {
	names := make([]string, len(codes))
	for i, c := range codes {
		names[i] = codeName(c)
	}
	return strings.Join(names, " ")
}

// commitTopic is one topic of a hand-built OffsetCommit.
type commitTopic struct {
	topic      string
	id         [16]byte // v10+
	partitions []int32
}

// offsetCommitReq commits offset 100 (with metadata) to each partition.
func offsetCommitReq(version int16, group string, generation int32, memberID, metadata string, topics ...commitTopic) *kmsg.OffsetCommitRequest {
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version = version
	req.Group, req.Generation, req.MemberID = group, generation, memberID
	for _, ct := range topics {
		rt := kmsg.NewOffsetCommitRequestTopic()
		rt.Topic, rt.TopicID = ct.topic, ct.id
		for _, p := range ct.partitions {
			rp := kmsg.NewOffsetCommitRequestTopicPartition()
			rp.Partition, rp.Offset, rp.Metadata = p, 100, kmsg.StringPtr(metadata)
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
	}
	return req
}

// commitCodes lists an OffsetCommit response's codes in request order.
func commitCodes(resp kmsg.Response) string {
	var codes []int16
	for _, t := range resp.(*kmsg.OffsetCommitResponse).Topics {
		for _, p := range t.Partitions {
			codes = append(codes, p.ErrorCode)
		}
	}
	return codeNames(codes...)
}

// joinReq is a JoinGroup with a rebalance timeout of 10s.
func joinReq(version int16, group, memberID, protocolType string, sessionMillis int32, protocols ...kmsg.JoinGroupRequestProtocol) *kmsg.JoinGroupRequest {
	req := kmsg.NewPtrJoinGroupRequest()
	req.Version = version
	req.Group, req.MemberID, req.ProtocolType = group, memberID, protocolType
	req.SessionTimeoutMillis, req.RebalanceTimeoutMillis = sessionMillis, 10000
	req.Protocols = protocols
	return req
}

func joinCode(resp kmsg.Response) string {
	return codeName(resp.(*kmsg.JoinGroupResponse).ErrorCode)
}

func heartbeatReq(group, memberID string, generation int32, instanceID *string) *kmsg.HeartbeatRequest {
	req := kmsg.NewPtrHeartbeatRequest()
	req.Version = 4
	req.Group, req.MemberID, req.Generation, req.InstanceID = group, memberID, generation, instanceID
	return req
}

func heartbeatCode(resp kmsg.Response) string {
	return codeName(resp.(*kmsg.HeartbeatResponse).ErrorCode)
}

// syncReq is a SyncGroup v5 of the consumer protocol type.
func syncReq(group, memberID string, generation int32, protocol string, assignments map[string][]byte) *kmsg.SyncGroupRequest {
	req := kmsg.NewPtrSyncGroupRequest()
	req.Version = 5
	req.Group, req.MemberID, req.Generation = group, memberID, generation
	req.ProtocolType, req.Protocol = kmsg.StringPtr("consumer"), kmsg.StringPtr(protocol)
	for id, a := range assignments {
		ga := kmsg.NewSyncGroupRequestGroupAssignment()
		ga.MemberID, ga.MemberAssignment = id, a
		req.GroupAssignment = append(req.GroupAssignment, ga)
	}
	return req
}

func syncCode(resp kmsg.Response) string {
	return codeName(resp.(*kmsg.SyncGroupResponse).ErrorCode)
}

// offsetFetchV8 asks for the offsets of groups, each with topics (nil:
// all of them).
func offsetFetchV8(groups map[string][]kmsg.OffsetFetchRequestGroupTopic, order ...string) *kmsg.OffsetFetchRequest {
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Version = 8
	for _, g := range order {
		rg := kmsg.NewOffsetFetchRequestGroup()
		rg.Group, rg.Topics = g, groups[g]
		req.Groups = append(req.Groups, rg)
	}
	return req
}

func fetchTopic(topic string, partitions ...int32) kmsg.OffsetFetchRequestGroupTopic {
	ft := kmsg.NewOffsetFetchRequestGroupTopic()
	ft.Topic, ft.Partitions = topic, partitions
	return ft
}

// fetchedOffsets shows a v8 OffsetFetch answer: each group's code, then
// each partition's offset and code.
func fetchedOffsets(resp kmsg.Response) string {
	var b strings.Builder
	for _, g := range resp.(*kmsg.OffsetFetchResponse).Groups {
		fmt.Fprintf(&b, "%s:%s", g.Group, codeName(g.ErrorCode))
		for _, t := range g.Topics {
			for _, p := range t.Partitions {
				fmt.Fprintf(&b, " %s/%d=%d,%s", t.Topic, p.Partition, p.Offset, codeName(p.ErrorCode))
			}
		}
		b.WriteString("; ")
	}
	return strings.TrimSuffix(b.String(), "; ")
}

// groupSnapshot is what a bad request must leave as it was: group as
// DescribeGroups shows it, its committed offsets, the groups that exist,
// and its member's standing (a heartbeat in its generation).
func groupSnapshot(c, member *rawMember) string {
	var b strings.Builder
	dreq := kmsg.NewPtrDescribeGroupsRequest()
	dreq.Version = 5
	dreq.Groups = []string{member.group}
	for _, g := range c.call(dreq).(*kmsg.DescribeGroupsResponse).Groups {
		fmt.Fprintf(&b, "group %s: %s state=%s type=%s protocol=%s\n", g.Group, codeName(g.ErrorCode), g.State, g.ProtocolType, g.Protocol)
		for _, m := range g.Members {
			fmt.Fprintf(&b, "  member %s client=%s host=%s metadata=%x assignment=%x\n", m.MemberID, m.ClientID, m.ClientHost, m.ProtocolMetadata, m.MemberAssignment)
		}
	}
	fmt.Fprintf(&b, "offsets %s\n", fetchedOffsets(c.call(offsetFetchV8(nil, member.group))))
	lreq := kmsg.NewPtrListGroupsRequest()
	lreq.Version = 4
	lresp := c.call(lreq).(*kmsg.ListGroupsResponse)
	fmt.Fprintf(&b, "groups %s:", codeName(lresp.ErrorCode))
	for _, g := range lresp.Groups {
		fmt.Fprintf(&b, " %s(%s,%s)", g.Group, g.ProtocolType, g.GroupState)
	}
	fmt.Fprintf(&b, "\nmember heartbeat %s\n", codeName(member.heartbeat()))
	return b.String()
}

// badGroupsFixture is the group under attack: one member of protocol type
// "consumer" and protocol "range", its own leader, owning both partitions
// of the topic and having committed offsets 3 and 7; and a connection to
// attack from.
func badGroupsFixture(t *testing.T, b *Broker, group, topic string) (member, attacker *rawMember) {
	t.Helper()
	createTopic(t, b, topic, 2)
	member = newRawMember(t, b, group, "consumer", 30*time.Second, consumerProtocol("range", topic))
	member.join()
	if member.leader != member.memberID {
		t.Fatalf("the only member %s is not the leader %s", member.memberID, member.leader)
	}
	if code := member.sync(map[string][]byte{member.memberID: consumerAssignment(topic, 0, 1)}); code != 0 {
		t.Fatalf("sync: %v", kerr.ErrorForCode(code))
	}
	for p, code := range member.commit(topic, map[int32]int64{0: 3, 1: 7}) {
		if code != 0 {
			t.Fatalf("commit partition %d: %v", p, kerr.ErrorForCode(code))
		}
	}
	return member, newRawMember(t, b, group, "consumer", 30*time.Second)
}

// A table of bad requests to the group APIs, each answered with Kafka's
// error, none changing the group.
func TestBadInputGroups(t *testing.T) {
	b := startGroupBroker(t, t.TempDir())
	healthy := newHealthyClient(t, b)
	const group, topic = "bad-g", "bi"
	m, attacker := badGroupsFixture(t, b, group, topic)
	baseline := groupSnapshot(attacker, m)
	for _, want := range []string{"state=Stable type=consumer protocol=range", "bi/0=3,NONE bi/1=7,NONE", "member heartbeat NONE"} {
		if !strings.Contains(baseline, want) {
			t.Fatalf("baseline lacks %q:\n%s", want, baseline)
		}
	}
	gen, id := m.generation, m.memberID
	rangeProto := consumerProtocol("range", topic)
	known := commitTopic{topic: topic, partitions: []int32{0, 1}}
	unknownTopic := commitTopic{topic: "no-such-topic", partitions: []int32{0}}

	cases := []struct {
		name string
		req  kmsg.Request
		got  func(kmsg.Response) string
		want string
	}{
		// OffsetCommit.
		{"OffsetCommit of an unknown topic and an unknown partition",
			offsetCommitReq(8, group, gen, id, "", unknownTopic, commitTopic{topic: topic, partitions: []int32{2}}),
			commitCodes, "UNKNOWN_TOPIC_OR_PARTITION UNKNOWN_TOPIC_OR_PARTITION"},
		{"OffsetCommit v10 of an unknown topic ID",
			offsetCommitReq(10, group, gen, id, "", commitTopic{id: [16]byte{1, 2, 3}, partitions: []int32{0}}),
			commitCodes, "UNKNOWN_TOPIC_ID"},
		{"OffsetCommit from a stale generation",
			offsetCommitReq(8, group, gen-1, id, "", known), commitCodes, "ILLEGAL_GENERATION ILLEGAL_GENERATION"},
		{"OffsetCommit from a future generation",
			offsetCommitReq(7, group, gen+1, id, "", known), commitCodes, "ILLEGAL_GENERATION ILLEGAL_GENERATION"},
		{"OffsetCommit from an unknown member",
			offsetCommitReq(8, group, gen, "nobody", "", known), commitCodes, "UNKNOWN_MEMBER_ID UNKNOWN_MEMBER_ID"},
		{"OffsetCommit without member or generation to a group with members",
			offsetCommitReq(8, group, -1, "", "", known), commitCodes, "UNKNOWN_MEMBER_ID UNKNOWN_MEMBER_ID"},
		{"OffsetCommit from a member of a group that does not exist (v8)",
			offsetCommitReq(8, "ghost", 1, "nobody", "", known), commitCodes, "ILLEGAL_GENERATION ILLEGAL_GENERATION"},
		{"OffsetCommit from a member of a group that does not exist (v9, KIP-848)",
			offsetCommitReq(9, "ghost", 1, "nobody", "", known), commitCodes, "GROUP_ID_NOT_FOUND GROUP_ID_NOT_FOUND"},
		{"OffsetCommit of unknown topics only, to a group that does not exist",
			offsetCommitReq(8, "ghost", -1, "", "", unknownTopic), commitCodes, "UNKNOWN_TOPIC_OR_PARTITION"},
		{"OffsetCommit with metadata over offset.metadata.max.bytes",
			offsetCommitReq(8, group, gen, id, strings.Repeat("m", 4097), known), commitCodes, "OFFSET_METADATA_TOO_LARGE OFFSET_METADATA_TOO_LARGE"},

		// JoinGroup: every one answered at once, none starting a rebalance.
		{"JoinGroup of a new member with another protocol type",
			joinReq(9, group, "", "connect", 30000, rangeProto), joinCode, "INCONSISTENT_GROUP_PROTOCOL"},
		{"JoinGroup of the member itself with another protocol type",
			joinReq(9, group, id, "connect", 30000, rangeProto), joinCode, "INCONSISTENT_GROUP_PROTOCOL"},
		{"JoinGroup of a new member with no protocol in common",
			joinReq(5, group, "", "consumer", 30000, consumerProtocol("roundrobin", topic)), joinCode, "INCONSISTENT_GROUP_PROTOCOL"},
		{"JoinGroup without protocols",
			joinReq(9, group, "", "consumer", 30000), joinCode, "INCONSISTENT_GROUP_PROTOCOL"},
		{"JoinGroup with a session timeout below group.min.session.timeout.ms",
			joinReq(9, group, "", "consumer", 999, rangeProto), joinCode, "INVALID_SESSION_TIMEOUT"},
		{"JoinGroup of the member itself with a session timeout below the minimum",
			joinReq(9, group, id, "consumer", 999, rangeProto), joinCode, "INVALID_SESSION_TIMEOUT"},
		{"JoinGroup v0 with a session timeout above group.max.session.timeout.ms",
			joinReq(0, group, "", "consumer", 60001, rangeProto), joinCode, "INVALID_SESSION_TIMEOUT"},
		{"JoinGroup with an empty group ID",
			joinReq(9, "", "", "consumer", 30000, rangeProto), joinCode, "INVALID_GROUP_ID"},
		{"JoinGroup with an unknown member ID",
			joinReq(9, group, "nobody", "consumer", 30000, rangeProto), joinCode, "UNKNOWN_MEMBER_ID"},
		{"JoinGroup with a member ID, to a group that does not exist",
			joinReq(9, "ghost", "nobody", "consumer", 30000, rangeProto), joinCode, "UNKNOWN_MEMBER_ID"},

		// Heartbeat.
		{"Heartbeat to a group that does not exist",
			heartbeatReq("ghost", id, gen, nil), heartbeatCode, "UNKNOWN_MEMBER_ID"},
		{"Heartbeat with an empty group ID",
			heartbeatReq("", id, gen, nil), heartbeatCode, "INVALID_GROUP_ID"},
		{"Heartbeat from a stale generation",
			heartbeatReq(group, id, gen-1, nil), heartbeatCode, "ILLEGAL_GENERATION"},
		{"Heartbeat from an unknown member",
			heartbeatReq(group, "nobody", gen, nil), heartbeatCode, "UNKNOWN_MEMBER_ID"},
		{"Heartbeat with an instance ID the group does not know",
			heartbeatReq(group, id, gen, kmsg.StringPtr("ghost-instance")), heartbeatCode, "UNKNOWN_MEMBER_ID"},

		// SyncGroup.
		{"SyncGroup to a group that does not exist",
			syncReq("ghost", id, gen, "range", nil), syncCode, "UNKNOWN_MEMBER_ID"},
		{"SyncGroup from a stale generation",
			syncReq(group, id, gen-1, "range", nil), syncCode, "ILLEGAL_GENERATION"},
		{"SyncGroup from an unknown member",
			syncReq(group, "nobody", gen, "range", nil), syncCode, "UNKNOWN_MEMBER_ID"},
		{"SyncGroup naming another protocol",
			syncReq(group, id, gen, "roundrobin", nil), syncCode, "INCONSISTENT_GROUP_PROTOCOL"},
		{"SyncGroup from the leader of a Stable group with a new assignment",
			syncReq(group, id, gen, "range", map[string][]byte{id: consumerAssignment(topic, 1)}),
			func(resp kmsg.Response) string {
				sr := resp.(*kmsg.SyncGroupResponse)
				return fmt.Sprintf("%s %x", codeName(sr.ErrorCode), sr.MemberAssignment)
			}, fmt.Sprintf("NONE %x", consumerAssignment(topic, 0, 1))},

		// LeaveGroup.
		{"LeaveGroup of an unknown member",
			func() kmsg.Request {
				req := kmsg.NewPtrLeaveGroupRequest()
				req.Version = 4
				req.Group = group
				lm := kmsg.NewLeaveGroupRequestMember()
				lm.MemberID = "nobody"
				req.Members = append(req.Members, lm)
				return req
			}(),
			func(resp kmsg.Response) string {
				lr := resp.(*kmsg.LeaveGroupResponse)
				var codes []int16
				for _, lm := range lr.Members {
					codes = append(codes, lm.ErrorCode)
				}
				return codeName(lr.ErrorCode) + " " + codeNames(codes...)
			}, "NONE UNKNOWN_MEMBER_ID"},

		// DeleteGroups.
		{"DeleteGroups of a group with members and of a group that does not exist",
			func() kmsg.Request {
				req := kmsg.NewPtrDeleteGroupsRequest()
				req.Version = 2
				req.Groups = []string{group, "ghost"}
				return req
			}(),
			func(resp kmsg.Response) string {
				var codes []int16
				for _, g := range resp.(*kmsg.DeleteGroupsResponse).Groups {
					codes = append(codes, g.ErrorCode)
				}
				return codeNames(codes...)
			}, "NON_EMPTY_GROUP GROUP_ID_NOT_FOUND"},

		// Reads of groups that do not exist, which must not create them.
		{"OffsetFetch v1 of a group that does not exist",
			func() kmsg.Request {
				req := kmsg.NewPtrOffsetFetchRequest()
				req.Version = 1
				req.Group = "ghost"
				rt := kmsg.NewOffsetFetchRequestTopic()
				rt.Topic, rt.Partitions = topic, []int32{0, 1}
				req.Topics = append(req.Topics, rt)
				return req
			}(),
			func(resp kmsg.Response) string {
				var b strings.Builder
				for _, rt := range resp.(*kmsg.OffsetFetchResponse).Topics {
					for _, p := range rt.Partitions {
						fmt.Fprintf(&b, "%s/%d=%d,%s ", rt.Topic, p.Partition, p.Offset, codeName(p.ErrorCode))
					}
				}
				return strings.TrimSpace(b.String())
			}, "bi/0=-1,NONE bi/1=-1,NONE"},
		{"OffsetFetch v8 of groups that do not exist, some topics and all topics",
			offsetFetchV8(map[string][]kmsg.OffsetFetchRequestGroupTopic{"ghost": {fetchTopic(topic, 0, 1)}}, "ghost", "ghost2"),
			fetchedOffsets, "ghost:NONE bi/0=-1,NONE bi/1=-1,NONE; ghost2:NONE"},
		{"DescribeGroups v5 and v6 of a group that does not exist",
			func() kmsg.Request {
				req := kmsg.NewPtrDescribeGroupsRequest()
				req.Version = 5
				req.Groups = []string{"ghost"}
				return req
			}(),
			func(resp kmsg.Response) string {
				g := resp.(*kmsg.DescribeGroupsResponse).Groups[0]
				return fmt.Sprintf("%s %s %d members", codeName(g.ErrorCode), g.State, len(g.Members))
			}, "NONE Dead 0 members"},
		{"DescribeGroups v6 of a group that does not exist (KIP-1043)",
			func() kmsg.Request {
				req := kmsg.NewPtrDescribeGroupsRequest()
				req.Version = 6
				req.Groups = []string{"ghost"}
				return req
			}(),
			func(resp kmsg.Response) string {
				g := resp.(*kmsg.DescribeGroupsResponse).Groups[0]
				return fmt.Sprintf("%s %s %d members", codeName(g.ErrorCode), g.State, len(g.Members))
			}, "GROUP_ID_NOT_FOUND Dead 0 members"},
	}
	for _, tc := range cases {
		if got := tc.got(attacker.call(tc.req)); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
		if after := groupSnapshot(attacker, m); after != baseline {
			t.Fatalf("%s changed the group:\n%s\nwas:\n%s", tc.name, after, baseline)
		}
	}
	stillServes(t, attacker.rc)
	healthy.check(t)
}

// Kafka checks the topics of an OffsetCommit before it hands the request to
// the group coordinator (KafkaApis.handleOffsetCommitRequest): a partition
// of an unknown topic is UNKNOWN_TOPIC_OR_PARTITION whatever is wrong with
// the member or its generation, and a request naming only unknown topics
// never reaches the coordinator.
func TestBadInputGroupCommitChecksTopicsFirst(t *testing.T) {
	b := startGroupBroker(t, t.TempDir())
	const group, topic = "bad-g", "bi"
	m, attacker := badGroupsFixture(t, b, group, topic)
	baseline := groupSnapshot(attacker, m)
	known := commitTopic{topic: topic, partitions: []int32{0}}
	unknownTopic := commitTopic{topic: "no-such-topic", partitions: []int32{0}}
	for _, tc := range []struct {
		name string
		req  *kmsg.OffsetCommitRequest
		want string
	}{
		{"stale generation", offsetCommitReq(8, group, m.generation-1, m.memberID, "", unknownTopic, known),
			"UNKNOWN_TOPIC_OR_PARTITION ILLEGAL_GENERATION"},
		{"unknown member", offsetCommitReq(8, group, m.generation, "nobody", "", known, unknownTopic),
			"UNKNOWN_MEMBER_ID UNKNOWN_TOPIC_OR_PARTITION"},
		{"member of a group that does not exist", offsetCommitReq(8, "ghost", 1, "nobody", "", unknownTopic),
			"UNKNOWN_TOPIC_OR_PARTITION"},
	} {
		if got := commitCodes(attacker.call(tc.req)); got != tc.want {
			t.Errorf("OffsetCommit, %s: %s, want %s", tc.name, got, tc.want)
		}
	}
	if after := groupSnapshot(attacker, m); after != baseline {
		t.Errorf("the commits changed the group:\n%s\nwas:\n%s", after, baseline)
	}
}

// For backward compatibility Kafka serves the empty group ID in the
// offset and admin APIs (GroupCoordinatorService: OffsetCommit,
// OffsetFetch, DescribeGroups and DeleteGroups refuse only a null ID);
// only the membership APIs answer INVALID_GROUP_ID for it.
func TestBadInputGroupEmptyIDInOffsetAPIs(t *testing.T) {
	b := startGroupBroker(t, t.TempDir())
	const topic = "bi"
	createTopic(t, b, topic, 1)
	// FindCoordinator for another key creates __consumer_offsets; what
	// Kafka answers FindCoordinator for "" is not in question here.
	c := newRawMember(t, b, "creates-offsets-topic", "consumer", 30*time.Second)
	if got := commitCodes(c.call(offsetCommitReq(8, "", -1, "", "", commitTopic{topic: topic, partitions: []int32{0}}))); got != "NONE" {
		t.Errorf("simple OffsetCommit to group \"\": %s, want NONE", got)
	}
	if got := fetchedOffsets(c.call(offsetFetchV8(map[string][]kmsg.OffsetFetchRequestGroupTopic{"": {fetchTopic(topic, 0)}}, ""))); got != ":NONE bi/0=100,NONE" {
		t.Errorf("OffsetFetch of group \"\": %s, want :NONE bi/0=100,NONE", got)
	}
	dreq := kmsg.NewPtrDescribeGroupsRequest()
	dreq.Version = 5
	dreq.Groups = []string{""}
	if g := c.call(dreq).(*kmsg.DescribeGroupsResponse).Groups[0]; g.ErrorCode != 0 || g.State != "Empty" {
		t.Errorf("DescribeGroups of group \"\": %s state %s, want NONE Empty", codeName(g.ErrorCode), g.State)
	}
	delReq := kmsg.NewPtrDeleteGroupsRequest()
	delReq.Version = 2
	delReq.Groups = []string{""}
	if g := c.call(delReq).(*kmsg.DeleteGroupsResponse).Groups[0]; g.ErrorCode != 0 {
		t.Errorf("DeleteGroups of group \"\": %s, want NONE", codeName(g.ErrorCode))
	}
	if got := fetchedOffsets(c.call(offsetFetchV8(map[string][]kmsg.OffsetFetchRequestGroupTopic{"": {fetchTopic(topic, 0)}}, ""))); got != ":NONE bi/0=-1,NONE" {
		t.Errorf("OffsetFetch of group \"\" once deleted: %s, want :NONE bi/0=-1,NONE", got)
	}
}

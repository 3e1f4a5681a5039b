package group

import (
	"context"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// ShareGroupHeartbeat handles ShareGroupHeartbeat v1 (KIP-932), the share
// group protocol's one request: a member names itself (MemberID, made by
// the client), joins with epoch 0 and its subscribed topic names,
// heartbeats every HeartbeatIntervalMillis with its epoch, and leaves with
// -1. The target assignment comes from the "simple" assignor, which may give
// a partition to several members; a member gets its target at its next
// heartbeat, with no revocation. It never blocks.
//
// A malformed request answers INVALID_REQUEST, as Kafka's validation: no
// group ID or member ID, an empty rack ID, a join without subscribed
// topics, an epoch below -1. A group ID held by a classic or consumer group
// answers GROUP_ID_NOT_FOUND, as in Kafka (groups do not convert to or from
// share groups); so does a heartbeat (epoch other than 0) to a group that
// does not exist. group.share.max.size bounds the members
// (GROUP_MAX_SIZE_REACHED).
func (c *Coordinator) ShareGroupHeartbeat(ctx context.Context, req *kmsg.ShareGroupHeartbeatRequest) *kmsg.ShareGroupHeartbeatResponse {
	resp := req.ResponseKind().(*kmsg.ShareGroupHeartbeatResponse)
	res := checkSHRequest(req)
	if res == nil {
		res = c.shareHeartbeat(newSHRequest(ctx, req))
	}
	resp.ErrorCode = res.code
	if res.code != 0 {
		if res.message != "" {
			resp.ErrorMessage = new(res.message)
		}
		return resp
	}
	resp.MemberID = new(res.memberID)
	resp.MemberEpoch = res.epoch
	resp.HeartbeatIntervalMillis = int32(res.interval.Milliseconds())
	if res.withAssignment {
		a := kmsg.NewShareGroupHeartbeatResponseAssignment()
		a.TopicPartitions = []kmsg.ShareGroupHeartbeatResponseAssignmentTopicPartition{}
		for _, t := range res.assignment.topics() {
			at := kmsg.NewShareGroupHeartbeatResponseAssignmentTopicPartition()
			at.TopicID, at.Partitions = t, slices.Clone(res.assignment[t])
			a.TopicPartitions = append(a.TopicPartitions, at)
		}
		resp.Assignment = &a
	}
	return resp
}

// checkSHRequest is Kafka's validation of a share heartbeat, before any
// group is looked at.
func checkSHRequest(req *kmsg.ShareGroupHeartbeatRequest) *shResult {
	invalid := func(msg string) *shResult { return shError(codeInvalidRequest, "%s", msg) }
	switch {
	case req.GroupID == "":
		return invalid("GroupId can't be empty.")
	case req.RackID != nil && *req.RackID == "":
		return invalid("RackId can't be empty.")
	case req.MemberEpoch == joinEpoch && len(req.SubscribedTopicNames) == 0:
		return invalid("SubscribedTopicNames must be set in first request.")
	case req.MemberEpoch < leaveEpoch:
		return invalid("MemberEpoch is invalid.")
	case req.MemberID == "":
		return invalid("MemberId can't be empty.")
	}
	return nil
}

// newSHRequest copies what the state machine keeps out of a heartbeat (a
// decoded request aliases the connection's buffer).
func newSHRequest(ctx context.Context, req *kmsg.ShareGroupHeartbeatRequest) *shRequest {
	r := &shRequest{
		group:    strings.Clone(req.GroupID),
		memberID: strings.Clone(req.MemberID),
		epoch:    req.MemberEpoch,
		rackID:   cloneString(req.RackID),
	}
	if info, ok := ctx.Value(clientKey{}).(clientInfo); ok {
		r.clientID, r.clientHost = strings.Clone(info.id), strings.Clone(info.host)
	}
	if req.SubscribedTopicNames != nil {
		r.topics = make([]string, 0, len(req.SubscribedTopicNames))
		for _, t := range req.SubscribedTopicNames {
			r.topics = append(r.topics, strings.Clone(t))
		}
		slices.Sort(r.topics)
		r.topics = slices.Compact(r.topics)
	}
	return r
}

// shareHeartbeat runs a validated heartbeat's turn.
func (c *Coordinator) shareHeartbeat(r *shRequest) *shResult {
	g, code := c.lockGroup(r.group, r.epoch == joinEpoch)
	if g == nil {
		if code == 0 {
			return shError(codeGroupIDNotFound, "share group %s not found", r.group)
		}
		return &shResult{code: code}
	}
	s := c.newStep(g)
	var res *shResult
	switch {
	case g.kind == protocolShare:
	case g.kind == protocolClassic && g.blank() && r.epoch == joinEpoch:
		// The blank classic group lockGroup made for a group ID nobody
		// used: it becomes the share group.
		g.kind, g.share = protocolShare, newShareGroup(g.id)
		s.onUndo(func() { g.kind = protocolClassic })
	default:
		res = shError(codeGroupIDNotFound, "group %s is not a share group", r.group)
	}
	if res == nil {
		res = g.share.heartbeat(s, r)
	}
	if res.code != 0 {
		s.rollback()
	}
	c.finishTurn(g, s)
	return res
}

// ShareGroupDescribe handles ShareGroupDescribe v1 (KIP-932): each share
// group's state (Empty, Stable or Dead), group and assignment epochs, the
// assignor ("simple") and its members with their subscriptions and
// assignments (topics by ID and name; topics that no longer exist are left
// out). A group that does not exist or is not a share group answers
// GROUP_ID_NOT_FOUND, as in Kafka. AuthorizedOperations is left for the
// broker to fill in.
func (c *Coordinator) ShareGroupDescribe(ctx context.Context, req *kmsg.ShareGroupDescribeRequest) *kmsg.ShareGroupDescribeResponse {
	resp := req.ResponseKind().(*kmsg.ShareGroupDescribeResponse)
	for _, id := range req.GroupIDs {
		dg := kmsg.NewShareGroupDescribeResponseGroup()
		dg.GroupID = id
		c.describeShare(&dg)
		resp.Groups = append(resp.Groups, dg)
	}
	return resp
}

func (c *Coordinator) describeShare(dg *kmsg.ShareGroupDescribeResponseGroup) {
	if dg.GroupID == "" {
		dg.ErrorCode = codeInvalidGroupID
		return
	}
	g, code := c.lockGroup(dg.GroupID, false)
	switch {
	case g == nil && code != 0:
		dg.ErrorCode = code
		return
	case g == nil:
		dg.ErrorCode, dg.ErrorMessage = codeGroupIDNotFound, new("group "+dg.GroupID+" not found")
		return
	}
	defer g.mu.Unlock()
	if g.kind != protocolShare {
		dg.ErrorCode, dg.ErrorMessage = codeGroupIDNotFound, new("group "+dg.GroupID+" is not a share group")
		return
	}
	s := c.newStep(g)
	sg := &g.share
	dg.GroupState = sg.stateName()
	dg.GroupEpoch = sg.epoch
	dg.AssignmentEpoch = sg.assignmentEpoch
	dg.Assignor = shareAssignorName
	dg.Members = []kmsg.ShareGroupDescribeResponseGroupMember{}
	for _, m := range sg.sortedMembers() {
		dm := kmsg.NewShareGroupDescribeResponseGroupMember()
		dm.MemberID = m.id
		if m.rackID != "" {
			dm.RackID = new(m.rackID)
		}
		dm.MemberEpoch = m.epoch
		dm.ClientID, dm.ClientHost = m.clientID, m.clientHost
		dm.SubscribedTopicNames = slices.Clone(m.subscribedTopics)
		if dm.SubscribedTopicNames == nil {
			dm.SubscribedTopicNames = []string{}
		}
		dm.Assignment.TopicPartitions = []kmsg.ShareGroupDescribeResponseGroupMemberAssignmentTopicPartition{}
		for _, tp := range describeAssignment(s, m.assigned).TopicPartitions {
			dm.Assignment.TopicPartitions = append(dm.Assignment.TopicPartitions,
				kmsg.ShareGroupDescribeResponseGroupMemberAssignmentTopicPartition{TopicID: tp.TopicID, Topic: tp.Topic, Partitions: tp.Partitions})
		}
		dg.Members = append(dg.Members, dm)
	}
}

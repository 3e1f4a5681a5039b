package group

import (
	"bytes"
	"context"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// JoinGroup handles JoinGroup v0-v9 and blocks, as Kafka's join purgatory
// does, until the join phase completes, the request is otherwise answered,
// or ctx ends (then NOT_COORDINATOR; a client whose connection is gone never
// reads it). clientHost is the client's address as Kafka reports it in
// DescribeGroups ("/127.0.0.1").
//
//   - v1: the rebalance timeout (KIP-62); v0 members use their session
//     timeout for both.
//   - v4: a first join without a member ID answers MEMBER_ID_REQUIRED with
//     the ID to come back with (KIP-394).
//   - v5: group.instance.id, static membership (KIP-345).
//   - v7: the protocol type in the response.
//   - v8: the reason, logged.
//   - v9: skipAssignment for a restarted static leader (KIP-814).
func (c *Coordinator) JoinGroup(ctx context.Context, req *kmsg.JoinGroupRequest, clientID, clientHost string) *kmsg.JoinGroupResponse {
	w := c.startJoin(req, clientID, clientHost)
	return c.awaitJoin(ctx, w, req.MemberID).response(req)
}

func (c *Coordinator) awaitJoin(ctx context.Context, w <-chan joinResult, memberID string) joinResult {
	select {
	case r := <-w:
		return r
	default:
	}
	if c.waitHook != nil {
		c.waitHook()
	}
	select {
	case r := <-w:
		return r
	case <-ctx.Done():
		return joinError(memberID, codeNotCoordinator)
	}
}

// startJoin runs a JoinGroup's turn and returns where its answer arrives:
// already there, or once a later turn completes the join phase.
func (c *Coordinator) startJoin(req *kmsg.JoinGroupRequest, clientID, clientHost string) <-chan joinResult {
	w := make(chan joinResult, 1)
	if code := c.checkJoin(req); code != 0 {
		w <- joinError(req.MemberID, code)
		return w
	}
	g, code := c.lockGroup(req.Group, req.MemberID == "")
	if g == nil {
		if code == 0 {
			// A member ID for a group that does not exist: the client
			// drops its ID and joins afresh.
			code = codeUnknownMemberID
		}
		w <- joinError(req.MemberID, code)
		return w
	}
	s := c.newStep(g)
	if g.kind == protocolConsumer && g.consumer.empty() && req.MemberID == "" {
		// Kafka turns an empty consumer group into a classic group for
		// a classic member; one with members would need online
		// migration, which is not done.
		g.convertToClassic(s)
	}
	if g.kind != protocolClassic {
		s.replyJoin(w, joinError(req.MemberID, codeInconsistentGroupProtocol))
	} else {
		j := newJoinRequest(req, clientID, clientHost, w)
		if j.reason != "" {
			s.log.Debug("join", "member", j.memberID, "reason", j.reason)
		}
		g.classic.join(s, j)
	}
	c.finishTurn(g, s)
	return w
}

// checkJoin refuses what no group state could accept.
func (c *Coordinator) checkJoin(req *kmsg.JoinGroupRequest) int16 {
	session := time.Duration(req.SessionTimeoutMillis) * time.Millisecond
	switch {
	case req.Group == "":
		return codeInvalidGroupID
	case session < c.cfg.MinSessionTimeout || session > c.cfg.MaxSessionTimeout:
		return codeInvalidSessionTimeout
	case req.ProtocolType == "" || len(req.Protocols) == 0:
		return codeInconsistentGroupProtocol
	}
	return 0
}

func newJoinRequest(req *kmsg.JoinGroupRequest, clientID, clientHost string, w chan<- joinResult) *joinRequest {
	j := &joinRequest{
		version:          req.Version,
		memberID:         strings.Clone(req.MemberID),
		clientID:         strings.Clone(clientID),
		clientHost:       strings.Clone(clientHost),
		sessionTimeout:   time.Duration(req.SessionTimeoutMillis) * time.Millisecond,
		rebalanceTimeout: time.Duration(req.RebalanceTimeoutMillis) * time.Millisecond,
		protocolType:     strings.Clone(req.ProtocolType),
		protocols:        make([]protocol, len(req.Protocols)),
		waiter:           w,
	}
	if req.Version == 0 {
		j.rebalanceTimeout = j.sessionTimeout
	}
	if req.InstanceID != nil {
		j.instanceID = strings.Clone(*req.InstanceID)
	}
	if req.Reason != nil {
		j.reason = *req.Reason
	}
	for i, p := range req.Protocols {
		j.protocols[i] = protocol{name: strings.Clone(p.Name), metadata: bytes.Clone(p.Metadata)}
	}
	return j
}

func (r joinResult) response(req *kmsg.JoinGroupRequest) *kmsg.JoinGroupResponse {
	resp := req.ResponseKind().(*kmsg.JoinGroupResponse)
	resp.ErrorCode = r.code
	resp.Generation = r.generation
	resp.MemberID = r.memberID
	resp.LeaderID = r.leader
	resp.SkipAssignment = r.skipAssignment
	resp.Members = r.members
	if r.code == 0 {
		resp.ProtocolType = new(r.protocolType)
		resp.Protocol = new(r.protocolName)
	}
	return resp
}

// SyncGroup handles SyncGroup v0-v5 and blocks, like JoinGroup, until the
// leader's assignment is stored (or the generation fails). v3 adds the
// instance ID; v5 the protocol type and name, checked against the group's.
func (c *Coordinator) SyncGroup(ctx context.Context, req *kmsg.SyncGroupRequest) *kmsg.SyncGroupResponse {
	w := c.startSync(req)
	return c.awaitSync(ctx, w).response(req)
}

func (c *Coordinator) awaitSync(ctx context.Context, w <-chan syncResult) syncResult {
	select {
	case r := <-w:
		return r
	default:
	}
	if c.waitHook != nil {
		c.waitHook()
	}
	select {
	case r := <-w:
		return r
	case <-ctx.Done():
		return syncResult{code: codeNotCoordinator}
	}
}

func (c *Coordinator) startSync(req *kmsg.SyncGroupRequest) <-chan syncResult {
	w := make(chan syncResult, 1)
	if req.Group == "" {
		w <- syncResult{code: codeInvalidGroupID}
		return w
	}
	g, code := c.lockGroup(req.Group, false)
	if g == nil {
		if code == 0 {
			code = codeUnknownMemberID
		}
		w <- syncResult{code: code}
		return w
	}
	s := c.newStep(g)
	if g.kind != protocolClassic {
		s.replySync(w, syncResult{code: codeUnknownMemberID})
	} else {
		g.classic.sync(s, newSyncRequest(req, w))
	}
	c.finishTurn(g, s)
	return w
}

func newSyncRequest(req *kmsg.SyncGroupRequest, w chan<- syncResult) *syncRequest {
	r := &syncRequest{
		memberID:     req.MemberID,
		generation:   req.Generation,
		protocolType: req.ProtocolType,
		protocolName: req.Protocol,
		waiter:       w,
	}
	if req.InstanceID != nil {
		r.instanceID = *req.InstanceID
	}
	if len(req.GroupAssignment) > 0 {
		r.assignments = make(map[string][]byte, len(req.GroupAssignment))
		for _, a := range req.GroupAssignment {
			r.assignments[strings.Clone(a.MemberID)] = bytes.Clone(a.MemberAssignment)
		}
	}
	return r
}

func (r syncResult) response(req *kmsg.SyncGroupRequest) *kmsg.SyncGroupResponse {
	resp := req.ResponseKind().(*kmsg.SyncGroupResponse)
	resp.ErrorCode = r.code
	resp.MemberAssignment = r.assignment
	if r.code == 0 {
		resp.ProtocolType = new(r.protocolType)
		resp.Protocol = new(r.protocolName)
	}
	return resp
}

// Heartbeat handles Heartbeat v0-v4 (v3: instance ID). During a rebalance
// it answers REBALANCE_IN_PROGRESS, telling the member to rejoin.
func (c *Coordinator) Heartbeat(ctx context.Context, req *kmsg.HeartbeatRequest) *kmsg.HeartbeatResponse {
	resp := req.ResponseKind().(*kmsg.HeartbeatResponse)
	resp.ErrorCode = c.heartbeat(req)
	return resp
}

func (c *Coordinator) heartbeat(req *kmsg.HeartbeatRequest) int16 {
	if req.Group == "" {
		return codeInvalidGroupID
	}
	g, code := c.lockGroup(req.Group, false)
	if g == nil {
		if code == 0 {
			code = codeUnknownMemberID
		}
		return code
	}
	s := c.newStep(g)
	code = codeUnknownMemberID
	if g.kind == protocolClassic {
		instanceID := ""
		if req.InstanceID != nil {
			instanceID = *req.InstanceID
		}
		code = g.classic.heartbeat(s, req.MemberID, instanceID, req.Generation)
	}
	c.finishTurn(g, s)
	return code
}

// LeaveGroup handles LeaveGroup v0-v5: one member by ID up to v2, a batch
// of members by ID or instance ID from v3 (KIP-345), with reasons from v5
// (KIP-800). From v3 an unknown group is not an error of the request, only
// of each member, as in Kafka.
func (c *Coordinator) LeaveGroup(ctx context.Context, req *kmsg.LeaveGroupRequest) *kmsg.LeaveGroupResponse {
	resp := req.ResponseKind().(*kmsg.LeaveGroupResponse)
	members := req.Members
	if req.Version < 3 {
		members = []kmsg.LeaveGroupRequestMember{{MemberID: req.MemberID}}
	}
	top, codes := c.leave(req.Group, members)
	if req.Version < 3 {
		resp.ErrorCode = top
		if top == 0 {
			resp.ErrorCode = codes[0]
		}
		return resp
	}
	resp.ErrorCode = top
	if top != 0 {
		return resp
	}
	for i, m := range members {
		rm := kmsg.NewLeaveGroupResponseMember()
		rm.MemberID = m.MemberID
		rm.InstanceID = m.InstanceID
		rm.ErrorCode = codes[i]
		resp.Members = append(resp.Members, rm)
	}
	return resp
}

// leave removes members, returning the request's error and each member's.
func (c *Coordinator) leave(groupID string, members []kmsg.LeaveGroupRequestMember) (int16, []int16) {
	codes := make([]int16, len(members))
	if groupID == "" {
		return codeInvalidGroupID, codes
	}
	g, code := c.lockGroup(groupID, false)
	if g == nil {
		if code != 0 {
			return code, codes
		}
		for i := range codes {
			codes[i] = codeUnknownMemberID
		}
		return 0, codes
	}
	s := c.newStep(g)
	if g.kind != protocolClassic {
		for i := range codes {
			codes[i] = codeUnknownMemberID
		}
	} else if g.classic.state == stateDead {
		code = codeCoordinatorNotAvailable
	} else {
		for i, m := range members {
			var instanceID, reason string
			if m.InstanceID != nil {
				instanceID = *m.InstanceID
			}
			if m.Reason != nil {
				reason = *m.Reason
			}
			codes[i] = g.classic.leave(s, m.MemberID, instanceID, reason)
		}
	}
	c.finishTurn(g, s)
	return code, codes
}

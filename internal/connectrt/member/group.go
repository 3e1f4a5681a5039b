package member

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/task"
)

// errRetryNow asks Run to go round again at once (a rejoin that needs no
// backoff: a new member ID, a rebalance that started meanwhile).
var errRetryNow = errors.New("member: retry now")

// fatalCodes are the group errors no retry can fix.
func fatal(err error) bool {
	return errors.Is(err, kerr.GroupAuthorizationFailed) ||
		errors.Is(err, kerr.InconsistentGroupProtocol) ||
		errors.Is(err, kerr.InvalidSessionTimeout) ||
		errors.Is(err, kerr.InvalidGroupID) ||
		errors.Is(err, kerr.GroupMaxSizeReached) ||
		errors.Is(err, kerr.UnsupportedVersion)
}

func coordinatorMoved(err error) bool {
	return errors.Is(err, kerr.NotCoordinator) || errors.Is(err, kerr.CoordinatorNotAvailable)
}

// request sends req to the coordinator this member found, so that
// NOT_COORDINATOR and the like come back to it instead of being retried
// by the client against a coordinator it looked up itself.
func (m *Member) request(ctx context.Context, timeout time.Duration, req kmsg.Request) (kmsg.Response, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return m.client.Broker(int(m.coordinator)).Request(ctx, req)
}

// findCoordinator asks any broker for the group's coordinator, within a
// heartbeat interval (Kafka's coordinator discovery timeout) so that the
// session check runs between attempts.
func (m *Member) findCoordinator(ctx context.Context) error {
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.CoordinatorKey = m.cfg.GroupID
	req.CoordinatorKeys = []string{m.cfg.GroupID}
	rctx, cancel := context.WithTimeout(ctx, m.cfg.HeartbeatInterval)
	defer cancel()
	kresp, err := m.client.Request(rctx, req)
	if err != nil {
		return fmt.Errorf("member: find coordinator: %w", err)
	}
	resp := kresp.(*kmsg.FindCoordinatorResponse)
	code, node := resp.ErrorCode, resp.NodeID
	for _, c := range resp.Coordinators {
		if c.Key == m.cfg.GroupID {
			code, node = c.ErrorCode, c.NodeID
		}
	}
	if err := kerr.ErrorForCode(code); err != nil {
		if fatal(err) {
			return fmt.Errorf("%w: find coordinator: %w", errFatal, err)
		}
		return fmt.Errorf("member: find coordinator: %w", err)
	}
	m.coordinator = node
	m.log.Debug("found the group coordinator", "node", node)
	return nil
}

// protocols are the subprotocols this worker offers, in preference order,
// each with its metadata, as Kafka's workers send them.
func (m *Member) protocols(offset int64) []kmsg.JoinGroupRequestProtocol {
	ws := WorkerState{URL: m.cfg.URL, ConfigOffset: offset, Assignment: m.current}
	proto := func(name string, metadata []byte) kmsg.JoinGroupRequestProtocol {
		p := kmsg.NewJoinGroupRequestProtocol()
		p.Name, p.Metadata = name, metadata
		return p
	}
	var out []kmsg.JoinGroupRequestProtocol
	if m.cfg.Protocol == "sessioned" {
		out = append(out, proto(ProtocolSessioned, encodeMetadataV1(ws, true)))
	}
	if m.cfg.Protocol != "eager" {
		out = append(out, proto(ProtocolCompatible, encodeMetadataV1(ws, false)))
	}
	return append(out, proto(ProtocolEager, encodeMetadataV0(m.cfg.URL, offset)))
}

// joinGroup runs one JoinGroup and SyncGroup round; the leader assigns in
// between.
func (m *Member) joinGroup(ctx context.Context) error {
	m.stopHeartbeats()
	m.prepareJoin()
	req := kmsg.NewPtrJoinGroupRequest()
	req.Group = m.cfg.GroupID
	req.SessionTimeoutMillis = int32(m.cfg.SessionTimeout / time.Millisecond)
	req.RebalanceTimeoutMillis = int32(m.cfg.RebalanceTimeout / time.Millisecond)
	req.ProtocolType = ProtocolType
	req.Protocols = m.protocols(m.h.Snapshot().Offset)
	for {
		req.MemberID = m.memberID
		kresp, err := m.request(ctx, m.cfg.RebalanceTimeout+m.cfg.SessionTimeout, req)
		if err != nil {
			m.coordinator = -1
			return fmt.Errorf("member: join group: %w", err)
		}
		resp := kresp.(*kmsg.JoinGroupResponse)
		err = kerr.ErrorForCode(resp.ErrorCode)
		if err == nil || errors.Is(err, kerr.MemberIDRequired) || errors.Is(err, kerr.RebalanceInProgress) {
			m.touch() // the coordinator holds this member
		}
		switch {
		case err == nil:
			return m.syncGroup(ctx, resp)
		case errors.Is(err, kerr.MemberIDRequired):
			m.memberID = resp.MemberID // KIP-394: join again with the ID the coordinator gave
			continue
		case errors.Is(err, kerr.UnknownMemberID):
			m.memberID, m.generation = "", -1
			return errRetryNow
		case errors.Is(err, kerr.RebalanceInProgress):
			return errRetryNow
		case coordinatorMoved(err):
			m.coordinator = -1
		case fatal(err):
			return fmt.Errorf("%w: join group: %w", errFatal, err)
		}
		return fmt.Errorf("member: join group: %w", err)
	}
}

// prepareJoin is Kafka's onJoinPrepare: under the eager protocol a worker
// stops everything before it joins; under the cooperative ones it keeps
// running until the leader revokes.
func (m *Member) prepareJoin() {
	m.setLeader("", "")
	if m.protocol == ProtocolEager {
		m.revokeAll("eager rebalance")
	}
}

// revokeAll stops everything this worker runs, keeping the rest of its
// last assignment for its metadata.
func (m *Member) revokeAll(why string) {
	if m.current == nil {
		return
	}
	w := m.current
	if len(w.Connectors) > 0 || len(w.Tasks) > 0 {
		m.log.Info(why+": revoking the whole assignment", "connectors", len(w.Connectors), "tasks", len(w.Tasks))
		m.h.Revoke(w.Connectors, w.Tasks)
	}
	kept := *w
	kept.Connectors, kept.Tasks = nil, nil
	m.current = &kept
}

func (m *Member) syncGroup(ctx context.Context, join *kmsg.JoinGroupResponse) error {
	m.memberID, m.generation = join.MemberID, join.Generation
	protocol := ""
	if join.Protocol != nil {
		protocol = *join.Protocol
	}
	if protocol == ProtocolEager && m.protocol != ProtocolEager {
		// The group turned eager (a worker that speaks only eager joined):
		// the leader assigns everything afresh, so stop it all now, before
		// the others start what this worker ran. A worker that follows
		// can still overlap with a leader that syncs first, for the moment
		// this takes; Kafka's workers do not even stop, see the docs.
		m.revokeAll("the group switched to the eager protocol")
	}
	req := kmsg.NewPtrSyncGroupRequest()
	req.Group, req.Generation, req.MemberID = m.cfg.GroupID, join.Generation, join.MemberID
	req.ProtocolType, req.Protocol = new(string), new(string)
	*req.ProtocolType, *req.Protocol = ProtocolType, protocol
	if join.LeaderID == join.MemberID {
		assignments, err := m.lead(join, protocol)
		if err != nil {
			return err
		}
		req.GroupAssignment = assignments
	}
	kresp, err := m.request(ctx, m.cfg.RebalanceTimeout+m.cfg.SessionTimeout, req)
	if err != nil {
		m.coordinator = -1
		return fmt.Errorf("member: sync group: %w", err)
	}
	resp := kresp.(*kmsg.SyncGroupResponse)
	switch err := kerr.ErrorForCode(resp.ErrorCode); {
	case err == nil:
		m.touch()
	case errors.Is(err, kerr.RebalanceInProgress):
		m.touch()
		return errRetryNow
	case errors.Is(err, kerr.UnknownMemberID):
		m.memberID, m.generation = "", -1
		return errRetryNow
	case errors.Is(err, kerr.IllegalGeneration):
		m.generation = -1
		return errRetryNow
	case coordinatorMoved(err):
		m.coordinator = -1
		return fmt.Errorf("member: sync group: %w", err)
	case fatal(err):
		return fmt.Errorf("%w: sync group: %w", errFatal, err)
	default:
		return fmt.Errorf("member: sync group: %w", err)
	}
	a, err := decodeAssignment(resp.MemberAssignment)
	if err != nil {
		return fmt.Errorf("member: sync group: %w", err)
	}
	m.completeJoin(protocol, a)
	return nil
}

// completeJoin is Kafka's onJoinComplete plus what its herder does with
// the assignment's follow-ups: stop what is revoked, merge what is kept
// with what is new, tell the handler, and rejoin after revocations, after
// a failed assignment, or after the scheduled delay.
func (m *Member) completeJoin(protocol string, a ExtendedAssignment) {
	m.needRejoin = false
	m.lastCompletedGeneration = m.generation
	m.protocol = protocol
	m.startHeartbeats()
	revoked := len(a.RevokedConnectors) > 0 || len(a.RevokedTasks) > 0
	newConnectors, newTasks := slices.Clone(a.Connectors), slices.Clone(a.Tasks)
	if protocol != ProtocolEager {
		if revoked {
			m.h.Revoke(a.RevokedConnectors, a.RevokedTasks)
		}
		if m.current != nil {
			kept := toSet(Work{m.current.Connectors, m.current.Tasks}).minus(toSet(Work{a.RevokedConnectors, a.RevokedTasks}))
			all := kept.union(toSet(Work{a.Connectors, a.Tasks}))
			a.Connectors, a.Tasks = all.sortedConnectors(), all.sortedTasks()
		}
	}
	m.current = &a
	m.setLeader(a.Leader, a.LeaderURL)
	delay := time.Duration(a.DelayMillis) * time.Millisecond
	m.log.Info("joined the group", "generation", m.generation, "protocol", protocol, "leader", a.Leader,
		"error", a.Error, "config_offset", a.ConfigOffset, "connectors", len(a.Connectors), "tasks", len(a.Tasks),
		"revoked_connectors", len(a.RevokedConnectors), "revoked_tasks", len(a.RevokedTasks), "delay", delay)
	m.h.Assigned(Assignment{
		Error: a.Error, LeaderID: a.Leader, LeaderURL: a.LeaderURL, ConfigOffset: a.ConfigOffset,
		Connectors: slices.Clone(a.Connectors), Tasks: slices.Clone(a.Tasks),
		RevokedConnectors: slices.Clone(a.RevokedConnectors), RevokedTasks: slices.Clone(a.RevokedTasks),
		NewConnectors: newConnectors, NewTasks: newTasks,
		Delay: delay, Generation: m.generation, MemberID: m.memberID, Protocol: protocol,
	})
	m.rejoinAt = time.Time{}
	if delay > 0 {
		m.rejoinAt = m.clk.Now().Add(delay)
	}
	switch {
	case a.Error != NoError && m.h.Snapshot().Offset < a.ConfigOffset:
		// Still behind: rejoin when the handler asks (Rejoin) or after a
		// backoff, rather than in a tight loop of mismatches.
		m.rejoinAt = m.clk.Now().Add(m.backoff())
		m.retries++
	case a.Error != NoError:
		m.needRejoin = true
	case revoked && protocol != ProtocolEager:
		// The revoked work is assigned in the rebalance that follows.
		m.needRejoin = true
	}
}

// lead computes every member's assignment, as the leader.
func (m *Member) lead(join *kmsg.JoinGroupResponse, protocol string) ([]kmsg.SyncGroupRequestGroupAssignment, error) {
	states := make(map[string]WorkerState, len(join.Members))
	var maxOffset int64 = -1
	for i, mem := range join.Members {
		ws, err := decodeMetadata(mem.ProtocolMetadata)
		if err != nil {
			return nil, fmt.Errorf("member: metadata of member %s: %w", mem.MemberID, err)
		}
		states[mem.MemberID] = ws
		if i == 0 || ws.ConfigOffset > maxOffset {
			maxOffset = ws.ConfigOffset
		}
	}
	leader, ok := states[join.LeaderID]
	if !ok {
		return nil, fmt.Errorf("member: the leader %s is not among the members", join.LeaderID)
	}
	snap := m.h.Snapshot()
	version := ProtocolV1
	switch protocol {
	case ProtocolEager:
		version = ProtocolV0
	case ProtocolSessioned:
		version = ProtocolV2
	}
	base := ExtendedAssignment{Version: version, Leader: join.LeaderID, LeaderURL: leader.URL, ConfigOffset: snap.Offset}
	out := map[string]ExtendedAssignment{}
	switch {
	case snap.Offset < maxOffset:
		m.log.Info("assigning: this leader's config is behind a member's; answering CONFIG_MISMATCH",
			"leader_offset", snap.Offset, "max_offset", maxOffset)
		base.Error, base.ConfigOffset = ConfigMismatch, maxOffset
		for id := range states {
			out[id] = base
		}
	case protocol == ProtocolEager:
		for id, w := range AssignEager(sortedKeys(states), Work{snap.Connectors, snap.Tasks}) {
			a := base
			a.Connectors, a.Tasks = w.Connectors, w.Tasks
			out[id] = a
		}
	default:
		out = m.assignIncremental(base, states, snap)
	}
	assignments := make([]kmsg.SyncGroupRequestGroupAssignment, 0, len(out))
	for _, id := range sortedKeys(out) {
		ga := kmsg.NewSyncGroupRequestGroupAssignment()
		ga.MemberID = id
		if version == ProtocolV0 {
			ga.MemberAssignment = encodeAssignmentV0(out[id])
		} else {
			ga.MemberAssignment = encodeAssignmentV1(out[id], version >= ProtocolV2)
		}
		assignments = append(assignments, ga)
	}
	return assignments, nil
}

func (m *Member) assignIncremental(base ExtendedAssignment, states map[string]WorkerState, snap Snapshot) map[string]ExtendedAssignment {
	in := AssignInput{
		Members:                 make(map[string]Work, len(states)),
		Configured:              Work{Connectors: snap.Connectors, Tasks: snap.Tasks},
		LastCompletedGeneration: m.lastCompletedGeneration, Generation: m.generation,
		Now: m.clk.Now(), MaxDelay: m.cfg.ScheduledRebalanceMaxDelay,
	}
	for id, ws := range states {
		var w Work
		if ws.Assignment != nil {
			w = Work{Connectors: ws.Assignment.Connectors, Tasks: ws.Assignment.Tasks}
		}
		in.Members[id] = w
	}
	res, st := AssignIncremental(m.assignor, in)
	m.assignor = st
	out := make(map[string]ExtendedAssignment, len(states))
	for id := range states {
		a := base
		a.Connectors, a.Tasks = res.Assigned[id].Connectors, res.Assigned[id].Tasks
		a.RevokedConnectors, a.RevokedTasks = res.Revoked[id].Connectors, res.Revoked[id].Tasks
		a.DelayMillis = int32(res.Delay / time.Millisecond)
		out[id] = a
	}
	m.log.Info("assigned", "generation", m.generation, "members", len(states),
		"connectors", len(in.Configured.Connectors), "tasks", len(in.Configured.Tasks), "delay", res.Delay)
	return out
}

func (m *Member) setLeader(id, url string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mu.leaderID, m.mu.leaderURL, m.mu.memberID = id, url, m.memberID
}

// heartbeater sends heartbeats every heartbeat.interval.ms from its own
// goroutine, so that a slow Revoke or Assigned does not cost the session,
// and stops at the first error, which it hands to Run.
type heartbeater struct {
	g    *task.Group
	errs chan error
}

func (h *heartbeater) stop() { h.g.Stop() }

func (m *Member) startHeartbeats() {
	m.stopHeartbeats()
	h := &heartbeater{g: task.NewGroup(context.Background()), errs: make(chan error, 1)}
	req := kmsg.NewPtrHeartbeatRequest()
	req.Group, req.Generation, req.MemberID = m.cfg.GroupID, m.generation, m.memberID
	coordinator := m.coordinator
	h.g.Go(func(ctx context.Context) {
		t := time.NewTicker(m.cfg.HeartbeatInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			rctx, cancel := context.WithTimeout(ctx, m.cfg.SessionTimeout)
			kresp, err := m.client.Broker(int(coordinator)).Request(rctx, req)
			cancel()
			if ctx.Err() != nil {
				return
			}
			if err == nil {
				err = kerr.ErrorForCode(kresp.(*kmsg.HeartbeatResponse).ErrorCode)
				if err == nil || errors.Is(err, kerr.RebalanceInProgress) {
					m.touch() // still a member, even while the group rebalances
				}
			}
			if err != nil {
				h.errs <- err
				return
			}
		}
	})
	m.heartbeats = h
}

func (m *Member) stopHeartbeats() {
	if m.heartbeats != nil {
		m.heartbeats.stop()
		m.heartbeats = nil
	}
}

// onHeartbeatError is Kafka's heartbeat response handling.
func (m *Member) onHeartbeatError(err error) error {
	switch {
	case errors.Is(err, kerr.RebalanceInProgress):
		m.log.Info("the group is rebalancing; rejoining")
		m.needRejoin = true
		return nil
	case errors.Is(err, kerr.IllegalGeneration):
		m.log.Info("heartbeat: illegal generation; rejoining", "generation", m.generation)
		m.generation = -1
		m.needRejoin = true
		return nil
	case errors.Is(err, kerr.UnknownMemberID):
		m.log.Info("heartbeat: the coordinator no longer knows this member; rejoining as a new member", "member", m.memberID)
		m.memberID, m.generation = "", -1
		m.needRejoin = true
		return nil
	case fatal(err):
		return fmt.Errorf("%w: heartbeat: %w", errFatal, err)
	}
	// The coordinator moved or could not be reached: find it again.
	m.coordinator = -1
	return fmt.Errorf("member: heartbeat: %w", err)
}

// leaveGroup is sent when Run ends, so that the group rebalances at once
// instead of after a session timeout. The handler's work is not revoked:
// a stopping worker stops its own work.
func (m *Member) leaveGroup() {
	m.stopHeartbeats()
	if m.memberID == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), min(m.cfg.SessionTimeout, 5*time.Second))
	defer cancel()
	if m.coordinator < 0 {
		if err := m.findCoordinator(ctx); err != nil {
			m.log.Warn("leaving the group: no coordinator", "err", err)
			return
		}
	}
	req := kmsg.NewPtrLeaveGroupRequest()
	req.Group, req.MemberID = m.cfg.GroupID, m.memberID
	lm := kmsg.NewLeaveGroupRequestMember()
	lm.MemberID = m.memberID
	lm.Reason = new(string)
	*lm.Reason = "the Connect worker is stopping"
	req.Members = []kmsg.LeaveGroupRequestMember{lm}
	kresp, err := m.client.Broker(int(m.coordinator)).Request(ctx, req)
	if err == nil {
		err = kerr.ErrorForCode(kresp.(*kmsg.LeaveGroupResponse).ErrorCode)
	}
	if err != nil {
		m.log.Warn("leaving the group failed", "err", err)
		return
	}
	m.log.Info("left the group", "member", m.memberID)
	m.memberID, m.generation = "", -1
}

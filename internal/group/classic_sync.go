package group

import (
	"slices"
	"time"
)

// syncRequest is a SyncGroup as the state machine sees it.
type syncRequest struct {
	memberID     string
	instanceID   string
	generation   int32
	protocolType *string // v5+: checked against the group's when set
	protocolName *string
	// assignments is the leader's assignment by member ID, copied out of
	// the request; ignored from anyone else.
	assignments map[string][]byte
	waiter      chan<- syncResult
}

// sync handles a SyncGroup. The leader's assignment is made durable before
// any member gets its part; the others wait for it.
func (g *classicGroup) sync(s *step, r *syncRequest) {
	if code := g.validateSync(r); code != 0 {
		s.replySync(r.waiter, syncResult{code: code})
		return
	}
	m := g.members[r.memberID]
	switch g.state {
	case stateEmpty:
		s.replySync(r.waiter, syncResult{code: codeUnknownMemberID})
	case statePreparingRebalance:
		s.replySync(r.waiter, syncResult{code: codeRebalanceInProgress})
	case stateCompletingRebalance:
		if m.syncWaiter != nil && m.syncWaiter != r.waiter {
			s.replySync(m.syncWaiter, syncResult{code: codeRebalanceInProgress})
		}
		m.syncWaiter = r.waiter
		m.lastHeartbeat = s.now
		g.synced(m)
		if m.id == g.leader {
			g.storeAssignment(s, r.assignments)
		}
	case stateStable:
		// A late or repeated sync: the assignment is settled.
		m.lastHeartbeat = s.now
		g.synced(m)
		s.replySync(r.waiter, g.syncAnswer(m))
	}
}

func (g *classicGroup) validateSync(r *syncRequest) int16 {
	if g.state == stateDead {
		return codeCoordinatorNotAvailable
	}
	if code := g.validateMember(r.memberID, r.instanceID); code != 0 {
		return code
	}
	if r.generation != g.generation {
		return codeIllegalGeneration
	}
	if (r.protocolType != nil && *r.protocolType != g.protocolType) ||
		(r.protocolName != nil && *r.protocolName != g.protocolName) {
		return codeInconsistentGroupProtocol
	}
	return 0
}

func (g *classicGroup) syncAnswer(m *member) syncResult {
	return syncResult{assignment: m.assignment, protocolType: g.protocolType, protocolName: g.protocolName}
}

// synced notes that a member of this generation has sent SyncGroup.
func (g *classicGroup) synced(m *member) {
	delete(g.pendingSync, m.id)
	if len(g.pendingSync) == 0 {
		g.syncDeadline = time.Time{}
	}
}

// storeAssignment writes the generation with the leader's assignment, then
// hands each member its part and makes the group Stable. Members the leader
// left out get an empty assignment; entries for unknown members are
// ignored.
func (g *classicGroup) storeAssignment(s *step, assignments map[string][]byte) {
	generation := g.generation
	full := make(map[string][]byte, len(g.members))
	for id := range g.members {
		a := assignments[id]
		if a == nil {
			a = []byte{}
		}
		full[id] = a
	}
	s.write(g.metadataRecords(full), func(s *step, err error) {
		if g.state != stateCompletingRebalance || g.generation != generation {
			return
		}
		if err != nil {
			s.log.Warn("storing group assignment failed", "generation", generation, "err", err)
			g.resetAssignments(s, groupStoreErrorCode(err))
			g.prepareRebalance(s, "storing the assignment failed")
			return
		}
		for _, m := range g.sortedMembers() {
			m.assignment = full[m.id]
			if m.syncWaiter != nil {
				s.replySync(m.syncWaiter, g.syncAnswer(m))
				m.syncWaiter = nil
			}
		}
		g.transition(s, stateStable)
		s.stats.classicRebalances.Add(1)
		s.log.Info("group stable", "generation", generation)
	})
}

// heartbeat handles a Heartbeat. During a join phase the answer is
// REBALANCE_IN_PROGRESS, which is how members learn they must rejoin; the
// heartbeat still keeps their session alive.
func (g *classicGroup) heartbeat(s *step, memberID, instanceID string, generation int32) int16 {
	if g.state == stateDead {
		return codeCoordinatorNotAvailable
	}
	if code := g.validateMember(memberID, instanceID); code != 0 {
		return code
	}
	if generation != g.generation {
		return codeIllegalGeneration
	}
	m := g.members[memberID]
	switch g.state {
	case stateEmpty:
		return codeUnknownMemberID
	case statePreparingRebalance:
		m.lastHeartbeat = s.now
		return codeRebalanceInProgress
	default:
		// Members may heartbeat between their join answer and their sync
		// answer (CompletingRebalance): that is a normal heartbeat.
		m.lastHeartbeat = s.now
		return 0
	}
}

// leave handles one member of a LeaveGroup. A static member may leave by
// instance ID alone (KIP-345).
func (g *classicGroup) leave(s *step, memberID, instanceID, reason string) int16 {
	if g.state == stateDead {
		return codeCoordinatorNotAvailable
	}
	if memberID == "" && instanceID != "" {
		id, ok := g.static[instanceID]
		if !ok {
			return codeUnknownMemberID
		}
		memberID = id
	} else {
		if _, ok := g.pending[memberID]; ok && instanceID == "" {
			delete(g.pending, memberID)
			g.tryCompleteJoin(s)
			return 0
		}
		if code := g.validateMember(memberID, instanceID); code != 0 {
			return code
		}
	}
	g.removeMemberAndUpdate(s, g.members[memberID], "left the group: "+reason)
	return 0
}

// removeMemberAndUpdate removes a member and moves the group on: a settled
// group rebalances without it, a join phase may now be complete.
func (g *classicGroup) removeMemberAndUpdate(s *step, m *member, reason string) {
	s.log.Info("removing member", "member", m.id, "reason", reason)
	g.remove(s, m)
	switch g.state {
	case stateStable, stateCompletingRebalance:
		g.prepareRebalance(s, "member "+m.id+" removed: "+reason)
	case statePreparingRebalance:
		g.tryCompleteJoin(s)
	}
}

// tick applies every deadline that has passed: expired pending member IDs
// and sessions first, so that a join phase they held open can end, then
// the end of the join phase and of the sync phase.
func (g *classicGroup) tick(s *step) {
	expired := false
	for id, deadline := range g.pending {
		if !s.now.Before(deadline) {
			delete(g.pending, id)
			expired = true
		}
	}
	if expired {
		g.tryCompleteJoin(s)
	}
	for _, m := range g.sortedMembers() {
		if g.members[m.id] == m && !g.keepAlive(m, s.now) {
			g.removeMemberAndUpdate(s, m, "session timed out")
		}
	}
	if g.state == statePreparingRebalance && !s.now.Before(g.joinDeadline) {
		if g.initialDelay && g.newMemberAdded && g.initialRemaining > 0 {
			// Someone arrived during the delay: wait again, but never
			// past the rebalance timeout in all.
			g.newMemberAdded = false
			d := min(s.cfg.InitialRebalanceDelay, g.initialRemaining)
			g.initialRemaining -= d
			g.joinDeadline = s.now.Add(d)
		} else {
			g.completeJoin(s)
		}
	}
	if (g.state == stateCompletingRebalance || g.state == stateStable) &&
		len(g.pendingSync) > 0 && !s.now.Before(g.syncDeadline) {
		g.expirePendingSync(s)
	}
}

// keepAlive reports whether a member's session is still alive. A member
// waiting in a join phase is kept until the phase ends (or, on its first
// join, newMemberJoinTimeout), one waiting for its assignment until the
// sync deadline; the others need a heartbeat within their session timeout.
func (g *classicGroup) keepAlive(m *member, now time.Time) bool {
	switch {
	case m.joinWaiter != nil:
		return !m.isNew || now.Before(m.lastHeartbeat.Add(newMemberJoinTimeout))
	case m.syncWaiter != nil:
		return true
	}
	return now.Before(m.lastHeartbeat.Add(m.sessionTimeout))
}

// expirePendingSync removes the members that did not send SyncGroup within
// the rebalance timeout after the join phase: without their SyncGroup they
// consume nothing, so the others rebalance without them.
func (g *classicGroup) expirePendingSync(s *step) {
	ids := make([]string, 0, len(g.pendingSync))
	for id := range g.pendingSync {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if m := g.members[id]; m != nil {
			s.log.Info("removing member that did not sync", "member", id)
			g.remove(s, m)
		}
	}
	g.prepareRebalance(s, "members did not sync in time")
}

// abandon answers every waiting request with code: the group is going away
// from this coordinator (unloaded, or reloaded).
func (g *classicGroup) abandon(s *step, code int16) {
	for _, m := range g.sortedMembers() {
		if m.joinWaiter != nil {
			s.replyJoin(m.joinWaiter, joinError(m.id, code))
			m.joinWaiter = nil
		}
		if m.syncWaiter != nil {
			s.replySync(m.syncWaiter, syncResult{code: code})
			m.syncWaiter = nil
		}
	}
}

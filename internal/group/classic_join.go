package group

import (
	"time"
)

// joinRequest is a JoinGroup as the state machine sees it, holding copies of
// what it keeps: a decoded request aliases the connection's read buffer.
type joinRequest struct {
	version          int16
	memberID         string
	instanceID       string
	clientID         string
	clientHost       string
	sessionTimeout   time.Duration
	rebalanceTimeout time.Duration
	protocolType     string
	protocols        []protocol
	reason           string
	// waiter receives the one answer to this request.
	waiter chan<- joinResult
}

// join handles a JoinGroup. The answer goes to j.waiter, at once or when
// the join phase completes.
func (g *classicGroup) join(s *step, j *joinRequest) {
	if g.state == stateDead {
		// The group was deleted under the request; the client looks up
		// the coordinator again and retries.
		s.replyJoin(j.waiter, joinError(j.memberID, codeCoordinatorNotAvailable))
		return
	}
	// A restarted static member takes its own place back, so it counts
	// as the member it replaces, not as one more (Kafka would refuse it
	// from a full group).
	existing := j.memberID
	if existing == "" && j.instanceID != "" {
		existing = g.static[j.instanceID]
	}
	if !g.acceptJoiningMember(existing, s.cfg.MaxSize) {
		if m := g.members[existing]; m != nil {
			g.removeMemberAndUpdate(s, m, "group is full")
		}
		s.replyJoin(j.waiter, joinError(j.memberID, codeGroupMaxSizeReached))
		return
	}
	if j.memberID == "" {
		g.joinNewMember(s, j)
	} else {
		g.joinKnownMember(s, j)
	}
}

// acceptJoiningMember applies group.max.size. While preparing a rebalance
// it counts the members that have rejoined, not all members, so that once
// the limit was lowered the last members to rejoin are the ones left out.
func (g *classicGroup) acceptJoiningMember(memberID string, maxSize int) bool {
	switch g.state {
	case stateEmpty, stateDead:
		return true
	case statePreparingRebalance:
		if m := g.members[memberID]; m != nil && m.joinWaiter != nil {
			return true
		}
		return g.numAwaitingJoin() < maxSize
	default:
		return g.members[memberID] != nil || len(g.members) < maxSize
	}
}

func (g *classicGroup) numAwaitingJoin() int {
	n := 0
	for _, m := range g.members {
		if m.joinWaiter != nil {
			n++
		}
	}
	return n
}

// joinNewMember handles a join without a member ID: a static member coming
// back, a dynamic member asked to come back with an ID (KIP-394, v4+), or an
// old client let straight in.
func (g *classicGroup) joinNewMember(s *step, j *joinRequest) {
	if !g.supportsProtocols(j.protocolType, j.protocols) {
		s.replyJoin(j.waiter, joinError(j.memberID, codeInconsistentGroupProtocol))
		return
	}
	prefix := j.clientID
	if j.instanceID != "" {
		prefix = j.instanceID
	}
	id := s.newMemberID(prefix)
	switch {
	case j.instanceID != "":
		if old, ok := g.static[j.instanceID]; ok {
			g.replaceStaticMember(s, j, old, id)
			return
		}
		g.addMemberAndRebalance(s, j, id)
	case j.version >= 4:
		// The member must come back with this ID before it counts, so a
		// client that keeps failing its first join does not leave a
		// member behind each time. The ID is forgotten after a session
		// timeout.
		g.pending[id] = s.now.Add(j.sessionTimeout)
		s.replyJoin(j.waiter, joinError(id, codeMemberIDRequired))
	default:
		g.addMemberAndRebalance(s, j, id)
	}
}

// joinKnownMember handles a join with a member ID: a pending member coming
// back, or a member rejoining.
func (g *classicGroup) joinKnownMember(s *step, j *joinRequest) {
	if !g.supportsProtocols(j.protocolType, j.protocols) {
		s.replyJoin(j.waiter, joinError(j.memberID, codeInconsistentGroupProtocol))
		return
	}
	if _, ok := g.pending[j.memberID]; ok {
		g.addMemberAndRebalance(s, j, j.memberID)
		return
	}
	if code := g.validateMember(j.memberID, j.instanceID); code != 0 {
		s.replyJoin(j.waiter, joinError(j.memberID, code))
		return
	}
	m := g.members[j.memberID]
	switch g.state {
	case statePreparingRebalance:
		g.updateMemberAndRebalance(s, m, j)
	case stateCompletingRebalance:
		if !m.matches(j.protocols) {
			g.updateMemberAndRebalance(s, m, j)
			return
		}
		// The member lost the answer to its join; give it again.
		m.lastHeartbeat = s.now
		s.replyJoin(j.waiter, g.currentJoinResult(m, m.id == g.leader))
	case stateStable:
		// A leader's join always rebalances: it is how the leader asks
		// for a new assignment when something outside the members'
		// metadata changed (new partitions, a regex matching a new topic).
		if m.id == g.leader || !m.matches(j.protocols) {
			g.updateMemberAndRebalance(s, m, j)
			return
		}
		m.lastHeartbeat = s.now
		s.replyJoin(j.waiter, g.currentJoinResult(m, false))
	default:
		s.replyJoin(j.waiter, joinError(j.memberID, codeUnknownMemberID))
	}
}

// currentJoinResult is the current generation as a join answer; the leader
// gets the members too.
func (g *classicGroup) currentJoinResult(m *member, withMembers bool) joinResult {
	r := joinResult{
		memberID:     m.id,
		generation:   g.generation,
		protocolType: g.protocolType,
		protocolName: g.protocolName,
		leader:       g.leader,
	}
	if withMembers {
		r.members = g.joinMembers()
	}
	return r
}

func (g *classicGroup) addMemberAndRebalance(s *step, j *joinRequest, id string) {
	m := &member{
		id:               id,
		instanceID:       j.instanceID,
		clientID:         j.clientID,
		clientHost:       j.clientHost,
		sessionTimeout:   j.sessionTimeout,
		rebalanceTimeout: j.rebalanceTimeout,
		protocolType:     j.protocolType,
		protocols:        j.protocols,
		isNew:            true,
		lastHeartbeat:    s.now,
		joinWaiter:       j.waiter,
	}
	// Only the very first join phase of a group is stretched for late
	// arrivals: that is when a whole application is starting up.
	if g.state == statePreparingRebalance && g.generation == 0 {
		g.newMemberAdded = true
	}
	g.add(m)
	s.log.Debug("member joined", "member", id, "instance", j.instanceID, "client", j.clientID)
	g.rebalanceOrComplete(s, "new member "+id+" joined")
}

func (g *classicGroup) updateMemberAndRebalance(s *step, m *member, j *joinRequest) {
	g.updateMember(s, m, j)
	g.rebalanceOrComplete(s, "member "+m.id+" rejoined")
}

// rebalanceOrComplete starts a rebalance, or, if one is under way, ends its
// join phase when that was the last member it waited for.
func (g *classicGroup) rebalanceOrComplete(s *step, reason string) {
	if g.state == statePreparingRebalance {
		g.tryCompleteJoin(s)
		return
	}
	g.prepareRebalance(s, reason)
}

// updateMember takes a rejoining member's new protocols and timeouts.
func (g *classicGroup) updateMember(s *step, m *member, j *joinRequest) {
	m.protocols = j.protocols
	m.protocolType = j.protocolType
	m.sessionTimeout = j.sessionTimeout
	m.rebalanceTimeout = j.rebalanceTimeout
	m.clientID, m.clientHost = j.clientID, j.clientHost
	m.lastHeartbeat = s.now
	if m.joinWaiter != nil && m.joinWaiter != j.waiter {
		// An earlier JoinGroup of the same member is still open (the client
		// gave up on it and sent another); only the newest gets the
		// generation.
		s.replyJoin(m.joinWaiter, joinError(m.id, codeRebalanceInProgress))
	}
	m.joinWaiter = j.waiter
}

// replaceStaticMember gives a static member that came back without its
// member ID (a restarted process) a new member ID in place of the old one
// (KIP-345). Requests still carrying the old ID are fenced from then on.
// In a Stable group whose protocol would not change, no rebalance happens:
// once the new ID is durable the member learns the current generation and
// gets its old assignment from SyncGroup.
func (g *classicGroup) replaceStaticMember(s *step, j *joinRequest, oldID, newID string) {
	m := g.members[oldID]
	previous := *m
	currentLeader := g.leader
	g.renameMember(s, m, newID)
	g.updateMember(s, m, j)

	switch g.state {
	case stateStable:
		if g.selectProtocol() != g.protocolName {
			g.prepareRebalance(s, "static member "+newID+" rejoined with other protocols")
			return
		}
		s.write(g.metadataRecords(nil), func(s *step, err error) {
			waiter := m.joinWaiter
			m.joinWaiter = nil
			if err != nil {
				// Put the old incarnation back: the log does not know the
				// new ID, so the group must not either.
				g.renameMember(s, m, oldID)
				restored := previous
				restored.order, restored.joinWaiter, restored.syncWaiter = m.order, nil, nil
				*m = restored
				s.replyJoin(waiter, joinError(j.memberID, groupStoreErrorCode(err)))
				return
			}
			// The old leader ID is returned so that a restarted leader
			// does not see itself as leader and compute an assignment a
			// Stable group would never hand out; KIP-814's skipAssignment
			// tells a v9+ client it leads all the same.
			isLeader := g.leader == newID
			r := g.currentJoinResult(m, isLeader)
			r.leader = currentLeader
			r.skipAssignment = isLeader
			s.replyJoin(waiter, r)
		})
	case stateCompletingRebalance:
		// The leader may already be assigning to the old member ID, which
		// the new one would never be given: start over.
		g.prepareRebalance(s, "static member "+newID+" rejoined during sync")
	case statePreparingRebalance:
		g.tryCompleteJoin(s)
	}
}

// renameMember moves a member to another member ID, fencing requests still
// waiting under the old one.
func (g *classicGroup) renameMember(s *step, m *member, id string) {
	if m.joinWaiter != nil {
		s.replyJoin(m.joinWaiter, joinError(m.id, codeFencedInstanceID))
		m.joinWaiter = nil
	}
	if m.syncWaiter != nil {
		s.replySync(m.syncWaiter, syncResult{code: codeFencedInstanceID})
		m.syncWaiter = nil
	}
	old := m.id
	delete(g.members, old)
	m.id = id
	g.members[id] = m
	g.static[m.instanceID] = id
	if g.leader == old {
		g.leader = id
	}
	if _, ok := g.pendingSync[old]; ok {
		delete(g.pendingSync, old)
		g.pendingSync[id] = struct{}{}
	}
}

// prepareRebalance starts a join phase: every member must send JoinGroup
// again within the rebalance timeout.
func (g *classicGroup) prepareRebalance(s *step, reason string) {
	if g.state == stateCompletingRebalance {
		g.resetAssignments(s, codeRebalanceInProgress)
	}
	clear(g.pendingSync)
	g.syncDeadline = time.Time{}
	wasEmpty := g.state == stateEmpty
	g.transition(s, statePreparingRebalance)
	g.initialDelay = wasEmpty && s.cfg.InitialRebalanceDelay > 0
	if g.initialDelay {
		g.joinDeadline = s.now.Add(s.cfg.InitialRebalanceDelay)
		g.initialRemaining = max(g.rebalanceTimeout()-s.cfg.InitialRebalanceDelay, 0)
	} else {
		g.joinDeadline = s.now.Add(g.rebalanceTimeout())
	}
	s.log.Info("preparing to rebalance", "generation", g.generation, "reason", reason)
	g.tryCompleteJoin(s)
}

// resetAssignments drops the assignments of a generation that will not
// become Stable and answers the SyncGroups waiting for them with code.
func (g *classicGroup) resetAssignments(s *step, code int16) {
	for _, m := range g.sortedMembers() {
		m.assignment = nil
		if m.syncWaiter != nil {
			s.replySync(m.syncWaiter, syncResult{code: code})
			m.syncWaiter = nil
		}
	}
}

// tryCompleteJoin ends the join phase early once every member and every
// pending member has joined; an initial delay always runs its course.
func (g *classicGroup) tryCompleteJoin(s *step) {
	if g.state != statePreparingRebalance || g.initialDelay || len(g.pending) > 0 {
		return
	}
	for _, m := range g.members {
		if m.joinWaiter == nil {
			return
		}
	}
	g.completeJoin(s)
}

// completeJoin ends the join phase: dynamic members that did not rejoin are
// removed (static ones keep their place until their session expires), the
// next generation starts with the protocol the members vote for, and every
// waiting JoinGroup is answered, the leader's with the members to assign.
func (g *classicGroup) completeJoin(s *step) {
	g.initialDelay, g.newMemberAdded = false, false
	for _, m := range g.sortedMembers() {
		if m.joinWaiter == nil && !m.static() {
			s.log.Info("removing member that did not rejoin", "member", m.id)
			g.remove(s, m)
		}
	}
	if len(g.members) == 0 {
		g.generation++
		g.protocolName, g.leader = "", ""
		g.subscribedTopics = nil
		g.transition(s, stateEmpty)
		s.write(g.metadataRecords(nil), logStoreError(g.generation))
		return
	}
	if !g.electJoinedLeader() {
		// Only static members that have not rejoined are left: wait
		// another rebalance timeout for them (or for their sessions to
		// expire).
		g.joinDeadline = s.now.Add(g.rebalanceTimeout())
		return
	}
	g.generation++
	g.protocolName = g.selectProtocol()
	g.subscribedTopics = g.computeSubscribedTopics()
	g.transition(s, stateCompletingRebalance)
	g.syncDeadline = s.now.Add(g.rebalanceTimeout())
	for _, m := range g.sortedMembers() {
		g.pendingSync[m.id] = struct{}{}
		if m.joinWaiter == nil {
			continue
		}
		s.replyJoin(m.joinWaiter, g.currentJoinResult(m, m.id == g.leader))
		m.joinWaiter = nil
		m.isNew = false
		m.lastHeartbeat = s.now
	}
	s.log.Info("join phase complete", "generation", g.generation, "protocol", g.protocolName,
		"leader", g.leader, "members", len(g.members))
}

// electJoinedLeader keeps the leader if it rejoined, else makes the first
// member that did the leader. False if no member has rejoined.
func (g *classicGroup) electJoinedLeader() bool {
	if l := g.members[g.leader]; l != nil && l.joinWaiter != nil {
		return true
	}
	for _, m := range g.sortedMembers() {
		if m.joinWaiter != nil {
			g.leader = m.id
			return true
		}
	}
	return false
}

package group

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// cgRequest is a ConsumerGroupHeartbeat as the state machine sees it,
// holding copies of what it keeps. Nil fields (and rebalanceTimeout -1)
// mean "unchanged since the last heartbeat", as on the wire.
type cgRequest struct {
	version          int16
	group            string
	memberID         string
	epoch            int32
	instanceID       *string
	rackID           *string
	rebalanceTimeout int32
	topics           []string // sorted, without duplicates
	regex            *string
	assignor         *string
	// owned are the partitions the member reports owning; nil when the
	// request does not say (null Topics), never nil when it does.
	owned      topicPartitions
	clientID   string
	clientHost string
}

// full reports whether the member sent everything it has, as it does when
// it joins and after an error: then its assignment is always answered.
func (r *cgRequest) full() bool {
	return r.epoch == joinEpoch || r.rebalanceTimeout != -1 && (r.topics != nil || r.regex != nil) && r.owned != nil
}

// cgResult is the outcome of a ConsumerGroupHeartbeat.
type cgResult struct {
	code     int16
	message  string
	memberID string
	epoch    int32
	interval time.Duration
	// assignment is answered when withAssignment is set.
	assignment     topicPartitions
	withAssignment bool
}

func cgError(code int16, format string, args ...any) *cgResult {
	return &cgResult{code: code, message: fmt.Sprintf(format, args...)}
}

// heartbeat handles a ConsumerGroupHeartbeat: a join (epoch 0), a leave
// (-1, or -2 for a static member meaning to come back) or a heartbeat of a
// member at its epoch. records are written before the heartbeat's own, in
// the same batch (a conversion from an empty classic group). The answer is
// final once the turn's writes are done: a failed write undoes the turn
// and answers the error. When the answer is an error from the start, the
// caller rolls the turn back (step.rollback): nothing is queued to write.
func (g *consumerGroup) heartbeat(s *step, r *cgRequest, records []kv) *cgResult {
	if r.epoch == leaveEpoch || r.epoch == staticLeaveEpoch {
		return g.leave(s, r, records)
	}
	if r.memberID == "" {
		// A v0 join: the coordinator names the member (v1 members name
		// themselves).
		r.memberID = strings.TrimPrefix(s.newMemberID(r.clientID), "-")
	}
	m, replaced, res := g.lookupMember(s, r, &records)
	if res != nil {
		return res
	}
	if m == nil && len(g.members) >= s.cfg.ConsumerMaxSize {
		return cgError(codeGroupMaxSizeReached, "the group has reached its maximum size of %d members", s.cfg.ConsumerMaxSize)
	}
	if m != nil && r.epoch != joinEpoch {
		if res := checkMemberEpoch(m, r); res != nil {
			return res
		}
	}
	rejoin := m != nil && r.epoch == joinEpoch && !replaced
	u := updatedMember(m, r, rejoin)
	fresh := m == nil || replaced
	if fresh || !u.sameMetadata(m) {
		records = append(records, memberMetadataRecord(g.groupID, u))
	}
	if fresh || u != m {
		g.putMember(s, u)
	}

	// The group epoch moves when a member arrives or changes what it
	// subscribes to, or when the subscribed topics change (created,
	// deleted, more partitions); the target assignment follows it.
	_, _, hash := resolveTopics(s, g.subscription(s))
	if g.epoch == 0 || m == nil || !u.sameSubscription(m) || hash != g.metadataHash {
		g.setEpoch(s, g.epoch+1, hash)
		records = append(records, groupEpochRecord(g.groupID, g.epoch, hash))
		s.log.Info("bumped group epoch", "epoch", g.epoch, "member", u.id)
	}
	if g.epoch > g.assignmentEpoch {
		records = append(records, g.updateTarget(s)...)
	}

	v, code := g.reconcile(s, u, r.owned)
	if code != 0 {
		return cgError(code, "member %s is in an unknown state and still owns partitions: it must give them up and rejoin", u.id)
	}
	if v != u {
		g.putMember(s, v)
	}
	assignmentChanged := fresh || !v.sameAssignment(m)
	if assignmentChanged {
		records = append(records, currentAssignmentRecord(g.groupID, v))
	}
	switch {
	case v.state != memberUnrevoked:
		v.revocationDeadline = time.Time{}
	case assignmentChanged:
		// The member has its rebalance timeout to revoke, from when it
		// was first asked to.
		v.revocationDeadline = s.now.Add(v.rebalanceTimeout)
	}
	session, interval := groupTimings(s, s.cfg.ConsumerSessionTimeout, s.cfg.ConsumerHeartbeatInterval, "consumer")
	v.sessionDeadline = s.now.Add(session)

	res = &cgResult{memberID: v.id, epoch: v.epoch, interval: interval}
	// Kafka answers the assignment to a full request and when it changed;
	// also when the epoch the member has is not the one answered, so that
	// a member catching up never misses what goes with its new epoch.
	if r.full() || m == nil || !v.assigned.equal(m.assigned) || r.epoch != v.epoch {
		res.assignment, res.withAssignment = v.assigned, true
	}
	g.store(s, records, res)
	return res
}

// store queues the turn's records; if they cannot be appended the turn is
// undone and res answers the error.
func (g *consumerGroup) store(s *step, records []kv, res *cgResult) {
	if len(records) == 0 {
		return
	}
	s.write(records, func(s *step, err error) {
		if err == nil {
			return
		}
		s.log.Warn("storing consumer group records failed", "err", err)
		s.rollback()
		*res = *cgError(consumerStoreErrorCode(err), "storing the group's records failed")
	})
}

// lookupMember finds the member a join or heartbeat is from: nil for a new
// member. For a static member that rejoins under a new member ID after
// leaving with epoch -2, the old member is replaced (records for that are
// added) and its new incarnation returned with replaced set: it takes over
// the old one's assignment and target.
func (g *consumerGroup) lookupMember(s *step, r *cgRequest, records *[]kv) (m *consumerMember, replaced bool, res *cgResult) {
	if r.instanceID == nil {
		m = g.members[r.memberID]
		if m == nil && r.epoch != joinEpoch {
			return nil, false, cgError(codeUnknownMemberID, "member %s is not in the group", r.memberID)
		}
		return m, false, nil
	}
	holder := g.members[g.static[*r.instanceID]]
	if r.epoch != joinEpoch {
		switch {
		case holder == nil:
			return nil, false, cgError(codeUnknownMemberID, "instance ID %s is not in the group", *r.instanceID)
		case holder.id != r.memberID:
			return nil, false, cgError(codeFencedInstanceID, "instance ID %s belongs to member %s", *r.instanceID, holder.id)
		}
		return holder, false, nil
	}
	switch {
	case holder == nil:
		return g.members[r.memberID], false, nil
	case holder.id == r.memberID:
		return holder, false, nil
	case holder.epoch != staticLeaveEpoch:
		return nil, false, cgError(codeUnreleasedInstanceID,
			"instance ID %s is still held by member %s, which has not left the group", *r.instanceID, holder.id)
	}
	// A restarted static member takes the place its previous incarnation
	// kept for it: same assignment, same target, no rebalance.
	target, hasTarget := g.target[holder.id]
	g.removeMember(s, holder)
	*records = append(*records, memberTombstones(g.groupID, holder.id)...)
	m = holder.clone()
	m.id = r.memberID
	m.epoch, m.previousEpoch, m.state = 0, 0, memberStable
	m.pendingRevocation = nil
	if hasTarget {
		g.setTargetOf(s, m.id, target)
		*records = append(*records, targetMemberRecord(g.groupID, m.id, target))
	}
	s.log.Info("static member replaced", "instance", *r.instanceID, "old", holder.id, "new", m.id)
	return m, true, nil
}

// checkMemberEpoch is Kafka's rule for a heartbeat's epoch: the member's
// current epoch, or its previous one when it reports owning only partitions
// it still has (the answer that gave it the new epoch may have been lost).
func checkMemberEpoch(m *consumerMember, r *cgRequest) *cgResult {
	switch {
	case r.epoch > m.epoch:
		return cgError(codeFencedMemberEpoch, "member epoch %d is ahead of the coordinator's %d: the member must give up its partitions and rejoin", r.epoch, m.epoch)
	case r.epoch < m.epoch && (r.epoch != m.previousEpoch || r.owned == nil || !r.owned.subsetOf(m.assigned)):
		return cgError(codeFencedMemberEpoch, "member epoch %d is behind the coordinator's %d: the member must give up its partitions and rejoin", r.epoch, m.epoch)
	}
	return nil
}

// updatedMember applies a request to (a copy of) the member, or makes a new
// one; it returns m itself if nothing changes. A rejoining member (epoch 0
// with its old member ID) has given up its partitions, which the request's
// empty owned list says: it starts over from epoch 0 with nothing.
func updatedMember(m *consumerMember, r *cgRequest, rejoin bool) *consumerMember {
	var u *consumerMember
	if m == nil {
		u = &consumerMember{id: r.memberID, state: memberStable}
	} else {
		u = m.clone()
	}
	if r.instanceID != nil {
		u.instanceID = *r.instanceID
	}
	if r.rackID != nil {
		u.rackID = *r.rackID
	}
	if r.rebalanceTimeout != -1 {
		u.rebalanceTimeout = time.Duration(r.rebalanceTimeout) * time.Millisecond
	}
	if r.topics != nil {
		u.subscribedTopics = r.topics
	}
	if r.regex != nil {
		u.regex = *r.regex
	}
	if r.assignor != nil {
		u.serverAssignor = *r.assignor
	}
	u.clientID, u.clientHost = r.clientID, r.clientHost
	if rejoin {
		u.epoch, u.previousEpoch, u.state = 0, 0, memberStable
		u.assigned, u.pendingRevocation = nil, nil
		u.revocationDeadline = time.Time{}
	}
	if m != nil && !rejoin && u.sameMetadata(m) {
		return m
	}
	return u
}

// leave handles epochs -1 and -2. A member that leaves (-1) is removed and
// the group epoch bumped, so the others share its partitions; a static
// member leaving with -2 keeps its place, its assignment and its target
// until its session times out, for its next incarnation to take over.
func (g *consumerGroup) leave(s *step, r *cgRequest, records []kv) *cgResult {
	var m *consumerMember
	if r.instanceID == nil {
		m = g.members[r.memberID]
	} else {
		m = g.members[g.static[*r.instanceID]]
		if m != nil && m.id != r.memberID {
			return cgError(codeFencedInstanceID, "instance ID %s belongs to member %s", *r.instanceID, m.id)
		}
	}
	if m == nil {
		return cgError(codeUnknownMemberID, "member %s is not in the group", r.memberID)
	}
	if r.epoch == staticLeaveEpoch {
		u := m.clone()
		u.epoch = staticLeaveEpoch
		u.pendingRevocation = nil
		u.revocationDeadline = time.Time{}
		g.putMember(s, u)
		records = append(records, currentAssignmentRecord(g.groupID, u))
		s.log.Info("static member left, its place kept", "member", m.id, "instance", m.instanceID)
	} else {
		records = append(records, g.fence(s, m, "left the group")...)
	}
	res := &cgResult{memberID: r.memberID, epoch: r.epoch}
	g.store(s, records, res)
	return res
}

// fence removes a member and bumps the group epoch, so that the others
// share its partitions, which are free from now on.
func (g *consumerGroup) fence(s *step, m *consumerMember, reason string) []kv {
	g.removeMember(s, m)
	records := memberTombstones(g.groupID, m.id)
	_, _, hash := resolveTopics(s, g.subscription(s))
	g.setEpoch(s, g.epoch+1, hash)
	s.log.Info("removing member", "member", m.id, "reason", reason, "epoch", g.epoch)
	return append(records, groupEpochRecord(g.groupID, g.epoch, hash))
}

// updateTarget computes the target assignment of the group epoch and
// returns the records of what changed.
func (g *consumerGroup) updateTarget(s *step) []kv {
	target := g.computeTarget(s)
	var records []kv
	for _, id := range sortedKeys(target) {
		if old, ok := g.target[id]; !ok && target[id].count() > 0 || ok && !old.equal(target[id]) {
			records = append(records, targetMemberRecord(g.groupID, id, target[id]))
		}
	}
	g.setTarget(s, target, g.epoch)
	return append(records, kv{key: consumerKey(consumerGroupTargetMetadataKeyType, g.groupID), value: targetEpochValue(g.epoch)})
}

// setTargetOf sets one member's target.
func (g *consumerGroup) setTargetOf(s *step, memberID string, target topicPartitions) {
	old, had := g.target[memberID]
	g.target[memberID] = target
	s.onUndo(func() {
		if had {
			g.target[memberID] = old
		} else {
			delete(g.target, memberID)
		}
	})
}

// tick fences the members whose session ended, and those that did not
// revoke partitions within their rebalance timeout.
func (g *consumerGroup) tick(s *step) {
	var expired []*consumerMember
	for _, m := range g.members {
		if !s.now.Before(m.sessionDeadline) || m.revoking() && !s.now.Before(m.revocationDeadline) {
			expired = append(expired, m)
		}
	}
	if len(expired) == 0 {
		return
	}
	slices.SortFunc(expired, func(a, b *consumerMember) int { return strings.Compare(a.id, b.id) })
	var records []kv
	for _, m := range expired {
		reason := "session timed out"
		if s.now.Before(m.sessionDeadline) {
			reason = "did not revoke its partitions within its rebalance timeout"
		}
		records = append(records, g.fence(s, m, reason)...)
	}
	s.write(records, func(s *step, err error) {
		if err != nil {
			s.log.Warn("storing expired members failed; retrying at the next tick", "err", err)
			s.rollback()
		}
	})
}

// The records of a consumer group's changes.

func groupEpochRecord(groupID string, epoch int32, hash int64) kv {
	return kv{key: consumerKey(consumerGroupMetadataKeyType, groupID),
		value: groupEpochValue{epoch: epoch, metadataHash: hash}.encode()}
}

func memberMetadataRecord(groupID string, m *consumerMember) kv {
	v := memberMetadataValue{
		clientID:         m.clientID,
		clientHost:       m.clientHost,
		subscribedTopics: m.subscribedTopics,
		rebalanceTimeout: int32(m.rebalanceTimeout.Milliseconds()),
	}
	if m.instanceID != "" {
		v.instanceID = new(m.instanceID)
	}
	if m.rackID != "" {
		v.rackID = new(m.rackID)
	}
	if m.regex != "" {
		v.regex = new(m.regex)
	}
	if m.serverAssignor != "" {
		v.serverAssignor = new(m.serverAssignor)
	}
	return kv{key: consumerKey(consumerGroupMemberMetadataKeyType, groupID, m.id), value: v.encode()}
}

func targetMemberRecord(groupID, memberID string, target topicPartitions) kv {
	return kv{key: consumerKey(consumerGroupTargetMemberKeyType, groupID, memberID), value: targetMemberValue(target)}
}

func currentAssignmentRecord(groupID string, m *consumerMember) kv {
	v := currentAssignmentValue{epoch: m.epoch, previousEpoch: m.previousEpoch, state: m.state,
		assigned: m.assigned, pendingRevocation: m.pendingRevocation}
	return kv{key: consumerKey(consumerGroupCurrentMemberKeyType, groupID, m.id), value: v.encode()}
}

// memberTombstones delete a member's records, in the order Kafka writes
// them.
func memberTombstones(groupID, memberID string) []kv {
	return []kv{
		{key: consumerKey(consumerGroupCurrentMemberKeyType, groupID, memberID)},
		{key: consumerKey(consumerGroupTargetMemberKeyType, groupID, memberID)},
		{key: consumerKey(consumerGroupMemberMetadataKeyType, groupID, memberID)},
	}
}

// tombstones delete an empty group's own records.
func (g *consumerGroup) tombstones() []kv {
	return []kv{
		{key: consumerKey(consumerGroupTargetMetadataKeyType, g.groupID)},
		{key: consumerKey(consumerGroupPartitionMetadataKeyType, g.groupID)},
		{key: consumerKey(consumerGroupMetadataKeyType, g.groupID)},
	}
}

package group

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// shRequest is a ShareGroupHeartbeat as the state machine sees it, holding
// copies of what it keeps. Nil fields mean "unchanged since the last
// heartbeat", as on the wire.
type shRequest struct {
	group    string
	memberID string
	epoch    int32
	rackID   *string
	topics   []string // sorted, without duplicates
	// clientID and clientHost are the connection's, kept for describes.
	clientID   string
	clientHost string
}

// shResult is the outcome of a ShareGroupHeartbeat.
type shResult struct {
	code     int16
	message  string
	memberID string
	epoch    int32
	interval time.Duration
	// assignment is answered when withAssignment is set.
	assignment     topicPartitions
	withAssignment bool
}

func shError(code int16, format string, args ...any) *shResult {
	return &shResult{code: code, message: fmt.Sprintf(format, args...)}
}

// heartbeat handles a ShareGroupHeartbeat: a join (epoch 0), a leave (-1)
// or a heartbeat of a member at its epoch (or the one before, when the
// answer that moved it was lost). A failed write undoes the turn and
// answers the error; when the answer is an error from the start, the
// caller rolls the turn back.
func (g *shareGroup) heartbeat(s *step, r *shRequest) *shResult {
	if r.epoch == leaveEpoch {
		return g.leave(s, r)
	}
	var records []kv
	m := g.members[r.memberID]
	switch {
	case m == nil && r.epoch != joinEpoch:
		return shError(codeUnknownMemberID, "member %s is not in the group", r.memberID)
	case m == nil && len(g.members) >= s.cfg.ShareMaxSize:
		return shError(codeGroupMaxSizeReached, "the share group has reached its maximum size of %d members", s.cfg.ShareMaxSize)
	case m != nil && r.epoch != joinEpoch:
		if res := checkShareEpoch(m, r.epoch); res != nil {
			return res
		}
	}
	u := updatedShareMember(m, r)
	if m == nil || !u.sameMetadata(m) {
		records = append(records, shareMemberRecord(g.groupID, u))
		g.putMember(s, u)
	}

	// The group epoch moves when a member arrives or changes its
	// subscription, or when the subscribed topics change; the target
	// assignment follows it.
	_, _, hash := resolveTopics(s, g.subscription())
	if g.epoch == 0 || m == nil || !slices.Equal(u.subscribedTopics, m.subscribedTopics) || hash != g.metadataHash {
		g.setEpoch(s, g.epoch+1, hash)
		records = append(records, shareEpochRecord(g.groupID, g.epoch, hash))
		s.log.Info("bumped share group epoch", "epoch", g.epoch, "member", u.id)
	}
	if g.epoch > g.assignmentEpoch {
		records = append(records, g.updateTarget(s)...)
	}

	// No revocation: the member takes its target at once.
	v := u
	if target := g.target[u.id]; u.epoch != g.assignmentEpoch || !u.assigned.equal(target) {
		v = u.clone()
		v.previousEpoch, v.epoch, v.assigned = u.epoch, g.assignmentEpoch, target
		g.putMember(s, v)
		records = append(records, shareCurrentRecord(g.groupID, v))
	}
	session, interval := shareTimings(s)
	v.sessionDeadline = s.now.Add(session)

	res := &shResult{memberID: v.id, epoch: v.epoch, interval: interval}
	// Kafka answers the assignment to a join and when it changed.
	if r.epoch == joinEpoch || m == nil || !v.assigned.equal(m.assigned) {
		res.assignment, res.withAssignment = v.assigned, true
	}
	g.store(s, records, res)
	return res
}

// checkShareEpoch is Kafka's rule for a share member's epoch: its current
// one, or the one before.
func checkShareEpoch(m *shareMember, epoch int32) *shResult {
	switch {
	case epoch > m.epoch:
		return shError(codeFencedMemberEpoch, "the share group member has a greater member epoch (%d) than the one known by the group coordinator (%d); the member must abandon all its partitions and rejoin", epoch, m.epoch)
	case epoch < m.epoch && epoch != m.previousEpoch:
		return shError(codeFencedMemberEpoch, "the share group member has a smaller member epoch (%d) than the one known by the group coordinator (%d); the member must abandon all its partitions and rejoin", epoch, m.epoch)
	}
	return nil
}

// updatedShareMember applies a request to (a copy of) the member, or makes
// a new one; it returns m itself if nothing changes.
func updatedShareMember(m *shareMember, r *shRequest) *shareMember {
	var u *shareMember
	if m == nil {
		u = &shareMember{id: r.memberID}
	} else {
		u = m.clone()
	}
	if r.rackID != nil {
		u.rackID = *r.rackID
	}
	if r.topics != nil {
		u.subscribedTopics = r.topics
	}
	u.clientID, u.clientHost = r.clientID, r.clientHost
	if m != nil && u.sameMetadata(m) {
		return m
	}
	return u
}

// leave removes a member (epoch -1) and bumps the group epoch, so the
// others are given its partitions.
func (g *shareGroup) leave(s *step, r *shRequest) *shResult {
	m := g.members[r.memberID]
	if m == nil {
		return shError(codeUnknownMemberID, "member %s is not in the group", r.memberID)
	}
	records := g.fence(s, m, "left the group")
	res := &shResult{memberID: r.memberID, epoch: leaveEpoch}
	g.store(s, records, res)
	return res
}

// fence removes a member and bumps the group epoch.
func (g *shareGroup) fence(s *step, m *shareMember, reason string) []kv {
	g.removeMember(s, m)
	records := shareMemberTombstones(g.groupID, m.id)
	_, _, hash := resolveTopics(s, g.subscription())
	g.setEpoch(s, g.epoch+1, hash)
	s.log.Info("removing share group member", "member", m.id, "reason", reason, "epoch", g.epoch)
	return append(records, shareEpochRecord(g.groupID, g.epoch, hash))
}

// store queues the turn's records; if they cannot be appended the turn is
// undone and res answers the error.
func (g *shareGroup) store(s *step, records []kv, res *shResult) {
	if len(records) == 0 {
		return
	}
	s.write(records, func(s *step, err error) {
		if err == nil {
			return
		}
		s.log.Warn("storing share group records failed", "err", err)
		s.rollback()
		*res = *shError(consumerStoreErrorCode(err), "storing the group's records failed")
	})
}

// updateTarget computes the target assignment of the group epoch with the
// simple assignor, marks the partitions it hands out as initialized, and
// returns the records of what changed.
func (g *shareGroup) updateTarget(s *step) []kv {
	topics, ids, _ := resolveTopics(s, g.subscription())
	in := &assignInput{topics: topics}
	for _, m := range g.sortedMembers() {
		am := assignMember{id: m.id, previous: g.target[m.id]}
		for _, name := range m.subscribedTopics {
			if id, ok := ids[name]; ok {
				am.subscribed = append(am.subscribed, id)
			}
		}
		in.members = append(in.members, am)
	}
	target := simpleAssignor{}.assign(in)
	var records []kv
	var all topicPartitions
	for _, id := range sortedKeys(target) {
		if old, ok := g.target[id]; !ok && target[id].count() > 0 || ok && !old.equal(target[id]) {
			records = append(records, shareTargetMemberRecord(g.groupID, id, target[id]))
		}
		all = all.union(target[id])
	}
	g.setTarget(s, target, g.epoch)
	records = append(records, shareTargetEpochRecord(g.groupID, g.epoch))
	name := func(id [16]byte) string { return topics[id].name }
	if init := g.withInitialized(all, name, s.now.UnixMilli()); init != nil {
		g.setInitialized(s, init)
		records = append(records, shareStatePartitionRecord(g.groupID, init))
	}
	return records
}

// tick removes the members whose session ended.
func (g *shareGroup) tick(s *step) {
	var expired []*shareMember
	for _, m := range g.members {
		if !s.now.Before(m.sessionDeadline) {
			expired = append(expired, m)
		}
	}
	if len(expired) == 0 {
		return
	}
	slices.SortFunc(expired, func(a, b *shareMember) int { return strings.Compare(a.id, b.id) })
	var records []kv
	for _, m := range expired {
		records = append(records, g.fence(s, m, "session timed out")...)
	}
	s.write(records, func(s *step, err error) {
		if err != nil {
			s.log.Warn("storing expired share group members failed; retrying at the next tick", "err", err)
			s.rollback()
		}
	})
}

// shareTimings are a share group's session timeout and heartbeat
// interval.
func shareTimings(s *step) (session, interval time.Duration) {
	return groupTimings(s, s.cfg.ShareSessionTimeout, s.cfg.ShareHeartbeatInterval, "share")
}

// groupTimings are a group's session timeout and heartbeat interval: its
// own <kind>.session.timeout.ms and <kind>.heartbeat.interval.ms (the
// GROUP config resource, checked against the broker's bounds when set)
// over the broker's group.<kind>.* ones.
func groupTimings(s *step, session, interval time.Duration, kind string) (time.Duration, time.Duration) {
	if s.overrides == nil {
		return session, interval
	}
	ov := s.overrides()
	if n, err := strconv.Atoi(ov[kind+".session.timeout.ms"]); err == nil && n > 0 {
		session = time.Duration(n) * time.Millisecond
	}
	if n, err := strconv.Atoi(ov[kind+".heartbeat.interval.ms"]); err == nil && n > 0 {
		interval = time.Duration(n) * time.Millisecond
	}
	return session, interval
}

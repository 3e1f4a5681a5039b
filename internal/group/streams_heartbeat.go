package group

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// sgRequest is a StreamsGroupHeartbeat as the state machine sees it. Nil
// fields mean "unchanged since the last heartbeat", as on the wire.
type sgRequest struct {
	group            string
	memberID         string
	epoch            int32
	endpointEpoch    int32
	instanceID       *string
	rackID           *string
	rebalanceTimeout int32
	// topology is sent with a join only.
	topology *streamsTopology
	// owned are the tasks the member reports owning; nil when it did not
	// say.
	owned      *streamsTasks
	processID  *string
	endpoint   *streamsEndpoint
	clientTags [][2]string
	tagsSet    bool
	// taskOffsets and taskEndOffsets are the changelog offsets of the
	// member's tasks; nil when unchanged.
	taskOffsets, taskEndOffsets map[taskID]int64
	shutdown                    bool
	clientID, clientHost        string

	// The group's settings, with its group-level overrides.
	settings streamsSettings
}

// streamsSettings are a streams group's timeouts and assignment settings:
// the broker's group.streams.* configs, or the group's own streams.*
// overrides.
type streamsSettings struct {
	sessionTimeout    time.Duration
	heartbeatInterval time.Duration
	standbys          int
}

func (st streamsSettings) assignmentConfigs() map[string]string {
	return map[string]string{"num.standby.replicas": strconv.Itoa(st.standbys)}
}

// sgResult is the outcome of a StreamsGroupHeartbeat.
type sgResult struct {
	code     int16
	message  string
	memberID string
	epoch    int32
	interval time.Duration
	statuses []streamsStatus
	// assignment is answered when withAssignment is set.
	assignment     streamsTasks
	withAssignment bool
	// endpointEpoch is the group's endpoint information epoch; endpoints
	// is answered when withEndpoints is set.
	endpointEpoch int32
	endpoints     []endpointTasks
	withEndpoints bool
	// create are the internal topics to create, outside the group's lock.
	create []NewTopic
}

// endpointTasks is what one user endpoint (a Kafka Streams instance's
// interactive query server) holds: topic partitions by topic, of its
// active and its standby tasks.
type endpointTasks struct {
	endpoint        streamsEndpoint
	active, standby map[string][]int32
}

func sgError(code int16, format string, args ...any) *sgResult {
	return &sgResult{code: code, message: fmt.Sprintf(format, args...)}
}

// acceptableRecoveryLag is how far behind its changelogs a warm-up task may
// be to count as caught up: Kafka Streams' acceptable.recovery.lag
// default.
const acceptableRecoveryLag = 10000

// heartbeat handles a StreamsGroupHeartbeat: a join (epoch 0, with the
// topology), a leave (-1, or -2 for a static member meaning to come back)
// or a heartbeat at the member's epoch. records are written first, in the
// same batch (a conversion from an empty classic group).
func (g *streamsGroup) heartbeat(s *step, r *sgRequest, records []kv) *sgResult {
	if r.epoch == leaveEpoch || r.epoch == staticLeaveEpoch {
		return g.leave(s, r, records)
	}
	m, replaced, res := g.lookupMember(s, r, &records)
	if res != nil {
		return res
	}
	if m == nil && len(g.members) >= s.cfg.Streams.MaxSize {
		return sgError(codeGroupMaxSizeReached, "the group has reached its maximum size of %d members", s.cfg.Streams.MaxSize)
	}
	if m != nil && r.epoch != joinEpoch {
		if res := checkStreamsEpoch(m, r); res != nil {
			return res
		}
	}
	if r.topology != nil && g.topologyReplaceable(r.topology, r.memberID) {
		g.setTopology(s, r.topology)
		records = append(records, streamsTopologyRecord(g.groupID, r.topology))
		s.log.Info("streams group topology set", "epoch", r.topology.epoch, "member", r.memberID)
	}
	rejoin := m != nil && r.epoch == joinEpoch && !replaced
	u := updatedStreamsMember(m, r, rejoin)
	fresh := m == nil || replaced
	if fresh || !u.sameMetadata(m) {
		records = append(records, streamsMemberRecord(g.groupID, u))
	}
	if fresh || u != m {
		g.putMember(s, u)
	}
	if r.taskOffsets != nil {
		u.taskOffsets = r.taskOffsets
	}
	if r.taskEndOffsets != nil {
		u.taskEndOffsets = r.taskEndOffsets
	}

	ct := g.configure(s)
	g.configured = ct
	validated := int32(-1)
	if ct.ready() {
		validated = g.topology.epoch
	}
	configs := r.settings.assignmentConfigs()
	switch {
	case g.epoch == 0, m == nil, !u.sameForAssignment(m), ct.hash != g.metadataHash,
		validated != g.validatedTopologyEpoch, !maps.Equal(configs, g.assignmentConfigs), g.warmupCaughtUp(u):
		g.setEpoch(s, g.epoch+1, ct.hash, validated, configs)
		records = append(records, streamsEpochRecord(g))
		s.log.Info("bumped streams group epoch", "epoch", g.epoch, "member", u.id)
	}
	if g.epoch > g.assignmentEpoch {
		records = append(records, g.updateTarget(s, ct, r.settings.standbys)...)
	}

	v, code := g.reconcile(u, r.owned)
	if code != 0 {
		return sgError(code, "member %s is in an unknown state and still owns tasks: it must give them up and rejoin", u.id)
	}
	if v != u {
		g.putMember(s, v)
	}
	assignmentChanged := fresh || !v.sameAssignment(m)
	if assignmentChanged {
		records = append(records, streamsCurrentRecord(g.groupID, v))
	}
	if assignmentChanged || m == nil || !sameEndpoint(u.endpoint, m.endpoint) {
		g.bumpEndpointEpoch()
	}
	switch {
	case v.state != memberUnrevoked:
		v.revocationDeadline = time.Time{}
	case assignmentChanged:
		v.revocationDeadline = s.now.Add(v.rebalanceTimeout)
	}
	v.sessionDeadline = s.now.Add(r.settings.sessionTimeout)

	res = &sgResult{memberID: v.id, epoch: v.epoch, interval: r.settings.heartbeatInterval, create: ct.create}
	res.statuses = slices.Clone(ct.statuses)
	if v.topologyEpoch != g.topology.epoch {
		res.statuses = append(res.statuses, streamsStatus{streamsStatusStaleTopology,
			fmt.Sprintf("The member's topology epoch %d is behind the group's %d.", v.topologyEpoch, g.topology.epoch)})
	}
	if r.shutdown && g.shutdown == "" {
		g.shutdown = fmt.Sprintf("Streams group member %s encountered a fatal error and requested a shutdown for the entire application.", v.id)
	}
	if g.shutdown != "" {
		res.statuses = append(res.statuses, streamsStatus{streamsStatusShutdownApplication, g.shutdown})
	}
	if r.epoch == joinEpoch || m == nil || !v.assigned.equal(m.assigned) || r.epoch != v.epoch || r.owned != nil && !r.owned.equal(v.assigned) {
		res.assignment, res.withAssignment = v.assigned, true
	}
	// The epoch is always answered: the Java client takes it from every
	// answer, with or without the information.
	res.endpointEpoch = g.endpointEpoch
	if r.endpointEpoch != g.endpointEpoch {
		res.endpoints, res.withEndpoints = g.endpointInformation(ct), true
	}
	g.store(s, records, res)
	return res
}

// topologyReplaceable reports whether a joining member's topology becomes
// the group's: when the group has none, or when it is newer and no other
// member runs the old one (Kafka updates a topology only then).
func (g *streamsGroup) topologyReplaceable(t *streamsTopology, memberID string) bool {
	if g.topology == nil {
		return true
	}
	if t.epoch <= g.topology.epoch {
		return false
	}
	for id, m := range g.members {
		if id != memberID && m.epoch != staticLeaveEpoch && m.topologyEpoch == g.topology.epoch {
			return false
		}
	}
	return true
}

// warmupCaughtUp reports whether a member holds a warm-up task whose state
// it has now restored: the group epoch then moves so the task can move to
// it (Kafka's probing rebalance).
func (g *streamsGroup) warmupCaughtUp(m *streamsMember) bool {
	for _, t := range m.assigned.warmup.list() {
		if g.caughtUp(m, t) {
			return true
		}
	}
	return false
}

// caughtUp reports whether a member's state of a task is within the
// acceptable recovery lag: its reported changelog offset (0 without one)
// against the furthest offset any member reported for the task, end or
// restored (Kafka Streams 4.4 reports the offsets of its tasks' state, not
// always their end). With nothing reported there is nothing known to
// restore: caught up.
func (g *streamsGroup) caughtUp(m *streamsMember, t taskID) bool {
	end, known := int64(0), false
	for _, o := range g.members {
		for _, offsets := range []map[taskID]int64{o.taskOffsets, o.taskEndOffsets} {
			if off, ok := offsets[t]; ok {
				end, known = max(end, off), true
			}
		}
	}
	return !known || end-m.taskOffsets[t] <= acceptableRecoveryLag
}

// store queues the turn's records; if they cannot be appended the turn is
// undone and res answers the error.
func (g *streamsGroup) store(s *step, records []kv, res *sgResult) {
	if len(records) == 0 {
		return
	}
	s.write(records, func(s *step, err error) {
		if err == nil {
			return
		}
		s.log.Warn("storing streams group records failed", "err", err)
		s.rollback()
		*res = *sgError(consumerStoreErrorCode(err), "storing the group's records failed")
	})
}

// lookupMember finds the member a request is from: nil for a new member.
// A static member rejoining under a new member ID after leaving with -2
// replaces its previous incarnation, taking over its tasks and target.
func (g *streamsGroup) lookupMember(s *step, r *sgRequest, records *[]kv) (m *streamsMember, replaced bool, res *sgResult) {
	if r.instanceID == nil {
		m = g.members[r.memberID]
		if m == nil && r.epoch != joinEpoch {
			return nil, false, sgError(codeUnknownMemberID, "member %s is not in the group", r.memberID)
		}
		return m, false, nil
	}
	holder := g.members[g.static[*r.instanceID]]
	switch {
	case r.epoch != joinEpoch && holder == nil:
		return nil, false, sgError(codeUnknownMemberID, "instance ID %s is not in the group", *r.instanceID)
	case r.epoch != joinEpoch && holder.id != r.memberID:
		return nil, false, sgError(codeFencedInstanceID, "instance ID %s belongs to member %s", *r.instanceID, holder.id)
	case r.epoch != joinEpoch || holder != nil && holder.id == r.memberID:
		return holder, false, nil
	case holder == nil:
		return g.members[r.memberID], false, nil
	case holder.epoch != staticLeaveEpoch:
		return nil, false, sgError(codeUnreleasedInstanceID,
			"instance ID %s is still held by member %s, which has not left the group", *r.instanceID, holder.id)
	}
	target, hasTarget := g.target[holder.id]
	g.removeMember(s, holder)
	*records = append(*records, streamsMemberTombstones(g.groupID, holder.id)...)
	m = holder.clone()
	m.id = r.memberID
	m.epoch, m.previousEpoch, m.state = 0, 0, memberStable
	m.pendingRevocation = streamsTasks{}
	if hasTarget {
		g.setTargetOf(s, m.id, target)
		*records = append(*records, streamsTargetRecord(g.groupID, m.id, target))
	}
	s.log.Info("static streams member replaced", "instance", *r.instanceID, "old", holder.id, "new", m.id)
	return m, true, nil
}

// checkStreamsEpoch is the consumer protocol's epoch rule: the member's
// epoch, or its previous one when it reports owning only tasks it still
// has (the answer with the new epoch was lost).
func checkStreamsEpoch(m *streamsMember, r *sgRequest) *sgResult {
	switch {
	case r.epoch > m.epoch:
		return sgError(codeFencedMemberEpoch, "member epoch %d is ahead of the coordinator's %d", r.epoch, m.epoch)
	case r.epoch < m.epoch && (r.epoch != m.previousEpoch || r.owned == nil || !r.owned.subsetOf(m.assigned)):
		return sgError(codeFencedMemberEpoch, "member epoch %d is behind the coordinator's %d", r.epoch, m.epoch)
	}
	return nil
}

func updatedStreamsMember(m *streamsMember, r *sgRequest, rejoin bool) *streamsMember {
	var u *streamsMember
	if m == nil {
		u = &streamsMember{id: r.memberID, state: memberStable}
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
		u.rebalanceTimeout = msDuration(r.rebalanceTimeout)
	}
	if r.topology != nil {
		u.topologyEpoch = r.topology.epoch
	}
	if r.processID != nil {
		u.processID = *r.processID
	}
	if r.endpoint != nil {
		u.endpoint = r.endpoint
	}
	if r.tagsSet {
		u.clientTags = r.clientTags
	}
	u.clientID, u.clientHost = r.clientID, r.clientHost
	if rejoin {
		u.epoch, u.previousEpoch, u.state = 0, 0, memberStable
		u.assigned, u.pendingRevocation = streamsTasks{}, streamsTasks{}
		u.revocationDeadline = time.Time{}
	}
	if m != nil && !rejoin && u.sameMetadata(m) {
		return m
	}
	return u
}

// leave handles epochs -1 and -2, as the consumer protocol does.
func (g *streamsGroup) leave(s *step, r *sgRequest, records []kv) *sgResult {
	m := g.members[r.memberID]
	if r.instanceID != nil {
		m = g.members[g.static[*r.instanceID]]
		if m != nil && m.id != r.memberID {
			return sgError(codeFencedInstanceID, "instance ID %s belongs to member %s", *r.instanceID, m.id)
		}
	}
	if m == nil {
		return sgError(codeUnknownMemberID, "member %s is not in the group", r.memberID)
	}
	if r.epoch == staticLeaveEpoch {
		u := m.clone()
		u.epoch = staticLeaveEpoch
		u.pendingRevocation = streamsTasks{}
		u.revocationDeadline = time.Time{}
		g.putMember(s, u)
		records = append(records, streamsCurrentRecord(g.groupID, u))
		s.log.Info("static streams member left, its place kept", "member", m.id, "instance", m.instanceID)
	} else {
		records = append(records, g.fence(s, m, "left the group")...)
	}
	res := &sgResult{memberID: r.memberID, epoch: r.epoch}
	g.store(s, records, res)
	return res
}

// fence removes a member and bumps the group epoch, so that the others
// take over its tasks.
func (g *streamsGroup) fence(s *step, m *streamsMember, reason string) []kv {
	g.removeMember(s, m)
	g.bumpEndpointEpoch()
	if len(g.members) == 0 {
		g.shutdown = "" // the application is down: it may start again
	}
	records := streamsMemberTombstones(g.groupID, m.id)
	g.setEpoch(s, g.epoch+1, g.metadataHash, g.validatedTopologyEpoch, g.assignmentConfigs)
	s.log.Info("removing streams member", "member", m.id, "reason", reason, "epoch", g.epoch)
	return append(records, streamsEpochRecord(g))
}

// updateTarget computes the target assignment of the group epoch: nothing
// for anyone while the topology is not ready.
func (g *streamsGroup) updateTarget(s *step, ct *configuredTopology, standbys int) []kv {
	in := &streamsAssignInput{stateful: ct.stateful, standbys: standbys, maxWarmups: s.cfg.Streams.MaxWarmupReplicas}
	if ct.ready() {
		in.tasks = ct.tasks
	}
	for _, m := range g.sortedMembers() {
		in.members = append(in.members, streamsAssignMember{
			id: m.id, processID: m.processID, previous: g.target[m.id],
			caughtUp: func(t taskID) bool { return g.caughtUp(m, t) },
		})
	}
	target := assignStreams(in)
	var records []kv
	for _, id := range sortedKeys(target) {
		if old, ok := g.target[id]; !ok && target[id].count() > 0 || ok && !old.equal(target[id]) {
			records = append(records, streamsTargetRecord(g.groupID, id, target[id]))
		}
	}
	g.setTarget(s, target, g.epoch)
	return append(records, streamsTargetEpochRecord(g.groupID, g.epoch))
}

// tick fences the members whose session ended, and those that did not
// revoke tasks within their rebalance timeout.
func (g *streamsGroup) tick(s *step) {
	var expired []*streamsMember
	for _, m := range g.members {
		if !s.now.Before(m.sessionDeadline) || m.revoking() && !s.now.Before(m.revocationDeadline) {
			expired = append(expired, m)
		}
	}
	if len(expired) == 0 {
		return
	}
	slices.SortFunc(expired, func(a, b *streamsMember) int { return strings.Compare(a.id, b.id) })
	var records []kv
	for _, m := range expired {
		reason := "session timed out"
		if s.now.Before(m.sessionDeadline) {
			reason = "did not revoke its tasks within its rebalance timeout"
		}
		records = append(records, g.fence(s, m, reason)...)
	}
	s.write(records, func(s *step, err error) {
		if err != nil {
			s.log.Warn("storing expired streams members failed; retrying at the next tick", "err", err)
			s.rollback()
		}
	})
}

// endpointInformation lists, per user endpoint, the topic partitions its
// members' active and standby tasks read: what interactive queries need to
// find a key's instance.
func (g *streamsGroup) endpointInformation(ct *configuredTopology) []endpointTasks {
	byEndpoint := make(map[streamsEndpoint]*endpointTasks)
	var order []streamsEndpoint
	add := func(dst map[string][]int32, tasks taskSet) {
		for _, t := range tasks.list() {
			for _, topic := range ct.sources[t.subtopology] {
				if t.partition < ct.partitions[topic] {
					dst[topic] = append(dst[topic], t.partition)
				}
			}
		}
	}
	for _, m := range g.sortedMembers() {
		if m.endpoint == nil {
			continue
		}
		e := byEndpoint[*m.endpoint]
		if e == nil {
			e = &endpointTasks{endpoint: *m.endpoint, active: map[string][]int32{}, standby: map[string][]int32{}}
			byEndpoint[*m.endpoint] = e
			order = append(order, *m.endpoint)
		}
		add(e.active, m.assigned.active)
		add(e.standby, m.assigned.standby)
	}
	out := make([]endpointTasks, 0, len(order))
	for _, ep := range order {
		e := byEndpoint[ep]
		for _, ps := range []map[string][]int32{e.active, e.standby} {
			for topic := range ps {
				slices.Sort(ps[topic])
				ps[topic] = slices.Compact(ps[topic])
			}
		}
		out = append(out, *e)
	}
	return out
}

func msDuration(ms int32) time.Duration {
	return time.Duration(max(ms, 0)) * time.Millisecond
}

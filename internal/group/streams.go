package group

import (
	"slices"
	"strings"
	"time"
)

// streamsGroup is the state of a group that runs KIP-1071's streams
// protocol (StreamsGroupHeartbeat). It works like a consumer group
// (group epoch, target assignment at an assignment epoch, members that
// reconcile toward their target one heartbeat at a time), but what is
// assigned are tasks (a subtopology and a partition) in three roles,
// active, standby and warm-up, and the group holds the application's
// topology, from which the coordinator derives the tasks and the internal
// topics the application needs.
//
// Members are copied on write, as in consumerGroup, so that a turn whose
// records cannot be stored is undone (step.undo).
type streamsGroup struct {
	groupID string
	// epoch is the group epoch, assignmentEpoch the epoch of the target.
	epoch           int32
	assignmentEpoch int32
	// metadataHash identifies the topology's topics (names and partition
	// counts) when the epoch last moved; validatedTopologyEpoch is the
	// topology epoch that was ready (every topic there, well partitioned)
	// then, -1 if it was not; assignmentConfigs the assignment settings
	// (num.standby.replicas) then. A change of any bumps the group epoch.
	metadataHash           int64
	validatedTopologyEpoch int32
	assignmentConfigs      map[string]string
	// topology is the application's, set by the first member to join and
	// replaced by a member with a newer topology epoch once no member runs
	// the old one. Nil before any member joined.
	topology *streamsTopology
	members  map[string]*streamsMember
	target   map[string]streamsTasks
	dead     bool

	// static maps an instance ID to the member holding it (derived).
	static map[string]string

	// Soft state, rebuilt after a load.

	// endpointEpoch counts changes of the endpoint information (who runs
	// which tasks where); a member whose EndpointInformationEpoch is behind
	// gets PartitionsByUserEndpoint.
	endpointEpoch int32
	// configured caches the topology configured against the topics it
	// names, by hash of those topics.
	configured *configuredTopology
	// shutdown is the status detail of a member's request to shut the
	// whole application down (ShutdownApplication): every member hears it
	// until the group is empty.
	shutdown string
}

// streamsMember is one member (one consumer of a Kafka Streams client) of
// a streams group.
type streamsMember struct {
	id               string
	instanceID       string
	rackID           string
	clientID         string
	clientHost       string
	rebalanceTimeout time.Duration
	topologyEpoch    int32
	// processID names the Kafka Streams instance the member is a thread
	// of: the tasks of one process share its state directory, so the
	// assignor spreads standbys over processes, not members.
	processID  string
	endpoint   *streamsEndpoint
	clientTags [][2]string // sorted by key

	epoch, previousEpoch int32
	state                memberState
	assigned             streamsTasks
	pendingRevocation    streamsTasks

	// Soft state: the changelog offsets the member reported for its tasks
	// (how far each task's state is restored), which say whether a warm-up
	// task has caught up; and its deadlines, changed in place.
	taskOffsets        map[taskID]int64
	taskEndOffsets     map[taskID]int64
	sessionDeadline    time.Time
	revocationDeadline time.Time
}

type streamsEndpoint struct {
	host string
	port uint16
}

func newStreamsGroup(groupID string) streamsGroup {
	return streamsGroup{
		groupID:                groupID,
		validatedTopologyEpoch: -1,
		members:                make(map[string]*streamsMember),
		target:                 make(map[string]streamsTasks),
		static:                 make(map[string]string),
	}
}

// blank reports whether the group is as new: never persisted.
func (g *streamsGroup) blank() bool {
	return g.epoch == 0 && len(g.members) == 0 && g.topology == nil && !g.dead
}

func (g *streamsGroup) empty() bool { return len(g.members) == 0 }

// stateName is the group state as StreamsGroupDescribe, DescribeGroups and
// ListGroups name it (Kafka's StreamsGroupState): Empty, NotReady while the
// topology cannot be assigned (topics missing), Assigning, Reconciling,
// Stable.
func (g *streamsGroup) stateName() string {
	switch {
	case g.dead:
		return "Dead"
	case len(g.members) == 0:
		return "Empty"
	case g.topology == nil || g.configured != nil && !g.configured.ready():
		return "NotReady"
	case g.epoch > g.assignmentEpoch:
		return "Assigning"
	}
	for _, m := range g.members {
		if m.epoch != g.assignmentEpoch || m.state != memberStable {
			return "Reconciling"
		}
	}
	return "Stable"
}

func (g *streamsGroup) sortedMembers() []*streamsMember {
	ms := make([]*streamsMember, 0, len(g.members))
	for _, m := range g.members {
		ms = append(ms, m)
	}
	slices.SortFunc(ms, func(a, b *streamsMember) int { return strings.Compare(a.id, b.id) })
	return ms
}

func (m *streamsMember) clone() *streamsMember {
	c := *m
	return &c
}

func (m *streamsMember) revoking() bool {
	return m.state == memberUnrevoked && !m.revocationDeadline.IsZero()
}

// sameMetadata reports whether what StreamsGroupMemberMetadata holds is
// unchanged.
func (m *streamsMember) sameMetadata(o *streamsMember) bool {
	return m.instanceID == o.instanceID && m.rackID == o.rackID && m.clientID == o.clientID &&
		m.clientHost == o.clientHost && m.rebalanceTimeout == o.rebalanceTimeout &&
		m.topologyEpoch == o.topologyEpoch && m.processID == o.processID &&
		sameEndpoint(m.endpoint, o.endpoint) && slices.Equal(m.clientTags, o.clientTags)
}

// sameForAssignment reports whether a change of o into m leaves the target
// assignment as it is: the assignor reads the process and the topology
// epoch only.
func (m *streamsMember) sameForAssignment(o *streamsMember) bool {
	return m.processID == o.processID && m.topologyEpoch == o.topologyEpoch
}

func (m *streamsMember) sameAssignment(o *streamsMember) bool {
	return m.epoch == o.epoch && m.previousEpoch == o.previousEpoch && m.state == o.state &&
		m.assigned.equal(o.assigned) && m.pendingRevocation.equal(o.pendingRevocation)
}

func sameEndpoint(a, b *streamsEndpoint) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// putMember puts m in place of the member with its ID, if any.
func (g *streamsGroup) putMember(s *step, m *streamsMember) {
	old := g.members[m.id]
	g.replaceMember(old, m)
	s.onUndo(func() { g.replaceMember(m, old) })
}

// removeMember takes m and its target out of the group.
func (g *streamsGroup) removeMember(s *step, m *streamsMember) {
	g.replaceMember(m, nil)
	target, had := g.target[m.id]
	delete(g.target, m.id)
	s.onUndo(func() {
		g.replaceMember(nil, m)
		if had {
			g.target[m.id] = target
		}
	})
}

func (g *streamsGroup) replaceMember(old, m *streamsMember) {
	if old != nil {
		if m == nil || m.id != old.id {
			delete(g.members, old.id)
		}
		if old.instanceID != "" && g.static[old.instanceID] == old.id {
			delete(g.static, old.instanceID)
		}
	}
	if m != nil {
		g.members[m.id] = m
		if m.instanceID != "" {
			g.static[m.instanceID] = m.id
		}
	}
}

// setEpoch moves the group epoch and what it was computed from.
func (g *streamsGroup) setEpoch(s *step, epoch int32, hash int64, validated int32, configs map[string]string) {
	oldEpoch, oldHash, oldValidated, oldConfigs := g.epoch, g.metadataHash, g.validatedTopologyEpoch, g.assignmentConfigs
	g.epoch, g.metadataHash, g.validatedTopologyEpoch, g.assignmentConfigs = epoch, hash, validated, configs
	bumped := epoch > oldEpoch
	if bumped {
		s.epochBumps++
	}
	s.onUndo(func() {
		g.epoch, g.metadataHash, g.validatedTopologyEpoch, g.assignmentConfigs = oldEpoch, oldHash, oldValidated, oldConfigs
		if bumped {
			s.epochBumps--
		}
	})
}

func (g *streamsGroup) setTarget(s *step, target map[string]streamsTasks, epoch int32) {
	oldTarget, oldEpoch := g.target, g.assignmentEpoch
	g.target, g.assignmentEpoch = target, epoch
	s.onUndo(func() { g.target, g.assignmentEpoch = oldTarget, oldEpoch })
}

func (g *streamsGroup) setTargetOf(s *step, memberID string, target streamsTasks) {
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

func (g *streamsGroup) setTopology(s *step, t *streamsTopology) {
	old, oldConfigured := g.topology, g.configured
	g.topology, g.configured = t, nil
	s.onUndo(func() { g.topology, g.configured = old, oldConfigured })
}

// bumpEndpointEpoch records that the endpoint information changed. It is
// soft state and not undone: a spurious bump only resends the
// information.
func (g *streamsGroup) bumpEndpointEpoch() { g.endpointEpoch++ }

// tombstones delete an empty streams group's own records.
func (g *streamsGroup) tombstones() []kv {
	return []kv{
		{key: consumerKey(streamsGroupTargetMetadataKeyType, g.groupID)},
		{key: consumerKey(streamsGroupTopologyKeyType, g.groupID)},
		{key: consumerKey(streamsGroupMetadataKeyType, g.groupID)},
	}
}

// convertToStreams turns an empty classic group into a streams group,
// keeping its offsets, as Kafka does for an application moving from the
// classic protocol (after all its instances stopped); the classic metadata
// gets a tombstone in the same batch.
func (g *group) convertToStreams(s *step) []kv {
	old := g.classic
	g.kind, g.classic, g.streams = protocolStreams, newClassicGroup(g.id), newStreamsGroup(g.id)
	s.onUndo(func() { g.kind, g.classic = protocolClassic, old })
	if !old.persisted() {
		return nil
	}
	s.log.Info("converting empty classic group to a streams group")
	return []kv{{key: groupKey(g.id)}}
}

// validateCommit is the consumer protocol's commit rule, which Kafka's
// streams groups share: without a member epoch only while the group has no
// members, else a current member at its epoch.
func (g *streamsGroup) validateCommit(memberID string, epoch int32, version int16, txn bool) int16 {
	if g.dead {
		return codeCoordinatorNotAvailable
	}
	if epoch < 0 && len(g.members) == 0 {
		return 0
	}
	m := g.members[memberID]
	switch {
	case m == nil:
		return codeUnknownMemberID
	case version < 9 && !txn:
		return codeUnsupportedVersion
	case epoch != m.epoch:
		return codeStaleMemberEpoch
	}
	return 0
}

// validateFetch is the consumer protocol's rule for an OffsetFetch naming
// a member.
func (g *streamsGroup) validateFetch(memberID *string, epoch int32) int16 {
	if memberID == nil && epoch < 0 {
		return 0
	}
	var m *streamsMember
	if memberID != nil {
		m = g.members[*memberID]
	}
	switch {
	case m == nil:
		return codeUnknownMemberID
	case epoch != m.epoch:
		return codeStaleMemberEpoch
	}
	return 0
}

// subscribes reports whether the topology reads topic (a user or
// repartition source topic, or one its regexes matched): its offsets are
// kept, and OffsetDelete refuses to delete them.
func (g *streamsGroup) subscribes(topic string) bool {
	if g.topology == nil {
		return false
	}
	if g.configured != nil {
		for _, srcs := range g.configured.sources {
			if slices.Contains(srcs, topic) {
				return true
			}
		}
	}
	for _, st := range g.topology.subtopologies {
		if slices.Contains(st.sourceTopics, topic) || slices.ContainsFunc(st.repartitionSources, func(t streamsTopicInfo) bool { return t.name == topic }) {
			return true
		}
	}
	return false
}

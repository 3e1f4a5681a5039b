package group

import (
	"slices"
	"strings"
	"time"
)

// shareGroup is the state of a KIP-932 share group. Like a consumer group it
// has a group epoch, bumped by changes of membership, subscriptions and
// subscribed topics, and a target assignment computed by a server-side
// assignor (Kafka's "simple" assignor, share_assign.go) at the assignment
// epoch. Unlike a consumer group a partition may be given to several
// members at once, and nothing is revoked: records are handed out by the
// share-partition leaders one delivery at a time, so a member takes its
// target at its next heartbeat, whatever the others still hold.
//
// Members are copied on write, as in consumerGroup: a *shareMember in the
// table is never changed except for its session deadline, so a turn's undo
// can put back the members it replaced.
type shareGroup struct {
	groupID string
	// epoch is the group epoch, assignmentEpoch the epoch of the target
	// assignment; the target is recomputed when the first passes the
	// second.
	epoch           int32
	assignmentEpoch int32
	// metadataHash identifies the subscribed topics' IDs and partition
	// counts when the epoch last moved; a different hash bumps it.
	metadataHash int64
	members      map[string]*shareMember
	// target is each member's target assignment.
	target map[string]topicPartitions
	// initialized are the partitions whose share-group state the group has
	// initialized (given to a member, or set by AlterShareGroupOffsets):
	// ShareGroupStatePartitionMetadata's InitializedTopics, what
	// DeleteGroups deletes from the share coordinator and what
	// DescribeShareGroupOffsets lists by default.
	initialized map[[16]byte]initializedTopic
	// dead is set once the group is deleted; it leaves the table at the
	// end of the turn.
	dead bool
	// topicRefs counts the members subscribing to each topic name; derived
	// from members by replaceMember.
	topicRefs map[string]int
}

// shareMember is one member of a share group. Share members have no
// instance ID, no rebalance timeout and no assignor of their own.
type shareMember struct {
	id         string
	rackID     string
	clientID   string
	clientHost string
	// subscribedTopics is sorted and without duplicates.
	subscribedTopics []string
	// epoch is the assignment epoch the member last got, previousEpoch the
	// one before (a member whose answer was lost heartbeats with it).
	epoch, previousEpoch int32
	assigned             topicPartitions

	// sessionDeadline is soft state changed in place: the member is
	// removed without a heartbeat by then.
	sessionDeadline time.Time
}

// initializedTopic is one topic of ShareGroupStatePartitionMetadata.
type initializedTopic struct {
	name       string
	partitions []int32 // sorted, without duplicates
	// createdMs is when the topic was first initialized (Unix ms),
	// CreateTimestamp.
	createdMs int64
}

// Share group states, as ShareGroupDescribe, DescribeGroups and ListGroups
// name them: a share group is Empty or Stable (its members take their
// targets at once), or Dead once deleted.
const (
	shareStateEmpty  = "Empty"
	shareStateStable = "Stable"
	shareStateDead   = "Dead"
)

// shareProtocolType is what ListGroups shows as a share group's protocol
// type, as Kafka's ShareGroup.PROTOCOL_TYPE.
const shareProtocolType = "share"

// shareAssignorName is the one server-side assignor of share groups.
const shareAssignorName = "simple"

func newShareGroup(groupID string) shareGroup {
	return shareGroup{
		groupID:     groupID,
		members:     make(map[string]*shareMember),
		target:      make(map[string]topicPartitions),
		initialized: make(map[[16]byte]initializedTopic),
		topicRefs:   make(map[string]int),
	}
}

// blank reports whether the group is as new: no members, never persisted.
func (g *shareGroup) blank() bool {
	return g.epoch == 0 && len(g.members) == 0 && len(g.initialized) == 0 && !g.dead
}

func (g *shareGroup) stateName() string {
	switch {
	case g.dead:
		return shareStateDead
	case len(g.members) == 0:
		return shareStateEmpty
	}
	return shareStateStable
}

func (g *shareGroup) sortedMembers() []*shareMember {
	ms := make([]*shareMember, 0, len(g.members))
	for _, m := range g.members {
		ms = append(ms, m)
	}
	slices.SortFunc(ms, func(a, b *shareMember) int { return strings.Compare(a.id, b.id) })
	return ms
}

func (m *shareMember) clone() *shareMember {
	c := *m
	return &c
}

// sameMetadata reports whether what ShareGroupMemberMetadata holds is
// unchanged.
func (m *shareMember) sameMetadata(o *shareMember) bool {
	return m.rackID == o.rackID && m.clientID == o.clientID && m.clientHost == o.clientHost &&
		slices.Equal(m.subscribedTopics, o.subscribedTopics)
}

// putMember puts m in the table in place of the member with its ID, if any;
// the turn's undo puts the old one back.
func (g *shareGroup) putMember(s *step, m *shareMember) {
	old := g.members[m.id]
	g.replaceMember(old, m)
	s.onUndo(func() { g.replaceMember(m, old) })
}

// removeMember takes m and its target out of the group.
func (g *shareGroup) removeMember(s *step, m *shareMember) {
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

// replaceMember swaps old for m in the table and the topic counts; either
// may be nil.
func (g *shareGroup) replaceMember(old, m *shareMember) {
	if old != nil {
		if m == nil || m.id != old.id {
			delete(g.members, old.id)
		}
		for _, t := range old.subscribedTopics {
			decRef(g.topicRefs, t)
		}
	}
	if m != nil {
		g.members[m.id] = m
		for _, t := range m.subscribedTopics {
			g.topicRefs[t]++
		}
	}
}

// setEpoch moves the group epoch.
func (g *shareGroup) setEpoch(s *step, epoch int32, hash int64) {
	oldEpoch, oldHash := g.epoch, g.metadataHash
	g.epoch, g.metadataHash = epoch, hash
	s.onUndo(func() { g.epoch, g.metadataHash = oldEpoch, oldHash })
}

// setTarget installs a new target assignment.
func (g *shareGroup) setTarget(s *step, target map[string]topicPartitions, epoch int32) {
	oldTarget, oldEpoch := g.target, g.assignmentEpoch
	g.target, g.assignmentEpoch = target, epoch
	s.onUndo(func() { g.target, g.assignmentEpoch = oldTarget, oldEpoch })
}

// setInitialized replaces the initialized partitions.
func (g *shareGroup) setInitialized(s *step, initialized map[[16]byte]initializedTopic) {
	old := g.initialized
	g.initialized = initialized
	s.onUndo(func() { g.initialized = old })
}

// subscription is the sorted set of topic names the members subscribe to.
func (g *shareGroup) subscription() []string {
	return sortedKeys(g.topicRefs)
}

// initializedPartitions lists the initialized partitions by topic ID.
func (g *shareGroup) initializedPartitions() map[[16]byte][]int32 {
	out := make(map[[16]byte][]int32, len(g.initialized))
	for id, t := range g.initialized {
		out[id] = slices.Clone(t.partitions)
	}
	return out
}

// withInitialized returns the initialized set with tps added (nil when
// that adds nothing), names from topics, created now.
func (g *shareGroup) withInitialized(tps topicPartitions, names func(id [16]byte) string, nowMs int64) map[[16]byte]initializedTopic {
	var out map[[16]byte]initializedTopic
	for _, id := range tps.topics() {
		cur, had := g.initialized[id]
		merged := slices.Clone(cur.partitions)
		for _, p := range tps[id] {
			if _, ok := slices.BinarySearch(merged, p); !ok {
				merged = append(merged, p)
			}
		}
		if had && len(merged) == len(cur.partitions) {
			continue
		}
		if out == nil {
			out = make(map[[16]byte]initializedTopic, len(g.initialized)+1)
			for k, v := range g.initialized {
				out[k] = v
			}
		}
		slices.Sort(merged)
		t := initializedTopic{name: cur.name, partitions: merged, createdMs: cur.createdMs}
		if !had {
			t.name, t.createdMs = names(id), nowMs
		}
		out[id] = t
	}
	return out
}

// tombstones delete an empty share group's own records, in the order Kafka
// writes them.
func (g *shareGroup) tombstones() []kv {
	return []kv{
		{key: consumerKey(shareGroupTargetMetadataKeyType, g.groupID)},
		{key: consumerKey(shareGroupMetadataKeyType, g.groupID)},
		{key: consumerKey(shareGroupStatePartitionMetadataKeyType, g.groupID)},
	}
}

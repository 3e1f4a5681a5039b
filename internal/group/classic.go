package group

import (
	"bytes"
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// groupState is a classic group's state, named as Kafka names it:
//
//	Empty --join--> PreparingRebalance --all joined / rebalance timeout--> CompletingRebalance
//	CompletingRebalance --leader's SyncGroup stored--> Stable
//	Stable or CompletingRebalance --join, leave, expiry--> PreparingRebalance
//	PreparingRebalance --nobody left--> Empty
//	Empty --deleted or offsets expired--> Dead
type groupState int8

const (
	stateEmpty groupState = iota
	statePreparingRebalance
	stateCompletingRebalance
	stateStable
	stateDead
)

var stateNames = [...]string{"Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead"}

func (s groupState) String() string { return stateNames[s] }

// parseState finds a state by name, ignoring case as Kafka's ListGroups
// filter does.
func parseState(name string) (groupState, bool) {
	for i, n := range stateNames {
		if strings.EqualFold(n, name) {
			return groupState(i), true
		}
	}
	return 0, false
}

// newMemberJoinTimeout is how long a member that joined for the first time
// may wait in a join phase without its JoinGroup being answered before it
// is dropped: Kafka's GroupCoordinator.NewMemberJoinTimeoutMs (KIP-394), so
// a client that gave up on its first join does not hold a rebalance open
// for a whole rebalance timeout.
const newMemberJoinTimeout = 5 * time.Minute

// classicGroup is the membership of a group that runs the classic protocol.
// Like every state machine here it is not safe for concurrent use: the
// Coordinator holds the group's lock around each call.
type classicGroup struct {
	// groupID keys the group's metadata record.
	groupID string
	state   groupState
	// stateTimestamp is when the state last changed. Once the group is
	// Empty it is where offset retention starts (KIP-211).
	stateTimestamp time.Time
	generation     int32
	// protocolType is set by the first member of an empty group and kept
	// when the group empties; "" for a group that never had members.
	protocolType string
	// protocolName is the protocol chosen for the current generation; ""
	// while the group is Empty.
	protocolName string
	leader       string
	members      map[string]*member
	// static maps group.instance.id to the member ID that holds it.
	static map[string]string
	// pending maps the member IDs handed out with MEMBER_ID_REQUIRED to
	// when they expire if the client does not come back with them.
	pending map[string]time.Time
	// pendingSync holds the members of this generation that have not sent
	// SyncGroup yet; they are removed at syncDeadline.
	pendingSync  map[string]struct{}
	syncDeadline time.Time
	// joinDeadline ends the join phase (PreparingRebalance).
	joinDeadline time.Time
	// initialDelay is set while the join phase is the initial delay of a
	// group that was empty: it does not end when everyone has joined, and
	// is extended (by at most initialRemaining in all) while new members
	// keep arriving (newMemberAdded).
	initialDelay     bool
	initialRemaining time.Duration
	newMemberAdded   bool
	// subscribedTopics are the topics the members of a "consumer" group
	// subscribe to in this generation; nil when unknown. Offsets of other
	// topics expire even while the group is Stable (KIP-496).
	subscribedTopics map[string]struct{}
	nextOrder        uint64
}

// member is one member of a classic group.
type member struct {
	id         string
	instanceID string // group.instance.id; "" for a dynamic member
	clientID   string
	clientHost string

	sessionTimeout   time.Duration
	rebalanceTimeout time.Duration
	protocolType     string
	protocols        []protocol
	// assignment is what the leader gave this member for the current
	// generation; empty outside Stable or when the leader gave nothing.
	assignment []byte
	// order is the member's arrival rank: leaders are picked by it, and
	// responses list members in it, so the outcome never depends on map
	// iteration.
	order uint64
	// isNew is set until the member's first join phase completes.
	isNew         bool
	lastHeartbeat time.Time
	// joinWaiter and syncWaiter are the pending JoinGroup and SyncGroup
	// of the member, nil when none.
	joinWaiter chan<- joinResult
	syncWaiter chan<- syncResult
}

type protocol struct {
	name     string
	metadata []byte
}

// joinResult is the outcome of a JoinGroup; the API layer turns it into a
// response of the request's version.
type joinResult struct {
	code           int16
	memberID       string
	generation     int32
	protocolType   string
	protocolName   string
	leader         string
	skipAssignment bool
	members        []kmsg.JoinGroupResponseMember
}

// syncResult is the outcome of a SyncGroup.
type syncResult struct {
	code         int16
	assignment   []byte
	protocolType string
	protocolName string
}

func joinError(memberID string, code int16) joinResult {
	return joinResult{code: code, memberID: memberID, generation: -1}
}

func newClassicGroup(groupID string) classicGroup {
	return classicGroup{
		groupID:     groupID,
		members:     make(map[string]*member),
		static:      make(map[string]string),
		pending:     make(map[string]time.Time),
		pendingSync: make(map[string]struct{}),
	}
}

// blank reports whether the group is as new: nothing in it, nothing of it
// persisted.
func (g *classicGroup) blank() bool {
	return g.state == stateEmpty && g.generation == 0 && len(g.members) == 0 && len(g.pending) == 0
}

func (m *member) static() bool { return m.instanceID != "" }

// matches reports whether protocols are exactly the member's, in order:
// a member that rejoins with unchanged metadata does not force a rebalance.
func (m *member) matches(protocols []protocol) bool {
	return slices.EqualFunc(m.protocols, protocols, func(a, b protocol) bool {
		return a.name == b.name && bytes.Equal(a.metadata, b.metadata)
	})
}

func (m *member) metadataFor(name string) []byte {
	for _, p := range m.protocols {
		if p.name == name {
			return p.metadata
		}
	}
	return nil
}

func (g *classicGroup) transition(s *step, to groupState) {
	g.state = to
	g.stateTimestamp = s.now
}

// sortedMembers returns the members in arrival order.
func (g *classicGroup) sortedMembers() []*member {
	ms := make([]*member, 0, len(g.members))
	for _, m := range g.members {
		ms = append(ms, m)
	}
	slices.SortFunc(ms, func(a, b *member) int { return cmp.Compare(a.order, b.order) })
	return ms
}

// rebalanceTimeout is the longest rebalance timeout of the members: the
// join and sync phases wait for the slowest member (KIP-62).
func (g *classicGroup) rebalanceTimeout() time.Duration {
	var d time.Duration
	for _, m := range g.members {
		d = max(d, m.rebalanceTimeout)
	}
	return d
}

// supportsProtocols reports whether a member with these protocols may be
// in the group: any protocols of the right type while the group has no
// members, else the group's type and at least one protocol every member
// supports.
func (g *classicGroup) supportsProtocols(protocolType string, protocols []protocol) bool {
	if len(g.members) == 0 {
		return protocolType != "" && len(protocols) > 0
	}
	if protocolType != g.protocolType {
		return false
	}
	counts := g.protocolCounts()
	for _, p := range protocols {
		if counts[p.name] == len(g.members) {
			return true
		}
	}
	return false
}

// protocolCounts counts, per protocol name, the members supporting it.
func (g *classicGroup) protocolCounts() map[string]int {
	counts := make(map[string]int)
	for _, m := range g.members {
		seen := make(map[string]bool, len(m.protocols))
		for _, p := range m.protocols {
			if !seen[p.name] {
				seen[p.name] = true
				counts[p.name]++
			}
		}
	}
	return counts
}

// selectProtocol picks the generation's protocol as Kafka does: among the
// protocols every member supports, each member votes for the first in its
// own preference order, and the most votes win. Kafka breaks ties
// arbitrarily; here the leader's preference does, so the result is
// reproducible.
func (g *classicGroup) selectProtocol() string {
	counts := g.protocolCounts()
	votes := make(map[string]int)
	for _, m := range g.members {
		for _, p := range m.protocols {
			if counts[p.name] == len(g.members) {
				votes[p.name]++
				break
			}
		}
	}
	leader := g.members[g.leader]
	if leader == nil {
		return ""
	}
	best := ""
	for _, p := range leader.protocols {
		if votes[p.name] > votes[best] {
			best = p.name
		}
	}
	return best
}

// computeSubscribedTopics reads the topics out of the members' consumer
// protocol metadata. Only the "consumer" protocol type has a known format;
// for any other, or if one member's metadata does not parse, the topics
// are unknown (nil) and offsets are never expired from under live members.
func (g *classicGroup) computeSubscribedTopics() map[string]struct{} {
	if g.protocolType != "consumer" || len(g.members) == 0 {
		return nil
	}
	topics := make(map[string]struct{})
	for _, m := range g.members {
		var md kmsg.ConsumerMemberMetadata
		if err := md.ReadFrom(m.metadataFor(g.protocolName)); err != nil {
			return nil
		}
		for _, t := range md.Topics {
			topics[t] = struct{}{}
		}
	}
	return topics
}

// add puts a new member in the group.
func (g *classicGroup) add(m *member) {
	if len(g.members) == 0 {
		g.protocolType = m.protocolType
	}
	m.order = g.nextOrder
	g.nextOrder++
	g.members[m.id] = m
	if m.static() {
		g.static[m.instanceID] = m.id
	}
	if g.leader == "" {
		g.leader = m.id
	}
	delete(g.pending, m.id)
}

// remove takes a member out of the group, answering its waiting requests
// with UNKNOWN_MEMBER_ID, without any state change; see
// removeMemberAndUpdate for that.
func (g *classicGroup) remove(s *step, m *member) {
	if m.joinWaiter != nil {
		s.replyJoin(m.joinWaiter, joinError(m.id, codeUnknownMemberID))
		m.joinWaiter = nil
	}
	if m.syncWaiter != nil {
		s.replySync(m.syncWaiter, syncResult{code: codeUnknownMemberID})
		m.syncWaiter = nil
	}
	delete(g.members, m.id)
	delete(g.pendingSync, m.id)
	if m.static() && g.static[m.instanceID] == m.id {
		delete(g.static, m.instanceID)
	}
	if g.leader == m.id {
		g.leader = ""
		if ms := g.sortedMembers(); len(ms) > 0 {
			g.leader = ms[0].id
		}
	}
}

// validateMember checks that a request comes from a current member: with
// an instance ID, the member that holds it now (FENCED_INSTANCE_ID for an
// older incarnation); without, any member.
func (g *classicGroup) validateMember(memberID, instanceID string) int16 {
	if instanceID != "" {
		current, ok := g.static[instanceID]
		switch {
		case !ok:
			return codeUnknownMemberID
		case current != memberID:
			return codeFencedInstanceID
		}
		return 0
	}
	if g.members[memberID] == nil {
		return codeUnknownMemberID
	}
	return 0
}

// joinMembers lists the members and their metadata for the selected
// protocol, as the leader's JoinGroup response carries them.
func (g *classicGroup) joinMembers() []kmsg.JoinGroupResponseMember {
	ms := g.sortedMembers()
	out := make([]kmsg.JoinGroupResponseMember, 0, len(ms))
	for _, m := range ms {
		jm := kmsg.NewJoinGroupResponseMember()
		jm.MemberID = m.id
		if m.static() {
			jm.InstanceID = new(m.instanceID)
		}
		jm.ProtocolMetadata = m.metadataFor(g.protocolName)
		out = append(out, jm)
	}
	return out
}

// describe fills a DescribeGroups entry. As in Kafka, the protocol and each
// member's metadata and assignment are shown only while Stable, the one
// state in which they are settled.
func (g *classicGroup) describe(dst *kmsg.DescribeGroupsResponseGroup) {
	dst.State = g.state.String()
	dst.ProtocolType = g.protocolType
	stable := g.state == stateStable
	if stable {
		dst.Protocol = g.protocolName
	}
	for _, m := range g.sortedMembers() {
		dm := kmsg.NewDescribeGroupsResponseGroupMember()
		dm.MemberID = m.id
		if m.static() {
			dm.InstanceID = new(m.instanceID)
		}
		dm.ClientID = m.clientID
		dm.ClientHost = m.clientHost
		if stable {
			dm.ProtocolMetadata = m.metadataFor(g.protocolName)
			dm.MemberAssignment = m.assignment
		}
		dst.Members = append(dst.Members, dm)
	}
}

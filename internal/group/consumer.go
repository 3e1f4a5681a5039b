package group

import (
	"hash/fnv"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Member epochs with a meaning of their own in ConsumerGroupHeartbeat.
const (
	joinEpoch        = 0  // join, or rejoin after giving up every partition
	leaveEpoch       = -1 // leave the group
	staticLeaveEpoch = -2 // a static member leaves, meaning to come back
)

// memberState is where a KIP-848 member is in reconciling toward its target
// assignment, with Kafka's values (they are persisted).
type memberState int8

const (
	// memberStable: the member has every partition of its target that it
	// can have, at the target epoch.
	memberStable memberState = 0
	// memberUnrevoked: the member must give up partitions (listed as
	// pending revocation) before it moves to the next epoch; it stays at
	// its epoch until a heartbeat no longer reports them owned, or its
	// rebalance timeout ends and it is fenced.
	memberUnrevoked memberState = 1
	// memberUnreleased: the member is at the target epoch but some of its
	// target partitions are still owned by other members, which have not
	// revoked them yet.
	memberUnreleased memberState = 2
	// memberUnknown is what a state written by a newer Kafka reads as: the
	// member is reconciled again from scratch, or fenced if it still owns
	// partitions.
	memberUnknown memberState = 127
)

func (s memberState) String() string {
	switch s {
	case memberStable:
		return "stable"
	case memberUnrevoked:
		return "unrevoked"
	case memberUnreleased:
		return "unreleased"
	}
	return "unknown"
}

// consumerGroup is the state of a group that runs KIP-848's consumer
// protocol. The group epoch counts changes of membership, subscriptions and
// subscribed topics; the target assignment (computed by the server-side
// assignor, at the assignment epoch) says what each member should own; each
// member moves toward its target through reconciliation, one heartbeat at a
// time, and only gets a partition once its previous owner has given it up.
//
// Members are copied on write: a *consumerMember in the table is never
// changed, except for its deadlines, so that a turn can put back the
// members it replaced if its records cannot be stored (step.undo).
type consumerGroup struct {
	groupID string
	// epoch is the group epoch, assignmentEpoch the epoch of the target
	// assignment; the target is recomputed when the first passes the
	// second.
	epoch           int32
	assignmentEpoch int32
	// metadataHash identifies the subscribed topics' IDs and partition
	// counts when the epoch last moved; a different hash bumps it.
	metadataHash int64
	members      map[string]*consumerMember
	// target is each member's target assignment.
	target map[string]topicPartitions
	// dead is set once the group is deleted; it leaves the table at the
	// end of the turn.
	dead bool

	// The fields below are derived from members, kept up to date by
	// replaceMember.

	// static maps an instance ID to the member that holds it.
	static map[string]string
	// owners maps each partition a member owns (assigned, or pending
	// revocation) to that member: a partition is given to a member only
	// once nobody else owns it.
	owners map[tpID]string
	// topicRefs and regexRefs count the members subscribing to each topic
	// name and each regular expression.
	topicRefs map[string]int
	regexRefs map[string]int

	// regexes caches the topics each regular expression matched, soft
	// state rebuilt after a load.
	regexes map[string]*resolvedRegex
}

// consumerMember is one member of a consumer group.
type consumerMember struct {
	id         string
	instanceID string // "" for a dynamic member
	rackID     string
	clientID   string
	clientHost string
	// subscribedTopics is sorted and without duplicates; regex is the
	// subscribed regular expression, "" for none.
	subscribedTopics []string
	regex            string
	serverAssignor   string // "" when the member named none
	rebalanceTimeout time.Duration

	epoch, previousEpoch int32
	state                memberState
	// assigned are the partitions the member may consume; pendingRevocation
	// those it must give up before it gets more.
	assigned          topicPartitions
	pendingRevocation topicPartitions

	// Deadlines, soft state changed in place: the session ends without a
	// heartbeat by sessionDeadline; a member in memberUnrevoked is fenced at
	// revocationDeadline.
	sessionDeadline    time.Time
	revocationDeadline time.Time
}

type resolvedRegex struct {
	topics     []string
	resolvedAt time.Time
}

func newConsumerGroup(groupID string) consumerGroup {
	return consumerGroup{
		groupID:   groupID,
		members:   make(map[string]*consumerMember),
		target:    make(map[string]topicPartitions),
		static:    make(map[string]string),
		owners:    make(map[tpID]string),
		topicRefs: make(map[string]int),
		regexRefs: make(map[string]int),
		regexes:   make(map[string]*resolvedRegex),
	}
}

// blank reports whether the group is as new: no members, never persisted.
func (g *consumerGroup) blank() bool {
	return g.epoch == 0 && len(g.members) == 0 && !g.dead
}

func (g *consumerGroup) empty() bool { return len(g.members) == 0 }

// stateName is the group state as ConsumerGroupDescribe, DescribeGroups and
// ListGroups name it: Empty without members, Assigning while the target is
// behind the group epoch, Reconciling while a member has not reached it,
// else Stable.
func (g *consumerGroup) stateName() string {
	switch {
	case g.dead:
		return "Dead"
	case len(g.members) == 0:
		return "Empty"
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

func (g *consumerGroup) sortedMembers() []*consumerMember {
	ms := make([]*consumerMember, 0, len(g.members))
	for _, m := range g.members {
		ms = append(ms, m)
	}
	slices.SortFunc(ms, func(a, b *consumerMember) int { return strings.Compare(a.id, b.id) })
	return ms
}

// clone copies a member for changing it.
func (m *consumerMember) clone() *consumerMember {
	c := *m
	return &c
}

// revoking reports whether the member is asked to revoke partitions, with
// a deadline to.
func (m *consumerMember) revoking() bool {
	return m.state == memberUnrevoked && !m.revocationDeadline.IsZero()
}

// owns lists every partition the member holds: assigned or still to revoke.
func (m *consumerMember) owns(fn func(tp tpID)) {
	m.assigned.each(fn)
	m.pendingRevocation.each(fn)
}

// sameMetadata reports whether what ConsumerGroupMemberMetadata holds is
// unchanged.
func (m *consumerMember) sameMetadata(o *consumerMember) bool {
	return m.instanceID == o.instanceID && m.rackID == o.rackID && m.clientID == o.clientID &&
		m.clientHost == o.clientHost && m.rebalanceTimeout == o.rebalanceTimeout && m.sameSubscription(o)
}

// sameSubscription reports whether a change of o into m leaves the target
// assignment as it is: same topics, regex and assignor.
func (m *consumerMember) sameSubscription(o *consumerMember) bool {
	return slices.Equal(m.subscribedTopics, o.subscribedTopics) && m.regex == o.regex &&
		m.serverAssignor == o.serverAssignor
}

// sameAssignment reports whether what ConsumerGroupCurrentMemberAssignment
// holds is unchanged.
func (m *consumerMember) sameAssignment(o *consumerMember) bool {
	return m.epoch == o.epoch && m.previousEpoch == o.previousEpoch && m.state == o.state &&
		m.assigned.equal(o.assigned) && m.pendingRevocation.equal(o.pendingRevocation)
}

// putMember puts m in the table in place of the member with its ID, if
// any; the turn's undo puts the old one back.
func (g *consumerGroup) putMember(s *step, m *consumerMember) {
	old := g.members[m.id]
	g.replaceMember(old, m)
	s.onUndo(func() { g.replaceMember(m, old) })
}

// removeMember takes m and its target out of the group.
func (g *consumerGroup) removeMember(s *step, m *consumerMember) {
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

// replaceMember swaps old for m in the table and its indexes; either may be
// nil.
func (g *consumerGroup) replaceMember(old, m *consumerMember) {
	if old != nil {
		if m == nil || m.id != old.id {
			delete(g.members, old.id)
		}
		if old.instanceID != "" && g.static[old.instanceID] == old.id {
			delete(g.static, old.instanceID)
		}
		old.owns(func(tp tpID) {
			if g.owners[tp] == old.id {
				delete(g.owners, tp)
			}
		})
		for _, t := range old.subscribedTopics {
			decRef(g.topicRefs, t)
		}
		if old.regex != "" {
			decRef(g.regexRefs, old.regex)
		}
	}
	if m != nil {
		g.members[m.id] = m
		if m.instanceID != "" {
			g.static[m.instanceID] = m.id
		}
		m.owns(func(tp tpID) {
			if _, taken := g.owners[tp]; !taken {
				g.owners[tp] = m.id
			}
		})
		for _, t := range m.subscribedTopics {
			g.topicRefs[t]++
		}
		if m.regex != "" {
			g.regexRefs[m.regex]++
		}
	}
	if old != nil && old.regex != "" && g.regexRefs[old.regex] == 0 {
		delete(g.regexes, old.regex) // nobody subscribes with it any more
	}
}

func decRef(refs map[string]int, key string) {
	if refs[key] <= 1 {
		delete(refs, key)
	} else {
		refs[key]--
	}
}

// setEpoch moves the group epoch.
func (g *consumerGroup) setEpoch(s *step, epoch int32, hash int64) {
	oldEpoch, oldHash := g.epoch, g.metadataHash
	g.epoch, g.metadataHash = epoch, hash
	bumped := epoch > oldEpoch
	if bumped {
		s.epochBumps++
	}
	s.onUndo(func() {
		g.epoch, g.metadataHash = oldEpoch, oldHash
		if bumped {
			s.epochBumps--
		}
	})
}

// setTarget installs a new target assignment.
func (g *consumerGroup) setTarget(s *step, target map[string]topicPartitions, epoch int32) {
	oldTarget, oldEpoch := g.target, g.assignmentEpoch
	g.target, g.assignmentEpoch = target, epoch
	s.onUndo(func() { g.target, g.assignmentEpoch = oldTarget, oldEpoch })
}

// subscription is the set of topic names the group subscribes to: every
// member's topics and what their regular expressions match.
func (g *consumerGroup) subscription(s *step) []string {
	names := make([]string, 0, len(g.topicRefs))
	for t := range g.topicRefs {
		names = append(names, t)
	}
	for re := range g.regexRefs {
		names = append(names, g.resolveRegex(s, re)...)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// subscribes reports whether a member subscribes to topic, by name or by
// regular expression: its offsets are not expired, nor deleted by
// OffsetDelete.
func (g *consumerGroup) subscribes(s *step, topic string) bool {
	if g.topicRefs[topic] > 0 {
		return true
	}
	for re := range g.regexRefs {
		if _, ok := slices.BinarySearch(g.resolveRegex(s, re), topic); ok {
			return true
		}
	}
	return false
}

// memberTopics is the sorted set of topic names member m subscribes to.
func (g *consumerGroup) memberTopics(s *step, m *consumerMember) []string {
	if m.regex == "" {
		return m.subscribedTopics
	}
	names := append(slices.Clone(m.subscribedTopics), g.resolveRegex(s, m.regex)...)
	slices.Sort(names)
	return slices.Compact(names)
}

// resolveRegex lists the topics a regular expression matches in full, as
// Kafka matches them, from a cache refreshed every heartbeat interval so a
// new topic is picked up within one. The expression was validated when the
// member sent it.
func (g *consumerGroup) resolveRegex(s *step, expr string) []string {
	if r := g.regexes[expr]; r != nil && s.now.Sub(r.resolvedAt) < s.cfg.ConsumerHeartbeatInterval {
		return r.topics
	}
	re, err := compileTopicRegex(expr)
	var topics []string
	if err == nil && s.topics.names != nil {
		for _, name := range s.topics.names() {
			if re.MatchString(name) {
				topics = append(topics, name)
			}
		}
		slices.Sort(topics)
	}
	g.regexes[expr] = &resolvedRegex{topics: topics, resolvedAt: s.now}
	return topics
}

// compileTopicRegex compiles a SubscribedTopicRegex. Kafka uses RE2/J,
// whose syntax is Go's, and matches whole topic names.
func compileTopicRegex(expr string) (*regexp.Regexp, error) {
	if _, err := regexp.Compile(expr); err != nil {
		return nil, err
	}
	return regexp.Compile(`^(?:` + expr + `)$`)
}

// resolveTopics looks up the named topics: the existing ones by ID, and a
// hash of their IDs and partition counts, which changes whenever a topic is
// created, deleted, recreated or grows.
func resolveTopics(s *step, names []string) (map[[16]byte]topicMeta, map[string][16]byte, int64) {
	topics := make(map[[16]byte]topicMeta, len(names))
	ids := make(map[string][16]byte, len(names))
	h := fnv.New64a()
	for _, name := range names {
		if s.topics.partitions == nil {
			break
		}
		id, n, ok := s.topics.partitions(name)
		if !ok || n <= 0 {
			continue
		}
		topics[id] = topicMeta{name: name, partitions: n}
		ids[name] = id
		h.Write([]byte(name))
		h.Write(id[:])
		h.Write([]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n), 0})
	}
	if len(ids) == 0 {
		return topics, ids, 0
	}
	return topics, ids, int64(h.Sum64() | 1) // never 0, which stands for "none"
}

// preferredAssignor is the assignor most members ask for (ties: the one
// group.consumer.assignors lists first), or the first enabled one.
func (g *consumerGroup) preferredAssignor(cfg *Config) string {
	counts := make(map[string]int)
	for _, m := range g.members {
		if m.serverAssignor != "" {
			counts[m.serverAssignor]++
		}
	}
	best := ""
	for _, name := range cfg.ConsumerAssignors {
		if counts[name] > counts[best] {
			best = name
		}
	}
	if best == "" && len(cfg.ConsumerAssignors) > 0 {
		best = cfg.ConsumerAssignors[0]
	}
	return best
}

// computeTarget runs the group's assignor over the current members.
func (g *consumerGroup) computeTarget(s *step) map[string]topicPartitions {
	topics, ids, _ := resolveTopics(s, g.subscription(s))
	in := &assignInput{topics: topics}
	for _, m := range g.sortedMembers() {
		am := assignMember{id: m.id, previous: g.target[m.id]}
		for _, name := range g.memberTopics(s, m) {
			if id, ok := ids[name]; ok {
				am.subscribed = append(am.subscribed, id)
			}
		}
		in.members = append(in.members, am)
	}
	a := assignors[g.preferredAssignor(s.cfg)]
	if a == nil {
		a = uniformAssignor{}
	}
	return a.assign(in)
}

// subscribedTopicIDs is the set of topic IDs member m subscribes to now.
func (g *consumerGroup) subscribedTopicIDs(s *step, m *consumerMember) map[[16]byte]bool {
	_, ids, _ := resolveTopics(s, g.memberTopics(s, m))
	out := make(map[[16]byte]bool, len(ids))
	for _, id := range ids {
		out[id] = true
	}
	return out
}

// sortedKeys lists a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

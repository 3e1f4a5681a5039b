package group

import (
	"cmp"
	"slices"
	"strings"
)

// A KIP-848 group's target assignment is computed by the coordinator with
// a server-side assignor, chosen by the members' ServerAssignor (the one
// most of them ask for) among those group.consumer.assignors enables.
// Assignors are pure functions of their input: the same members,
// subscriptions, topics and previous assignment give the same result.

// assignor computes a target assignment: for each member, the partitions
// of its subscribed topics it should own.
type assignor interface {
	assign(in *assignInput) map[string]topicPartitions
}

// assignInput is what an assignor sees.
type assignInput struct {
	// members, sorted by member ID.
	members []assignMember
	// topics are the subscribed topics that exist, by ID.
	topics map[[16]byte]topicMeta
}

type topicMeta struct {
	name       string
	partitions int32
}

type assignMember struct {
	id string
	// subscribed are the IDs of the existing topics the member subscribes
	// to.
	subscribed [][16]byte
	// previous is the member's current target assignment, which sticky
	// assignors keep what they can of.
	previous topicPartitions
}

// Assignor names, as clients send them in ServerAssignor and Kafka's
// group.consumer.assignors lists them.
const (
	assignorUniform = "uniform"
	assignorRange   = "range"
)

var assignors = map[string]assignor{
	assignorUniform: uniformAssignor{},
	assignorRange:   rangeAssignor{},
}

// assignorName maps a group.consumer.assignors entry to an assignor name:
// the short name, or Kafka's class name for the same assignor. "" if
// unknown.
func assignorName(entry string) string {
	entry = strings.TrimSpace(entry)
	switch entry {
	case assignorUniform, "org.apache.kafka.coordinator.group.assignor.UniformAssignor":
		return assignorUniform
	case assignorRange, "org.apache.kafka.coordinator.group.assignor.RangeAssignor":
		return assignorRange
	}
	return ""
}

// sortedTopicIDs lists the topics of in by name, then ID.
func (in *assignInput) sortedTopicIDs() [][16]byte {
	ids := make([][16]byte, 0, len(in.topics))
	for id := range in.topics {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, in.compareTopics)
	return ids
}

func (in *assignInput) compareTopics(a, b [16]byte) int {
	return cmp.Or(strings.Compare(in.topics[a].name, in.topics[b].name), slices.Compare(a[:], b[:]))
}

// uniformAssignor is Kafka's default server-side assignor, with its
// goals: every partition of a subscribed topic is assigned, the members'
// partition counts are as even as their subscriptions allow (within one of
// each other when all subscribe to the same topics), and a member keeps as
// much of its previous assignment as balance allows, so that a change in
// membership moves as few partitions as it can.
//
// It works in three passes, each deterministic:
//
//  1. Keep: each member keeps the partitions of its previous assignment
//     that still exist and that it still subscribes to.
//  2. Fill: each partition left over goes to the least loaded member that
//     subscribes to its topic (ties: lowest member ID), the topics with
//     fewest subscribers first.
//  3. Balance: while some member owns a partition that a member with at
//     least two fewer partitions subscribes to, one such partition of the
//     most loaded such member moves to the least loaded one. Each move
//     lowers the sum of the squares of the counts, so the pass ends; it
//     moves nothing in a balanced group.
type uniformAssignor struct{}

func (uniformAssignor) assign(in *assignInput) map[string]topicPartitions {
	u := newUniformState(in)
	u.keep()
	u.fill()
	u.balance()
	return u.result()
}

type uniformState struct {
	in *assignInput
	// subscribers lists, per topic, the indexes (in in.members) of the
	// members subscribing to it, in member order.
	subscribers map[[16]byte][]int
	// topicsOf is each member's subscribed topics, as a set.
	topicsOf []map[[16]byte]bool
	owner    map[tpID]int
	counts   []int
	// owned lists each member's partitions; entries whose owner has
	// changed since are stale and skipped.
	owned [][]tpID
}

func newUniformState(in *assignInput) *uniformState {
	u := &uniformState{
		in:          in,
		subscribers: make(map[[16]byte][]int),
		topicsOf:    make([]map[[16]byte]bool, len(in.members)),
		owner:       make(map[tpID]int),
		counts:      make([]int, len(in.members)),
		owned:       make([][]tpID, len(in.members)),
	}
	for i, m := range in.members {
		u.topicsOf[i] = make(map[[16]byte]bool, len(m.subscribed))
		for _, t := range m.subscribed {
			if _, ok := in.topics[t]; ok && !u.topicsOf[i][t] {
				u.topicsOf[i][t] = true
				u.subscribers[t] = append(u.subscribers[t], i)
			}
		}
	}
	return u
}

func (u *uniformState) subscribes(i int, topic [16]byte) bool { return u.topicsOf[i][topic] }

func (u *uniformState) give(tp tpID, i int) {
	if prev, ok := u.owner[tp]; ok {
		u.counts[prev]--
	}
	u.owner[tp] = i
	u.counts[i]++
	u.owned[i] = append(u.owned[i], tp)
}

func (u *uniformState) keep() {
	for i, m := range u.in.members {
		m.previous.each(func(tp tpID) {
			meta, ok := u.in.topics[tp.topic]
			if !ok || tp.partition < 0 || tp.partition >= meta.partitions || !u.subscribes(i, tp.topic) {
				return
			}
			if _, taken := u.owner[tp]; !taken {
				u.give(tp, i)
			}
		})
	}
}

// leastLoaded is the subscriber of topic with the fewest partitions, the
// first in member order among equals; -1 if the topic has none.
func (u *uniformState) leastLoaded(topic [16]byte) int {
	best := -1
	for _, i := range u.subscribers[topic] {
		if best < 0 || u.counts[i] < u.counts[best] {
			best = i
		}
	}
	return best
}

func (u *uniformState) fill() {
	topics := u.in.sortedTopicIDs()
	slices.SortStableFunc(topics, func(a, b [16]byte) int {
		return cmp.Compare(len(u.subscribers[a]), len(u.subscribers[b]))
	})
	for _, t := range topics {
		if len(u.subscribers[t]) == 0 {
			continue
		}
		for p := range u.in.topics[t].partitions {
			tp := tpID{t, p}
			if _, taken := u.owner[tp]; !taken {
				u.give(tp, u.leastLoaded(t))
			}
		}
	}
}

func (u *uniformState) balance() {
	order := make([]int, len(u.counts))
	for u.moveOne(order) {
	}
}

// moveOne moves one partition from the most loaded member that has one
// another member could take (one with at least two fewer partitions,
// subscribing to its topic) to the least loaded such member. Taking from
// the most loaded first is what keeps the moves to the minimum: a member
// only loses partitions while it is above the others.
func (u *uniformState) moveOne(order []int) bool {
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(u.counts[b], u.counts[a]) })
	for _, i := range order {
		mine := u.current(i)
		// The last partitions move first, so members keep the start of
		// their ranges.
		for k := len(mine) - 1; k >= 0; k-- {
			if j := u.leastLoaded(mine[k].topic); j >= 0 && u.counts[j] < u.counts[i]-1 {
				u.give(mine[k], j)
				return true
			}
		}
	}
	return false
}

// current is member i's partitions, sorted by topic name then partition.
func (u *uniformState) current(i int) []tpID {
	live := u.owned[i][:0]
	seen := make(map[tpID]bool, len(u.owned[i]))
	for _, tp := range u.owned[i] {
		if u.owner[tp] == i && !seen[tp] {
			seen[tp] = true
			live = append(live, tp)
		}
	}
	slices.SortFunc(live, func(a, b tpID) int {
		return cmp.Or(u.in.compareTopics(a.topic, b.topic), cmp.Compare(a.partition, b.partition))
	})
	u.owned[i] = live
	return slices.Clone(live)
}

func (u *uniformState) result() map[string]topicPartitions {
	lists := make([][]tpID, len(u.in.members))
	for tp, i := range u.owner {
		lists[i] = append(lists[i], tp)
	}
	out := make(map[string]topicPartitions, len(u.in.members))
	for i, m := range u.in.members {
		out[m.id] = partitionsOf(lists[i])
	}
	return out
}

// rangeAssignor is Kafka's range assignor, server side: for each topic, the
// members subscribing to it, sorted by member ID, get contiguous ranges of
// its partitions, the first (partitions % members) of them one more than
// the others. Members subscribing to the same topics with the same
// partition counts get the same partition numbers of each (co-partitioning,
// what joins need). It is not sticky: ranges follow the sorted member IDs.
type rangeAssignor struct{}

func (rangeAssignor) assign(in *assignInput) map[string]topicPartitions {
	lists := make([][]tpID, len(in.members))
	for _, t := range in.sortedTopicIDs() {
		var subs []int
		for i, m := range in.members {
			if slices.Contains(m.subscribed, t) {
				subs = append(subs, i)
			}
		}
		if len(subs) == 0 {
			continue
		}
		n := in.topics[t].partitions
		quota, extra := n/int32(len(subs)), n%int32(len(subs))
		start := int32(0)
		for k, i := range subs {
			size := quota
			if int32(k) < extra {
				size++
			}
			for p := start; p < start+size; p++ {
				lists[i] = append(lists[i], tpID{t, p})
			}
			start += size
		}
	}
	out := make(map[string]topicPartitions, len(in.members))
	for i, m := range in.members {
		out[m.id] = partitionsOf(lists[i])
	}
	return out
}

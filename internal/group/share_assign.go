package group

import "slices"

// simpleAssignor is the share groups' server-side assignor, named "simple"
// as Kafka's. Its rules are KIP-932's:
//
//   - Every partition of a subscribed topic goes to at least one member
//     that subscribes to it (when there is one).
//   - With no more members than partitions, each partition goes to exactly
//     one member, and the members' counts are within one of each other.
//   - With more members than partitions, each member gets exactly one
//     partition, which it shares with others; the partitions' member
//     counts are within one of each other. (A share group may be larger
//     than its topics' partition count: the share-partition leader hands
//     records out one delivery at a time.)
//   - It is sticky: a member keeps what it had, as far as the balance
//     allows, so a change in membership moves as little as it can.
//
// When all members subscribe to the same topics (homogeneous) the rules
// apply to all their partitions as one pool; otherwise each topic is a pool
// of its own, shared by the members subscribing to it. Samsa's placement
// within those rules (keep first, then fill the least loaded, ties by
// member ID and partition order) is its own; Kafka's hashing of member IDs
// gives other, equally valid, assignments.
type simpleAssignor struct{}

func (simpleAssignor) assign(in *assignInput) map[string]topicPartitions {
	out := make(map[string][]tpID, len(in.members))
	if homogeneous(in.members) {
		var ids []string
		for _, m := range in.members {
			ids = append(ids, m.id)
		}
		if len(in.members) > 0 {
			assignPool(in, poolOf(in, in.members[0].subscribed), ids, out)
		}
	} else {
		for _, t := range in.sortedTopicIDs() {
			var ids []string
			for _, m := range in.members {
				if slices.Contains(m.subscribed, t) {
					ids = append(ids, m.id)
				}
			}
			assignPool(in, poolOf(in, [][16]byte{t}), ids, out)
		}
	}
	result := make(map[string]topicPartitions, len(in.members))
	for _, m := range in.members {
		result[m.id] = partitionsOf(out[m.id])
	}
	return result
}

// homogeneous reports whether every member subscribes to the same topics.
func homogeneous(members []assignMember) bool {
	for _, m := range members[min(1, len(members)):] {
		if !sameTopicSet(m.subscribed, members[0].subscribed) {
			return false
		}
	}
	return true
}

func sameTopicSet(a, b [][16]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for _, t := range a {
		if !slices.Contains(b, t) {
			return false
		}
	}
	return true
}

// poolOf lists the partitions of topics that exist, topics by name.
func poolOf(in *assignInput, topics [][16]byte) []tpID {
	topics = slices.Clone(topics)
	slices.SortFunc(topics, in.compareTopics)
	var pool []tpID
	for _, t := range topics {
		meta, ok := in.topics[t]
		if !ok {
			continue
		}
		for p := range meta.partitions {
			pool = append(pool, tpID{t, p})
		}
	}
	return pool
}

// assignPool spreads pool over members (sorted IDs) by the rules above,
// adding to out.
func assignPool(in *assignInput, pool []tpID, members []string, out map[string][]tpID) {
	if len(pool) == 0 || len(members) == 0 {
		return
	}
	previous := make(map[string]topicPartitions, len(members))
	for _, m := range in.members {
		previous[m.id] = m.previous
	}
	if len(members) <= len(pool) {
		assignExclusive(pool, members, previous, out)
	} else {
		assignShared(pool, members, previous, out)
	}
}

// assignExclusive gives each partition to one member: len(pool)/len(members)
// each, the remainder one more to as many members.
func assignExclusive(pool []tpID, members []string, previous map[string]topicPartitions, out map[string][]tpID) {
	base, extra := len(pool)/len(members), len(pool)%len(members)
	taken := make(map[tpID]bool, len(pool))
	count := make(map[string]int, len(members))
	for _, m := range members {
		var kept []tpID
		for _, tp := range pool {
			if previous[m].has(tp.topic, tp.partition) && !taken[tp] {
				kept = append(kept, tp)
			}
		}
		limit := base
		if len(kept) > base && extra > 0 {
			limit, extra = base+1, extra-1
		}
		kept = kept[:min(len(kept), limit)]
		for _, tp := range kept {
			taken[tp] = true
		}
		out[m] = append(out[m], kept...)
		count[m] = len(kept)
	}
	for _, tp := range pool {
		if taken[tp] {
			continue
		}
		// The least loaded is below base, or at base with an extra
		// left: the counts add up to len(pool).
		best := leastLoaded(members, count)
		out[best] = append(out[best], tp)
		count[best]++
	}
}

// assignShared gives each member one partition: len(members)/len(pool) per
// partition, the remainder one more to as many partitions.
func assignShared(pool []tpID, members []string, previous map[string]topicPartitions, out map[string][]tpID) {
	base, extra := len(members)/len(pool), len(members)%len(pool)
	holders := make([]int, len(pool))
	placed := make(map[string]bool, len(members))
	for _, m := range members {
		for i, tp := range pool {
			if !previous[m].has(tp.topic, tp.partition) {
				continue
			}
			if holders[i] < base || holders[i] == base && extra > 0 {
				if holders[i] == base {
					extra--
				}
				holders[i]++
				out[m] = append(out[m], tp)
				placed[m] = true
				break
			}
		}
	}
	for _, m := range members {
		if placed[m] {
			continue
		}
		best := 0
		for i := range pool {
			if holders[i] < holders[best] {
				best = i
			}
		}
		holders[best]++
		out[m] = append(out[m], pool[best])
	}
}

// leastLoaded is the member with the fewest partitions, the first in
// members on a tie.
func leastLoaded(members []string, count map[string]int) string {
	best := members[0]
	for _, m := range members[1:] {
		if count[m] < count[best] {
			best = m
		}
	}
	return best
}

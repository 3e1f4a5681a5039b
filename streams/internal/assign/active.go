package assign

import (
	"cmp"
	"slices"
)

// assignActive gives every task to one member, each member holding its
// capacity: floor(T/M) tasks, one more for T mod M of them.
func (s *assignState) assignActive() {
	if len(s.members) == 0 {
		return
	}
	s.setActiveCapacities()
	var moved []TaskID
	for _, t := range s.tasks { // the member that ran it
		if mi, ok := s.prevOwner[t]; ok && s.hasRoom(mi) {
			s.giveActive(t, mi)
		} else {
			moved = append(moved, t)
		}
	}
	var homeless []TaskID
	for _, t := range moved { // another thread of the client that ran it
		if mi, ok := s.prevOwner[t]; ok {
			if best := s.roomiestMember(mi); best >= 0 {
				s.giveActive(t, best)
				continue
			}
		}
		homeless = append(homeless, t)
	}
	// Stateful tasks choose first, so that the members of clients with
	// their state are not already filled with stateless tasks.
	slices.SortStableFunc(homeless, func(a, b TaskID) int {
		return -cmp.Compare(boolRank(s.isStateful(a)), boolRank(s.isStateful(b)))
	})
	for _, t := range homeless {
		s.giveActive(t, s.bestNewHome(t))
	}
}

// setActiveCapacities hands the T mod M extra tasks to the members that
// ran the most tasks, so that a rebalance that changed nothing moves
// nothing.
func (s *assignState) setActiveCapacities() {
	q, r := len(s.tasks)/len(s.members), len(s.tasks)%len(s.members)
	prevCount := make([]int, len(s.members))
	for _, mi := range s.prevOwner {
		prevCount[mi]++
	}
	order := make([]int, len(s.members))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return -cmp.Compare(prevCount[a], prevCount[b]) })
	for i, mi := range order {
		s.members[mi].capacity = q
		if i < r {
			s.members[mi].capacity++
		}
	}
}

func (s *assignState) hasRoom(mi int) bool {
	return len(s.members[mi].active) < s.members[mi].capacity
}

func (s *assignState) room(mi int) int {
	return s.members[mi].capacity - len(s.members[mi].active)
}

func (s *assignState) giveActive(t TaskID, mi int) {
	s.members[mi].active = append(s.members[mi].active, t)
	s.active[t] = mi
}

// roomiestMember answers the member of member mi's client with the most
// room left, or -1 when all are full.
func (s *assignState) roomiestMember(mi int) int {
	c := &s.clients[s.members[mi].client]
	best := -1
	for m := c.first; m < c.first+c.count; m++ {
		if s.hasRoom(m) && (best < 0 || s.room(m) > s.room(best)) {
			best = m
		}
	}
	return best
}

// bestNewHome picks the member for a task whose owner cannot keep it:
// one with room, on the client with the task's freshest state (a previous
// standby first), then the one with the most room.
func (s *assignState) bestNewHome(t TaskID) int {
	best := -1
	for mi := range s.members {
		if !s.hasRoom(mi) {
			continue
		}
		if best < 0 || s.compareHomes(t, mi, best) > 0 {
			best = mi
		}
	}
	return best // never -1: the capacities add up to the task count
}

func (s *assignState) compareHomes(t TaskID, a, b int) int {
	ca, cb := &s.clients[s.members[a].client], &s.clients[s.members[b].client]
	if c := cmp.Compare(boolRank(ca.prevStandby[t]), boolRank(cb.prevStandby[t])); c != 0 {
		return c
	}
	if c := cmp.Compare(ca.offsetRank(t), cb.offsetRank(t)); c != 0 {
		return c
	}
	return cmp.Compare(s.room(a), s.room(b))
}

func (s *assignState) isStateful(t TaskID) bool {
	_, ok := slices.BinarySearchFunc(s.stateful, t, TaskID.Compare)
	return ok
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

package assign

import (
	"cmp"
	"slices"
)

// assignStandby places min(n, clients-1) standbys of every stateful task
// on clients other than the one running it: first where the task's state
// already is, then on the least loaded clients; then it evens the
// clients' standby loads out, and splits each client's standbys over its
// members.
func (s *assignState) assignStandby(n int) {
	n = min(n, len(s.clients)-1)
	if n <= 0 {
		return
	}
	for _, t := range s.stateful {
		for _, ci := range s.stickyStandbyClients(t, n) {
			s.giveStandby(t, ci)
		}
		for len(s.standbyHolders(t)) < n {
			s.giveStandby(t, s.leastLoadedStandbyClient(t))
		}
	}
	s.balanceStandbys()
	for ci := range s.clients {
		s.splitStandbys(ci)
	}
}

// stickyStandbyClients answers up to n clients, other than the active
// one, that have the task's state: its previous standbys and a previous
// active it moved away from, the freshest state first.
func (s *assignState) stickyStandbyClients(t TaskID, n int) []int {
	activeClient := s.members[s.active[t]].client
	var out []int
	for ci := range s.clients {
		c := &s.clients[ci]
		if ci != activeClient && (c.prevStandby[t] || c.prevActive[t]) {
			out = append(out, ci)
		}
	}
	slices.SortStableFunc(out, func(a, b int) int {
		return -cmp.Compare(s.clients[a].offsetRank(t), s.clients[b].offsetRank(t))
	})
	return out[:min(n, len(out))]
}

func (s *assignState) standbyHolders(t TaskID) []int {
	var out []int
	for ci := range s.clients {
		if s.clients[ci].hasStandby[t] {
			out = append(out, ci)
		}
	}
	return out
}

func (s *assignState) giveStandby(t TaskID, ci int) {
	c := &s.clients[ci]
	c.standby = append(c.standby, t)
	c.hasStandby[t] = true
}

func (s *assignState) takeStandby(t TaskID, ci int) {
	c := &s.clients[ci]
	c.standby = slices.DeleteFunc(c.standby, func(x TaskID) bool { return x == t })
	delete(c.hasStandby, t)
}

// canHostStandby says whether client ci may take a standby of t: it does
// not run t and has no copy yet.
func (s *assignState) canHostStandby(t TaskID, ci int) bool {
	return s.members[s.active[t]].client != ci && !s.clients[ci].hasStandby[t]
}

// leastLoadedStandbyClient answers the client that may host t with the
// fewest standbys per member, preferring one with t's state on ties.
// There is one: n < clients, and only the active client and the n-1 or
// fewer holders are excluded.
func (s *assignState) leastLoadedStandbyClient(t TaskID) int {
	best := -1
	for ci := range s.clients {
		if !s.canHostStandby(t, ci) {
			continue
		}
		if best < 0 {
			best = ci
			continue
		}
		c := s.compareStandbyLoad(ci, best)
		if c < 0 || c == 0 && s.clients[ci].offsetRank(t) > s.clients[best].offsetRank(t) {
			best = ci
		}
	}
	return best
}

// compareStandbyLoad compares two clients' standbys per member.
func (s *assignState) compareStandbyLoad(a, b int) int {
	ca, cb := &s.clients[a], &s.clients[b]
	return cmp.Compare(len(ca.standby)*cb.count, len(cb.standby)*ca.count)
}

// balanceStandbys moves standbys from the most to the least loaded
// clients (per member) while a move leaves the giver no lighter than the
// taker. Each move lowers the sum over clients of load²/members, so this
// ends; with equal thread counts it ends when no two clients differ by
// more than one, unless the standbys of the heavy clients cannot move to
// the light ones (those run or hold the same tasks).
func (s *assignState) balanceStandbys() {
	for s.moveOneStandby() {
	}
}

func (s *assignState) moveOneStandby() bool {
	order := make([]int, len(s.clients))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, s.compareStandbyLoad)
	for i := len(order) - 1; i > 0; i-- {
		from := order[i]
		for _, to := range order[:i] {
			if !s.worthMoving(from, to) {
				continue // with unequal thread counts, a lighter client may still be worth it
			}
			if t, ok := s.movableStandby(from, to); ok {
				s.takeStandby(t, from)
				s.giveStandby(t, to)
				return true
			}
		}
	}
	return false
}

// worthMoving says whether a standby moved from one client to another
// still leaves the giver at least as loaded per member as the taker.
func (s *assignState) worthMoving(from, to int) bool {
	f, t := &s.clients[from], &s.clients[to]
	return (len(f.standby)-1)*t.count >= (len(t.standby)+1)*f.count
}

// movableStandby picks the standby of client from that client to may
// take, preferring one whose state to has, then the first task.
func (s *assignState) movableStandby(from, to int) (TaskID, bool) {
	var best TaskID
	found := false
	for _, t := range s.sortedStandbys(from) {
		if !s.canHostStandby(t, to) {
			continue
		}
		if !found || s.clients[to].offsetRank(t) > s.clients[to].offsetRank(best) {
			best, found = t, true
		}
	}
	return best, found
}

func (s *assignState) sortedStandbys(ci int) []TaskID {
	out := slices.Clone(s.clients[ci].standby)
	slices.SortFunc(out, TaskID.Compare)
	return out
}

// splitStandbys shares a client's standbys over its members: floor or
// ceil of the mean each, a standby staying with the member that had it
// when that member has room.
func (s *assignState) splitStandbys(ci int) {
	c := &s.clients[ci]
	tasks := s.sortedStandbys(ci)
	q, r := len(tasks)/c.count, len(tasks)%c.count
	capacity := make(map[int]int, c.count)
	order := make([]int, 0, c.count)
	for mi := c.first; mi < c.first+c.count; mi++ {
		order = append(order, mi)
	}
	prevCount := func(mi int) int {
		n := 0
		for _, t := range tasks {
			if s.members[mi].prevStandby[t] {
				n++
			}
		}
		return n
	}
	slices.SortStableFunc(order, func(a, b int) int { return -cmp.Compare(prevCount(a), prevCount(b)) })
	for i, mi := range order {
		capacity[mi] = q
		if i < r {
			capacity[mi]++
		}
	}
	var rest []TaskID
	for _, t := range tasks {
		placed := false
		for mi := c.first; mi < c.first+c.count && !placed; mi++ {
			if s.members[mi].prevStandby[t] && len(s.members[mi].standby) < capacity[mi] {
				s.members[mi].standby = append(s.members[mi].standby, t)
				placed = true
			}
		}
		if !placed {
			rest = append(rest, t)
		}
	}
	for _, t := range rest {
		best := -1
		for mi := c.first; mi < c.first+c.count; mi++ {
			left := capacity[mi] - len(s.members[mi].standby)
			if left > 0 && (best < 0 || left > capacity[best]-len(s.members[best].standby)) {
				best = mi
			}
		}
		s.members[best].standby = append(s.members[best].standby, t)
	}
}

// result builds the output, every list sorted.
func (s *assignState) result() Assignment {
	out := Assignment{Clients: make([]ClientAssignment, 0, len(s.clients))}
	for ci := range s.clients {
		c := &s.clients[ci]
		ca := ClientAssignment{ProcessID: c.ProcessID, Active: []TaskID{}, Standby: s.sortedStandbys(ci)}
		for mi := c.first; mi < c.first+c.count; mi++ {
			m := &s.members[mi]
			ma := MemberAssignment{ID: m.ID, Active: sortedTasks(m.active), Standby: sortedTasks(m.standby)}
			ca.Active = append(ca.Active, m.active...)
			ca.Members = append(ca.Members, ma)
		}
		slices.SortFunc(ca.Active, TaskID.Compare)
		out.Clients = append(out.Clients, ca)
	}
	return out
}

func sortedTasks(ts []TaskID) []TaskID {
	out := append([]TaskID{}, ts...)
	slices.SortFunc(out, TaskID.Compare)
	return out
}

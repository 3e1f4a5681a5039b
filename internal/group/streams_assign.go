package group

import "slices"

// streamsAssignMember is a member as the streams assignor sees it.
type streamsAssignMember struct {
	id        string
	processID string
	// previous is the member's previous target.
	previous streamsTasks
	// caughtUp reports whether the member's state of a task is restored to
	// within the acceptable recovery lag, from the changelog offsets it
	// reported.
	caughtUp func(taskID) bool
}

type streamsAssignInput struct {
	members []streamsAssignMember // sorted by ID
	// tasks is the task count of each subtopology; stateful says which
	// have state (only their tasks warm up).
	tasks      map[string]int32
	stateful   map[string]bool
	standbys   int
	maxWarmups int
}

// assignStreams is the streams groups' task assignor, with the behaviour of
// Kafka's StickyTaskAssignor, and warm-up tasks:
//
//   - Active tasks stay with their previous owner, up to an even share
//     (ceil(tasks/members)) each; then go to a member that had them as
//     standby or warm-up; the rest to the least loaded member. Then, while
//     one member has two more than another, the most loaded gives one away.
//   - A stateful active task that would move from a member still in the
//     group to one in another process whose state of it is not caught up
//     stays where it is,
//     and the new member gets it as a warm-up task, at most maxWarmups in
//     the group: it moves once the warm-up caught up (the heartbeat that
//     reports so bumps the group epoch).
//   - Each stateful task gets up to standbys standby replicas, never in the process
//     (Kafka Streams instance) running it, nor two in one process:
//     preferably on members that had it (up to an even share of the
//     standbys each), else on the least loaded.
//
// The result has an entry for every member. It is a pure function of its
// input: members are visited in ID order, tasks in subtopology and
// partition order.
func assignStreams(in *streamsAssignInput) map[string]streamsTasks {
	a := newStreamsAssignment(in)
	a.assignActive()
	a.balanceActive()
	a.holdForWarmup()
	a.assignStandbys()
	return a.result()
}

type streamsAssignment struct {
	in      *streamsAssignInput
	tasks   []taskID
	members map[string]*streamsAssignMember
	ids     []string
	// active maps each task to its member; standby each task to its
	// standby members; warmup each member to its warm-up tasks.
	active  map[taskID]string
	standby map[taskID][]string
	warmup  map[string][]taskID
	load    map[string]int // active tasks per member
	sbLoad  map[string]int // standby and warm-up tasks per member
}

func newStreamsAssignment(in *streamsAssignInput) *streamsAssignment {
	a := &streamsAssignment{
		in:      in,
		members: make(map[string]*streamsAssignMember),
		active:  make(map[taskID]string),
		standby: make(map[taskID][]string),
		warmup:  make(map[string][]taskID),
		load:    make(map[string]int),
		sbLoad:  make(map[string]int),
	}
	for i := range in.members {
		m := &in.members[i]
		a.members[m.id] = m
		a.ids = append(a.ids, m.id)
	}
	for _, id := range sortedKeys(in.tasks) {
		for p := range in.tasks[id] {
			a.tasks = append(a.tasks, taskID{id, p})
		}
	}
	return a
}

// leastLoaded is the member with the fewest active tasks (then fewest
// others, then the lowest ID) among those ok accepts; "" if none.
func (a *streamsAssignment) leastLoaded(ok func(id string) bool) string {
	best := ""
	for _, id := range a.ids {
		if ok != nil && !ok(id) {
			continue
		}
		if best == "" || a.load[id] < a.load[best] || a.load[id] == a.load[best] && a.sbLoad[id] < a.sbLoad[best] {
			best = id
		}
	}
	return best
}

func (a *streamsAssignment) assignActive() {
	if len(a.ids) == 0 {
		return
	}
	limit := (len(a.tasks) + len(a.ids) - 1) / len(a.ids)
	var rest []taskID
	for _, t := range a.tasks {
		owner := ""
		for _, id := range a.ids {
			if a.members[id].previous.active.has(t) && a.load[id] < limit {
				owner = id
				break
			}
		}
		if owner == "" {
			rest = append(rest, t)
			continue
		}
		a.active[t] = owner
		a.load[owner]++
	}
	for _, t := range rest {
		owner := a.leastLoaded(func(id string) bool {
			prev := a.members[id].previous
			return a.load[id] < limit && (prev.standby.has(t) || prev.warmup.has(t))
		})
		if owner == "" {
			owner = a.leastLoaded(nil)
		}
		a.active[t] = owner
		a.load[owner]++
	}
}

// balanceActive moves active tasks from the most to the least loaded member
// until counts differ by at most one, preferring a task the receiver had
// as standby or warm-up, else the highest-numbered one.
func (a *streamsAssignment) balanceActive() {
	for range len(a.tasks) {
		most, least := "", ""
		for _, id := range a.ids {
			if most == "" || a.load[id] > a.load[most] {
				most = id
			}
			if least == "" || a.load[id] < a.load[least] {
				least = id
			}
		}
		if most == "" || a.load[most]-a.load[least] <= 1 {
			return
		}
		var pick taskID
		found := false
		prev := a.members[least].previous
		for _, t := range a.tasks {
			if a.active[t] != most {
				continue
			}
			if !found || prev.standby.has(t) || prev.warmup.has(t) {
				pick, found = t, true
			}
			if prev.standby.has(t) || prev.warmup.has(t) {
				break
			}
		}
		a.active[pick] = least
		a.load[most]--
		a.load[least]++
	}
}

// holdForWarmup keeps a stateful task whose new owner has not restored its
// state with the member that ran it, and gives the new owner a warm-up.
func (a *streamsAssignment) holdForWarmup() {
	warmups := 0
	for _, t := range a.tasks {
		if warmups >= a.in.maxWarmups || !a.in.stateful[t.subtopology] {
			continue
		}
		to := a.active[t]
		from := ""
		for _, id := range a.ids {
			if a.members[id].previous.active.has(t) {
				from = id
				break
			}
		}
		// Within one process the state directory is shared: the task
		// moves at once.
		if from == "" || from == to || a.members[from].processID == a.members[to].processID || a.members[to].caughtUp(t) {
			continue
		}
		a.active[t] = from
		a.load[from]++
		a.load[to]--
		a.warmup[to] = append(a.warmup[to], t)
		a.sbLoad[to]++
		warmups++
	}
}

func (a *streamsAssignment) assignStandbys() {
	if a.in.standbys <= 0 || len(a.ids) == 0 {
		return
	}
	// A member keeps its standbys up to an even share of all of them.
	stateful := 0
	for _, t := range a.tasks {
		if a.in.stateful[t.subtopology] {
			stateful++
		}
	}
	limit := (stateful*a.in.standbys + len(a.ids) - 1) / len(a.ids)
	standbys := make(map[string]int)
	for _, t := range a.tasks {
		if !a.in.stateful[t.subtopology] {
			continue // a stateless task has no state to keep warm
		}
		used := map[string]bool{a.members[a.active[t]].processID: true}
		for _, id := range a.ids {
			if slices.Contains(a.warmup[id], t) {
				used[a.members[id].processID] = true
			}
		}
		for range a.in.standbys {
			free := func(id string) bool { return !used[a.members[id].processID] }
			owner := a.leastStandby(func(id string) bool {
				prev := a.members[id].previous
				return free(id) && standbys[id] < limit && (prev.standby.has(t) || prev.active.has(t))
			})
			if owner == "" {
				owner = a.leastStandby(func(id string) bool { return free(id) && standbys[id] < limit })
			}
			if owner == "" {
				owner = a.leastStandby(free)
			}
			if owner == "" {
				break // fewer processes than replicas: Kafka leaves them out too
			}
			a.standby[t] = append(a.standby[t], owner)
			a.sbLoad[owner]++
			standbys[owner]++
			used[a.members[owner].processID] = true
		}
	}
	a.balanceStandbys(standbys)
}

// balanceStandbys moves standbys from the member with the most to the one
// with the fewest while they differ by two or more and a task can move
// without landing in a process that already has it.
func (a *streamsAssignment) balanceStandbys(standbys map[string]int) {
	for range len(a.tasks) * a.in.standbys {
		most, least := a.ids[0], a.ids[0]
		for _, id := range a.ids {
			if standbys[id] > standbys[most] {
				most = id
			}
			if standbys[id] < standbys[least] {
				least = id
			}
		}
		if standbys[most]-standbys[least] <= 1 {
			return
		}
		moved := false
		for _, t := range a.tasks {
			i := slices.Index(a.standby[t], most)
			if i < 0 || !a.processFree(t, a.members[least].processID) {
				continue
			}
			a.standby[t][i] = least
			standbys[most]--
			standbys[least]++
			a.sbLoad[most]--
			a.sbLoad[least]++
			moved = true
			break
		}
		if !moved {
			return
		}
	}
}

// processFree reports whether no member of a process has t in any role.
func (a *streamsAssignment) processFree(t taskID, process string) bool {
	if a.members[a.active[t]].processID == process {
		return false
	}
	for _, id := range a.standby[t] {
		if a.members[id].processID == process {
			return false
		}
	}
	for id, ws := range a.warmup {
		if a.members[id].processID == process && slices.Contains(ws, t) {
			return false
		}
	}
	return true
}

// leastStandby is the member with the fewest tasks of any role among those
// ok accepts.
func (a *streamsAssignment) leastStandby(ok func(id string) bool) string {
	best := ""
	for _, id := range a.ids {
		if !ok(id) {
			continue
		}
		if best == "" || a.load[id]+a.sbLoad[id] < a.load[best]+a.sbLoad[best] {
			best = id
		}
	}
	return best
}

func (a *streamsAssignment) result() map[string]streamsTasks {
	active := make(map[string][]taskID)
	standby := make(map[string][]taskID)
	for _, t := range a.tasks {
		if owner := a.active[t]; owner != "" {
			active[owner] = append(active[owner], t)
		}
		for _, id := range a.standby[t] {
			standby[id] = append(standby[id], t)
		}
	}
	out := make(map[string]streamsTasks, len(a.ids))
	for _, id := range a.ids {
		out[id] = streamsTasks{active: taskSetOf(active[id]), standby: taskSetOf(standby[id]), warmup: taskSetOf(a.warmup[id])}
	}
	return out
}

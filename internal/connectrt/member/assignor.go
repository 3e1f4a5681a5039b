package member

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/samsa-io/samsa/internal/connectrt/api"
)

// Work is a set of connectors and tasks, kept sorted.
type Work struct {
	Connectors []string
	Tasks      []api.TaskID
}

// Empty says whether w holds nothing.
func (w Work) Empty() bool { return len(w.Connectors) == 0 && len(w.Tasks) == 0 }

// Size is the number of connectors and tasks.
func (w Work) Size() int { return len(w.Connectors) + len(w.Tasks) }

// AssignorState is what a leader remembers between the assignments it
// computes (Kafka keeps it in its IncrementalCooperativeAssignor): only the
// leader that computed it can use it, and only for the generation after.
type AssignorState struct {
	// PreviousAssignment is everything the last round assigned, and the
	// lost work still held for departed workers.
	PreviousAssignment Work
	// PreviousRevocation is what the last round revoked; seen still running,
	// it means the revocation did not happen and PreviousAssignment is stale.
	PreviousRevocation Work
	PreviousGeneration int32
	PreviousMembers    []string
	// RevokedInPrevious and SuccessiveRevokingRebalances back off rounds
	// of load-balancing revocations that follow each other (KIP-415's
	// exponential backoff, 40^n ms up to the max delay).
	RevokedInPrevious            bool
	SuccessiveRevokingRebalances int
	// CandidateWorkers are workers that joined empty while lost work was
	// held: when the delay ends the lost work goes to them (a returning
	// worker takes back work like its old).
	CandidateWorkers []string
	// ScheduledRebalance is when held lost work is given away; zero when
	// nothing is scheduled.
	ScheduledRebalance time.Time
	// Delay is the scheduled rebalance delay sent to every member.
	Delay time.Duration
}

// NewAssignorState is the state of a leader that has assigned nothing yet.
func NewAssignorState() AssignorState { return AssignorState{PreviousGeneration: -1} }

// AssignInput is what the leader assigns from.
type AssignInput struct {
	// Members maps each member to what it runs now, as its JoinGroup
	// metadata says.
	Members map[string]Work
	// Configured is the config topic as the leader has read it.
	Configured Work
	// LastCompletedGeneration is the leader's last generation whose sync
	// completed; Generation is the one being assigned.
	LastCompletedGeneration, Generation int32
	Now                                 time.Time
	// MaxDelay is scheduled.rebalance.max.delay.ms.
	MaxDelay time.Duration
}

// AssignResult is one round of incremental cooperative assignment.
type AssignResult struct {
	// Assigned is what each member starts (new to it this round).
	Assigned map[string]Work
	// Revoked is what each member stops before anything else.
	Revoked map[string]Work
	// Owners is what each member runs after the round.
	Owners map[string]Work
	// Delay is the scheduled rebalance delay, 0 for none.
	Delay time.Duration
}

// AssignIncremental computes KIP-415's incremental cooperative assignment
// as Kafka's IncrementalCooperativeAssignor does: members keep what they
// run; deleted and duplicated work is revoked; new work and the work of
// departed workers (after ScheduledRebalance, or at once when no worker
// departed) goes to the least loaded; workers above a balanced share lose
// the excess, which is assigned in the rebalance that follows. It is a
// pure function of its inputs and returns the state for the next round.
func AssignIncremental(prev AssignorState, in AssignInput) (AssignResult, AssignorState) {
	st := prev.clone()
	if st.PreviousGeneration != in.LastCompletedGeneration {
		// The leader did not complete the generation it last assigned (or
		// this is a new leader): what it remembers may be wrong.
		st.PreviousAssignment = Work{}
	}
	configured := configuredSets(in.Configured)
	members := sortedKeys(in.Members)
	running := make(map[string]workSet, len(members))
	active := newWorkSet()
	for _, id := range members {
		running[id] = toSet(in.Members[id])
		active.addAll(running[id])
	}
	if !st.PreviousRevocation.Empty() {
		if active.intersects(toSet(st.PreviousRevocation)) {
			st.PreviousAssignment = active.work()
		}
		st.PreviousRevocation = Work{}
	}
	previous := toSet(st.PreviousAssignment)
	deleted := previous.minus(configured)
	lost := previous.minus(active, deleted)
	created := configured.minus(previous, active)
	duplicated := duplicates(in.Members)

	current := make(map[string]workSet, len(members))
	toRevoke := make(map[string]workSet, len(members))
	next := make([]*load, 0, len(members))
	for _, id := range members {
		current[id] = running[id].minus(deleted)
		toRevoke[id] = running[id].intersect(deleted).union(running[id].intersect(duplicated))
		next = append(next, newLoad(id, running[id].minus(toRevoke[id])))
	}

	lostToReassign := st.handleLost(lost, next, members, in.Now, in.MaxDelay)
	st.balanceRevocations(configured, next, toRevoke, in.Now, in.MaxDelay)

	toAssign := created.union(lostToReassign)
	assignLeastLoaded(next, toAssign)

	res := AssignResult{Assigned: map[string]Work{}, Revoked: map[string]Work{}, Owners: map[string]Work{}, Delay: st.Delay}
	after := newWorkSet()
	revokedAll := newWorkSet()
	for _, l := range next {
		owned := l.set()
		res.Owners[l.id] = owned.work()
		res.Assigned[l.id] = owned.minus(current[l.id]).work()
		res.Revoked[l.id] = toRevoke[l.id].work()
		after.addAll(owned)
		revokedAll.addAll(toRevoke[l.id])
	}
	st.PreviousAssignment = after.minus(revokedAll).union(lost).work()
	st.PreviousRevocation = revokedAll.work()
	st.PreviousGeneration = in.Generation
	st.PreviousMembers = members
	return res, st
}

// handleLost decides what happens to lost work (held by a worker that
// did not rejoin): given away now, held until ScheduledRebalance, or, when
// that time has come, given to the workers that joined empty meanwhile. It
// answers the work to assign as new.
func (st *AssignorState) handleLost(lost workSet, next []*load, members []string, now time.Time, maxDelay time.Duration) workSet {
	if lost.empty() && !st.RevokedInPrevious {
		st.resetDelay()
		return newWorkSet()
	}
	if st.ScheduledRebalance.IsZero() && containsAll(members, st.PreviousMembers) {
		// Nobody left: the work went missing in a round some member did
		// not complete; assign it again.
		return lost
	}
	if maxDelay == 0 {
		return lost
	}
	if !st.ScheduledRebalance.IsZero() && !now.Before(st.ScheduledRebalance) {
		toCandidates := st.candidateLoads(next)
		st.resetDelay()
		st.RevokedInPrevious = false
		if len(toCandidates) == 0 {
			return lost
		}
		for i, c := range lost.sortedConnectors() {
			toCandidates[i%len(toCandidates)].connectors = append(toCandidates[i%len(toCandidates)].connectors, c)
		}
		for i, t := range lost.sortedTasks() {
			toCandidates[i%len(toCandidates)].tasks = append(toCandidates[i%len(toCandidates)].tasks, t)
		}
		return newWorkSet()
	}
	for _, l := range next {
		if l.empty() && !slices.Contains(st.CandidateWorkers, l.id) {
			st.CandidateWorkers = append(st.CandidateWorkers, l.id)
		}
	}
	if now.Before(st.ScheduledRebalance) {
		st.Delay = min(st.ScheduledRebalance.Sub(now), maxDelay)
	} else {
		st.Delay = maxDelay
	}
	st.ScheduledRebalance = now.Add(st.Delay)
	return newWorkSet()
}

func (st *AssignorState) candidateLoads(next []*load) []*load {
	var out []*load
	for _, id := range st.CandidateWorkers {
		for _, l := range next {
			if l.id == id {
				out = append(out, l)
			}
		}
	}
	return out
}

func (st *AssignorState) resetDelay() {
	st.CandidateWorkers = nil
	st.ScheduledRebalance = time.Time{}
	st.Delay = 0
}

// balanceRevocations takes from each worker what it holds beyond a
// balanced share, unless a scheduled rebalance is pending, or the
// previous round revoked too: then the revocations wait for a backoff
// (KIP-415: successive revoking rounds back off exponentially).
func (st *AssignorState) balanceRevocations(configured workSet, next []*load, toRevoke map[string]workSet, now time.Time, maxDelay time.Duration) {
	if st.Delay != 0 {
		st.RevokedInPrevious = false
		return
	}
	revocations := loadBalancingRevocations(configured, next)
	switch {
	case st.RevokedInPrevious && len(revocations) > 0:
		st.SuccessiveRevokingRebalances++
		st.Delay = revokingBackoff(st.SuccessiveRevokingRebalances, maxDelay)
		if st.Delay != 0 {
			st.ScheduledRebalance = now.Add(st.Delay)
			return
		}
		applyRevocations(next, toRevoke, revocations)
	case len(revocations) > 0:
		applyRevocations(next, toRevoke, revocations)
		st.RevokedInPrevious = true
	case st.RevokedInPrevious:
		st.RevokedInPrevious = false
		st.SuccessiveRevokingRebalances = 0
	}
}

// revokingBackoff is Kafka's ExponentialBackoff(1ms, x40, maxDelay, no
// jitter) for the n-th successive revoking rebalance.
func revokingBackoff(n int, maxDelay time.Duration) time.Duration {
	if maxDelay <= 0 {
		return 0
	}
	ms := math.Pow(40, float64(n))
	if ms >= float64(maxDelay/time.Millisecond) {
		return maxDelay
	}
	return time.Duration(ms) * time.Millisecond
}

func applyRevocations(next []*load, toRevoke map[string]workSet, revocations map[string]workSet) {
	for _, l := range next {
		r, ok := revocations[l.id]
		if !ok {
			continue
		}
		toRevoke[l.id] = toRevoke[l.id].union(r)
		l.remove(r)
	}
}

// loadBalancingRevocations answers, per worker, the connectors and tasks
// beyond its balanced share: with n workers and T configured, every worker
// may keep T/n, and T%n of them one more. Connectors and tasks are
// balanced separately, as Kafka does.
func loadBalancingRevocations(configured workSet, next []*load) map[string]workSet {
	out := map[string]workSet{}
	if configured.empty() || allEmpty(next) {
		return out
	}
	excessConnectors := excess(len(configured.connectors), next, func(l *load) int { return len(l.connectors) })
	excessTasks := excess(len(configured.tasks), next, func(l *load) int { return len(l.tasks) })
	for _, l := range next {
		nc, nt := excessConnectors[l.id], excessTasks[l.id]
		if nc == 0 && nt == 0 {
			continue
		}
		r := newWorkSet()
		for _, c := range l.connectors[len(l.connectors)-nc:] {
			r.connectors[c] = struct{}{}
		}
		for _, t := range l.tasks[len(l.tasks)-nt:] {
			r.tasks[t] = struct{}{}
		}
		out[l.id] = r
	}
	return out
}

// excess answers how many of one kind each worker must give up.
func excess(total int, next []*load, size func(*load) int) map[string]int {
	n := len(next)
	minShare, extras := total/n, total%n
	atMin, atExtra := 0, 0
	for _, l := range next {
		switch size(l) {
		case minShare:
			atMin++
		case minShare + 1:
			atExtra++
		}
	}
	out := map[string]int{}
	if atExtra == extras && atMin+atExtra == n {
		return out
	}
	given := 0
	for _, l := range next {
		have := size(l)
		if have <= minShare {
			continue
		}
		limit := minShare
		if given < extras {
			given++
			limit = minShare + 1
		}
		if have > limit {
			out[l.id] = have - limit
		}
	}
	return out
}

// assignLeastLoaded gives each connector, then each task, to the worker
// running the fewest of that kind (ties to the smaller member ID).
func assignLeastLoaded(next []*load, toAssign workSet) {
	for _, c := range toAssign.sortedConnectors() {
		l := slices.MinFunc(next, func(a, b *load) int {
			return cmp.Or(cmp.Compare(len(a.connectors), len(b.connectors)), cmp.Compare(a.id, b.id))
		})
		l.connectors = append(l.connectors, c)
	}
	for _, t := range toAssign.sortedTasks() {
		l := slices.MinFunc(next, func(a, b *load) int {
			return cmp.Or(cmp.Compare(len(a.tasks), len(b.tasks)), cmp.Compare(a.id, b.id))
		})
		l.tasks = append(l.tasks, t)
	}
}

// AssignEager is Kafka's EagerAssignor: every member starts empty;
// connectors, then tasks, go round-robin over the members in ID order.
func AssignEager(members []string, configured Work) map[string]Work {
	members = slices.Sorted(slices.Values(members))
	cs := configuredSets(configured)
	out := make(map[string]Work, len(members))
	i := 0
	next := func() string { id := members[i%len(members)]; i++; return id }
	for _, c := range cs.sortedConnectors() {
		id := next()
		w := out[id]
		w.Connectors = append(w.Connectors, c)
		out[id] = w
	}
	for _, t := range cs.sortedTasks() {
		id := next()
		w := out[id]
		w.Tasks = append(w.Tasks, t)
		out[id] = w
	}
	for _, id := range members {
		if _, ok := out[id]; !ok {
			out[id] = Work{}
		}
	}
	return out
}

// load is one worker's work while a round is computed.
type load struct {
	id         string
	connectors []string
	tasks      []api.TaskID
}

func newLoad(id string, s workSet) *load {
	return &load{id: id, connectors: s.sortedConnectors(), tasks: s.sortedTasks()}
}

func (l *load) empty() bool { return len(l.connectors) == 0 && len(l.tasks) == 0 }

func (l *load) set() workSet {
	return toSet(Work{Connectors: l.connectors, Tasks: l.tasks})
}

func (l *load) remove(r workSet) {
	l.connectors = slices.DeleteFunc(l.connectors, func(c string) bool { _, ok := r.connectors[c]; return ok })
	l.tasks = slices.DeleteFunc(l.tasks, func(t api.TaskID) bool { _, ok := r.tasks[t]; return ok })
}

func allEmpty(ls []*load) bool {
	for _, l := range ls {
		if !l.empty() {
			return false
		}
	}
	return true
}

// workSet is Work as sets.
type workSet struct {
	connectors map[string]struct{}
	tasks      map[api.TaskID]struct{}
}

func newWorkSet() workSet {
	return workSet{connectors: map[string]struct{}{}, tasks: map[api.TaskID]struct{}{}}
}

func toSet(w Work) workSet {
	s := newWorkSet()
	for _, c := range w.Connectors {
		s.connectors[c] = struct{}{}
	}
	for _, t := range w.Tasks {
		s.tasks[t] = struct{}{}
	}
	return s
}

// configuredSets is the snapshot's connectors and the tasks of those
// connectors (a task whose connector is gone is not configured).
func configuredSets(w Work) workSet {
	s := newWorkSet()
	for _, c := range w.Connectors {
		s.connectors[c] = struct{}{}
	}
	for _, t := range w.Tasks {
		if _, ok := s.connectors[t.Connector]; ok {
			s.tasks[t] = struct{}{}
		}
	}
	return s
}

func (s workSet) empty() bool { return len(s.connectors) == 0 && len(s.tasks) == 0 }

func (s workSet) addAll(o workSet) {
	for c := range o.connectors {
		s.connectors[c] = struct{}{}
	}
	for t := range o.tasks {
		s.tasks[t] = struct{}{}
	}
}

func (s workSet) union(o workSet) workSet {
	out := newWorkSet()
	out.addAll(s)
	out.addAll(o)
	return out
}

// minus is s without anything in subs.
func (s workSet) minus(subs ...workSet) workSet {
	out := newWorkSet()
	for c := range s.connectors {
		if !anyHasConnector(subs, c) {
			out.connectors[c] = struct{}{}
		}
	}
	for t := range s.tasks {
		if !anyHasTask(subs, t) {
			out.tasks[t] = struct{}{}
		}
	}
	return out
}

func anyHasConnector(sets []workSet, c string) bool {
	for _, s := range sets {
		if _, ok := s.connectors[c]; ok {
			return true
		}
	}
	return false
}

func anyHasTask(sets []workSet, t api.TaskID) bool {
	for _, s := range sets {
		if _, ok := s.tasks[t]; ok {
			return true
		}
	}
	return false
}

func (s workSet) intersect(o workSet) workSet {
	out := newWorkSet()
	for c := range s.connectors {
		if _, ok := o.connectors[c]; ok {
			out.connectors[c] = struct{}{}
		}
	}
	for t := range s.tasks {
		if _, ok := o.tasks[t]; ok {
			out.tasks[t] = struct{}{}
		}
	}
	return out
}

func (s workSet) intersects(o workSet) bool { return !s.intersect(o).empty() }

func (s workSet) sortedConnectors() []string {
	out := make([]string, 0, len(s.connectors))
	for c := range s.connectors {
		out = append(out, c)
	}
	slices.Sort(out)
	return out
}

func (s workSet) sortedTasks() []api.TaskID {
	out := make([]api.TaskID, 0, len(s.tasks))
	for t := range s.tasks {
		out = append(out, t)
	}
	slices.SortFunc(out, compareTasks)
	return out
}

func (s workSet) work() Work {
	return Work{Connectors: s.sortedConnectors(), Tasks: s.sortedTasks()}
}

func compareTasks(a, b api.TaskID) int {
	return cmp.Or(cmp.Compare(a.Connector, b.Connector), cmp.Compare(a.Task, b.Task))
}

// duplicates is the work more than one member runs.
func duplicates(members map[string]Work) workSet {
	connectors := map[string]int{}
	tasks := map[api.TaskID]int{}
	for _, w := range members {
		for c := range toSet(w).connectors {
			connectors[c]++
		}
		for t := range toSet(w).tasks {
			tasks[t]++
		}
	}
	out := newWorkSet()
	for c, n := range connectors {
		if n > 1 {
			out.connectors[c] = struct{}{}
		}
	}
	for t, n := range tasks {
		if n > 1 {
			out.tasks[t] = struct{}{}
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func containsAll(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

func (st AssignorState) clone() AssignorState {
	out := st
	out.PreviousAssignment = cloneWork(st.PreviousAssignment)
	out.PreviousRevocation = cloneWork(st.PreviousRevocation)
	out.PreviousMembers = slices.Clone(st.PreviousMembers)
	out.CandidateWorkers = slices.Clone(st.CandidateWorkers)
	return out
}

func cloneWork(w Work) Work {
	return Work{Connectors: slices.Clone(w.Connectors), Tasks: slices.Clone(w.Tasks)}
}

package member

import (
	"fmt"
	"slices"
	"time"

	"github.com/samsa-io/samsa/internal/connectrt/api"
)

// sim is a Connect group in one process: members that run what the
// assignor tells them, a leader (the member that joined first, as the
// coordinator picks) whose AssignorState lives as long as its leadership,
// and a clock that moves only when told.
type sim struct {
	now        time.Time
	maxDelay   time.Duration
	members    []string // in join order
	running    map[string]Work
	away       map[string]Work // members gone from the group, still holding what they ran
	configured Work
	generation int32

	leader          string
	state           AssignorState
	leaderCompleted int32
	rounds          int
}

func newSim(maxDelay time.Duration) *sim {
	return &sim{
		now: time.Unix(1_700_000_000, 0), maxDelay: maxDelay,
		running: map[string]Work{}, away: map[string]Work{},
	}
}

func (s *sim) join(id string) {
	s.members = append(s.members, id)
	s.running[id] = Work{}
}

// leave takes id out of the group; it keeps what it ran only when it
// comes back as the same worker (returnAway).
func (s *sim) leave(id string) {
	s.members = slices.DeleteFunc(s.members, func(m string) bool { return m == id })
	s.away[id] = s.running[id]
	delete(s.running, id)
}

// returnAway brings back a worker that left (its session expired, say)
// with the work it still runs, less what is no longer configured (it read
// the config topic before rejoining).
func (s *sim) returnAway(id string) {
	w := s.away[id]
	delete(s.away, id)
	cs := configuredSets(s.configured)
	kept := toSet(w).intersect(cs).work()
	s.members = append(s.members, id)
	s.running[id] = kept
}

func (s *sim) setConfig(connectors map[string]int) {
	var w Work
	for _, c := range slices.Sorted(mapKeys(connectors)) {
		w.Connectors = append(w.Connectors, c)
		for i := range connectors[c] {
			w.Tasks = append(w.Tasks, api.TaskID{Connector: c, Task: i})
		}
	}
	s.configured = w
}

func mapKeys(m map[string]int) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// rebalance runs one generation: the leader assigns from every member's
// running work, then each member stops what is revoked and starts what is
// assigned.
func (s *sim) rebalance() AssignResult {
	s.generation++
	s.rounds++
	if len(s.members) == 0 {
		return AssignResult{}
	}
	if s.leader != s.members[0] {
		s.leader = s.members[0]
		s.state = NewAssignorState()
		s.leaderCompleted = s.generation - 1
	}
	in := AssignInput{
		Members: map[string]Work{}, Configured: s.configured,
		LastCompletedGeneration: s.leaderCompleted, Generation: s.generation,
		Now: s.now, MaxDelay: s.maxDelay,
	}
	for _, id := range s.members {
		in.Members[id] = cloneWork(s.running[id])
	}
	res, st := AssignIncremental(s.state, in)
	s.state = st
	s.leaderCompleted = s.generation
	for _, id := range s.members {
		w := toSet(s.running[id]).minus(toSet(res.Revoked[id])).union(toSet(res.Assigned[id]))
		s.running[id] = w.work()
	}
	return res
}

// settle rebalances until a round revokes nothing, assigns nothing and
// schedules nothing, moving the clock past every scheduled delay, as
// members rejoin after revocations and after the delay.
func (s *sim) settle() error {
	for range 60 {
		res := s.rebalance()
		if res.Delay > 0 {
			s.now = s.now.Add(res.Delay)
			continue
		}
		if anyWork(res.Revoked) || anyWork(res.Assigned) {
			continue
		}
		return nil
	}
	return fmt.Errorf("no stable assignment after 60 rounds: %v", s.running)
}

func anyWork(m map[string]Work) bool {
	for _, w := range m {
		if !w.Empty() {
			return true
		}
	}
	return false
}

// checkStable says what is wrong with the group's assignment: every
// configured connector and task must run exactly once, nothing else may
// run, and each member's connectors and tasks must be within one of every
// other's.
func (s *sim) checkStable() error {
	seen := map[string]string{}
	for _, id := range s.members {
		w := s.running[id]
		for _, c := range w.Connectors {
			if other, ok := seen["c/"+c]; ok {
				return fmt.Errorf("connector %s runs on %s and %s", c, other, id)
			}
			seen["c/"+c] = id
		}
		for _, t := range w.Tasks {
			if other, ok := seen["t/"+t.String()]; ok {
				return fmt.Errorf("task %s runs on %s and %s", t, other, id)
			}
			seen["t/"+t.String()] = id
		}
	}
	if len(s.members) == 0 {
		return nil
	}
	for _, c := range s.configured.Connectors {
		if _, ok := seen["c/"+c]; !ok {
			return fmt.Errorf("connector %s runs nowhere", c)
		}
		delete(seen, "c/"+c)
	}
	for _, t := range s.configured.Tasks {
		if _, ok := seen["t/"+t.String()]; !ok {
			return fmt.Errorf("task %s runs nowhere", t)
		}
		delete(seen, "t/"+t.String())
	}
	for k, id := range seen {
		return fmt.Errorf("%s runs on %s but is not configured", k, id)
	}
	return s.checkBalanced()
}

func (s *sim) checkBalanced() error {
	minC, maxC, minT, maxT := 1<<30, -1, 1<<30, -1
	for _, id := range s.members {
		w := s.running[id]
		minC, maxC = min(minC, len(w.Connectors)), max(maxC, len(w.Connectors))
		minT, maxT = min(minT, len(w.Tasks)), max(maxT, len(w.Tasks))
	}
	if maxC-minC > 1 || maxT-minT > 1 {
		return fmt.Errorf("unbalanced: connectors %d..%d, tasks %d..%d: %v", minC, maxC, minT, maxT, s.running)
	}
	return nil
}

package assign

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// LatestOffset is the offset sum a client reports for a task it ran as
// active until the rebalance: its state is as fresh as it gets (Kafka's
// Task.LATEST_OFFSET).
const LatestOffset int64 = -2

// Member is one group member of a client: one stream thread's consumer.
type Member struct {
	ID string
	// PrevActive and PrevStandby are the tasks this member ran before the
	// rebalance. A client's previous tasks are the union of its members'.
	PrevActive  []TaskID
	PrevStandby []TaskID
}

// Client is one application instance (process), with one member per
// stream thread.
type Client struct {
	ProcessID string
	Members   []Member
	// OffsetSums is, per task with local state on this client, the sum of
	// the task's changelog offsets in that state (LatestOffset for a task
	// it ran active): the higher, the less there is to restore. Optional.
	OffsetSums map[TaskID]int64
}

// Input is what the leader knows when it assigns.
type Input struct {
	Tasks []TaskID
	// Stateful says which tasks have state stores, hence standbys.
	Stateful           map[TaskID]bool
	Clients            []Client
	NumStandbyReplicas int
}

// MemberAssignment is one member's share of its client's tasks.
type MemberAssignment struct {
	ID      string
	Active  []TaskID
	Standby []TaskID
}

// ClientAssignment is one client's tasks, and how they are split over its
// members (in the order of the members' IDs).
type ClientAssignment struct {
	ProcessID string
	Active    []TaskID
	Standby   []TaskID
	Members   []MemberAssignment
}

// Assignment is the assignor's output, one entry per client in the order
// of the process IDs.
type Assignment struct {
	Clients []ClientAssignment
}

// Assign places every task active on exactly one member and up to
// NumStandbyReplicas standbys of each stateful task on other clients. The
// rules, in order of precedence:
//
//   - balance: every member gets floor(T/M) or ceil(T/M) of the T tasks
//     (M members in all), so clients are balanced by their thread counts;
//   - stickiness: a task stays on the member, else the client, that ran
//     it when balance allows; a task that must move prefers a client with
//     its state (a previous standby, then the highest offset sum);
//   - standbys: never on the client running the task active, never two on
//     one client, min(NumStandbyReplicas, clients-1) of each stateful
//     task, kept where they were, balanced over clients by thread count,
//     then split evenly over each client's members.
//
// The result depends only on the input's content (not on the order of its
// slices), so every leader computes the same assignment.
func Assign(in Input) (Assignment, error) {
	s, err := newAssignState(in)
	if err != nil {
		return Assignment{}, err
	}
	s.assignActive()
	s.assignStandby(in.NumStandbyReplicas)
	return s.result(), nil
}

// assignState is the working set of one Assign call. Clients and their
// members are sorted by ID; a member is addressed by its index in
// members (all clients' members, client by client).
type assignState struct {
	tasks    []TaskID
	stateful []TaskID
	clients  []clientState
	members  []memberState

	prevOwner map[TaskID]int // task -> member that ran it active
	active    map[TaskID]int // task -> member
}

type clientState struct {
	Client
	first, count int // members[first:first+count]
	prevActive   map[TaskID]bool
	prevStandby  map[TaskID]bool
	standby      []TaskID
	hasStandby   map[TaskID]bool
}

type memberState struct {
	Member
	client      int
	capacity    int
	active      []TaskID
	standby     []TaskID
	prevStandby map[TaskID]bool
}

func newAssignState(in Input) (*assignState, error) {
	if in.NumStandbyReplicas < 0 {
		return nil, fmt.Errorf("assign: num.standby.replicas %d is negative", in.NumStandbyReplicas)
	}
	s := &assignState{prevOwner: map[TaskID]int{}, active: map[TaskID]int{}}
	if err := s.setTasks(in); err != nil {
		return nil, err
	}
	if err := s.setClients(in.Clients); err != nil {
		return nil, err
	}
	if len(s.tasks) > 0 && len(s.members) == 0 {
		return nil, errors.New("assign: tasks but no members to run them")
	}
	return s, nil
}

func (s *assignState) setTasks(in Input) error {
	s.tasks = slices.Clone(in.Tasks)
	slices.SortFunc(s.tasks, TaskID.Compare)
	for i := 1; i < len(s.tasks); i++ {
		if s.tasks[i] == s.tasks[i-1] {
			return fmt.Errorf("assign: task %s listed twice", s.tasks[i])
		}
	}
	for t, stateful := range in.Stateful {
		if _, found := slices.BinarySearchFunc(s.tasks, t, TaskID.Compare); !found {
			return fmt.Errorf("assign: stateful task %s is not among the tasks", t)
		}
		if stateful {
			s.stateful = append(s.stateful, t)
		}
	}
	slices.SortFunc(s.stateful, TaskID.Compare)
	return nil
}

func (s *assignState) setClients(clients []Client) error {
	sorted := slices.Clone(clients)
	slices.SortFunc(sorted, func(a, b Client) int { return compareStrings(a.ProcessID, b.ProcessID) })
	seenMember := map[string]bool{}
	for ci, c := range sorted {
		if ci > 0 && c.ProcessID == sorted[ci-1].ProcessID {
			return fmt.Errorf("assign: process %q listed twice", c.ProcessID)
		}
		if len(c.Members) == 0 {
			return fmt.Errorf("assign: process %q has no members", c.ProcessID)
		}
		cs := clientState{Client: c, first: len(s.members), count: len(c.Members),
			prevActive: map[TaskID]bool{}, prevStandby: map[TaskID]bool{}, hasStandby: map[TaskID]bool{}}
		members := slices.Clone(c.Members)
		slices.SortFunc(members, func(a, b Member) int { return compareStrings(a.ID, b.ID) })
		for _, m := range members {
			if seenMember[m.ID] {
				return fmt.Errorf("assign: member %q listed twice", m.ID)
			}
			seenMember[m.ID] = true
			ms := memberState{Member: m, client: ci, prevStandby: map[TaskID]bool{}}
			for _, t := range m.PrevActive {
				cs.prevActive[t] = true
			}
			for _, t := range m.PrevStandby {
				cs.prevStandby[t] = true
				ms.prevStandby[t] = true
			}
			s.members = append(s.members, ms)
		}
		s.clients = append(s.clients, cs)
	}
	s.setPrevOwners()
	return nil
}

// setPrevOwners records which member ran each task. Two members claiming
// one task (a zombie that missed a rebalance) resolve to the first in
// member order, so the outcome does not depend on the input's order.
func (s *assignState) setPrevOwners() {
	for mi := range s.members {
		for _, t := range s.members[mi].PrevActive {
			if _, exists := slices.BinarySearchFunc(s.tasks, t, TaskID.Compare); !exists {
				continue
			}
			if _, claimed := s.prevOwner[t]; !claimed {
				s.prevOwner[t] = mi
			}
		}
	}
}

// offsetRank orders clients by how much of a task's state they hold:
// LatestOffset first, then higher offset sums, then no state at all.
func (c *clientState) offsetRank(t TaskID) int64 {
	sum, ok := c.OffsetSums[t]
	switch {
	case !ok:
		return -1
	case sum == LatestOffset:
		return math.MaxInt64
	case sum < 0:
		return -1
	}
	return sum
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

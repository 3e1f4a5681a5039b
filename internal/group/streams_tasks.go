package group

import (
	"slices"
	"strings"
)

// taskID is one task of a streams application: a subtopology and a
// partition of its source topics.
type taskID struct {
	subtopology string
	partition   int32
}

func compareTasks(a, b taskID) int {
	if c := strings.Compare(a.subtopology, b.subtopology); c != 0 {
		return c
	}
	return int(a.partition) - int(b.partition)
}

// taskSet is a set of tasks keyed by subtopology ID, as on the wire: each
// subtopology's partitions sorted, without duplicates, and a subtopology
// present only with at least one partition. Values are immutable once
// built.
type taskSet map[string][]int32

func taskSetOf(tasks []taskID) taskSet {
	m := make(taskSet)
	for _, t := range tasks {
		m[t.subtopology] = append(m[t.subtopology], t.partition)
	}
	for id, ps := range m {
		slices.Sort(ps)
		m[id] = slices.Compact(ps)
	}
	return m
}

func (a taskSet) has(t taskID) bool {
	_, ok := slices.BinarySearch(a[t.subtopology], t.partition)
	return ok
}

func (a taskSet) count() int {
	n := 0
	for _, ps := range a {
		n += len(ps)
	}
	return n
}

// list is the set's tasks in order.
func (a taskSet) list() []taskID {
	out := make([]taskID, 0, a.count())
	for _, id := range sortedKeys(a) {
		for _, p := range a[id] {
			out = append(out, taskID{id, p})
		}
	}
	return out
}

func (a taskSet) equal(b taskSet) bool {
	if len(a) != len(b) {
		return false
	}
	for id, ps := range a {
		if !slices.Equal(ps, b[id]) {
			return false
		}
	}
	return true
}

func (a taskSet) overlaps(b taskSet) bool {
	for id, ps := range a {
		for _, p := range ps {
			if b.has(taskID{id, p}) {
				return true
			}
		}
	}
	return false
}

func (a taskSet) subsetOf(b taskSet) bool {
	for id, ps := range a {
		for _, p := range ps {
			if !b.has(taskID{id, p}) {
				return false
			}
		}
	}
	return true
}

// streamsTasks is what a streams member is assigned, by role.
type streamsTasks struct {
	active, standby, warmup taskSet
}

func (t streamsTasks) equal(o streamsTasks) bool {
	return t.active.equal(o.active) && t.standby.equal(o.standby) && t.warmup.equal(o.warmup)
}

func (t streamsTasks) count() int { return t.active.count() + t.standby.count() + t.warmup.count() }

// all is every task of the member, whatever its role.
func (t streamsTasks) all() taskSet {
	return taskSetOf(append(append(t.active.list(), t.standby.list()...), t.warmup.list()...))
}

// subsetOf reports whether every task of t is in o in the same role.
func (t streamsTasks) subsetOf(o streamsTasks) bool {
	return t.active.subsetOf(o.active) && t.standby.subsetOf(o.standby) && t.warmup.subsetOf(o.warmup)
}

// overlaps reports whether t and o share a task in the same role.
func (t streamsTasks) overlaps(o streamsTasks) bool {
	return t.active.overlaps(o.active) || t.standby.overlaps(o.standby) || t.warmup.overlaps(o.warmup)
}

package group

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"
)

// TestStreamsAssignorProperties: for any members, processes, tasks and
// previous targets, every task is active on exactly one member; no
// standby or warm-up of a task is in the process running it, nor two in
// one process; no member gets more standbys of a task than asked; and,
// without warm-ups, active counts are within one of each other.
func TestStreamsAssignorProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := &streamsAssignInput{tasks: map[string]int32{}, stateful: map[string]bool{}}
		for i := range rapid.IntRange(1, 3).Draw(t, "subtopologies") {
			id := fmt.Sprint(i)
			in.tasks[id] = int32(rapid.IntRange(1, 8).Draw(t, "tasks"))
			in.stateful[id] = rapid.Bool().Draw(t, "stateful")
		}
		in.standbys = rapid.IntRange(0, 2).Draw(t, "standbys")
		in.maxWarmups = rapid.IntRange(0, 2).Draw(t, "warmups")
		caughtUp := rapid.Bool().Draw(t, "caught up")
		var all []taskID
		for _, id := range sortedKeys(in.tasks) {
			for p := range in.tasks[id] {
				all = append(all, taskID{id, p})
			}
		}
		members := rapid.IntRange(1, 6).Draw(t, "members")
		processes := rapid.IntRange(1, members).Draw(t, "processes")
		for i := range members {
			var prev []taskID
			for _, task := range all {
				if rapid.IntRange(0, members).Draw(t, "had") == 0 {
					prev = append(prev, task)
				}
			}
			in.members = append(in.members, streamsAssignMember{
				id: fmt.Sprintf("m%d", i), processID: fmt.Sprintf("p%d", i%processes),
				previous: streamsTasks{active: taskSetOf(prev)},
				caughtUp: func(taskID) bool { return caughtUp },
			})
		}
		out := assignStreams(in)
		process := map[string]string{}
		for _, m := range in.members {
			process[m.id] = m.processID
		}
		activeOn := map[taskID]string{}
		warm := 0
		for id, tasks := range out {
			for _, task := range tasks.active.list() {
				if other, twice := activeOn[task]; twice {
					t.Fatalf("task %v active on %s and %s", task, other, id)
				}
				activeOn[task] = id
			}
			warm += tasks.warmup.count()
		}
		if len(activeOn) != len(all) {
			t.Fatalf("%d of %d tasks active", len(activeOn), len(all))
		}
		if warm > in.maxWarmups {
			t.Fatalf("%d warm-up tasks, at most %d", warm, in.maxWarmups)
		}
		for _, task := range all {
			used := map[string]bool{process[activeOn[task]]: true}
			replicas := 0
			for id, tasks := range out {
				if !tasks.standby.has(task) && !tasks.warmup.has(task) {
					continue
				}
				if used[process[id]] {
					t.Fatalf("task %v: a standby or warm-up on %s, in a process that has it already", task, id)
				}
				used[process[id]] = true
				if tasks.standby.has(task) {
					replicas++
				}
			}
			if replicas > in.standbys || !in.stateful[task.subtopology] && replicas > 0 {
				t.Fatalf("task %v: %d standbys (asked %d, stateful %v)", task, replicas, in.standbys, in.stateful[task.subtopology])
			}
		}
		if warm == 0 {
			lo, hi := len(all), 0
			for _, tasks := range out {
				lo, hi = min(lo, tasks.active.count()), max(hi, tasks.active.count())
			}
			if hi-lo > 1 {
				t.Fatalf("active counts from %d to %d", lo, hi)
			}
		}
	})
}

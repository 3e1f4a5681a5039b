package assign

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

// genInput draws clients with one to three members, a task set over three
// subtopologies, and a previous assignment that may name tasks that no
// longer exist or members that left.
func genInput(t *rapid.T) Input {
	var in Input
	in.Stateful = map[TaskID]bool{}
	for sub := range rapid.IntRange(1, 3).Draw(t, "subtopologies") {
		for p := range rapid.IntRange(0, 8).Draw(t, fmt.Sprintf("partitions%d", sub)) {
			id := TaskID{int32(sub), int32(p)}
			in.Tasks = append(in.Tasks, id)
			if rapid.Bool().Draw(t, "stateful") {
				in.Stateful[id] = true
			}
		}
	}
	in.NumStandbyReplicas = rapid.IntRange(0, 3).Draw(t, "standbys")
	taskGen := rapid.Custom(func(t *rapid.T) TaskID {
		return TaskID{rapid.Int32Range(0, 3).Draw(t, "sub"), rapid.Int32Range(0, 9).Draw(t, "part")}
	})
	// Previous actives are drawn as one owner per task (or none), so a
	// task has at most one previous owner, as after a clean rebalance.
	numClients := rapid.IntRange(1, 6).Draw(t, "clients")
	var memberIDs []string
	for c := range numClients {
		client := Client{ProcessID: fmt.Sprintf("p%d", c), OffsetSums: map[TaskID]int64{}}
		for m := range rapid.IntRange(1, 3).Draw(t, "members") {
			id := fmt.Sprintf("m%d-%d", c, m)
			memberIDs = append(memberIDs, id)
			client.Members = append(client.Members, Member{ID: id,
				PrevStandby: dedup(rapid.SliceOfN(taskGen, 0, 4).Draw(t, "prevStandby"))})
		}
		for _, task := range rapid.SliceOfN(taskGen, 0, 6).Draw(t, "offsets") {
			client.OffsetSums[task] = rapid.Int64Range(-2, 1000).Draw(t, "sum")
		}
		in.Clients = append(in.Clients, client)
	}
	ghosts := rapid.IntRange(0, 2).Draw(t, "ghosts") // members that left
	for _, task := range append(slices.Clone(in.Tasks), TaskID{9, 9}) {
		owner := rapid.IntRange(-1, len(memberIDs)+ghosts-1).Draw(t, "owner")
		if owner < 0 || owner >= len(memberIDs) {
			continue
		}
		m := memberByID(&in, memberIDs[owner])
		m.PrevActive = append(m.PrevActive, task)
	}
	return in
}

func dedup(ts []TaskID) []TaskID {
	slices.SortFunc(ts, TaskID.Compare)
	return slices.Compact(ts)
}

func memberByID(in *Input, id string) *Member {
	for ci := range in.Clients {
		for mi := range in.Clients[ci].Members {
			if in.Clients[ci].Members[mi].ID == id {
				return &in.Clients[ci].Members[mi]
			}
		}
	}
	return nil
}

func TestAssignProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		in := genInput(t)
		out, err := Assign(in)
		if err != nil {
			t.Fatal(err)
		}
		checkInvariants(t, in, out)
		checkNoGratuitousMoves(t, in, out)

		shuffled := shuffleInput(in, rapid.Uint64().Draw(t, "seed"))
		again, err := Assign(shuffled)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(out, again); diff != "" {
			t.Fatalf("the same input in another order assigned differently (-first +shuffled):\n%s", diff)
		}

		next, err := Assign(feedBack(in, out))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(out, next); diff != "" {
			t.Fatalf("a rebalance that changed nothing moved tasks (-before +after):\n%s", diff)
		}
	})
}

// checkInvariants checks the rules every assignment keeps.
func checkInvariants(t interface{ Fatalf(string, ...any) }, in Input, out Assignment) {
	if len(out.Clients) != len(in.Clients) {
		t.Fatalf("%d clients in, %d out", len(in.Clients), len(out.Clients))
	}
	activeOn := map[TaskID]string{}
	var members int
	for _, c := range out.Clients {
		members += len(c.Members)
		var union []TaskID
		for _, m := range c.Members {
			for _, task := range m.Active {
				if prev, dup := activeOn[task]; dup {
					t.Fatalf("task %s active on %s and %s", task, prev, m.ID)
				}
				activeOn[task] = m.ID
			}
			union = append(union, m.Active...)
		}
		slices.SortFunc(union, TaskID.Compare)
		if !slices.Equal(union, c.Active) {
			t.Fatalf("client %s: actives %v, its members' %v", c.ProcessID, c.Active, union)
		}
	}
	if len(activeOn) != len(in.Tasks) {
		t.Fatalf("%d of %d tasks active", len(activeOn), len(in.Tasks))
	}
	checkActiveBalance(t, in, out, members)
	checkStandbys(t, in, out)
}

func checkActiveBalance(t interface{ Fatalf(string, ...any) }, in Input, out Assignment, members int) {
	if members == 0 {
		return
	}
	lo := len(in.Tasks) / members
	for _, c := range out.Clients {
		for _, m := range c.Members {
			if n := len(m.Active); n < lo || n > lo+1 {
				t.Fatalf("member %s has %d active tasks, want %d or %d (%d tasks, %d members)", m.ID, n, lo, lo+1, len(in.Tasks), members)
			}
		}
	}
}

func checkStandbys(t interface{ Fatalf(string, ...any) }, in Input, out Assignment) {
	want := min(in.NumStandbyReplicas, len(in.Clients)-1)
	copies := map[TaskID]int{}
	for _, c := range out.Clients {
		var union []TaskID
		lo, hi := len(c.Standby), 0
		for _, m := range c.Members {
			union = append(union, m.Standby...)
			lo, hi = min(lo, len(m.Standby)), max(hi, len(m.Standby))
		}
		if hi-lo > 1 {
			t.Fatalf("client %s: members' standby counts range %d..%d", c.ProcessID, lo, hi)
		}
		slices.SortFunc(union, TaskID.Compare)
		if !slices.Equal(union, c.Standby) {
			t.Fatalf("client %s: standbys %v, its members' %v", c.ProcessID, c.Standby, union)
		}
		for i, task := range c.Standby {
			if i > 0 && c.Standby[i-1] == task {
				t.Fatalf("client %s has two standbys of %s", c.ProcessID, task)
			}
			if slices.Contains(c.Active, task) {
				t.Fatalf("client %s has %s both active and standby", c.ProcessID, task)
			}
			if !in.Stateful[task] {
				t.Fatalf("client %s has a standby of stateless task %s", c.ProcessID, task)
			}
			copies[task]++
		}
	}
	for _, task := range in.Tasks {
		if in.Stateful[task] && copies[task] != max(want, 0) {
			t.Fatalf("task %s has %d standbys, want %d", task, copies[task], want)
		}
	}
	checkStandbyBalance(t, in, out)
}

// checkStandbyBalance: standbys per member differ by at most one between
// clients unless no standby of a heavier client may move to a lighter one
// (it runs or already holds each of them).
func checkStandbyBalance(t interface{ Fatalf(string, ...any) }, in Input, out Assignment) {
	for _, heavy := range out.Clients {
		for _, light := range out.Clients {
			h, l := len(heavy.Standby), len(light.Standby)
			if (h-1)*len(light.Members) < (l+1)*len(heavy.Members) {
				continue
			}
			for _, task := range heavy.Standby {
				if !slices.Contains(light.Active, task) && !slices.Contains(light.Standby, task) {
					t.Fatalf("client %s has %d standbys for %d members, %s %d for %d, and %s could move",
						heavy.ProcessID, h, len(heavy.Members), light.ProcessID, l, len(light.Members), task)
				}
			}
		}
	}
}

// checkNoGratuitousMoves: a member that lost a task it ran gained none it
// did not run (it kept as many of its own as its share allows).
func checkNoGratuitousMoves(t *rapid.T, in Input, out Assignment) {
	for _, c := range in.Clients {
		for _, m := range c.Members {
			got := memberOut(out, m.ID).Active
			lost := false
			for _, task := range m.PrevActive {
				if slices.Contains(in.Tasks, task) && !slices.Contains(got, task) {
					lost = true
				}
			}
			for _, task := range got {
				if lost && !slices.Contains(m.PrevActive, task) {
					t.Fatalf("member %s lost a previous task but gained %s (had %v, got %v)", m.ID, task, m.PrevActive, got)
				}
			}
		}
	}
}

func memberOut(out Assignment, id string) MemberAssignment {
	for _, c := range out.Clients {
		for _, m := range c.Members {
			if m.ID == id {
				return m
			}
		}
	}
	return MemberAssignment{}
}

// feedBack is the input of the next rebalance when nothing changed: each
// member ran what it was given.
func feedBack(in Input, out Assignment) Input {
	next := in
	next.Clients = nil
	for _, c := range in.Clients {
		nc := Client{ProcessID: c.ProcessID, OffsetSums: c.OffsetSums}
		for _, m := range c.Members {
			mo := memberOut(out, m.ID)
			nc.Members = append(nc.Members, Member{ID: m.ID, PrevActive: mo.Active, PrevStandby: mo.Standby})
		}
		next.Clients = append(next.Clients, nc)
	}
	return next
}

func shuffleInput(in Input, seed uint64) Input {
	r := rand.New(rand.NewPCG(seed, seed))
	out := in
	out.Tasks = slices.Clone(in.Tasks)
	r.Shuffle(len(out.Tasks), func(i, j int) { out.Tasks[i], out.Tasks[j] = out.Tasks[j], out.Tasks[i] })
	out.Clients = nil
	for _, c := range in.Clients {
		nc := c
		nc.Members = nil
		for _, m := range c.Members {
			m.PrevActive = slices.Clone(m.PrevActive)
			r.Shuffle(len(m.PrevActive), func(i, j int) { m.PrevActive[i], m.PrevActive[j] = m.PrevActive[j], m.PrevActive[i] })
			nc.Members = append(nc.Members, m)
		}
		r.Shuffle(len(nc.Members), func(i, j int) { nc.Members[i], nc.Members[j] = nc.Members[j], nc.Members[i] })
		out.Clients = append(out.Clients, nc)
	}
	r.Shuffle(len(out.Clients), func(i, j int) { out.Clients[i], out.Clients[j] = out.Clients[j], out.Clients[i] })
	return out
}

package assign

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func tasks(ids ...string) []TaskID {
	out := []TaskID{}
	for _, s := range ids {
		t, err := ParseTaskID(s)
		if err != nil {
			panic(err)
		}
		out = append(out, t)
	}
	return out
}

func allStateful(ts []TaskID) map[TaskID]bool {
	m := map[TaskID]bool{}
	for _, t := range ts {
		m[t] = true
	}
	return m
}

// one is a client with a single member "<process>-0".
func one(process string, prevActive, prevStandby []TaskID) Client {
	return Client{ProcessID: process, Members: []Member{{ID: process + "-0", PrevActive: prevActive, PrevStandby: prevStandby}}}
}

// activeOf and standbyOf answer each process's tasks as text.
func activeOf(out Assignment) map[string]string {
	m := map[string]string{}
	for _, c := range out.Clients {
		m[c.ProcessID] = taskList(c.Active)
	}
	return m
}

func standbyOf(out Assignment) map[string]string {
	m := map[string]string{}
	for _, c := range out.Clients {
		m[c.ProcessID] = taskList(c.Standby)
	}
	return m
}

func taskList(ts []TaskID) string {
	var s []string
	for _, t := range ts {
		s = append(s, t.String())
	}
	return strings.Join(s, " ")
}

func TestAssignActive(t *testing.T) {
	six := tasks("0_0", "0_1", "0_2", "0_3", "0_4", "0_5")
	cases := []struct {
		name    string
		in      Input
		want    map[string]string
		wantMem map[string]string // member -> active, when it matters
	}{
		{
			name: "three fresh clients split six tasks in order",
			in:   Input{Tasks: six, Clients: []Client{one("c", nil, nil), one("a", nil, nil), one("b", nil, nil)}},
			want: map[string]string{"a": "0_0 0_3", "b": "0_1 0_4", "c": "0_2 0_5"},
		},
		{
			name: "two threads take twice the share of one",
			in: Input{Tasks: six, Clients: []Client{
				{ProcessID: "a", Members: []Member{{ID: "a-0"}, {ID: "a-1"}}},
				one("b", nil, nil),
			}},
			want:    map[string]string{"a": "0_0 0_1 0_3 0_4", "b": "0_2 0_5"},
			wantMem: map[string]string{"a-0": "0_0 0_3", "a-1": "0_1 0_4", "b-0": "0_2 0_5"},
		},
		{
			name: "sticky: a balanced previous assignment is kept",
			in: Input{Tasks: six, Clients: []Client{
				one("a", tasks("0_5", "0_1"), nil), one("b", tasks("0_0", "0_3"), nil), one("c", tasks("0_2", "0_4"), nil),
			}},
			want: map[string]string{"a": "0_1 0_5", "b": "0_0 0_3", "c": "0_2 0_4"},
		},
		{
			name: "a new client takes one task from each, the rest stay",
			in: Input{Tasks: six, Clients: []Client{
				one("a", tasks("0_0", "0_1", "0_2"), nil), one("b", tasks("0_3", "0_4", "0_5"), nil), one("c", nil, nil),
			}},
			want: map[string]string{"a": "0_0 0_1", "b": "0_3 0_4", "c": "0_2 0_5"},
		},
		{
			name: "the tasks of a client that left go to the survivors, theirs stay",
			in: Input{Tasks: six, Clients: []Client{
				one("a", tasks("0_0", "0_3"), nil), one("c", tasks("0_2", "0_5"), nil), // b ran 0_1 0_4
			}},
			want: map[string]string{"a": "0_0 0_1 0_3", "c": "0_2 0_4 0_5"},
		},
		{
			name: "the extra task stays with the member that had more",
			in: Input{Tasks: tasks("0_0", "0_1", "0_2"), Clients: []Client{
				one("a", tasks("0_2"), nil), one("b", tasks("0_0", "0_1"), nil),
			}},
			want: map[string]string{"a": "0_2", "b": "0_0 0_1"},
		},
		{
			name: "a moved stateful task goes to the client with its standby",
			in: Input{Tasks: tasks("0_0", "0_1", "0_2", "0_3"), Stateful: allStateful(tasks("0_0", "0_1", "0_2", "0_3")), Clients: []Client{
				one("a", tasks("0_0", "0_1", "0_2", "0_3"), nil), one("b", nil, nil), one("c", nil, tasks("0_1")), one("d", nil, nil),
			}},
			// Without the standby, 0_1 would go to b, the first with room.
			want: map[string]string{"a": "0_0", "b": "0_2", "c": "0_1", "d": "0_3"},
		},
		{
			name: "without a standby, the client with the freshest state wins",
			in: Input{Tasks: tasks("0_0", "0_1", "0_2"), Stateful: allStateful(tasks("0_0", "0_1", "0_2")), Clients: []Client{
				one("a", tasks("0_0", "0_1", "0_2"), nil),
				{ProcessID: "b", Members: []Member{{ID: "b-0"}}, OffsetSums: map[TaskID]int64{{0, 1}: 10, {0, 2}: 50}},
				{ProcessID: "c", Members: []Member{{ID: "c-0"}}, OffsetSums: map[TaskID]int64{{0, 1}: 90, {0, 2}: 40}},
			}},
			want: map[string]string{"a": "0_0", "b": "0_2", "c": "0_1"},
		},
		{
			name: "a task stays on its client when its thread is full, on another thread",
			in: Input{Tasks: tasks("0_0", "0_1", "0_2", "0_3"), Clients: []Client{
				{ProcessID: "a", Members: []Member{{ID: "a-0", PrevActive: tasks("0_0", "0_1", "0_2")}, {ID: "a-1"}}},
				one("b", tasks("0_3"), nil),
			}},
			want:    map[string]string{"a": "0_0 0_1 0_2", "b": "0_3"},
			wantMem: map[string]string{"a-0": "0_0 0_1", "a-1": "0_2", "b-0": "0_3"},
		},
		{
			name: "no tasks",
			in:   Input{Clients: []Client{one("a", tasks("0_0"), nil)}},
			want: map[string]string{"a": ""},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := Assign(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			checkInvariants(t, tc.in, out)
			if diff := cmp.Diff(tc.want, activeOf(out)); diff != "" {
				t.Errorf("active tasks (-want +got):\n%s", diff)
			}
			if tc.wantMem != nil {
				got := map[string]string{}
				for _, c := range out.Clients {
					for _, m := range c.Members {
						got[m.ID] = taskList(m.Active)
					}
				}
				if diff := cmp.Diff(tc.wantMem, got); diff != "" {
					t.Errorf("members' active tasks (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestAssignStandby(t *testing.T) {
	four := tasks("0_0", "0_1", "0_2", "0_3")
	cases := []struct {
		name        string
		in          Input
		wantActive  map[string]string
		wantStandby map[string]string
	}{
		{
			name: "one standby each, never with the active, balanced",
			in: Input{Tasks: four, Stateful: allStateful(four), NumStandbyReplicas: 1, Clients: []Client{
				one("a", nil, nil), one("b", nil, nil),
			}},
			wantActive:  map[string]string{"a": "0_0 0_2", "b": "0_1 0_3"},
			wantStandby: map[string]string{"a": "0_1 0_3", "b": "0_0 0_2"},
		},
		{
			name: "more replicas than other clients: one copy per other client",
			in: Input{Tasks: tasks("0_0", "0_1"), Stateful: allStateful(tasks("0_0", "0_1")), NumStandbyReplicas: 5, Clients: []Client{
				one("a", nil, nil), one("b", nil, nil), one("c", nil, nil),
			}},
			wantActive:  map[string]string{"a": "0_0", "b": "0_1", "c": ""},
			wantStandby: map[string]string{"a": "0_1", "b": "0_0", "c": "0_0 0_1"},
		},
		{
			name: "stateless tasks have no standbys",
			in: Input{Tasks: four, Stateful: map[TaskID]bool{{0, 0}: true, {0, 1}: false}, NumStandbyReplicas: 1, Clients: []Client{
				one("a", nil, nil), one("b", nil, nil),
			}},
			wantActive:  map[string]string{"a": "0_0 0_2", "b": "0_1 0_3"},
			wantStandby: map[string]string{"a": "", "b": "0_0"},
		},
		{
			name:        "a single client has no standbys",
			in:          Input{Tasks: four, Stateful: allStateful(four), NumStandbyReplicas: 2, Clients: []Client{one("a", nil, nil)}},
			wantActive:  map[string]string{"a": "0_0 0_1 0_2 0_3"},
			wantStandby: map[string]string{"a": ""},
		},
		{
			name: "standbys stay where they were",
			in: Input{Tasks: four, Stateful: allStateful(four), NumStandbyReplicas: 1, Clients: []Client{
				one("a", tasks("0_0", "0_1"), nil), one("b", tasks("0_2"), tasks("0_1")), one("c", tasks("0_3"), tasks("0_0", "0_2", "0_3")),
			}},
			// a keeps its two actives (the extra task goes to the member
			// that had more); c's standby of 0_3 cannot stay (c runs it),
			// so 0_3's goes to the least loaded, a.
			wantActive:  map[string]string{"a": "0_0 0_1", "b": "0_2", "c": "0_3"},
			wantStandby: map[string]string{"a": "0_3", "b": "0_1", "c": "0_0 0_2"},
		},
		{
			name: "a moved active leaves a standby on the client it left",
			in: Input{Tasks: four, Stateful: allStateful(four), NumStandbyReplicas: 1, Clients: []Client{
				one("a", four, nil), one("b", nil, nil),
			}},
			wantActive:  map[string]string{"a": "0_0 0_1", "b": "0_2 0_3"},
			wantStandby: map[string]string{"a": "0_2 0_3", "b": "0_0 0_1"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, err := Assign(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			checkInvariants(t, tc.in, out)
			if diff := cmp.Diff(tc.wantActive, activeOf(out)); diff != "" {
				t.Errorf("active tasks (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantStandby, standbyOf(out)); diff != "" {
				t.Errorf("standby tasks (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAssignSplitsStandbysOverThreads(t *testing.T) {
	six := tasks("0_0", "0_1", "0_2", "0_3", "0_4", "0_5")
	in := Input{Tasks: six, Stateful: allStateful(six), NumStandbyReplicas: 1, Clients: []Client{
		{ProcessID: "a", Members: []Member{{ID: "a-0"}, {ID: "a-1", PrevStandby: tasks("0_3", "0_4")}}},
		{ProcessID: "b", Members: []Member{{ID: "b-0", PrevActive: tasks("0_3", "0_4", "0_5")}, {ID: "b-1"}}},
	}}
	out, err := Assign(in)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, in, out)
	got := map[string]string{}
	for _, c := range out.Clients {
		for _, m := range c.Members {
			got[m.ID] = taskList(m.Standby)
		}
	}
	// a-1 keeps its two previous standbys 0_3 and 0_4 (the larger share
	// of a's three goes to it), though a-0 comes first.
	want := map[string]string{"a-0": "0_5", "a-1": "0_3 0_4", "b-0": "0_0 0_1", "b-1": "0_2"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("members' standbys (-want +got):\n%s", diff)
	}
}

func TestAssignRejects(t *testing.T) {
	cases := []struct {
		name string
		in   Input
		want string
	}{
		{"negative standbys", Input{NumStandbyReplicas: -1}, "negative"},
		{"duplicate task", Input{Tasks: tasks("0_1", "0_1"), Clients: []Client{one("a", nil, nil)}}, "task 0_1 listed twice"},
		{"unknown stateful task", Input{Tasks: tasks("0_1"), Stateful: allStateful(tasks("1_1")), Clients: []Client{one("a", nil, nil)}}, "stateful task 1_1 is not among"},
		{"duplicate process", Input{Clients: []Client{one("a", nil, nil), {ProcessID: "a", Members: []Member{{ID: "x"}}}}}, `process "a" listed twice`},
		{"duplicate member", Input{Clients: []Client{one("a", nil, nil), {ProcessID: "b", Members: []Member{{ID: "a-0"}}}}}, `member "a-0" listed twice`},
		{"client without members", Input{Clients: []Client{{ProcessID: "a"}}}, `process "a" has no members`},
		{"tasks without clients", Input{Tasks: tasks("0_0")}, "no members"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Assign(tc.in)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

package assign

import (
	"fmt"
	"testing"
)

// BenchmarkAssign: 1,024 tasks (half stateful) over 20 instances of 4
// threads with 2 standbys, half the instances new (their tasks move).
func BenchmarkAssign(b *testing.B) {
	in := Input{Stateful: map[TaskID]bool{}, NumStandbyReplicas: 2}
	for sub := range int32(4) {
		for p := range int32(256) {
			id := TaskID{sub, p}
			in.Tasks = append(in.Tasks, id)
			in.Stateful[id] = sub%2 == 0
		}
	}
	for c := range 20 {
		client := Client{ProcessID: fmt.Sprintf("p%02d", c)}
		for m := range 4 {
			member := Member{ID: fmt.Sprintf("p%02d-%d", c, m)}
			if c < 10 {
				for i := c*4 + m; i < len(in.Tasks); i += 40 {
					member.PrevActive = append(member.PrevActive, in.Tasks[i])
				}
			}
			client.Members = append(client.Members, member)
		}
		in.Clients = append(in.Clients, client)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Assign(in); err != nil {
			b.Fatal(err)
		}
	}
}

package broker

import (
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/replication"
)

// TestSelectRackAware pins Kafka's RackAwareReplicaSelector choice over
// the candidates the leader lists (the leader first).
func TestSelectRackAware(t *testing.T) {
	racks := map[int32]string{1: "a", 2: "b", 3: "c", 4: "b", 5: "b", 6: "a"}
	rackOf := func(id int32) (string, bool) {
		r, ok := racks[id]
		return r, ok
	}
	view := func(id int32, end int64, since time.Duration) replication.ReplicaView {
		return replication.ReplicaView{ID: id, LogEnd: end, SinceCaughtUp: since}
	}
	leader := view(1, 100, 0)
	for _, tc := range []struct {
		name     string
		rack     string
		replicas []replication.ReplicaView
		want     int32
	}{
		{"no rack: the leader", "", []replication.ReplicaView{leader, view(2, 100, 0)}, 1},
		{"a follower in the rack", "b", []replication.ReplicaView{leader, view(2, 100, 0), view(3, 100, 0)}, 2},
		{"the leader in the rack", "a", []replication.ReplicaView{leader, view(2, 100, 0), view(6, 100, 0)}, 1},
		{"no replica in the rack", "z", []replication.ReplicaView{leader, view(2, 100, 0), view(3, 100, 0)}, 1},
		{"the rack's follower is not a candidate", "b", []replication.ReplicaView{leader, view(3, 100, 0)}, 1},
		{"the highest log end", "b", []replication.ReplicaView{leader, view(2, 90, 0), view(4, 95, time.Second)}, 4},
		{"then caught up most recently", "b", []replication.ReplicaView{leader, view(2, 90, time.Second), view(4, 90, 2*time.Second)}, 2},
		{"then the highest ID", "b", []replication.ReplicaView{leader, view(4, 90, 0), view(5, 90, 0), view(2, 90, 0)}, 5},
		{"an unreachable replica", "b", []replication.ReplicaView{leader, view(9, 100, 0)}, 1},
	} {
		if got := selectRackAware(tc.rack, tc.replicas, rackOf); got != tc.want {
			t.Errorf("%s: got %d, want %d", tc.name, got, tc.want)
		}
	}
}

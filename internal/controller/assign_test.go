package controller

import (
	"slices"
	"testing"

	"github.com/samsa-io/samsa/internal/model"
)

func TestAssignReplicas(t *testing.T) {
	brokers := []model.NodeID{1, 2, 3, 4, 5}
	cases := []struct {
		name        string
		brokers     []model.NodeID
		first, n    int32
		rf          int
		p           placement
		wantLeaders []model.NodeID
	}{
		{"one broker", []model.NodeID{7}, 0, 3, 1, placement{}, []model.NodeID{7, 7, 7}},
		{"round robin from start", brokers, 0, 6, 1, placement{start: 2}, []model.NodeID{3, 4, 5, 1, 2, 3}},
		{"added partitions continue", brokers, 3, 2, 3, placement{start: 0, shift: 1}, []model.NodeID{4, 5}},
		{"full replication", brokers, 0, 5, 5, placement{start: 4, shift: 3}, []model.NodeID{5, 1, 2, 3, 4}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := assignReplicas(c.brokers, c.first, c.n, c.rf, c.p)
			if len(got) != int(c.n) {
				t.Fatalf("%d partitions", len(got))
			}
			for i, replicas := range got {
				if len(replicas) != c.rf {
					t.Errorf("partition %d: %v", i, replicas)
				}
				if replicas[0] != c.wantLeaders[i] {
					t.Errorf("partition %d leader %d, want %d", i, replicas[0], c.wantLeaders[i])
				}
				for j, r := range replicas {
					if slices.Contains(replicas[:j], r) || !slices.Contains(c.brokers, r) {
						t.Errorf("partition %d: bad replicas %v", i, replicas)
					}
				}
			}
		})
	}
}

// TestAssignReplicasSpreadsLoad checks the property the shift exists for:
// over many partitions every broker leads and follows about equally.
func TestAssignReplicasSpreadsLoad(t *testing.T) {
	brokers := []model.NodeID{1, 2, 3, 4}
	got := assignReplicas(brokers, 0, 400, 3, placement{start: 1, shift: 2})
	leads, holds := map[model.NodeID]int{}, map[model.NodeID]int{}
	pairs := map[[2]model.NodeID]int{}
	for _, r := range got {
		leads[r[0]]++
		for _, b := range r {
			holds[b]++
		}
		pairs[[2]model.NodeID{r[0], r[1]}]++
	}
	for _, b := range brokers {
		if leads[b] != 100 || holds[b] != 300 {
			t.Errorf("broker %d leads %d, holds %d", b, leads[b], holds[b])
		}
	}
	// Each leader's first follower varies across rounds.
	if len(pairs) != 12 {
		t.Errorf("%d distinct leader/follower pairs, want all 12", len(pairs))
	}
}

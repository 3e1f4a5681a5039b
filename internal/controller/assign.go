package controller

import (
	"math/rand/v2"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-io/samsa/internal/model"
)

// placement is where a run of new partitions' replicas go, drawn once per
// topic: the broker index partition 0's leader lands on, and the shift that
// spreads followers. Random starts keep topics created one after another
// from all leading on the lowest broker.
type placement struct {
	start, shift int
}

func randomPlacement(brokers int) placement {
	return placement{start: rand.IntN(brokers), shift: rand.IntN(brokers)}
}

// assignReplicas places count partitions numbered from first, rf replicas
// each, over the sorted broker IDs in the manner of Kafka's rack-unaware
// assignment: leaders go round robin from p.start, and each partition's
// followers follow its leader at a distance that grows by one every time the
// leaders wrap around the broker list, so the follower sets of consecutive
// rounds differ and losing one broker spreads its leaders' load. rf must be
// between 1 and len(brokers).
func assignReplicas(brokers []model.NodeID, first, count int32, rf int, p placement) [][]model.NodeID {
	n := len(brokers)
	out := make([][]model.NodeID, 0, count)
	shift := p.shift
	for part := first; part < first+count; part++ {
		if part > first && int(part)%n == 0 {
			shift++
		}
		leader := (int(part) + p.start) % n
		replicas := make([]model.NodeID, 0, rf)
		replicas = append(replicas, brokers[leader])
		for j := range rf - 1 {
			// Followers skip the leader: the distance is 1..n-1.
			dist := 1 + (shift+j)%(n-1)
			replicas = append(replicas, brokers[(leader+dist)%n])
		}
		out = append(out, replicas)
	}
	return out
}

// checkManualAssignment validates replica lists given by the client: each
// non-empty, without duplicates, of registered brokers, all of one length.
// want is the required length, or 0 to take the first list's.
func checkManualAssignment(assignments [][]int32, registered map[model.NodeID]bool, want int) *failure {
	for _, replicas := range assignments {
		if len(replicas) == 0 {
			return fail(kerr.InvalidReplicaAssignment, "The manual partition assignment includes an empty replica list.")
		}
		if want == 0 {
			want = len(replicas)
		}
		if len(replicas) != want {
			return fail(kerr.InvalidReplicaAssignment, "The manual partition assignment includes a partition with %d replica(s), "+
				"but this is inconsistent with previous partitions, which have %d replica(s).", len(replicas), want)
		}
		for j, r := range replicas {
			if slices.Contains(replicas[:j], r) {
				return fail(kerr.InvalidReplicaAssignment, "The manual partition assignment includes the broker %d more than once.", r)
			}
			if !registered[model.NodeID(r)] {
				return fail(kerr.InvalidReplicaAssignment, "The manual partition assignment includes broker %d, but no such broker is registered.", r)
			}
		}
	}
	return nil
}

func toNodes(ids []int32) []model.NodeID {
	out := make([]model.NodeID, len(ids))
	for i, id := range ids {
		out[i] = model.NodeID(id)
	}
	return out
}

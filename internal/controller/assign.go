package controller

import (
	"maps"
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
// each, over the live brokers (sorted by ID, each with its broker.rack in
// racks; "" for none) in the manner of Kafka's assignment: leaders go round
// robin from p.start over the rack-alternated broker list, so they spread
// evenly over brokers and racks, and each partition's followers follow its
// leader in that list at a distance that grows by one every time the
// leaders wrap around, so the follower sets of consecutive rounds differ
// and losing one broker spreads its leaders' load. A follower in a rack the
// partition already has is skipped until every rack has a replica: with
// racks set, a partition survives the loss of a rack when it has replicas
// in at least two. Without racks (or with one) nothing is skipped and the
// list is the brokers in ID order. Brokers without broker.rack count as one
// rack of their own, as in Kafka's KRaft placer, which neither refuses nor
// ignores a cluster where only some brokers have a rack. rf must be between
// 1 and len(brokers).
func assignReplicas(brokers []model.NodeID, racks map[model.NodeID]string, first, count int32, rf int, p placement) [][]model.NodeID {
	ordered, numRacks := rackAlternated(brokers, racks)
	n := len(ordered)
	out := make([][]model.NodeID, 0, count)
	shift := p.shift
	for part := first; part < first+count; part++ {
		if part > first && int(part)%n == 0 {
			shift++
		}
		leader := (int(part) + p.start) % n
		replicas := make([]model.NodeID, 0, rf)
		replicas = append(replicas, ordered[leader])
		used := map[string]bool{racks[ordered[leader]]: true}
		// Two passes over the other brokers at most: the first gives every
		// rack a replica (or fills rf), the second takes any broker left.
		for k := 0; len(replicas) < rf; k++ {
			// Followers skip the leader: the distance is 1..n-1.
			dist := 1 + (shift+k)%(n-1)
			b := ordered[(leader+dist)%n]
			if slices.Contains(replicas, b) || (len(used) < numRacks && used[racks[b]]) {
				continue
			}
			replicas = append(replicas, b)
			used[racks[b]] = true
		}
		out = append(out, replicas)
	}
	return out
}

// rackAlternated orders brokers so that neighbours are in different racks
// where racks allow (Kafka's rack-alternated list): the lowest broker ID of
// each rack in rack-name order, then the second of each, and so on. It also
// returns the number of racks. Brokers all in one rack stay in ID order.
func rackAlternated(brokers []model.NodeID, racks map[model.NodeID]string) ([]model.NodeID, int) {
	byRack := map[string][]model.NodeID{}
	for _, b := range brokers {
		byRack[racks[b]] = append(byRack[racks[b]], b)
	}
	names := slices.Sorted(maps.Keys(byRack))
	for _, r := range names {
		slices.Sort(byRack[r])
	}
	out := make([]model.NodeID, 0, len(brokers))
	for i := 0; len(out) < len(brokers); i++ {
		for _, r := range names {
			if i < len(byRack[r]) {
				out = append(out, byRack[r][i])
			}
		}
	}
	return out, len(names)
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

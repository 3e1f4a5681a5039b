package balance

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/samsa-io/samsa/internal/model"
)

// balanceBytes evens bytes while the heaviest and lightest eligible brokers
// differ by more than BytesSpread of the mean. For a pair of brokers, the
// heavier first as the source, the lighter first as the destination, it
// moves the replica whose size is nearest half their difference (and
// smaller than it) if the replica counts stay within their spread;
// otherwise it swaps two partitions between them, a larger one for a
// smaller one, which leaves the counts as they are. Either way the sum of
// squared bytes falls and the counts' spread is not exceeded, so this
// phase cannot undo balanceReplicas and planning converges.
func (pl *planner) balanceBytes() {
	if pl.opts.BytesSpread <= 0 || len(pl.eligible) < 2 {
		return
	}
	var total int64
	for _, id := range pl.eligible {
		total += pl.bytes[id]
	}
	limit := int64(pl.opts.BytesSpread * float64(total) / float64(len(pl.eligible)))
	for {
		d, order := spread(pl, pl.bytes)
		if d <= limit {
			return
		}
		if pl.budget <= 0 {
			pl.note("bytes differ by %s (spread %s): waiting for moves to finish (max moves %d)", bytesText(d), bytesText(limit), pl.opts.MaxMoves)
			return
		}
		moved := pl.firstPair(order, func(from, to model.NodeID) bool {
			diff := pl.bytes[from] - pl.bytes[to]
			if diff <= limit {
				return false
			}
			why := fmt.Sprintf("broker %d holds %s and broker %d holds %s (difference %s > %s)",
				from, bytesText(pl.bytes[from]), to, bytesText(pl.bytes[to]), bytesText(d), bytesText(limit))
			return pl.moveBytes(from, to, diff, why) || pl.swapBytes(from, to, diff, why)
		})
		if !moved {
			pl.note("bytes differ by %s (spread %s), but no move or swap keeps the rack spread, min ISR and replica counts", bytesText(d), bytesText(limit))
			return
		}
	}
}

// moveBytes moves one replica from from to to, the one nearest half of
// diff, when the replica counts stay within their spread.
func (pl *planner) moveBytes(from, to model.NodeID, diff int64, why string) bool {
	if !pl.countsStayWithin(from, to, max(pl.opts.ReplicaSpread, 1)) {
		return false
	}
	var best *part
	for _, p := range pl.parts {
		if p.Bytes <= 0 || p.Bytes >= diff || !pl.canMove(p, from, to) {
			continue
		}
		if best == nil || abs(2*p.Bytes-diff) < abs(2*best.Bytes-diff) {
			best = p
		}
	}
	if best == nil {
		return false
	}
	pl.apply(best, MoveReplicas, replaced(best.Replicas, from, to), fmt.Sprintf("%s: moving %s (%s) replica %d→%d (rack %s)",
		why, best.TopicPartition, bytesText(best.Bytes), from, to, rackName(pl.rackOf(to))))
	return true
}

// swapBytes moves a replica from from to to and another from to to from,
// the larger going to the lighter broker, when two moves are left: the
// pair whose difference in size is nearest half of diff (and below it).
func (pl *planner) swapBytes(from, to model.NodeID, diff int64, why string) bool {
	if pl.budget < 2 {
		return false
	}
	var out, back []*part // candidates to go from→to, and to→from, by size
	for _, p := range pl.parts {
		switch {
		case pl.canMove(p, from, to):
			out = append(out, p)
		case pl.canMove(p, to, from):
			back = append(back, p)
		}
	}
	if len(out) == 0 || len(back) == 0 {
		return false
	}
	slices.SortStableFunc(back, func(a, b *part) int { return cmp.Compare(a.Bytes, b.Bytes) })
	var bestOut, bestBack *part
	var bestNet int64
	for _, x := range out {
		// The partitions coming back nearest x.Bytes - diff/2 in size.
		i, _ := slices.BinarySearchFunc(back, x.Bytes-diff/2, func(p *part, v int64) int { return cmp.Compare(p.Bytes, v) })
		for _, j := range []int{i - 1, i} {
			if j < 0 || j >= len(back) {
				continue
			}
			net := x.Bytes - back[j].Bytes
			if net <= 0 || net >= diff {
				continue
			}
			if bestOut == nil || abs(2*net-diff) < abs(2*bestNet-diff) {
				bestOut, bestBack, bestNet = x, back[j], net
			}
		}
	}
	if bestOut == nil {
		return false
	}
	swap := fmt.Sprintf("swapping %s (%s) on broker %d for %s (%s) on broker %d", bestOut.TopicPartition, bytesText(bestOut.Bytes), from,
		bestBack.TopicPartition, bytesText(bestBack.Bytes), to)
	pl.apply(bestOut, MoveReplicas, replaced(bestOut.Replicas, from, to), fmt.Sprintf("%s: %s: moving %s replica %d→%d (rack %s)",
		why, swap, bestOut.TopicPartition, from, to, rackName(pl.rackOf(to))))
	pl.apply(bestBack, MoveReplicas, replaced(bestBack.Replicas, to, from), fmt.Sprintf("%s: %s: moving %s replica %d→%d (rack %s)",
		why, swap, bestBack.TopicPartition, to, from, rackName(pl.rackOf(from))))
	return true
}

// countsStayWithin says whether moving one replica from from to to keeps
// the replica counts' spread within limit.
func (pl *planner) countsStayWithin(from, to model.NodeID, limit int) bool {
	pl.replicas[from]--
	pl.replicas[to]++
	d, _ := spread(pl, pl.replicas)
	pl.replicas[from]++
	pl.replicas[to]--
	return d <= limit
}

package balance

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/samsa-io/samsa/internal/model"
)

// leaderEdge is one way leadership can pass without moving data: p's
// preferred leader can become its in-sync replica on the edge's broker.
type leaderEdge struct {
	to model.NodeID
	p  *part
}

// balanceLeaders evens preferred leaders while their counts differ by more
// than LeaderSpread, by reordering replica lists (no data moves). A broker
// over the spread may share no partition with the one under it, so it
// moves leadership along a chain: A prefers B's partition, B gives one of
// its own to C, and so on, until it reaches a broker with at least two
// fewer; brokers in the middle keep their counts, the ends come closer.
func (pl *planner) balanceLeaders() {
	limit := max(pl.opts.LeaderSpread, 1)
	for {
		d, order := spread(pl, pl.leaders)
		if d <= limit {
			return
		}
		if pl.leaderOK <= 0 {
			if pl.opts.MaxLeaderMoves > 0 {
				pl.note("preferred leaders differ by %d (spread %d): more leader moves in the next plan (max %d)", d, limit, pl.opts.MaxLeaderMoves)
			}
			return
		}
		edges := pl.leaderEdges()
		var chain []leaderEdge
		for _, from := range order {
			if chain = pl.leaderChain(from, edges); chain != nil {
				break
			}
		}
		if chain == nil {
			pl.note("preferred leaders differ by %d (spread %d), but no in-sync replica can take leadership over", d, limit)
			return
		}
		if len(chain) > pl.leaderOK {
			pl.note("preferred leaders differ by %d (spread %d): the next change takes %d leader moves, more than are left (max %d)",
				d, limit, len(chain), pl.opts.MaxLeaderMoves)
			return
		}
		from, to := chain[0].p.Replicas[0], chain[len(chain)-1].to
		why := fmt.Sprintf("broker %d is preferred leader of %d partitions and broker %d of %d (spread %d > %d)",
			from, pl.leaders[from], to, pl.leaders[to], d, limit)
		for i, e := range chain {
			target := append([]model.NodeID{e.to}, slices.DeleteFunc(slices.Clone(e.p.Replicas), func(r model.NodeID) bool { return r == e.to })...)
			step := ""
			if len(chain) > 1 {
				step = fmt.Sprintf(", step %d of %d", i+1, len(chain))
			}
			pl.apply(e.p, MoveLeader, target, fmt.Sprintf("%s: preferring in-sync broker %d over %d for %s (no data moves%s)",
				why, e.to, e.p.Replicas[0], e.p.TopicPartition, step))
		}
	}
}

// leaderEdges maps each eligible broker to the leadership changes it can
// make: for each partition it is preferred leader of (and balance may
// touch), each other live in-sync replica, in partition order.
func (pl *planner) leaderEdges() map[model.NodeID][]leaderEdge {
	out := map[model.NodeID][]leaderEdge{}
	for _, p := range pl.parts {
		if !pl.movable(p) || !pl.brokers[p.Replicas[0]].eligible {
			continue
		}
		for _, r := range p.Replicas[1:] {
			if pl.brokers[r].eligible && slices.Contains(p.ISR, r) {
				out[p.Replicas[0]] = append(out[p.Replicas[0]], leaderEdge{to: r, p: p})
			}
		}
	}
	return out
}

// leaderChain finds, by breadth-first search from from, the broker with
// the fewest preferred leaderships (then the nearest, then the lowest ID)
// that has at least two fewer than from, and the leadership changes that
// lead there. It returns nil when there is none.
func (pl *planner) leaderChain(from model.NodeID, edges map[model.NodeID][]leaderEdge) []leaderEdge {
	via := map[model.NodeID]leaderEdge{}
	dist := map[model.NodeID]int{from: 0}
	queue := []model.NodeID{from}
	best, found := from, false
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		if pl.leaders[from]-pl.leaders[u] >= 2 && (!found || cmp.Or(cmp.Compare(pl.leaders[u], pl.leaders[best]),
			cmp.Compare(dist[u], dist[best]), cmp.Compare(u, best)) < 0) {
			best, found = u, true
		}
		for _, e := range edges[u] {
			if _, seen := dist[e.to]; !seen {
				dist[e.to] = dist[u] + 1
				via[e.to] = e
				queue = append(queue, e.to)
			}
		}
	}
	if !found {
		return nil
	}
	var chain []leaderEdge
	for v := best; v != from; v = via[v].p.Replicas[0] {
		chain = append(chain, via[v])
	}
	slices.Reverse(chain)
	return chain
}

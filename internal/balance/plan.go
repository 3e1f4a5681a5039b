package balance

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/samsa-io/samsa/internal/model"
)

// brokerInfo is a broker with what the planner decided about it.
type brokerInfo struct {
	Broker
	// evacuate says why the broker's replicas must leave ("" when they
	// stay): it is draining, down past the timeout, or not registered.
	evacuate string
	// eligible brokers take new replicas and leaderships and are the ones
	// balanced: alive, registered and not evacuating.
	eligible     bool
	unregistered bool // named in a replica list, not in the state's brokers
}

// part is one partition as planned so far.
type part struct {
	Partition
	locked bool // moved by this plan or being reassigned already
	// needsFix: replicas on evacuating brokers or outside the rack spread,
	// as planning starts; balance leaves such partitions to fix.
	needsFix bool
	// waitsForDown: a replica is on a broker that is down but not
	// evacuating. A reassignment completes only once every replica it
	// keeps is in sync, so a move that keeps that replica would wait for
	// the broker's return, holding a place of MaxMoves: its replicas stay
	// where they are until the broker returns or is evacuated. Leader
	// moves (a reordering) complete at once and may still happen.
	waitsForDown bool
	// evict says why replicas on failed log directories must leave, past
	// the down timeout, by broker.
	evict map[model.NodeID]string
}

// planner holds one planning pass: the state as the moves planned so far
// leave it.
type planner struct {
	opts     Options
	brokers  map[model.NodeID]*brokerInfo
	eligible []model.NodeID // sorted
	racks    []string       // the racks of brokers that keep their replicas, sorted
	parts    []*part        // sorted by topic, partition
	replicas map[model.NodeID]int
	leaders  map[model.NodeID]int // partitions whose first replica it is
	bytes    map[model.NodeID]int64
	budget   int // replica moves left
	leaderOK int // leader moves left
	plan     Plan
}

// Propose plans the moves that bring the cluster within opts. It is pure
// and deterministic: the same state and options give the same plan.
func Propose(st ClusterState, opts Options) Plan {
	pl := newPlanner(st, opts)
	pl.plan.Before = pl.loads()
	pl.evacuate()
	pl.repairRacks()
	pl.balanceReplicas()
	pl.balanceBytes()
	pl.balanceLeaders()
	pl.plan.After = pl.loads()
	return pl.plan
}

func newPlanner(st ClusterState, opts Options) *planner {
	pl := &planner{
		opts:     opts,
		brokers:  map[model.NodeID]*brokerInfo{},
		replicas: map[model.NodeID]int{},
		leaders:  map[model.NodeID]int{},
		bytes:    map[model.NodeID]int64{},
		leaderOK: opts.MaxLeaderMoves,
	}
	racks := map[string]bool{}
	for _, b := range st.Brokers {
		if pl.brokers[b.ID] != nil {
			continue // listed twice: the first counts
		}
		bi := &brokerInfo{Broker: b}
		switch down := st.Now.Sub(b.DownSince); {
		case b.Draining:
			bi.evacuate = fmt.Sprintf("broker %d is draining", b.ID)
		case !b.Alive && opts.DownTimeout > 0 && !b.DownSince.IsZero() && down >= opts.DownTimeout:
			bi.evacuate = fmt.Sprintf("broker %d has been down for %s (timeout %s)", b.ID, down.Round(1e9), opts.DownTimeout)
		default:
			racks[b.Rack] = true
			bi.eligible = b.Alive
		}
		pl.brokers[b.ID] = bi
	}
	pl.racks = slices.Sorted(maps.Keys(racks))
	for id, bi := range pl.brokers {
		if bi.eligible {
			pl.eligible = append(pl.eligible, id)
		}
	}
	slices.Sort(pl.eligible)

	inProgress := map[model.TopicPartition]bool{}
	for _, tp := range opts.InProgress {
		inProgress[tp] = true
	}
	listed := map[model.TopicPartition]bool{}
	for _, p := range st.Partitions {
		if listed[p.TopicPartition] {
			pl.note("%s: listed twice: the second is ignored", p.TopicPartition)
			continue
		}
		listed[p.TopicPartition] = true
		p.Replicas = slices.Clone(p.Replicas)
		// The ISR is a subset of the replicas; anything else in it is
		// stale and counts for nothing.
		p.ISR = slices.DeleteFunc(slices.Clone(p.ISR), func(r model.NodeID) bool { return !slices.Contains(p.Replicas, r) })
		p.Bytes = max(p.Bytes, 0)
		pt := &part{Partition: p, locked: inProgress[p.TopicPartition]}
		if sorted := slices.Sorted(slices.Values(p.Replicas)); len(sorted) == 0 || len(slices.Compact(sorted)) < len(p.Replicas) {
			pl.note("%s: replica list %v is empty or repeats a broker: not touched", p.TopicPartition, p.Replicas)
			pt.locked = true
		}
		pl.parts = append(pl.parts, pt)
		for i, r := range p.Replicas {
			if pl.brokers[r] == nil {
				pl.brokers[r] = &brokerInfo{Broker: Broker{ID: r}, unregistered: true, evacuate: fmt.Sprintf("broker %d is not registered", r)}
			}
			pl.replicas[r]++
			pl.bytes[r] += p.Bytes
			if i == 0 {
				pl.leaders[r]++
			}
		}
	}
	waiting := map[model.NodeID]bool{}
	waitingParts, waitingOffline := 0, 0
	for _, p := range pl.parts {
		offlineWaits := pl.markOffline(st.Now, p)
		p.needsFix = len(pl.evacuees(p)) > 0 || !pl.rackValid(p.Replicas)
		for _, r := range p.Replicas {
			if bi := pl.brokers[r]; !bi.Alive && bi.evacuate == "" && !bi.unregistered {
				p.waitsForDown, waiting[r] = true, true
			}
		}
		if p.waitsForDown && !p.locked {
			waitingParts++
		}
		if offlineWaits && !p.locked {
			waitingOffline++
		}
		p.waitsForDown = p.waitsForDown || offlineWaits
	}
	if waitingParts > 0 {
		pl.note("%d partitions have a replica on a broker down for less than the down timeout (%v): their replicas move once it returns or is evacuated",
			waitingParts, slices.Sorted(maps.Keys(waiting)))
	}
	if waitingOffline > 0 {
		pl.note("%d partitions have a replica on a failed log directory for less than the down timeout (%v), or since a time not known: it moves to another broker once past it",
			waitingOffline, opts.DownTimeout)
	}
	slices.SortFunc(pl.parts, func(a, b *part) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition.Partition, b.Partition.Partition))
	})
	pl.budget = opts.MaxMoves - len(inProgress)
	return pl
}

// rackOf is the rack of a broker; an unregistered one has none.
func (pl *planner) rackOf(id model.NodeID) string { return pl.brokers[id].Rack }

// rackCounts counts a replica list's replicas per rack, with every rack of
// the brokers that keep their replicas present (at 0 if it has none).
func (pl *planner) rackCounts(replicas []model.NodeID) map[string]int {
	counts := make(map[string]int, len(pl.racks))
	for _, r := range pl.racks {
		counts[r] = 0
	}
	for _, id := range replicas {
		counts[pl.rackOf(id)]++
	}
	return counts
}

// rackValid is the rack spread rule, Kafka's for placement: every rack gets
// a replica before any gets two, and in general no rack holds two more
// replicas than another. With one rack (or none set) every list is valid.
func (pl *planner) rackValid(replicas []model.NodeID) bool { return pl.rackSkew(replicas) <= 1 }

// rackSkew is how many more replicas the fullest rack holds than the
// emptiest: at most 1 is within the rack spread.
func (pl *planner) rackSkew(replicas []model.NodeID) int {
	counts := pl.rackCounts(replicas)
	lo, hi := len(replicas), 0
	for _, n := range counts {
		lo, hi = min(lo, n), max(hi, n)
	}
	return hi - lo
}

// isrSafe is the min ISR rule. A reassignment adds replicas before it
// removes any, but the replicas it adds are not in sync when it starts, so
// they do not count: a move may take out a live in-sync replica only if at
// least min.insync.replicas live in-sync replicas stay. Replicas out of
// sync or on dead brokers may always go. A partition whose replication
// factor is at most its min ISR therefore moves only replicas that are not
// in sync, unless Options.CountAddedReplicas says the added replicas will
// be in sync before any leaves (docs/DESIGN-balance.md).
func (pl *planner) isrSafe(p *part, target []model.NodeID) bool {
	kept, leaving := pl.added(p, target), false
	for _, r := range p.ISR {
		if !pl.brokers[r].Alive {
			continue
		}
		if slices.Contains(target, r) {
			kept++
		} else {
			leaving = true
		}
	}
	return !leaving || kept >= max(p.MinISR, 1)
}

// added is how many replicas a move adds that count toward min ISR: none,
// unless Options.CountAddedReplicas.
func (pl *planner) added(p *part, target []model.NodeID) int {
	if !pl.opts.CountAddedReplicas {
		return 0
	}
	n := 0
	for _, r := range target {
		if !slices.Contains(p.Replicas, r) {
			n++
		}
	}
	return n
}

// markOffline sets why p's replicas on failed log directories leave: those
// offline past the down timeout, on a broker that is not leaving anyway.
// It reports whether a replica offline for less (or for an unknown time)
// waits, which keeps balance from moving the partition, as a down broker's
// replica does: a move that kept it would never complete.
func (pl *planner) markOffline(now time.Time, p *part) (waits bool) {
	for _, o := range p.Offline {
		bi := pl.brokers[o.Broker]
		if !slices.Contains(p.Replicas, o.Broker) || bi == nil || bi.evacuate != "" {
			continue // not a replica, or leaving with its broker
		}
		down := now.Sub(o.Since)
		if o.Since.IsZero() || pl.opts.DownTimeout <= 0 || down < pl.opts.DownTimeout {
			waits = true
			continue
		}
		if p.evict == nil {
			p.evict = map[model.NodeID]string{}
		}
		p.evict[o.Broker] = fmt.Sprintf("broker %d's replica has been on a failed log directory for %s (timeout %s)",
			o.Broker, down.Round(time.Second), pl.opts.DownTimeout)
	}
	return waits
}

// why says why replica r of p must leave: its broker is evacuated, or it is
// on a failed log directory past the timeout; "" when it stays.
func (pl *planner) why(p *part, r model.NodeID) string {
	if reason := pl.brokers[r].evacuate; reason != "" {
		return reason
	}
	return p.evict[r]
}

// evacuees are a partition's replicas that must leave (why).
func (pl *planner) evacuees(p *part) []model.NodeID {
	var out []model.NodeID
	for _, r := range p.Replicas {
		if pl.why(p, r) != "" {
			out = append(out, r)
		}
	}
	return out
}

// evacuate moves replicas off draining, long-down and unregistered
// brokers, before anything else.
func (pl *planner) evacuate() {
	waiting := 0
	for _, p := range pl.parts {
		if p.locked || p.waitsForDown || len(pl.evacuees(p)) == 0 {
			continue
		}
		if pl.budget <= 0 {
			waiting++
			continue
		}
		pl.fix(p)
	}
	if waiting > 0 {
		pl.note("%d more partitions have replicas to move off evacuating brokers: waiting for moves to finish (max moves %d)", waiting, pl.opts.MaxMoves)
	}
}

// repairRacks moves replicas of partitions whose replica lists break the
// rack spread (placed before racks were set, or by hand).
func (pl *planner) repairRacks() {
	waiting := 0
	for _, p := range pl.parts {
		if p.locked || p.waitsForDown || pl.rackValid(p.Replicas) {
			continue
		}
		if pl.budget <= 0 {
			waiting++
			continue
		}
		pl.fix(p)
	}
	if waiting > 0 {
		pl.note("%d more partitions break the rack spread: waiting for moves to finish (max moves %d)", waiting, pl.opts.MaxMoves)
	}
}

// fix plans one partition's move off evacuating brokers and out of
// over-full racks, to the least loaded eligible brokers of the racks with
// the fewest replicas. Each new replica takes the position of the one it
// replaces, so a replaced preferred leader's successor is preferred.
func (pl *planner) fix(p *part) {
	why := map[model.NodeID]string{}
	for _, r := range pl.evacuees(p) {
		why[r] = pl.why(p, r)
	}
	pl.dropRackExcess(p, why)
	if deferred := pl.deferForMinISR(p, why); len(deferred) > 0 {
		if len(p.Replicas) <= p.MinISR && !pl.opts.CountAddedReplicas {
			pl.note("%s: keeping in-sync replicas %v: with %d replicas and min.insync.replicas=%d, none may leave before its replacement is in sync, which only a reassignment that waits for it allows (CountAddedReplicas)",
				p.TopicPartition, deferred, len(p.Replicas), p.MinISR)
		} else {
			pl.note("%s: keeping in-sync replicas %v for now: min.insync.replicas=%d needs them until the new replicas catch up (ISR %v)",
				p.TopicPartition, deferred, p.MinISR, p.ISR)
		}
		if len(why) == 0 {
			return
		}
	}
	// placed are the replicas the target holds so far: those staying, then
	// each new one; the leaving ones must not count for their racks.
	target := slices.Clone(p.Replicas)
	var placed []model.NodeID
	for _, r := range p.Replicas {
		if why[r] == "" {
			placed = append(placed, r)
		}
	}
	var steps []string
	for i, r := range p.Replicas {
		if why[r] == "" {
			continue
		}
		to, ok := pl.bestDestination(p, placed)
		if !ok {
			pl.note("%s: %s, but no broker can take its replica: each eligible broker (%d) holds one or is in a rack that would break the rack spread",
				p.TopicPartition, why[r], len(pl.eligible))
			return
		}
		target[i] = to
		placed = append(placed, to)
		steps = append(steps, fmt.Sprintf("%s: moving %s replica %d→%d (rack %s)", why[r], p.TopicPartition, r, to, rackName(pl.rackOf(to))))
	}
	// A partition outside the rack spread may have to come back in steps
	// (min ISR keeps some of its replicas for now): each step must bring
	// it closer, or at least replace an evacuating broker's replica
	// without going further out. Any other target is within the spread.
	evacuating := false
	for r, reason := range why {
		evacuating = evacuating || reason == pl.why(p, r)
	}
	if skew, was := pl.rackSkew(target), pl.rackSkew(p.Replicas); skew > 1 && (skew > was || skew == was && !evacuating) {
		pl.note("%s: no placement keeps the rack spread (racks %s)", p.TopicPartition, strings.Join(pl.racks, ","))
		return
	}
	if !pl.isrSafe(p, target) { // deferForMinISR sees to it; checked again as the rule is absolute
		pl.note("%s: the move to %v would leave fewer than min.insync.replicas=%d in sync: not moving", p.TopicPartition, target, p.MinISR)
		return
	}
	pl.apply(p, MoveReplicas, target, strings.Join(steps, "; "))
}

// deferForMinISR takes out of the replicas to move (why) the live in-sync
// ones that isrSafe would refuse to remove, the last in the list first, so
// the rest can move now: a replica out of sync or dead goes at once, and
// an in-sync one next time, once the new replicas are in the ISR. It
// returns the replicas it kept.
func (pl *planner) deferForMinISR(p *part, why map[model.NodeID]string) []model.NodeID {
	var deferred []model.NodeID
	for {
		var leaving, staying []model.NodeID
		for _, r := range p.ISR {
			if !pl.brokers[r].Alive {
				continue
			}
			if why[r] != "" {
				leaving = append(leaving, r)
			} else {
				staying = append(staying, r)
			}
		}
		added := 0 // every replica leaving is replaced
		if pl.opts.CountAddedReplicas {
			added = len(why)
		}
		if len(leaving) == 0 || len(staying)+added >= max(p.MinISR, 1) {
			slices.Sort(deferred)
			return deferred
		}
		// Keep a replica of an evacuating broker before one leaving an
		// over-full rack (the broker still serves, and the rack spread
		// comes back sooner), then the one last in the replica list.
		last := slices.MaxFunc(leaving, func(a, b model.NodeID) int {
			evacuating := func(r model.NodeID) int { return len(pl.brokers[r].evacuate) }
			return cmp.Or(cmp.Compare(min(evacuating(a), 1), min(evacuating(b), 1)),
				cmp.Compare(slices.Index(p.Replicas, a), slices.Index(p.Replicas, b)))
		})
		delete(why, last)
		deferred = append(deferred, last)
	}
}

// dropRackExcess marks for removal the replicas of racks holding more than
// the spread allows: with rf = q*racks + s, s racks may hold q+1 replicas
// and the others q. It drops from the fullest rack first, out-of-sync
// replicas before in-sync ones, later replicas before earlier ones.
func (pl *planner) dropRackExcess(p *part, why map[model.NodeID]string) {
	k := len(pl.racks)
	if k <= 1 {
		return
	}
	rf := len(p.Replicas)
	q, s := rf/k, rf%k
	for {
		var kept []model.NodeID
		for _, r := range p.Replicas {
			if why[r] == "" {
				kept = append(kept, r)
			}
		}
		counts := pl.rackCounts(kept)
		racks := slices.Sorted(maps.Keys(counts))
		full, atTop := racks[0], 0
		for _, rack := range racks {
			if counts[rack] == q+1 {
				atTop++
			}
			if counts[rack] > counts[full] {
				full = rack
			}
		}
		if counts[full] <= q || counts[full] == q+1 && atTop <= s {
			return
		}
		var victim model.NodeID = -1
		for _, r := range slices.Backward(kept) {
			if pl.rackOf(r) != full {
				continue
			}
			if victim < 0 || slices.Contains(p.ISR, victim) && !slices.Contains(p.ISR, r) {
				victim = r
			}
		}
		why[victim] = fmt.Sprintf("%s has %d replicas in rack %s, more than the rack spread allows", p.TopicPartition, counts[full], rackName(full))
	}
}

// bestDestination picks a broker for one more replica beside placed:
// eligible, not a replica of p already, in the rack with the fewest of
// placed, then with the fewest replicas, the fewest bytes, the lowest ID.
func (pl *planner) bestDestination(p *part, placed []model.NodeID) (model.NodeID, bool) {
	counts := pl.rackCounts(placed)
	best, found := model.NodeID(0), false
	for _, id := range pl.eligible {
		if slices.Contains(placed, id) || slices.Contains(p.Replicas, id) {
			continue
		}
		if !found || cmp.Or(cmp.Compare(counts[pl.rackOf(id)], counts[pl.rackOf(best)]),
			cmp.Compare(pl.replicas[id], pl.replicas[best]), cmp.Compare(pl.bytes[id], pl.bytes[best])) < 0 {
			best, found = id, true
		}
	}
	return best, found
}

// movable says whether balance may move a partition: not locked, nothing
// to evacuate, rack spread intact (fix handles the others; a partition
// fix moved is locked).
func (pl *planner) movable(p *part) bool { return !p.locked && !p.needsFix }

// spread is the difference between the highest and lowest value of a load
// over the eligible brokers, with the brokers from the most to the least
// loaded (ties by ID).
func spread[N int | int64](pl *planner, load map[model.NodeID]N) (N, []model.NodeID) {
	order := slices.Clone(pl.eligible)
	slices.SortStableFunc(order, func(a, b model.NodeID) int { return cmp.Compare(load[b], load[a]) })
	if len(order) < 2 {
		return 0, order
	}
	return load[order[0]] - load[order[len(order)-1]], order
}

// replaced is p's replica list with from replaced by to, in place.
func replaced(replicas []model.NodeID, from, to model.NodeID) []model.NodeID {
	out := slices.Clone(replicas)
	out[slices.Index(out, from)] = to
	return out
}

// balanceReplicas moves replicas from the broker with the most to the one
// with the fewest while their counts differ by more than ReplicaSpread,
// each time the smallest partition that can go (the least data to copy).
func (pl *planner) balanceReplicas() {
	limit := max(pl.opts.ReplicaSpread, 1)
	for {
		d, order := spread(pl, pl.replicas)
		if d <= limit {
			return
		}
		if pl.budget <= 0 {
			pl.note("replica counts differ by %d (spread %d): waiting for moves to finish (max moves %d)", d, limit, pl.opts.MaxMoves)
			return
		}
		moved := pl.firstPair(order, func(from, to model.NodeID) bool {
			if pl.replicas[from]-pl.replicas[to] < 2 {
				return false
			}
			var best *part
			for _, p := range pl.parts {
				if pl.canMove(p, from, to) && (best == nil || p.Bytes < best.Bytes) {
					best = p
				}
			}
			if best == nil {
				return false
			}
			pl.apply(best, MoveReplicas, replaced(best.Replicas, from, to), fmt.Sprintf(
				"broker %d holds %d replicas and broker %d holds %d (spread %d > %d): moving %s replica %d→%d (rack %s)",
				from, pl.replicas[from], to, pl.replicas[to], d, limit, best.TopicPartition, from, to, rackName(pl.rackOf(to))))
			return true
		})
		if !moved {
			pl.note("replica counts differ by %d (spread %d), but no move keeps the rack spread and min ISR", d, limit)
			return
		}
	}
}

// canMove says whether p's replica on from may move to to.
func (pl *planner) canMove(p *part, from, to model.NodeID) bool {
	if !slices.Contains(p.Replicas, from) || slices.Contains(p.Replicas, to) || !pl.movable(p) || p.waitsForDown {
		return false
	}
	target := replaced(p.Replicas, from, to)
	return pl.rackValid(target) && pl.isrSafe(p, target)
}

// firstPair tries try on pairs of brokers, the most loaded first as the
// source and the least loaded first as the destination, until one moves.
func (pl *planner) firstPair(order []model.NodeID, try func(from, to model.NodeID) bool) bool {
	for _, from := range order {
		for _, to := range slices.Backward(order) {
			if from != to && try(from, to) {
				return true
			}
		}
	}
	return false
}

// apply records a move and updates the loads it changes.
func (pl *planner) apply(p *part, kind MoveKind, target []model.NodeID, reason string) {
	from := p.Replicas
	pl.plan.Moves = append(pl.plan.Moves, Move{Kind: kind, TopicPartition: p.TopicPartition,
		From: slices.Clone(from), To: slices.Clone(target), Leader: target[0], Reason: reason})
	for _, r := range from {
		if !slices.Contains(target, r) {
			pl.replicas[r]--
			pl.bytes[r] -= p.Bytes
		}
	}
	for _, r := range target {
		if !slices.Contains(from, r) {
			pl.replicas[r]++
			pl.bytes[r] += p.Bytes
		}
	}
	pl.leaders[from[0]]--
	pl.leaders[target[0]]++
	p.Replicas = target
	p.locked = true
	if kind == MoveLeader {
		pl.leaderOK--
	} else {
		pl.budget--
	}
}

func (pl *planner) note(format string, args ...any) {
	pl.plan.Notes = append(pl.plan.Notes, fmt.Sprintf(format, args...))
}

// loads is every broker's load as planned so far, in broker order.
func (pl *planner) loads() []BrokerLoad {
	out := make([]BrokerLoad, 0, len(pl.brokers))
	for _, id := range slices.Sorted(maps.Keys(pl.brokers)) {
		b := pl.brokers[id]
		out = append(out, BrokerLoad{Broker: id, Rack: b.Rack, State: b.state(),
			Replicas: pl.replicas[id], Leaders: pl.leaders[id], Bytes: pl.bytes[id]})
	}
	return out
}

func (b *brokerInfo) state() string {
	switch {
	case b.Draining:
		return "draining"
	case b.unregistered:
		return "unregistered"
	case b.evacuate != "":
		return "down, evacuating"
	case !b.Alive:
		return "down"
	}
	return "ok"
}

func rackName(r string) string {
	if r == "" {
		return "none"
	}
	return r
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

package balance

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/samsa-io/samsa/internal/model"
)

// The property tests plan over random clusters (racks or none, brokers
// draining, down for long or short, skewed placements, ISRs that lag,
// min.insync.replicas up to the replication factor, partitions being
// reassigned) and check every plan against rules written here again, apart
// from the planner's code, then apply plans until one is empty.

// shape says what kind of cluster gen draws.
type shape struct {
	healthy bool // every live replica in sync, no broker briefly down, min ISR below RF
	noRacks bool
	// evenRacks: 1 to 3 racks of 3 brokers that keep their replicas each,
	// then brokers in any rack that are draining or long down.
	evenRacks bool
	// offline: replicas on live brokers may be on a failed log directory,
	// most of them for longer than the down timeout.
	offline bool
}

// gen draws a cluster and options.
func gen(t *rapid.T, sh shape) (ClusterState, Options) {
	st := ClusterState{Now: testNow}
	nb := rapid.IntRange(1, 8).Draw(t, "brokers")
	racks := 0
	if !sh.noRacks {
		racks = rapid.IntRange(0, 3).Draw(t, "racks")
	}
	alive := map[model.NodeID]bool{}
	kept := 0 // brokers 1..kept neither drain nor go down
	if sh.evenRacks {
		racks = rapid.IntRange(1, 3).Draw(t, "racks")
		kept = 3 * racks
		nb = kept + rapid.IntRange(0, 3).Draw(t, "leaving")
	}
	for i := 1; i <= nb; i++ {
		b := Broker{ID: model.NodeID(i), Alive: true}
		switch {
		case sh.evenRacks && i <= kept:
			b.Rack = string(rune('a' + i%racks))
		case racks > 0:
			b.Rack = string(rune('a' + rapid.IntRange(0, racks-1).Draw(t, "rack")))
		}
		health := rapid.IntRange(0, 9).Draw(t, "health")
		if i <= kept {
			health = 9
		}
		switch health {
		case 0:
			b.Draining = true
		case 1:
			b.Alive, b.DownSince = false, testNow.Add(-2*time.Hour)
		case 2:
			if !sh.healthy {
				b.Alive, b.DownSince = false, testNow.Add(-time.Minute)
			}
		}
		alive[b.ID] = b.Alive
		st.Brokers = append(st.Brokers, b)
	}
	// A skewed placement: replicas favour the low broker IDs, as after
	// brokers were added to a cluster.
	hot := rapid.IntRange(1, nb).Draw(t, "hot")
	np := rapid.IntRange(0, 40).Draw(t, "partitions")
	for i := range np {
		minRF := 1
		if sh.healthy {
			minRF = min(2, nb)
		}
		rf := rapid.IntRange(minRF, min(3, nb)).Draw(t, "rf")
		var reps []model.NodeID
		for len(reps) < rf {
			id := model.NodeID(1 + rapid.IntRange(0, hot-1).Draw(t, "replica"))
			if rapid.Bool().Draw(t, "spread") {
				id = model.NodeID(rapid.IntRange(1, nb).Draw(t, "replica"))
			}
			for slices.Contains(reps, id) {
				id = id%model.NodeID(nb) + 1
			}
			reps = append(reps, id)
		}
		p := Partition{TopicPartition: model.TopicPartition{Topic: string(rune('a' + i%3)), Partition: int32(i)},
			Replicas: reps, Leader: reps[0], Bytes: rapid.Int64Range(0, 1<<30).Draw(t, "bytes")}
		for _, r := range reps {
			if sh.offline && alive[r] && rapid.IntRange(0, 4).Draw(t, "offline") == 0 {
				since := testNow.Add(-2 * time.Hour)
				if !sh.healthy && rapid.Bool().Draw(t, "offlineLately") {
					since = testNow.Add(-time.Minute)
				}
				p.Offline = append(p.Offline, OfflineReplica{Broker: r, Since: since})
				continue // out of the ISR, as the controller takes it
			}
			if alive[r] && (sh.healthy || rapid.IntRange(0, 3).Draw(t, "lag") > 0) {
				p.ISR = append(p.ISR, r)
			}
		}
		if sh.healthy {
			p.MinISR = rapid.IntRange(1, max(rf-1, 1)).Draw(t, "minISR")
		} else {
			p.MinISR = rapid.IntRange(1, rf+1).Draw(t, "minISR")
		}
		st.Partitions = append(st.Partitions, p)
	}
	opts := Options{
		ReplicaSpread:      rapid.IntRange(0, 3).Draw(t, "replicaSpread"),
		LeaderSpread:       rapid.IntRange(0, 3).Draw(t, "leaderSpread"),
		BytesSpread:        rapid.SampledFrom([]float64{0, 0.1, 0.3, 1}).Draw(t, "bytesSpread"),
		MaxMoves:           rapid.IntRange(1, 20).Draw(t, "maxMoves"),
		MaxLeaderMoves:     rapid.IntRange(1, 50).Draw(t, "maxLeaderMoves"),
		DownTimeout:        30 * time.Minute,
		CountAddedReplicas: rapid.Bool().Draw(t, "countAdded"),
	}
	for _, p := range st.Partitions {
		if rapid.IntRange(0, 9).Draw(t, "inProgress") == 0 {
			opts.InProgress = append(opts.InProgress, p.TopicPartition)
		}
	}
	return st, opts
}

// evacuating says whether a broker's replicas must leave, by the rule of
// Options.DownTimeout and Broker.Draining.
func evacuating(b Broker, st ClusterState, opts Options) bool {
	return b.Draining || !b.Alive && !b.DownSince.IsZero() && st.Now.Sub(b.DownSince) >= opts.DownTimeout
}

// checkPlan checks one plan's moves against the state it was made for and
// returns the first broken rule.
func checkPlan(st ClusterState, opts Options, plan Plan) error {
	brokers := map[model.NodeID]Broker{}
	memberRacks := map[string]bool{}
	for _, b := range st.Brokers {
		brokers[b.ID] = b
		if !evacuating(b, st, opts) {
			memberRacks[b.Rack] = true
		}
	}
	parts := map[model.TopicPartition]Partition{}
	for _, p := range st.Partitions {
		parts[p.TopicPartition] = p
	}
	seen := map[model.TopicPartition]bool{}
	replicaMoves, leaderMoves := 0, 0
	for _, m := range plan.Moves {
		p, ok := parts[m.TopicPartition]
		switch {
		case !ok:
			return fmt.Errorf("%s: no such partition", m.TopicPartition)
		case seen[m.TopicPartition]:
			return fmt.Errorf("%s: moved twice", m.TopicPartition)
		case slices.Contains(opts.InProgress, m.TopicPartition):
			return fmt.Errorf("%s: already being reassigned", m.TopicPartition)
		case !slices.Equal(m.From, p.Replicas):
			return fmt.Errorf("%s: From %v is not the replicas %v", m.TopicPartition, m.From, p.Replicas)
		case len(m.To) != len(m.From) || m.Leader != m.To[0]:
			return fmt.Errorf("%s: To %v, leader %d", m.TopicPartition, m.To, m.Leader)
		}
		seen[m.TopicPartition] = true
		if m.Reason == "" {
			return fmt.Errorf("%s: no reason", m.TopicPartition)
		}
		// (1) The rack spread: over the racks of the brokers that keep
		// their replicas, no rack holds two more of To than another.
		// A partition already outside the spread may come back in steps,
		// none further out.
		for i, r := range m.To {
			if slices.Contains(m.To[:i], r) {
				return fmt.Errorf("%s: To %v repeats %d", m.TopicPartition, m.To, r)
			}
		}
		if skew := rackSkew(m.To, brokers, memberRacks); skew > 1 && skew > rackSkew(m.From, brokers, memberRacks) {
			return fmt.Errorf("%s: To %v breaks the rack spread (From %v)", m.TopicPartition, m.To, m.From)
		}
		if m.Kind == MoveLeader {
			leaderMoves++
			if !sameSet(m.From, m.To) || !slices.Contains(p.ISR, m.To[0]) || !brokers[m.To[0]].Alive {
				return fmt.Errorf("%s: leader move %v -> %v with ISR %v", m.TopicPartition, m.From, m.To, p.ISR)
			}
			continue
		}
		replicaMoves++
		// New replicas go to live brokers that keep their replicas.
		for _, r := range m.To {
			if b, ok := brokers[r]; !slices.Contains(m.From, r) && (!ok || !b.Alive || evacuating(b, st, opts)) {
				return fmt.Errorf("%s: To %v adds broker %d, which cannot take replicas", m.TopicPartition, m.To, r)
			}
		}
		// (2) Min ISR: a live in-sync replica leaves only if at least
		// MinISR live in-sync replicas stay (the new ones are not in sync).
		kept, leaving := 0, false
		if opts.CountAddedReplicas {
			for _, r := range m.To {
				if !slices.Contains(m.From, r) {
					kept++
				}
			}
		}
		for _, r := range p.ISR {
			if brokers[r].Alive {
				if slices.Contains(m.To, r) {
					kept++
				} else {
					leaving = true
				}
			}
		}
		if leaving && kept < max(p.MinISR, 1) {
			return fmt.Errorf("%s: %v -> %v leaves %d in sync of ISR %v, min ISR %d", m.TopicPartition, m.From, m.To, kept, p.ISR, p.MinISR)
		}
	}
	if replicaMoves > max(opts.MaxMoves-len(opts.InProgress), 0) {
		return fmt.Errorf("%d replica moves with %d in progress, max %d", replicaMoves, len(opts.InProgress), opts.MaxMoves)
	}
	if leaderMoves > opts.MaxLeaderMoves {
		return fmt.Errorf("%d leader moves, max %d", leaderMoves, opts.MaxLeaderMoves)
	}
	return nil
}

// rackSkew is how many more of replicas the fullest rack of racks holds
// than the emptiest.
func rackSkew(replicas []model.NodeID, brokers map[model.NodeID]Broker, racks map[string]bool) int {
	counts := map[string]int{}
	for r := range racks {
		counts[r] = 0
	}
	for _, r := range replicas {
		counts[brokers[r].Rack]++
	}
	return slices.Max(slices.Collect(maps.Values(counts))) - slices.Min(slices.Collect(maps.Values(counts)))
}

func sameSet(a, b []model.NodeID) bool {
	return slices.Equal(slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b)))
}

// maxRounds bounds the plans a cluster needs to converge: each replica
// moves a few times at most (off an evacuating broker, out of an over-full
// rack, for counts, for bytes), MaxMoves at a time, and leadership moves
// MaxLeaderMoves at a time.
func maxRounds(st ClusterState, opts Options) int {
	replicas := 0
	for _, p := range st.Partitions {
		replicas += len(p.Replicas)
	}
	return 10 + 4*replicas/opts.MaxMoves + 2*len(st.Partitions)/opts.MaxLeaderMoves
}

// converged plans and applies until a plan has no moves, checking each
// plan; it returns the last state and plan and the rounds it took.
func convergedState(t interface{ Fatalf(string, ...any) }, st ClusterState, opts Options) (ClusterState, Plan, int) {
	bound := maxRounds(st, opts)
	for round := 0; ; round++ {
		plan := Propose(st, opts)
		if err := checkPlan(st, opts, plan); err != nil {
			t.Fatalf("round %d: %v\n%s", round, err, Summary(plan))
		}
		if len(plan.Moves) == 0 && len(opts.InProgress) == 0 {
			return st, plan, round
		}
		if round == bound {
			t.Fatalf("no convergence in %d rounds; last plan:\n%s", bound, Summary(plan))
		}
		st = applyPlan(st, plan)
		opts.InProgress = nil // the reassignments in progress finished too
	}
}

// TestPlanRules: (1) rack spread, (2) min ISR, and the budget, on every
// plan of random clusters until they converge (3), and (6) determinism.
func TestPlanRules(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		st, opts := gen(t, shape{offline: rapid.Bool().Draw(t, "withOffline")})
		plan := Propose(st, opts)
		if again := Propose(st, opts); !reflect.DeepEqual(plan, again) {
			t.Fatalf("two plans of one state differ:\n%s\n%s", Summary(plan), Summary(again))
		}
		convergedState(t, st, opts)
	})
}

// TestDrainsWithRacks: on healthy clusters whose racks each have three
// brokers that stay, draining and long-down brokers end empty (4), and
// every partition within the rack spread.
func TestDrainsWithRacks(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		st, opts := gen(t, shape{healthy: true, evenRacks: true})
		final, plan, _ := convergedState(t, st, opts)
		for _, b := range plan.After {
			if evacuating(st.Brokers[int(b.Broker)-1], st, opts) && b.Replicas > 0 {
				t.Fatalf("broker %d is %s and keeps %d replicas:\n%s", b.Broker, b.State, b.Replicas, Summary(plan))
			}
		}
		check := Propose(final, opts)
		for _, p := range final.Partitions {
			if pl := newPlanner(final, opts); !pl.rackValid(p.Replicas) {
				t.Fatalf("%s %v breaks the rack spread:\n%s", p.TopicPartition, p.Replicas, Summary(check))
			}
		}
	})
}

// TestConvergesWithinSpreads: on healthy clusters without racks and with
// enough brokers, evacuating brokers end empty (4) and replica counts end
// within their spread (5).
func TestConvergesWithinSpreads(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		st, opts := gen(t, shape{healthy: true, noRacks: true})
		eligible := 0
		for _, b := range st.Brokers {
			if b.Alive && !b.Draining {
				eligible++
			}
		}
		for _, p := range st.Partitions {
			if len(p.Replicas) > eligible {
				t.Skip("not enough brokers")
			}
		}
		_, plan, _ := convergedState(t, st, opts)
		lo, hi := -1, 0
		for _, b := range plan.After {
			bs := st.Brokers[int(b.Broker)-1]
			switch {
			case evacuating(bs, st, opts) && b.Replicas > 0:
				t.Fatalf("broker %d is %s and keeps %d replicas:\n%s", b.Broker, b.State, b.Replicas, Summary(plan))
			case bs.Alive && !bs.Draining:
				if lo < 0 || b.Replicas < lo {
					lo = b.Replicas
				}
				hi = max(hi, b.Replicas)
			}
		}
		if hi-lo > max(opts.ReplicaSpread, 1) {
			t.Fatalf("replica counts %d..%d, spread %d:\n%s", lo, hi, opts.ReplicaSpread, Summary(plan))
		}
	})
}

// TestOfflineReplicasLeave: on healthy clusters without racks where every
// partition has brokers to spare, no replica stays on a failed log
// directory past the down timeout once the plans converge, and the
// broker whose directory failed may still take replicas.
func TestOfflineReplicasLeave(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		st, opts := gen(t, shape{healthy: true, noRacks: true, offline: true})
		eligible := 0
		for _, b := range st.Brokers {
			if !evacuating(b, st, opts) && b.Alive {
				eligible++
			}
		}
		for _, p := range st.Partitions {
			if 2*len(p.Replicas) > eligible {
				t.Skip("not enough brokers")
			}
		}
		final, plan, _ := convergedState(t, st, opts)
		for _, p := range final.Partitions {
			for _, o := range p.Offline {
				if slices.Contains(p.Replicas, o.Broker) {
					t.Fatalf("%s %v keeps broker %d's replica on a failed directory:\n%s", p.TopicPartition, p.Replicas, o.Broker, Summary(plan))
				}
			}
		}
	})
}

// TestConvergenceFigures measures, over random clusters of both shapes,
// how many plans convergence takes and how often the spreads the local
// search cannot promise (leaders, bytes) end outside their options; go
// test -v prints them (docs/DESIGN-balance.md quotes them).
func TestConvergenceFigures(t *testing.T) {
	for _, sh := range []shape{{}, {healthy: true, noRacks: true}, {healthy: true, evenRacks: true}} {
		var runs, leaderMiss, bytesMiss int
		rounds := map[int]int{}
		rapid.Check(t, func(rt *rapid.T) {
			st, opts := gen(rt, sh)
			_, plan, n := convergedState(rt, st, opts)
			runs++
			rounds[n]++
			for _, note := range plan.Notes {
				switch {
				case strings.HasPrefix(note, "preferred leaders differ"):
					leaderMiss++
				case strings.HasPrefix(note, "bytes differ"):
					bytesMiss++
				}
			}
		})
		keys := slices.Sorted(maps.Keys(rounds))
		t.Logf("shape %+v: %d clusters, %d needed no move; rounds to converge: median %d, p90 %d, max %d; leader spread missed %d, bytes spread missed %d",
			sh, runs, rounds[0], quantile(rounds, 0.5), quantile(rounds, 0.9), keys[len(keys)-1], leaderMiss, bytesMiss)
	}
	// A cluster of 12 brokers in three racks, 1000 partitions of RF 3
	// over 11 of them (the 12th just added), broker 2 draining.
	opts := DefaultOptions()
	_, plan, n := convergedState(t, benchCluster(12, 1000, false), opts)
	t.Logf("12 brokers, 1000 partitions, one added, one draining: %d rounds of at most %d moves; final loads:\n%s", n, opts.MaxMoves, Summary(plan))
}

// quantile is the smallest key of a histogram at or below which q of its
// counts lie.
func quantile(hist map[int]int, q float64) int {
	total := 0
	for _, n := range hist {
		total += n
	}
	seen := 0
	for _, k := range slices.Sorted(maps.Keys(hist)) {
		seen += hist[k]
		if float64(seen) >= q*float64(total) {
			return k
		}
	}
	return 0
}

// TestProposeTakesAnyState: whatever the state holds (replicas or ISR
// members that are not registered brokers, empty or repeated replica
// lists, odd min ISRs, brokers or partitions listed twice), Propose
// answers without panicking.
func TestProposeTakesAnyState(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		id := rapid.Custom(func(t *rapid.T) model.NodeID { return model.NodeID(rapid.IntRange(-1, 6).Draw(t, "id")) })
		st := ClusterState{Now: testNow}
		for _, b := range rapid.SliceOfN(id, 0, 6).Draw(t, "brokers") {
			st.Brokers = append(st.Brokers, Broker{ID: b, Rack: rapid.SampledFrom([]string{"", "a", "b"}).Draw(t, "rack"),
				Alive: rapid.Bool().Draw(t, "alive"), Draining: rapid.Bool().Draw(t, "draining"),
				DownSince: testNow.Add(-time.Duration(rapid.IntRange(0, 3).Draw(t, "down")) * time.Hour)})
		}
		for i := range rapid.IntRange(0, 12).Draw(t, "partitions") {
			p := Partition{TopicPartition: model.TopicPartition{Topic: "t", Partition: int32(i % 5)},
				Replicas: rapid.SliceOfN(id, 0, 4).Draw(t, "replicas"), ISR: rapid.SliceOfN(id, 0, 4).Draw(t, "isr"),
				MinISR: rapid.IntRange(-1, 4).Draw(t, "minISR"), Bytes: rapid.Int64Range(-10, 1000).Draw(t, "bytes")}
			st.Partitions = append(st.Partitions, p)
		}
		opts := Options{ReplicaSpread: rapid.IntRange(-1, 2).Draw(t, "spread"), LeaderSpread: rapid.IntRange(-1, 2).Draw(t, "leaderSpread"),
			BytesSpread: 0.1, MaxMoves: rapid.IntRange(-1, 5).Draw(t, "maxMoves"), MaxLeaderMoves: rapid.IntRange(-1, 5).Draw(t, "maxLeaderMoves"),
			DownTimeout: time.Hour}
		plan := Propose(st, opts)
		_ = Summary(plan)
	})
}

package controller

import (
	"maps"
	"slices"
	"strconv"
	"testing"

	"github.com/samsa-io/samsa/internal/metadata"
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
			got := assignReplicas(c.brokers, nil, c.first, c.n, c.rf, c.p)
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
	got := assignReplicas(brokers, nil, 0, 400, 3, placement{start: 1, shift: 2})
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

func TestRackAlternated(t *testing.T) {
	racks := map[model.NodeID]string{1: "a", 2: "a", 3: "b", 4: "b", 5: "c", 6: "c", 7: ""}
	cases := []struct {
		name    string
		brokers []model.NodeID
		racks   map[model.NodeID]string
		want    []model.NodeID
		racksN  int
	}{
		{"no racks", []model.NodeID{1, 2, 3}, nil, []model.NodeID{1, 2, 3}, 1},
		{"three racks of two", []model.NodeID{1, 2, 3, 4, 5, 6}, racks, []model.NodeID{1, 3, 5, 2, 4, 6}, 3},
		{"uneven racks", []model.NodeID{1, 2, 3, 5}, racks, []model.NodeID{1, 3, 5, 2}, 3},
		// A broker without broker.rack is a rack of its own, "" first.
		{"one broker without a rack", []model.NodeID{1, 2, 3, 7}, racks, []model.NodeID{7, 1, 3, 2}, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, n := rackAlternated(c.brokers, c.racks)
			if !slices.Equal(got, c.want) || n != c.racksN {
				t.Errorf("got %v (%d racks), want %v (%d)", got, n, c.want, c.racksN)
			}
		})
	}
}

// TestAssignReplicasRackAware: with racks set every partition spans as
// many racks as its replication factor allows, and leaders and replicas
// stay even over brokers (within one) for every start and shift.
func TestAssignReplicasRackAware(t *testing.T) {
	cases := []struct {
		name  string
		racks map[model.NodeID]string
		rf    int
		parts int32
	}{
		{"3 racks x 2 brokers, rf 3", map[model.NodeID]string{1: "a", 2: "a", 3: "b", 4: "b", 5: "c", 6: "c"}, 3, 60},
		{"3 racks x 2 brokers, rf 3, 7 partitions", map[model.NodeID]string{1: "a", 2: "a", 3: "b", 4: "b", 5: "c", 6: "c"}, 3, 7},
		{"3 racks x 2 brokers, rf 2", map[model.NodeID]string{1: "a", 2: "a", 3: "b", 4: "b", 5: "c", 6: "c"}, 2, 60},
		{"2 racks x 3 brokers, rf 3", map[model.NodeID]string{1: "a", 2: "a", 3: "a", 4: "b", 5: "b", 6: "b"}, 3, 60},
		{"3 racks x 3 brokers, rf 3", map[model.NodeID]string{1: "a", 2: "a", 3: "a", 4: "b", 5: "b", 6: "b", 7: "c", 8: "c", 9: "c"}, 3, 90},
		{"ids interleaved across racks", map[model.NodeID]string{1: "a", 2: "b", 3: "c", 4: "a", 5: "b", 6: "c"}, 3, 30},
	}
	for _, c := range cases {
		brokers := slices.Sorted(maps.Keys(c.racks))
		numRacks := len(slices.Compact(slices.Sorted(maps.Values(c.racks))))
		for start := range len(brokers) {
			for shift := range len(brokers) {
				got := assignReplicas(brokers, c.racks, 0, c.parts, c.rf, placement{start: start, shift: shift})
				leads, holds := map[model.NodeID]int{}, map[model.NodeID]int{}
				for i, r := range got {
					leads[r[0]]++
					spanned := map[string]bool{}
					for j, b := range r {
						holds[b]++
						spanned[c.racks[b]] = true
						if slices.Contains(r[:j], b) {
							t.Fatalf("%s: partition %d has broker %d twice: %v", c.name, i, b, r)
						}
					}
					if len(r) != c.rf || len(spanned) != min(c.rf, numRacks) {
						t.Fatalf("%s start %d shift %d: partition %d replicas %v span %d racks", c.name, start, shift, i, r, len(spanned))
					}
				}
				if lo, hi := spread(brokers, leads); hi-lo > 1 {
					t.Errorf("%s start %d shift %d: leaders per broker %v", c.name, start, shift, leads)
				}
				if lo, hi := spread(brokers, holds); hi-lo > 1 {
					t.Errorf("%s start %d shift %d: replicas per broker %v", c.name, start, shift, holds)
				}
			}
		}
	}
}

func spread(brokers []model.NodeID, counts map[model.NodeID]int) (lo, hi int) {
	lo, hi = counts[brokers[0]], counts[brokers[0]]
	for _, b := range brokers {
		lo, hi = min(lo, counts[b]), max(hi, counts[b])
	}
	return lo, hi
}

// TestCreateTopicsPlacesAcrossRacks: CreateTopics and CreatePartitions
// place by the racks of the registered brokers.
func TestCreateTopicsPlacesAcrossRacks(t *testing.T) {
	cfg := testConfig(t.TempDir())
	cfg.Rack = "a"
	c := open(t, cfg)
	racks := map[model.NodeID]string{1: "a", 2: "a", 3: "b", 4: "b", 5: "c", 6: "c"}
	var recs []metadata.Record
	for id := model.NodeID(2); id <= 6; id++ {
		recs = append(recs, metadata.BrokerRegistration{NodeID: id, Incarnation: "x", Rack: racks[id]})
	}
	c.writeMu.Lock()
	err := c.proposeLocked(ctx(t), recs)
	c.writeMu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if res := createOne(t, c, CreateTopic{Name: "racked", NumPartitions: 12, ReplicationFactor: 3}); res.ErrorCode != 0 {
		t.Fatalf("create: %s", res.ErrorMessage)
	}
	if res := c.CreatePartitions(ctx(t), []CreatePartitions{{Topic: "racked", Count: 18}}, false); res[0].ErrorCode != 0 {
		t.Fatalf("create partitions: %s", res[0].ErrorMessage)
	}
	top, _ := c.Image().Topic("racked")
	for _, p := range top.Partitions {
		spanned := map[string]bool{}
		for _, b := range p.Replicas {
			spanned[racks[b]] = true
		}
		if len(spanned) != 3 {
			t.Errorf("partition %d replicas %v span %d racks", p.Partition, p.Replicas, len(spanned))
		}
	}
}

// TestCreatePartitionsGivesEveryRackAReplicaFirst: partitions added to a
// topic (CreatePartitions, kafka-topics.sh --alter --partitions) are placed
// as new topics are: with uneven racks (four brokers in a, one in b, two
// without broker.rack, which count as a rack of their own), every rack gets
// a replica before any gets two, for replication factors below, at and
// above the number of racks.
func TestCreatePartitionsGivesEveryRackAReplicaFirst(t *testing.T) {
	cfg := testConfig(t.TempDir())
	cfg.Rack = "a"
	c := open(t, cfg)
	racks := map[model.NodeID]string{1: "a", 2: "a", 3: "a", 4: "a", 5: "b", 6: "", 7: ""}
	var recs []metadata.Record
	for id := model.NodeID(2); id <= 7; id++ {
		recs = append(recs, metadata.BrokerRegistration{NodeID: id, Incarnation: "x", Rack: racks[id]})
	}
	c.writeMu.Lock()
	err := c.proposeLocked(ctx(t), recs)
	c.writeMu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	const numRacks = 3
	for _, rf := range []int16{2, 3, 5} {
		name := "grow-" + strconv.Itoa(int(rf))
		if res := createOne(t, c, CreateTopic{Name: name, NumPartitions: 1, ReplicationFactor: rf}); res.ErrorCode != 0 {
			t.Fatalf("create %s: %s", name, res.ErrorMessage)
		}
		if res := c.CreatePartitions(ctx(t), []CreatePartitions{{Topic: name, Count: 40}}, false); res[0].ErrorCode != 0 {
			t.Fatalf("create partitions of %s: %s", name, res[0].ErrorMessage)
		}
		top, _ := c.Image().Topic(name)
		for _, p := range top.Partitions[1:] {
			per := map[string]int{}
			for _, b := range p.Replicas {
				per[racks[b]]++
			}
			// Every rack has one before any has two: two in a rack only
			// once all three racks have one.
			for rack, n := range per {
				if n > 1 && len(per) < numRacks {
					t.Errorf("%s-%d: replicas %v: rack %q holds %d while only %d racks have one", name, p.Partition, p.Replicas, rack, n, len(per))
				}
			}
			if want := min(int(rf), numRacks); len(per) != want {
				t.Errorf("%s-%d: replicas %v span %d racks, want %d", name, p.Partition, p.Replicas, len(per), want)
			}
		}
	}
}

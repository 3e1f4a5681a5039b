package controller

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/clock"
	"github.com/samsa-io/samsa/internal/metadata"
	"github.com/samsa-io/samsa/internal/model"
)

func TestRebalanceLeaders(t *testing.T) {
	const none = -1
	cases := []struct {
		name    string
		percent int
		fenced  []model.NodeID
		parts   []part
		want    string // moves as partition:leader, then the brokers over the percentage
	}{
		{"balanced", 10, nil, []part{
			{ids(1, 2, 3), ids(1, 2, 3), 1}, {ids(2, 3, 1), ids(1, 2, 3), 2}, {ids(3, 1, 2), ids(1, 2, 3), 3},
		}, "moves [] over []"},
		{"one of one led elsewhere", 10, nil, []part{
			{ids(1, 2, 3), ids(1, 2, 3), 2}, {ids(2, 3, 1), ids(1, 2, 3), 2},
		}, "moves [0:1] over [broker 1 leads 0 of the 1 partitions that prefer it]"},
		// Broker 1 prefers ten partitions and leads nine: 10% is not above
		// 10%, so nothing moves; at 9% it is.
		{"at the percentage", 10, nil, tenPreferring1(1), "moves [] over []"},
		{"above the percentage", 9, nil, tenPreferring1(1), "moves [9:1] over [broker 1 leads 9 of the 10 partitions that prefer it]"},
		{"two led elsewhere", 10, nil, tenPreferring1(2), "moves [8:1 9:1] over [broker 1 leads 8 of the 10 partitions that prefer it]"},
		// Only partitions whose preferred replica is in sync move; a
		// leaderless one counts as led elsewhere.
		{"out of sync or leaderless", 10, nil, []part{
			{ids(1, 2, 3), ids(2, 3), 2}, {ids(1, 2, 3), ids(1, 3), 3}, {ids(1, 2, 3), ids(1), none},
		}, "moves [1:1 2:1] over [broker 1 leads 0 of the 3 partitions that prefer it]"},
		{"preferred replica fenced", 10, ids(1), []part{
			{ids(1, 2, 3), ids(1, 2, 3), 2},
		}, "moves [] over [broker 1 leads 0 of the 1 partitions that prefer it]"},
		{"several brokers", 10, nil, []part{
			{ids(1, 2, 3), ids(1, 2, 3), 2}, {ids(2, 3, 1), ids(1, 2, 3), 3}, {ids(3, 1, 2), ids(1, 2, 3), 3},
		}, "moves [0:1 1:2] over [broker 1 leads 0 of the 1 partitions that prefer it broker 2 leads 0 of the 1 partitions that prefer it]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			img := partitionsImage(t, 3, c.fenced, c.parts...)
			moves, over, more := rebalanceLeaders(img, c.percent, unfencedIn(img))
			if more {
				t.Error("moves left over")
			}
			var ms []string
			for _, m := range moves {
				if m.record.ISR != nil || m.record.Replicas != nil {
					t.Errorf("a rebalance changes only leaders: %+v", m.record)
				}
				ms = append(ms, fmt.Sprintf("%d:%d", m.record.Partition, *m.record.Leader))
			}
			var os []string
			for _, o := range over {
				os = append(os, o.String())
			}
			got := fmt.Sprintf("moves [%s] over [%s]", strings.Join(ms, " "), strings.Join(os, " "))
			if got != c.want {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
		})
	}
}

// tenPreferring1 is ten partitions that prefer broker 1, the last
// elsewhere of them led by broker 2.
func tenPreferring1(elsewhere int) []part {
	var out []part
	for i := range 10 {
		leader := model.NodeID(1)
		if i >= 10-elsewhere {
			leader = 2
		}
		out = append(out, part{ids(1, 2, 3), ids(1, 2, 3), leader})
	}
	return out
}

// TestRebalanceLeadersBoundsTheBatch: past maxBalanceMoves the rest is
// left for the next pass, which the schedule runs at once.
func TestRebalanceLeadersBoundsTheBatch(t *testing.T) {
	parts := make([]part, maxBalanceMoves+5)
	for i := range parts {
		parts[i] = part{ids(1, 2, 3), ids(1, 2, 3), 2}
	}
	img := partitionsImage(t, 3, nil, parts...)
	moves, _, more := rebalanceLeaders(img, 10, unfencedIn(img))
	if len(moves) != maxBalanceMoves || !more {
		t.Fatalf("%d moves, more %v", len(moves), more)
	}
	s := balanceSchedule{interval: time.Minute}
	now := time.Unix(0, 0)
	s.due(now, true)
	s.rerun(now)
	if !s.due(now.Add(time.Millisecond), true) {
		t.Error("a rerun is not due at once")
	}
}

func TestBalanceSchedule(t *testing.T) {
	t0 := time.Unix(1000, 0)
	s := balanceSchedule{interval: 10 * time.Second}
	steps := []struct {
		at     time.Duration
		active bool
		due    bool
	}{
		{0, false, false},
		{1 * time.Second, true, false}, // became active: a full interval first
		{10 * time.Second, true, false},
		{11 * time.Second, true, true},
		{12 * time.Second, true, false},
		{21 * time.Second, true, true},
		{25 * time.Second, false, false}, // lost leadership
		{26 * time.Second, true, false},  // active again: wait again
		{35 * time.Second, true, false},
		{36 * time.Second, true, true},
	}
	for _, st := range steps {
		if got := s.due(t0.Add(st.at), st.active); got != st.due {
			t.Errorf("at %v active %v: due %v, want %v", st.at, st.active, got, st.due)
		}
	}
}

// TestAutoRebalanceOnTheControllersClock: the active controller moves a
// partition back to its preferred replica when leader.imbalance's interval
// has passed on its clock, and not before; with
// auto.leader.rebalance.enable=false never.
func TestAutoRebalanceOnTheControllersClock(t *testing.T) {
	for _, enabled := range []bool{true, false} {
		t.Run(fmt.Sprint("enabled=", enabled), func(t *testing.T) {
			clk := clock.NewManual(time.Unix(1000, 0))
			cfg := testConfig(t.TempDir())
			cfg.Clock = clk
			cfg.Broker = brokerValues(t, map[string]string{
				"leader.imbalance.check.interval.seconds": "60", "auto.leader.rebalance.enable": fmt.Sprint(enabled)})
			c := open(t, cfg)
			registerBrokers(t, c, 2, 3)
			if res := createOne(t, c, CreateTopic{Name: "t", NumPartitions: -1, ReplicationFactor: -1,
				Assignments: map[int32][]int32{0: {1, 2, 3}}}); res.ErrorCode != 0 {
				t.Fatal(res.ErrorMessage)
			}
			top, _ := c.Image().Topic("t")
			two := model.NodeID(2)
			c.writeMu.Lock()
			err := c.proposeLocked(ctx(t), []metadata.Record{metadata.PartitionChange{TopicID: top.ID, Partition: 0, Leader: &two}})
			c.writeMu.Unlock()
			if err != nil {
				t.Fatal(err)
			}
			// The wall ticker polls every 100 ms here: several polls, and
			// the clock has not moved.
			time.Sleep(300 * time.Millisecond)
			if p := c0(c.Image()); p.Leader != 2 {
				t.Fatalf("moved to %d before the interval passed", p.Leader)
			}
			deadline := time.Now().Add(3 * time.Second)
			for c0(c.Image()).Leader == 2 && time.Now().Before(deadline) {
				clk.Advance(61 * time.Second)
				ch := c.Changed()
				select {
				case <-ch:
				case <-time.After(150 * time.Millisecond):
				}
			}
			if got, want := c0(c.Image()).Leader, map[bool]model.NodeID{true: 1, false: 2}[enabled]; got != want {
				t.Fatalf("leader %d, want %d", got, want)
			}
		})
	}
}

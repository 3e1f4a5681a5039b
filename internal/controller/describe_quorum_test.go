package controller

import (
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/clock"
	"github.com/samsa-io/samsa/internal/metadata"
)

func TestNextProgress(t *testing.T) {
	t0 := time.Unix(1000, 0)
	t1, t2 := t0.Add(time.Second), t0.Add(2*time.Second)
	for _, c := range []struct {
		name         string
		prev         progress
		known        bool
		applied, hw  int64
		wantCaughtUp time.Time
	}{
		{name: "first report, caught up", applied: 7, hw: 7, wantCaughtUp: t2},
		{name: "first report, behind", applied: 5, hw: 7},
		{name: "behind now, but past the previous high watermark: caught up then",
			prev: progress{applied: 3, heard: t1, hwAtHeard: 5}, known: true, applied: 5, hw: 7, wantCaughtUp: t1},
		{name: "behind what the leader had at the previous report too",
			prev: progress{applied: 3, heard: t1, caughtUp: t0, hwAtHeard: 6}, known: true, applied: 5, hw: 7, wantCaughtUp: t0},
		{name: "caught up again",
			prev: progress{applied: 3, heard: t1, caughtUp: t0, hwAtHeard: 6}, known: true, applied: 9, hw: 9, wantCaughtUp: t2},
	} {
		got := nextProgress(c.prev, c.known, c.applied, c.hw, t2)
		if got.applied != c.applied || !got.heard.Equal(t2) || got.hwAtHeard != c.hw || !got.caughtUp.Equal(c.wantCaughtUp) {
			t.Errorf("%s: got %+v, want caught up at %v", c.name, got, c.wantCaughtUp)
		}
	}
}

// TestDescribeQuorumReportsHeartbeats: the single controller is the one
// voter, at its own image's offset; a registered broker outside the voters
// is an observer, unknown until it heartbeats, then at the offset it
// reported, heard when the heartbeat came.
func TestDescribeQuorumReportsHeartbeats(t *testing.T) {
	clk := clock.NewManual(time.Unix(5000, 0))
	cfg := testConfig(t.TempDir())
	cfg.Clock = clk
	c := open(t, cfg)
	epoch, refused, msg := c.RegisterBroker(ctx(t), Registration{NodeID: 2, ClusterID: c.Image().ClusterID(), Incarnation: "i2",
		Endpoints: []metadata.Endpoint{{Name: "PLAINTEXT", Host: "h2", Port: 9092, SecurityProtocol: "PLAINTEXT"}}, Features: metadata.SupportedFeatures()})
	if refused != nil {
		t.Fatalf("register: %v %s", refused, msg)
	}
	st, err := c.DescribeQuorum()
	if err != nil {
		t.Fatal(err)
	}
	hw := c.Image().Offset()
	if st.LeaderID != 1 || st.LeaderEpoch < 1 || st.HighWatermark != hw {
		t.Fatalf("quorum %+v, want leader 1 at high watermark %d", st, hw)
	}
	if len(st.Voters) != 1 || st.Voters[0].NodeID != 1 || st.Voters[0].LogEndOffset != hw || !st.Voters[0].LastFetch.Equal(clk.Now()) {
		t.Fatalf("voters %+v", st.Voters)
	}
	if len(st.Observers) != 1 || st.Observers[0] != (ReplicaState{NodeID: 2, LogEndOffset: -1}) {
		t.Fatalf("observers before a heartbeat %+v", st.Observers)
	}

	clk.Advance(time.Second)
	heardAt := clk.Now()
	if res := c.BrokerHeartbeat(ctx(t), Heartbeat{NodeID: 2, Epoch: epoch, AppliedOffset: epoch - 1}); res.Err != nil {
		t.Fatal(res.Err)
	}
	clk.Advance(time.Second)
	st, err = c.DescribeQuorum()
	if err != nil {
		t.Fatal(err)
	}
	want := ReplicaState{NodeID: 2, LogEndOffset: epoch - 1, LastFetch: heardAt}
	if len(st.Observers) != 1 || st.Observers[0] != want {
		t.Fatalf("observers after a heartbeat behind: %+v, want %+v", st.Observers, want)
	}
	// Caught up: the heartbeat unfences it, a new batch, so its report is
	// behind the new high watermark but at the one of its last report.
	if res := c.BrokerHeartbeat(ctx(t), Heartbeat{NodeID: 2, Epoch: epoch, AppliedOffset: c.Image().Offset()}); res.Err != nil || res.IsFenced {
		t.Fatalf("heartbeat %+v", res)
	}
	st, _ = c.DescribeQuorum()
	if o := st.Observers[0]; o.LogEndOffset >= st.HighWatermark || !o.LastCaughtUp.Equal(clk.Now()) {
		t.Fatalf("after the unfencing heartbeat: %+v, high watermark %d", o, st.HighWatermark)
	}
}

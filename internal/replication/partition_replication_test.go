package replication

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/record"
	"github.com/samsa-io/samsa/internal/storage"
)

// These tests run a partition's replicas in one process over real logs
// (testCluster): the leader's answers to follower fetches, the followers'
// appends and truncations, and what the high watermark and acks=all make
// of them.

func mustFetch(t *testing.T, c *testCluster, id int32, maxBytes int32) string {
	t.Helper()
	desc, _, err := c.fetchOnce(id, maxBytes)
	if err != nil {
		t.Fatalf("replica %d: %s: %v", id, desc, err)
	}
	return desc
}

func mustProduce(t *testing.T, c *testCluster, id int32, n int) (int64, int64) {
	t.Helper()
	first, last, err := c.produce(id, n)
	if err != nil {
		t.Fatalf("produce on %d: %v", id, err)
	}
	return first, last
}

func wantHW(t *testing.T, c *testCluster, want map[int32]int64) {
	t.Helper()
	for id, hw := range want {
		if got := c.parts[id].HighWatermark(); got != hw {
			t.Errorf("replica %d: high watermark %d, want %d (%s)", id, got, hw, c.describe(id))
		}
	}
}

// waitResult runs WaitCommitted in the background; the channel gets its
// answer.
func waitResult(p *Partition, ctx context.Context, offset int64, minISR int) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- p.WaitCommitted(ctx, offset, minISR) }()
	return ch
}

func receive(t *testing.T, ch <-chan error) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(10 * time.Second): // a failsafe, not a wait for the event
		t.Fatal("WaitCommitted did not return")
		return nil
	}
}

func TestHighWatermarkIsSmallestLogEndOverISR(t *testing.T) {
	c := newTestCluster(t, []int32{1, 2, 3}, false)
	tr := c.elect(1, []int32{1, 2, 3})
	if tr[1] != BecameLeader || tr[2] != BecameFollower || tr[3] != BecameFollower {
		t.Fatalf("transitions %v", tr)
	}
	mustProduce(t, c, 1, 5)
	wantHW(t, c, map[int32]int64{1: 0})
	c.catchUp(2)
	// Replica 3 has not fetched: the leader does not know its log end.
	wantHW(t, c, map[int32]int64{1: 0, 2: 0})
	mustFetch(t, c, 3, 1) // one batch: offset 0
	mustFetch(t, c, 3, 1) // reports 1, gets offset 1
	wantHW(t, c, map[int32]int64{1: 1, 3: 1})
	mustFetch(t, c, 3, 1) // reports 2
	wantHW(t, c, map[int32]int64{1: 2, 3: 2})
	// A follower's high watermark is the leader's as of its last fetch.
	mustFetch(t, c, 2, 1<<20)
	wantHW(t, c, map[int32]int64{2: 2})
	c.catchUp(3)
	c.catchUp(2)
	wantHW(t, c, map[int32]int64{1: 5, 2: 5, 3: 5})
	for _, id := range []int32{2, 3} {
		if d := c.sameLogs(1, id); d != "" {
			t.Errorf("replicas 1 and %d: %s", id, d)
		}
	}
}

func TestWaitCommittedWaitsForTheFollowers(t *testing.T) {
	c := newTestCluster(t, []int32{1, 2}, false)
	c.elect(1, []int32{1, 2})
	_, last := mustProduce(t, c, 1, 3)
	done := waitResult(c.parts[1], context.Background(), last, 2)
	mustFetch(t, c, 2, 1<<20) // gets the records, reports offset 0
	if hw := c.parts[1].HighWatermark(); hw > last {
		t.Fatalf("high watermark %d before the follower reported its end", hw)
	}
	select {
	case err := <-done:
		t.Fatalf("WaitCommitted returned %v before the follower had the records", err)
	default:
	}
	mustFetch(t, c, 2, 1<<20) // reports offset 3
	if err := receive(t, done); err != nil {
		t.Fatalf("WaitCommitted: %v", err)
	}
	// A timeout is the context's error.
	_, last = mustProduce(t, c, 1, 1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.parts[1].WaitCommitted(ctx, last, 2); !errors.Is(err, context.Canceled) {
		t.Fatalf("WaitCommitted with a done context: %v", err)
	}
}

func TestLaggingFollowerLeavesAndRejoinsTheISR(t *testing.T) {
	c := newTestCluster(t, []int32{1, 2, 3}, false)
	c.elect(1, []int32{1, 2, 3})
	mustProduce(t, c, 1, 4)
	c.catchUp(2)
	c.catchUp(3)
	mustProduce(t, c, 1, 2)
	c.now = c.now.Add(6 * time.Second)
	c.catchUp(2) // replica 3 stops fetching
	c.parts[1].Tick(c.now)
	if p := c.takeProposals(); len(p) != 0 {
		t.Fatalf("proposals within the lag time: %v", p)
	}
	c.now = c.now.Add(5 * time.Second) // 11s since 3 last caught up
	c.parts[1].Tick(c.now)
	props := c.takeProposals()
	if len(props) != 1 || !slices.Equal(props[0].isr, []int32{1, 2}) {
		t.Fatalf("proposals after the lag time: %v", props)
	}
	// In flight, the high watermark still waits for replica 3.
	wantHW(t, c, map[int32]int64{1: 4})
	if !c.commit(props[0]) {
		t.Fatal("the controller refused the shrink")
	}
	wantHW(t, c, map[int32]int64{1: 6})
	if n := c.parts[1].ISRSize(); n != 2 {
		t.Fatalf("ISR size %d after the shrink", n)
	}
	// A follower's high watermark is the leader's only as far as its own
	// log goes.
	mustFetch(t, c, 3, 1) // gets offset 4; the leader's is 6
	wantHW(t, c, map[int32]int64{3: 5})
	// Replica 3 catches up and is proposed back; this time the answer to
	// the AlterPartition arrives before the metadata image.
	c.catchUp(3)
	props = c.takeProposals()
	if len(props) != 1 || !slices.Equal(props[0].isr, []int32{1, 2, 3}) {
		t.Fatalf("proposals once caught up: %v", props)
	}
	w := NewWaiter([]*Partition{c.parts[1]})
	defer w.Done()
	c.parts[1].ISRCommitted(props[0].leaderEpoch, props[0].partitionEpoch+1, props[0].isr)
	wantWoken(t, w, "the AlterPartition answer")
	if n := c.parts[1].ISRSize(); n != 3 {
		t.Fatalf("ISR size %d after the expansion", n)
	}
	c.ctl.ISR, c.ctl.PartitionEpoch = props[0].isr, props[0].partitionEpoch+1
	if tr := c.deliver(); tr[1] != Unchanged {
		t.Fatalf("the image of the committed ISR: %v", tr)
	}
	// A stale answer (an older partition epoch) changes nothing.
	c.parts[1].ISRCommitted(props[0].leaderEpoch, props[0].partitionEpoch, []int32{1})
	if n := c.parts[1].ISRSize(); n != 3 {
		t.Fatalf("ISR size %d after a stale answer", n)
	}
}

// An expansion in flight counts its new member for the high watermark
// until an answer or the metadata ends it. A reassignment completed by the
// expansion (NEW_LEADER_ELECTED) leaves it in flight on the old leader
// (internal/broker's proposeISR): the new member leads now and fetches no
// more, so followers that still fetch from the old leader cannot let it
// acknowledge what the new leader never got.
func TestExpansionInFlightHoldsTheHighWatermark(t *testing.T) {
	c := newTestCluster(t, []int32{1, 2, 3}, false)
	c.elect(1, []int32{1, 2})
	mustProduce(t, c, 1, 2)
	c.catchUp(2)
	c.catchUp(3) // replica 3 joins: proposed, not yet answered
	props := c.takeProposals()
	if len(props) != 1 || !slices.Equal(props[0].isr, []int32{1, 2, 3}) {
		t.Fatalf("proposals once 3 caught up: %v", props)
	}
	// Replica 3 stops fetching (it leads elsewhere now); 2 keeps fetching.
	mustProduce(t, c, 1, 3)
	c.catchUp(2)
	wantHW(t, c, map[int32]int64{1: 2})
	// Dropping the proposal, as a refusal does, counts the old ISR again.
	c.parts[1].AlterPartitionFailed(props[0].leaderEpoch, props[0].partitionEpoch, props[0].isr)
	c.catchUp(2)
	wantHW(t, c, map[int32]int64{1: 5})
}

// A refusal that answers an older proposal leaves the newer one in
// flight: an expansion proposed, settled by a metadata change (a
// reassignment's step moved the partition epoch), proposed again at the
// new epoch; the first proposal's refusal (INVALID_UPDATE_VERSION, or
// INELIGIBLE_REPLICA from a controller still on the old epoch) comes last.
// Dropping the second proposal would count the high watermark without
// replica 3, which the controller may have made in sync and leader (the
// grow test lost acknowledged records this way).
func TestStaleRefusalKeepsTheNewerProposal(t *testing.T) {
	c := newTestCluster(t, []int32{1, 2, 3}, false)
	c.elect(1, []int32{1, 2})
	mustProduce(t, c, 1, 2)
	c.catchUp(2)
	c.catchUp(3)
	first := c.takeProposals()
	if len(first) != 1 || !slices.Equal(first[0].isr, []int32{1, 2, 3}) {
		t.Fatalf("proposals once 3 caught up: %v", first)
	}
	c.ctl.PartitionEpoch++ // another change of the partition, not this proposal
	c.deliver()
	c.catchUp(3)
	second := c.takeProposals()
	if len(second) != 1 || second[0].partitionEpoch != first[0].partitionEpoch+1 {
		t.Fatalf("proposals after the metadata settled the first: %v", second)
	}
	c.parts[1].AlterPartitionFailed(first[0].leaderEpoch, first[0].partitionEpoch, first[0].isr)
	if !c.parts[1].ProposalInFlight(second[0].leaderEpoch, second[0].partitionEpoch, second[0].isr) {
		t.Fatal("the first proposal's refusal dropped the second")
	}
	if c.parts[1].ProposalInFlight(first[0].leaderEpoch, first[0].partitionEpoch, first[0].isr) {
		t.Fatal("the settled first proposal counts as in flight")
	}
	// Replica 3 stops fetching; the high watermark waits for it.
	mustProduce(t, c, 1, 3)
	c.catchUp(2)
	wantHW(t, c, map[int32]int64{1: 2})
}

func TestRefusedProposalIsMadeAgain(t *testing.T) {
	c := newTestCluster(t, []int32{1, 2}, false)
	c.elect(1, []int32{1, 2})
	c.now = c.now.Add(11 * time.Second)
	c.parts[1].Tick(c.now)
	props := c.takeProposals()
	if len(props) != 1 {
		t.Fatalf("proposals: %v", props)
	}
	c.parts[1].Tick(c.now)
	if p := c.takeProposals(); len(p) != 0 {
		t.Fatalf("a second proposal while one is in flight: %v", p)
	}
	c.parts[1].AlterPartitionFailed(props[0].leaderEpoch, props[0].partitionEpoch, props[0].isr)
	c.parts[1].Tick(c.now)
	if p := c.takeProposals(); len(p) != 1 {
		t.Fatalf("no proposal after the refusal: %v", p)
	}
}

// TestLeaderChangeTruncatesByEpoch is KIP-101's case: the old leader wrote
// records in its epoch that not every follower had; a follower becomes
// leader and writes in the next epoch. Coming back as a follower, the old
// leader truncates where the epochs part, not to its high watermark, and
// every log ends byte for byte the same.
func TestLeaderChangeTruncatesByEpoch(t *testing.T) {
	c := newTestCluster(t, []int32{1, 2, 3}, false)
	c.elect(1, []int32{1, 2, 3})
	mustProduce(t, c, 1, 3)
	c.catchUp(2)
	c.catchUp(3)
	// Replica 2 learns the high watermark at its next fetch.
	wantHW(t, c, map[int32]int64{1: 3, 2: 0, 3: 3})
	mustProduce(t, c, 1, 2) // offsets 3 and 4, epoch 1, not committed
	mustFetch(t, c, 2, 1)   // replica 2 gets offset 3 only
	// Replica 1 is cut off; the controller elects 2, which appends in
	// epoch 2 at offsets 4 and 5.
	if tr := c.elect(2, []int32{2, 3}, 2, 3); tr[2] != BecameLeader || tr[3] != LeaderChanged {
		t.Fatalf("transitions %v", tr)
	}
	wantHW(t, c, map[int32]int64{2: 3}) // kept by the new leader
	mustProduce(t, c, 2, 2)
	c.catchUp(3)
	// Replica 1 learns it follows 2. Its log: 0-4 in epoch 1; the
	// leader's epoch 1 ends at 4.
	if tr := c.deliver(1); tr[1] != BecameFollower {
		t.Fatalf("old leader: %v", tr)
	}
	hw := c.parts[1].HighWatermark()
	if got := mustFetch(t, c, 1, 1<<20); got != "fetch offset=5 epoch=1: diverging epoch=1 end=4 -> truncate to 4 done=true" {
		t.Fatalf("old leader's first fetch: %s", got)
	}
	if hw != 3 {
		t.Fatalf("the old leader's high watermark was %d: the truncation did not tell epoch from watermark", hw)
	}
	c.catchUp(1)
	for _, id := range []int32{1, 3} {
		if d := c.sameLogs(2, id); d != "" {
			t.Errorf("replicas 2 and %d: %s", id, d)
		}
	}
	if e := c.logs[1].Epochs(); len(e) != 2 || e[1].Epoch != 2 || e[1].StartOffset != 4 {
		t.Errorf("old leader's epochs %v", e)
	}
	// The old leader's record at offset 3 was replicated to the new
	// leader, and committed by it: it was kept, not fetched again.
	wantHW(t, c, map[int32]int64{2: 6, 3: 6})
}

// TestFormerLeaderOfAnEmptyLogRejoins: replica 1 led epoch 1 of an empty
// log (its epoch cache says so), then replica 2 leads epoch 2, still
// empty. Replica 1's fetch carries last fetched epoch 1; the new leader
// must know its own epoch began at 0, so the fetch is no divergence and
// replica 1 is proposed back into the ISR. A leader without the entry
// answers "diverging" to every such fetch, and the follower never rejoins.
func TestFormerLeaderOfAnEmptyLogRejoins(t *testing.T) {
	c := newTestCluster(t, []int32{1, 2, 3}, false)
	c.elect(1, []int32{1, 2, 3})
	if e := c.logs[1].Epochs(); len(e) != 1 || e[0].Epoch != 1 || e[0].StartOffset != 0 {
		t.Fatalf("the first leader's epochs %v", e)
	}
	c.elect(2, []int32{2, 3})
	if e := c.logs[2].Epochs(); len(e) != 1 || e[0].Epoch != 2 || e[0].StartOffset != 0 {
		t.Fatalf("the new leader's epochs %v, want epoch 2 from 0", e)
	}
	if got := mustFetch(t, c, 1, 1<<20); strings.Contains(got, "diverging") {
		t.Fatalf("the former leader's fetch: %s", got)
	}
	props := c.takeProposals()
	if len(props) != 1 || !slices.Equal(props[0].isr, []int32{1, 2, 3}) {
		t.Fatalf("proposals after the former leader caught up: %v", props)
	}
}

func TestWaitCommittedLosesTheLeadership(t *testing.T) {
	c := newTestCluster(t, []int32{1, 2}, false)
	c.elect(1, []int32{1, 2})
	_, last := mustProduce(t, c, 1, 1)
	done := waitResult(c.parts[1], context.Background(), last, 1)
	w := NewWaiter([]*Partition{c.parts[1]})
	defer w.Done()
	c.elect(2, []int32{1, 2})
	wantWoken(t, w, "losing the leadership")
	if err := receive(t, done); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("WaitCommitted after losing the leadership: %v", err)
	}
	if _, err := c.parts[1].Append(nil); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("append on a follower: %v", err)
	}
}

// A leader moved off this broker by a reassignment is stopped, not told of
// a new leader: its acks=all waiters must still be answered at once.
func TestWaitCommittedStoppedReplica(t *testing.T) {
	c := newTestCluster(t, []int32{1, 2}, false)
	c.elect(1, []int32{1, 2})
	_, last := mustProduce(t, c, 1, 1)
	done := waitResult(c.parts[1], context.Background(), last, 1)
	w := NewWaiter([]*Partition{c.parts[1]})
	defer w.Done()
	c.parts[1].Stop()
	wantWoken(t, w, "stopping the replica")
	if err := receive(t, done); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("WaitCommitted on a stopped replica: %v", err)
	}
	if _, err := c.parts[1].Append(nil); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("append on a stopped replica: %v", err)
	}
}

func TestWaitCommittedISRBelowMinimum(t *testing.T) {
	c := newTestCluster(t, []int32{1, 2, 3}, false)
	c.elect(1, []int32{1, 2, 3})
	_, last := mustProduce(t, c, 1, 1)
	done := waitResult(c.parts[1], context.Background(), last, 3)
	c.catchUp(2)
	c.now = c.now.Add(11 * time.Second)
	c.parts[1].Tick(c.now) // replica 3 never fetched
	props := c.takeProposals()
	if len(props) != 1 || !c.commit(props[0]) {
		t.Fatalf("shrink: %v", props)
	}
	if err := receive(t, done); !errors.Is(err, ErrNotEnoughReplicasAfterAppend) {
		t.Fatalf("WaitCommitted after the ISR shrank below 3: %v", err)
	}
	if hw := c.parts[1].HighWatermark(); hw != last+1 {
		t.Fatalf("high watermark %d: the record is committed by the smaller ISR", hw)
	}
	// An ISR change that moves no high watermark (the controller took a
	// replica out, as in a controlled shutdown) wakes the waiters too.
	w := NewWaiter([]*Partition{c.parts[1]})
	defer w.Done()
	c.ctl.ISR = []int32{1}
	c.ctl.PartitionEpoch++
	c.deliver()
	wantWoken(t, w, "an ISR change")
}

// wantWoken checks that w was woken, without waiting: the event that
// should wake it has already happened.
func wantWoken(t *testing.T, w *Waiter, event string) {
	t.Helper()
	select {
	case <-w.C():
	default:
		t.Errorf("%s woke no waiter", event)
	}
}

func TestFollowerFetchChecksEpochAndRole(t *testing.T) {
	c := newTestCluster(t, []int32{1, 2}, false)
	c.elect(1, []int32{1, 2})
	c.elect(1, []int32{1, 2}) // epoch 2
	l := c.parts[1]
	cases := []struct {
		replica int32
		epoch   int32
		want    error
	}{
		{2, 1, ErrFencedLeaderEpoch},
		{2, 3, ErrUnknownLeaderEpoch},
		{3, 2, ErrNotReplica},
		{1, -1, ErrNotReplica},
	}
	for _, tc := range cases {
		if _, err := l.FollowerFetch(tc.replica, 0, -1, tc.epoch, 100, c.now); !errors.Is(err, tc.want) {
			t.Errorf("fetch by %d at epoch %d: %v, want %v", tc.replica, tc.epoch, err, tc.want)
		}
	}
	if _, err := c.parts[2].FollowerFetch(1, 0, -1, 2, 100, c.now); !errors.Is(err, ErrNotLeader) {
		t.Errorf("fetch from a follower: %v", err)
	}
	if _, err := l.FollowerFetch(2, 1, -1, 2, 100, c.now); !errors.Is(err, storage.ErrOffsetOutOfRange) {
		t.Errorf("fetch past the log end: %v", err)
	}
	if _, err := l.FetchState(); !errors.Is(err, ErrNotFollower) {
		t.Errorf("FetchState on the leader: %v", err)
	}
	if _, err := l.AppendAsFollower(nil, 0, 0); !errors.Is(err, ErrNotFollower) {
		t.Errorf("AppendAsFollower on the leader: %v", err)
	}
	if err := l.TruncateTo(0); !errors.Is(err, ErrNotFollower) {
		t.Errorf("TruncateTo on the leader: %v", err)
	}
	// A stale image (an older leader epoch) is ignored.
	st := c.ctl
	st.Self, st.Leader, st.LeaderEpoch = 1, 2, 1
	if tr := l.Apply(st, c.now); tr != Unchanged || !l.IsLeader() || l.LeaderEpoch() != 2 {
		t.Errorf("stale image: %v, leader %v, epoch %d", tr, l.IsLeader(), l.LeaderEpoch())
	}
}

// A follower whose log ends below the leader's log start restarts its log
// there.
func TestFollowerBehindLogStartRestartsThere(t *testing.T) {
	c := newTestCluster(t, []int32{1, 2}, false)
	c.elect(1, []int32{1})
	mustProduce(t, c, 1, 5)
	if start, err := c.parts[1].DeleteRecords(3); err != nil || start != 3 {
		t.Fatalf("DeleteRecords: %d, %v", start, err)
	}
	if got := mustFetch(t, c, 2, 1<<20); got != "fetch offset=0 epoch=-1: out of range [3, 5] -> start=3 end=3" {
		t.Fatalf("first fetch: %s", got)
	}
	c.catchUp(2)
	if d := c.sameLogs(1, 2); d != "" {
		t.Fatal(d)
	}
	wantHW(t, c, map[int32]int64{2: 5})
	if _, err := c.parts[2].DeleteRecords(4); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("DeleteRecords on a follower: %v", err)
	}
	// The follower's log start follows the leader's.
	if _, err := c.parts[1].DeleteRecords(4); err != nil {
		t.Fatal(err)
	}
	mustFetch(t, c, 2, 1<<20)
	if s := c.parts[2].LogStartOffset(); s != 4 {
		t.Fatalf("follower's log start %d, want 4", s)
	}
}

// Consumers read a follower below its high watermark; past the high
// watermark, up to the log end, is an empty read, as on a leader, and
// only past the log end is out of range.
func TestConsumerReadsBoundedByHighWatermark(t *testing.T) {
	c := newTestCluster(t, []int32{1, 2}, false)
	c.elect(1, []int32{1, 2})
	mustProduce(t, c, 1, 4)
	mustFetch(t, c, 2, 1<<20) // has 0-3, high watermark 0
	for _, id := range []int32{1, 2} {
		p := c.parts[id]
		rr, hw, err := p.Read(2, 1<<20, true)
		rr.Release()
		if err != nil || rr.Size != 0 || hw != 0 {
			t.Errorf("replica %d: read past the high watermark: %d bytes, hw %d, %v", id, rr.Size, hw, err)
		}
		if _, _, err := p.Read(5, 1<<20, true); !errors.Is(err, storage.ErrOffsetOutOfRange) {
			t.Errorf("replica %d: read past the log end: %v", id, err)
		}
	}
	c.catchUp(2)
	rr, hw, err := c.parts[2].Read(0, 1<<20, true)
	defer rr.Release()
	if err != nil || rr.Size == 0 || hw != 4 {
		t.Fatalf("follower read below its high watermark: %d bytes, hw %d, %v", rr.Size, hw, err)
	}
}

// A replica opened before the metadata tells its role trusts only its log
// start; once it is the sole replica, its whole log is committed.
func TestInitialHighWatermark(t *testing.T) {
	c := newTestCluster(t, []int32{1}, false)
	c.elect(1, []int32{1})
	mustProduce(t, c, 1, 3)
	p := NewReplica(testTP, c.parts[1].TopicID, c.logs[1], Options{})
	if hw := p.HighWatermark(); hw != 0 {
		t.Fatalf("role unknown: high watermark %d, want the log start", hw)
	}
	if _, err := p.Append(nil); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("append with no role: %v", err)
	}
	p.Apply(State{Leader: 1, LeaderEpoch: 2, Replicas: []int32{1}, ISR: []int32{1}, Self: 1}, c.now)
	if hw := p.HighWatermark(); hw != 3 {
		t.Fatalf("sole replica: high watermark %d, want the log end", hw)
	}
	// A leader of several replicas waits for its followers.
	q := NewReplica(testTP, c.parts[1].TopicID, c.logs[1], Options{})
	q.Apply(State{Leader: 1, LeaderEpoch: 2, Replicas: []int32{1, 2}, ISR: []int32{1, 2}, Self: 1}, c.now)
	if hw := q.HighWatermark(); hw != 0 {
		t.Fatalf("leader of two: high watermark %d, want the log start", hw)
	}
	// A checkpointed high watermark is where a replica starts, as far as
	// its log goes, and a leader keeps it while its followers come.
	for _, tc := range []struct{ checkpointed, want int64 }{{2, 2}, {9, 3}} {
		r := NewReplica(testTP, c.parts[1].TopicID, c.logs[1], Options{HighWatermark: tc.checkpointed})
		if hw := r.HighWatermark(); hw != tc.want {
			t.Errorf("checkpointed %d: high watermark %d, want %d", tc.checkpointed, hw, tc.want)
		}
		r.Apply(State{Leader: 1, LeaderEpoch: 2, Replicas: []int32{1, 2}, ISR: []int32{1, 2}, Self: 1}, c.now)
		if hw := r.HighWatermark(); hw != tc.want {
			t.Errorf("checkpointed %d, then leader of two: high watermark %d, want %d", tc.checkpointed, hw, tc.want)
		}
	}
}

func TestSingleReplicaCommitsOnAppend(t *testing.T) {
	c := newTestCluster(t, []int32{1}, false)
	c.elect(1, []int32{1})
	_, last := mustProduce(t, c, 1, 2)
	wantHW(t, c, map[int32]int64{1: last + 1})
	if err := c.parts[1].WaitCommitted(context.Background(), last, 1); err != nil {
		t.Fatalf("WaitCommitted on a single replica: %v", err)
	}
}

// In durable mode a follower reports what it has fsynced, so the high
// watermark never passes what some ISR member could lose in a crash.
func TestDurableFollowerReportsFsyncedEnd(t *testing.T) {
	c := newTestCluster(t, []int32{1, 2, 3}, true)
	c.elect(1, []int32{1, 2})
	mustProduce(t, c, 1, 3)
	mustFetch(t, c, 2, 1<<20)
	pos, err := c.parts[2].FetchState()
	if err != nil {
		t.Fatal(err)
	}
	if rp := c.logs[2].Offsets().RecoveryPoint; pos.FetchOffset != 3 || rp < pos.FetchOffset {
		t.Fatalf("fetch offset %d, recovery point %d", pos.FetchOffset, rp)
	}
	c.catchUp(2)
	wantHW(t, c, map[int32]int64{1: 3, 2: 3})
	for _, id := range []int32{1, 2} {
		if rp := c.logs[id].Offsets().RecoveryPoint; rp < 3 {
			t.Errorf("replica %d: recovery point %d below the high watermark", id, rp)
		}
	}
	// Replica 3, outside the ISR, gets records the leader has committed
	// already: its own high watermark waits for its fsync.
	mustFetch(t, c, 3, 1<<20)
	if hw, rp := c.parts[3].HighWatermark(), c.logs[3].Offsets().RecoveryPoint; hw > rp || rp == 3 {
		t.Fatalf("before its fsync: high watermark %d, recovery point %d", hw, rp)
	}
	if _, err := c.parts[3].FetchState(); err != nil {
		t.Fatal(err)
	}
	wantHW(t, c, map[int32]int64{3: 3})
}

// A durable follower promoted before it fsynced what it fetched commits
// that tail once its followers have it: the leader fsyncs it at their
// first fetch.
func TestDurableNewLeaderCommitsItsInheritedTail(t *testing.T) {
	c := newTestCluster(t, []int32{1, 2}, true)
	c.elect(1, []int32{1, 2})
	mustProduce(t, c, 1, 3)
	mustFetch(t, c, 2, 1<<20) // replica 2 holds 0-2, not fsynced
	if rp := c.logs[2].Offsets().RecoveryPoint; rp == 3 {
		t.Fatal("the follower fsynced before reporting; the test needs it not to")
	}
	c.elect(2, []int32{1, 2})
	c.catchUp(1)
	wantHW(t, c, map[int32]int64{2: 3})
	if rp := c.logs[2].Offsets().RecoveryPoint; rp != 3 {
		t.Fatalf("new leader's recovery point %d", rp)
	}
}

// Leadership moves back and forth while both replicas' fetchers, a
// consumer and acks=all waiters run: every error is one a fetcher or
// producer retries, nothing deadlocks (roleMu, mu and the log's locks),
// and once the leadership settles the logs agree. Run with -race.
func TestReplicationUnderConcurrentRoleChanges(t *testing.T) {
	c := newTestCluster(t, []int32{1, 2}, false)
	c.elect(1, []int32{1, 2})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	retryable := []error{ErrNotLeader, ErrNotFollower, ErrFencedLeaderEpoch, ErrUnknownLeaderEpoch,
		storage.ErrInvalidOffset, storage.ErrLeaderEpochRegression, storage.ErrOffsetOutOfRange}
	fail := make(chan error, 4)
	for _, id := range c.ids {
		wg.Go(func() {
			for ctx.Err() == nil {
				if _, progress, err := c.fetchOnce(id, 300); err != nil && !isAny(err, retryable) {
					fail <- fmt.Errorf("fetcher of %d: %w", id, err)
					return
				} else if !progress {
					runtime.Gosched()
				}
			}
		})
		wg.Go(func() {
			for ctx.Err() == nil {
				rr, _, err := c.parts[id].Read(c.parts[id].LogStartOffset(), 1<<10, true)
				rr.Release()
				if err != nil && !errors.Is(err, storage.ErrOffsetOutOfRange) {
					fail <- fmt.Errorf("consumer of %d: %w", id, err)
					return
				}
				runtime.Gosched()
			}
		})
	}
	leader := int32(1)
	for range 30 {
		_, last, err := c.produce(leader, 3)
		if err != nil {
			t.Fatalf("produce on the leader: %v", err)
		}
		wctx, wcancel := context.WithCancel(ctx)
		done := waitResult(c.parts[leader], wctx, last, 1)
		leader = 3 - leader
		c.elect(leader, []int32{1, 2})
		if err := receive(t, done); err != nil && !errors.Is(err, ErrNotLeader) {
			t.Fatalf("WaitCommitted across a leader change: %v", err)
		}
		wcancel()
	}
	cancel()
	wg.Wait()
	close(fail)
	for err := range fail {
		t.Fatalf("unexpected error: %v", err)
	}
	c.catchUp(3 - leader)
	if d := c.sameLogs(1, 2); d != "" {
		t.Fatalf("after settling: %s\n%s\n%s", d, c.describe(1), c.describe(2))
	}
}

func isAny(err error, targets []error) bool {
	return slices.ContainsFunc(targets, func(t error) bool { return errors.Is(err, t) })
}

// A state without a lag time gets Kafka's default, not zero, which would
// drop every follower at the first tick.
func TestDefaultLagTime(t *testing.T) {
	c := newTestCluster(t, []int32{1, 2}, false)
	c.lag = 0
	c.elect(1, []int32{1, 2})
	c.now = c.now.Add(DefaultLagTime)
	c.parts[1].Tick(c.now)
	if p := c.takeProposals(); len(p) != 0 {
		t.Fatalf("proposals within the default lag time: %v", p)
	}
	c.now = c.now.Add(time.Millisecond)
	c.parts[1].Tick(c.now)
	if p := c.takeProposals(); len(p) != 1 {
		t.Fatalf("proposals past the default lag time: %v", p)
	}
}

// TestAppendWakesFollowersFetches: with followers in the ISR a leader's
// append does not move the high watermark, so only an append waiter (a
// follower's parked fetch) is woken by it; a consumer's waiter sleeps on
// until the high watermark moves.
func TestAppendWakesFollowersFetches(t *testing.T) {
	c := newTestCluster(t, []int32{1, 2}, false)
	c.elect(1, []int32{1, 2})
	leader := c.parts[1]
	follower := NewAppendWaiter([]*Partition{leader})
	defer follower.Done()
	consumer := NewWaiter([]*Partition{leader})
	defer consumer.Done()
	mustProduce(t, c, 1, 1)
	wantWoken(t, follower, "an append")
	select {
	case <-consumer.C():
		t.Errorf("an append that did not move the high watermark woke a consumer's waiter")
	default:
	}
	c.catchUp(2)
	wantWoken(t, consumer, "the high watermark's move")
}

// ReadAsLeader, what a coordinator replays on becoming leader, reads to
// the new leader's log end: the records its old leader acknowledged may
// lie above the high watermark it has learned. A follower refuses it.
func TestReadAsLeaderReadsPastTheHighWatermark(t *testing.T) {
	c := newTestCluster(t, []int32{1, 2, 3}, false)
	c.elect(1, []int32{1, 2, 3})
	mustProduce(t, c, 1, 4)
	mustFetch(t, c, 2, 1<<20) // replica 2 has 0-3 and high watermark 0
	mustFetch(t, c, 3, 1)     // replica 3 has offset 0 only
	if _, _, err := c.parts[2].ReadAsLeader(0, 1<<20, true); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("a follower's ReadAsLeader: %v, want ErrNotLeader", err)
	}
	// Replica 1 dies; 2 leads with 3 still behind in the ISR, so its high
	// watermark stays below its log end until 3 fetches.
	c.elect(2, []int32{2, 3}, 2, 3)
	p := c.parts[2]
	if hw := p.HighWatermark(); hw >= 4 {
		t.Fatalf("the new leader's high watermark is %d already: the case is not tested", hw)
	}
	rr, limit, err := p.ReadAsLeader(0, 1<<20, true)
	if err != nil {
		t.Fatal(err)
	}
	data, err := rr.ReadAll()
	rr.Release()
	if err != nil {
		t.Fatal(err)
	}
	if n := countRecords(t, data); n != 4 || limit != 4 || p.LogEndOffset() != 4 {
		t.Fatalf("ReadAsLeader: %d records up to %d (log end %d), want 4", n, limit, p.LogEndOffset())
	}
}

// countRecords counts the records of concatenated batches.
func countRecords(t *testing.T, data []byte) int64 {
	t.Helper()
	var n int64
	for len(data) > 0 {
		h, err := record.ParseHeader(data)
		if err != nil {
			t.Fatal(err)
		}
		n += h.NextOffset() - h.BaseOffset
		data = data[h.Size():]
	}
	return n
}

package controller

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-io/samsa/internal/metadata"
	"github.com/samsa-io/samsa/internal/model"
)

func voterIDs(c *Controller) []model.NodeID {
	var out []model.NodeID
	for _, v := range c.Voters() {
		out = append(out, v.ID)
	}
	return out
}

func mustVoterChange(t *testing.T, what string, code *kerr.Error, msg string) {
	t.Helper()
	if code != nil {
		t.Fatalf("%s: %v: %s", what, code, msg)
	}
}

// A joining controller becomes a voter, follows what was written before
// and after, counts in the quorum; a voter removed (the leader itself
// here) leaves, and the rest elect a leader and keep writing.
func TestDynamicQuorumAddsAndRemovesVoters(t *testing.T) {
	q := newDynamicQuorum(t, 3)
	lead := q.leader()
	registerBrokers(t, lead.controller(), 1, 2, 3)
	mustCreate(t, lead.controller(), "before", 1)

	n4 := q.listen()
	q.start(n4)
	if c := n4.controller(); c == nil || !c.Observer() || c.Active() {
		t.Fatal("the joining controller is not a non-voter")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	code, msg := lead.controller().AddVoter(ctx, n4.id, n4.ln.Addr().String())
	mustVoterChange(t, "add voter 4", code, msg)
	if got := voterIDs(lead.controller()); !slices.Equal(got, []model.NodeID{1, 2, 3, 4}) {
		t.Fatalf("voters after adding 4: %v", got)
	}
	waitFor(t, n4.controller(), func() bool { _, ok := n4.controller().Image().Topic("before"); return ok })
	mustCreate(t, lead.controller(), "after", 1)
	waitFor(t, n4.controller(), func() bool { _, ok := n4.controller().Image().Topic("after"); return ok })
	// Node 4 sends no heartbeats (it is no broker): DescribeQuorum shows
	// its progress as Raft's replication reports it.
	var r4 ReplicaState
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		st, err := lead.controller().DescribeQuorum()
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(st.Voters, func(r ReplicaState) bool { return r.NodeID == n4.id })
		if i < 0 {
			t.Fatalf("DescribeQuorum voters %v lack node 4", st.Voters)
		}
		r4 = st.Voters[i]
		if r4.LogEndOffset == st.HighWatermark && !r4.LastFetch.IsZero() && !r4.LastCaughtUp.IsZero() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("node 4 in DescribeQuorum: %+v, want it at the high watermark %d", r4, st.HighWatermark)
		}
	}

	// Removing the leader: it steps down, the others elect a leader.
	old := lead
	code, msg = old.controller().RemoveVoter(ctx, old.id)
	mustVoterChange(t, fmt.Sprintf("remove voter %d", old.id), code, msg)
	var next *quorumNode
	deadline := time.Now().Add(15 * time.Second)
	for next == nil && time.Now().Before(deadline) {
		for _, n := range q.nodes {
			if c := n.controller(); n != old && c != nil && c.Active() {
				next = n
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	if next == nil {
		t.Fatal("no leader after the old one was removed")
	}
	want := slices.DeleteFunc([]model.NodeID{1, 2, 3, 4}, func(id model.NodeID) bool { return id == old.id })
	if got := voterIDs(next.controller()); !slices.Equal(got, want) {
		t.Fatalf("voters after removing %d: %v, want %v", old.id, got, want)
	}
	if old.controller().Active() {
		t.Fatal("the removed voter is still active")
	}
	mustCreate(t, next.controller(), "without", 1)
	st, err := next.controller().DescribeQuorum()
	if err != nil {
		t.Fatal(err)
	}
	var described []model.NodeID
	for _, v := range st.Voters {
		described = append(described, v.NodeID)
	}
	if !slices.Equal(described, want) {
		t.Fatalf("DescribeQuorum voters %v, want %v", described, want)
	}
	// Node old is a registered broker too: it follows the log without a
	// vote, an observer.
	if !slices.ContainsFunc(st.Observers, func(r ReplicaState) bool { return r.NodeID == old.id }) {
		t.Fatalf("DescribeQuorum observers %v lack the removed voter %d, whose broker follows the log", st.Observers, old.id)
	}
	waitFor(t, old.controller(), func() bool { _, ok := old.controller().Image().Topic("without"); return ok })

	// The joined controller restarts as a voter: the membership is in
	// Raft's stored configuration, not in its start-up config.
	if next != n4 {
		q.stop(n4)
		q.start(n4)
		if got := voterIDs(n4.controller()); !slices.Equal(got, want) {
			t.Fatalf("voters after node 4 restarted: %v, want %v", got, want)
		}
		mustCreate(t, next.controller(), "after-restart", 1)
		waitFor(t, n4.controller(), func() bool { _, ok := n4.controller().Image().Topic("after-restart"); return ok })
	}
}

func TestVoterChangeRefusals(t *testing.T) {
	q := newDynamicQuorum(t, 3)
	lead := q.leader()
	var follower *quorumNode
	for _, n := range q.nodes {
		if n != lead {
			follower = n
		}
	}
	ctx := ctx(t)
	for _, tc := range []struct {
		name string
		do   func() (*kerr.Error, string)
		want *kerr.Error
	}{
		{"add an existing voter", func() (*kerr.Error, string) {
			return lead.controller().AddVoter(ctx, 2, q.voters[1].Addr)
		}, kerr.DuplicateVoter},
		{"remove an unknown voter", func() (*kerr.Error, string) { return lead.controller().RemoveVoter(ctx, 9) }, kerr.VoterNotFound},
		{"add on a follower", func() (*kerr.Error, string) {
			return follower.controller().AddVoter(ctx, 9, "127.0.0.1:1")
		}, kerr.NotController},
		{"remove on a follower", func() (*kerr.Error, string) { return follower.controller().RemoveVoter(ctx, 2) }, kerr.NotController},
		{"add a broker-only node at another address", func() (*kerr.Error, string) {
			// Broker 7 registers: the leader adds it as a non-voter at its
			// inter-broker listener (nothing listens there; it needs not).
			epoch, refused, msg := lead.controller().RegisterBroker(ctx, Registration{NodeID: 7, ClusterID: lead.controller().Image().ClusterID(), Incarnation: "i7",
				Endpoints: []metadata.Endpoint{{Name: "PLAINTEXT", Host: "127.0.0.1", Port: 3, SecurityProtocol: "PLAINTEXT"}}, Features: metadata.SupportedFeatures()})
			if refused != nil || epoch < 0 {
				t.Fatalf("register broker 7: %v %s", refused, msg)
			}
			return lead.controller().AddVoter(ctx, 7, "127.0.0.1:2")
		}, kerr.InvalidRequest},
		{"add at another voter's address", func() (*kerr.Error, string) {
			return lead.controller().AddVoter(ctx, 9, q.voters[0].Addr)
		}, kerr.InvalidRequest},
		{"add one that never answers", func() (*kerr.Error, string) {
			short, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
			defer cancel()
			return lead.controller().AddVoter(short, 9, "127.0.0.1:1")
		}, kerr.RequestTimedOut},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if code, msg := tc.do(); code != tc.want {
				t.Fatalf("got %v (%s), want %v", code, msg, tc.want)
			}
		})
	}
	// The node that never answered stays a non-voter; the voters are as
	// they were.
	if got := voterIDs(lead.controller()); !slices.Equal(got, []model.NodeID{1, 2, 3}) {
		t.Fatalf("voters: %v", got)
	}
	// One change at a time: while an addition waits for its node to catch
	// up, a removal is refused.
	adding := make(chan *kerr.Error, 1)
	go func() {
		short, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		code, _ := lead.controller().AddVoter(short, 10, "127.0.0.1:4")
		adding <- code
	}()
	for !lead.controller().voterChange.Load() {
		time.Sleep(time.Millisecond)
	}
	if code, msg := lead.controller().RemoveVoter(ctx, 2); code != kerr.RequestTimedOut {
		t.Fatalf("a removal while an addition runs: %v (%s), want REQUEST_TIMED_OUT", code, msg)
	}
	if code := <-adding; code != kerr.RequestTimedOut {
		t.Fatalf("the addition of a node that never answers: %v, want REQUEST_TIMED_OUT", code)
	}
	if got := voterIDs(lead.controller()); !slices.Equal(got, []model.NodeID{1, 2, 3}) {
		t.Fatalf("voters after the refused removal: %v", got)
	}
}

func TestStaticQuorumRefusesVoterChanges(t *testing.T) {
	q := newTestQuorum(t, 3)
	lead := q.leader()
	if code, _ := lead.controller().RemoveVoter(ctx(t), 2); code != kerr.UnsupportedVersion {
		t.Fatalf("remove on a static quorum: %v, want UNSUPPORTED_VERSION", code)
	}
}

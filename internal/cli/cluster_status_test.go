package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/devcluster"
)

func quorumReplica(id int32, leo, fetch, caughtUp int64) kmsg.DescribeQuorumResponseTopicPartitionReplicaState {
	r := kmsg.NewDescribeQuorumResponseTopicPartitionReplicaState()
	r.ReplicaID, r.LogEndOffset, r.LastFetchTimestamp, r.LastCaughtUpTimestamp = id, leo, fetch, caughtUp
	return r
}

func clusterBrokerAnswer(id int32, host string, rack *string, fenced bool) kmsg.DescribeClusterResponseBroker {
	b := kmsg.NewDescribeClusterResponseBroker()
	b.NodeID, b.Host, b.Port, b.Rack, b.IsFenced = id, host, 9092, rack, fenced
	return b
}

// TestClusterStatusFromAnswers joins DescribeCluster and DescribeQuorum
// answers node by node: a live leader, a live voter a little behind, a
// fenced voter far behind, a voter the cluster lists no broker for, an
// observer never heard from, and a broker outside the quorum.
func TestClusterStatusFromAnswers(t *testing.T) {
	now := time.UnixMilli(1_000_000)
	ms := now.UnixMilli()
	rack := "eu-1a"
	dc := kmsg.NewPtrDescribeClusterResponse()
	dc.Version, dc.ClusterID = 2, "c1"
	dc.Brokers = []kmsg.DescribeClusterResponseBroker{
		clusterBrokerAnswer(1, "b1", &rack, false),
		clusterBrokerAnswer(2, "b2", nil, false),
		clusterBrokerAnswer(3, "b3", nil, true),
		clusterBrokerAnswer(6, "b6", nil, false),
	}
	q := kmsg.NewDescribeQuorumResponseTopicPartition()
	q.LeaderID, q.LeaderEpoch, q.HighWatermark = 1, 4, 120
	q.CurrentVoters = []kmsg.DescribeQuorumResponseTopicPartitionReplicaState{
		quorumReplica(1, 120, ms, ms),
		quorumReplica(2, 118, ms-200, ms-400),
		quorumReplica(3, 100, ms-6500, ms-7000),
		quorumReplica(4, -1, -1, -1),
	}
	q.Observers = []kmsg.DescribeQuorumResponseTopicPartitionReplicaState{quorumReplica(5, -1, -1, -1)}
	st := buildClusterStatus(dc, &q, nil, now)
	var out strings.Builder
	if err := printClusterStatus(&out, st); err != nil {
		t.Fatal(err)
	}
	want := `Cluster ID: c1
Controller: 1 (metadata quorum leader, epoch 4, high watermark 120)
NODE  STATE         ENDPOINT  RACK   QUORUM    LOG-END-OFFSET  LAG  LAST-FETCH  LAST-CAUGHT-UP
1     live          b1:9092   eu-1a  leader    120             0    0s ago      0s ago
2     live          b2:9092   -      voter     118             2    200ms ago   400ms ago
3     fenced        b3:9092   -      voter     100             20   6.5s ago    7s ago
4     unregistered  -         -      voter     -               -    -           -
5     unregistered  -         -      observer  -               -    -           -
6     live          b6:9092   -      -         -               -    -           -
`
	if out.String() != want {
		t.Fatalf("got:\n%s\nwant:\n%s", out.String(), want)
	}

	// An older cluster cannot list fenced brokers: a quorum member it does
	// not list may be fenced or unregistered. Without a quorum answer the
	// brokers still show, with the reason.
	dc.Version = 1
	dc.Brokers = dc.Brokers[:2]
	st = buildClusterStatus(dc, &q, nil, now)
	if st.Nodes[2].State != nodeNotLive || st.Nodes[3].State != nodeNotLive {
		t.Fatalf("v1 nodes %+v", st.Nodes)
	}
	st = buildClusterStatus(dc, nil, errors.New("unsupported version: DescribeQuorum"), now)
	out.Reset()
	if err := printClusterStatus(&out, st); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "Cluster ID: c1\nController: - (metadata quorum not described: unsupported version: DescribeQuorum)\n") ||
		len(st.Nodes) != 2 || st.Controller != -1 || st.HighWatermark != -1 {
		t.Fatalf("without a quorum:\n%s%+v", out.String(), st)
	}
}

// TestClusterStatusSingleNode: a real single node is live, the leader and
// only voter of its quorum, at its own high watermark.
func TestClusterStatusSingleNode(t *testing.T) {
	b := newSamsaBroker(t)
	var st clusterStatus
	if err := json.Unmarshal([]byte(b.ok("", "cluster", "status", "--json")), &st); err != nil {
		t.Fatal(err)
	}
	if st.ClusterID == "" || st.Controller != 1 || st.LeaderEpoch < 1 || st.HighWatermark < 1 || st.QuorumError != "" || len(st.Nodes) != 1 {
		t.Fatalf("status %+v", st)
	}
	n := st.Nodes[0]
	zero := int64(0)
	want := nodeStatus{NodeID: 1, State: nodeLive, Endpoint: b.addr, QuorumRole: "leader",
		LogEndOffset: &st.HighWatermark, Lag: &zero, LastFetchMsAgo: n.LastFetchMsAgo, LastCaughtUpMsAgo: n.LastCaughtUpMsAgo}
	if diff := cmp.Diff(want, n); diff != "" || n.LastFetchMsAgo == nil || *n.LastFetchMsAgo > 5000 {
		t.Fatalf("node (-want +got):\n%s%+v", diff, n)
	}
	text := b.ok("", "cluster", "status")
	if !strings.Contains(text, "NODE  STATE  ENDPOINT") || !strings.Contains(text, "\n1     live   "+b.addr) {
		t.Fatalf("status:\n%s", text)
	}
}

// TestClusterStatusAndReportsOnThreeNodes runs three samsa processes and
// kills one that is not the controller: cluster status shows it fenced and
// falling behind the quorum while the others stay caught up, and the topic
// reports find its partitions under-replicated but not unavailable.
func TestClusterStatusAndReportsOnThreeNodes(t *testing.T) {
	dc, err := devcluster.New(devcluster.Config{Binary: samsaBinary(t), Dir: t.TempDir(), Nodes: 3, StopTimeout: 10 * time.Second, Overrides: noRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dc.Close() })
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := dc.Start(ctx); err != nil {
		t.Fatalf("start: %v\n%s", err, dc.LogTails(20))
	}
	c := &testCluster{t: t, addr: dc.Bootstrap()}
	c.ok("", "topic", "create", "rf3", "-p", "3", "-r", "3")
	status := func(c *testCluster) clusterStatus {
		var st clusterStatus
		if err := json.Unmarshal([]byte(c.ok("", "cluster", "status", "--json")), &st); err != nil {
			t.Fatal(err)
		}
		return st
	}
	var st clusterStatus
	waitUntil(t, 15*time.Second, "three live voters caught up", func() bool {
		st = status(c)
		caughtUp := 0
		for _, n := range st.Nodes {
			if n.State == nodeLive && n.QuorumRole != "" && n.Lag != nil && *n.Lag == 0 && n.LastFetchMsAgo != nil {
				caughtUp++
			}
		}
		return caughtUp == 3
	})
	victim := int32(1)
	if st.Controller == 1 {
		victim = 2
	}
	if err := dc.Node(victim).Kill(); err != nil {
		t.Fatal(err)
	}
	var others []string
	for _, n := range dc.Nodes() {
		if n.ID != victim {
			others = append(others, n.Addr())
		}
	}
	c = &testCluster{t: t, addr: strings.Join(others, ",")}
	var dead nodeStatus
	waitUntil(t, 20*time.Second, "the killed node fenced and behind", func() bool {
		st = status(c)
		dead = st.Nodes[victim-1]
		return dead.State == nodeFenced && dead.Lag != nil && *dead.Lag > 0 && *dead.LastFetchMsAgo > 1000
	})
	for _, n := range st.Nodes {
		if n.NodeID != victim && (n.State != nodeLive || n.LastFetchMsAgo == nil || *n.LastFetchMsAgo > 2000) {
			t.Fatalf("node %d after node %d was killed: %+v", n.NodeID, victim, n)
		}
	}
	if text := c.ok("", "cluster", "status"); !strings.Contains(text, fmt.Sprintf("\n%d     fenced  ", victim)) {
		t.Fatalf("status text:\n%s", text)
	}

	var rows []reportedPartition
	waitUntil(t, 10*time.Second, "every partition under-replicated", func() bool {
		if err := json.Unmarshal([]byte(c.ok("", "topic", "describe", "--under-replicated", "--json")), &rows); err != nil {
			t.Fatal(err)
		}
		return len(rows) == 3
	})
	for _, r := range rows {
		if r.Topic != "rf3" || len(r.ISR) != 2 || slices.Contains(r.ISR, victim) || r.Leader == victim || r.Offline {
			t.Fatalf("under-replicated partition %+v (node %d killed)", r, victim)
		}
	}
	if out := c.ok("", "topic", "describe", "--unavailable"); strings.Count(out, "\n") != 1 {
		t.Fatalf("unavailable partitions with two of three replicas live:\n%s", out)
	}
}

// waitUntil polls cond until it holds or d passes.
func waitUntil(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, d)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

package cli

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kmsg"
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

package broker

import (
	"net"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func describeQuorumRequest(version int16) *kmsg.DescribeQuorumRequest {
	req := kmsg.NewPtrDescribeQuorumRequest()
	req.Version = version
	rt := kmsg.NewDescribeQuorumRequestTopic()
	rt.Topic = "__cluster_metadata"
	rt.Partitions = []kmsg.DescribeQuorumRequestTopicPartition{kmsg.NewDescribeQuorumRequestTopicPartition()}
	req.Topics = append(req.Topics, rt)
	return req
}

// describeQuorumAt sends DescribeQuorum to one address and returns the
// metadata partition's answer.
func describeQuorumAt(t *testing.T, addr string, version int16) kmsg.DescribeQuorumResponseTopicPartition {
	t.Helper()
	r := dialRawAddr(t, addr)
	defer r.nc.Close()
	resp := r.roundTrip(describeQuorumRequest(version), 1).(*kmsg.DescribeQuorumResponse)
	if resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("DescribeQuorum v%d to %s: %+v", version, addr, resp)
	}
	return resp.Topics[0].Partitions[0]
}

// TestDescribeQuorumSingleNode: the single node is its quorum's one voter,
// at its own metadata offset; another partition is unknown.
func TestDescribeQuorumSingleNode(t *testing.T) {
	b := startBroker(t)
	r := dialRaw(t, b)
	for v := int16(0); v <= 2; v++ {
		resp := r.roundTrip(describeQuorumRequest(v), int32(v)).(*kmsg.DescribeQuorumResponse)
		p := resp.Topics[0].Partitions[0]
		hw := b.ctrl.Image().Offset()
		if p.ErrorCode != 0 || p.LeaderID != 1 || p.LeaderEpoch < 1 || p.HighWatermark != hw {
			t.Fatalf("v%d: %+v, want leader 1 at high watermark %d", v, p, hw)
		}
		if len(p.CurrentVoters) != 1 || p.CurrentVoters[0].ReplicaID != 1 || p.CurrentVoters[0].LogEndOffset != hw || len(p.Observers) != 0 {
			t.Fatalf("v%d: voters %+v observers %+v", v, p.CurrentVoters, p.Observers)
		}
		if v >= 1 && p.CurrentVoters[0].LastFetchTimestamp <= 0 {
			t.Fatalf("v%d: the leader's last fetch %d, want now", v, p.CurrentVoters[0].LastFetchTimestamp)
		}
		if v >= 2 && (len(resp.Nodes) != 1 || resp.Nodes[0].NodeID != 1 || len(resp.Nodes[0].Listeners) != 1) {
			t.Fatalf("v%d: nodes %+v", v, resp.Nodes)
		}
	}
	req := describeQuorumRequest(1)
	req.Topics[0].Partitions[0].Partition = 1
	resp := r.roundTrip(req, 9).(*kmsg.DescribeQuorumResponse)
	if p := resp.Topics[0].Partitions[0]; p.Partition != 1 || p.ErrorCode != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("partition 1: %+v", p)
	}
}

// TestDescribeQuorumThreeNodes: every node, forwarding to the active
// controller, names it as leader with the three voters caught up to its
// high watermark; a controller listener of a follower says it is not the
// leader. Once a node is killed its heartbeats stop: its last fetch stays
// where it was while the others' go on, and the high watermark (its
// fencing, at least) moves past its log end offset.
func TestDescribeQuorumThreeNodes(t *testing.T) {
	c := newTestCluster(t, 3, nil)
	active := c.activeController()
	var quorum kmsg.DescribeQuorumResponseTopicPartition
	waitFor(t, 15*time.Second, "every voter heard from at the high watermark", func() bool {
		quorum = describeQuorumAt(t, active.get().Addr(), 2)
		for _, v := range quorum.CurrentVoters {
			if v.LogEndOffset != quorum.HighWatermark || v.LastFetchTimestamp < 0 || v.LastCaughtUpTimestamp < 0 {
				return false
			}
		}
		return len(quorum.CurrentVoters) == 3
	})
	var ids []int32
	for _, v := range quorum.CurrentVoters {
		ids = append(ids, v.ReplicaID)
	}
	if quorum.LeaderID != active.id || quorum.LeaderEpoch < 1 || !slices.Equal(ids, []int32{1, 2, 3}) || len(quorum.Observers) != 0 {
		t.Fatalf("quorum %+v, want leader %d and voters 1-3", quorum, active.id)
	}
	var follower *clusterNode
	for _, n := range c.nodes {
		if n == active {
			continue
		}
		follower = n
		if p := describeQuorumAt(t, n.get().Addr(), 1); p.LeaderID != active.id || len(p.CurrentVoters) != 3 {
			t.Fatalf("via node %d: %+v", n.id, p)
		}
		if p := describeQuorumAt(t, "127.0.0.1:"+n.ctrlPort, 2); p.ErrorCode != kerr.NotLeaderForPartition.Code || p.LeaderID != active.id {
			t.Fatalf("node %d's controller listener: %+v, want NOT_LEADER_OR_FOLLOWER naming %d", n.id, p, active.id)
		}
	}

	c.kill(follower)
	killedAt := time.Now().UnixMilli()
	var dead, alive kmsg.DescribeQuorumResponseTopicPartitionReplicaState
	waitFor(t, 20*time.Second, "the killed voter behind the high watermark", func() bool {
		quorum = describeQuorumAt(t, active.get().Addr(), 2)
		for _, v := range quorum.CurrentVoters {
			switch v.ReplicaID {
			case follower.id:
				dead = v
			case active.id:
			default:
				alive = v
			}
		}
		return dead.LogEndOffset < quorum.HighWatermark && alive.LastFetchTimestamp > killedAt+1000
	})
	if dead.LastFetchTimestamp > killedAt || dead.LastCaughtUpTimestamp > killedAt {
		t.Fatalf("the killed node %d was heard from after its death: %+v (killed at %d)", follower.id, dead, killedAt)
	}
	if alive.LogEndOffset > quorum.HighWatermark || alive.LastCaughtUpTimestamp <= killedAt {
		t.Fatalf("a live voter %+v, high watermark %d", alive, quorum.HighWatermark)
	}
	t.Logf("killed node: %+v; live node: %+v; high watermark %d", dead, alive, quorum.HighWatermark)

	// DescribeCluster v2 names it, fenced, when asked for fenced brokers.
	r := dialRawAddr(t, active.get().Addr())
	waitFor(t, 20*time.Second, "the killed node listed as fenced", func() bool {
		req := kmsg.NewPtrDescribeClusterRequest()
		req.Version, req.EndpointType, req.IncludeFencedBrokers = 2, 1, true
		resp := r.roundTrip(req, 2).(*kmsg.DescribeClusterResponse)
		fenced := map[int32]bool{}
		for _, b := range resp.Brokers {
			fenced[b.NodeID] = b.IsFenced
		}
		return len(resp.Brokers) == 3 && fenced[follower.id] && !fenced[active.id]
	})
}

// dialRawAddr is dialRaw to any address, with time for a forwarded request.
func dialRawAddr(t *testing.T, addr string) *rawConn {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(2 * forwardTimeout))
	return &rawConn{t: t, nc: nc}
}

// waitFor polls cond until it holds or d passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, d)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

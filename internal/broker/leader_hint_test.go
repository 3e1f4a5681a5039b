package broker

import (
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/model"
)

// TestClusterNotLeaderNamesTheLeader: KIP-951. A produce (v10+) sent to a
// follower, or to a broker without a replica, is answered
// NOT_LEADER_OR_FOLLOWER with the partition's leader and epoch and the
// leader's endpoint; so is a fetch (v16+) to a broker without a replica.
// Older versions carry neither.
func TestClusterNotLeaderNamesTheLeader(t *testing.T) {
	c := newTestCluster(t, 3, nil)
	adm, ctx := c.admin()
	if resp, err := adm.CreateTopic(ctx, 1, 2, nil, "hint"); err != nil || resp.Err != nil {
		t.Fatalf("create: %v %v", err, resp.Err)
	}
	c.waitLive(3)
	tp := model.TopicPartition{Topic: "hint", Partition: 0}
	deadline := time.Now().Add(10 * time.Second)
	for _, n := range c.nodes { // every broker has applied the partition and its leader
		for {
			if img := n.get().meta.Load(); img != nil {
				if p, ok := img.Partition(tp); ok && p.Leader >= 0 {
					break
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("node %d does not know %s", n.id, tp)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	leader := c.leaderOf("hint", 0)
	p, _ := leader.get().meta.Load().Partition(tp)
	var follower, outsider *clusterNode
	for _, n := range c.nodes {
		switch {
		case n == leader:
		case p.Replicas[0] == model.NodeID(n.id) || p.Replicas[1] == model.NodeID(n.id):
			follower = n
		default:
			outsider = n
		}
	}
	host, port, _ := net.SplitHostPort(leader.get().Addr())
	portNum, _ := strconv.Atoi(port)
	type hint struct{ Leader, Epoch int32 }
	type endpoint struct {
		Node int32
		Host string
		Port int32
	}
	wantLeader := hint{leader.id, int32(p.LeaderEpoch)}
	wantBrokers := []endpoint{{leader.id, host, int32(portNum)}}

	batch := rawBatch(rawBatchOptions{}, rawRecord{Value: []byte("v")})
	for i, n := range []*clusterNode{follower, outsider} {
		for _, v := range []int16{9, 10, 11} {
			req := rawProduceReq("hint", 0, 1, batch)
			req.Version = v
			rc := dialRaw(t, n.get())
			resp := rc.roundTrip(req, int32(v)).(*kmsg.ProduceResponse)
			sp := resp.Topics[0].Partitions[0]
			who := fmt.Sprintf("produce v%d to node %d (%s)", v, n.id, []string{"a follower", "no replica"}[i])
			if sp.ErrorCode != kerr.NotLeaderForPartition.Code {
				t.Fatalf("%s: error %d, want NOT_LEADER_OR_FOLLOWER", who, sp.ErrorCode)
			}
			if v < 10 {
				if sp.CurrentLeader.LeaderID != -1 || len(resp.Brokers) != 0 {
					t.Errorf("%s: a hint below v10: %+v %+v", who, sp.CurrentLeader, resp.Brokers)
				}
				continue
			}
			if diff := cmp.Diff(wantLeader, hint{sp.CurrentLeader.LeaderID, sp.CurrentLeader.LeaderEpoch}); diff != "" {
				t.Errorf("%s: current leader (-want +got):\n%s", who, diff)
			}
			var got []endpoint
			for _, br := range resp.Brokers {
				got = append(got, endpoint{br.NodeID, br.Host, br.Port})
			}
			if diff := cmp.Diff(wantBrokers, got); diff != "" {
				t.Errorf("%s: node endpoints (-want +got):\n%s", who, diff)
			}
		}
	}

	ti, _ := leader.get().ctrl.Image().Topic("hint")
	for _, v := range []int16{12, 16} {
		rc := dialRaw(t, outsider.get())
		resp := rc.roundTrip(rawFetchReq(v, "hint", ti.ID, 0, 0), int32(100+v)).(*kmsg.FetchResponse)
		fp := resp.Topics[0].Partitions[0]
		if fp.ErrorCode != kerr.NotLeaderForPartition.Code {
			t.Fatalf("fetch v%d to node %d: error %d, want NOT_LEADER_OR_FOLLOWER", v, outsider.id, fp.ErrorCode)
		}
		got := hint{fp.CurrentLeader.LeaderID, fp.CurrentLeader.LeaderEpoch}
		if diff := cmp.Diff(wantLeader, got); diff != "" {
			t.Errorf("fetch v%d: current leader (-want +got):\n%s", v, diff)
		}
		wantN := 0
		if v >= 16 {
			wantN = 1
			if len(resp.Brokers) == 1 && (resp.Brokers[0].NodeID != leader.id || resp.Brokers[0].Port != int32(portNum)) {
				t.Errorf("fetch v%d: node endpoints %+v, want node %d on port %d", v, resp.Brokers, leader.id, portNum)
			}
		}
		if len(resp.Brokers) != wantN {
			t.Errorf("fetch v%d: %d node endpoints, want %d", v, len(resp.Brokers), wantN)
		}
	}
}

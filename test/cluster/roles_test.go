package cluster

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/devcluster"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// isolatedRoles: nodes 1-3 are controller-only, the rest broker-only, Kafka's
// layout for production clusters.
func isolatedRoles(id int32) string {
	if id <= 3 {
		return "controller"
	}
	return "broker"
}

// TestIsolatedControllersAndBrokers runs three controller-only nodes (the
// quorum's voters) and three broker-only nodes (Raft non-voters that
// follow the metadata log): clients see only the brokers; a replicated
// topic takes acks=all writes and reads them back; the active controller
// is killed and topic creation works again on another; a broker is killed
// and restarted and rejoins every ISR from its own copy of the metadata
// log.
func TestIsolatedControllersAndBrokers(t *testing.T) {
	c := startClusterWith(t, devcluster.Config{Nodes: 6, Roles: isolatedRoles})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ps, err := brokersListed(ctx, c.Node(4).Addr())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ps, []int32{4, 5, 6}) {
		t.Fatalf("Metadata lists brokers %v, want the broker-only nodes 4, 5, 6", ps)
	}
	createTopic(t, c, "isolated", 3, 3, 2)
	for p := range int32(3) {
		produceTo(t, c.Addrs(), "isolated", p, fmt.Sprintf("first-%d", p), kgo.AllISRAcks())
	}

	leader := killActiveController(ctx, t, c)

	victim := leaderOf(ctx, c, "isolated", 0)
	if err := c.Node(victim).Kill(); err != nil {
		t.Fatal(err)
	}
	for p := range int32(3) {
		produceTo(t, runningAddrs(c), "isolated", p, fmt.Sprintf("second-%d", p), kgo.AllISRAcks())
	}
	for _, id := range []int32{victim, leader} {
		if err := c.Node(id).Start(); err != nil {
			t.Fatal(err)
		}
	}
	waitReady(t, c)
	if err := waitFullISR(ctx, c, "isolated", 3); err != nil {
		t.Fatal(err)
	}
	for p := range int32(3) {
		for _, v := range []string{"first", "second"} {
			if !readBack(ctx, c.Addrs(), "isolated", p, fmt.Sprintf("%s-%d", v, p)) {
				t.Errorf("isolated-%d: %s-%d was not read back", p, v, p)
			}
		}
	}
	t.Logf("broker %d (killed, restarted) is back in every ISR", victim)
}

// brokersListed is the sorted node IDs a broker's Metadata lists.
func brokersListed(ctx context.Context, addr string) ([]int32, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	req := kmsg.NewPtrMetadataRequest()
	req.Topics = []kmsg.MetadataRequestTopic{}
	resp, err := cl.SeedBrokers()[0].Request(ctx, req)
	if err != nil {
		return nil, err
	}
	var ids []int32
	for _, b := range resp.(*kmsg.MetadataResponse).Brokers {
		ids = append(ids, b.NodeID)
	}
	slices.Sort(ids)
	return ids, nil
}

// quorumLeader asks a broker (which forwards to the active controller)
// for the metadata quorum's leader (DescribeQuorum).
func quorumLeader(ctx context.Context, addr string) (int32, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return -1, err
	}
	defer cl.Close()
	req := kmsg.NewPtrDescribeQuorumRequest()
	rt := kmsg.NewDescribeQuorumRequestTopic()
	rt.Topic = "__cluster_metadata"
	rt.Partitions = append(rt.Partitions, kmsg.NewDescribeQuorumRequestTopicPartition())
	req.Topics = append(req.Topics, rt)
	resp, err := cl.SeedBrokers()[0].Request(ctx, req)
	if err != nil {
		return -1, err
	}
	r := resp.(*kmsg.DescribeQuorumResponse)
	if r.ErrorCode != 0 || len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 {
		return -1, fmt.Errorf("DescribeQuorum: error %d, %d topics", r.ErrorCode, len(r.Topics))
	}
	return r.Topics[0].Partitions[0].LeaderID, nil
}

// killActiveController kills the quorum's leader, which must be one of the
// controller-only nodes 1-3 (asked through broker-only node 4), waits until
// a topic can be created again and returns the killed node.
func killActiveController(ctx context.Context, t *testing.T, c *devcluster.Cluster) int32 {
	t.Helper()
	leader, err := quorumLeader(ctx, c.Node(4).Addr())
	if err != nil {
		t.Fatal(err)
	}
	if leader < 1 || leader > 3 {
		t.Fatalf("the quorum's leader is node %d, not a controller", leader)
	}
	t0 := time.Now()
	if err := c.Node(leader).Kill(); err != nil {
		t.Fatal(err)
	}
	took := createUntil(t, c, "after-controller-kill", t0, 60*time.Second)
	t.Logf("killed the active controller (node %d): a topic was created %v later", leader, took.Round(time.Millisecond))
	return leader
}

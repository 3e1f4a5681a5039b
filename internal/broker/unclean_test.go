package broker

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/metadata"
	"github.com/samsa-io/samsa/internal/model"
)

// TestClusterUncleanLeaderElection: a partition of two replicas loses its
// follower (fenced, out of the ISR), then its leader: no ISR member
// lives, and it stays without a leader when the follower returns, since
// unclean.leader.election.enable is false. Setting it true on the topic
// elects the out-of-sync replica at once (the config change's batch), and
// the partition takes writes again.
func TestClusterUncleanLeaderElection(t *testing.T) {
	c := newTestCluster(t, 5, nil) // two of five down keep the quorum
	adm, ctx := c.admin()
	if resp, err := adm.CreateTopic(ctx, 1, 2, nil, "unclean"); err != nil || resp.Err != nil {
		t.Fatalf("create: %v %v", err, resp.Err)
	}
	tp := model.TopicPartition{Topic: "unclean", Partition: 0}
	p, _ := c.activeController().get().ctrl.Image().Partition(tp)
	leader, follower := c.node(int32(p.Leader)), c.node(int32(p.Replicas[0]))
	if follower == leader {
		follower = c.node(int32(p.Replicas[1]))
	}
	c.produceN("unclean", 5, "before")
	waitPartition := func(what string, ok func(metadata.PartitionImage) bool) metadata.PartitionImage {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			if p, found := c.activeController().get().ctrl.Image().Partition(tp); found && ok(p) {
				return p
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatalf("unclean-0 never %s", what)
		return metadata.PartitionImage{}
	}
	c.kill(follower)
	waitPartition("dropped the dead follower from its ISR", func(p metadata.PartitionImage) bool { return len(p.ISR) == 1 })
	c.produceN("unclean", 5, "only-on-the-leader")
	c.kill(leader)
	waitPartition("lost its leader", func(p metadata.PartitionImage) bool { return p.Leader == metadata.NoLeader })
	// Metadata names both as offline replicas. franz-go answers a
	// Metadata request from what it fetched within MetadataMinAge: a
	// client that keeps none asks the broker each time.
	madm := kadm.NewClient(c.liveClient(kgo.MetadataMinAge(10 * time.Millisecond)))
	want := slices.Sorted(slices.Values([]int32{leader.id, follower.id}))
	var offline []int32
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		td, err := madm.ListTopics(ctx, "unclean")
		if err != nil {
			t.Fatal(err)
		}
		if offline = slices.Sorted(slices.Values(td["unclean"].Partitions[0].OfflineReplicas)); slices.Equal(offline, want) {
			break
		}
	}
	if !slices.Equal(offline, want) {
		t.Errorf("Metadata's offline replicas %v, want %v", offline, want)
	}
	adm, ctx = c.admin() // the first client's brokers are gone
	c.start(follower)
	c.waitLive(4)
	time.Sleep(500 * time.Millisecond) // a wrong election would have had the time
	if p, _ := c.activeController().get().ctrl.Image().Partition(tp); p.Leader != metadata.NoLeader {
		t.Fatalf("an out-of-sync replica leads with unclean.leader.election.enable=false: %+v", p)
	}

	set := []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "unclean.leader.election.enable", Value: kadm.StringPtr("true")}}
	rs, err := adm.AlterTopicConfigs(ctx, set, "unclean")
	if err == nil {
		err = rs[0].Err
	}
	if err != nil {
		t.Fatalf("set unclean.leader.election.enable: %v", err)
	}
	p = waitPartition("got the out-of-sync replica as leader", func(p metadata.PartitionImage) bool { return p.Leader == model.NodeID(follower.id) })
	t.Logf("after the config change: leader %d, ISR %v, leader epoch %d", p.Leader, p.ISR, p.LeaderEpoch)
	cl := c.liveClient(kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	pctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := cl.ProduceSync(pctx, &kgo.Record{Topic: "unclean", Value: []byte("after")}).FirstErr(); err != nil {
		t.Fatalf("produce after the unclean election: %v", err)
	}
}

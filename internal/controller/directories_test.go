package controller

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-io/samsa/internal/metadata"
	"github.com/samsa-io/samsa/internal/model"
)

// A broker's heartbeat that reports a failed log directory takes exactly
// the replicas assigned to it out of their ISRs and their leaderships, in
// one batch; its replicas on its other directory keep theirs (KIP-858).
func TestOfflineLogDirTakesOnlyItsReplicasOffline(t *testing.T) {
	cfg := testConfig(t.TempDir())
	c := open(t, cfg)
	cluster := c.Image().ClusterID()
	epochs := map[model.NodeID]int64{}
	for _, id := range []model.NodeID{2, 3} {
		e, refused, msg := c.RegisterBroker(ctx(t), Registration{NodeID: id, ClusterID: cluster, Incarnation: "i", Features: metadata.SupportedFeatures(),
			LogDirs:   []string{"dir-a", "dir-b"},
			Endpoints: []metadata.Endpoint{{Name: "PLAINTEXT", Host: "h", Port: 9092, SecurityProtocol: "PLAINTEXT"}}})
		if refused != nil {
			t.Fatalf("register %d: %v %s", id, refused, msg)
		}
		epochs[id] = e
		if res := c.BrokerHeartbeat(ctx(t), Heartbeat{NodeID: id, Epoch: e, AppliedOffset: c.Image().Offset()}); res.Err != nil || res.IsFenced {
			t.Fatalf("unfence %d: %+v", id, res)
		}
	}
	res := createOne(t, c, CreateTopic{Name: "t", NumPartitions: 4, ReplicationFactor: 2, Assignments: nil})
	if res.ErrorCode != 0 {
		t.Fatalf("create: %s", res.ErrorMessage)
	}
	topic, _ := c.Image().Topic("t")
	// Broker 2 places its replicas of even partitions in dir-a, odd in dir-b.
	var as []DirAssignment
	for _, p := range topic.Partitions {
		if slices.Contains(p.Replicas, 2) {
			as = append(as, DirAssignment{TopicID: topic.ID, Partition: p.Partition, Directory: []string{"dir-a", "dir-b"}[p.Partition%2]})
		}
	}
	as = append(as, DirAssignment{TopicID: topic.ID, Partition: 9, Directory: "dir-a"}, DirAssignment{TopicID: model.TopicID{1}, Partition: 0, Directory: "dir-a"})
	errs, refused := c.AssignReplicasToDirs(ctx(t), 2, epochs[2], as)
	if refused != nil {
		t.Fatal(refused)
	}
	if n := len(errs); errs[n-2] != kerr.UnknownTopicOrPartition || errs[n-1] != kerr.UnknownTopicID || slices.ContainsFunc(errs[:n-2], func(e *kerr.Error) bool { return e != nil }) {
		t.Fatalf("assignment errors %v", errs)
	}
	if _, refused := c.AssignReplicasToDirs(ctx(t), 2, epochs[2]+1, as); refused != kerr.StaleBrokerEpoch {
		t.Fatalf("stale epoch: %v", refused)
	}
	if r := c.BrokerHeartbeat(ctx(t), Heartbeat{NodeID: 2, Epoch: epochs[2], AppliedOffset: c.Image().Offset(), OfflineLogDirs: []string{"dir-b"}}); r.Err != nil {
		t.Fatal(r.Err)
	}
	img := c.Image()
	topic, _ = img.Topic("t")
	for _, p := range topic.Partitions {
		if !slices.Contains(p.Replicas, 2) {
			continue
		}
		onB := p.Partition%2 == 1
		if got := slices.Contains(p.ISR, 2); got == onB {
			t.Errorf("partition %d (broker 2's replica in %s): in ISR %v", p.Partition, p.Directory(2), p.ISR)
		}
		if onB && (p.Leader == 2 || p.Leader == metadata.NoLeader) {
			t.Errorf("partition %d: leader %d, want its other replica", p.Partition, p.Leader)
		}
		if img.ReplicaOnline(p, 2) == onB {
			t.Errorf("partition %d: replica online %v", p.Partition, !onB)
		}
	}
	if b, _ := img.Broker(2); !slices.Equal(b.LogDirs, []string{"dir-a"}) {
		t.Fatalf("online dirs %v", b.LogDirs)
	}
	// The offline replica cannot rejoin the ISR.
	for _, p := range topic.Partitions {
		if p.Partition%2 == 1 && slices.Contains(p.Replicas, 2) {
			leaderEpoch := epochs[p.Leader]
			if b, ok := c.Image().Broker(p.Leader); ok {
				leaderEpoch = b.Epoch
			}
			rs, err := c.AlterPartition(ctx(t), p.Leader, leaderEpoch, []ISRChange{{TopicID: topic.ID, Partition: p.Partition,
				LeaderEpoch: p.LeaderEpoch, PartitionEpoch: p.PartitionEpoch, ISR: append(slices.Clone(p.ISR), 2)}})
			if err != nil || rs[0].Err != kerr.IneligibleReplica {
				t.Fatalf("ISR expansion with an offline replica: %v %v", err, rs[0].Err)
			}
		}
	}
}

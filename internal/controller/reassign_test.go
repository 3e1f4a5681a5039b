package controller

import (
	"fmt"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-io/samsa/internal/metadata"
	"github.com/samsa-io/samsa/internal/model"
)

// reassignFixture is a controller with brokers 1-4 registered and topic
// "r" of one partition on replicas.
func reassignFixture(t *testing.T, replicas ...int32) *Controller {
	t.Helper()
	c := open(t, testConfig(t.TempDir()))
	registerBrokers(t, c, 2, 3, 4)
	res := createOne(t, c, CreateTopic{Name: "r", NumPartitions: -1, ReplicationFactor: -1, Assignments: map[int32][]int32{0: replicas}})
	if res.ErrorCode != 0 {
		t.Fatalf("create: %s", res.ErrorMessage)
	}
	return c
}

func reassign(t *testing.T, c *Controller, allowRF bool, topic string, partition int32, replicas []model.NodeID) ReassignResult {
	t.Helper()
	res, err := c.AlterPartitionReassignments(ctx(t), allowRF, []ReassignTopic{{Name: topic, Partitions: []ReassignPartition{{Partition: partition, Replicas: replicas}}}})
	if err != nil || len(res) != 1 {
		t.Fatalf("AlterPartitionReassignments: %v, %d results", err, len(res))
	}
	return res[0]
}

func partitionState(t *testing.T, c *Controller) string {
	t.Helper()
	p, ok := c.Image().Partition(model.TopicPartition{Topic: "r", Partition: 0})
	if !ok {
		t.Fatal("no partition r-0")
	}
	return fmt.Sprintf("leader=%d leaderEpoch=%d replicas=%v isr=%v adding=%v removing=%v",
		p.Leader, p.LeaderEpoch, p.Replicas, p.ISR, p.AddingReplicas, p.RemovingReplicas)
}

func wantState(t *testing.T, c *Controller, want string) {
	t.Helper()
	if got := partitionState(t, c); got != want {
		t.Fatalf("r-0:\n got %s\nwant %s", got, want)
	}
}

// alterISR sends the leader's AlterPartition for r-0 at the current epochs.
func alterISR(t *testing.T, c *Controller, isr ...model.NodeID) ISRChangeResult {
	t.Helper()
	img := c.Image()
	p, _ := img.Partition(model.TopicPartition{Topic: "r", Partition: 0})
	tp, _ := img.Topic("r")
	b, _ := img.Broker(p.Leader)
	res, err := c.AlterPartition(ctx(t), p.Leader, b.Epoch, []ISRChange{{TopicID: tp.ID, Partition: 0,
		LeaderEpoch: p.LeaderEpoch, PartitionEpoch: p.PartitionEpoch, ISR: isr}})
	if err != nil {
		t.Fatalf("AlterPartition: %v", err)
	}
	return res[0]
}

// A reassignment adds the new replicas beside the old, waits for the ISR,
// and the AlterPartition that brings the last new replica in completes it:
// the old replicas go, and leadership leaves a removed leader for the
// first target replica in the ISR.
func TestReassignmentCompletesWhenTheISRCatchesUp(t *testing.T) {
	c := reassignFixture(t, 1, 2)
	if r := reassign(t, c, true, "r", 0, ids(3, 4)); r.ErrorCode != 0 {
		t.Fatalf("reassign: %s", r.ErrorMessage)
	}
	wantState(t, c, "leader=1 leaderEpoch=0 replicas=[3 4 1 2] isr=[1 2] adding=[3 4] removing=[1 2]")
	list := ListPartitionReassignments(c.Image(), nil)
	if got := fmt.Sprint(list); got != "map[r:[{0 [3 4 1 2] [3 4] [1 2]}]]" {
		t.Fatalf("list: %s", got)
	}

	// One new replica in: not yet.
	if r := alterISR(t, c, 1, 2, 3); r.Err != nil {
		t.Fatalf("alter: %v", r.Err)
	}
	wantState(t, c, "leader=1 leaderEpoch=0 replicas=[3 4 1 2] isr=[1 2 3] adding=[3 4] removing=[1 2]")

	// The last: completed in the same record, leader moved to 3.
	r := alterISR(t, c, 1, 2, 3, 4)
	if r.Err != kerr.NewLeaderElected || r.Leader != 3 {
		t.Fatalf("completing alter: %v leader %d, want NEW_LEADER_ELECTED and leader 3", r.Err, r.Leader)
	}
	wantState(t, c, "leader=3 leaderEpoch=1 replicas=[3 4] isr=[3 4] adding=[] removing=[]")
	if list := ListPartitionReassignments(c.Image(), nil); len(list) != 0 {
		t.Fatalf("list after completion: %v", list)
	}
}

// A leader the reassignment keeps stays leader; the removed follower is
// dropped, which bumps the leader epoch to fence it.
func TestReassignmentKeepsAKeptLeader(t *testing.T) {
	c := reassignFixture(t, 1, 2)
	reassign(t, c, true, "r", 0, ids(1, 3))
	wantState(t, c, "leader=1 leaderEpoch=0 replicas=[1 3 2] isr=[1 2] adding=[3] removing=[2]")
	if r := alterISR(t, c, 1, 2, 3); r.Err != nil {
		t.Fatalf("alter: %v", r.Err)
	}
	wantState(t, c, "leader=1 leaderEpoch=1 replicas=[1 3] isr=[1 3] adding=[] removing=[]")
}

// A reassignment the ISR already satisfies completes at once.
func TestReassignmentReorderCompletesAtOnce(t *testing.T) {
	c := reassignFixture(t, 1, 2)
	reassign(t, c, true, "r", 0, ids(2, 1))
	wantState(t, c, "leader=1 leaderEpoch=0 replicas=[2 1] isr=[1 2] adding=[] removing=[]")
	reassign(t, c, true, "r", 0, ids(2))
	wantState(t, c, "leader=2 leaderEpoch=1 replicas=[2] isr=[2] adding=[] removing=[]")
}

// Cancelling goes back to the original replicas and takes the adding
// replicas out of the ISR; a second cancel finds none in progress.
func TestReassignmentCancel(t *testing.T) {
	c := reassignFixture(t, 1, 2)
	reassign(t, c, true, "r", 0, ids(3, 4))
	alterISR(t, c, 1, 2, 3)
	if r := reassign(t, c, true, "r", 0, nil); r.ErrorCode != 0 {
		t.Fatalf("cancel: %s", r.ErrorMessage)
	}
	wantState(t, c, "leader=1 leaderEpoch=1 replicas=[1 2] isr=[1 2] adding=[] removing=[]")
	if r := reassign(t, c, true, "r", 0, nil); r.ErrorCode != kerr.NoReassignmentInProgress.Code {
		t.Fatalf("second cancel: %d %s", r.ErrorCode, r.ErrorMessage)
	}
}

// A cancel whose ISR holds only adding replicas would be an unclean
// election: refused unless the topic allows one.
func TestReassignmentCancelNeedingAnUncleanElection(t *testing.T) {
	p := metadata.PartitionImage{Replicas: ids(3, 1), ISR: ids(3), Leader: 3, AddingReplicas: ids(3), RemovingReplicas: ids(1)}
	if _, f := revertTarget(p, false); f == nil || f.err != kerr.InvalidReplicaAssignment {
		t.Fatalf("revert without unclean: %v", f)
	}
	got, f := revertTarget(p, true)
	if f != nil || !slices.Equal(got.replicas, ids(1)) || !slices.Equal(got.isr, ids(1)) {
		t.Fatalf("revert with unclean: %v %v", got, f)
	}
}

func TestReassignmentErrors(t *testing.T) {
	c := reassignFixture(t, 1, 2)
	for _, tc := range []struct {
		name      string
		topic     string
		partition int32
		replicas  []model.NodeID
		allowRF   bool
		want      *kerr.Error
	}{
		{"unknown topic", "nope", 0, ids(1), true, kerr.UnknownTopicOrPartition},
		{"unknown partition", "r", 1, ids(1), true, kerr.UnknownTopicOrPartition},
		{"negative partition", "r", -1, ids(1), true, kerr.UnknownTopicOrPartition},
		{"empty", "r", 0, []model.NodeID{}, true, kerr.InvalidReplicaAssignment},
		{"duplicate", "r", 0, ids(3, 3), true, kerr.InvalidReplicaAssignment},
		{"unregistered", "r", 0, ids(3, 9), true, kerr.InvalidReplicaAssignment},
		{"cancel with none", "r", 0, nil, true, kerr.NoReassignmentInProgress},
		{"rf change refused", "r", 0, ids(3), false, kerr.InvalidReplicationFactor},
		{"rf kept allowed", "r", 0, ids(3, 4), false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := reassign(t, c, tc.allowRF, tc.topic, tc.partition, tc.replicas)
			if tc.want == nil {
				if r.ErrorCode != 0 {
					t.Fatalf("got %d %s", r.ErrorCode, r.ErrorMessage)
				}
				return
			}
			if r.ErrorCode != tc.want.Code || r.ErrorMessage == "" {
				t.Fatalf("got %d %q, want %s", r.ErrorCode, r.ErrorMessage, tc.want.Message)
			}
		})
	}
	// During a reassignment of 2 replicas the count compared is the
	// original one.
	if r := reassign(t, c, false, "r", 0, ids(4, 1)); r.ErrorCode != 0 {
		t.Fatalf("rf kept during a reassignment: %s", r.ErrorMessage)
	}
}

// ListPartitionReassignments with named partitions leaves out unknown
// ones and those not being reassigned.
func TestListPartitionReassignmentsNamed(t *testing.T) {
	c := reassignFixture(t, 1, 2)
	reassign(t, c, true, "r", 0, ids(2, 3))
	got := ListPartitionReassignments(c.Image(), map[string][]int32{"r": {0, 5}, "nope": {0}})
	if fmt.Sprint(got) != "map[r:[{0 [2 3 1] [3] [1]}]]" {
		t.Fatalf("list: %v", got)
	}
	if got := ListPartitionReassignments(c.Image(), map[string][]int32{"r": {5}}); len(got) != 0 {
		t.Fatalf("list of an unknown partition: %v", got)
	}
}

// An unclean election that leaves only target replicas in the ISR
// completes the move in the same record, as Kafka's builder does on every
// change: moving 1 to 2, with 1 gone before 2 caught up.
func TestReassignmentCompletedByAnUncleanElection(t *testing.T) {
	c := open(t, testConfig(t.TempDir()))
	registerBrokers(t, c, 2, 3, 4)
	res := createOne(t, c, CreateTopic{Name: "r", NumPartitions: -1, ReplicationFactor: -1, Assignments: map[int32][]int32{0: {1}},
		Configs: map[string]*string{"unclean.leader.election.enable": sp("true")}})
	if res.ErrorCode != 0 {
		t.Fatalf("create: %s", res.ErrorMessage)
	}
	reassign(t, c, true, "r", 0, ids(2))
	wantState(t, c, "leader=1 leaderEpoch=0 replicas=[2 1] isr=[1] adding=[2] removing=[1]")
	c.writeMu.Lock()
	recs := c.elections(c.Image(), func(id model.NodeID) bool { return id != 1 }, nil)
	err := c.proposeLocked(ctx(t), recs)
	c.writeMu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	wantState(t, c, "leader=2 leaderEpoch=1 replicas=[2] isr=[2] adding=[] removing=[]")
}

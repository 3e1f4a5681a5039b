package broker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/model"
)

// reassigning lists the partitions of topic being reassigned, through
// kadm as an operator's tool would, and with a null topic list.
func (c *testCluster) reassigning(ctx context.Context, adm *kadm.Client, topic string, partitions int32) []kadm.ListPartitionReassignmentsResponse {
	c.t.Helper()
	set := kadm.TopicsSet{}
	for p := range partitions {
		set.Add(topic, p)
	}
	// The two lists are two requests: a move may end between them, so they
	// must agree only when the named list, asked again, has not changed.
	for attempt := 0; ; attempt++ {
		listed, err := adm.ListPartitionReassignments(ctx, set)
		if err != nil {
			c.t.Fatalf("ListPartitionReassignments: %v", err)
		}
		all := kmsg.NewPtrListPartitionReassignmentsRequest()
		resp, err := all.RequestWith(ctx, c.liveClient())
		if err != nil || resp.ErrorCode != 0 {
			c.t.Fatalf("ListPartitionReassignments of all: %v %d", err, resp.ErrorCode)
		}
		n := len(listed.Sorted())
		if (n == 0) == (len(resp.Topics) == 0) {
			return listed.Sorted()
		}
		again, err := adm.ListPartitionReassignments(ctx, set)
		if err != nil {
			c.t.Fatalf("ListPartitionReassignments: %v", err)
		}
		if len(again.Sorted()) == n && attempt >= 3 {
			c.t.Fatalf("the named list has %d partitions, the list of all %d topics", n, len(resp.Topics))
		}
	}
}

// replicasOf are a partition's replicas as the active controller has them.
func (c *testCluster) replicasOf(topic string, partition int32) []model.NodeID {
	img := c.activeController().get().ctrl.Image()
	p, _ := img.Partition(model.TopicPartition{Topic: topic, Partition: partition})
	return p.Replicas
}

// TestClusterReassignmentUnderLoad moves partitions to other brokers
// while a producer writes acks=all: one from replicas 1,2 to 3,2 (its
// leader, 1, leaves), one from 2,1 to 3 alone (a replication factor
// change). Once ListPartitionReassignments is empty, the new replicas
// hold every acknowledged record, read from the new leaders, and the
// brokers that lost a partition have deleted its log.
func TestClusterReassignmentUnderLoad(t *testing.T) {
	c := newTestCluster(t, 3, map[string]string{"replica.fetch.backoff.ms": "50"})
	adm, ctx := c.admin()
	const topic = "moving"
	create := kmsg.NewPtrCreateTopicsRequest()
	ct := kmsg.NewCreateTopicsRequestTopic()
	ct.Topic, ct.NumPartitions, ct.ReplicationFactor = topic, -1, -1
	for p, rs := range [][]int32{{1, 2}, {2, 1}} {
		a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
		a.Partition, a.Replicas = int32(p), rs
		ct.ReplicaAssignment = append(ct.ReplicaAssignment, a)
	}
	create.Topics = append(create.Topics, ct)
	if resp, err := create.RequestWith(ctx, c.liveClient()); err != nil || resp.Topics[0].ErrorCode != 0 {
		t.Fatalf("create: %v %+v", err, resp)
	}
	c.produceN(topic, 200, "before")

	// A producer writes throughout; acked holds what it acknowledged.
	var mu sync.Mutex
	acked := map[string]bool{}
	pctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		cl, err := kgo.NewClient(kgo.SeedBrokers(c.bootstrap()...), kgo.RequiredAcks(kgo.AllISRAcks()),
			kgo.RecordPartitioner(kgo.RoundRobinPartitioner()), kgo.MetadataMinAge(100*time.Millisecond))
		if err != nil {
			t.Error(err)
			return
		}
		defer cl.Close()
		for i := 0; pctx.Err() == nil; i++ {
			v := fmt.Sprintf("during-%d", i)
			cl.Produce(pctx, &kgo.Record{Topic: topic, Value: []byte(v)}, func(r *kgo.Record, err error) {
				if err == nil {
					mu.Lock()
					acked[v] = true
					mu.Unlock()
				}
			})
			time.Sleep(time.Millisecond)
		}
		cl.Flush(context.Background())
	}()
	time.Sleep(300 * time.Millisecond)

	var req kadm.AlterPartitionAssignmentsReq
	req.Assign(topic, 0, []int32{3, 2})
	req.Assign(topic, 1, []int32{3})
	res, err := adm.AlterPartitionAssignments(ctx, req)
	if err != nil || res.Error() != nil {
		t.Fatalf("AlterPartitionAssignments: %v %v", err, res.Error())
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(c.reassigning(ctx, adm, topic, 2)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("still reassigning: %+v", c.reassigning(ctx, adm, topic, 2))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got := c.replicasOf(topic, 0); !slices.Equal(got, []model.NodeID{3, 2}) {
		t.Fatalf("%s-0 replicas %v, want [3 2]", topic, got)
	}
	if got := c.replicasOf(topic, 1); !slices.Equal(got, []model.NodeID{3}) {
		t.Fatalf("%s-1 replicas %v, want [3]", topic, got)
	}
	time.Sleep(300 * time.Millisecond) // writes to the new leaders too
	stop()
	wg.Wait()
	mu.Lock()
	during := len(acked)
	mu.Unlock()
	if during == 0 {
		t.Fatal("nothing acknowledged during the move")
	}
	for i := range 200 {
		acked[fmt.Sprintf("before-%d", i)] = true
	}

	// Every acknowledged record is on the new leaders.
	got := c.consumeAll(topic)
	var lost []string
	for v := range acked {
		if !got[v] {
			lost = append(lost, v)
		}
	}
	if len(lost) > 0 {
		t.Fatalf("%d of %d acknowledged records lost, e.g. %v", len(lost), len(acked), lost[:min(5, len(lost))])
	}
	t.Logf("%d acknowledged records (%d during the move), all on the new replicas", len(acked), during)

	// The replicas that left deleted their logs: 1 both, 2 partition 1.
	for _, gone := range []struct {
		node      int32
		partition int32
	}{{1, 0}, {1, 1}, {2, 1}} {
		b := c.node(gone.node).get()
		tp := model.TopicPartition{Topic: topic, Partition: gone.partition}
		deadline := time.Now().Add(10 * time.Second)
		for {
			_, err := os.Stat(b.logs.PartitionDir(tp))
			if errors.Is(err, os.ErrNotExist) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("node %d still has %s's log (%v)", gone.node, tp, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	// And the two replicas of partition 0 hold the same log.
	deadline = time.Now().Add(10 * time.Second)
	for {
		a, hwA := logBytes(t, c.node(2).get(), topic, 0)
		b, hwB := logBytes(t, c.node(3).get(), topic, 0)
		if hwA == hwB && slices.Equal(a, b) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s-0 differs: node 2 high watermark %d, %d bytes; node 3 %d, %d bytes", topic, hwA, len(a), hwB, len(b))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// consumeAll reads every record of topic from the start to the end
// offsets, from the partitions' leaders, and returns the values.
func (c *testCluster) consumeAll(topic string) map[string]bool {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ends := c.endOffsets(ctx, topic)
	offsets := map[int32]kgo.Offset{}
	for p := range ends {
		offsets[p] = kgo.NewOffset().AtStart()
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.bootstrap()...), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: offsets}))
	if err != nil {
		c.t.Fatal(err)
	}
	defer cl.Close()
	got := map[string]bool{}
	next := map[int32]int64{}
	for {
		done := true
		for p, end := range ends {
			done = done && next[p] >= end
		}
		if done {
			return got
		}
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			c.t.Fatalf("consume %s: reached %v of %v", topic, next, ends)
		}
		fs.EachRecord(func(r *kgo.Record) {
			got[string(r.Value)] = true
			next[r.Partition] = r.Offset + 1
		})
	}
}

// TestClusterReassignmentCancel starts a move to a broker that is down, so
// it cannot finish; Metadata lists the union of the replicas meanwhile, as
// Kafka's does; a cancel goes back to the original replicas, and a second
// one finds none in progress.
func TestClusterReassignmentCancel(t *testing.T) {
	c := newTestCluster(t, 3, nil)
	adm, ctx := c.admin()
	const topic = "staying"
	create := kmsg.NewPtrCreateTopicsRequest()
	ct := kmsg.NewCreateTopicsRequestTopic()
	ct.Topic, ct.NumPartitions, ct.ReplicationFactor = topic, -1, -1
	a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
	a.Partition, a.Replicas = 0, []int32{1, 2}
	ct.ReplicaAssignment = append(ct.ReplicaAssignment, a)
	create.Topics = append(create.Topics, ct)
	if resp, err := create.RequestWith(ctx, c.liveClient()); err != nil || resp.Topics[0].ErrorCode != 0 {
		t.Fatalf("create: %v %+v", err, resp)
	}
	c.produceN(topic, 50, "r")
	c.kill(c.node(3))

	var req kadm.AlterPartitionAssignmentsReq
	req.Assign(topic, 0, []int32{1, 3})
	if res, err := adm.AlterPartitionAssignments(ctx, req); err != nil || res.Error() != nil {
		t.Fatalf("AlterPartitionAssignments: %v %v", err, res.Error())
	}
	listed := c.reassigning(ctx, adm, topic, 1)
	if len(listed) != 1 || fmt.Sprint(listed[0].Replicas, listed[0].AddingReplicas, listed[0].RemovingReplicas) != "[1 3 2] [3] [2]" {
		t.Fatalf("listed %+v, want replicas [1 3 2] adding [3] removing [2]", listed)
	}
	// Every broker's Metadata lists the union once it has the change
	// (brokers apply the metadata log each at its own pace).
	cl := c.liveClient()
	for _, n := range []int32{1, 2} {
		deadline := time.Now().Add(5 * time.Second)
		for {
			req := kmsg.NewPtrMetadataRequest()
			rt := kmsg.NewMetadataRequestTopic()
			rt.Topic = kmsg.StringPtr(topic)
			req.Topics = append(req.Topics, rt)
			resp, err := cl.Broker(int(n)).Request(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			got := resp.(*kmsg.MetadataResponse).Topics[0].Partitions[0].Replicas
			if slices.Equal(got, []int32{1, 3, 2}) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("node %d's Metadata replicas %v during the move, want the union [1 3 2]", n, got)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	// The leader counts the move, and not the catching-up replica as a
	// missing one.
	s, _ := scrapeHTTP(t, c.node(1).get())
	if got := s.sum("samsa_reassigning_partitions"); got != 1 {
		t.Errorf("leader's samsa_reassigning_partitions %v during the move, want 1", got)
	}
	if got := s.sum("samsa_under_replicated_partitions"); got != 0 {
		t.Errorf("leader's samsa_under_replicated_partitions %v during the move, want 0", got)
	}

	var cancelReq kadm.AlterPartitionAssignmentsReq
	cancelReq.CancelAssign(topic, 0)
	if res, err := adm.AlterPartitionAssignments(ctx, cancelReq); err != nil || res.Error() != nil {
		t.Fatalf("cancel: %v %v", err, res.Error())
	}
	if listed := c.reassigning(ctx, adm, topic, 1); len(listed) != 0 {
		t.Fatalf("listed after the cancel: %+v", listed)
	}
	if got := c.replicasOf(topic, 0); !slices.Equal(got, []model.NodeID{1, 2}) {
		t.Fatalf("replicas %v after the cancel, want [1 2]", got)
	}
	// Node 1 learns of the cancel from its metadata, a moment after the
	// controller.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		s, _ := scrapeHTTP(t, c.node(1).get())
		if got := s.sum("samsa_reassigning_partitions"); got == 0 {
			break
		} else if time.Now().After(deadline) {
			t.Errorf("samsa_reassigning_partitions %v after the cancel, want 0", got)
			break
		}
	}
	res, err := adm.AlterPartitionAssignments(ctx, cancelReq)
	if err != nil {
		t.Fatal(err)
	}
	if e := res.Error(); e == nil || !errors.Is(e, kerr.NoReassignmentInProgress) {
		t.Fatalf("second cancel: %v, want NO_REASSIGNMENT_IN_PROGRESS", e)
	}
	if got := c.consumeAll(topic); len(got) != 50 {
		t.Fatalf("%d records after the cancel, want 50", len(got))
	}
}

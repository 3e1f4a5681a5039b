package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/devcluster"
	"github.com/samsa-io/samsa/internal/history"
	"github.com/samsa-io/samsa/internal/record"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// TestNetworkPartitionIsolatesTheLeader cuts a partition's leader off from
// its two followers (network namespaces, netns_test.go) while an acks=all
// idempotent producer and a read_committed consumer run; the test's
// clients still reach every node. The isolated leader must not
// acknowledge an acks=all write with min ISR 2 (it cannot reach the
// followers, nor the controller to shrink its ISR); the majority side
// fences it and elects a follower, and the producer goes on there. Once
// healed, the old leader rejoins as a follower and truncates the tail it
// appended alone: the final read holds none of it, every replica's log is
// the same batch for batch, and the history checker finds nothing.
func TestNetworkPartitionIsolatesTheLeader(t *testing.T) {
	nn := newNetns(t, 3)
	c := startClusterWith(t, devcluster.Config{Nodes: 3, BasePort: 9092, Hosts: nn.Hosts(), Prefix: nn.Prefix})
	const topic = "partitioned"
	createTopic(t, c, topic, 1, 3, 2)
	histPath := filepath.Join(t.TempDir(), "history.jsonl")
	w, err := history.Create(histPath)
	if err != nil {
		t.Fatal(err)
	}
	load := startLoad(t, c, w, topic, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	if _, _, ok := load.acksAfter(ctx, 0, time.Now(), time.Now()); !ok {
		t.Fatal("no acknowledgement before the partition")
	}

	old := leaderOf(ctx, c, topic, 0)
	var followers []int32
	for _, n := range c.Nodes() {
		if n.ID != old {
			followers = append(followers, n.ID)
		}
	}
	t0 := time.Now()
	for _, f := range followers {
		nn.Partition(int(old), int(f))
	}
	t.Logf("cut node %d (the leader) off from nodes %s", old, nodeList(followers))

	// A producer that reaches only the isolated leader, whose metadata
	// still names itself: its acks=all write must not be acknowledged.
	probe := probeIsolated(t, c.Node(old).Addr(), topic, w)

	// The majority elects a follower; the producer goes on there.
	var leaderAt time.Time
	for {
		if l := leaderOf(ctx, c, topic, 0, old); l >= 0 && l != old {
			leaderAt = time.Now()
			t.Logf("node %d leads after %v", l, leaderAt.Sub(t0).Round(time.Millisecond))
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("no new leader on the majority side after %v", time.Since(t0))
		}
		time.Sleep(50 * time.Millisecond)
	}
	first, _, ok := load.acksAfter(ctx, 0, leaderAt, leaderAt)
	if !ok {
		t.Fatalf("no acknowledgement on the majority side within %v of the cut", time.Since(t0))
	}
	t.Logf("first acknowledgement after the cut: %v", first.Sub(t0).Round(time.Millisecond))
	if err := <-probe; err == nil {
		t.Error("the isolated leader acknowledged an acks=all write with min.insync.replicas 2")
	} else {
		t.Logf("the isolated leader's answer to acks=all: %v", err)
	}

	nn.Heal()
	if err := waitFullISR(ctx, c, topic, 3); err != nil {
		t.Fatal(err)
	}
	t.Logf("healed: node %d is back in the ISR %v after the cut", old, time.Since(t0).Round(time.Millisecond))
	load.stopProducers(t)
	ends := endOffsets(t, c, topic)
	load.drainConsumer(t, ends)
	finalRead(t, c, w, topic, ends)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	load.report(t)
	checkHistory(t, histPath)
	h, err := history.ReadFiles(histPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range h.Finals {
		if strings.HasPrefix(f.Value, "probe-") {
			t.Errorf("the isolated leader's unacknowledged record %s survived at offset %d", f.Value, f.Offset)
		}
	}
	if log, _ := os.ReadFile(c.Node(old).LogPath()); !strings.Contains(string(log), `msg="truncated a log tail the leader does not have" component=broker partition=`+topic+"-0") {
		t.Errorf("node %d's log tells of no truncation of %s-0", old, topic)
	}
	replicas := replicaNodes(t, c, topic)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	assertReplicasIdentical(t, c, topic, replicas)
}

// probeIsolated sends one acks=all Produce to the broker at addr itself,
// never to another (a client would move to the new leader and succeed
// there), reports the outcome when it has one (nil: acknowledged), and
// writes it to the history.
func probeIsolated(t *testing.T, addr, topic string, w *history.Writer) <-chan error {
	t.Helper()
	value := fmt.Sprintf("probe-%d", time.Now().UnixNano())
	b := record.Batch{ProducerID: record.NoProducerID, ProducerEpoch: record.NoProducerEpoch, BaseSequence: record.NoSequence,
		Records: []record.Record{{Timestamp: time.Now().UnixMilli(), Value: []byte(value)}}}
	batch, err := b.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis = -1, 5000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	// Kafka 3.0's versions: Produce v9 names topics (v13 takes IDs).
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.MaxVersions(kversion.V3_0_0()))
	if err != nil {
		t.Fatal(err)
	}
	out := make(chan error, 1)
	go func() {
		defer cl.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		ev := history.Produce{Client: "probe", Topic: topic, Value: value, Offset: -1}
		resp, err := cl.SeedBrokers()[0].Request(ctx, req)
		if err == nil {
			sp := resp.(*kmsg.ProduceResponse).Topics[0].Partitions[0]
			err = kerr.ErrorForCode(sp.ErrorCode)
			ev.Offset = sp.BaseOffset
		}
		ev.Time = time.Now()
		switch {
		case err == nil:
			ev.Outcome = history.OutcomeAck
		case errors.Is(err, context.DeadlineExceeded):
			ev.Outcome, ev.Error, ev.Offset = history.OutcomeUnknown, err.Error(), -1
		default:
			ev.Outcome, ev.Error, ev.Retriable, ev.Offset = history.OutcomeFail, err.Error(), kerr.IsRetriable(err), -1
		}
		if werr := w.Write(ev); werr != nil {
			panic(werr)
		}
		out <- err
	}()
	return out
}

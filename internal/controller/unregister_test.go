package controller

import (
	"slices"
	"strconv"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-io/samsa/internal/metadata"
	"github.com/samsa-io/samsa/internal/model"
)

// TestUnregisterBroker: unregistering a broker takes it out of every ISR
// and every leadership in the same batch as its registration, keeps its
// replicas in the replica lists, and leaves a partition it alone was in
// sync for without a leader (its last ISR member kept, as when fenced). Its
// old epoch is stale afterwards; a second unregistration, or one of a broker
// never registered, is BROKER_ID_NOT_REGISTERED; and it may register again,
// with a new epoch.
func TestUnregisterBroker(t *testing.T) {
	c := open(t, testConfig(t.TempDir()))
	epochs := map[model.NodeID]int64{}
	for _, id := range []model.NodeID{2, 3} {
		epoch, refused, msg := c.RegisterBroker(ctx(t), Registration{NodeID: id, ClusterID: c.Image().ClusterID(), Incarnation: "i",
			Endpoints: []metadata.Endpoint{{Name: "PLAINTEXT", Host: "h", Port: 9092, SecurityProtocol: "PLAINTEXT"}}, Features: metadata.SupportedFeatures()})
		if refused != nil {
			t.Fatalf("register %d: %v %s", id, refused, msg)
		}
		if res := c.BrokerHeartbeat(ctx(t), Heartbeat{NodeID: id, Epoch: epoch, AppliedOffset: epoch}); res.Err != nil || res.IsFenced {
			t.Fatalf("heartbeat %d: %+v", id, res)
		}
		epochs[id] = epoch
	}
	if res := createOne(t, c, CreateTopic{Name: "t", NumPartitions: -1, ReplicationFactor: -1, Assignments: map[int32][]int32{0: {2, 1, 3}, 1: {1, 2, 3}}}); res.ErrorCode != 0 {
		t.Fatalf("create t: %s", res.ErrorMessage)
	}
	if res := createOne(t, c, CreateTopic{Name: "alone", NumPartitions: -1, ReplicationFactor: -1, Assignments: map[int32][]int32{0: {2}}}); res.ErrorCode != 0 {
		t.Fatalf("create alone: %s", res.ErrorMessage)
	}

	if code, msg := c.UnregisterBroker(ctx(t), 2); code != nil {
		t.Fatalf("unregister 2: %v %s", code, msg)
	}
	img := c.Image()
	if _, ok := img.Broker(2); ok {
		t.Fatal("broker 2 is still registered")
	}
	for _, tp := range []model.TopicPartition{{Topic: "t", Partition: 0}, {Topic: "t", Partition: 1}} {
		p, _ := img.Partition(tp)
		if p.Leader == 2 || p.Leader == metadata.NoLeader || slices.Contains(p.ISR, 2) || !slices.Contains(p.Replicas, 2) {
			t.Errorf("%s: leader %d isr %v replicas %v; want another leader, 2 out of the ISR and still a replica", tp, p.Leader, p.ISR, p.Replicas)
		}
	}
	if p, _ := img.Partition(model.TopicPartition{Topic: "alone"}); p.Leader != metadata.NoLeader || !slices.Equal(p.ISR, []model.NodeID{2}) {
		t.Errorf("alone-0: leader %d isr %v; want no leader and the last ISR member kept", p.Leader, p.ISR)
	}
	if res := c.BrokerHeartbeat(ctx(t), Heartbeat{NodeID: 2, Epoch: epochs[2], AppliedOffset: img.Offset()}); res.Err != kerr.StaleBrokerEpoch {
		t.Errorf("a heartbeat of the unregistered epoch: %v, want STALE_BROKER_EPOCH", res.Err)
	}
	for _, id := range []model.NodeID{2, 9} {
		if code, msg := c.UnregisterBroker(ctx(t), id); code != kerr.BrokerIDNotRegistered || msg != "Broker ID "+strconv.Itoa(int(id))+" is not currently registered" {
			t.Errorf("unregister %d: %v %q, want BROKER_ID_NOT_REGISTERED", id, code, msg)
		}
	}
	epoch, refused, msg := c.RegisterBroker(ctx(t), Registration{NodeID: 2, ClusterID: c.Image().ClusterID(), Incarnation: "i",
		Endpoints: []metadata.Endpoint{{Name: "PLAINTEXT", Host: "h", Port: 9092, SecurityProtocol: "PLAINTEXT"}}, Features: metadata.SupportedFeatures()})
	if refused != nil || epoch <= epochs[2] {
		t.Fatalf("registering again: epoch %d (was %d), %v %s", epoch, epochs[2], refused, msg)
	}
	if b, _ := c.Image().Broker(2); !b.Fenced {
		t.Error("broker 2 registered again unfenced")
	}
	// Broker 3 stays as it was.
	if b, ok := c.Image().Broker(3); !ok || b.Fenced || b.Epoch != epochs[3] {
		t.Errorf("broker 3: %+v %v", b, ok)
	}
}

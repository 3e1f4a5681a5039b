package controller

import (
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/samsa-io/samsa/internal/balance"
	"github.com/samsa-io/samsa/internal/metadata"
	"github.com/samsa-io/samsa/internal/model"
)

var (
	topicA = model.TopicID{1}
	topicB = model.TopicID{2}
)

// glueImage is a cluster of brokers 1-4 (racks a, a, b, b), broker 3
// fenced at 1000 s, broker 4 draining, topic a of two partitions (a-1
// being reassigned from [1 2] to [4 2]) with min ISR 2, topic b of one.
func glueImage(t *testing.T) *metadata.Image {
	t.Helper()
	recs := []metadata.Record{metadata.ClusterRecord{ClusterID: "c"}}
	for id, rack := range map[model.NodeID]string{1: "a", 2: "a", 3: "b", 4: "b"} {
		recs = append(recs, metadata.BrokerRegistration{NodeID: id, Incarnation: "i", Rack: rack, Epoch: 10})
	}
	recs = append(recs,
		metadata.BrokerFence{NodeID: 3, Epoch: 10, Fenced: true, FencedAtMs: 1_000_000},
		metadata.ConfigRecord{ResourceType: metadata.ResourceBroker, ResourceName: "4", Name: drainingConfig, Value: sp("TRUE")},
		metadata.TopicRecord{Name: "a", TopicID: topicA},
		metadata.PartitionRecord{TopicID: topicA, Partition: 0, Replicas: ids(1, 3), ISR: ids(1), Leader: 1},
		metadata.PartitionRecord{TopicID: topicA, Partition: 1, Replicas: ids(4, 2, 1), ISR: ids(1, 2), Leader: 1,
			AddingReplicas: ids(4), RemovingReplicas: ids(1)},
		metadata.ConfigRecord{ResourceType: metadata.ResourceTopic, ResourceName: "a", Name: "min.insync.replicas", Value: sp("2")},
		metadata.TopicRecord{Name: "b", TopicID: topicB},
		metadata.PartitionRecord{TopicID: topicB, Partition: 0, Replicas: ids(2, 1), ISR: ids(2, 1), Leader: 2},
	)
	img, err := metadata.Empty().Apply(recs...)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// The image as the planner sees it: racks, fenced brokers down since the
// recorded time (not since this controller learned of it), the drain flag
// from the per-broker config, a broker in controlled shutdown not alive,
// the topic's min ISR over the broker default, sizes by partition, and
// the reassignment in progress with the union of its replicas.
func TestClusterStateFromImage(t *testing.T) {
	img := glueImage(t)
	now := time.UnixMilli(5_000_000)
	shutting := func(id model.NodeID) bool { return id != 2 }
	sizes := map[model.TopicPartition]int64{{Topic: "a", Partition: 0}: 100, {Topic: "b", Partition: 0}: 7}
	st, inProgress := clusterState(img, brokerValues(t, nil), shutting, sizes, nil, now)
	want := balance.ClusterState{Now: now,
		Brokers: []balance.Broker{
			{ID: 1, Rack: "a", Alive: true},
			{ID: 2, Rack: "a"}, // shutting down
			{ID: 3, Rack: "b", DownSince: time.UnixMilli(1_000_000)},
			{ID: 4, Rack: "b", Alive: true, Draining: true},
		},
		Partitions: []balance.Partition{
			{TopicPartition: model.TopicPartition{Topic: "a", Partition: 0}, Replicas: ids(1, 3), ISR: ids(1), Leader: 1, MinISR: 2, Bytes: 100},
			{TopicPartition: model.TopicPartition{Topic: "a", Partition: 1}, Replicas: ids(4, 2, 1), ISR: ids(1, 2), Leader: 1, MinISR: 2},
			{TopicPartition: model.TopicPartition{Topic: "b", Partition: 0}, Replicas: ids(2, 1), ISR: ids(2, 1), Leader: 2, MinISR: 1, Bytes: 7},
		},
	}
	if d := cmp.Diff(want, st); d != "" {
		t.Errorf("state (-want +got):\n%s", d)
	}
	if want := []model.TopicPartition{{Topic: "a", Partition: 1}}; !slices.Equal(inProgress, want) {
		t.Errorf("in progress %v, want %v", inProgress, want)
	}
}

// The settings come from the config, with the planner's defaults where
// the catalog's are the same, and CountAddedReplicas on: a reassignment
// here removes replicas only once the added ones are in sync.
func TestReadBalancerSettings(t *testing.T) {
	s := readBalancerSettings(brokerValues(t, map[string]string{"samsa.balancer.enable": "true",
		"samsa.balancer.max.concurrent.moves": "3", "samsa.balancer.broker.down.timeout.ms": "60000", "samsa.balancer.bytes.spread": "0"}))
	want := balance.DefaultOptions()
	want.MaxMoves, want.DownTimeout, want.BytesSpread, want.CountAddedReplicas = 3, time.Minute, 0, true
	if !s.enabled || s.interval != time.Minute || s.throttle != 100<<20 || !cmp.Equal(s.opts, want) {
		t.Errorf("settings %+v, want enabled, 1m, 100 MiB/s, %+v", s, want)
	}
	if def := readBalancerSettings(brokerValues(t, nil)); def.enabled {
		t.Error("the balancer is on by default")
	}
}

func TestEvacuatingAndStuckMoves(t *testing.T) {
	img := glueImage(t)
	for _, tt := range []struct {
		id      model.NodeID
		timeout time.Duration
		now     int64
		want    string
	}{
		{1, time.Hour, 5_000_000, ""},
		{4, time.Hour, 5_000_000, "broker 4 is draining"},
		{3, time.Hour, 4_599_999, ""},                                  // fenced at 1000 s: a millisecond short of the hour
		{3, time.Hour, 4_600_000, "broker 3 has been down for 1h0m0s"}, // the timeout reached
		{3, time.Hour, 5_000_000, "broker 3 has been down for 1h6m40s"},
		{3, 0, 9_000_000, ""}, // 0: never for being down
		{9, time.Hour, 5_000_000, "broker 9 is not registered"},
	} {
		got := evacuating(img, tt.id, tt.timeout, time.UnixMilli(tt.now))
		if got != tt.want {
			t.Errorf("evacuating(%d, %v, %d) = %q, want %q", tt.id, tt.timeout, tt.now, got, tt.want)
		}
	}
	// a-1 adds a replica on draining broker 4: the move is cancelled.
	got := stuckMoves(img, time.Hour, time.UnixMilli(5_000_000))
	if len(got) != 1 || got[0].tp != (model.TopicPartition{Topic: "a", Partition: 1}) || !strings.Contains(got[0].reason, "broker 4 is draining") {
		t.Errorf("stuck moves %+v", got)
	}
	if d := nextDownDeadline(img, time.Hour, time.UnixMilli(2_000_000)); !d.Equal(time.UnixMilli(4_600_000)) {
		t.Errorf("next down deadline %v", d)
	}
	if d := nextDownDeadline(img, time.Hour, time.UnixMilli(4_600_000)); !d.IsZero() {
		t.Errorf("next down deadline after it passed: %v", d)
	}
}

// The throttle of the moves in progress, as kafka-reassign-partitions.sh
// sets it, and taken away once the moves are done.
func TestThrottleRecords(t *testing.T) {
	img := glueImage(t)
	got := recordLines(throttleRecords(img, 1000))
	want := []string{
		"topic a follower.replication.throttled.replicas=1:4",
		"topic a leader.replication.throttled.replicas=1:1,1:2",
		"broker 1 follower.replication.throttled.rate=1000",
		"broker 1 leader.replication.throttled.rate=1000",
		"broker 2 follower.replication.throttled.rate=1000",
		"broker 2 leader.replication.throttled.rate=1000",
		"broker 4 follower.replication.throttled.rate=1000",
		"broker 4 leader.replication.throttled.rate=1000",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("throttle (-want +got):\n%s", d)
	}
	// Applied, the same call writes nothing more.
	next, err := img.Apply(throttleRecords(img, 1000)...)
	if err != nil {
		t.Fatal(err)
	}
	if again := throttleRecords(next, 1000); len(again) != 0 {
		t.Errorf("a second pass writes %v", recordLines(again))
	}
	// The move done: every throttle goes, but the operator's cluster
	// default and other configs stay.
	done, err := next.Apply(
		metadata.PartitionChange{TopicID: topicA, Partition: 1, Replicas: ids(4, 2), ISR: ids(4, 2), Leader: new(model.NodeID(4)), AddingReplicas: &[]model.NodeID{}, RemovingReplicas: &[]model.NodeID{}},
		metadata.ConfigRecord{ResourceType: metadata.ResourceBroker, ResourceName: "", Name: leaderThrottledRate, Value: sp("5")},
	)
	if err != nil {
		t.Fatal(err)
	}
	want = []string{
		"topic a delete follower.replication.throttled.replicas",
		"topic a delete leader.replication.throttled.replicas",
		"broker 1 delete follower.replication.throttled.rate",
		"broker 1 delete leader.replication.throttled.rate",
		"broker 2 delete follower.replication.throttled.rate",
		"broker 2 delete leader.replication.throttled.rate",
		"broker 4 delete follower.replication.throttled.rate",
		"broker 4 delete leader.replication.throttled.rate",
	}
	if d := cmp.Diff(want, recordLines(throttleRecords(done, 1000))); d != "" {
		t.Errorf("clearing (-want +got):\n%s", d)
	}
}

func recordLines(recs []metadata.Record) []string {
	var out []string
	for _, r := range recs {
		c := r.(metadata.ConfigRecord)
		kind := "topic"
		if c.ResourceType == metadata.ResourceBroker {
			kind = "broker"
		}
		if c.Value == nil {
			out = append(out, fmt.Sprintf("%s %s delete %s", kind, c.ResourceName, c.Name))
		} else {
			out = append(out, fmt.Sprintf("%s %s %s=%s", kind, c.ResourceName, c.Name, *c.Value))
		}
	}
	return out
}

// The trigger changes with what should make the balancer plan at once,
// and not with ISR or leader changes.
func TestBalanceTrigger(t *testing.T) {
	img := glueImage(t)
	s := readBalancerSettings(brokerValues(t, map[string]string{"samsa.balancer.enable": "true"}))
	base := balanceTrigger(img, s)
	apply := func(recs ...metadata.Record) *metadata.Image {
		next, err := img.Apply(recs...)
		if err != nil {
			t.Fatal(err)
		}
		return next
	}
	isr := apply(metadata.PartitionChange{TopicID: topicB, Partition: 0, ISR: ids(2)})
	if balanceTrigger(isr, s) != base {
		t.Error("an ISR change triggers a round")
	}
	for name, next := range map[string]*metadata.Image{
		"unfenced":     apply(metadata.BrokerFence{NodeID: 3, Epoch: 10}),
		"drain ended":  apply(metadata.ConfigRecord{ResourceType: metadata.ResourceBroker, ResourceName: "4", Name: drainingConfig}),
		"move started": apply(metadata.PartitionChange{TopicID: topicB, Partition: 0, Replicas: ids(3, 2, 1), AddingReplicas: &[]model.NodeID{3}, RemovingReplicas: &[]model.NodeID{1}}),
		"registered":   apply(metadata.BrokerRegistration{NodeID: 5, Incarnation: "j", Epoch: 11}),
	} {
		if balanceTrigger(next, s) == base {
			t.Errorf("%s does not trigger a round", name)
		}
	}
	s.opts.MaxMoves++
	if balanceTrigger(img, s) == base {
		t.Error("a settings change does not trigger a round")
	}
}

// A replica on a log directory its broker reported failed is offline to
// the planner, since when the controller first knew: noteOfflineDirs
// starts the clock once and forgets a directory once it is repaired.
func TestClusterStateOfflineReplicas(t *testing.T) {
	recs := []metadata.Record{metadata.ClusterRecord{ClusterID: "c"},
		metadata.BrokerRegistration{NodeID: 1, Incarnation: "i", Epoch: 10, LogDirs: []string{"d1", "d2"}},
		metadata.BrokerRegistration{NodeID: 2, Incarnation: "i", Epoch: 10, LogDirs: []string{"e1"}},
		metadata.TopicRecord{Name: "a", TopicID: topicA},
		metadata.PartitionRecord{TopicID: topicA, Partition: 0, Replicas: ids(1, 2), ISR: ids(1, 2), Leader: 1, Directories: []string{"d1", "e1"}},
		metadata.PartitionRecord{TopicID: topicA, Partition: 1, Replicas: ids(2, 1), ISR: ids(2, 1), Leader: 2, Directories: []string{"e1", "d2"}},
	}
	img, err := metadata.Empty().Apply(recs...)
	if err != nil {
		t.Fatal(err)
	}
	failed, err := img.Apply(metadata.BrokerRegistrationChange{NodeID: 1, Epoch: 10, LogDirs: []string{"d1"}})
	if err != nil {
		t.Fatal(err)
	}
	b := newBalancer(slog.New(slog.DiscardHandler))
	t0 := time.UnixMilli(1_000_000)
	b.noteOfflineDirs(img, t0)
	if len(b.offlineSince) != 0 {
		t.Fatalf("offline before any failure: %v", b.offlineSince)
	}
	b.noteOfflineDirs(failed, t0)
	b.noteOfflineDirs(failed, t0.Add(time.Minute)) // the clock does not restart
	all := func(model.NodeID) bool { return true }
	st, _ := clusterState(failed, brokerValues(t, nil), all, nil, b.offlineSince, t0.Add(time.Hour))
	var got [][]balance.OfflineReplica
	for _, p := range st.Partitions {
		got = append(got, p.Offline)
	}
	want := [][]balance.OfflineReplica{nil, {{Broker: 1, Since: t0}}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("offline replicas (-want +got):\n%s", d)
	}
	b.noteOfflineDirs(img, t0.Add(2*time.Hour)) // repaired
	if len(b.offlineSince) != 0 {
		t.Errorf("a repaired directory is still offline: %v", b.offlineSince)
	}
}

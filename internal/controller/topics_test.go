package controller

import (
	"strings"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-io/samsa/internal/config"
	"github.com/samsa-io/samsa/internal/metadata"
	"github.com/samsa-io/samsa/internal/model"
)

func TestCreateTopicsValidation(t *testing.T) {
	c := open(t, testConfig(t.TempDir()))
	mustCreate(t, c, "existing", 1)
	mustCreate(t, c, "with.dot", 1)

	cases := []struct {
		name  string
		topic CreateTopic
		want  *kerr.Error
		msg   string // a part of the expected message
	}{
		{"empty name", CreateTopic{Name: "", NumPartitions: 1, ReplicationFactor: 1}, kerr.InvalidTopicException, "can't be empty"},
		{"dot", CreateTopic{Name: ".", NumPartitions: 1, ReplicationFactor: 1}, kerr.InvalidTopicException, `"." or ".."`},
		{"dot dot", CreateTopic{Name: "..", NumPartitions: 1, ReplicationFactor: 1}, kerr.InvalidTopicException, `"." or ".."`},
		{"too long", CreateTopic{Name: strings.Repeat("a", 250), NumPartitions: 1, ReplicationFactor: 1}, kerr.InvalidTopicException, "longer than 249"},
		{"illegal char", CreateTopic{Name: "a/b", NumPartitions: 1, ReplicationFactor: 1}, kerr.InvalidTopicException, "ASCII alphanumerics"},
		{"space", CreateTopic{Name: "a b", NumPartitions: 1, ReplicationFactor: 1}, kerr.InvalidTopicException, "ASCII alphanumerics"},
		{"non-ascii", CreateTopic{Name: "é", NumPartitions: 1, ReplicationFactor: 1}, kerr.InvalidTopicException, "ASCII alphanumerics"},
		{"metadata topic", CreateTopic{Name: "__cluster_metadata", NumPartitions: 1, ReplicationFactor: 1}, kerr.InvalidRequest, "prohibited"},
		{"exists", CreateTopic{Name: "existing", NumPartitions: 1, ReplicationFactor: 1}, kerr.TopicAlreadyExists, "Topic 'existing' already exists."},
		{"collides", CreateTopic{Name: "with_dot", NumPartitions: 1, ReplicationFactor: 1}, kerr.InvalidTopicException, "collides with existing topic: with.dot"},
		{"zero partitions", CreateTopic{Name: "p0", NumPartitions: 0, ReplicationFactor: 1}, kerr.InvalidPartitions, "non-positive"},
		{"negative partitions", CreateTopic{Name: "p-2", NumPartitions: -2, ReplicationFactor: 1}, kerr.InvalidPartitions, "non-positive"},
		{"zero replication", CreateTopic{Name: "r0", NumPartitions: 1, ReplicationFactor: 0}, kerr.InvalidReplicationFactor, "larger than 0"},
		{"replication above brokers", CreateTopic{Name: "r2", NumPartitions: 1, ReplicationFactor: 2}, kerr.InvalidReplicationFactor, "only 1 broker(s) are registered"},
		{"unknown config", CreateTopic{Name: "c1", NumPartitions: 1, ReplicationFactor: 1, Configs: map[string]*string{"no.such.config": sp("1")}}, kerr.InvalidConfig, "no.such.config"},
		{"bad config value", CreateTopic{Name: "c2", NumPartitions: 1, ReplicationFactor: 1, Configs: map[string]*string{"retention.ms": sp("-5")}}, kerr.InvalidConfig, "retention.ms"},
		{"bad config type", CreateTopic{Name: "c3", NumPartitions: 1, ReplicationFactor: 1, Configs: map[string]*string{"cleanup.policy": sp("shred")}}, kerr.InvalidConfig, "cleanup.policy"},
		{"null config", CreateTopic{Name: "c4", NumPartitions: 1, ReplicationFactor: 1, Configs: map[string]*string{"retention.ms": nil}}, kerr.InvalidConfig, "Null value"},
		{"assignment with count", CreateTopic{Name: "a1", NumPartitions: 1, ReplicationFactor: -1, Assignments: map[int32][]int32{0: {1}}}, kerr.InvalidRequest, "Both numPartitions"},
		{"assignment gap", CreateTopic{Name: "a2", NumPartitions: -1, ReplicationFactor: -1, Assignments: map[int32][]int32{0: {1}, 2: {1}}}, kerr.InvalidReplicaAssignment, "partition 1 is missing"},
		{"assignment unknown broker", CreateTopic{Name: "a3", NumPartitions: -1, ReplicationFactor: -1, Assignments: map[int32][]int32{0: {7}}}, kerr.InvalidReplicaAssignment, "broker 7"},
		{"assignment duplicate broker", CreateTopic{Name: "a4", NumPartitions: -1, ReplicationFactor: -1, Assignments: map[int32][]int32{0: {1, 1}}}, kerr.InvalidReplicaAssignment, "more than once"},
		{"assignment empty", CreateTopic{Name: "a5", NumPartitions: -1, ReplicationFactor: -1, Assignments: map[int32][]int32{0: {}}}, kerr.InvalidReplicaAssignment, "empty"},
		{"too many partitions", CreateTopic{Name: "big", NumPartitions: 10001, ReplicationFactor: 1}, kerr.PolicyViolation, "Excessively large"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := c.Image()
			res := createOne(t, c, tc.topic)
			if res.ErrorCode != tc.want.Code || !strings.Contains(res.ErrorMessage, tc.msg) {
				t.Errorf("got %d %q, want %s with %q", res.ErrorCode, res.ErrorMessage, tc.want.Message, tc.msg)
			}
			if res.TopicID != (model.TopicID{}) || res.NumPartitions != -1 || res.ReplicationFactor != -1 || res.Configs != nil {
				t.Errorf("failed result carries data: %+v", res)
			}
			if c.Image() != before {
				t.Error("a refused create changed the image")
			}
		})
	}
}

func TestCreateTopicsBatch(t *testing.T) {
	c := open(t, testConfig(t.TempDir()))
	res := c.CreateTopics(ctx(t), []CreateTopic{
		{Name: "dup", NumPartitions: 1, ReplicationFactor: 1},
		{Name: "good", NumPartitions: 3, ReplicationFactor: -1, Configs: map[string]*string{"cleanup.policy": sp("compact")}},
		{Name: "dup", NumPartitions: 1, ReplicationFactor: 1},
		{Name: "a.b", NumPartitions: -1, ReplicationFactor: -1},
		// Collides with a topic created earlier in the same request.
		{Name: "a_b", NumPartitions: 1, ReplicationFactor: 1},
		{Name: "bad", NumPartitions: 0, ReplicationFactor: 1},
	}, false)
	want := []int16{kerr.InvalidRequest.Code, 0, kerr.InvalidRequest.Code, 0, kerr.InvalidTopicException.Code, kerr.InvalidPartitions.Code}
	for i, r := range res {
		if r.ErrorCode != want[i] {
			t.Errorf("topic %d %s: %d %s, want %d", i, r.Name, r.ErrorCode, r.ErrorMessage, want[i])
		}
	}
	good := res[1]
	tp, ok := c.Image().Topic("good")
	if !ok || tp.ID != good.TopicID || len(tp.Partitions) != 3 || good.NumPartitions != 3 || good.ReplicationFactor != 1 {
		t.Fatalf("good: result %+v, image %+v", good, tp)
	}
	for _, p := range tp.Partitions {
		if p.Leader != 1 || p.LeaderEpoch != 0 || p.PartitionEpoch != 0 || len(p.ISR) != 1 {
			t.Errorf("partition %+v", p)
		}
	}
	if got := c.Image().TopicConfig("good"); len(got) != 1 || got["cleanup.policy"] != "compact" {
		t.Errorf("configs %v", got)
	}
	var policy string
	for _, d := range good.Configs {
		if d.Name == "cleanup.policy" && d.Value != nil {
			policy = *d.Value
		}
	}
	if policy != "compact" {
		t.Errorf("result configs report cleanup.policy=%q", policy)
	}
	if tp, ok := c.Image().Topic("a.b"); !ok || len(tp.Partitions) != 1 || res[3].NumPartitions != 1 {
		t.Errorf("a.b with defaults: %+v", tp)
	}
}

func TestCreateTopicsDefaults(t *testing.T) {
	cfg := testConfig(t.TempDir())
	cfg.Broker = brokerValues(t, map[string]string{"num.partitions": "4", "default.replication.factor": "3", "log.retention.hours": "1"})
	c := open(t, cfg)
	registerBrokers(t, c, 2, 3)
	res := mustCreate(t, c, "defaults", -1)
	if res.NumPartitions != 4 || res.ReplicationFactor != 3 {
		t.Errorf("got %d partitions x %d", res.NumPartitions, res.ReplicationFactor)
	}
	for _, d := range res.Configs {
		if d.Name == "retention.ms" && (d.Value == nil || *d.Value != "3600000") {
			t.Errorf("retention.ms does not fall back to the broker: %+v", d)
		}
	}
}

func TestCreateTopicsValidateOnly(t *testing.T) {
	c := open(t, testConfig(t.TempDir()))
	before := c.Image()
	res := c.CreateTopics(ctx(t), []CreateTopic{{Name: "dry", NumPartitions: 2, ReplicationFactor: 1}}, true)
	if res[0].ErrorCode != 0 || res[0].NumPartitions != 2 || res[0].TopicID != (model.TopicID{}) {
		t.Errorf("validate only: %+v", res[0])
	}
	if c.Image() != before {
		t.Error("validate only changed the image")
	}
}

func TestManualAssignment(t *testing.T) {
	c := open(t, testConfig(t.TempDir()))
	registerBrokers(t, c, 2, 3)
	res := createOne(t, c, CreateTopic{Name: "manual", NumPartitions: -1, ReplicationFactor: -1,
		Assignments: map[int32][]int32{0: {3, 1}, 1: {2, 3}}})
	if res.ErrorCode != 0 {
		t.Fatal(res.ErrorMessage)
	}
	tp, _ := c.Image().Topic("manual")
	if got := tp.Partitions[0]; got.Leader != 3 || !equalNodes(got.Replicas, 3, 1) {
		t.Errorf("partition 0: %+v", got)
	}
	if got := tp.Partitions[1]; got.Leader != 2 || !equalNodes(got.ISR, 2, 3) {
		t.Errorf("partition 1: %+v", got)
	}
	res = createOne(t, c, CreateTopic{Name: "uneven", NumPartitions: -1, ReplicationFactor: -1,
		Assignments: map[int32][]int32{0: {1, 2}, 1: {3}}})
	if res.ErrorCode != kerr.InvalidReplicaAssignment.Code {
		t.Errorf("uneven assignment: %d %s", res.ErrorCode, res.ErrorMessage)
	}
}

func equalNodes(got []model.NodeID, want ...model.NodeID) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i] != want[i] {
			return false
		}
	}
	return true
}

func TestDeleteAndRecreate(t *testing.T) {
	c := open(t, testConfig(t.TempDir()))
	first := mustCreate(t, c, "orders", 2)
	c.IncrementalAlterConfigs(ctx(t), []IncrementalAlterConfigsResource{{Type: metadata.ResourceTopic, Name: "orders",
		Ops: []config.AlterOp{{Name: "retention.ms", Op: config.OpSet, Value: sp("1")}}}}, false)
	res := c.DeleteTopics(ctx(t), []DeleteTopic{{Name: "orders"}})
	if res[0].ErrorCode != 0 || res[0].TopicID != first.TopicID {
		t.Fatalf("delete: %+v", res[0])
	}
	if _, ok := c.Image().Topic("orders"); ok {
		t.Fatal("topic still there")
	}
	second := mustCreate(t, c, "orders", 1)
	if second.TopicID == first.TopicID {
		t.Error("recreated topic kept its id")
	}
	if cfg := c.Image().TopicConfig("orders"); len(cfg) != 0 {
		t.Errorf("recreated topic inherited configs %v", cfg)
	}
	// Delete by ID.
	res = c.DeleteTopics(ctx(t), []DeleteTopic{{TopicID: second.TopicID}})
	if res[0].ErrorCode != 0 || res[0].Name != "orders" {
		t.Errorf("delete by id: %+v", res[0])
	}
}

func TestDeleteTopicsErrors(t *testing.T) {
	c := open(t, testConfig(t.TempDir()))
	a := mustCreate(t, c, "a", 1)
	mustCreate(t, c, "b", 1)
	unknownID := model.TopicID{1, 2, 3}
	res := c.DeleteTopics(ctx(t), []DeleteTopic{
		{Name: "nope"},
		{TopicID: unknownID},
		{Name: "a", TopicID: a.TopicID},
		{Name: "b"},
		{Name: "b"},
		{},
	})
	want := []*kerr.Error{kerr.UnknownTopicOrPartition, kerr.UnknownTopicID, kerr.InvalidRequest, kerr.InvalidRequest, kerr.InvalidRequest, kerr.UnknownTopicOrPartition}
	for i, r := range res {
		if r.ErrorCode != want[i].Code {
			t.Errorf("%d %+v: got %d %s, want %s", i, r, r.ErrorCode, r.ErrorMessage, want[i].Message)
		}
	}
	if len(c.Image().Topics()) != 2 {
		t.Error("a refused delete removed a topic")
	}

	cfg := testConfig(t.TempDir())
	cfg.Broker = brokerValues(t, map[string]string{"delete.topic.enable": "false"})
	c2 := open(t, cfg)
	mustCreate(t, c2, "kept", 1)
	if res := c2.DeleteTopics(ctx(t), []DeleteTopic{{Name: "kept"}}); res[0].ErrorCode != kerr.TopicDeletionDisabled.Code {
		t.Errorf("deletion disabled: %+v", res[0])
	}
}

func TestCreatePartitions(t *testing.T) {
	c := open(t, testConfig(t.TempDir()))
	mustCreate(t, c, "grow", 2)
	mustCreate(t, c, "other", 1)
	res := c.CreatePartitions(ctx(t), []CreatePartitions{
		{Topic: "grow", Count: 5},
		{Topic: "other", Count: 1},
		{Topic: "missing", Count: 3},
		{Topic: "dup", Count: 3},
		{Topic: "dup", Count: 3},
	}, false)
	want := []*kerr.Error{nil, kerr.InvalidPartitions, kerr.UnknownTopicOrPartition, kerr.InvalidRequest, kerr.InvalidRequest}
	for i, r := range res {
		code := int16(0)
		if want[i] != nil {
			code = want[i].Code
		}
		if r.ErrorCode != code {
			t.Errorf("%s: got %d %s, want %d", r.Topic, r.ErrorCode, r.ErrorMessage, code)
		}
	}
	tp, _ := c.Image().Topic("grow")
	if len(tp.Partitions) != 5 {
		t.Fatalf("grow has %d partitions", len(tp.Partitions))
	}
	for i, p := range tp.Partitions {
		if p.Partition != int32(i) || p.Leader != 1 {
			t.Errorf("partition %+v", p)
		}
	}

	shrink := c.CreatePartitions(ctx(t), []CreatePartitions{{Topic: "grow", Count: 3}}, false)
	if shrink[0].ErrorCode != kerr.InvalidPartitions.Code || !strings.Contains(shrink[0].ErrorMessage, "would not be an increase") {
		t.Errorf("shrink: %+v", shrink[0])
	}
	dry := c.CreatePartitions(ctx(t), []CreatePartitions{{Topic: "grow", Count: 9}}, true)
	if dry[0].ErrorCode != 0 || len(mustTopic(t, c, "grow").Partitions) != 5 {
		t.Errorf("validate only: %+v", dry[0])
	}
	manual := c.CreatePartitions(ctx(t), []CreatePartitions{{Topic: "grow", Count: 7, Assignments: [][]int32{{1}}}}, false)
	if manual[0].ErrorCode != kerr.InvalidReplicaAssignment.Code {
		t.Errorf("short assignment: %+v", manual[0])
	}
	manual = c.CreatePartitions(ctx(t), []CreatePartitions{{Topic: "grow", Count: 6, Assignments: [][]int32{{1}}}}, false)
	if manual[0].ErrorCode != 0 || len(mustTopic(t, c, "grow").Partitions) != 6 {
		t.Errorf("manual assignment: %+v", manual[0])
	}
	big := c.CreatePartitions(ctx(t), []CreatePartitions{{Topic: "grow", Count: 20000}}, false)
	if big[0].ErrorCode != kerr.PolicyViolation.Code {
		t.Errorf("too many: %+v", big[0])
	}
}

func mustTopic(t *testing.T, c *Controller, name string) *metadata.TopicImage {
	t.Helper()
	tp, ok := c.Image().Topic(name)
	if !ok {
		t.Fatalf("no topic %s", name)
	}
	return tp
}

// TestConcurrentCreateSameName races creates of one name: exactly one wins,
// the rest get TOPIC_ALREADY_EXISTS, and the winner's ID is the image's.
func TestConcurrentCreateSameName(t *testing.T) {
	c := open(t, testConfig(t.TempDir()))
	const n = 8
	results := make([]CreateTopicResult, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			results[i] = createOne(t, c, CreateTopic{Name: "race", NumPartitions: 3, ReplicationFactor: 1})
		})
	}
	close(start)
	wg.Wait()
	var winners int
	for _, r := range results {
		switch r.ErrorCode {
		case 0:
			winners++
			if tp := mustTopic(t, c, "race"); tp.ID != r.TopicID {
				t.Errorf("winner id %x, image id %x", r.TopicID, tp.ID)
			}
		case kerr.TopicAlreadyExists.Code:
		default:
			t.Errorf("unexpected %d %s", r.ErrorCode, r.ErrorMessage)
		}
	}
	if winners != 1 {
		t.Errorf("%d creates won", winners)
	}
}

func TestCheckTopicName(t *testing.T) {
	cases := []struct {
		name string
		ok   bool
	}{
		{"orders", true},
		{"a.b_c-D9", true},
		{strings.Repeat("x", 249), true},
		{"...", true},
		{strings.Repeat("x", 250), false},
		{"", false},
		{".", false},
		{"..", false},
		{"a:b", false},
		{"a\x00", false},
	}
	for _, c := range cases {
		if got := checkTopicName(c.name) == nil; got != c.ok {
			t.Errorf("checkTopicName(%q) ok = %v, want %v", c.name, got, c.ok)
		}
	}
}

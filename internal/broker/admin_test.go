package broker

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/config"
	"github.com/samsa-io/samsa/internal/model"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// adminClient connects kadm to the broker for the test.
func adminClient(t *testing.T, b *Broker) (*kadm.Client, context.Context) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return kadm.NewClient(cl), ctx
}

// startBrokerValues starts a broker with static configs.
func startBrokerValues(t *testing.T, raw map[string]string) *Broker {
	t.Helper()
	v, err := config.Parse(config.Broker, raw)
	if err != nil {
		t.Fatal(err)
	}
	return startBrokerWith(t, Config{LogDir: t.TempDir(), Values: v})
}

// describedTopicConfig returns one config of a topic as DescribeConfigs
// reports it.
func describedTopicConfig(t *testing.T, adm *kadm.Client, ctx context.Context, topic, name string) kadm.Config {
	t.Helper()
	rcs, err := adm.DescribeTopicConfigs(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := rcs.On(topic, nil)
	if err != nil || rc.Err != nil {
		t.Fatalf("describe %s: %v %v", topic, err, rc.Err)
	}
	for _, c := range rc.Configs {
		if c.Key == name {
			return c
		}
	}
	t.Fatalf("describe %s: no config %s", topic, name)
	return kadm.Config{}
}

func wantConfig(t *testing.T, c kadm.Config, value string, source kmsg.ConfigSource) {
	t.Helper()
	if c.MaybeValue() != value || c.Source != source {
		t.Fatalf("%s = %q from %s, want %q from %s", c.Key, c.MaybeValue(), c.Source, value, source)
	}
}

func wantErr(t *testing.T, what string, got, want error) {
	t.Helper()
	if !errors.Is(got, want) {
		t.Fatalf("%s: error %v, want %v", what, got, want)
	}
}

// produceTo produces one record to a partition and returns its offset.
func produceTo(t *testing.T, ctx context.Context, b *Broker, topic string, partition int32, value string) int64 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	r, err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: partition, Key: []byte("k"), Value: []byte(value)}).First()
	if err != nil {
		t.Fatalf("produce to %s-%d: %v", topic, partition, err)
	}
	return r.Offset
}

func endOffset(t *testing.T, adm *kadm.Client, ctx context.Context, topic string, partition int32) int64 {
	t.Helper()
	offs, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	o, ok := offs.Lookup(topic, partition)
	if !ok || o.Err != nil {
		t.Fatalf("end offset of %s-%d: %v %v", topic, partition, ok, o.Err)
	}
	return o.Offset
}

func TestCreateTopicsDefaults(t *testing.T) {
	b := startBrokerValues(t, map[string]string{"num.partitions": "3"})
	adm, ctx := adminClient(t, b)
	r, err := adm.CreateTopic(ctx, -1, -1, nil, "dflt")
	if err != nil {
		t.Fatal(err)
	}
	if r.NumPartitions != 3 || r.ReplicationFactor != 1 || r.ID == (kadm.TopicID{}) {
		t.Fatalf("created %+v", r)
	}
	if c := r.Configs["cleanup.policy"]; c.Value == nil || *c.Value != "delete" || c.Source != kmsg.ConfigSourceDefaultConfig {
		t.Fatalf("cleanup.policy in response: %+v", c)
	}
	// The image was applied before the response: no waiting for metadata.
	ti, ok := b.meta.Load().Topic("dflt")
	if !ok || len(ti.Partitions) != 3 || ti.ID != model.TopicID(r.ID) {
		t.Fatalf("broker image: %v %+v", ok, ti)
	}
	for p := range int32(3) {
		if _, err := os.Stat(b.logs.PartitionDir(model.TopicPartition{Topic: "dflt", Partition: p})); err != nil {
			t.Fatalf("partition %d log: %v", p, err)
		}
	}
}

func TestCreateTopicsExplicitWithConfigs(t *testing.T) {
	b := startBroker(t)
	adm, ctx := adminClient(t, b)
	configs := map[string]*string{"cleanup.policy": ptr("compact"), "retention.ms": ptr("1000")}
	r, err := adm.CreateTopic(ctx, 4, 1, configs, "explicit")
	if err != nil {
		t.Fatal(err)
	}
	if r.NumPartitions != 4 || r.ReplicationFactor != 1 {
		t.Fatalf("created %+v", r)
	}
	if c := r.Configs["retention.ms"]; c.Value == nil || *c.Value != "1000" || c.Source != kmsg.ConfigSourceDynamicTopicConfig {
		t.Fatalf("retention.ms in response: %+v", c)
	}
	wantConfig(t, describedTopicConfig(t, adm, ctx, "explicit", "cleanup.policy"), "compact", kmsg.ConfigSourceDynamicTopicConfig)
	wantConfig(t, describedTopicConfig(t, adm, ctx, "explicit", "segment.bytes"), "1073741824", kmsg.ConfigSourceDefaultConfig)
	if off := produceTo(t, ctx, b, "explicit", 3, "v"); off != 0 {
		t.Fatalf("first record at offset %d", off)
	}
	if end := endOffset(t, adm, ctx, "explicit", 3); end != 1 {
		t.Fatalf("end offset %d", end)
	}
}

func TestCreateTopicsValidateOnly(t *testing.T) {
	b := startBroker(t)
	adm, ctx := adminClient(t, b)
	rs, err := adm.ValidateCreateTopics(ctx, 2, 1, map[string]*string{"retention.ms": ptr("1")}, "dry")
	if err != nil {
		t.Fatal(err)
	}
	r, err := rs.On("dry", nil)
	if err != nil || r.Err != nil || r.NumPartitions != 2 || r.ID != (kadm.TopicID{}) {
		t.Fatalf("validate: %v %+v", err, r)
	}
	if _, ok := b.ctrl.Image().Topic("dry"); ok {
		t.Fatal("validate-only created the topic")
	}
	// Validation still refuses what creation would.
	rs, err = adm.ValidateCreateTopics(ctx, 2, 1, map[string]*string{"retention.ms": ptr("soon")}, "dry")
	if err != nil {
		t.Fatal(err)
	}
	wantErr(t, "validate a bad config", rs["dry"].Err, kerr.InvalidConfig)
}

func TestCreateTopicsErrors(t *testing.T) {
	b := startBroker(t)
	adm, ctx := adminClient(t, b)
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "dup"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		topic      string
		partitions int32
		rf         int16
		configs    map[string]*string
		want       *kerr.Error
	}{
		{"invalid name", "bad/name", 1, 1, nil, kerr.InvalidTopicException},
		{"duplicate", "dup", 1, 1, nil, kerr.TopicAlreadyExists},
		{"bad config value", "badcfg", 1, 1, map[string]*string{"cleanup.policy": ptr("shred")}, kerr.InvalidConfig},
		{"unknown config", "unknowncfg", 1, 1, map[string]*string{"no.such.config": ptr("1")}, kerr.InvalidConfig},
		{"null config", "nullcfg", 1, 1, map[string]*string{"retention.ms": nil}, kerr.InvalidConfig},
		{"too many replicas", "rf3", 1, 3, nil, kerr.InvalidReplicationFactor},
		{"zero partitions", "p0", 0, 1, nil, kerr.InvalidPartitions},
		{"metadata topic", "__cluster_metadata", 1, 1, nil, kerr.InvalidRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := adm.CreateTopic(ctx, tt.partitions, tt.rf, tt.configs, tt.topic)
			wantErr(t, tt.topic, err, tt.want)
			if _, ok := b.ctrl.Image().Topic(tt.topic); ok && tt.topic != "dup" {
				t.Fatalf("%s was created", tt.topic)
			}
		})
	}
	// "a_b" collides with "a.b": metric names turn dots into underscores.
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "a.b"); err != nil {
		t.Fatal(err)
	}
	_, err := adm.CreateTopic(ctx, 1, 1, nil, "a_b")
	wantErr(t, "colliding name", err, kerr.InvalidTopicException)
}

// TestCreateTopicsEveryVersion drives CreateTopics at each version by hand,
// with manual assignments and the version-specific response fields.
func TestCreateTopicsEveryVersion(t *testing.T) {
	b := startBroker(t)
	r := dialRaw(t, b)
	for v := int16(0); v <= 7; v++ {
		req := kmsg.NewPtrCreateTopicsRequest()
		req.Version, req.TimeoutMillis = v, 10000
		if v%2 == 0 {
			req.TimeoutMillis = 0 // "do not wait": still created and answered normally
		}
		name := "v" + string(rune('0'+v))
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, -1, -1
		for p := range int32(2) {
			a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
			a.Partition, a.Replicas = p, []int32{1}
			rt.ReplicaAssignment = append(rt.ReplicaAssignment, a)
		}
		req.Topics = append(req.Topics, rt)
		resp := r.roundTrip(req, int32(v)).(*kmsg.CreateTopicsResponse)
		if len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != 0 {
			t.Fatalf("v%d: %+v", v, resp.Topics)
		}
		got := resp.Topics[0]
		ti, ok := b.meta.Load().Topic(name)
		if !ok || len(ti.Partitions) != 2 {
			t.Fatalf("v%d: topic %v %+v", v, ok, ti)
		}
		if v >= 5 && (got.NumPartitions != 2 || got.ReplicationFactor != 1 || len(got.Configs) == 0) {
			t.Fatalf("v%d: partitions %d, rf %d, %d configs", v, got.NumPartitions, got.ReplicationFactor, len(got.Configs))
		}
		if wantID := v >= 7; (got.TopicID == ti.ID) != wantID {
			t.Fatalf("v%d: topic ID %x, image %x", v, got.TopicID, ti.ID)
		}
	}
}

func TestCreateTopicsRequestErrors(t *testing.T) {
	b := startBroker(t)
	r := dialRaw(t, b)
	topic := func(name string, assign map[int32][]int32) kmsg.CreateTopicsRequestTopic {
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, -1, -1
		for p := range int32(len(assign)) {
			a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
			a.Partition, a.Replicas = p, assign[p]
			rt.ReplicaAssignment = append(rt.ReplicaAssignment, a)
		}
		return rt
	}
	req := kmsg.NewPtrCreateTopicsRequest()
	req.Version, req.TimeoutMillis = 7, 10000
	twice := topic("twice", nil)
	dupPartition := topic("dup-partition", map[int32][]int32{0: {1}})
	dupPartition.ReplicaAssignment = append(dupPartition.ReplicaAssignment, dupPartition.ReplicaAssignment[0])
	bothWays := topic("both-ways", map[int32][]int32{0: {1}})
	bothWays.NumPartitions = 1
	req.Topics = []kmsg.CreateTopicsRequestTopic{
		twice, twice, dupPartition, bothWays,
		topic("unknown-broker", map[int32][]int32{0: {7}}),
		topic("ok", map[int32][]int32{0: {1}}),
	}
	resp := r.roundTrip(req, 1).(*kmsg.CreateTopicsResponse)
	want := []struct {
		name string
		code int16
	}{
		{"twice", kerr.InvalidRequest.Code},
		{"twice", kerr.InvalidRequest.Code},
		{"dup-partition", kerr.InvalidReplicaAssignment.Code},
		{"both-ways", kerr.InvalidRequest.Code},
		{"unknown-broker", kerr.InvalidReplicaAssignment.Code},
		{"ok", 0},
	}
	if len(resp.Topics) != len(want) {
		t.Fatalf("%d topics in response, want %d", len(resp.Topics), len(want))
	}
	for i, w := range want {
		got := resp.Topics[i]
		if got.Topic != w.name || got.ErrorCode != w.code {
			t.Errorf("topic %d: %s error %d (%v), want %s error %d", i, got.Topic, got.ErrorCode, deref(got.ErrorMessage), w.name, w.code)
		}
		if w.code != 0 && (got.ErrorMessage == nil || got.NumPartitions != -1) {
			t.Errorf("%s: message %v, partitions %d", got.Topic, got.ErrorMessage, got.NumPartitions)
		}
	}
	if _, ok := b.meta.Load().Topic("ok"); !ok {
		t.Fatal("the valid topic of the request was not created")
	}
}

func TestDeleteTopicsAndRecreate(t *testing.T) {
	b := startBroker(t)
	adm, ctx := adminClient(t, b)
	created, err := adm.CreateTopic(ctx, 2, 1, nil, "gone")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		produceTo(t, ctx, b, "gone", 1, string(rune('a'+i)))
	}
	deleted, err := adm.DeleteTopic(ctx, "gone")
	if err != nil {
		t.Fatal(err)
	}
	if deleted.ID != created.ID {
		t.Fatalf("deleted ID %v, created %v", deleted.ID, created.ID)
	}
	if _, ok := b.meta.Load().Topic("gone"); ok {
		t.Fatal("topic still in the broker's image")
	}
	for p := range int32(2) {
		dir := b.logs.PartitionDir(model.TopicPartition{Topic: "gone", Partition: p})
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Fatalf("partition %d log still there: %v", p, err)
		}
	}
	_, err = adm.DeleteTopic(ctx, "gone")
	wantErr(t, "delete again", err, kerr.UnknownTopicOrPartition)

	recreated, err := adm.CreateTopic(ctx, 2, 1, nil, "gone")
	if err != nil {
		t.Fatal(err)
	}
	if recreated.ID == created.ID {
		t.Fatal("recreated topic kept the old ID")
	}
	if end := endOffset(t, adm, ctx, "gone", 1); end != 0 {
		t.Fatalf("recreated topic's end offset %d", end)
	}
}

func TestDeleteTopicsByID(t *testing.T) {
	b := startBroker(t)
	adm, ctx := adminClient(t, b)
	created, err := adm.CreateTopic(ctx, 1, 1, nil, "by-id")
	if err != nil {
		t.Fatal(err)
	}
	r := dialRaw(t, b)
	req := kmsg.NewPtrDeleteTopicsRequest()
	req.Version, req.TimeoutMillis = 6, 10000
	unknown := [16]byte{1, 2, 3}
	req.Topics = []kmsg.DeleteTopicsRequestTopic{{TopicID: created.ID}, {TopicID: unknown}, {}, {Topic: ptr("nope")}}
	resp := r.roundTrip(req, 1).(*kmsg.DeleteTopicsResponse)
	if len(resp.Topics) != 4 {
		t.Fatalf("%d topics in response", len(resp.Topics))
	}
	if got := resp.Topics[0]; got.ErrorCode != 0 || deref(got.Topic) != "by-id" || got.TopicID != created.ID {
		t.Fatalf("by ID: %+v", got)
	}
	if got := resp.Topics[1]; got.ErrorCode != kerr.UnknownTopicID.Code || got.Topic != nil || got.TopicID != unknown {
		t.Fatalf("unknown ID: %+v", got)
	}
	if got := resp.Topics[2]; got.ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("neither name nor ID: %+v", got)
	}
	if got := resp.Topics[3]; got.ErrorCode != kerr.UnknownTopicOrPartition.Code || deref(got.Topic) != "nope" {
		t.Fatalf("unknown name: %+v", got)
	}
	if _, ok := b.meta.Load().Topic("by-id"); ok {
		t.Fatal("topic deleted by ID is still there")
	}
}

func TestCreatePartitions(t *testing.T) {
	b := startBroker(t)
	adm, ctx := adminClient(t, b)
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "grow"); err != nil {
		t.Fatal(err)
	}
	rs, err := adm.ValidateCreatePartitions(ctx, 2, "grow")
	if err != nil || rs["grow"].Err != nil {
		t.Fatalf("validate: %v %+v", err, rs)
	}
	if ti, _ := b.meta.Load().Topic("grow"); len(ti.Partitions) != 1 {
		t.Fatalf("validate-only grew the topic to %d", len(ti.Partitions))
	}
	rs, err = adm.CreatePartitions(ctx, 2, "grow")
	if err != nil || rs["grow"].Err != nil {
		t.Fatalf("create partitions: %v %+v", err, rs)
	}
	if ti, _ := b.meta.Load().Topic("grow"); len(ti.Partitions) != 3 {
		t.Fatalf("topic has %d partitions, want 3", len(ti.Partitions))
	}
	if off := produceTo(t, ctx, b, "grow", 2, "new"); off != 0 {
		t.Fatalf("first record of the new partition at %d", off)
	}
	if end := endOffset(t, adm, ctx, "grow", 2); end != 1 {
		t.Fatalf("end offset %d", end)
	}

	rs, err = adm.UpdatePartitions(ctx, 2, "grow")
	if err != nil {
		t.Fatal(err)
	}
	wantErr(t, "shrink", rs["grow"].Err, kerr.InvalidPartitions)
	rs, err = adm.CreatePartitions(ctx, 1, "missing")
	if err != nil {
		t.Fatal(err)
	}
	wantErr(t, "unknown topic", rs["missing"].Err, kerr.UnknownTopicOrPartition)
}

func TestIncrementalAlterTopicConfigs(t *testing.T) {
	b := startBroker(t)
	adm, ctx := adminClient(t, b)
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "inc"); err != nil {
		t.Fatal(err)
	}
	alter := func(op kadm.IncrementalOp, name string, value *string) error {
		t.Helper()
		rs, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: op, Name: name, Value: value}}, "inc")
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) != 1 {
			t.Fatalf("%d responses", len(rs))
		}
		return rs[0].Err
	}
	steps := []struct {
		op     kadm.IncrementalOp
		name   string
		value  *string
		want   string
		source kmsg.ConfigSource
	}{
		{kadm.SetConfig, "retention.ms", ptr("1234"), "1234", kmsg.ConfigSourceDynamicTopicConfig},
		{kadm.AppendConfig, "cleanup.policy", ptr("compact"), "delete,compact", kmsg.ConfigSourceDynamicTopicConfig},
		{kadm.AppendConfig, "cleanup.policy", ptr("compact"), "delete,compact", kmsg.ConfigSourceDynamicTopicConfig},
		{kadm.SubtractConfig, "cleanup.policy", ptr("delete"), "compact", kmsg.ConfigSourceDynamicTopicConfig},
		{kadm.DeleteConfig, "retention.ms", nil, "604800000", kmsg.ConfigSourceDefaultConfig},
		{kadm.DeleteConfig, "cleanup.policy", nil, "delete", kmsg.ConfigSourceDefaultConfig},
	}
	for _, s := range steps {
		if err := alter(s.op, s.name, s.value); err != nil {
			t.Fatalf("%v %s: %v", s.op, s.name, err)
		}
		wantConfig(t, describedTopicConfig(t, adm, ctx, "inc", s.name), s.want, s.source)
	}
	// The broker's own view of the topic follows.
	if err := alter(kadm.SetConfig, "max.message.bytes", ptr("2048")); err != nil {
		t.Fatal(err)
	}
	if ts, _ := b.topics.byTopicName("inc"); ts.config.Int("max.message.bytes") != 2048 {
		t.Fatalf("broker's max.message.bytes %d", ts.config.Int("max.message.bytes"))
	}

	wantErr(t, "append to a non-list", alter(kadm.AppendConfig, "retention.ms", ptr("1")), kerr.InvalidConfig)
	wantErr(t, "bad value", alter(kadm.SetConfig, "retention.ms", ptr("x")), kerr.InvalidConfig)
	wantErr(t, "unknown config", alter(kadm.SetConfig, "no.such.config", ptr("1")), kerr.InvalidConfig)

	rs, err := adm.ValidateAlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "retention.ms", Value: ptr("99")}}, "inc")
	if err != nil || rs[0].Err != nil {
		t.Fatalf("validate: %v %+v", err, rs)
	}
	wantConfig(t, describedTopicConfig(t, adm, ctx, "inc", "retention.ms"), "604800000", kmsg.ConfigSourceDefaultConfig)

	rs, err = adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "retention.ms", Value: ptr("1")}}, "missing")
	if err != nil {
		t.Fatal(err)
	}
	wantErr(t, "unknown topic", rs[0].Err, kerr.UnknownTopicOrPartition)
}

func TestLegacyAlterConfigs(t *testing.T) {
	b := startBroker(t)
	adm, ctx := adminClient(t, b)
	if _, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{"cleanup.policy": ptr("compact")}, "legacy"); err != nil {
		t.Fatal(err)
	}
	rs, err := adm.AlterTopicConfigsState(ctx, []kadm.AlterConfig{{Name: "retention.ms", Value: ptr("5000")}}, "legacy")
	if err != nil || len(rs) != 1 || rs[0].Err != nil {
		t.Fatalf("alter: %v %+v", err, rs)
	}
	wantConfig(t, describedTopicConfig(t, adm, ctx, "legacy", "retention.ms"), "5000", kmsg.ConfigSourceDynamicTopicConfig)
	// The whole set was replaced: the override left out is gone.
	wantConfig(t, describedTopicConfig(t, adm, ctx, "legacy", "cleanup.policy"), "delete", kmsg.ConfigSourceDefaultConfig)

	r := dialRaw(t, b)
	req := kmsg.NewPtrAlterConfigsRequest()
	req.Version = 2
	resource := func(typ kmsg.ConfigResourceType, name string, configs ...kmsg.AlterConfigsRequestResourceConfig) kmsg.AlterConfigsRequestResource {
		rr := kmsg.NewAlterConfigsRequestResource()
		rr.ResourceType, rr.ResourceName, rr.Configs = typ, name, configs
		return rr
	}
	req.Resources = []kmsg.AlterConfigsRequestResource{
		resource(kmsg.ConfigResourceTypeTopic, "legacy", kmsg.AlterConfigsRequestResourceConfig{Name: "retention.ms"}),
		resource(kmsg.ConfigResourceTypeBrokerLogger, "1"),
		resource(kmsg.ConfigResourceType(99), "x"),
		resource(kmsg.ConfigResourceTypeTopic, "missing"),
	}
	resp := r.roundTrip(req, 1).(*kmsg.AlterConfigsResponse)
	want := []int16{kerr.InvalidRequest.Code, kerr.InvalidRequest.Code, kerr.UnsupportedVersion.Code, kerr.UnknownTopicOrPartition.Code}
	if len(resp.Resources) != len(want) {
		t.Fatalf("%d resources in response", len(resp.Resources))
	}
	for i, code := range want {
		if got := resp.Resources[i]; got.ErrorCode != code || got.ErrorMessage == nil || got.ResourceName != req.Resources[i].ResourceName {
			t.Errorf("resource %d: %+v, want error %d", i, got, code)
		}
	}
	wantConfig(t, describedTopicConfig(t, adm, ctx, "legacy", "retention.ms"), "5000", kmsg.ConfigSourceDynamicTopicConfig)
}

func TestAlterBrokerConfigs(t *testing.T) {
	b := startBroker(t)
	adm, ctx := adminClient(t, b)
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "inherits"); err != nil {
		t.Fatal(err)
	}
	rs, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "log.retention.ms", Value: ptr("3600000")}})
	if err != nil || len(rs) != 1 || rs[0].Err != nil {
		t.Fatalf("alter cluster default: %v %+v", err, rs)
	}
	// Topics without an override inherit the new cluster-wide default.
	wantConfig(t, describedTopicConfig(t, adm, ctx, "inherits", "retention.ms"), "3600000", kmsg.ConfigSourceDynamicDefaultBrokerConfig)
	rcs, err := adm.DescribeBrokerConfigs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rcs) != 1 || len(rcs[0].Configs) != 1 || rcs[0].Configs[0].Key != "log.retention.ms" || rcs[0].Configs[0].MaybeValue() != "3600000" {
		t.Fatalf("cluster defaults: %+v", rcs)
	}

	rs, err = adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "log.retention.hours", Value: ptr("1")}})
	if err != nil {
		t.Fatal(err)
	}
	wantErr(t, "read-only broker config", rs[0].Err, kerr.InvalidRequest)

	// Legacy AlterConfigs on the cluster default replaces its whole set.
	rs, err = adm.AlterBrokerConfigsState(ctx, []kadm.AlterConfig{{Name: "log.segment.bytes", Value: ptr("1048576")}})
	if err != nil || rs[0].Err != nil {
		t.Fatalf("legacy alter cluster default: %v %+v", err, rs)
	}
	wantConfig(t, describedTopicConfig(t, adm, ctx, "inherits", "retention.ms"), "604800000", kmsg.ConfigSourceDefaultConfig)
	wantConfig(t, describedTopicConfig(t, adm, ctx, "inherits", "segment.bytes"), "1048576", kmsg.ConfigSourceDynamicDefaultBrokerConfig)
}

// TestIdempotentProducer runs franz-go's default producer, which is
// idempotent: it asks InitProducerId for an ID before producing.
func TestIdempotentProducer(t *testing.T) {
	b := startBroker(t)
	adm, ctx := adminClient(t, b)
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "idem"); err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.ConsumeTopics("idem"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	const n = 20
	for i := range n {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "idem", Value: []byte{byte(i)}}).FirstErr(); err != nil {
			t.Fatalf("produce %d: %v", i, err)
		}
	}
	var got []*kgo.Record
	for len(got) < n {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatal(err)
		}
		got = append(got, fs.Records()...)
	}
	for i, r := range got {
		if r.Offset != int64(i) || r.Value[0] != byte(i) {
			t.Fatalf("record %d: offset %d value %v", i, r.Offset, r.Value)
		}
		if r.ProducerID < 0 || r.ProducerID != got[0].ProducerID || r.ProducerEpoch != 0 {
			t.Fatalf("record %d: producer %d epoch %d", i, r.ProducerID, r.ProducerEpoch)
		}
	}
}

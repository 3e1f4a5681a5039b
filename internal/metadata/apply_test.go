package metadata

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/samsa-io/samsa/internal/model"
)

const (
	idOrders   = "M1JxkK_O7QwrSmmIp8blBA"
	idPayments = "RGOCocDf_h08W3qZuNf2FQ"
)

var testACL = ACL{ResourceType: 2, ResourceName: "orders", PatternType: 3, Principal: "User:alice", Host: "*", Operation: 3, PermissionType: 3}

// baseImage has a cluster ID, broker 1 and 2, topic orders with two
// partitions on [1 2], an ACL (testACL, with the topic's ID as its ID) and
// alice's SCRAM-SHA-256 credential and her producer_byte_rate of 1024.
func baseImage(t *testing.T) *Image {
	t.Helper()
	id := mustID(t, idOrders)
	img, err := Empty().ApplyAt(1,
		ClusterRecord{ClusterID: "q1Sh-9_ISia_jp5c-5Ck4Q"},
		BrokerRegistration{NodeID: 1, Features: SupportedFeatures()}, BrokerRegistration{NodeID: 2},
		TopicRecord{Name: "orders", TopicID: id},
		PartitionRecord{TopicID: id, Partition: 0, Replicas: nodes(1, 2), ISR: nodes(1, 2), Leader: 1},
		PartitionRecord{TopicID: id, Partition: 1, Replicas: nodes(2, 1), ISR: nodes(2, 1), Leader: 2},
		ConfigRecord{ResourceType: ResourceTopic, ResourceName: "orders", Name: "retention.ms", Value: ptr("1000")},
		AccessControlEntryRecord{ID: ACLID(id), ACL: testACL},
		UserScramCredentialRecord{Name: "alice", Mechanism: ScramSHA256, Salt: []byte("s"), StoredKey: []byte("k1"), ServerKey: []byte("k2"), Iterations: 4096},
		quotaRec(QuotaProducerByteRate, 1024, userData("alice")),
	)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func userData(name string) QuotaEntityData {
	return QuotaEntityData{EntityType: QuotaEntityUser, EntityName: &name}
}

func quotaRec(key string, value float64, entity ...QuotaEntityData) ClientQuotaRecord {
	return ClientQuotaRecord{Entity: entity, Key: key, Value: value}
}

func nodes(ids ...model.NodeID) []model.NodeID { return ids }

func TestApplyRejects(t *testing.T) {
	orders := mustID(t, idOrders)
	payments := mustID(t, idPayments)
	cases := []struct {
		name string
		rec  Record
	}{
		{"second cluster id", ClusterRecord{ClusterID: "other"}},
		{"negative broker", BrokerRegistration{NodeID: -1}},
		{"listener twice", BrokerRegistration{NodeID: 3, Endpoints: []Endpoint{{Name: "A"}, {Name: "A"}}}},
		{"duplicate topic name", TopicRecord{Name: "orders", TopicID: payments}},
		{"duplicate topic id", TopicRecord{Name: "payments", TopicID: orders}},
		{"zero topic id", TopicRecord{Name: "payments"}},
		{"empty topic name", TopicRecord{TopicID: payments}},
		{"partition of unknown topic", PartitionRecord{TopicID: payments, Replicas: nodes(1), ISR: nodes(1), Leader: 1}},
		{"partition gap", PartitionRecord{TopicID: orders, Partition: 3, Replicas: nodes(1), ISR: nodes(1), Leader: 1}},
		{"negative partition", PartitionRecord{TopicID: orders, Partition: -1, Replicas: nodes(1), ISR: nodes(1), Leader: 1}},
		{"no replicas", PartitionRecord{TopicID: orders, Partition: 2, Leader: NoLeader}},
		{"replica twice", PartitionRecord{TopicID: orders, Partition: 2, Replicas: nodes(1, 1), ISR: nodes(1), Leader: 1}},
		{"negative replica", PartitionRecord{TopicID: orders, Partition: 2, Replicas: nodes(-3), Leader: NoLeader}},
		{"isr outside replicas", PartitionRecord{TopicID: orders, Partition: 2, Replicas: nodes(1), ISR: nodes(1, 2), Leader: 1}},
		{"leader outside isr", PartitionRecord{TopicID: orders, Partition: 2, Replicas: nodes(1, 2), ISR: nodes(1), Leader: 2}},
		{"negative epoch", PartitionRecord{TopicID: orders, Partition: 2, Replicas: nodes(1), ISR: nodes(1), Leader: 1, LeaderEpoch: -1}},
		{"change of unknown partition", PartitionChange{TopicID: orders, Partition: 2}},
		{"change of unknown topic", PartitionChange{TopicID: payments}},
		{"change leader outside isr", PartitionChange{TopicID: orders, Leader: ptr(model.NodeID(3))}},
		{"change isr drops leader", PartitionChange{TopicID: orders, ISR: nodes(2)}},
		{"change replicas drop isr member", PartitionChange{TopicID: orders, Replicas: nodes(1)}},
		{"config of unknown topic", ConfigRecord{ResourceType: ResourceTopic, ResourceName: "payments", Name: "retention.ms", Value: ptr("1")}},
		{"config of bad broker resource", ConfigRecord{ResourceType: ResourceBroker, ResourceName: "one", Name: "x", Value: ptr("1")}},
		{"config of negative broker", ConfigRecord{ResourceType: ResourceBroker, ResourceName: "-1", Name: "x", Value: ptr("1")}},
		{"config of unknown resource type", ConfigRecord{ResourceType: 8, ResourceName: "1", Name: "x", Value: ptr("1")}},
		{"config without name", ConfigRecord{ResourceType: ResourceBroker, Value: ptr("1")}},
		{"remove unknown topic", RemoveTopic{TopicID: payments}},
		{"producer ids backwards", ProducerIDsRecord{NextProducerID: 0}},
		{"feature without name", FeatureLevel{Level: 1}},
		{"negative feature level", FeatureLevel{Name: "x", Level: -1}},
		{"acl with zero id", AccessControlEntryRecord{ACL: testACL}},
		{"acl id twice", AccessControlEntryRecord{ID: ACLID(orders), ACL: testACL}},
		{"remove unknown acl", RemoveAccessControlEntryRecord{ID: ACLID(payments)}},
		{"scram without user", UserScramCredentialRecord{Mechanism: ScramSHA256, Iterations: 4096}},
		{"scram of unknown mechanism", UserScramCredentialRecord{Name: "bob", Iterations: 4096}},
		{"remove unknown scram user", RemoveUserScramCredentialRecord{Name: "bob", Mechanism: ScramSHA256}},
		{"remove unknown scram mechanism", RemoveUserScramCredentialRecord{Name: "alice", Mechanism: ScramSHA512}},
		{"token without id", DelegationTokenRecord{Owner: "User:alice"}},
		{"token without owner", DelegationTokenRecord{TokenID: "t1"}},
		{"remove unknown token", RemoveDelegationTokenRecord{TokenID: "t1"}},
		{"quota of no entity", ClientQuotaRecord{Key: QuotaProducerByteRate, Value: 1}},
		{"quota of unknown entity type", quotaRec(QuotaProducerByteRate, 1, QuotaEntityData{EntityType: "group", EntityName: ptr("g")})},
		{"quota entity names a type twice", quotaRec(QuotaProducerByteRate, 1, userData("a"), userData("b"))},
		{"quota of user and ip", quotaRec(QuotaProducerByteRate, 1, userData("a"), QuotaEntityData{EntityType: QuotaEntityIP})},
		{"quota of client-id and ip", quotaRec(QuotaProducerByteRate, 1,
			QuotaEntityData{EntityType: QuotaEntityClientID}, QuotaEntityData{EntityType: QuotaEntityIP})},
		{"quota without key", quotaRec("", 1, userData("a"))},
		{"quota NaN", quotaRec(QuotaRequestPercentage, math.NaN(), userData("a"))},
		{"quota infinite", quotaRec(QuotaRequestPercentage, math.Inf(1), userData("a"))},
		{"remove quota of unknown entity", ClientQuotaRecord{Entity: []QuotaEntityData{userData("bob")}, Key: QuotaProducerByteRate, Remove: true}},
		{"remove unknown quota key", ClientQuotaRecord{Entity: []QuotaEntityData{userData("alice")}, Key: QuotaConsumerByteRate, Remove: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			base := baseImage(t)
			before := dumpImage(base)
			// A valid record first: the batch must still be all or nothing.
			got, err := base.ApplyAt(99, FeatureLevel{Name: "x", Level: 1}, c.rec)
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("Apply(%+v) error = %v, want ErrInvalid", c.rec, err)
			}
			if got != base {
				t.Error("failed Apply returned a new image")
			}
			if diff := cmp.Diff(before, dumpImage(base)); diff != "" {
				t.Errorf("failed Apply changed the image (-before +after):\n%s", diff)
			}
		})
	}
}

func TestApplyIsCopyOnWrite(t *testing.T) {
	base := baseImage(t)
	before := dumpImage(base)
	orders, _ := base.Topic("orders")
	payments := mustID(t, idPayments)

	next, err := base.ApplyAt(2,
		TopicRecord{Name: "payments", TopicID: payments},
		PartitionRecord{TopicID: payments, Replicas: nodes(1), ISR: nodes(1), Leader: 1},
		ConfigRecord{ResourceType: ResourceTopic, ResourceName: "payments", Name: "cleanup.policy", Value: ptr("compact")},
		ConfigRecord{ResourceType: ResourceBroker, ResourceName: "1", Name: "log.cleaner.threads", Value: ptr("2")},
		FeatureLevel{Name: FeatureGroupVersion, Level: 1},
		ProducerIDsRecord{NextProducerID: 1000},
	)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, dumpImage(base)); diff != "" {
		t.Errorf("Apply changed its base (-before +after):\n%s", diff)
	}
	if o, _ := next.Topic("orders"); o != orders {
		t.Error("a topic the batch did not touch was copied")
	}
	if next.Offset() != 2 || base.Offset() != 1 {
		t.Errorf("offsets %d, %d", base.Offset(), next.Offset())
	}

	// Changing a partition copies that topic only.
	changed, err := next.Apply(PartitionChange{TopicID: orders.ID, Partition: 1, Leader: ptr(model.NodeID(1))})
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := next.Topic("orders"); o.Partitions[1].Leader != 2 {
		t.Error("PartitionChange modified the previous image's topic")
	}
	if p, _ := changed.Topic("payments"); p != mustTopic(t, next, "payments") {
		t.Error("an untouched topic was copied")
	}
	d := DiffTopics(next, changed)
	if len(d.Created)+len(d.Deleted) != 0 || len(d.Changed) != 1 || d.Changed[0].Name != "orders" {
		t.Errorf("DiffTopics = %+v", d)
	}

	// ACLs and credentials: a batch that changes them leaves the
	// previous image's as they were, and copies what it keeps.
	prefixed := ACLID{1}
	salt := []byte("salt")
	secured, err := changed.Apply(
		AccessControlEntryRecord{ID: prefixed, ACL: ACL{ResourceType: 2, ResourceName: "ord", PatternType: 4, Principal: "User:bob", Host: "*", Operation: 4, PermissionType: 3}},
		RemoveAccessControlEntryRecord{ID: ACLID(orders.ID)},
		UserScramCredentialRecord{Name: "alice", Mechanism: ScramSHA256, Salt: salt, StoredKey: []byte("k3"), ServerKey: []byte("k4"), Iterations: 8192},
		RemoveUserScramCredentialRecord{Name: "alice", Mechanism: ScramSHA256},
		UserScramCredentialRecord{Name: "bob", Mechanism: ScramSHA512, Salt: salt, StoredKey: []byte("k5"), ServerKey: []byte("k6"), Iterations: 4096},
	)
	if err != nil {
		t.Fatal(err)
	}
	salt[0] = 'X'
	if _, ok := changed.ACL(ACLID(orders.ID)); !ok {
		t.Error("removing an ACL removed it from the previous image")
	}
	if _, ok := changed.ACL(prefixed); ok {
		t.Error("adding an ACL added it to the previous image")
	}
	if c, ok := changed.ScramCredential("alice", ScramSHA256); !ok || c.Iterations != 4096 {
		t.Errorf("the previous image's credential is %v, %v", c, ok)
	}
	if _, ok := secured.ScramCredential("alice", ScramSHA256); ok {
		t.Error("alice's credential survived its removal")
	}
	if c, ok := secured.ScramCredential("bob", ScramSHA512); !ok || string(c.Salt) != "salt" {
		t.Errorf("bob's credential %q, %v: the image shares the record's bytes", c.Salt, ok)
	}
	if o, _ := secured.Topic("orders"); o != mustTopic(t, changed, "orders") {
		t.Error("an ACL batch copied a topic")
	}

	// Client quotas: a batch that changes an entity's values leaves the
	// previous image's as they were.
	limited, err := secured.Apply(
		quotaRec(QuotaConsumerByteRate, 2048, userData("alice")),
		ClientQuotaRecord{Entity: []QuotaEntityData{userData("alice")}, Key: QuotaProducerByteRate, Remove: true},
		quotaRec(QuotaRequestPercentage, 50, QuotaEntityData{EntityType: QuotaEntityClientID}),
	)
	if err != nil {
		t.Fatal(err)
	}
	alice := QuotaEntity{User: QuotaNamed("alice")}
	if q, _ := secured.ClientQuota(alice); !maps.Equal(q, map[string]float64{QuotaProducerByteRate: 1024}) {
		t.Errorf("the previous image's quotas of alice are %v", q)
	}
	if q, _ := limited.ClientQuota(alice); !maps.Equal(q, map[string]float64{QuotaConsumerByteRate: 2048}) {
		t.Errorf("alice's quotas are %v", q)
	}
	if len(secured.ClientQuotas()) != 1 || len(limited.ClientQuotas()) != 2 {
		t.Errorf("%d and %d entities, want 1 and 2", len(secured.ClientQuotas()), len(limited.ClientQuotas()))
	}

	// The maps a getter returns belong to the caller.
	cfg := changed.TopicConfig("orders")
	cfg["retention.ms"] = "5"
	if changed.TopicConfig("orders")["retention.ms"] != "1000" {
		t.Error("TopicConfig returned the image's own map")
	}
}

func mustTopic(t *testing.T, img *Image, name string) *TopicImage {
	t.Helper()
	tp, ok := img.Topic(name)
	if !ok {
		t.Fatalf("no topic %s", name)
	}
	return tp
}

func TestPartitionChangeEpochs(t *testing.T) {
	base := baseImage(t)
	id := mustID(t, idOrders)
	cases := []struct {
		name                   string
		change                 PartitionChange
		leader                 model.NodeID
		leaderEpoch, partEpoch int32
		isr                    []model.NodeID
	}{
		{"isr shrink keeps leader epoch", PartitionChange{TopicID: id, ISR: nodes(1)}, 1, 0, 1, nodes(1)},
		{"new leader bumps both", PartitionChange{TopicID: id, Leader: ptr(model.NodeID(2))}, 2, 1, 1, nodes(1, 2)},
		{"same leader is no leader change", PartitionChange{TopicID: id, Leader: ptr(model.NodeID(1))}, 1, 0, 1, nodes(1, 2)},
		{"no leader", PartitionChange{TopicID: id, Leader: ptr(NoLeader), ISR: []model.NodeID{}}, NoLeader, 1, 1, []model.NodeID{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			next, err := base.Apply(c.change)
			if err != nil {
				t.Fatal(err)
			}
			p, _ := next.Partition(model.TopicPartition{Topic: "orders", Partition: 0})
			if p.Leader != c.leader || p.LeaderEpoch != c.leaderEpoch || p.PartitionEpoch != c.partEpoch || !cmp.Equal(p.ISR, c.isr) {
				t.Errorf("got leader %d epochs %d/%d isr %v", p.Leader, p.LeaderEpoch, p.PartitionEpoch, p.ISR)
			}
		})
	}
}

func TestGetters(t *testing.T) {
	img := baseImage(t)
	if _, ok := img.Partition(model.TopicPartition{Topic: "orders", Partition: 2}); ok {
		t.Error("partition 2 exists")
	}
	if _, ok := img.Partition(model.TopicPartition{Topic: "nope"}); ok {
		t.Error("unknown topic has a partition")
	}
	if tp, ok := img.TopicByID(mustID(t, idOrders)); !ok || tp.Name != "orders" || tp.ReplicationFactor() != 2 {
		t.Errorf("TopicByID = %v, %v", tp, ok)
	}
	if b := img.Brokers(); len(b) != 2 || b[0].NodeID != 1 || b[1].NodeID != 2 {
		t.Errorf("Brokers = %v", b)
	}
	if _, ok := img.Broker(3); ok {
		t.Error("broker 3 exists")
	}
	if got := img.Feature("nope"); got != 0 {
		t.Errorf("Feature = %d", got)
	}
	if got := Empty().Topics(); len(got) != 0 {
		t.Errorf("empty image has topics %v", got)
	}
}

func TestSnapshotRoundTrip(t *testing.T) {
	img := baseImage(t)
	img, err := img.ApplyAt(42,
		PartitionChange{TopicID: mustID(t, idOrders), Partition: 1, Leader: ptr(model.NodeID(1))},
		ConfigRecord{ResourceType: ResourceBroker, ResourceName: "", Name: "log.retention.ms", Value: ptr("5")},
		ProducerIDsRecord{NextProducerID: 3000},
		FeatureLevel{Name: FeatureMetadataVersion, Level: 25},
		AccessControlEntryRecord{ID: ACLID{7}, ACL: ACL{ResourceType: 4, ResourceName: "kafka-cluster", PatternType: 3, Principal: "User:*", Host: "10.0.0.1", Operation: 7, PermissionType: 2}},
		UserScramCredentialRecord{Name: "bob", Mechanism: ScramSHA512, Salt: []byte{0, 1}, StoredKey: []byte{2}, ServerKey: []byte{3}, Iterations: 16384},
		DelegationTokenRecord{TokenID: "t2", Owner: "User:bob", Requester: "User:bob", IssueTimestamp: 1, MaxTimestamp: 3, ExpirationTimestamp: 2},
		DelegationTokenRecord{TokenID: "t1", Owner: "User:alice", Requester: "User:admin", Renewers: []string{"User:bob"},
			IssueTimestamp: 10, MaxTimestamp: 30, ExpirationTimestamp: 20},
		quotaRec(QuotaRequestPercentage, 12.5, userData("alice"), QuotaEntityData{EntityType: QuotaEntityClientID}),
		quotaRec(QuotaConsumerByteRate, 1e12, QuotaEntityData{EntityType: QuotaEntityUser}),
		quotaRec(QuotaConnectionCreationRate, 7, QuotaEntityData{EntityType: QuotaEntityIP, EntityName: ptr("::1")}),
		ConfigRecord{ResourceType: ResourceClientMetrics, ResourceName: "producers", Name: "metrics", Value: ptr("org.apache.kafka.producer.")},
		ConfigRecord{ResourceType: ResourceClientMetrics, ResourceName: "producers", Name: "interval.ms", Value: ptr("1000")},
		ConfigRecord{ResourceType: ResourceGroup, ResourceName: "queue", Name: "share.auto.offset.reset", Value: ptr("earliest")},
		ConfigRecord{ResourceType: ResourceGroup, ResourceName: "queue", Name: "share.isolation.level", Value: ptr("read_committed")},
	)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteSnapshot(&buf, img); err != nil {
		t.Fatal(err)
	}
	got, err := ReadSnapshot(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(dumpImage(img), dumpImage(got)); diff != "" {
		t.Errorf("snapshot round trip (-want +got):\n%s", diff)
	}
	if len(got.ACLs()) != 2 || len(got.ScramCredentials()) != 2 || len(got.DelegationTokens()) != 2 {
		t.Errorf("snapshot kept %d ACLs, %d credentials and %d tokens, want 2, 2 and 2",
			len(got.ACLs()), len(got.ScramCredentials()), len(got.DelegationTokens()))
	}
	if diff := cmp.Diff(img.ClientQuotas(), got.ClientQuotas()); diff != "" || len(got.ClientQuotas()) != 4 {
		t.Errorf("snapshot's client quotas (-want +got):\n%s", diff)
	}
	if c := got.ClientMetricsConfig("producers"); len(c) != 2 || c["interval.ms"] != "1000" {
		t.Errorf("snapshot's client metrics subscription: %v", c)
	}
	if c := got.GroupConfig("queue"); len(c) != 2 || c["share.auto.offset.reset"] != "earliest" {
		t.Errorf("snapshot's group configs: %v", c)
	}

	// A snapshot cut at a line boundary is refused, not read as a smaller image.
	lines := bytes.SplitAfter(buf.Bytes(), []byte("\n"))
	cut := bytes.Join(lines[:len(lines)-2], nil)
	if _, err := ReadSnapshot(bytes.NewReader(cut)); !errors.Is(err, ErrMalformed) {
		t.Errorf("truncated snapshot: %v", err)
	}
	if _, err := ReadSnapshot(bytes.NewReader([]byte(`{"snapshot":2,"offset":1,"records":0}`))); !errors.Is(err, ErrUnsupportedVersion) {
		t.Errorf("future snapshot: %v", err)
	}
}

func BenchmarkApplyCreateTopic(b *testing.B) {
	img := Empty()
	for i := range 1000 {
		var id model.TopicID
		id[0], id[1], id[15] = byte(i), byte(i>>8), 1
		var err error
		img, err = img.Apply(TopicRecord{Name: "t" + itoa(int64(i)), TopicID: id},
			PartitionRecord{TopicID: id, Replicas: nodes(1), ISR: nodes(1), Leader: 1})
		if err != nil {
			b.Fatal(err)
		}
	}
	id := model.TopicID{0: 0xff, 15: 0xff}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := img.Apply(TopicRecord{Name: "new", TopicID: id},
			PartitionRecord{TopicID: id, Replicas: nodes(1), ISR: nodes(1), Leader: 1}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestTopicsStaySorted applies random creates and removes and checks the
// incrementally maintained sorted list against a full sort.
func TestTopicsStaySorted(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	img := Empty()
	live := map[string]model.TopicID{}
	next := 0
	for range 300 {
		var recs []Record
		for range 1 + rng.IntN(4) {
			if len(live) > 0 && rng.IntN(3) == 0 {
				for name, id := range live {
					recs = append(recs, RemoveTopic{TopicID: id})
					delete(live, name)
					break
				}
				continue
			}
			next++
			name := fmt.Sprintf("t%03d", rng.IntN(200))
			if _, ok := live[name]; ok {
				continue
			}
			id := model.TopicID{0: byte(next), 1: byte(next >> 8), 15: 7}
			live[name] = id
			recs = append(recs, TopicRecord{Name: name, TopicID: id})
		}
		var err error
		if img, err = img.Apply(recs...); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, tp := range img.Topics() {
			got = append(got, tp.Name)
		}
		want := slices.Sorted(maps.Keys(live))
		if !slices.Equal(got, want) {
			t.Fatalf("Topics() = %v, want %v", got, want)
		}
	}
}

// A group's configs come and go with their records, whether or not the group
// exists (the coordinator owns groups); a group needs an ID.
func TestGroupConfigs(t *testing.T) {
	img, err := Empty().Apply(
		ConfigRecord{ResourceType: ResourceGroup, ResourceName: "b", Name: "share.auto.offset.reset", Value: ptr("earliest")},
		ConfigRecord{ResourceType: ResourceGroup, ResourceName: "a", Name: "streams.num.standby.replicas", Value: ptr("1")},
	)
	if err != nil {
		t.Fatal(err)
	}
	if got := img.GroupsWithConfigs(); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("groups with configs: %v", got)
	}
	cfg := img.GroupConfig("b")
	cfg["share.auto.offset.reset"] = "latest" // a copy
	if img.GroupConfig("b")["share.auto.offset.reset"] != "earliest" {
		t.Error("GroupConfig returned the image's own map")
	}
	next, err := img.Apply(ConfigRecord{ResourceType: ResourceGroup, ResourceName: "b", Name: "share.auto.offset.reset"})
	if err != nil {
		t.Fatal(err)
	}
	if got := next.GroupsWithConfigs(); !slices.Equal(got, []string{"a"}) || len(img.GroupConfig("b")) != 1 {
		t.Errorf("after delete: %v; the old image: %v", got, img.GroupConfig("b"))
	}
	if !next.GroupConfigsChanged(img) || !img.GroupConfigsChanged(Empty()) {
		t.Error("a change of group configs not seen")
	}
	same, err := next.Apply(ConfigRecord{ResourceType: ResourceBroker, Name: "log.retention.ms", Value: ptr("5")})
	if err != nil || same.GroupConfigsChanged(next) {
		t.Errorf("a broker config change seen as a group config change (%v)", err)
	}
	other, err := next.Apply(ConfigRecord{ResourceType: ResourceGroup, ResourceName: "a", Name: "streams.num.standby.replicas", Value: ptr("2")})
	if err != nil || !other.GroupConfigsChanged(next) {
		t.Errorf("a changed value not seen (%v)", err)
	}
	if _, err := img.Apply(ConfigRecord{ResourceType: ResourceGroup, Name: "share.auto.offset.reset", Value: ptr("earliest")}); err == nil {
		t.Error("a group config without a group ID was applied")
	}
}

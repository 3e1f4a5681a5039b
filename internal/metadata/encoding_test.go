package metadata

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/samsa-io/samsa/internal/model"
)

func ptr[T any](v T) *T { return &v }

// everyRecord holds one record of each type, with every field set.
func everyRecord(t testing.TB) []Record {
	id := mustID(t, "M1JxkK_O7QwrSmmIp8blBA")
	return []Record{
		ClusterRecord{ClusterID: "q1Sh-9_ISia_jp5c-5Ck4Q"},
		BrokerRegistration{NodeID: 3, Incarnation: "ETBPbo2sy-oJKEdmhaTD4g", Rack: "r1", Endpoints: []Endpoint{
			{Name: "PLAINTEXT", Host: "h", Port: 9092, SecurityProtocol: "PLAINTEXT"},
			{Name: "SSL", Host: "h", Port: 9093, SecurityProtocol: "SSL"},
		}},
		TopicRecord{Name: "orders", TopicID: id},
		PartitionRecord{TopicID: id, Partition: 7, Replicas: []model.NodeID{3, 1}, ISR: []model.NodeID{3}, Leader: 3, LeaderEpoch: 4, PartitionEpoch: 9},
		PartitionChange{TopicID: id, Partition: 7, Leader: ptr(NoLeader), ISR: []model.NodeID{}, Replicas: nil},
		PartitionChange{TopicID: id, Partition: 2},
		ConfigRecord{ResourceType: ResourceTopic, ResourceName: "orders", Name: "cleanup.policy", Value: ptr("compact,delete")},
		ConfigRecord{ResourceType: ResourceBroker, ResourceName: "", Name: "log.retention.ms", Value: nil},
		RemoveTopic{TopicID: id},
		ProducerIDsRecord{NodeID: 3, NextProducerID: 5000},
		FeatureLevel{Name: FeatureMetadataVersion, Level: 25},
		AccessControlEntryRecord{ID: ACLID(mustID(t, idPayments)), ACL: ACL{ResourceType: 2, ResourceName: "orders", PatternType: 4,
			Principal: "User:alice", Host: "*", Operation: 3, PermissionType: 3}},
		RemoveAccessControlEntryRecord{ID: ACLID(mustID(t, idPayments))},
		UserScramCredentialRecord{Name: "alice", Mechanism: ScramSHA512, Salt: []byte("salt"), StoredKey: []byte{1, 2},
			ServerKey: []byte{3, 4}, Iterations: 8192},
		RemoveUserScramCredentialRecord{Name: "alice", Mechanism: ScramSHA512},
		DelegationTokenRecord{TokenID: "TqbdOwOrRuyYjx2Tw8SPxw", Owner: "User:alice", Requester: "User:admin",
			Renewers: []string{"User:bob", "User:carol"}, IssueTimestamp: 1000, MaxTimestamp: 3000, ExpirationTimestamp: 2000},
		RemoveDelegationTokenRecord{TokenID: "TqbdOwOrRuyYjx2Tw8SPxw"},
		ClientQuotaRecord{Entity: []QuotaEntityData{{EntityType: QuotaEntityUser, EntityName: ptr("alice")},
			{EntityType: QuotaEntityClientID}}, Key: QuotaRequestPercentage, Value: 12.5},
		ClientQuotaRecord{Entity: []QuotaEntityData{{EntityType: QuotaEntityIP, EntityName: ptr("10.0.0.1")}},
			Key: QuotaConnectionCreationRate, Remove: true},
	}
}

func TestRecordRoundTrip(t *testing.T) {
	for _, r := range everyRecord(t) {
		t.Run(string(r.Type()), func(t *testing.T) {
			b, err := EncodeRecord(r)
			if err != nil {
				t.Fatal(err)
			}
			got, err := DecodeRecord(b)
			if err != nil {
				t.Fatalf("decode %s: %v", b, err)
			}
			if diff := cmp.Diff(r, got); diff != "" {
				t.Errorf("round trip of %s (-want +got):\n%s", b, diff)
			}
		})
	}
}

func TestBatchRoundTrip(t *testing.T) {
	recs := everyRecord(t)
	b, err := EncodeBatch(recs)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeBatch(b)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(recs, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestEncodedForm pins the on-disk form of a record: it is in every Raft log.
func TestEncodedForm(t *testing.T) {
	id := mustID(t, "M1JxkK_O7QwrSmmIp8blBA")
	b, err := EncodeRecord(PartitionRecord{TopicID: id, Partition: 1, Replicas: []model.NodeID{1, 2}, ISR: []model.NodeID{1}, Leader: 1, LeaderEpoch: 2, PartitionEpoch: 3})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"partition","v":1,"data":{"partitionId":1,"replicas":[1,2],"isr":[1],"leader":1,"leaderEpoch":2,"partitionEpoch":3,"topicId":"M1JxkK_O7QwrSmmIp8blBA"}}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	b, err = EncodeRecord(AccessControlEntryRecord{ID: ACLID(id), ACL: ACL{ResourceType: 2, ResourceName: "orders", PatternType: 3,
		Principal: "User:alice", Host: "*", Operation: 3, PermissionType: 3}})
	if err != nil {
		t.Fatal(err)
	}
	want = `{"type":"access_control_entry","v":1,"data":{"id":"M1JxkK_O7QwrSmmIp8blBA","resourceType":2,"resourceName":"orders","patternType":3,"principal":"User:alice","host":"*","operation":3,"permissionType":3}}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	b, err = EncodeRecord(UserScramCredentialRecord{Name: "alice", Mechanism: ScramSHA256, Salt: []byte("salt"), StoredKey: []byte("stored"),
		ServerKey: []byte("server"), Iterations: 4096})
	if err != nil {
		t.Fatal(err)
	}
	want = `{"type":"user_scram_credential","v":1,"data":{"name":"alice","mechanism":1,"salt":"c2FsdA==","storedKey":"c3RvcmVk","serverKey":"c2VydmVy","iterations":4096}}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	// A default entity is a null name, as in Kafka's record.
	b, err = EncodeRecord(ClientQuotaRecord{Entity: QuotaEntity{User: QuotaNamed("alice"), ClientID: QuotaDefault()}.Data(),
		Key: QuotaProducerByteRate, Value: 1048576})
	if err != nil {
		t.Fatal(err)
	}
	want = `{"type":"client_quota","v":1,"data":{"entity":[{"entityType":"user","entityName":"alice"},{"entityType":"client-id","entityName":null}],"key":"producer_byte_rate","value":1048576,"remove":false}}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
}

// TestScramRecordHidesKeys: a credential record printed by mistake (a log
// line, an error) shows no salt or key.
func TestScramRecordHidesKeys(t *testing.T) {
	r := UserScramCredentialRecord{Name: "alice", Mechanism: ScramSHA256, Salt: []byte("SALT"), StoredKey: []byte("STORED"),
		ServerKey: []byte("SERVER"), Iterations: 4096}
	c := ScramCredential{Salt: r.Salt, StoredKey: r.StoredKey, ServerKey: r.ServerKey, Iterations: r.Iterations}
	for _, s := range []string{fmt.Sprint(r), fmt.Sprintf("%+v", r), fmt.Sprint(c), fmt.Sprintf("%+v", []Record{r})} {
		for _, secret := range []string{"SALT", "STORED", "SERVER", "[83 65"} {
			if strings.Contains(s, secret) {
				t.Errorf("%s shows %s", s, secret)
			}
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	cases := []struct {
		name, in string
		want     error
	}{
		{"unknown type", `{"type":"acl","v":1,"data":{}}`, ErrUnknownRecordType},
		{"missing type", `{"v":1,"data":{}}`, ErrUnknownRecordType},
		{"newer version", `{"type":"cluster","v":2,"data":{"clusterId":"x"}}`, ErrUnsupportedVersion},
		{"missing version", `{"type":"cluster","data":{"clusterId":"x"}}`, ErrUnsupportedVersion},
		{"unknown envelope field", `{"type":"cluster","v":1,"data":{},"extra":1}`, ErrMalformed},
		{"unknown data field", `{"type":"cluster","v":1,"data":{"clusterId":"x","more":1}}`, ErrMalformed},
		{"null data", `{"type":"cluster","v":1,"data":null}`, ErrMalformed},
		{"array data", `{"type":"cluster","v":1,"data":[]}`, ErrMalformed},
		{"trailing data", `{"type":"cluster","v":1,"data":{}} {}`, ErrMalformed},
		{"not json", `cluster`, ErrMalformed},
		{"wrong field type", `{"type":"feature_level","v":1,"data":{"name":"x","featureLevel":"high"}}`, ErrMalformed},
		{"missing topic id", `{"type":"topic","v":1,"data":{"name":"x"}}`, ErrMalformed},
		{"short topic id", `{"type":"remove_topic","v":1,"data":{"topicId":"AAAA"}}`, ErrMalformed},
		{"non-canonical topic id", `{"type":"remove_topic","v":1,"data":{"topicId":"M1JxkK_O7QwrSmmIp8blBB"}}`, ErrMalformed},
		{"unknown field beside topic id", `{"type":"remove_topic","v":1,"data":{"topicId":"M1JxkK_O7QwrSmmIp8blBA","x":1}}`, ErrMalformed},
		{"short acl id", `{"type":"remove_access_control_entry","v":1,"data":{"id":"AAAA"}}`, ErrMalformed},
		{"numeric acl id", `{"type":"remove_access_control_entry","v":1,"data":{"id":7}}`, ErrMalformed},
		{"unknown acl field", `{"type":"access_control_entry","v":1,"data":{"id":"M1JxkK_O7QwrSmmIp8blBA","x":1}}`, ErrMalformed},
		{"salt not base64", `{"type":"user_scram_credential","v":1,"data":{"name":"a","mechanism":1,"salt":"!!"}}`, ErrMalformed},
		{"a password field", `{"type":"user_scram_credential","v":1,"data":{"name":"a","mechanism":1,"password":"x"}}`, ErrMalformed},
		{"quota value as text", `{"type":"client_quota","v":1,"data":{"entity":[{"entityType":"user","entityName":"a"}],"key":"k","value":"1"}}`, ErrMalformed},
		{"quota value not a number", `{"type":"client_quota","v":1,"data":{"entity":[{"entityType":"user","entityName":"a"}],"key":"k","value":NaN}}`, ErrMalformed},
		{"unknown entity field", `{"type":"client_quota","v":1,"data":{"entity":[{"entityType":"user","name":"a"}],"key":"k","value":1}}`, ErrMalformed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeRecord([]byte(c.in))
			if !errors.Is(err, c.want) {
				t.Errorf("DecodeRecord(%s) = %v, want %v", c.in, err, c.want)
			}
		})
	}
	for _, in := range []string{`null`, `{}`, `[{"type":"nope","v":1,"data":{}}]`, `[1]`} {
		if _, err := DecodeBatch([]byte(in)); err == nil {
			t.Errorf("DecodeBatch(%s) succeeded", in)
		}
	}
}

func TestUUID(t *testing.T) {
	rng := rand.NewChaCha8([32]byte{1})
	seen := map[model.TopicID]bool{}
	for range 2000 {
		id, err := NewUUID(rng)
		if err != nil {
			t.Fatal(err)
		}
		s := FormatUUID(id)
		if len(s) != 22 || strings.HasPrefix(s, "-") || seen[id] {
			t.Fatalf("bad or repeated uuid %s", s)
		}
		seen[id] = true
		back, err := ParseUUID(s)
		if err != nil || back != id {
			t.Fatalf("ParseUUID(%s) = %v, %v", s, back, err)
		}
	}
	if _, err := NewUUID(bytes.NewReader(nil)); err == nil {
		t.Error("NewUUID from an empty reader succeeded")
	}
}

// FuzzDecodeBatch checks that decoding never panics and that whatever decodes
// encodes back to something that decodes to the same records.
func FuzzDecodeBatch(f *testing.F) {
	b, err := EncodeBatch(everyRecord(f))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte(`[]`))
	f.Add([]byte(`[{"type":"partition_change","v":1,"data":{"topicId":"M1JxkK_O7QwrSmmIp8blBA","partitionId":1,"leader":-1,"isr":null,"replicas":[]}}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, err := DecodeBatch(data)
		if err != nil {
			return
		}
		again, err := EncodeBatch(recs)
		if err != nil {
			t.Fatalf("encode of decoded records: %v", err)
		}
		back, err := DecodeBatch(again)
		if err != nil {
			t.Fatalf("decode of re-encoded %s: %v", again, err)
		}
		if diff := cmp.Diff(recs, back); diff != "" {
			t.Fatalf("round trip differs (-first +second):\n%s", diff)
		}
		// Applying must not panic either, whatever the records say.
		_, _ = Empty().Apply(recs...)
	})
}

// FuzzReadSnapshot checks that a damaged snapshot gives an error, not a panic.
func FuzzReadSnapshot(f *testing.F) {
	id := mustID(f, "M1JxkK_O7QwrSmmIp8blBA")
	recs := append(everyRecord(f)[:3], PartitionRecord{TopicID: id, Replicas: []model.NodeID{3}, ISR: []model.NodeID{3}, Leader: 3},
		AccessControlEntryRecord{ID: ACLID(id), ACL: ACL{ResourceType: 2, ResourceName: "orders", PatternType: 3, Principal: "User:a", Host: "*", Operation: 2, PermissionType: 3}},
		UserScramCredentialRecord{Name: "a", Mechanism: ScramSHA256, Salt: []byte{1}, StoredKey: []byte{2}, ServerKey: []byte{3}, Iterations: 4096},
		ClientQuotaRecord{Entity: QuotaEntity{IP: QuotaDefault()}.Data(), Key: QuotaConnectionCreationRate, Value: 10})
	img, err := Empty().Apply(recs...)
	if err != nil {
		f.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteSnapshot(&buf, img); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = ReadSnapshot(bytes.NewReader(data))
	})
}

// FuzzParseUUID: a UUID that parses is the canonical spelling of its ID.
func FuzzParseUUID(f *testing.F) {
	f.Add("M1JxkK_O7QwrSmmIp8blBA")
	f.Add("AAAAAAAAAAAAAAAAAAAAAA")
	f.Add("M1JxkK_O7QwrSmmIp8blBB")
	f.Fuzz(func(t *testing.T, s string) {
		id, err := ParseUUID(s)
		if err != nil {
			return
		}
		if FormatUUID(id) != s {
			t.Fatalf("%q parses as %v, spelled %q", s, id, FormatUUID(id))
		}
	})
}

// A PartitionChange that clears a reassignment with a pointer to a nil
// list must decode as cleared, not as unchanged.
func TestPartitionChangeClearsReassignment(t *testing.T) {
	var none []model.NodeID
	in := PartitionChange{TopicID: model.TopicID{1}, AddingReplicas: &none, RemovingReplicas: &none}
	b, err := EncodeRecord(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := DecodeRecord(b)
	if err != nil {
		t.Fatal(err)
	}
	ch := out.(PartitionChange)
	if ch.AddingReplicas == nil || ch.RemovingReplicas == nil || len(*ch.AddingReplicas) != 0 {
		t.Fatalf("decoded %s as %+v", b, ch)
	}
}

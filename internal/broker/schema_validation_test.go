package broker

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/config"
	"github.com/samsa-io/samsa/internal/record"
)

// memSchemaIDs is an in-memory registry for the broker's tests: subjects
// with their IDs, and the record name of each ID. cmd/samsa's tests run
// the real registry.
type memSchemaIDs struct {
	mu       sync.Mutex
	subjects map[string][]int32
	names    map[int32]string
	down     error // every lookup fails with it
	lookups  int
}

func (m *memSchemaIDs) Registered(_ context.Context, subject string, id int32) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.lookups++
	if m.down != nil {
		return false, m.down
	}
	for _, have := range m.subjects[subject] {
		if have == id {
			return true, nil
		}
	}
	return false, nil
}

func (m *memSchemaIDs) RecordName(_ context.Context, id int32) (string, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.lookups++
	if m.down != nil {
		return "", false, m.down
	}
	name, ok := m.names[id]
	return name, ok, nil
}

// wire is a payload in the registry's wire format: magic 0, the ID, data.
func wire(id int32, data string) []byte {
	return append(binary.BigEndian.AppendUint32([]byte{0}, uint32(id)), data...)
}

func testRegistry() *memSchemaIDs {
	return &memSchemaIDs{
		subjects: map[string][]int32{
			"orders-value": {1, 2}, "orders-key": {3},
			"com.acme.Order": {4}, "orders-com.acme.Order": {4},
			"other-value": {5},
		},
		names: map[int32]string{1: "com.acme.Old", 2: "com.acme.Old", 3: "", 4: "com.acme.Order", 5: "com.acme.Other", 6: ""},
	}
}

func TestCheckSchemaIDs(t *testing.T) {
	value := func(strategy string) schemaCheck {
		return schemaCheck{topic: "orders", parts: [2]schemaPart{
			{what: "key", config: "confluent.key.schema.validation", strategy: config.TopicNameStrategy},
			{on: true, what: "value", config: "confluent.value.schema.validation", strategy: strategy},
		}}
	}
	key := schemaCheck{topic: "orders", parts: [2]schemaPart{
		{on: true, what: "key", config: "confluent.key.schema.validation", strategy: config.TopicNameStrategy},
		{what: "value", config: "confluent.value.schema.validation", strategy: config.TopicNameStrategy},
	}}
	for _, c := range []struct {
		name string
		chk  schemaCheck
		recs []rawRecord
		want []badRecord // nil: accepted
	}{
		{"valid", value(config.TopicNameStrategy), []rawRecord{{Value: wire(1, "a")}, {Value: wire(2, "b")}}, nil},
		{"missing magic byte", value(config.TopicNameStrategy), []rawRecord{{Value: wire(1, "a")}, {Value: []byte("plain text")}},
			[]badRecord{{1, "value has no schema ID: it does not start with magic byte 0 of the Schema Registry's wire format"}}},
		{"empty value", value(config.TopicNameStrategy), []rawRecord{{Value: []byte{}}},
			[]badRecord{{0, "value has no schema ID: it does not start with magic byte 0 of the Schema Registry's wire format"}}},
		{"short payload", value(config.TopicNameStrategy), []rawRecord{{Value: []byte{0, 0, 1}}},
			[]badRecord{{0, "value of 3 bytes is too short for a schema ID: the wire format is magic byte 0 then a 4-byte ID"}}},
		{"unknown id", value(config.TopicNameStrategy), []rawRecord{{Value: wire(99, "a")}},
			[]badRecord{{0, "value schema ID 99 is not registered under subject orders-value (TopicNameStrategy)"}}},
		{"id of another subject", value(config.TopicNameStrategy), []rawRecord{{Value: wire(5, "a")}, {Value: wire(3, "b")}, {Value: wire(1, "c")}},
			[]badRecord{
				{0, "value schema ID 5 is not registered under subject orders-value (TopicNameStrategy)"},
				{1, "value schema ID 3 is not registered under subject orders-value (TopicNameStrategy)"},
			}},
		{"tombstone", value(config.TopicNameStrategy), []rawRecord{{Key: []byte("k"), Value: nil}}, nil},
		{"key not validated", value(config.TopicNameStrategy), []rawRecord{{Key: []byte("plain"), Value: wire(1, "")}}, nil},
		{"key", key, []rawRecord{{Key: wire(3, "k"), Value: []byte("plain")}, {Key: wire(1, "k")}},
			[]badRecord{{1, "key schema ID 1 is not registered under subject orders-key (TopicNameStrategy)"}}},
		{"null key", key, []rawRecord{{Value: []byte("plain")}}, nil},
		{"record name", value(config.RecordNameStrategy), []rawRecord{{Value: wire(4, "")}, {Value: wire(1, "")}},
			[]badRecord{{1, "value schema ID 1 is not registered under subject com.acme.Old (RecordNameStrategy)"}}},
		{"topic record name", value(config.TopicRecordNameStrategy), []rawRecord{{Value: wire(4, "")}, {Value: wire(5, "")}},
			[]badRecord{{1, "value schema ID 5 is not registered under subject orders-com.acme.Other (TopicRecordNameStrategy)"}}},
		{"record name of an unknown id", value(config.RecordNameStrategy), []rawRecord{{Value: wire(77, "")}},
			[]badRecord{{0, "value schema ID 77 is not registered in the schema registry"}}},
		{"schema without a record name", value(config.RecordNameStrategy), []rawRecord{{Value: wire(6, "")}},
			[]badRecord{{0, "value schema ID 6 has no record name for RecordNameStrategy (Samsa derives it for Avro and JSON Schema)"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, zstd := range []bool{false, true} {
				batch := rawBatch(rawBatchOptions{zstd: zstd, timestamp: 1}, c.recs...)
				got, err := checkSchemaIDs(context.Background(), testRegistry(), c.chk, batch)
				if err != nil {
					t.Fatal(err)
				}
				if !equalBad(got, c.want) {
					t.Errorf("zstd %v: got %+v, want %+v", zstd, got, c.want)
				}
			}
		})
	}
}

// checkSchemaIDs runs a walk over a batch as the produce handler does,
// through record.Validate.
func checkSchemaIDs(ctx context.Context, ids SchemaIDs, chk schemaCheck, batch []byte) ([]badRecord, error) {
	w := newSchemaWalk(ctx, nil, ids, chk)
	if _, err := record.Validate(batch, record.ValidateConfig{EachRecord: w.record}); err != nil {
		return nil, err
	}
	return w.bad, w.err
}

func equalBad(a, b []badRecord) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// One lookup per distinct ID of a batch, not one per record; a registry
// that cannot answer is an error, not a verdict.
func TestCheckSchemaIDsLookups(t *testing.T) {
	reg := testRegistry()
	chk, _ := schemaCheckOf("orders", mustTopicConfig(t, map[string]string{"confluent.value.schema.validation": "true"}))
	recs := make([]rawRecord, 100)
	for i := range recs {
		recs[i] = rawRecord{Value: wire(1+int32(i%2), "x")}
	}
	if bad, err := checkSchemaIDs(context.Background(), reg, chk, rawBatch(rawBatchOptions{timestamp: 1}, recs...)); err != nil || bad != nil {
		t.Fatalf("bad %v, err %v", bad, err)
	}
	if reg.lookups != 2 {
		t.Errorf("%d lookups for 2 distinct IDs", reg.lookups)
	}
	reg.down = errors.New("connection refused")
	if _, err := checkSchemaIDs(context.Background(), reg, chk, rawBatch(rawBatchOptions{timestamp: 1}, recs...)); err == nil {
		t.Error("a registry that cannot answer gave a verdict")
	}
}

func mustTopicConfig(t *testing.T, overrides map[string]string) config.Values {
	t.Helper()
	b, err := config.Parse(config.Broker, nil)
	if err != nil {
		t.Fatal(err)
	}
	v, err := config.ResolveTopic(b, overrides)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// produceSchemaBatch sends one Produce v9 of one batch and returns its partition's
// answer.
func produceSchemaBatch(t *testing.T, b *Broker, topic string, recs ...rawRecord) kmsg.ProduceResponseTopicPartition {
	t.Helper()
	r := dialRaw(t, b)
	resp := r.roundTrip(rawProduceReq(topic, 0, -1, rawBatch(rawBatchOptions{timestamp: time.Now().UnixMilli()}, recs...)), 1).(*kmsg.ProduceResponse)
	return resp.Topics[0].Partitions[0]
}

func alterTopicConfig(t *testing.T, b *Broker, topic, name string, value *string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	op := kadm.AlterConfig{Op: kadm.SetConfig, Name: name, Value: value}
	resp, err := kadm.NewClient(newFranz(t, b.Addr())).AlterTopicConfigs(ctx, []kadm.AlterConfig{op}, topic)
	if err != nil {
		return err
	}
	return resp[0].Err
}

// Through a running broker: a topic that validates refuses a bad batch
// with INVALID_RECORD and record_errors, takes a good one, follows its
// config when it changes, and retries (NOT_ENOUGH_REPLICAS) while the
// registry cannot answer.
func TestProduceSchemaValidation(t *testing.T) {
	reg := testRegistry()
	b := startBrokerWith(t, Config{LogDir: t.TempDir(), SchemaIDs: reg})
	createTopicWith(t, b, "orders", 1, map[string]*string{"confluent.value.schema.validation": kmsg.StringPtr("true")})

	if p := produceSchemaBatch(t, b, "orders", rawRecord{Value: wire(1, "ok")}, rawRecord{Key: []byte("k")}); p.ErrorCode != 0 {
		t.Fatalf("valid batch: %v %v", kerr.ErrorForCode(p.ErrorCode), p.ErrorMessage)
	}
	p := produceSchemaBatch(t, b, "orders", rawRecord{Value: wire(1, "ok")}, rawRecord{Value: []byte("no id")}, rawRecord{Value: wire(5, "")})
	if p.ErrorCode != kerr.InvalidRecord.Code || p.ErrorMessage == nil ||
		*p.ErrorMessage != "record 1: value has no schema ID: it does not start with magic byte 0 of the Schema Registry's wire format (and 1 more records)" {
		t.Fatalf("bad batch: %v %v", kerr.ErrorForCode(p.ErrorCode), derefString(p.ErrorMessage))
	}
	if len(p.ErrorRecords) != 2 || p.ErrorRecords[0].RelativeOffset != 1 || p.ErrorRecords[1].RelativeOffset != 2 ||
		*p.ErrorRecords[1].ErrorMessage != "value schema ID 5 is not registered under subject orders-value (TopicNameStrategy)" {
		t.Errorf("record errors: %+v", p.ErrorRecords)
	}

	// The strategy changes what subject is asked, at the next batch.
	if err := alterTopicConfig(t, b, "orders", "confluent.value.subject.name.strategy", kmsg.StringPtr("io.confluent.kafka.serializers.subject.RecordNameStrategy")); err != nil {
		t.Fatal(err)
	}
	if p := produceSchemaBatch(t, b, "orders", rawRecord{Value: wire(4, "")}); p.ErrorCode != 0 {
		t.Fatalf("record name strategy: %v %v", kerr.ErrorForCode(p.ErrorCode), derefString(p.ErrorMessage))
	}

	reg.mu.Lock()
	reg.down = errors.New("dial tcp 127.0.0.1:8081: connection refused")
	reg.mu.Unlock()
	p = produceSchemaBatch(t, b, "orders", rawRecord{Value: wire(4, "")})
	if p.ErrorCode != kerr.NotEnoughReplicas.Code || !strings.Contains(derefString(p.ErrorMessage), "schema registry unavailable") {
		t.Errorf("registry down: %v %v", kerr.ErrorForCode(p.ErrorCode), derefString(p.ErrorMessage))
	}

	if err := alterTopicConfig(t, b, "orders", "confluent.value.schema.validation", kmsg.StringPtr("false")); err != nil {
		t.Fatal(err)
	}
	if p := produceSchemaBatch(t, b, "orders", rawRecord{Value: []byte("no id")}); p.ErrorCode != 0 {
		t.Errorf("validation off: %v %v", kerr.ErrorForCode(p.ErrorCode), derefString(p.ErrorMessage))
	}
}

// A broker with no registry refuses to turn validation on, in each API
// that sets topic configs, and refuses the batches of a topic that
// validates anyway (its config set elsewhere): never accepted unchecked.
func TestSchemaValidationNeedsARegistry(t *testing.T) {
	b := startBroker(t)
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	adm := kadm.NewClient(newFranz(t, b.Addr()))
	resp, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{"confluent.value.schema.validation": kmsg.StringPtr("TRUE")}, "v")
	if !errors.Is(resp.Err, kerr.InvalidConfig) || !strings.Contains(resp.ErrMessage, "needs a schema registry") {
		t.Errorf("CreateTopics: %v %v %q", err, resp.Err, resp.ErrMessage)
	}
	createTopic(t, b, "t", 1)
	if err := alterTopicConfig(t, b, "t", "confluent.key.schema.validation", kmsg.StringPtr("true")); !errors.Is(err, kerr.InvalidConfig) {
		t.Errorf("IncrementalAlterConfigs: %v", err)
	}
	legacy, err := adm.AlterTopicConfigsState(ctx, []kadm.AlterConfig{{Name: "confluent.value.schema.validation", Value: kmsg.StringPtr("true")}}, "t")
	if err != nil || !errors.Is(legacy[0].Err, kerr.InvalidConfig) {
		t.Errorf("AlterConfigs: %v %+v", err, legacy)
	}
	// Turning it off, or naming a strategy, is fine without a registry.
	if err := alterTopicConfig(t, b, "t", "confluent.key.schema.validation", kmsg.StringPtr("false")); err != nil {
		t.Errorf("off: %v", err)
	}

	// A topic created where a registry was configured, led by a broker
	// without one: its batches are refused, saying why.
	b.topics.mu.Lock()
	ts := *b.topics.byName["t"]
	ts.config = mustTopicConfig(t, map[string]string{"confluent.value.schema.validation": "true"})
	b.topics.byName["t"] = &ts
	b.topics.byID[ts.id] = &ts
	b.topics.mu.Unlock()
	p := produceSchemaBatch(t, b, "t", rawRecord{Value: wire(1, "")})
	if p.ErrorCode != kerr.InvalidRecord.Code || !strings.Contains(derefString(p.ErrorMessage), "has no schema registry") {
		t.Errorf("produce: %v %v", kerr.ErrorForCode(p.ErrorCode), derefString(p.ErrorMessage))
	}
}

func derefString(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// BenchmarkProduceSchemaValidation is the produce path of
// BenchmarkProducePath with value validation off and on (TopicNameStrategy,
// every record carrying one registered ID, the registry's answer in
// memory as the in-process registry gives it), for plain and
// zstd-compressed batches of 100 records of 100 bytes.
func BenchmarkProduceSchemaValidation(b *testing.B) {
	for _, zstd := range []bool{false, true} {
		for _, on := range []bool{false, true} {
			name := "plain"
			if zstd {
				name = "zstd"
			}
			if on {
				name += "-validation"
			}
			b.Run(name, func(b *testing.B) { benchSchemaValidation(b, zstd, on) })
		}
	}
}

func benchSchemaValidation(b *testing.B, zstd, on bool) {
	br := startBrokerWith(b, Config{LogDir: b.TempDir(), SchemaIDs: &memSchemaIDs{subjects: map[string][]int32{"bench-value": {1}}}})
	createTopicWith(b, br, "bench", 1, map[string]*string{"confluent.value.schema.validation": kmsg.StringPtr(map[bool]string{false: "false", true: "true"}[on])})
	recs := make([]rawRecord, 100)
	for i := range recs {
		recs[i] = rawRecord{Key: []byte("key"), Value: wire(1, strings.Repeat("v", 95))}
	}
	batch := rawBatch(rawBatchOptions{zstd: zstd, timestamp: time.Now().UnixMilli()}, recs...)
	r := dialRaw(b, br)
	if resp := r.roundTrip(rawProduceReq("bench", 0, 1, batch), 1).(*kmsg.ProduceResponse); resp.Topics[0].Partitions[0].ErrorCode != 0 {
		b.Fatalf("produce: %v", kerr.ErrorForCode(resp.Topics[0].Partitions[0].ErrorCode))
	}
	body := encodeRequest(rawProduceReq("bench", 0, 1, batch), 1)
	frame := append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...)
	r.nc.SetDeadline(time.Time{})
	var size [4]byte
	b.SetBytes(int64(len(batch)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := r.nc.Write(frame); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(r.nc, size[:]); err != nil {
			b.Fatal(err)
		}
		if _, err := io.CopyN(io.Discard, r.nc, int64(binary.BigEndian.Uint32(size[:]))); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(recs))/b.Elapsed().Seconds(), "records/s")
}

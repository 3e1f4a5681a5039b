package broker

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
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
// with their IDs, the record name of each Avro ID, and the message names
// of each Protobuf ID by message indexes. cmd/samsa's tests run the real
// registry.
type memSchemaIDs struct {
	mu       sync.Mutex
	subjects map[string][]int32
	names    map[int32]string
	protos   map[int32]map[string]string // fmt.Sprint(indexes) -> full name
	down     error                       // every lookup fails with it
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

func (m *memSchemaIDs) SchemaType(_ context.Context, id int32) (string, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.lookups++
	if m.down != nil {
		return "", false, m.down
	}
	if m.protos[id] != nil {
		return "PROTOBUF", true, nil
	}
	_, ok := m.names[id]
	return "AVRO", ok, nil
}

func (m *memSchemaIDs) RecordName(_ context.Context, id int32, indexes []int) (string, string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.lookups++
	if m.down != nil {
		return "", "", m.down
	}
	if messages := m.protos[id]; messages != nil {
		if name := messages[fmt.Sprint(indexes)]; name != "" {
			return name, "", nil
		}
		return "", fmt.Sprintf("message indexes %v name no message", indexes), nil
	}
	if indexes != nil {
		return "", "", fmt.Errorf("indexes %v asked for Avro schema ID %d", indexes, id)
	}
	name, ok := m.names[id]
	switch {
	case !ok:
		return "", "no schema has the ID", nil
	case name == "":
		return "", "an Avro schema has one only when it is a record", nil
	}
	return name, "", nil
}

// wire is a payload in the registry's wire format: magic 0, the ID, data.
func wire(id int32, data string) []byte {
	return append(binary.BigEndian.AppendUint32([]byte{0}, uint32(id)), data...)
}

// Protobuf message indexes as Confluent's serializers write them.
const (
	pbFirst     = "\x00"         // [0]
	pbFirstLong = "\x02\x00"     // [0], written in full
	pbSecond    = "\x02\x02"     // [1]
	pbNested    = "\x04\x02\x00" // [1 0]
	pbFourth    = "\x02\x06"     // [3]
)

func testRegistry() *memSchemaIDs {
	return &memSchemaIDs{
		subjects: map[string][]int32{
			"orders-value": {1, 2}, "orders-key": {3},
			"com.acme.Order": {4}, "orders-com.acme.Order": {4},
			"other-value": {5},
			"acme.Order":  {10}, "orders-acme.Refund.Line": {10},
		},
		names: map[int32]string{1: "com.acme.Old", 2: "com.acme.Old", 3: "", 4: "com.acme.Order", 5: "com.acme.Other", 6: ""},
		protos: map[int32]map[string]string{
			10: {"[0]": "acme.Order", "[1]": "acme.Refund", "[1 0]": "acme.Refund.Line"},
		},
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
			[]badRecord{{0, "value schema ID 6 has no record name for RecordNameStrategy: an Avro schema has one only when it is a record"}}},
		{"protobuf record name", value(config.RecordNameStrategy), []rawRecord{
			{Value: wire(10, pbFirst+"a")}, {Value: wire(10, pbSecond+"b")}, {Value: wire(10, pbFirstLong+"c")}, {Value: wire(10, pbFirst)},
		}, []badRecord{{1, "value schema ID 10 is not registered under subject acme.Refund (RecordNameStrategy)"}}},
		{"protobuf topic record name", value(config.TopicRecordNameStrategy), []rawRecord{
			{Value: wire(10, pbNested+"a")}, {Value: wire(10, pbNested+"b")}, {Value: wire(10, pbFirst+"c")}, {Value: wire(10, pbNested)},
		}, []badRecord{{2, "value schema ID 10 is not registered under subject orders-acme.Order (TopicRecordNameStrategy)"}}},
		{"protobuf message indexes out of range", value(config.RecordNameStrategy), []rawRecord{{Value: wire(10, pbFourth+"a")}},
			[]badRecord{{0, "value schema ID 10 has no record name for RecordNameStrategy: message indexes [3] name no message"}}},
		{"protobuf message indexes missing", value(config.RecordNameStrategy), []rawRecord{{Value: wire(10, pbFirst)}, {Value: wire(10, "")}},
			[]badRecord{{1, "value schema ID 10 is a Protobuf schema, and the message indexes after it cannot be read: bad message-index array: cannot read the count"}}},
		{"protobuf message indexes truncated", value(config.RecordNameStrategy), []rawRecord{{Value: wire(10, "\x04\x02")}},
			[]badRecord{{0, "value schema ID 10 is a Protobuf schema, and the message indexes after it cannot be read: bad message-index array: 2 indexes announced, only 1 readable"}}},
		{"protobuf message indexes negative count", value(config.RecordNameStrategy), []rawRecord{{Value: wire(10, "\x03")}},
			[]badRecord{{0, "value schema ID 10 is a Protobuf schema, and the message indexes after it cannot be read: bad message-index array: count -2, want 0 to 100"}}},
		{"protobuf under the topic name", value(config.TopicNameStrategy), []rawRecord{{Value: wire(10, "\x03")}},
			[]badRecord{{0, "value schema ID 10 is not registered under subject orders-value (TopicNameStrategy)"}}},
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

	// A Protobuf ID under a record name strategy: its type once, then a
	// name and a registration per message the records name.
	reg = testRegistry()
	chk, _ = schemaCheckOf("orders", mustTopicConfig(t, map[string]string{
		"confluent.value.schema.validation": "true", "confluent.value.subject.name.strategy": "TopicRecordNameStrategy",
	}))
	for i := range recs {
		recs[i] = rawRecord{Value: wire(10, []string{pbNested, pbFirst}[i%2]+"x")}
	}
	bad, err := checkSchemaIDs(context.Background(), reg, chk, rawBatch(rawBatchOptions{timestamp: 1}, recs...))
	if err != nil || len(bad) != 50 || bad[0].index != 1 || bad[49].index != 99 {
		t.Fatalf("bad %v, err %v; want the 50 records of acme.Order", bad, err)
	}
	if reg.lookups != 5 {
		t.Errorf("%d lookups for two Protobuf messages of one ID", reg.lookups)
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

package main

import (
	"context"
	"encoding/binary"
	"errors"
	"log/slog"
	"net"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/samsa-io/samsa/internal/config"
	"github.com/samsa-io/samsa/internal/freeport"
	"github.com/samsa-io/samsa/internal/record"
	"github.com/samsa-io/samsa/internal/task"
	"github.com/samsa-io/samsa/pkg/serde"
)

// TestServeValidatesSchemaIDs: samsa serve with its registry on, a topic
// with confluent.value.schema.validation=true takes a record carrying a
// registered ID and refuses, with INVALID_RECORD and the reason, one
// without, and one with another subject's ID; turned off, it takes them.
// Real franz-go producer, admin and registry clients.
func TestServeValidatesSchemaIDs(t *testing.T) {
	port, err := freeport.One()
	if err != nil {
		t.Fatal(err)
	}
	kafka := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	registry := serveWithRegistry(t, map[string]string{"listeners": "PLAINTEXT://" + kafka})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	src, err := sr.NewClient(sr.URLs("http://" + registry))
	if err != nil {
		t.Fatal(err)
	}
	order, err := src.CreateSchema(ctx, "orders-value", sr.Schema{Schema: `{"type":"record","name":"Order","fields":[{"name":"n","type":"int"}]}`})
	if err != nil {
		t.Fatal(err)
	}
	other, err := src.CreateSchema(ctx, "other-value", sr.Schema{Schema: `"string"`})
	if err != nil {
		t.Fatal(err)
	}

	cl, err := kgo.NewClient(kgo.SeedBrokers(kafka), kgo.RecordRetries(3))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	created, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{"confluent.value.schema.validation": kmsg.StringPtr("true")}, "orders")
	if err != nil || created.Err != nil {
		t.Fatalf("create topic: %v %v", err, created.Err)
	}
	produce := func(value []byte) error {
		return cl.ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: value}).FirstErr()
	}
	valid := wireValue(order.ID, 2) // the Avro int 1
	if err := produce(valid); err != nil {
		t.Fatalf("valid record: %v", err)
	}
	if err := produce([]byte("plain text")); !errors.Is(err, kerr.InvalidRecord) {
		t.Fatalf("record without an ID: %v, want INVALID_RECORD", err)
	}
	if err := produce(wireValue(other.ID, 'x')); !errors.Is(err, kerr.InvalidRecord) {
		t.Fatalf("record with another subject's ID: %v, want INVALID_RECORD", err)
	}
	if err := produce(nil); err != nil {
		t.Fatalf("tombstone: %v", err)
	}

	// The reason, as the response carries it (franz-go's producer reports
	// only the code).
	p := rawProduce(ctx, t, cl, "orders", created.ID, wireValue(other.ID, 'x'))
	want := "record 0: value schema ID " + strconv.Itoa(other.ID) + " is not registered under subject orders-value (TopicNameStrategy)"
	if p.ErrorCode != kerr.InvalidRecord.Code || p.ErrorMessage == nil || *p.ErrorMessage != want ||
		len(p.ErrorRecords) != 1 || p.ErrorRecords[0].RelativeOffset != 0 {
		t.Fatalf("refusal: %v %v %+v, want %q", kerr.ErrorForCode(p.ErrorCode), p.ErrorMessage, p.ErrorRecords, want)
	}

	// A schema registered after the topic's first refusal is found (the
	// negative answer is cached for a second only).
	later, err := src.CreateSchema(ctx, "orders-value", sr.Schema{Schema: `{"type":"record","name":"Order","fields":[{"name":"n","type":"int"},{"name":"m","type":"int","default":0}]}`})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for err := produce(wireValue(later.ID, 2, 0)); err != nil; err = produce(wireValue(later.ID, 2, 0)) {
		if !errors.Is(err, kerr.InvalidRecord) || time.Now().After(deadline) {
			t.Fatalf("newly registered ID: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}

	// Protobuf under RecordNameStrategy: the subject is the message the
	// record's message indexes name, as pkg/serde (Confluent's format)
	// writes them.
	refunds := protobufRecordNames(ctx, t, adm, src, cl)

	// Another broker asks the same registry over HTTP
	// (confluent.schema.registry.url).
	port2, err := freeport.One()
	if err != nil {
		t.Fatal(err)
	}
	kafka2 := net.JoinHostPort("127.0.0.1", strconv.Itoa(port2))
	serveUntil(t, map[string]string{"listeners": "PLAINTEXT://" + kafka2, "confluent.schema.registry.url": "http://" + registry},
		`msg="samsa serving"()`)
	cl2, err := kgo.NewClient(kgo.SeedBrokers(kafka2), kgo.RecordRetries(3))
	if err != nil {
		t.Fatal(err)
	}
	defer cl2.Close()
	if c, err := kadm.NewClient(cl2).CreateTopic(ctx, 1, 1, map[string]*string{"confluent.value.schema.validation": kmsg.StringPtr("true")}, "orders"); err != nil || c.Err != nil {
		t.Fatalf("create topic over HTTP: %v %v", err, c.Err)
	}
	if err := cl2.ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: valid}).FirstErr(); err != nil {
		t.Fatalf("valid record, registry over HTTP: %v", err)
	}
	if err := cl2.ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: wireValue(other.ID, 'x')}).FirstErr(); !errors.Is(err, kerr.InvalidRecord) {
		t.Fatalf("another subject's ID, registry over HTTP: %v, want INVALID_RECORD", err)
	}
	if c, err := kadm.NewClient(cl2).CreateTopic(ctx, 1, 1, refunds.configs, "refunds"); err != nil || c.Err != nil {
		t.Fatalf("create topic over HTTP: %v %v", err, c.Err)
	}
	if err := cl2.ProduceSync(ctx, &kgo.Record{Topic: "refunds", Value: refunds.valid}).FirstErr(); err != nil {
		t.Fatalf("Protobuf record, registry over HTTP: %v", err)
	}
	if err := cl2.ProduceSync(ctx, &kgo.Record{Topic: "refunds", Value: refunds.otherMessage}).FirstErr(); !errors.Is(err, kerr.InvalidRecord) {
		t.Fatalf("Protobuf record of another message, registry over HTTP: %v, want INVALID_RECORD", err)
	}

	// Topic configs are dynamic: off, the same record is taken.
	if _, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Name: "confluent.value.schema.validation", Value: kmsg.StringPtr("false")}}, "orders"); err != nil {
		t.Fatal(err)
	}
	if err := produce([]byte("plain text")); err != nil {
		t.Fatalf("validation off: %v", err)
	}
}

// protobufRefunds declares Order before Refund, whose map field makes an
// entry message before its nested Reason: Confluent's indexes count only
// the declared messages, so Reason is [1 0].
const protobufRefunds = `syntax = "proto3";
package acme;
message Order { string id = 1; }
message Refund { map<string, int32> amounts = 1; message Reason { string text = 1; } Reason reason = 2; }
`

// protobufRecords are a topic validating under RecordNameStrategy and
// records for it.
type protobufRecords struct {
	configs      map[string]*string
	valid        []byte // acme.Refund.Reason, registered under its name
	otherMessage []byte // the same ID naming acme.Order, not registered under its name
}

// protobufRecordNames: records pkg/serde writes for acme.Refund.Reason are
// taken on a topic validating with RecordNameStrategy; the same ID naming
// another message, or no message, or with unreadable indexes, is refused
// with the reason.
func protobufRecordNames(ctx context.Context, t *testing.T, adm *kadm.Client, src *sr.Client, cl *kgo.Client) protobufRecords {
	t.Helper()
	recs := protobufRecords{configs: map[string]*string{
		"confluent.value.schema.validation":     kmsg.StringPtr("true"),
		"confluent.value.subject.name.strategy": kmsg.StringPtr("io.confluent.kafka.serializers.subject.RecordNameStrategy"),
	}}
	created, err := adm.CreateTopic(ctx, 1, 1, recs.configs, "refunds")
	if err != nil || created.Err != nil {
		t.Fatalf("create topic: %v %v", err, created.Err)
	}
	sd := serde.New(src, serde.WithSubjectNameStrategy(serde.RecordNameStrategy))
	enc, err := sd.ForTopic(ctx, "refunds", false, serde.Source{Type: serde.Protobuf, Text: protobufRefunds, Message: "acme.Refund.Reason"})
	if err != nil {
		t.Fatal(err)
	}
	if enc.Subject() != "acme.Refund.Reason" {
		t.Fatalf("serde registered under %s", enc.Subject())
	}
	if recs.valid, err = enc.EncodeJSON([]byte(`{"text":"late"}`)); err != nil {
		t.Fatal(err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "refunds", Value: recs.valid}).FirstErr(); err != nil {
		t.Fatalf("Protobuf record: %v", err)
	}
	id := enc.Schema().ID
	recs.otherMessage = wireValue(id, 0) // [0]: acme.Order
	for _, c := range []struct {
		value []byte
		want  string
	}{
		{recs.otherMessage, "value schema ID " + strconv.Itoa(id) + " is not registered under subject acme.Order (RecordNameStrategy)"},
		{wireValue(id, 4, 2, 2), "value schema ID " + strconv.Itoa(id) + " has no record name for RecordNameStrategy: bad message-index array: [1 1]: message acme.Refund declares 1 messages, no index 1 (level 1)"},
		{wireValue(id, 4, 2), "value schema ID " + strconv.Itoa(id) + " is a Protobuf schema, and the message indexes after it cannot be read: bad message-index array: 2 indexes announced, only 1 readable"},
	} {
		p := rawProduce(ctx, t, cl, "refunds", created.ID, c.value)
		if p.ErrorCode != kerr.InvalidRecord.Code || p.ErrorMessage == nil || *p.ErrorMessage != "record 0: "+c.want {
			t.Errorf("% x: %v %v, want %q", c.value, kerr.ErrorForCode(p.ErrorCode), p.ErrorMessage, c.want)
		}
	}
	return recs
}

// serveWithRegistry runs serve in the test's process with the registry on
// a free port, and returns the registry's address once it serves.
func serveWithRegistry(t *testing.T, overrides map[string]string) string {
	t.Helper()
	all := map[string]string{"samsa.schema.registry.listener": "127.0.0.1:0"}
	for k, v := range overrides {
		all[k] = v
	}
	return serveUntil(t, all, `msg="schema registry serving".* listener=([0-9.:]+)`)
}

// serveUntil runs serve in the test's process and returns the first
// group of the first log line matching pattern.
func serveUntil(t *testing.T, overrides map[string]string, pattern string) string {
	t.Helper()
	logs := dropSink(make(chan string, 1000))
	logger := slog.New(slog.NewTextHandler(logs, nil))
	g := task.NewGroup(context.Background())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	t.Cleanup(func() {
		cancel()
		g.Stop()
	})
	all := map[string]string{"log.dirs": filepath.Join(t.TempDir(), "data"), "samsa.http.listener": "", "samsa.rest.listener": ""}
	for k, v := range overrides {
		all[k] = v
	}
	g.Go(func(context.Context) { done <- serve(ctx, "", all, false, logger) })
	re := regexp.MustCompile(pattern)
	for {
		select {
		case line := <-logs:
			if m := re.FindStringSubmatch(line); m != nil {
				return m[1]
			}
		case err := <-done:
			t.Fatalf("serve stopped: %v", err)
		case <-time.After(30 * time.Second):
			t.Fatalf("serve did not log %s", pattern)
		}
	}
}

// wireValue is the registry's wire format: magic byte 0, the ID, data.
func wireValue(id int, data ...byte) []byte {
	return append(binary.BigEndian.AppendUint32([]byte{0}, uint32(id)), data...)
}

// rawProduce sends one record in a Produce request of its own and
// returns the partition's answer.
func rawProduce(ctx context.Context, t *testing.T, cl *kgo.Client, topic string, id [16]byte, value []byte) kmsg.ProduceResponseTopicPartition {
	t.Helper()
	now := time.Now().UnixMilli()
	batch := record.Batch{ProducerID: record.NoProducerID, ProducerEpoch: record.NoProducerEpoch, BaseSequence: record.NoSequence,
		Records: []record.Record{{Timestamp: now, Value: value}}}
	raw, err := batch.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis = -1, 10000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic, rt.TopicID = topic, id // by name up to v12, by ID from v13
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = raw
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	return resp.Topics[0].Partitions[0]
}

// What the broker validates against follows the config; both a registry
// in process and a URL is refused rather than one silently ignored.
func TestSchemaIDsFor(t *testing.T) {
	for _, c := range []struct {
		raw       map[string]string
		some, err bool
	}{
		{map[string]string{}, true, false}, // the registry on its default port
		{map[string]string{"samsa.schema.registry.listener": ""}, false, false},
		{map[string]string{"samsa.schema.registry.listener": "127.0.0.1:0"}, true, false},
		{map[string]string{"confluent.schema.registry.url": "http://a:8081,http://b:8081"}, true, false},
		{map[string]string{"samsa.schema.registry.listener": "127.0.0.1:0", "confluent.schema.registry.url": "http://a:8081"}, false, true},
	} {
		values, err := config.Parse(config.Broker, c.raw)
		if err != nil {
			t.Fatal(err)
		}
		ids, _, err := schemaIDsFor(values)
		if (ids != nil) != c.some || (err != nil) != c.err {
			t.Errorf("%v: %v %v", c.raw, ids, err)
		}
	}
}

package restproxy

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/samsa-io/samsa/internal/schemaregistry"
	"github.com/samsa-io/samsa/pkg/serde"
)

// v2Proxy is a proxy on a real broker with, when asked, a real Schema
// Registry (internal/schemaregistry, in this process, storing its
// schemas in the same broker): the registry's URL, a serde over it to
// check records with, and the Proxy itself for decodeEmbedded.
type v2Proxy struct {
	*testProxy
	p           *Proxy
	registryURL string
	serde       *serde.Serde
}

func startV2Proxy(t testing.TB, withRegistry bool) *v2Proxy {
	t.Helper()
	addr := startBroker(t)
	v := &v2Proxy{}
	cfg := Config{ClientOpts: []kgo.Opt{kgo.SeedBrokers(addr)}, MaxBody: 64 << 10}
	if withRegistry {
		reg, err := schemaregistry.New(schemaregistry.Config{ClientOpts: []kgo.Opt{kgo.SeedBrokers(addr)}, Timeout: 20 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
		defer cancel()
		if err := reg.Start(ctx); err != nil {
			reg.Close()
			t.Fatal(err)
		}
		srv := httptest.NewServer(reg.Handler())
		t.Cleanup(func() { srv.Close(); reg.Close() })
		v.registryURL = srv.URL
		cfg.SchemaRegistryURL = srv.URL
		cl, err := sr.NewClient(sr.URLs(srv.URL))
		if err != nil {
			t.Fatal(err)
		}
		v.serde = serde.New(cl)
	}
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(p.Handler())
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close(); p.Close(); cl.Close() })
	admin := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	md, err := admin.BrokerMetadata(ctx)
	if err != nil {
		t.Fatal(err)
	}
	v.testProxy = &testProxy{broker: addr, url: srv.URL, clusterID: md.Cluster, admin: admin}
	v.p = p
	return v
}

// doV2 sends a v2 request with an Accept header (none when "") and
// checks every answer is application/vnd.kafka.v2+json.
func (tp *testProxy) doV2(t *testing.T, method, path, contentType, accept, body string) (int, any) {
	t.Helper()
	resp, raw := send(t, t.Context(), method, tp.url+path, contentType, accept, body)
	if ct := resp.Header.Get("Content-Type"); ct != v2ContentType {
		t.Fatalf("%s %s: content type %q, body %s", method, path, ct, raw)
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%s %s: body %s: %v", method, path, raw, err)
	}
	return resp.StatusCode, v
}

func v2Type(format string) string { return "application/vnd.kafka." + format + ".v2+json" }

// consumeAll reads n records of topic from the start with a franz-go
// consumer.
func consumeAll(t *testing.T, broker, topic string, n int) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var out []*kgo.Record
	for len(out) < n {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d records of %s, want %d: %v", len(out), topic, n, err)
		}
		fs.EachRecord(func(r *kgo.Record) { out = append(out, r) })
	}
	if len(out) != n {
		t.Fatalf("consumed %d records of %s, want %d", len(out), topic, n)
	}
	return out
}

// byPosition finds the record at a partition and offset.
func byPosition(t *testing.T, recs []*kgo.Record, partition int32, offset int64) *kgo.Record {
	t.Helper()
	for _, r := range recs {
		if r.Partition == partition && r.Offset == offset {
			return r
		}
	}
	t.Fatalf("no record at partition %d offset %d", partition, offset)
	return nil
}

func TestRestV2Metadata(t *testing.T) {
	tp := startV2Proxy(t, false)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	compact := "compact"
	if _, err := tp.admin.CreateTopic(ctx, 2, 1, map[string]*string{"cleanup.policy": &compact}, "orders"); err != nil {
		t.Fatal(err)
	}
	if _, err := tp.admin.CreateTopic(ctx, 1, 1, nil, "audit"); err != nil {
		t.Fatal(err)
	}
	md, err := tp.admin.Metadata(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	leader := md.Topics["orders"].Partitions[1].Leader
	// A commit makes the internal __consumer_offsets, which v2 does not list.
	offs := kadm.Offsets{}
	offs.Add(kadm.Offset{Topic: "audit", Partition: 0, At: 0})
	if _, err := tp.admin.CommitOffsets(ctx, "g", offs); err != nil {
		t.Fatal(err)
	}
	if all, err := tp.admin.ListTopicsWithInternal(ctx); err != nil || !all.Has("__consumer_offsets") {
		t.Fatalf("no __consumer_offsets after a commit: %v %v", all.Names(), err)
	}
	status, body := tp.doV2(t, "GET", "/topics", "", "", "")
	expect(t, "list topics", status, body, 200, `["audit","orders"]`)

	part := func(p int) string {
		return fmt.Sprintf(`{"partition":%d,"leader":%d,"replicas":[{"broker":%d,"leader":true,"in_sync":true}]}`, p, leader, leader)
	}
	status, body = tp.doV2(t, "GET", "/topics/orders", "", v2ContentType, "")
	expect(t, "get topic", status, body, 200, "")
	if field(body, "name") != "orders" || field(body, "configs", "cleanup.policy") != "compact" || field(body, "configs", "retention.ms") == nil {
		t.Fatalf("get topic: %v", body)
	}
	expect(t, "get topic's partitions", 200, field(body, "partitions"), 200, "["+part(0)+","+part(1)+"]")
	status, body = tp.doV2(t, "GET", "/topics/orders/partitions", "", "application/json", "")
	expect(t, "list partitions", status, body, 200, "["+part(0)+","+part(1)+"]")
	status, body = tp.doV2(t, "GET", "/topics/orders/partitions/1", "", "application/vnd.kafka+json", "")
	expect(t, "get partition", status, body, 200, part(1))
	status, body = tp.doV2(t, "GET", "/brokers", "", "", "")
	expect(t, "brokers", status, body, 200, fmt.Sprintf(`{"brokers":[%d]}`, leader))

	status, body = tp.doV2(t, "POST", "/topics/orders/partitions/1", v2Type("binary"), "", `{"records":[{"key":"AQ==","value":"AQ=="},{"key":"Ag==","value":"Ag=="},{"key":"Aw==","value":"Aw=="}]}`)
	expect(t, "produce", status, body, 200, `{"key_schema_id":null,"value_schema_id":null,"offsets":[
		{"partition":1,"offset":0,"error_code":null,"error":null},
		{"partition":1,"offset":1,"error_code":null,"error":null},
		{"partition":1,"offset":2,"error_code":null,"error":null}]}`)
	status, body = tp.doV2(t, "GET", "/topics/orders/partitions/1/offsets", "", "", "")
	expect(t, "partition offsets", status, body, 200, `{"beginning_offset":0,"end_offset":3}`)

	for _, c := range []struct{ what, path, accept, want string }{
		{"unknown topic", "/topics/nope", "", `{"error_code":40403,"message":"This server does not host this topic-partition."}`},
		{"unknown topic's partitions", "/topics/nope/partitions", "", `{"error_code":40403,"message":"This server does not host this topic-partition."}`},
		{"unknown partition", "/topics/orders/partitions/7", "", `{"error_code":40402,"message":"Partition not found."}`},
		{"partition not a number", "/topics/orders/partitions/x", "", `{"error_code":40402,"message":"Partition not found."}`},
		{"unknown partition's offsets", "/topics/orders/partitions/7/offsets", "", `{"error_code":40402,"message":"Partition not found."}`},
	} {
		status, body := tp.doV2(t, "GET", c.path, "", c.accept, "")
		expect(t, c.what, status, body, 404, c.want)
	}
	status, body = tp.doV2(t, "GET", "/topics", "", "text/html", "")
	expect(t, "not acceptable", status, body, 406, `{"error_code":406,"message":"HTTP 406 Not Acceptable"}`)
	status, body = tp.doV2(t, "GET", "/brokers", "", "text/html, application/json;q=0", "")
	expect(t, "not acceptable at q=0", status, body, 406, `{"error_code":406,"message":"HTTP 406 Not Acceptable"}`)
}

func TestRestV2ProduceBinaryJSON(t *testing.T) {
	tp := startV2Proxy(t, false)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if _, err := tp.admin.CreateTopics(ctx, 3, 1, nil, "bin", "js"); err != nil {
		t.Fatal(err)
	}
	b64 := base64.StdEncoding.EncodeToString
	key, value := []byte{0, 1, 0xff}, []byte("\x00binary\xfe")
	status, body := tp.doV2(t, "POST", "/topics/bin", v2Type("binary")+"; charset=utf-8", "", fmt.Sprintf(
		`{"records":[{"key":%q,"value":%q,"partition":2},{"value":%q},{"key":"a2V5","value":null,"partition":0}]}`, b64(key), b64(value), b64([]byte("x"))))
	expect(t, "produce binary", status, body, 200, "")
	offsets := field(body, "offsets").([]any)
	recs := consumeAll(t, tp.broker, "bin", 3)
	check := func(i int, wantKey, wantValue []byte) {
		t.Helper()
		o := offsets[i].(map[string]any)
		r := byPosition(t, recs, int32(o["partition"].(float64)), int64(o["offset"].(float64)))
		if string(r.Key) != string(wantKey) || string(r.Value) != string(wantValue) || (wantKey == nil) != (r.Key == nil) || (wantValue == nil) != (r.Value == nil) {
			t.Fatalf("record %d: key %q value %q, want %q %q", i, r.Key, r.Value, wantKey, wantValue)
		}
	}
	if field(offsets[0], "partition") != 2.0 || field(offsets[2], "partition") != 0.0 {
		t.Fatalf("partitions not kept: %v", offsets)
	}
	check(0, key, value)
	check(1, nil, []byte("x"))
	check(2, []byte("key"), nil)

	status, body = tp.doV2(t, "POST", "/topics/js/partitions/1", v2Type("json"), "", `{"records":[{"key":{"id": 7},"value":{"a": [1, "x", null], "b": {"c": true}}},{"value":"text"},{"value":3.5, "partition": 2}]}`)
	expect(t, "produce json", status, body, 200, `{"key_schema_id":null,"value_schema_id":null,"offsets":[
		{"partition":1,"offset":0,"error_code":null,"error":null},
		{"partition":1,"offset":1,"error_code":null,"error":null},
		{"partition":2,"offset":0,"error_code":null,"error":null}]}`)
	recs = consumeAll(t, tp.broker, "js", 3)
	r := byPosition(t, recs, 1, 0)
	if string(r.Key) != `{"id":7}` || string(r.Value) != `{"a":[1,"x",null],"b":{"c":true}}` {
		t.Fatalf("json record: %q %q", r.Key, r.Value)
	}
	if r := byPosition(t, recs, 1, 1); string(r.Value) != `"text"` || r.Key != nil {
		t.Fatalf("json record: %q %q", r.Key, r.Value)
	}
	if r := byPosition(t, recs, 2, 0); string(r.Value) != `3.5` {
		t.Fatalf("json record: %q", r.Value)
	}
	// decodeEmbedded answers what was produced.
	for f, want := range map[embeddedFormat]string{formatJSON: `{"a":[1,"x",null],"b":{"c":true}}`, formatBinary: fmt.Sprintf("%q", b64(r.Value))} {
		got, err := tp.p.decodeEmbedded(ctx, f, "js", false, r.Value)
		if err != nil || string(got) != want {
			t.Fatalf("decodeEmbedded %s: %s, %v; want %s", f, got, err, want)
		}
	}
}

// schemaCase is one schema format's produce: its schemas, records, and
// the JSON decodeEmbedded should answer for the value.
type schemaCase struct {
	format      string
	keySchema   string
	valueSchema string
	key         string
	value       string
	decoded     string // the value as the consumer's JSON; value when ""
}

var schemaCases = []schemaCase{{
	format:      "avro",
	keySchema:   `"string"`,
	valueSchema: `{"type":"record","name":"Order","namespace":"shop","fields":[{"name":"id","type":"long"},{"name":"note","type":["null","string"],"default":null},{"name":"price","type":"double"}]}`,
	key:         `"o-1"`,
	value:       `{"id": 12, "note": {"string": "gift"}, "price": 9.5}`,
	decoded:     `{"id":12,"note":{"string":"gift"},"price":9.5}`,
}, {
	format:      "jsonschema",
	keySchema:   `{"type":"integer"}`,
	valueSchema: `{"type":"object","properties":{"id":{"type":"integer"},"tags":{"type":"array","items":{"type":"string"}}},"required":["id"],"additionalProperties":false}`,
	key:         `42`,
	value:       `{"id": 12, "tags": ["a", "b"]}`,
	decoded:     `{"id":12,"tags":["a","b"]}`,
}, {
	format:      "protobuf",
	keySchema:   `syntax = "proto3"; package shop; message OrderKey { string id = 1; }`,
	valueSchema: `syntax = "proto3"; package shop; message Order { int64 id = 1; repeated string tags = 2; Inner inner = 3; message Inner { bool ok = 1; } }`,
	key:         `{"id": "o-1"}`,
	value:       `{"id": "12", "tags": ["a"], "inner": {"ok": true}}`,
	decoded:     `{"id":"12","tags":["a"],"inner":{"ok":true}}`,
}}

func TestRestV2ProduceSchemas(t *testing.T) {
	tp := startV2Proxy(t, true)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	for _, c := range schemaCases {
		topic := "t-" + c.format
		if _, err := tp.admin.CreateTopic(ctx, 2, 1, nil, topic); err != nil {
			t.Fatal(err)
		}
		// Inline schemas, registered on the fly under the topic's subjects.
		req := fmt.Sprintf(`{"key_schema":%q,"value_schema":%q,"records":[{"key":%s,"value":%s,"partition":1},{"value":%s}]}`,
			c.keySchema, c.valueSchema, c.key, c.value, c.value)
		status, body := tp.doV2(t, "POST", "/topics/"+topic, v2Type(c.format), "", req)
		expect(t, c.format+" inline", status, body, 200, "")
		keyID, valueID := int(field(body, "key_schema_id").(float64)), int(field(body, "value_schema_id").(float64))
		for subject, id := range map[string]int{topic + "-key": keyID, topic + "-value": valueID} {
			ss, err := srClient(t, tp.registryURL).SchemaByVersion(ctx, subject, -1)
			if err != nil || ss.ID != id {
				t.Fatalf("%s: subject %s: %+v, %v; want id %d", c.format, subject, ss, err, id)
			}
		}
		// By ID, to a partition.
		req = fmt.Sprintf(`{"value_schema_id":%d,"records":[{"value":%s}]}`, valueID, c.value)
		status, body = tp.doV2(t, "POST", "/topics/"+topic+"/partitions/0", v2Type(c.format), "", req)
		expect(t, c.format+" by id", status, body, 200, fmt.Sprintf(`{"key_schema_id":null,"value_schema_id":%d,"offsets":[{"partition":0,"offset":%v,"error_code":null,"error":null}]}`,
			valueID, field(body, "offsets").([]any)[0].(map[string]any)["offset"]))

		recs := consumeAll(t, tp.broker, topic, 3)
		first := byPosition(t, recs, 1, 0)
		checkWire(t, c.format+" key", first.Key, keyID, c.format)
		for _, r := range recs {
			checkWire(t, c.format+" value", r.Value, valueID, c.format)
			text, _, err := tp.serde.DecodeJSON(ctx, r.Value)
			if err != nil || !sameJSON(t, text, c.decoded) {
				t.Fatalf("%s: serde decodes %s, %v; want %s", c.format, text, err, c.decoded)
			}
			got, err := tp.p.decodeEmbedded(ctx, embeddedFormat(c.format), topic, false, r.Value)
			if err != nil || !sameJSON(t, got, c.decoded) {
				t.Fatalf("%s: decodeEmbedded %s, %v; want %s", c.format, got, err, c.decoded)
			}
		}
		keyText, _, err := tp.serde.DecodeJSON(ctx, first.Key)
		if err != nil || !sameJSON(t, keyText, c.key) {
			t.Fatalf("%s: key decodes %s, %v; want %s", c.format, keyText, err, c.key)
		}
	}
	// A consumer of another format than the record's schema: an error,
	// as Confluent's deserializer fails.
	recs := consumeAll(t, tp.broker, "t-avro", 3)
	if _, err := tp.p.decodeEmbedded(ctx, formatProtobuf, "t-avro", false, recs[0].Value); err == nil || kafkaError(err).Status != 500 {
		t.Fatalf("avro record as protobuf: %v", err)
	}
	if _, err := tp.p.decodeEmbedded(ctx, formatAvro, "t-avro", false, []byte("plain")); err == nil {
		t.Fatal("a record not in the wire format decoded")
	}
}

func srClient(t *testing.T, url string) *sr.Client {
	cl, err := sr.NewClient(sr.URLs(url))
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// checkWire checks a payload is in Confluent's wire format with the
// schema ID id (and, for Protobuf, the message index of the file's first
// message).
func checkWire(t *testing.T, what string, b []byte, id int, format string) {
	t.Helper()
	if len(b) < 6 || b[0] != 0 || int(binary.BigEndian.Uint32(b[1:5])) != id {
		t.Fatalf("%s: % x: not magic byte 0 and schema id %d", what, b, id)
	}
	if format == "protobuf" && b[5] != 0 {
		t.Fatalf("%s: % x: message index not [0]", what, b)
	}
}

func sameJSON(t *testing.T, got []byte, want string) bool {
	t.Helper()
	var g any
	if err := json.Unmarshal(got, &g); err != nil {
		return false
	}
	return fmt.Sprint(g) == fmt.Sprint(jsonOf(t, want))
}

func TestRestV3ProduceSchemas(t *testing.T) {
	tp := startV2Proxy(t, true)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	if _, err := tp.admin.CreateTopic(ctx, 1, 1, nil, "v3s"); err != nil {
		t.Fatal(err)
	}
	avro := schemaCases[0]
	// Inline schema: registered under v3s-value.
	status, body := tp.do(t, "POST", tp.v3("/topics/v3s/records"), jsonType, fmt.Sprintf(
		`{"key":{"type":"JSONSCHEMA","schema":%q,"data":42},"value":{"type":"AVRO","schema":%q,"data":%s}}`, schemaCases[1].keySchema, avro.valueSchema, avro.value))
	expect(t, "v3 inline", status, body, 200, "")
	valueID := int(field(body, "value", "schema_id").(float64))
	if field(body, "value", "type") != "AVRO" || field(body, "value", "subject") != "v3s-value" || field(body, "key", "type") != "JSONSCHEMA" {
		t.Fatalf("v3 inline: %v", body)
	}
	// No type, no schema: the subject's latest; by schema_id; by
	// schema_version; an explicit subject.
	for _, v := range []string{
		fmt.Sprintf(`{"data":%s}`, avro.value),
		fmt.Sprintf(`{"type":"AVRO","schema_id":%d,"data":%s}`, valueID, avro.value),
		fmt.Sprintf(`{"schema_version":1,"data":%s}`, avro.value),
		fmt.Sprintf(`{"subject":"v3s-value","schema_version":1,"data":%s}`, avro.value),
	} {
		status, body := tp.do(t, "POST", tp.v3("/topics/v3s/records"), jsonType, `{"value":`+v+`}`)
		expect(t, "v3 "+v, status, body, 200, "")
		if int(field(body, "value", "schema_id").(float64)) != valueID {
			t.Fatalf("v3 %s: %v", v, body)
		}
	}
	recs := consumeAll(t, tp.broker, "v3s", 5)
	for _, r := range recs {
		checkWire(t, "v3 value", r.Value, valueID, "avro")
		text, _, err := tp.serde.DecodeJSON(ctx, r.Value)
		if err != nil || !sameJSON(t, text, avro.decoded) {
			t.Fatalf("v3: decodes %s, %v", text, err)
		}
	}
	checkWire(t, "v3 key", recs[0].Key, int(field(body, "key", "schema_id").(float64)), "jsonschema")

	for _, c := range []struct {
		what, value string
		status      int
		code        float64
	}{
		{"value not of the schema", `{"type":"AVRO","schema_id":` + fmt.Sprint(valueID) + `,"data":{"id":"x"}}`, 400, 400},
		{"unknown schema id", `{"type":"AVRO","schema_id":9999,"data":1}`, 422, codeSerialization},
		{"no schema for the subject", `{"subject":"nobody","data":1}`, 422, codeSerialization},
		{"bad schema", `{"type":"AVRO","schema":"{\"type\":\"nope\"}","data":1}`, 422, codeInvalidSchema},
		{"schema type differs", `{"type":"PROTOBUF","schema_id":` + fmt.Sprint(valueID) + `,"data":{}}`, 400, 400},
		{"record strategy without schema", `{"subject_name_strategy":"RECORD_NAME","data":1}`, 400, 400},
		{"schema fields on BINARY", `{"type":"BINARY","schema_id":1,"data":"AA=="}`, 400, 400},
	} {
		status, body := tp.do(t, "POST", tp.v3("/topics/v3s/records"), jsonType, `{"value":`+c.value+`}`)
		if status != c.status || field(body, "error_code") != c.code {
			t.Fatalf("%s: %d %v, want %d %v", c.what, status, body, c.status, c.code)
		}
	}
}

func TestRestV2ProduceErrors(t *testing.T) {
	tp := startV2Proxy(t, true)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	if _, err := tp.admin.CreateTopic(ctx, 2, 1, nil, "e"); err != nil {
		t.Fatal(err)
	}
	avro := schemaCases[0]
	big := `{"records":[{"value":"` + strings.Repeat("A", 70<<10) + `"}]}`
	for _, c := range []struct {
		what, path, ctype, body string
		status                  int
		want                    string // the whole body, or "" to check the code only
		code                    float64
	}{
		{"malformed JSON", "/topics/e", v2Type("binary"), `{"records":[`, 400, "", 400},
		{"JSON of the wrong shape", "/topics/e", v2Type("binary"), `{"records":{"value":"AA=="}}`, 422, "", 422},
		{"unknown field", "/topics/e", v2Type("binary"), `{"records":[{"value":"AA=="}],"nope":1}`, 422, "", 422},
		{"no body", "/topics/e", v2Type("binary"), ``, 422, `{"error_code":422,"message":"Null input provided. Data is required."}`, 0},
		{"no records", "/topics/e", v2Type("json"), `{"records":[]}`, 422, `{"error_code":422,"message":"records must not be empty"}`, 0},
		{"plain JSON content type", "/topics/e", "application/json", `{"records":[{"value":1}]}`, 415, `{"error_code":415,"message":"HTTP 415 Unsupported Media Type"}`, 0},
		{"unknown embedded format", "/topics/e", v2Type("xml"), `{"records":[{"value":1}]}`, 415, "", 415},
		{"v1 content type", "/topics/e", "application/vnd.kafka.binary.v1+json", `{"records":[{"value":"AA=="}]}`, 415, "", 415},
		{"bad base64", "/topics/e", v2Type("binary"), `{"records":[{"value":"!!"}]}`, 400, `{"error_code":400,"message":"Bad Request: data=\"!!\" is not a valid base64 string."}`, 0},
		{"binary not a string", "/topics/e", v2Type("binary"), `{"records":[{"value":5}]}`, 400, `{"error_code":400,"message":"Bad Request: data=5 is not a base64 string."}`, 0},
		{"oversize body", "/topics/e", v2Type("binary"), big, 413, "", 413},
		{"unknown partition", "/topics/e/partitions/9", v2Type("binary"), `{"records":[{"value":"AA=="}]}`, 404, `{"error_code":40402,"message":"Partition not found."}`, 0},
		{"value without schema", "/topics/e", v2Type("avro"), `{"records":[{"value":1}]}`, 422,
			`{"error_code":42202,"message":"Request includes values but does not include value schema"}`, 0},
		{"key without schema", "/topics/e", v2Type("avro"), `{"value_schema":"\"int\"","records":[{"key":1,"value":1}]}`, 422,
			`{"error_code":42201,"message":"Request includes keys but does not include key schema"}`, 0},
		{"value not of the schema", "/topics/ea", v2Type("avro"), fmt.Sprintf(`{"value_schema":%q,"records":[{"value":{"id":"twelve"}}]}`, avro.valueSchema), 400, "", 400},
		{"jsonschema value not of the schema", "/topics/ej", v2Type("jsonschema"), fmt.Sprintf(`{"value_schema":%q,"records":[{"value":{"tags":[]}}]}`, schemaCases[1].valueSchema), 400, "", 400},
		{"protobuf value not of the schema", "/topics/ep", v2Type("protobuf"), fmt.Sprintf(`{"value_schema":%q,"records":[{"value":{"nope":1}}]}`, schemaCases[2].valueSchema), 400, "", 400},
		{"invalid schema", "/topics/e", v2Type("avro"), `{"value_schema":"{\"type\":\"record\"}","records":[{"value":1}]}`, 422, "", codeInvalidSchema},
		{"unknown schema id", "/topics/e", v2Type("avro"), `{"value_schema_id":4242,"records":[{"value":1}]}`, 422, "", codeSerialization},
		{"schema on binary", "/topics/e", v2Type("binary"), `{"value_schema_id":1,"records":[{"value":"AA=="}]}`, 422, "", 422},
	} {
		status, body := tp.doV2(t, "POST", c.path, c.ctype, "", c.body)
		expect(t, c.what, status, body, c.status, c.want)
		if c.code != 0 && field(body, "error_code") != c.code {
			t.Fatalf("%s: %v, want code %v", c.what, body, c.code)
		}
	}
	// An incompatible schema: the registry refuses it (409), 42207.
	status, body := tp.doV2(t, "POST", "/topics/e/partitions/0", v2Type("avro"), "", `{"value_schema":"\"int\"","records":[{"value":1}]}`)
	expect(t, "first schema", status, body, 200, "")
	status, body = tp.doV2(t, "POST", "/topics/e", v2Type("avro"), "", `{"value_schema":"{\"type\":\"array\",\"items\":\"int\"}","records":[{"value":[1]}]}`)
	if status != 422 || field(body, "error_code") != float64(codeSerialization) {
		t.Fatalf("incompatible schema: %d %v", status, body)
	}
	// An unknown topic and a record's unknown partition fail their
	// records, not the request, as Confluent's producer fails them.
	status, body = tp.doV2(t, "POST", "/topics/nope", v2Type("binary"), "", `{"records":[{"value":"AA=="},{"value":"AQ=="}]}`)
	failed := `{"partition":null,"offset":null,"error_code":50003,"error":"This server does not host this topic-partition."}`
	expect(t, "unknown topic", status, body, 200, `{"key_schema_id":null,"value_schema_id":null,"offsets":[`+failed+`,`+failed+`]}`)
	status, body = tp.doV2(t, "POST", "/topics/e", v2Type("binary"), "", `{"records":[{"value":"AA==","partition":5},{"value":"AQ==","partition":1}]}`)
	expect(t, "a record's unknown partition", status, body, 200, `{"key_schema_id":null,"value_schema_id":null,"offsets":[
		{"partition":null,"offset":null,"error_code":40402,"error":"Partition not found."},
		{"partition":1,"offset":0,"error_code":null,"error":null}]}`)

	// Without a registry: Confluent's 42206 (a schema given) and 42207
	// (data without one).
	p, err := New(Config{ClientOpts: []kgo.Opt{kgo.SeedBrokers(tp.broker)}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	srv := httptest.NewServer(p.Handler())
	defer srv.Close()
	bare := &testProxy{url: srv.URL, clusterID: tp.clusterID}
	status, body = bare.doV2(t, "POST", "/topics/e", v2Type("avro"), "", `{"value_schema":"\"int\"","records":[{"value":1}]}`)
	expect(t, "no registry, schema", status, body, 422, `{"error_code":42206,"message":"Payload error. Schema Registry must be configured when using schemas."}`)
	status, body = bare.doV2(t, "POST", "/topics/e", v2Type("protobuf"), "", `{"records":[{"value":{}}]}`)
	expect(t, "no registry, data", status, body, 422, `{"error_code":42207,"message":"Error serializing message. Schema Registry not defined, no Schema Registry client available to serialize message."}`)
	status, body = bare.do(t, "POST", bare.v3("/topics/e/records"), jsonType, `{"value":{"type":"AVRO","data":1}}`)
	expect(t, "no registry, v3", status, body, 422, `{"error_code":42206,"message":"Payload error. Schema Registry must be configured when using schemas."}`)
	if _, err := p.decodeEmbedded(ctx, formatAvro, "e", false, []byte{0, 0, 0, 0, 1, 2}); err == nil {
		t.Fatal("decodeEmbedded without a registry")
	}
}

func TestSchemaRegistryConfig(t *testing.T) {
	for _, cfg := range []Config{
		{SchemaRegistryURL: "ftp://host:1"},
		{SchemaRegistryURL: "http://user:secret@host:8081"},
		{SchemaRegistryURL: " , "},
		{SchemaRegistryURL: "http://host:8081", SchemaRegistryPassword: "p"},
		{SchemaRegistryUser: "u"},
	} {
		if p, err := New(cfg); err == nil {
			p.Close()
			t.Errorf("%+v: accepted", cfg)
		}
	}
	p, err := New(Config{SchemaRegistryURL: "http://a:8081, https://b:8081", SchemaRegistryUser: "u", SchemaRegistryPassword: "p"})
	if err != nil {
		t.Fatal(err)
	}
	p.Close()
}

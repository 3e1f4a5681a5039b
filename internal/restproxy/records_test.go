package restproxy

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// producedRecord is what a produce request should put in Kafka.
type producedRecord struct {
	body      string
	partition int32 // -1: any
	key       []byte
	value     []byte
	headers   []kgo.RecordHeader
	keySize   string // the answer's key, "" when absent
	valueSize string
}

func TestRestProduceRecords(t *testing.T) {
	tp := startProxy(t, Config{})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if _, err := tp.admin.CreateTopic(ctx, 3, 1, nil, "events"); err != nil {
		t.Fatal(err)
	}
	binKey := []byte{0, 1, 2, 0xff, 'k'}
	binValue := bytes.Repeat([]byte{0xde, 0xad, 0xbe, 0xef}, 100)
	b64 := base64.StdEncoding.EncodeToString
	records := []producedRecord{{
		body: fmt.Sprintf(`{"partition_id":2,"key":{"type":"BINARY","data":%q},"value":{"type":"BINARY","data":%q},
			"headers":[{"name":"h1","value":%q},{"name":"h2","value":null},{"name":"h1","value":%q}]}`,
			b64(binKey), b64(binValue), b64([]byte{0, 'x'}), b64([]byte("again"))),
		partition: 2, key: binKey, value: binValue,
		headers: []kgo.RecordHeader{{Key: "h1", Value: []byte{0, 'x'}}, {Key: "h2"}, {Key: "h1", Value: []byte("again")}},
		keySize: `{"type":"BINARY","size":5}`, valueSize: `{"type":"BINARY","size":400}`,
	}, {
		body:      `{"partition_id":0,"key":{"type":"STRING","data":"user-1 ✓"},"value":{"type":"JSON","data":{"a": [1, 2.5, "x"], "b": null}}}`,
		partition: 0, key: []byte("user-1 ✓"), value: []byte(`{"a":[1,2.5,"x"],"b":null}`),
		keySize: `{"type":"STRING","size":10}`, valueSize: `{"type":"JSON","size":26}`,
	}, {
		body:      `{"value":{"type":"STRING","data":""}}`,
		partition: -1, value: []byte{},
		valueSize: `{"type":"STRING","size":0}`,
	}, {
		body:      `{"partition_id":1,"key":{"type":"JSON","data":42}}`,
		partition: 1, key: []byte("42"),
		keySize: `{"type":"JSON","size":2}`,
	}}
	offsets := map[int32]int64{}
	for i, r := range records {
		status, body := tp.do(t, "POST", tp.v3("/topics/events/records"), jsonType, r.body)
		expect(t, fmt.Sprintf("produce %d", i), status, body, 200, "")
		p := int32(field(body, "partition_id").(float64))
		if r.partition >= 0 && p != r.partition {
			t.Fatalf("produce %d: partition %d, want %d", i, p, r.partition)
		}
		records[i].partition = p
		want := fmt.Sprintf(`{"error_code":200,"cluster_id":%q,"topic_name":"events","partition_id":%d,"offset":%d,"timestamp":%q`,
			tp.clusterID, p, offsets[p], field(body, "timestamp"))
		if r.keySize != "" {
			want += `,"key":` + r.keySize
		}
		if r.valueSize != "" {
			want += `,"value":` + r.valueSize
		}
		expect(t, fmt.Sprintf("produce %d", i), status, body, 200, want+"}")
		ts, err := time.Parse(time.RFC3339Nano, field(body, "timestamp").(string))
		if err != nil || time.Since(ts).Abs() > time.Minute {
			t.Fatalf("produce %d: timestamp %v (%v)", i, field(body, "timestamp"), err)
		}
		offsets[p]++
	}

	// Read everything back with a Kafka client: byte-identical keys,
	// values and headers, in the partitions and at the offsets answered.
	cl, err := kgo.NewClient(kgo.SeedBrokers(tp.broker), kgo.ConsumeTopics("events"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var got []*kgo.Record
	for len(got) < len(records) {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("consume: %v (got %d records)", err, len(got))
		}
		got = append(got, fs.Records()...)
	}
	for i, r := range records {
		var found *kgo.Record
		for _, g := range got {
			if g.Partition == r.partition && bytes.Equal(g.Key, r.key) && bytes.Equal(g.Value, r.value) {
				found = g
			}
		}
		if found == nil {
			t.Fatalf("record %d (partition %d, key %q, value %q) not consumed; got %v", i, r.partition, r.key, r.value, got)
		}
		if (found.Key == nil) != (r.key == nil) || (found.Value == nil) != (r.value == nil) {
			t.Fatalf("record %d: null key or value not kept: key %v value %v", i, found.Key, found.Value)
		}
		if len(found.Headers) != len(r.headers) {
			t.Fatalf("record %d: headers %v, want %v", i, found.Headers, r.headers)
		}
		for j, h := range r.headers {
			if found.Headers[j].Key != h.Key || !bytes.Equal(found.Headers[j].Value, h.Value) {
				t.Fatalf("record %d: header %d %q=%q, want %q=%q", i, j, found.Headers[j].Key, found.Headers[j].Value, h.Key, h.Value)
			}
		}
	}
}

// TestRestErrors checks bad input gets Confluent's status and code, never
// a 500.
func TestRestErrors(t *testing.T) {
	tp := startProxy(t, Config{MaxBody: 1024})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if _, err := tp.admin.CreateTopic(ctx, 1, 1, nil, "t"); err != nil {
		t.Fatal(err)
	}
	records := tp.v3("/topics/t/records")
	for _, tc := range []struct {
		name, method, path, contentType, body string
		status, code                          int
		message                               string // "" : any
	}{
		{"unknown topic", "POST", tp.v3("/topics/nope/records"), jsonType, `{"value":{"type":"STRING","data":"x"}}`,
			404, 40403, "This server does not host this topic-partition."},
		{"unknown topic get", "GET", tp.v3("/topics/nope"), "", "", 404, 40403, "This server does not host this topic-partition."},
		{"unknown partition", "POST", records, jsonType, `{"partition_id":5,"value":{"type":"STRING","data":"x"}}`,
			404, 40402, "Partition not found."},
		{"malformed JSON", "POST", records, jsonType, `{"value":`, 400, 400, ""},
		{"not an object", "POST", records, jsonType, `[1,2]`, 400, 400, ""},
		{"unknown field", "POST", records, jsonType, `{"valu":{"type":"STRING","data":"x"}}`, 400, 400, ""},
		{"empty body", "POST", records, jsonType, ``, 400, 400, ""},
		{"bad base64", "POST", records, jsonType, `{"value":{"type":"BINARY","data":"not base64!"}}`,
			400, 400, `Bad Request: value: data="not base64!" is not a base64 string.`},
		{"string not a string", "POST", records, jsonType, `{"key":{"type":"STRING","data":7}}`, 400, 400, ""},
		{"no type (the subject's latest schema), no registry", "POST", records, jsonType, `{"value":{"data":"x"}}`, 422, codeInvalidPayload, ""},
		{"unknown type", "POST", records, jsonType, `{"value":{"type":"XML","data":"x"}}`, 400, 400, ""},
		{"schema type, no registry", "POST", records, jsonType, `{"value":{"type":"AVRO","schema":"\"string\"","data":"x"}}`, 422, codeInvalidPayload, ""},
		{"bad header value", "POST", records, jsonType, `{"headers":[{"name":"h","value":"%%"}]}`, 400, 400, ""},
		{"bad timestamp", "POST", records, jsonType, `{"timestamp":"yesterday"}`, 400, 400, ""},
		{"wrong content type", "POST", records, "text/plain", `{}`, 415, 415, "HTTP 415 Unsupported Media Type"},
		{"no content type", "POST", records, "", `{}`, 415, 415, "HTTP 415 Unsupported Media Type"},
		{"oversize body", "POST", records, jsonType, `{"value":{"type":"STRING","data":"` + strings.Repeat("x", 2000) + `"}}`,
			413, 413, ""},
		{"bad partitions count", "POST", tp.v3("/topics"), jsonType, `{"topic_name":"x","partitions_count":0}`, 400, 400, ""},
		{"no topic name", "POST", tp.v3("/topics"), jsonType, `{"partitions_count":1}`, 400, 400, ""},
		{"replication factor too high", "POST", tp.v3("/topics"), jsonType, `{"topic_name":"x","replication_factor":3}`, 400, 40002, ""},
		{"bad topic config", "POST", tp.v3("/topics"), jsonType, `{"topic_name":"x","configs":[{"name":"retention.ms","value":"never"}]}`, 400, 40002, ""},
		{"unknown route", "GET", "/v3/nothing", "", "", 404, 404, "HTTP 404 Not Found"},
		{"wrong method", "PATCH", tp.v3("/topics"), "", "", 405, 405, "HTTP 405 Method Not Allowed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := tp.do(t, tc.method, tc.path, tc.contentType, tc.body)
			if status != tc.status || field(body, "error_code") != float64(tc.code) {
				t.Fatalf("status %d body %v, want %d and error_code %d", status, body, tc.status, tc.code)
			}
			if msg, _ := field(body, "message").(string); msg == "" || (tc.message != "" && msg != tc.message) {
				t.Fatalf("message %q, want %q", msg, tc.message)
			}
		})
	}
}

// TestRestProduceMetadataCache: a partition added after the produce
// metadata cache was filled takes a partition_id at once (the cache looks
// a partition it does not know up again), well inside its TTL.
func TestRestProduceMetadataCache(t *testing.T) {
	tp := startProxy(t, Config{})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if _, err := tp.admin.CreateTopic(ctx, 1, 1, nil, "c"); err != nil {
		t.Fatal(err)
	}
	status, body := tp.do(t, "POST", tp.v3("/topics/c/records"), jsonType, `{"value":{"type":"STRING","data":"x"}}`) // fills the cache
	expect(t, "produce", status, body, 200, "")
	if rs, err := tp.admin.UpdatePartitions(ctx, 3, "c"); err != nil || rs["c"].Err != nil {
		t.Fatalf("add partitions: %v %v", err, rs["c"].Err)
	}
	// The broker's metadata may trail the change by a moment; 2s is well
	// inside the cache's 5s TTL, so only a fresh lookup can find it.
	for range 20 {
		status, body = tp.do(t, "POST", tp.v3("/topics/c/records"), jsonType, `{"partition_id":2,"value":{"type":"STRING","data":"y"}}`)
		if status == 200 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if status != 200 || field(body, "partition_id") != float64(2) {
		t.Fatalf("produce to a partition added after the cache was filled: %d %v", status, body)
	}
}

// TestJSONString: the shortcut for plain strings answers what
// json.Unmarshal answers, for every kind of data a STRING or BINARY
// record may carry.
func TestJSONString(t *testing.T) {
	for _, data := range []string{
		`""`, `"plain"`, `"café"`, `"a\"b"`, `"tab\tnew\nline"`, `"\u00e9\ud83d\ude00"`,
		"\"\xff\xfe\"", "\"ok\xc3\"", `"é😀"`, `7`, `null`, `{"a":1}`, `["x"]`, `true`,
	} {
		var want string
		wantErr := json.Unmarshal([]byte(data), &want)
		got, ok := jsonString(json.RawMessage(data))
		if ok != (wantErr == nil) || string(got) != want {
			t.Errorf("jsonString(%s) = %q, %v; json.Unmarshal: %q, %v", data, got, ok, want, wantErr)
		}
		if ok && got == nil {
			t.Errorf("jsonString(%s) = nil: an empty string is an empty value, not a null one", data)
		}
	}
}

// TestQuotedBase64: a binary key or value is embedded exactly as
// json.Marshal of its base64 text.
func TestQuotedBase64(t *testing.T) {
	for _, b := range [][]byte{{}, {0}, {0xfb, 0xff}, {0xfb, 0xef, 0xbe}, []byte("any carnal pleasure."), bytes.Repeat([]byte{0xff, 0x3e}, 100)} {
		want, err := json.Marshal(base64.StdEncoding.EncodeToString(b))
		if err != nil {
			t.Fatal(err)
		}
		if got := quotedBase64(b); !bytes.Equal(got, want) {
			t.Errorf("quotedBase64(%x) = %s, want %s", b, got, want)
		}
	}
}

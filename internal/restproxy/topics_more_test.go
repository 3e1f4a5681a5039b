package restproxy

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestRestPartitionCountAndAssignments: PATCH raises a topic's partition
// count (seen by an independent client), a count not above it is 400
// 40002; a topic created with replicas_assignments has exactly those
// partitions and replicas; bad assignments are 400.
func TestRestPartitionCountAndAssignments(t *testing.T) {
	tp := startProxy(t, Config{})
	// A topic another client creates is listed at once, not after
	// franz-go's metadata cache (5 s) expires.
	code, got := tp.do(t, "GET", tp.v3("/topics"), "", "")
	expect(t, "list", code, got, 200, "")
	if _, err := tp.admin.CreateTopic(t.Context(), 1, 1, nil, "elsewhere"); err != nil {
		t.Fatal(err)
	}
	code, got = tp.do(t, "GET", tp.v3("/topics"), "", "")
	if code != 200 || !slices.ContainsFunc(field(got, "data").([]any), func(d any) bool { return field(d, "topic_name") == "elsewhere" }) {
		t.Fatalf("a topic just created is not listed: %v", got)
	}
	code, got = tp.do(t, "POST", tp.v3("/topics"), jsonType, `{"topic_name":"grow","partitions_count":2}`)
	expect(t, "create", code, got, 201, "")
	code, got = tp.do(t, "PATCH", tp.v3("/topics/grow"), jsonType, `{"partitions_count":5}`)
	expect(t, "patch", code, got, 200, "")
	if field(got, "kind") != "KafkaTopic" || field(got, "partitions_count") != float64(5) || field(got, "replication_factor") != float64(1) {
		t.Fatalf("patch answer: %v", got)
	}
	// include_authorized_operations: the principal's operations (no
	// authorizer: every one a topic has); without it, none.
	code, got = tp.do(t, "GET", tp.v3("/topics/grow?include_authorized_operations=true"), "", "")
	if ops := fmt.Sprint(field(got, "authorized_operations")); code != 200 || ops != "[READ WRITE CREATE DELETE ALTER DESCRIBE DESCRIBE_CONFIGS ALTER_CONFIGS]" {
		t.Errorf("authorized operations: %d %s", code, ops)
	}
	code, got = tp.do(t, "GET", tp.v3("/topics/grow"), "", "")
	if _, ok := got.(map[string]any)["authorized_operations"]; code != 200 || ok {
		t.Errorf("authorized operations not asked for: %v", got)
	}
	code, got = tp.do(t, "GET", tp.v3("/topics/grow?include_authorized_operations=perhaps"), "", "")
	expect(t, "include_authorized_operations not a boolean", code, got, 400, "")
	// At once, not after franz-go's metadata cache (5 s) expires.
	code, got = tp.do(t, "GET", tp.v3("/topics/grow/partitions"), "", "")
	if code != 200 || len(field(got, "data").([]any)) != 5 {
		t.Fatalf("partitions right after the patch: %d %v", code, got)
	}
	md, err := tp.admin.Metadata(t.Context(), "grow")
	if err != nil || len(md.Topics["grow"].Partitions) != 5 {
		t.Fatalf("after patch: %v %v", md.Topics["grow"].Partitions, err)
	}
	for _, bad := range []struct {
		what, path, body string
		status, code     int
	}{
		{"not an increase", "/topics/grow", `{"partitions_count":3}`, 400, 40002},
		{"the same count", "/topics/grow", `{"partitions_count":5}`, 400, 40002},
		{"no count", "/topics/grow", `{}`, 400, 400},
		{"zero", "/topics/grow", `{"partitions_count":0}`, 400, 400},
		{"unknown topic", "/topics/nope", `{"partitions_count":3}`, 404, 40403},
	} {
		code, got := tp.do(t, "PATCH", tp.v3(bad.path), jsonType, bad.body)
		if code != bad.status || field(got, "error_code") != float64(bad.code) {
			t.Errorf("%s: %d %v, want %d error_code %d", bad.what, code, got, bad.status, bad.code)
		}
	}

	code, got = tp.do(t, "POST", tp.v3("/topics"), jsonType, `{"topic_name":"placed","replicas_assignments":{"0":[1],"1":[1],"2":[1]},
		"configs":[{"name":"retention.ms","value":"60000"}]}`)
	expect(t, "create with assignments", code, got, 201, "")
	if field(got, "partitions_count") != float64(3) || field(got, "replication_factor") != float64(1) {
		t.Fatalf("create with assignments: %v", got)
	}
	md, err = tp.admin.Metadata(t.Context(), "placed")
	if err != nil {
		t.Fatal(err)
	}
	for p := range int32(3) {
		if r := md.Topics["placed"].Partitions[p].Replicas; !slices.Equal(r, []int32{1}) {
			t.Fatalf("placed-%d replicas %v", p, r)
		}
	}
	if v, _ := describedConfig(t, tp, kmsg.ConfigResourceTypeTopic, "placed", "retention.ms"); v != "60000" {
		t.Fatalf("placed retention.ms %q", v)
	}
	for _, bad := range []struct {
		what, body   string
		status, code int
	}{
		{"a gap", `{"topic_name":"x","replicas_assignments":{"0":[1],"2":[1]}}`, 400, 400},
		{"not a number", `{"topic_name":"x","replicas_assignments":{"a":[1]}}`, 400, 400},
		{"no replicas", `{"topic_name":"x","replicas_assignments":{"0":[]}}`, 400, 400},
		{"with a count", `{"topic_name":"x","partitions_count":1,"replicas_assignments":{"0":[1]}}`, 400, 400},
		{"an unknown broker", `{"topic_name":"x","replicas_assignments":{"0":[7]}}`, 400, 40002},
		{"validate only", `{"topic_name":"x","replicas_assignments":{"0":[1]},"validate_only":true}`, 201, 0},
	} {
		code, got := tp.do(t, "POST", tp.v3("/topics"), jsonType, bad.body)
		if code != bad.status || bad.code != 0 && field(got, "error_code") != float64(bad.code) {
			t.Errorf("%s: %d %v, want %d error_code %d", bad.what, code, got, bad.status, bad.code)
		}
	}
	if md, _ := tp.admin.Metadata(t.Context(), "x"); md.Topics["x"].Err == nil {
		t.Fatalf("topic x exists after refused and validate-only creates")
	}
}

// TestRestPartitionOffsets: a partition's earliest and latest offsets as
// the log holds them; another offset_type is 400.
func TestRestPartitionOffsets(t *testing.T) {
	tp := startProxy(t, Config{})
	code, got := tp.do(t, "POST", tp.v3("/topics"), jsonType, `{"topic_name":"offs","partitions_count":2}`)
	expect(t, "create", code, got, 201, "")
	produceTo(t, tp.broker, "offs", 3, 1)
	c := tp.clusterID
	code, got = tp.do(t, "GET", tp.v3("/topics/offs/partitions/1/offset"), "", "")
	expect(t, "offsets", code, got, 200, fmt.Sprintf(`{"kind":"KafkaPartitionWithOffsets",
		"metadata":{"self":%q,"resource_name":"crn:///kafka=%s/topic=offs/partition=1/offset_type=earliest_and_latest"},
		"cluster_id":%q,"topic_name":"offs","partition_id":1,"earliest_offset":0,"latest_offset":3}`,
		tp.link("/topics/offs/partitions/1/offset"), c, c))
	code, got = tp.do(t, "GET", tp.v3("/topics/offs/partitions/0/offset?offset_type=earliest_and_latest"), "", "")
	if code != 200 || field(got, "latest_offset") != float64(0) {
		t.Fatalf("partition 0: %d %v", code, got)
	}
	code, got = tp.do(t, "GET", tp.v3("/topics/offs/partitions/0/offset?offset_type=latest"), "", "")
	expect(t, "bad offset_type", code, got, 400, `{"error_code":400,"message":"offset_type:latest is invalid"}`)
	code, got = tp.do(t, "GET", tp.v3("/topics/offs/partitions/2/offset"), "", "")
	expect(t, "unknown partition", code, got, 404, `{"error_code":40402,"message":"Partition not found."}`)
}

// TestRestProduceBatch: records:batch produces every entry, answers 207
// with a report per entry in order (a bad entry a failure, the others
// produced), and refuses a malformed batch whole with 42208.
func TestRestProduceBatch(t *testing.T) {
	tp := startProxy(t, Config{})
	code, got := tp.do(t, "POST", tp.v3("/topics"), jsonType, `{"topic_name":"batch","partitions_count":2}`)
	expect(t, "create", code, got, 201, "")
	code, got = tp.do(t, "POST", tp.v3("/topics/batch/records:batch"), jsonType, `{"entries":[
		{"id":"a","partition_id":1,"key":{"type":"STRING","data":"k"},"value":{"type":"STRING","data":"one"}},
		{"id":"b","partition_id":7,"value":{"type":"STRING","data":"lost"}},
		{"id":"c","partition_id":1,"value":{"type":"BINARY","data":"dHdv"},"headers":[{"name":"h","value":"eA=="}]},
		{"id":"d","value":{"type":"BINARY","data":"%%"}}]}`)
	if code != 207 {
		t.Fatalf("batch: %d %v", code, got)
	}
	succ, fail := field(got, "successes").([]any), field(got, "failures").([]any)
	if len(succ) != 2 || len(fail) != 2 {
		t.Fatalf("batch answer: %v", got)
	}
	for i, want := range []struct {
		id     string
		offset float64
	}{{"a", 0}, {"c", 1}} {
		s := succ[i]
		if field(s, "id") != want.id || field(s, "partition_id") != float64(1) || field(s, "offset") != want.offset || field(s, "topic_name") != "batch" ||
			field(s, "error_code") != nil {
			t.Errorf("success %d: %v", i, s)
		}
	}
	if field(fail[0], "id") != "b" || field(fail[0], "error_code") != float64(40402) ||
		field(fail[1], "id") != "d" || field(fail[1], "error_code") != float64(400) {
		t.Errorf("failures: %v", fail)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(tp.broker), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{
		"batch": {1: kgo.NewOffset().AtStart()}}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var read []string
	for len(read) < 2 {
		fs := cl.PollFetches(t.Context())
		if err := fs.Err(); err != nil {
			t.Fatal(err)
		}
		fs.EachRecord(func(r *kgo.Record) {
			h := ""
			for _, rh := range r.Headers {
				h += rh.Key + "=" + string(rh.Value)
			}
			read = append(read, fmt.Sprintf("%d %s %s %s", r.Offset, r.Key, r.Value, h))
		})
	}
	if want := []string{"0 k one ", "1  two h=x"}; !slices.Equal(read, want) {
		t.Fatalf("read back %q, want %q", read, want)
	}

	eleven := strings.TrimSuffix(strings.Repeat(`{"id":"x","value":{"type":"STRING","data":"v"}},`, 11), ",")
	for _, bad := range []struct{ what, body, msg string }{
		{"empty", `{"entries":[]}`, "Empty batch."},
		{"no entries", `{}`, "Request body is empty. Data is required."},
		{"too many", `{"entries":[` + eleven + `]}`, "Too many entries in batch (at most 10)."},
		{"ids not distinct", `{"entries":[{"id":"a"},{"id":"a"}]}`, "Batch entry IDs are not distinct."},
		{"id not a string", `{"entries":[{"id":1}]}`, "Batch entry identifier is not a valid string."},
		{"id with a space", `{"entries":[{"id":"a b"}]}`, "Batch entry identifier is not a valid string."},
	} {
		code, got := tp.do(t, "POST", tp.v3("/topics/batch/records:batch"), jsonType, bad.body)
		if code != 400 || field(got, "error_code") != float64(42208) || field(got, "message") != bad.msg {
			t.Errorf("%s: %d %v", bad.what, code, got)
		}
	}
	code, got = tp.do(t, "POST", tp.v3("/topics/nope/records:batch"), jsonType, `{"entries":[{"id":"a","value":{"type":"STRING","data":"v"}}]}`)
	if code != 207 || field(field(got, "failures").([]any)[0], "error_code") != float64(40403) {
		t.Errorf("unknown topic: %d %v", code, got)
	}
}

// TestRestProduceAfterPatch: a record for a partition a PATCH has just
// added is produced at once (franz-go's producer, which knew the topic
// with fewer partitions, is waited for), not refused with a 500.
func TestRestProduceAfterPatch(t *testing.T) {
	tp := startProxy(t, Config{})
	for i := range 5 {
		topic := fmt.Sprint("patched-", i)
		code, got := tp.do(t, "POST", tp.v3("/topics"), jsonType, `{"topic_name":"`+topic+`","partitions_count":1}`)
		expect(t, "create", code, got, 201, "")
		record := func(p int) string {
			return fmt.Sprintf(`{"partition_id":%d,"value":{"type":"STRING","data":"v"}}`, p)
		}
		code, got = tp.do(t, "POST", tp.v3("/topics/"+topic+"/records"), jsonType, record(0))
		expect(t, "produce to partition 0", code, got, 200, "")
		code, got = tp.do(t, "PATCH", tp.v3("/topics/"+topic), jsonType, `{"partitions_count":3}`)
		expect(t, "patch", code, got, 200, "")
		code, got = tp.do(t, "POST", tp.v3("/topics/"+topic+"/records"), jsonType, record(2))
		expect(t, "produce to the new partition 2", code, got, 200, "")
		if field(got, "partition_id") != float64(2) || field(got, "offset") != float64(0) {
			t.Fatalf("%s: %v", topic, got)
		}
	}
}

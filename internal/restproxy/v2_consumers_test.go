package restproxy

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

const (
	v2BaseType   = "application/vnd.kafka.v2+json"
	v2BinaryType = "application/vnd.kafka.binary.v2+json"
	v2JSONType   = "application/vnd.kafka.json.v2+json"
)

// consumerProxy is one more proxy on a broker: its own Proxy and HTTP server.
type consumerProxy struct {
	p   *Proxy
	srv *httptest.Server
	url string
}

// startConsumerProxy serves a new proxy on broker; handler, when not nil,
// wraps the proxy's handler (to give requests a principal).
func startConsumerProxy(t testing.TB, broker string, cfg Config, wrap func(*Proxy, http.Handler) http.Handler) *consumerProxy {
	t.Helper()
	cfg.ClientOpts = append(cfg.ClientOpts, kgo.SeedBrokers(broker))
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := p.Handler()
	if wrap != nil {
		h = wrap(p, h)
	}
	srv := httptest.NewServer(h)
	vp := &consumerProxy{p: p, srv: srv, url: srv.URL}
	t.Cleanup(func() {
		srv.Close()
		p.Close() // a second Close of a proxy a test closed is harmless
	})
	return vp
}

// v2Answer is an answer: status, content type and decoded JSON body.
type v2Answer struct {
	status int
	ct     string
	body   any
}

// v2Do sends a v2 request: body as application/vnd.kafka.v2+json when
// not "", accept as the Accept header when not "".
func v2Do(t testing.TB, method, url, accept, body string) v2Answer {
	t.Helper()
	contentType := ""
	if body != "" {
		contentType = v2BaseType
	}
	resp, raw := send(t, context.Background(), method, url, contentType, accept, body)
	a := v2Answer{status: resp.StatusCode, ct: resp.Header.Get("Content-Type")}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &a.body); err != nil {
			t.Fatalf("%s %s: body %s: %v", method, url, raw, err)
		}
	}
	return a
}

// want fails unless the answer has the status and (when wantBody is not
// "") the JSON body.
func (a v2Answer) want(t testing.TB, what string, status int, wantBody string) {
	t.Helper()
	if a.status != status {
		t.Fatalf("%s: status %d, want %d (body %v)", what, a.status, status, a.body)
	}
	if wantBody == "" {
		return
	}
	var w any
	if err := json.Unmarshal([]byte(wantBody), &w); err != nil {
		t.Fatalf("%s: test JSON %s: %v", what, wantBody, err)
	}
	if !reflect.DeepEqual(a.body, w) {
		got, _ := json.Marshal(a.body)
		t.Fatalf("%s: body\n got %s\nwant %s", what, got, wantBody)
	}
}

// wantError fails unless the answer is Confluent's error body with the
// status and code.
func (a v2Answer) wantError(t testing.TB, what string, status, code int) {
	t.Helper()
	m, _ := a.body.(map[string]any)
	if a.status != status || m == nil || m["error_code"] != float64(code) {
		t.Fatalf("%s: status %d body %v, want %d error_code %d", what, a.status, a.body, status, code)
	}
	if msg, _ := m["message"].(string); msg == "" {
		t.Fatalf("%s: no message in %v", what, a.body)
	}
}

// v2Rec is a record as a v2 read answers it.
type v2Rec struct {
	Topic     string          `json:"topic"`
	Key       json.RawMessage `json:"key"`
	Value     json.RawMessage `json:"value"`
	Partition int32           `json:"partition"`
	Offset    int64           `json:"offset"`
}

// readV2 reads records once from an instance's base URI.
func readV2(t testing.TB, base, accept string) []v2Rec {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), "GET", base+"/records?timeout=500", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", accept)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("read %s: %d %s", base, resp.StatusCode, raw)
	}
	if ct := resp.Header.Get("Content-Type"); ct != accept {
		t.Fatalf("read %s: content type %q, want %q", base, ct, accept)
	}
	var recs []v2Rec
	if err := json.Unmarshal(raw, &recs); err != nil {
		t.Fatalf("read %s: %s: %v", base, raw, err)
	}
	return recs
}

// readV2Until reads until n records came (or fails after 30s).
func readV2Until(t testing.TB, base, accept string, n int) []v2Rec {
	t.Helper()
	var all []v2Rec
	deadline := time.Now().Add(30 * time.Second)
	for len(all) < n {
		if time.Now().After(deadline) {
			t.Fatalf("read %s: %d records of %d within 30s", base, len(all), n)
		}
		all = append(all, readV2(t, base, accept)...)
	}
	return all
}

func createTopicN(t testing.TB, admin *kadm.Client, name string, partitions int32) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := admin.CreateTopic(ctx, partitions, 1, nil, name)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatal(err)
	}
}

func produceAll(t testing.TB, broker string, recs ...*kgo.Record) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// TestV2ConsumerLifecycle runs an instance through Confluent's documented
// sequence: create, subscribe, read, commit, committed, delete; in binary
// and in json.
func TestV2ConsumerLifecycle(t *testing.T) {
	tp := startProxy(t, Config{})
	createTopicN(t, tp.admin, "life", 2)
	var recs []*kgo.Record
	for i := range 6 {
		r := &kgo.Record{Topic: "life", Partition: int32(i % 2), Value: []byte(fmt.Sprintf("v%d", i))}
		if i != 3 {
			r.Key = []byte(fmt.Sprintf("k%d", i))
		}
		recs = append(recs, r)
	}
	produceAll(t, tp.broker, recs...)
	base := tp.url + "/consumers/g1/instances/c1"

	v2Do(t, "POST", tp.url+"/consumers/g1", "", `{"name":"c1","format":"binary","auto.offset.reset":"earliest","auto.commit.enable":"false"}`).
		want(t, "create", 200, fmt.Sprintf(`{"instance_id":"c1","base_uri":%q}`, base))
	v2Do(t, "POST", tp.url+"/consumers/g1", "", `{"name":"c1"}`).wantError(t, "create again", 409, 40902)
	v2Do(t, "POST", base+"/subscription", "", `{"topics":["life"]}`).want(t, "subscribe", 204, "")
	v2Do(t, "GET", base+"/subscription", "", "").want(t, "subscription", 200, `{"topics":["life"]}`)

	got := readV2Until(t, base, v2BinaryType, 6)
	if len(got) != 6 {
		t.Fatalf("%d records, want 6", len(got))
	}
	next := map[int32]int64{}
	for _, r := range got {
		if r.Offset != next[r.Partition] {
			t.Fatalf("partition %d: offset %d, want %d", r.Partition, r.Offset, next[r.Partition])
		}
		i := 2*int(r.Offset) + int(r.Partition)
		wantKey := fmt.Sprintf("%q", b64(fmt.Sprintf("k%d", i)))
		if i == 3 {
			wantKey = "null"
		}
		if r.Topic != "life" || string(r.Key) != wantKey || string(r.Value) != fmt.Sprintf("%q", b64(fmt.Sprintf("v%d", i))) {
			t.Fatalf("record %d: %+v (key %s value %s)", i, r, r.Key, r.Value)
		}
		next[r.Partition]++
	}
	v2Do(t, "GET", base+"/assignments", "", "").
		want(t, "assignments", 200, `{"partitions":[{"topic":"life","partition":0},{"topic":"life","partition":1}]}`)

	// Nothing committed yet (auto commit off), then everything consumed.
	offsetsQuery := `{"partitions":[{"topic":"life","partition":0},{"topic":"life","partition":1}]}`
	v2Do(t, "GET", base+"/offsets", "", offsetsQuery).want(t, "committed before", 200, `{"offsets":[]}`)
	v2Do(t, "POST", base+"/offsets", "", "").want(t, "commit consumed", 200, `[]`)
	v2Do(t, "GET", base+"/offsets", "", offsetsQuery).want(t, "committed", 200,
		`{"offsets":[{"topic":"life","partition":0,"offset":3,"metadata":""},{"topic":"life","partition":1,"offset":3,"metadata":""}]}`)
	fetched, err := tp.admin.FetchOffsets(t.Context(), "g1")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := fetched.Lookup("life", 1); o.At != 3 {
		t.Fatalf("the group's commit as an admin client reads it: %+v", o)
	}

	v2Do(t, "DELETE", base, "", "").want(t, "delete", 204, "")
	v2Do(t, "GET", base+"/subscription", "", "").wantError(t, "deleted", 404, 40403)
	v2Do(t, "DELETE", base, "", "").wantError(t, "delete again", 404, 40403)

	// json: values are embedded as JSON, not base64.
	createTopicN(t, tp.admin, "lifejson", 1)
	produceAll(t, tp.broker, &kgo.Record{Topic: "lifejson", Key: []byte(`"a"`), Value: []byte(`{"n":1,"s":["x"]}`)})
	a := v2Do(t, "POST", tp.url+"/consumers/g2", "", `{"format":"json","auto.offset.reset":"earliest"}`)
	a.want(t, "create json", 200, "")
	m := a.body.(map[string]any)
	name := m["instance_id"].(string)
	if !strings.HasPrefix(name, "rest-consumer-") || m["base_uri"] != tp.url+"/consumers/g2/instances/"+name {
		t.Fatalf("generated instance: %v", m)
	}
	jbase := m["base_uri"].(string)
	v2Do(t, "POST", jbase+"/subscription", "", `{"topic_pattern":"life.s[o]n"}`).want(t, "subscribe pattern", 204, "")
	jr := readV2Until(t, jbase, v2JSONType, 1)
	if len(jr) != 1 || string(jr[0].Key) != `"a"` || string(jr[0].Value) != `{"n":1,"s":["x"]}` {
		t.Fatalf("json records: %+v", jr)
	}
	v2Do(t, "GET", jbase+"/subscription", "", "").want(t, "pattern subscription", 200, `{"topics":["lifejson"]}`)
	v2Do(t, "DELETE", jbase+"/subscription", "", "").want(t, "unsubscribe", 204, "")
	v2Do(t, "GET", jbase+"/subscription", "", "").want(t, "unsubscribed", 200, `{"topics":[]}`)
}

// TestV2ConsumerErrors covers the answers to bad requests: an unknown
// instance on every endpoint, a wrong Accept, bad configs and bodies.
func TestV2ConsumerErrors(t *testing.T) {
	tp := startProxy(t, Config{})
	createTopicN(t, tp.admin, "errs", 1)
	nobody := tp.url + "/consumers/g/instances/nobody"
	for _, c := range []struct{ method, path, body string }{
		{"DELETE", "", ""},
		{"POST", "/subscription", `{"topics":["errs"]}`},
		{"GET", "/subscription", ""},
		{"DELETE", "/subscription", ""},
		{"POST", "/assignments", `{"partitions":[]}`},
		{"GET", "/assignments", ""},
		{"GET", "/records", ""},
		{"POST", "/offsets", ""},
		{"GET", "/offsets", `{"partitions":[]}`},
		{"POST", "/positions", `{"offsets":[]}`},
		{"POST", "/positions/beginning", `{"partitions":[]}`},
		{"POST", "/positions/end", `{"partitions":[]}`},
	} {
		v2Do(t, c.method, nobody+c.path, "", c.body).wantError(t, c.method+" unknown "+c.path, 404, 40403)
	}

	for _, c := range []struct {
		body         string
		status, code int
	}{
		{`{"format":"xml"}`, 422, 42200},
		{`{"auto.offset.reset":"smallest"}`, 422, 42204},
		{`{"auto.commit.enable":"yes"}`, 422, 42204},
		{`{"fetch.min.bytes":-2}`, 422, 40001},
		{`{"consumer.request.timeout.ms":0}`, 422, 42204},
		{`{"nmae":"typo"}`, 400, 400},
		{`{"name":`, 400, 400},
	} {
		v2Do(t, "POST", tp.url+"/consumers/g", "", c.body).wantError(t, "create "+c.body, c.status, c.code)
	}

	base := tp.url + "/consumers/g/instances/e1"
	v2Do(t, "POST", tp.url+"/consumers/g", "", `{"name":"e1","format":"json","auto.offset.reset":"earliest"}`).want(t, "create", 200, "")
	v2Do(t, "GET", base+"/records", v2BinaryType, "").wantError(t, "binary Accept, json instance", 406, 40601)
	v2Do(t, "GET", base+"/records", v2BaseType, "").wantError(t, "v2 Accept (binary), json instance", 406, 40601)
	v2Do(t, "GET", base+"/records", "", "").wantError(t, "no Accept (binary), json instance", 406, 40601)
	v2Do(t, "GET", base+"/records", "application/json", "").wantError(t, "plain JSON Accept", 406, 406)
	v2Do(t, "GET", base+"/records?timeout=abc", v2JSONType, "").wantError(t, "bad timeout", 400, 400)
	v2Do(t, "GET", base+"/records", v2JSONType, "").wantError(t, "read before subscribing", 409, 40903)
	v2Do(t, "POST", base+"/subscription", "", `{"topics":["errs"],"topic_pattern":"e.*"}`).wantError(t, "topics and pattern", 400, 400)
	v2Do(t, "POST", base+"/subscription", "", `{}`).wantError(t, "neither", 400, 400)
	v2Do(t, "POST", base+"/subscription", "", `{"topic_pattern":"("}`).wantError(t, "bad pattern", 400, 400)
	v2Do(t, "POST", base+"/positions", "", `{"offsets":[{"topic":"errs","partition":0,"offset":1}]}`).wantError(t, "seek unassigned", 409, 40903)
	v2Do(t, "GET", base+"/offsets", "", "").wantError(t, "committed without body", 404, 40402)
	v2Do(t, "POST", base+"/offsets", "", `{"offsets":[{"topic":"","partition":0,"offset":1}]}`).wantError(t, "commit no topic", 422, 42200)
	v2Do(t, "POST", base+"/subscription", "", `{"topics":["errs"]}`).want(t, "subscribe", 204, "")
	v2Do(t, "POST", base+"/assignments", "", `{"partitions":[{"topic":"errs","partition":0}]}`).wantError(t, "assign while subscribed", 409, 40903)

	// A record that is not JSON cannot be read by a json instance: 500
	// 50002, and it stays first in line (not consumed, not committed).
	createTopicN(t, tp.admin, "notjson", 1)
	produceAll(t, tp.broker, &kgo.Record{Topic: "notjson", Value: []byte("plain text")})
	nj := tp.url + "/consumers/gj/instances/nj"
	v2Do(t, "POST", tp.url+"/consumers/gj", "", `{"name":"nj","format":"json","auto.offset.reset":"earliest","fetch.min.bytes":1}`).want(t, "create nj", 200, "")
	v2Do(t, "POST", nj+"/subscription", "", `{"topics":["notjson"]}`).want(t, "subscribe nj", 204, "")
	deadline := time.Now().Add(30 * time.Second)
	for {
		a := v2Do(t, "GET", nj+"/records?timeout=500", v2JSONType, "")
		if a.status != 200 {
			a.wantError(t, "not JSON", 500, 50002)
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the record that is not JSON was not met within 30s")
		}
	}
	v2Do(t, "GET", nj+"/records?timeout=500", v2JSONType, "").wantError(t, "not JSON again", 500, 50002)
	v2Do(t, "POST", nj+"/offsets", "", "").want(t, "commit nothing consumed", 200, `[]`)
	v2Do(t, "GET", nj+"/offsets", "", `{"partitions":[{"topic":"notjson","partition":0}]}`).want(t, "nothing committed", 200, `{"offsets":[]}`)

	// A body in another content type is 415.
	req, _ := http.NewRequest("POST", base+"/subscription", strings.NewReader(`{"topics":["errs"]}`))
	req.Header.Set("Content-Type", "text/plain")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 415 {
		t.Fatalf("text/plain body: %d, want 415", resp.StatusCode)
	}
}

// TestV2ConsumerCommitAndSeek commits given offsets with metadata, sees a
// new member of the group start after them, and moves an instance with
// positions, positions/beginning and positions/end; and consumes
// assigned partitions without a group member.
func TestV2ConsumerCommitAndSeek(t *testing.T) {
	tp := startProxy(t, Config{})
	createTopicN(t, tp.admin, "seek", 1)
	var recs []*kgo.Record
	for i := range 10 {
		recs = append(recs, &kgo.Record{Topic: "seek", Value: []byte(fmt.Sprintf("v%d", i))})
	}
	produceAll(t, tp.broker, recs...)
	a := tp.url + "/consumers/gs/instances/a"
	v2Do(t, "POST", tp.url+"/consumers/gs", "", `{"name":"a","auto.offset.reset":"earliest","auto.commit.enable":"false"}`).want(t, "create a", 200, "")
	v2Do(t, "POST", a+"/subscription", "", `{"topics":["seek"]}`).want(t, "subscribe a", 204, "")
	readV2Until(t, a, v2BinaryType, 10)
	// The offset given is the last consumed: 5 is committed, as Confluent.
	v2Do(t, "POST", a+"/offsets", "", `{"offsets":[{"topic":"seek","partition":0,"offset":4,"metadata":"m4"}]}`).want(t, "commit 4", 200, `[]`)
	v2Do(t, "GET", a+"/offsets", "", `{"partitions":[{"topic":"seek","partition":0}]}`).
		want(t, "committed", 200, `{"offsets":[{"topic":"seek","partition":0,"offset":5,"metadata":"m4"}]}`)

	// Seek back, to the start, to the end, and to a time.
	v2Do(t, "POST", a+"/positions", "", `{"offsets":[{"topic":"seek","partition":0,"offset":7}]}`).want(t, "seek 7", 204, "")
	if got := readV2Until(t, a, v2BinaryType, 3); got[0].Offset != 7 || len(got) != 3 {
		t.Fatalf("after seek to 7: %+v", got)
	}
	v2Do(t, "POST", a+"/positions/beginning", "", `{"partitions":[{"topic":"seek","partition":0}]}`).want(t, "seek beginning", 204, "")
	if got := readV2Until(t, a, v2BinaryType, 10); got[0].Offset != 0 || len(got) != 10 {
		t.Fatalf("after seek to beginning: %d records from %d", len(got), got[0].Offset)
	}
	v2Do(t, "POST", a+"/positions/end", "", `{"partitions":[{"topic":"seek","partition":0}]}`).want(t, "seek end", 204, "")
	if got := readV2(t, a, v2BinaryType); len(got) != 0 {
		t.Fatalf("after seek to end: %+v", got)
	}
	produceAll(t, tp.broker, &kgo.Record{Topic: "seek", Value: []byte("v10")})
	if got := readV2Until(t, a, v2BinaryType, 1); got[0].Offset != 10 {
		t.Fatalf("after seek to end and one more produce: %+v", got)
	}
	v2Do(t, "POST", a+"/positions", "", `{"timestamps":[{"topic":"seek","partition":0,"timestamp":"2000-01-01T00:00:00Z"}]}`).want(t, "seek time", 204, "")
	if got := readV2Until(t, a, v2BinaryType, 11); got[0].Offset != 0 {
		t.Fatalf("after seek to a time before every record: from %d", got[0].Offset)
	}
	v2Do(t, "DELETE", a, "", "").want(t, "delete a", 204, "")

	// A new member starts at the commit.
	b := tp.url + "/consumers/gs/instances/b"
	v2Do(t, "POST", tp.url+"/consumers/gs", "", `{"name":"b","auto.offset.reset":"earliest"}`).want(t, "create b", 200, "")
	v2Do(t, "POST", b+"/subscription", "", `{"topics":["seek"]}`).want(t, "subscribe b", 204, "")
	if got := readV2Until(t, b, v2BinaryType, 6); got[0].Offset != 5 || len(got) != 6 {
		t.Fatalf("new member: %d records from %d, want 6 from 5", len(got), got[0].Offset)
	}
	v2Do(t, "DELETE", b, "", "").want(t, "delete b", 204, "")

	// Assigned, not subscribed: starts at the group's commit, which the
	// deleted auto-committing member b left at 11.
	c := tp.url + "/consumers/gs/instances/c"
	v2Do(t, "POST", tp.url+"/consumers/gs", "", `{"name":"c","auto.offset.reset":"earliest","auto.commit.enable":"false"}`).want(t, "create c", 200, "")
	v2Do(t, "POST", c+"/assignments", "", `{"partitions":[{"topic":"seek","partition":0}]}`).want(t, "assign", 204, "")
	v2Do(t, "GET", c+"/assignments", "", "").want(t, "assignments", 200, `{"partitions":[{"topic":"seek","partition":0}]}`)
	v2Do(t, "POST", c+"/positions", "", `{"offsets":[{"topic":"seek","partition":0,"offset":9}]}`).want(t, "seek assigned", 204, "")
	if got := readV2Until(t, c, v2BinaryType, 2); got[0].Offset != 9 || len(got) != 2 {
		t.Fatalf("assigned after seek: %+v", got)
	}
	v2Do(t, "POST", c+"/offsets", "", "").want(t, "commit assigned", 200, `[]`)
	v2Do(t, "GET", c+"/offsets", "", `{"partitions":[{"topic":"seek","partition":0}]}`).
		want(t, "committed by assigned", 200, `{"offsets":[{"topic":"seek","partition":0,"offset":11,"metadata":""}]}`)
}

// TestV2ConsumerExpiry: an idle instance is closed after the timeout (its
// member leaves the group), one in use is not.
func TestV2ConsumerExpiry(t *testing.T) {
	broker := startBroker(t)
	vp := startConsumerProxy(t, broker, Config{ConsumerInstanceTimeout: 1500 * time.Millisecond}, nil)
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	admin := kadm.NewClient(cl)
	createTopicN(t, admin, "exp", 1)
	idle, busy := vp.url+"/consumers/ge/instances/idle", vp.url+"/consumers/gb/instances/busy"
	v2Do(t, "POST", vp.url+"/consumers/ge", "", `{"name":"idle"}`).want(t, "create idle", 200, "")
	v2Do(t, "POST", vp.url+"/consumers/gb", "", `{"name":"busy"}`).want(t, "create busy", 200, "")
	v2Do(t, "POST", idle+"/subscription", "", `{"topics":["exp"]}`).want(t, "subscribe", 204, "")
	// Read (which keeps the instance in use) until it has joined.
	deadline := time.Now().Add(20 * time.Second)
	for {
		readV2(t, idle, v2BinaryType)
		v2Do(t, "GET", busy+"/subscription", "", "").want(t, "busy instance in use", 200, "")
		described, err := admin.DescribeGroups(context.Background(), "ge")
		if err == nil && described["ge"].State == "Stable" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the idle instance's member did not join within 20s")
		}
	}
	// Only busy is used now; idle's member leaves the group when it
	// expires (asking for idle would keep it alive).
	start := time.Now()
	for {
		v2Do(t, "GET", busy+"/subscription", "", "").want(t, "busy instance in use", 200, "")
		described, err := admin.DescribeGroups(context.Background(), "ge")
		if err == nil && described["ge"].State == "Empty" {
			break
		}
		if time.Since(start) > 10*time.Second {
			t.Fatalf("the idle instance's member is still in the group after 10s: %v", described["ge"].State)
		}
		time.Sleep(100 * time.Millisecond) // the pace of a client using its busy instance
	}
	if since := time.Since(start); since < time.Second {
		t.Fatalf("expired after %s, before its 1.5s timeout", since)
	}
	v2Do(t, "GET", idle+"/subscription", "", "").wantError(t, "expired", 404, 40403)
	v2Do(t, "GET", busy+"/subscription", "", "").want(t, "busy instance after", 200, "")
}

// waitGroupState waits until a group is in a state (DescribeGroups).
func waitGroupState(t testing.TB, admin *kadm.Client, group, state string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		described, err := admin.DescribeGroups(context.Background(), group)
		if err == nil && described[group].State == state {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("group %s: state %q, want %q (%v)", group, described[group].State, state, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestV2ConsumerPrincipals: an instance belongs to the principal that made
// it; another's request for it is 404, and may use the same name.
func TestV2ConsumerPrincipals(t *testing.T) {
	broker := startBroker(t)
	// The request's principal comes from a test header here; HTTP
	// authentication gives it in the service.
	byHeader := func(p *Proxy, h http.Handler) http.Handler {
		clients := map[string]*kafkaClient{}
		for _, name := range []string{"alice", "bob"} {
			kc, err := newKafkaClient(name, p.shared.opts)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(kc.client.Close)
			clients[name] = kc
		}
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			if kc := clients[req.Header.Get("X-Test-Principal")]; kc != nil {
				req = req.WithContext(withKafka(req.Context(), kc))
			}
			h.ServeHTTP(w, req)
		})
	}
	vp := startConsumerProxy(t, broker, Config{}, byHeader)
	as := func(who, method, path, body string) int {
		req, _ := http.NewRequest(method, vp.url+path, strings.NewReader(body))
		req.Header.Set("X-Test-Principal", who)
		if body != "" {
			req.Header.Set("Content-Type", v2BaseType)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if s := as("alice", "POST", "/consumers/gp", `{"name":"c"}`); s != 200 {
		t.Fatalf("alice creates: %d", s)
	}
	if s := as("alice", "GET", "/consumers/gp/instances/c/subscription", ""); s != 200 {
		t.Fatalf("alice reads hers: %d", s)
	}
	for _, who := range []string{"bob", ""} {
		if s := as(who, "GET", "/consumers/gp/instances/c/subscription", ""); s != 404 {
			t.Fatalf("%q reads alice's: %d, want 404", who, s)
		}
		if s := as(who, "DELETE", "/consumers/gp/instances/c", ""); s != 404 {
			t.Fatalf("%q deletes alice's: %d, want 404", who, s)
		}
	}
	if s := as("bob", "POST", "/consumers/gp", `{"name":"c"}`); s != 200 {
		t.Fatalf("bob creates his own c: %d", s)
	}
	if s := as("alice", "DELETE", "/consumers/gp/instances/c", ""); s != 204 {
		t.Fatalf("alice deletes hers: %d", s)
	}
	if s := as("bob", "GET", "/consumers/gp/instances/c/subscription", ""); s != 200 {
		t.Fatalf("bob's is still there: %d", s)
	}
}

// TestV2ConsumerGroupWithNative: two REST proxies, each with an instance,
// and a native franz-go consumer share one group and a 6-partition
// topic. While the group is stable every record is consumed exactly once
// across the three; when one proxy's instance leaves, the others take its
// partitions, and the records produced after are again consumed exactly
// once. Closing a proxy makes its instance leave the group.
func TestV2ConsumerGroupWithNative(t *testing.T) {
	broker := startBroker(t)
	p1 := startConsumerProxy(t, broker, Config{}, nil)
	p2 := startConsumerProxy(t, broker, Config{AdvertisedURL: "http://rest-2.example:8082"}, nil)
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	admin := kadm.NewClient(cl)
	createTopicN(t, admin, "shared", 6)

	const group = "mixed"
	create := func(vp *consumerProxy, name string) string {
		a := v2Do(t, "POST", vp.url+"/consumers/"+group, "", `{"name":"`+name+`","auto.offset.reset":"earliest","auto.commit.enable":"false","fetch.min.bytes":1}`)
		a.want(t, "create "+name, 200, "")
		base := vp.url + "/consumers/" + group + "/instances/" + name
		v2Do(t, "POST", base+"/subscription", "", `{"topics":["shared"]}`).want(t, "subscribe "+name, 204, "")
		return base
	}
	r1 := create(p1, "r1")
	r2 := create(p2, "r2")
	// The second proxy advertises its configured URL.
	a := v2Do(t, "POST", p2.url+"/consumers/other", "", `{"name":"x"}`)
	a.want(t, "create on p2", 200, `{"instance_id":"x","base_uri":"http://rest-2.example:8082/consumers/other/instances/x"}`)
	// An instance lives on the proxy that made it.
	v2Do(t, "GET", p1.url+"/consumers/"+group+"/instances/r2/subscription", "", "").wantError(t, "r2 on p1", 404, 40403)

	native, err := kgo.NewClient(kgo.SeedBrokers(broker), kgo.ConsumerGroup(group), kgo.ConsumeTopics("shared"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit())
	if err != nil {
		t.Fatal(err)
	}
	defer native.Close()

	// Every member polls until the group has three members with
	// partitions; then records are produced.
	members := map[string]func() []seen{
		"r1": restPoller(t, r1), "r2": restPoller(t, r2), "native": nativePoller(t, native),
	}
	waitAssigned(t, admin, group, 3, members)

	produceShared(t, broker, 0, 300)
	byMember := consumeShared(t, members, 300)
	checkExactlyOnce(t, byMember, 0, 300)
	for name, got := range byMember {
		if len(got) == 0 {
			t.Fatalf("%s consumed nothing: the partitions were not shared", name)
		}
	}
	v2Do(t, "POST", r1+"/offsets", "", "").want(t, "commit r1", 200, `[]`)
	v2Do(t, "POST", r2+"/offsets", "", "").want(t, "commit r2", 200, `[]`)
	if err := native.CommitUncommittedOffsets(context.Background()); err != nil {
		t.Fatal(err)
	}

	// r2 leaves; r1 and the native consumer share its partitions.
	v2Do(t, "DELETE", r2, "", "").want(t, "delete r2", 204, "")
	delete(members, "r2")
	waitAssigned(t, admin, group, 2, members)
	produceShared(t, broker, 300, 300)
	byMember = consumeShared(t, members, 300)
	checkExactlyOnce(t, byMember, 300, 300)
	a = v2Do(t, "GET", r1+"/assignments", "", "")
	if n := len(a.body.(map[string]any)["partitions"].([]any)); n < 2 || n > 4 {
		t.Fatalf("r1 after the rebalance has %d partitions: %v", n, a.body)
	}

	// Closing proxy 1 leaves the group: the native member is alone.
	p1.srv.Close()
	p1.p.Close()
	deadline := time.Now().Add(20 * time.Second)
	for {
		native.PollRecords(pollCtx(200*time.Millisecond), 1) // keep the native member in the rebalance
		described, err := admin.DescribeGroups(context.Background(), group)
		if err == nil && len(described[group].Members) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the proxy closed the group has %d members", len(described[group].Members))
		}
	}
}

// seen is one record a member consumed.
type seen struct {
	partition int32
	offset    int64
	value     string
}

func pollCtx(d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	_ = cancel // released by its deadline
	return ctx
}

func restPoller(t *testing.T, base string) func() []seen {
	return func() []seen {
		var out []seen
		for _, r := range readV2(t, base, v2BinaryType) {
			v, err := base64.StdEncoding.DecodeString(strings.Trim(string(r.Value), `"`))
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, seen{r.Partition, r.Offset, string(v)})
		}
		return out
	}
}

func nativePoller(t *testing.T, cl *kgo.Client) func() []seen {
	return func() []seen {
		var out []seen
		fs := cl.PollFetches(pollCtx(500 * time.Millisecond))
		fs.EachRecord(func(r *kgo.Record) { out = append(out, seen{r.Partition, r.Offset, string(r.Value)}) })
		return out
	}
}

// waitAssigned polls every member until the group has n members, each
// with partitions; nothing is produced yet, so no poll returns records.
func waitAssigned(t *testing.T, admin *kadm.Client, group string, n int, members map[string]func() []seen) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		for name, poll := range members {
			if got := poll(); len(got) > 0 {
				t.Fatalf("%s read %d records before any were produced", name, len(got))
			}
		}
		described, err := admin.DescribeGroups(context.Background(), group)
		g := described[group]
		if err == nil && g.State == "Stable" && len(g.Members) == n {
			all := true
			for _, m := range g.Members {
				if ca, ok := m.Assigned.AsConsumer(); !ok || len(ca.Topics) == 0 {
					all = false
				}
			}
			if all {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("group %s: %d members in %s, want %d each with partitions", group, len(g.Members), g.State, n)
		}
	}
}

func produceShared(t *testing.T, broker string, from, n int) {
	var recs []*kgo.Record
	for i := from; i < from+n; i++ {
		recs = append(recs, &kgo.Record{Topic: "shared", Partition: int32(i % 6), Value: []byte(fmt.Sprintf("r%d", i))})
	}
	produceAll(t, broker, recs...)
}

// consumeAll polls every member until n records came in all, then once
// more each, so a record read twice would show.
func consumeShared(t *testing.T, members map[string]func() []seen, n int) map[string][]seen {
	t.Helper()
	got := map[string][]seen{}
	total := 0
	deadline := time.Now().Add(60 * time.Second)
	for total < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d records of %d consumed within 60s", total, n)
		}
		for name, poll := range members {
			rs := poll()
			got[name] = append(got[name], rs...)
			total += len(rs)
		}
	}
	for name, poll := range members {
		got[name] = append(got[name], poll()...)
	}
	return got
}

// checkExactlyOnce fails unless records r<from>..r<from+n-1> were each
// consumed once, by one member.
func checkExactlyOnce(t *testing.T, byMember map[string][]seen, from, n int) {
	t.Helper()
	count := map[string]int{}
	for name, rs := range byMember {
		for _, r := range rs {
			count[r.value]++
			if count[r.value] > 1 {
				t.Fatalf("%s consumed %s again (partition %d offset %d)", name, r.value, r.partition, r.offset)
			}
		}
	}
	for i := from; i < from+n; i++ {
		if count[fmt.Sprintf("r%d", i)] != 1 {
			t.Fatalf("r%d consumed %d times", i, count[fmt.Sprintf("r%d", i)])
		}
	}
	if len(count) != n {
		t.Fatalf("%d distinct records consumed, want %d", len(count), n)
	}
}

// TestV2ConsumerClosedInstance: a request that found an instance just
// before it was deleted or expired gets 404 once it holds the instance,
// rather than acting on (and making a client for) a closed instance.
func TestV2ConsumerClosedInstance(t *testing.T) {
	ci := &consumerInstance{consumed: map[v2TopicPartition]int64{}}
	if e := ci.begin(); e != nil {
		t.Fatalf("open instance: %v", e)
	}
	ci.end(time.Now())
	ci.close()
	e := ci.begin()
	if e == nil || e.Code != 40403 {
		t.Fatalf("closed instance: %v, want 40403", e)
	}
	if ci.idleSince(time.Now().Add(time.Hour)) == 0 {
		t.Fatal("a refused request left the instance counted busy")
	}
}

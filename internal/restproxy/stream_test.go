package restproxy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// stream is a streaming produce in flight: records are written to the
// request body (chunked: its length is not known) and results read from
// the answer line by line.
type stream struct {
	body    *io.PipeWriter
	resp    *http.Response
	results *bufio.Scanner
}

func (s *stream) send(t testing.TB, record string) {
	t.Helper()
	if _, err := io.WriteString(s.body, record+"\n"); err != nil {
		t.Fatal(err)
	}
}

// next reads the next result line.
func (s *stream) next(t testing.TB) map[string]any {
	t.Helper()
	if !s.results.Scan() {
		t.Fatalf("stream ended early: %v", s.results.Err())
	}
	var v map[string]any
	if err := json.Unmarshal(s.results.Bytes(), &v); err != nil {
		t.Fatalf("result line %q: %v", s.results.Bytes(), err)
	}
	return v
}

func (s *stream) end(t testing.TB) {
	t.Helper()
	s.body.Close()
	if s.results.Scan() {
		t.Fatalf("result after the last record: %s", s.results.Bytes())
	}
}

// TestRestProduceStream streams records with explicit partitions, keys
// and null keys over a chunked body, checks each is answered in order as
// it completes (the first answer arrives before the second record is
// sent), and reads them all back byte-identical with franz-go.
func TestRestProduceStream(t *testing.T) {
	tp := startProxy(t, Config{})
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	if _, err := tp.admin.CreateTopic(ctx, 3, 1, nil, "s"); err != nil {
		t.Fatal(err)
	}
	const n = 60
	type want struct {
		key, value []byte
		partition  int32 // -1: any
	}
	wants := make([]want, n)
	records := make([]string, n)
	for i := range n {
		value := append([]byte(fmt.Sprintf("value-%d-", i)), byte(i), 0xff, 0)
		w := want{value: value, partition: -1}
		body := fmt.Sprintf(`"value":{"type":"BINARY","data":%q}`, base64.StdEncoding.EncodeToString(value))
		switch i % 3 {
		case 0:
			w.partition = int32(i % 2 * 2)
			body = fmt.Sprintf(`"partition_id":%d,`, w.partition) + body
		case 1:
			w.key = []byte(fmt.Sprintf("key-%d", i%7))
			body = fmt.Sprintf(`"key":{"type":"STRING","data":%q},`, w.key) + body
		}
		wants[i], records[i] = w, "{"+body+"}"
	}

	s := openStreamWith(t, tp, "s", records[0])
	results := []map[string]any{s.next(t)} // answered before the second record is sent
	for _, r := range records[1:] {
		s.send(t, r)
	}
	for range n - 1 {
		results = append(results, s.next(t))
	}
	s.end(t)

	at := map[[2]int64]want{}
	for i, r := range results {
		if r["error_code"] != float64(200) || r["topic_name"] != "s" || r["cluster_id"] != tp.clusterID {
			t.Fatalf("record %d: %v", i, r)
		}
		p := int32(r["partition_id"].(float64))
		if wants[i].partition >= 0 && p != wants[i].partition {
			t.Fatalf("record %d: partition %d, want %d", i, p, wants[i].partition)
		}
		if r["value"].(map[string]any)["size"] != float64(len(wants[i].value)) {
			t.Fatalf("record %d: value %v", i, r["value"])
		}
		at[[2]int64{int64(p), int64(r["offset"].(float64))}] = wants[i]
	}
	if len(at) != n {
		t.Fatalf("%d distinct partition/offsets for %d records", len(at), n)
	}

	cl, err := kgo.NewClient(kgo.SeedBrokers(tp.broker), kgo.ConsumeTopics("s"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var got []*kgo.Record
	for len(got) < n {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			t.Fatalf("consume: %v (got %d records)", err, len(got))
		}
		got = append(got, fs.Records()...)
	}
	for _, g := range got {
		w, ok := at[[2]int64{int64(g.Partition), g.Offset}]
		if !ok || !bytes.Equal(g.Value, w.value) || !bytes.Equal(g.Key, w.key) || (g.Key == nil) != (w.key == nil) {
			t.Fatalf("consumed partition %d offset %d key %q value %q; answered %+v", g.Partition, g.Offset, g.Key, g.Value, w)
		}
		delete(at, [2]int64{int64(g.Partition), g.Offset})
	}
	if len(at) != 0 {
		t.Fatalf("answered but not consumed: %v", at)
	}
}

// openStreamWith opens a stream whose first record is already written,
// so the proxy has something to answer.
func openStreamWith(t testing.TB, tp *testProxy, topic, first string) *stream {
	t.Helper()
	pr, pw := io.Pipe()
	// The pipe takes the first record only once the transport reads the
	// body, after Do has begun; it is written from a goroutine, and the
	// stream is handed back only once it is written: a record the caller
	// sends then cannot reach the proxy before it (which made the result
	// lines, answered in the order records came, look one record off).
	written := make(chan error, 1)
	go func() {
		_, err := io.WriteString(pw, first+"\n")
		written <- err
	}()
	req, err := http.NewRequestWithContext(t.Context(), "POST", tp.url+tp.v3("/topics/"+topic+"/records"), pr)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", jsonType)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != jsonType {
		t.Fatalf("stream answered %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	select {
	case err := <-written:
		if err != nil {
			t.Fatalf("the stream's first record: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the stream's first record was not read within 30s")
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	return &stream{body: pw, resp: resp, results: sc}
}

// TestRestProduceStreamErrors sends concatenated records (a body with its
// length) where some are bad: each bad record gets its error line, the
// others are produced; JSON that cannot be parsed ends the stream with
// its line.
func TestRestProduceStreamErrors(t *testing.T) {
	tp := startProxy(t, Config{})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if _, err := tp.admin.CreateTopic(ctx, 1, 1, nil, "e"); err != nil {
		t.Fatal(err)
	}
	body := strings.Join([]string{
		`{"value":{"type":"STRING","data":"one"}}`,
		`{"value":{"type":"BINARY","data":"not base64!"}}`,
		`{"valu":{"type":"STRING","data":"x"}}`,
		`{"partition_id":"0","value":{"type":"STRING","data":"x"}}`,
		`{"partition_id":9,"value":{"type":"STRING","data":"x"}}`,
		`{"value":{"type":"STRING","data":"two"}}{"value":{"type":"STRING","data":"three"}}`,
		`{"value":`,
	}, "\n")
	status, raw := post(t, tp, "e", body)
	if status != 200 {
		t.Fatalf("status %d: %s", status, raw)
	}
	lines := strings.Split(strings.TrimSuffix(raw, "\n"), "\n")
	want := []struct {
		code   float64
		offset float64
	}{{200, 0}, {400, 0}, {400, 0}, {400, 0}, {40402, 0}, {200, 1}, {200, 2}, {400, 0}}
	if len(lines) != len(want) {
		t.Fatalf("%d result lines, want %d:\n%s", len(lines), len(want), raw)
	}
	for i, l := range lines {
		var v map[string]any
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("line %d %q: %v", i, l, err)
		}
		if v["error_code"] != want[i].code {
			t.Fatalf("line %d: %s, want error_code %v", i, l, want[i].code)
		}
		if want[i].code == 200 && v["offset"] != want[i].offset {
			t.Fatalf("line %d: %s, want offset %v", i, l, want[i].offset)
		}
		if want[i].code != 200 && v["message"] == "" {
			t.Fatalf("line %d: no message: %s", i, l)
		}
	}
	if !strings.Contains(lines[1], "is not a base64 string") {
		t.Fatalf("bad base64 line: %s", lines[1])
	}
	// A record's own decoding errors are worded as for a single record.
	for i, msg := range map[int]string{
		2: `Bad Request: json: unknown field \"valu\"`,
		3: "Bad Request: json: cannot unmarshal string into Go struct field produceRequest.partition_id of type int32",
		7: "Bad Request: unexpected EOF",
	} {
		if !strings.Contains(lines[i], `"message":"`+msg+`"`) {
			t.Fatalf("line %d: %s, want message %s", i, lines[i], msg)
		}
	}
}

// TestRestProduceRateLimit: past the configured records per second, a
// stream's records get 429 lines and a single produce is answered 429.
func TestRestProduceRateLimit(t *testing.T) {
	if _, err := New(Config{ProduceRateLimit: -1}); err == nil {
		t.Fatal("a negative rate limit was taken")
	}
	tp := startProxy(t, Config{ProduceRateLimit: 1})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if _, err := tp.admin.CreateTopic(ctx, 1, 1, nil, "r"); err != nil {
		t.Fatal(err)
	}
	rec := `{"value":{"type":"STRING","data":"x"}}`
	status, raw := post(t, tp, "r", strings.Repeat(rec+"\n", 5))
	if status != 200 {
		t.Fatalf("status %d: %s", status, raw)
	}
	var ok, limited int
	for _, l := range strings.Split(strings.TrimSuffix(raw, "\n"), "\n") {
		var v map[string]any
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		switch v["error_code"] {
		case float64(200):
			ok++
		case float64(429):
			limited++
			if m, _ := v["message"].(string); !strings.Contains(m, "rate limit") {
				t.Fatalf("429 line: %s", l)
			}
		default:
			t.Fatalf("line %s", l)
		}
	}
	// A burst of one, refilled once a second: the first record passes;
	// on a slow machine a second may.
	if ok < 1 || ok > 2 || ok+limited != 5 {
		t.Fatalf("%d produced, %d limited; want 1 (or 2) and the rest limited:\n%s", ok, limited, raw)
	}
	st, body := tp.do(t, "POST", tp.v3("/topics/r/records"), jsonType, rec)
	if st == 200 { // a token may have come back since; the next cannot have
		st, body = tp.do(t, "POST", tp.v3("/topics/r/records"), jsonType, rec)
	}
	if st != 429 || field(body, "error_code") != float64(429) {
		t.Fatalf("single produce past the limit: %d %v", st, body)
	}
}

// post sends body with its length and answers the status and raw answer.
func post(t *testing.T, tp *testProxy, topic, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(tp.url+tp.v3("/topics/"+topic+"/records"), jsonType, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(raw)
}

// TestRestProduceStreamRecordLimit: in a chunked stream --max-body bounds
// each record, not the stream: records under it pass however many, one
// over it gets a 413 line and ends the stream.
func TestRestProduceStreamRecordLimit(t *testing.T) {
	tp := startProxy(t, Config{MaxBody: 1024})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if _, err := tp.admin.CreateTopic(ctx, 1, 1, nil, "l"); err != nil {
		t.Fatal(err)
	}
	rec := `{"value":{"type":"STRING","data":"` + strings.Repeat("x", 500) + `"}}`
	s := openStreamWith(t, tp, "l", rec)
	for i := range 10 { // 5 KB in all: the stream is past the limit, no record is
		if r := s.next(t); r["error_code"] != float64(200) || r["offset"] != float64(i) {
			t.Fatalf("record %d: %v", i, r)
		}
		s.send(t, rec)
	}
	if r := s.next(t); r["error_code"] != float64(200) {
		t.Fatalf("record 10: %v", r)
	}
	// Written from another goroutine: the proxy stops reading past the
	// limit, so the write may block until the stream ends.
	go func() {
		_, _ = io.WriteString(s.body, `{"value":{"type":"STRING","data":"`+strings.Repeat("x", 5000)+`"}}`)
	}()
	if r := s.next(t); r["error_code"] != float64(413) {
		t.Fatalf("oversize record: %v", r)
	}
	if s.results.Scan() {
		t.Fatalf("the stream went on after an oversize record: %s", s.results.Bytes())
	}
}

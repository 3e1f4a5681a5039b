package console

import (
	"bufio"
	"encoding/json"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// msgsBase is the first test record's timestamp; record i of partition p
// is written at msgsBase + 3i+p seconds, so the records' order by
// timestamp across partitions is known: g = 3i+p.
var msgsBase = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)

// msgsProduce writes records to the partitions they name.
func msgsProduce(t *testing.T, tc *testConsole, recs ...*kgo.Record) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(tc.Broker), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(ctx(t), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// msgsFill makes topic with parts partitions of n records each: key
// k-p-i, a JSON value, header src=a (even i) or b (odd i).
func msgsFill(t *testing.T, tc *testConsole, topic string, parts int32, n int) {
	t.Helper()
	if _, err := tc.Admin.CreateTopic(ctx(t), parts, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	var recs []*kgo.Record
	for i := range n {
		for p := range parts {
			src := "a"
			if i%2 == 1 {
				src = "b"
			}
			recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Key: fmt.Appendf(nil, "k-%d-%d", p, i),
				Value:     fmt.Appendf(nil, `{"p":%d,"i":%d,"amount":%d}`, p, i, i*10),
				Headers:   []kgo.RecordHeader{{Key: "src", Value: []byte(src)}},
				Timestamp: msgsBase.Add(time.Duration(3*i+int(p)) * time.Second)})
		}
	}
	msgsProduce(t, tc, recs...)
}

// msgsLongReads lets a test's reads run 10 s, so a loaded machine does
// not cut a page short; a read that waits past the end offsets still
// shows, as the page's notice.
func msgsLongReads(t *testing.T) {
	d := msgsReadTime
	msgsReadTime = 10 * time.Second
	t.Cleanup(func() { msgsReadTime = d })
}

var msgsRowRE = regexp.MustCompile(`aria-label="Record (\d+)/(\d+)"`)

// msgsRows are a page's records as "partition/offset", in page order.
func msgsRows(body string) []string {
	var out []string
	for _, m := range msgsRowRE.FindAllStringSubmatch(body, -1) {
		out = append(out, m[1]+"/"+m[2])
	}
	return out
}

// msgsG names records by their global order g = 3i+p (3 partitions).
func msgsG(gs ...int) []string {
	var out []string
	for _, g := range gs {
		out = append(out, fmt.Sprintf("%d/%d", g%3, g/3))
	}
	return out
}

var msgsLinkRE = regexp.MustCompile(`<a href="([^"]*)" rel="(prev|next)"`)

// msgsLink is the page's older ("prev") or newer ("next") link.
func msgsLink(t *testing.T, body, rel string) string {
	t.Helper()
	for _, m := range msgsLinkRE.FindAllStringSubmatch(body, -1) {
		if m[2] == rel {
			return html.UnescapeString(m[1])
		}
	}
	t.Fatalf("no %s link in the page:\n%s", rel, body)
	return ""
}

func msgsWant(t *testing.T, tc *testConsole, path string, want []string) string {
	t.Helper()
	st, body := tc.get(path)
	if st != http.StatusOK {
		t.Fatalf("%s: status %d:\n%s", path, st, body)
	}
	if got := msgsRows(body); !slices.Equal(got, want) {
		t.Fatalf("%s: records %v, want %v", path, got, want)
	}
	if strings.Contains(body, "The read stopped") {
		t.Fatalf("%s: the read ran to its bound (did it wait past the end offsets?):\n%s", path, body)
	}
	return body
}

// TestMessagesBrowse: newest, oldest, an offset and a time, over all
// partitions or one, give exactly the expected records; the pager's
// links give the pages around them, the same ones after more records
// arrive; filters by key, value, header and expression; hex for binary;
// bad inputs are 400s and a missing topic a 404.
func TestMessagesBrowse(t *testing.T) {
	tc := startConsole(t, Config{PageSize: 4})
	msgsLongReads(t)
	msgsFill(t, tc, "m3", 3, 10) // g = 0..29
	const base = "/topics/m3/messages"

	t.Run("newest and older", func(t *testing.T) {
		body := msgsWant(t, tc, base, msgsG(26, 27, 28, 29))
		wantContains(t, body, `aria-current="page">Messages</a>`, `class="tabs"`, `href="/topics/m3/configs"`)
		older := msgsLink(t, body, "prev")
		body = msgsWant(t, tc, older, msgsG(22, 23, 24, 25))
		newer := msgsLink(t, body, "next")
		msgsWant(t, tc, newer, msgsG(26, 27, 28, 29))
	})
	t.Run("oldest and newer", func(t *testing.T) {
		body := msgsWant(t, tc, base+"?from=oldest", msgsG(0, 1, 2, 3))
		body = msgsWant(t, tc, msgsLink(t, body, "next"), msgsG(4, 5, 6, 7))
		msgsWant(t, tc, msgsLink(t, body, "prev"), msgsG(0, 1, 2, 3))
	})
	t.Run("merged by timestamp", func(t *testing.T) {
		// Partition 1's records are all older than partition 0's: pages
		// over both follow the timestamps, not the offsets.
		if _, err := tc.Admin.CreateTopic(ctx(t), 2, 1, nil, "skew"); err != nil {
			t.Fatal(err)
		}
		var recs []*kgo.Record
		for i := range 4 {
			recs = append(recs, &kgo.Record{Topic: "skew", Partition: 0, Value: []byte("late"), Timestamp: msgsBase.Add(time.Duration(100+i) * time.Second)},
				&kgo.Record{Topic: "skew", Partition: 1, Value: []byte("early"), Timestamp: msgsBase.Add(time.Duration(i) * time.Second)})
		}
		msgsProduce(t, tc, recs...)
		body := msgsWant(t, tc, "/topics/skew/messages?from=oldest", []string{"1/0", "1/1", "1/2", "1/3"})
		msgsWant(t, tc, msgsLink(t, body, "next"), []string{"0/0", "0/1", "0/2", "0/3"})
		body = msgsWant(t, tc, "/topics/skew/messages", []string{"0/0", "0/1", "0/2", "0/3"})
		msgsWant(t, tc, msgsLink(t, body, "prev"), []string{"1/0", "1/1", "1/2", "1/3"})
	})
	t.Run("offset in one partition", func(t *testing.T) {
		msgsWant(t, tc, base+"?p=1&from=offset&offset=5", []string{"1/5", "1/6", "1/7", "1/8"})
		msgsWant(t, tc, base+"?p=2", []string{"2/6", "2/7", "2/8", "2/9"})
	})
	t.Run("time", func(t *testing.T) {
		ts := msgsBase.Add(10 * time.Second).Format("2006-01-02T15:04:05")
		msgsWant(t, tc, base+"?from=time&ts="+ts, msgsG(10, 11, 12, 13))
	})
	t.Run("filters", func(t *testing.T) {
		body := msgsWant(t, tc, base+"?from=oldest&key=k-1-", []string{"1/0", "1/1", "1/2", "1/3"})
		wantContains(t, body, "A filter scans at most 10000 records")
		msgsWant(t, tc, base+"?value="+url.QueryEscape(`"i":7,`), msgsG(21, 22, 23))
		msgsWant(t, tc, base+"?header=src%3Da", msgsG(20, 24, 25, 26))
		msgsWant(t, tc, base+"?expr="+url.QueryEscape(`json.amount >= 80 && partition == 0 && headers["src"] != "" && offset > 0`), []string{"0/8", "0/9"})
		msgsWant(t, tc, base+"?expr="+url.QueryEscape(`key matches "^k-2-[0-3]$" && timestamp < date("2024-05-01T12:00:10Z")`), []string{"2/0", "2/1", "2/2"})
		st, body := tc.get(base + "?expr=" + url.QueryEscape("json.amount >>> 3"))
		if st != http.StatusBadRequest || !strings.Contains(body, "expression:") || !strings.Contains(body, `id="messages-browse"`) {
			t.Fatalf("bad expression: status %d, want 400 with the form:\n%s", st, body)
		}
	})
	t.Run("isolation", func(t *testing.T) {
		// An aborted transaction's records show to read_uncommitted only;
		// its markers never show, and the read still ends at once.
		if _, err := tc.Admin.CreateTopic(ctx(t), 1, 1, nil, "txn"); err != nil {
			t.Fatal(err)
		}
		msgsProduce(t, tc, &kgo.Record{Topic: "txn", Partition: 0, Value: []byte("plain")})
		cl, err := kgo.NewClient(kgo.SeedBrokers(tc.Broker), kgo.TransactionalID("msgs-txn"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		for _, commit := range []kgo.TransactionEndTry{kgo.TryAbort, kgo.TryCommit} {
			if err := cl.BeginTransaction(); err != nil {
				t.Fatal(err)
			}
			v := map[kgo.TransactionEndTry]string{kgo.TryAbort: "aborted", kgo.TryCommit: "committed"}[commit]
			if err := cl.ProduceSync(ctx(t), &kgo.Record{Topic: "txn", Partition: 0, Value: []byte(v)}).FirstErr(); err != nil {
				t.Fatal(err)
			}
			if err := cl.EndTransaction(ctx(t), commit); err != nil {
				t.Fatal(err)
			}
		}
		// plain 0, aborted 1, its marker 2, committed 3, its marker 4.
		body := msgsWant(t, tc, "/topics/txn/messages?from=oldest", []string{"0/0", "0/1", "0/3"})
		wantContains(t, body, "aborted")
		body = msgsWant(t, tc, "/topics/txn/messages?from=oldest&isolation=read_committed", []string{"0/0", "0/3"})
		if strings.Contains(body, "aborted") {
			t.Fatalf("read_committed shows the aborted record:\n%s", body)
		}
		body = msgsWant(t, tc, "/topics/txn/messages?isolation=read_committed", []string{"0/0", "0/3"})
		if strings.Contains(body, "The read stopped") {
			t.Fatalf("a read waited for records past the end until its bound:\n%s", body)
		}
		_, body = tc.get("/topics/txn/messages/0/3")
		wantContains(t, body, "<th scope=\"row\">Transactional</th><td>yes</td>")
		if st, _ := tc.get("/topics/txn/messages/0/2"); st != 404 {
			t.Errorf("a transaction marker's offset: status %d, want 404", st)
		}
	})
	t.Run("record view", func(t *testing.T) {
		st, body := tc.get(base + "/1/5")
		if st != 200 {
			t.Fatalf("record: status %d:\n%s", st, body)
		}
		wantContains(t, body, "k-1-5", "&#34;amount&#34;: 50", "src", "CreateTime", "2024-05-01 12:00:16.000Z", "Leader epoch")
		for path, want := range map[string]int{base + "/1/99": 404, base + "/9/0": 400, base + "/x/0": 400, "/topics/nope/messages/0/0": 404} {
			if st, body := tc.get(path); st != want {
				t.Errorf("%s: status %d, want %d:\n%s", path, st, want, body)
			}
		}
	})
	t.Run("binary as hex", func(t *testing.T) {
		if _, err := tc.Admin.CreateTopic(ctx(t), 1, 1, nil, "bin"); err != nil {
			t.Fatal(err)
		}
		msgsProduce(t, tc, &kgo.Record{Topic: "bin", Partition: 0, Value: []byte{0xff, 0x00, 0x01, 0x7f}})
		st, body := tc.get("/topics/bin/messages")
		if st != 200 {
			t.Fatalf("status %d", st)
		}
		wantContains(t, body, "binary", "ff 00 01 7f")
		// Text decoding of the same record stays a page, not an error.
		if st, _ := tc.get("/topics/bin/messages?decode=json"); st != 200 {
			t.Fatalf("decode=json of binary: status %d", st)
		}
	})
	t.Run("bad inputs", func(t *testing.T) {
		for path, want := range map[string]int{
			base + "?p=7":                    400,
			base + "?p=-1":                   400,
			base + "?from=bogus":             400,
			base + "?from=offset&offset=x":   400,
			base + "?from=time&ts=yesterday": 400,
			base + "?older=x":                400,
			base + "?older=0:1&newer=0:2":    400,
			base + "?decode=rot13":           400,
			base + "?header=%3Dv":            400,
			"/topics/nope/messages":          404,
		} {
			if st, body := tc.get(path); st != want {
				t.Errorf("%s: status %d, want %d:\n%s", path, st, want, body)
			}
		}
	})
	t.Run("paging is stable", func(t *testing.T) {
		body := msgsWant(t, tc, base, msgsG(26, 27, 28, 29))
		older := msgsLink(t, body, "prev")
		var more []*kgo.Record
		for p := range int32(3) {
			more = append(more, &kgo.Record{Topic: "m3", Partition: p, Value: []byte("later"), Timestamp: msgsBase.Add(time.Hour)})
		}
		msgsProduce(t, tc, more...)
		body = msgsWant(t, tc, older, msgsG(22, 23, 24, 25))
		msgsWant(t, tc, msgsLink(t, body, "next"), msgsG(26, 27, 28, 29))
		msgsWant(t, tc, base+"?p=0", []string{"0/7", "0/8", "0/9", "0/10"})
	})
}

// TestMessagesProduceAndDownload: a produced record lands where the form
// says (checked with a Kafka client) and its page shows it; a bad form is
// a 400 that produces nothing; a download is the selected records as
// JSON lines.
func TestMessagesProduceAndDownload(t *testing.T) {
	tc := startConsole(t, Config{PageSize: 5})
	msgsLongReads(t)
	msgsFill(t, tc, "d3", 3, 10)

	t.Run("produce", func(t *testing.T) {
		st, _, loc := tc.post("/topics/d3/messages/produce", url.Values{"key": {"pk"}, "value": {`{"hello":"world"}`},
			"headers": {"h1=v1\r\nh2=v=2"}, "partition": {"2"}})
		if st != http.StatusSeeOther || loc != "/topics/d3/messages/2/10?done=produced" {
			t.Fatalf("produce: status %d to %q", st, loc)
		}
		rec := msgsReadOne(t, tc, "d3", 2, 10)
		if string(rec.Key) != "pk" || string(rec.Value) != `{"hello":"world"}` || len(rec.Headers) != 2 ||
			rec.Headers[1].Key != "h2" || string(rec.Headers[1].Value) != "v=2" {
			t.Fatalf("produced record: %+v", rec)
		}
		_, body := tc.get(loc)
		wantContains(t, body, "Produced at partition 2, offset 10", "pk", "&#34;hello&#34;: &#34;world&#34;", "h1")
		// The partitioner's choice, no key.
		if st, _, loc := tc.post("/topics/d3/messages/produce", url.Values{"value": {"free"}}); st != http.StatusSeeOther || !strings.Contains(loc, "?done=produced") {
			t.Fatalf("produce without a partition: status %d to %q", st, loc)
		}
	})
	t.Run("bad produce", func(t *testing.T) {
		before, err := tc.Admin.ListEndOffsets(ctx(t), "d3")
		if err != nil {
			t.Fatal(err)
		}
		for name, form := range map[string]url.Values{
			"partition": {"value": {"x"}, "partition": {"3"}},
			"header":    {"value": {"x"}, "headers": {"no-equals"}},
			"subject":   {"value": {"x"}, "subject": {"s"}}, // no registry configured
		} {
			st, body, _ := tc.post("/topics/d3/messages/produce", form)
			if st != http.StatusBadRequest || !strings.Contains(body, `id="produce-error"`) {
				t.Errorf("%s: status %d, want 400 on the form:\n%s", name, st, body)
			}
		}
		if st, _, _ := tc.post("/topics/nope/messages/produce", url.Values{"value": {"x"}}); st != 404 {
			t.Errorf("produce to a missing topic: status %d, want 404", st)
		}
		after, err := tc.Admin.ListEndOffsets(ctx(t), "d3")
		if err != nil {
			t.Fatal(err)
		}
		for p := range int32(3) {
			b, _ := before.Lookup("d3", p)
			a, _ := after.Lookup("d3", p)
			if a.Offset != b.Offset {
				t.Errorf("partition %d: end offset %d after bad forms, was %d", p, a.Offset, b.Offset)
			}
		}
	})
	t.Run("download", func(t *testing.T) {
		lines, h := msgsDownload(t, tc, "/topics/d3/messages/download?p=0&from=oldest&limit=7")
		if len(lines) != 7 || !strings.Contains(h.Get("Content-Disposition"), `attachment; filename="d3.jsonl"`) {
			t.Fatalf("download: %d lines, headers %v", len(lines), h)
		}
		l := lines[3]
		if l.Topic != "d3" || l.Partition != 0 || l.Offset != 3 || string(l.Key) != `"k-0-3"` || l.KeyEncoding != "text" ||
			string(l.Value) != `"{\"p\":0,\"i\":3,\"amount\":30}"` || l.ValueEncoding != "text" ||
			len(l.Headers) != 1 || string(l.Headers[0].Value) != `"b"` || l.Timestamp != "2024-05-01T12:00:09Z" {
			t.Fatalf("line 3: %+v", l)
		}
		all, _ := msgsDownload(t, tc, "/topics/d3/messages/download?from=oldest&limit=100000")
		if len(all) != 32 {
			t.Fatalf("whole topic: %d lines, want 32", len(all))
		}
		keyed, _ := msgsDownload(t, tc, "/topics/d3/messages/download?from=oldest&key=k-1-")
		if len(keyed) != 10 {
			t.Fatalf("filtered: %d lines, want 10", len(keyed))
		}
		hexed, _ := msgsDownload(t, tc, "/topics/d3/messages/download?p=0&from=offset&offset=1&limit=1&decode=hex")
		if len(hexed) != 1 || hexed[0].KeyEncoding != "base64" || string(hexed[0].Key) != `"ay0wLTE="` {
			t.Fatalf("hex download: %+v", hexed)
		}
		newest, _ := msgsDownload(t, tc, "/topics/d3/messages/download?limit=3")
		if len(newest) != 3 {
			t.Fatalf("newest: %d lines, want 3", len(newest))
		}
		for _, q := range []string{"limit=0", "limit=100001", "limit=x", "p=9"} {
			if st, body := tc.get("/topics/d3/messages/download?" + q); st != 400 {
				t.Errorf("download?%s: status %d, want 400:\n%s", q, st, body)
			}
		}
	})
}

func msgsDownload(t *testing.T, tc *testConsole, path string) ([]msgsLine, http.Header) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, tc.URL+path, nil)
	st, body, h := tc.do(req)
	if st != 200 {
		t.Fatalf("%s: status %d:\n%s", path, st, body)
	}
	var out []msgsLine
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		var l msgsLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		out = append(out, l)
	}
	return out, h
}

// msgsReadOne reads the record at offset of partition with a client of
// the test's own.
func msgsReadOne(t *testing.T, tc *testConsole, topic string, p int32, offset int64) *kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(tc.Broker),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {p: kgo.NewOffset().At(offset)}}))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	fs := cl.PollRecords(ctx(t), 1)
	if err := fs.Err(); err != nil {
		t.Fatal(err)
	}
	recs := fs.Records()
	if len(recs) == 0 || recs[0].Offset != offset {
		t.Fatalf("no record at %s/%d/%d: %v", topic, p, offset, recs)
	}
	return recs[0]
}

// msgsClosedURL is an http:// URL where nothing listens.
func msgsClosedURL(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr
}

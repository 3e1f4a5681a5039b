package console

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// topicsExists says whether the cluster has topic, seen by tc.Admin.
func topicsExists(t *testing.T, tc *testConsole, topic string) bool {
	t.Helper()
	md, err := topicsMetadata(ctx(t), tc.Client, topic)
	if err != nil {
		t.Fatal(err)
	}
	d, ok := md[topic]
	return ok && d.Err == nil
}

// topicsConfig is a topic's config value and whether the topic sets it
// itself, seen by tc.Admin.
func topicsConfig(t *testing.T, tc *testConsole, topic, key string) (string, bool) {
	t.Helper()
	rcs, err := tc.Admin.DescribeTopicConfigs(ctx(t), topic)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := rcs.On(topic, nil)
	if err != nil || rc.Err != nil {
		t.Fatalf("describe %s: %v %v", topic, err, rc.Err)
	}
	for _, c := range rc.Configs {
		if c.Key == key {
			return c.MaybeValue(), c.Source.String() == "DYNAMIC_TOPIC_CONFIG"
		}
	}
	t.Fatalf("topic %s has no config %s", topic, key)
	return "", false
}

// topicsOffsets are a topic's start and end offsets by partition.
func topicsOffsets(t *testing.T, tc *testConsole, topic string) (starts, ends map[int32]int64) {
	t.Helper()
	s, err := tc.Admin.ListStartOffsets(ctx(t), topic)
	if err != nil {
		t.Fatal(err)
	}
	e, err := tc.Admin.ListEndOffsets(ctx(t), topic)
	if err != nil {
		t.Fatal(err)
	}
	starts, ends = map[int32]int64{}, map[int32]int64{}
	s.Each(func(o kadm.ListedOffset) { starts[o.Partition] = o.Offset })
	e.Each(func(o kadm.ListedOffset) { ends[o.Partition] = o.Offset })
	return starts, ends
}

// topicsProduce writes n records to each of partitions of topic.
func topicsProduce(t *testing.T, tc *testConsole, topic string, n int, partitions ...int32) {
	t.Helper()
	var recs []*kgo.Record
	for _, p := range partitions {
		for i := range n {
			recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Value: fmt.Appendf(nil, "v%d", i)})
		}
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(tc.Broker), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(ctx(t), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// TestTopicsPage drives every action of the topics page against one
// real broker and checks each effect through an independent admin
// client, and that bad input answers 400 and changes nothing.
func TestTopicsPage(t *testing.T) {
	tc := startConsole(t, Config{})

	t.Run("create", func(t *testing.T) {
		st, body, loc := tc.post("/topics", url.Values{"name": {"orders"}, "partitions": {"3"}, "replication": {"1"},
			"retention_ms": {"3600000"}, "configs": {"# a comment\nmax.message.bytes=200000\n"}})
		if st != http.StatusSeeOther || loc != "/topics/orders?done=created" {
			t.Fatalf("create: status %d to %q:\n%s", st, loc, body)
		}
		md, err := tc.Admin.Metadata(ctx(t), "orders")
		if err != nil || len(md.Topics["orders"].Partitions) != 3 {
			t.Fatalf("orders after create: %v %+v", err, md.Topics["orders"])
		}
		if v, own := topicsConfig(t, tc, "orders", "retention.ms"); v != "3600000" || !own {
			t.Errorf("retention.ms = %q (own %v), want 3600000", v, own)
		}
		if v, _ := topicsConfig(t, tc, "orders", "max.message.bytes"); v != "200000" {
			t.Errorf("max.message.bytes = %q, want 200000", v)
		}
		_, body = tc.get(loc)
		wantContains(t, body, "Topic created.", `class="tabs"`, `href="/topics/orders/messages"`, `href="/topics/orders/configs"`)
	})

	t.Run("create refuses bad input", func(t *testing.T) {
		for _, c := range []struct {
			form url.Values
			want []string
		}{
			{url.Values{"name": {"bad name!"}, "partitions": {"1"}}, []string{"only ASCII letters", `value="bad name!"`}},
			{url.Values{"name": {"zero-parts"}, "partitions": {"0"}}, []string{"partitions &#34;0&#34; must be a whole number", `value="zero-parts"`}},
			{url.Values{"name": {"bad-config"}, "partitions": {"1"}, "configs": {"no.such.config=1"}}, []string{"INVALID_CONFIG", "no.such.config=1"}},
			{url.Values{"name": {"bad-line"}, "configs": {"retention.ms"}}, []string{"is not key=value"}},
			{url.Values{"name": {"orders"}, "partitions": {"1"}}, []string{"TOPIC_ALREADY_EXISTS"}},
		} {
			st, body, _ := tc.post("/topics", c.form)
			if st != http.StatusBadRequest {
				t.Errorf("%v: status %d, want 400:\n%s", c.form, st, body)
				continue
			}
			wantContains(t, body, c.want...)
			if n := c.form.Get("name"); n != "orders" && topicsExists(t, tc, n) {
				t.Errorf("%v: topic %s was created", c.form, n)
			}
		}
	})

	t.Run("list search and pagination", func(t *testing.T) {
		var names []string
		for i := range 120 {
			names = append(names, fmt.Sprintf("bulk-%03d", i))
		}
		resp, err := tc.Admin.CreateTopics(ctx(t), 1, 1, nil, names...)
		if err != nil || resp.Error() != nil {
			t.Fatal(err, resp.Error())
		}
		topicsProduce(t, tc, "bulk-105", 7, 0)
		st, body := tc.get("/topics?q=bulk")
		if st != 200 {
			t.Fatalf("list: %d\n%s", st, body)
		}
		wantContains(t, body, "120 topics", `href="/topics/bulk-000"`, `href="/topics/bulk-099"`, "Page 1 of 2", `href="/topics?page=2&amp;q=bulk"`, "data-search")
		if strings.Contains(body, `href="/topics/bulk-100"`) || strings.Contains(body, `href="/topics/orders"`) {
			t.Errorf("page 1 of bulk shows bulk-100 or orders:\n%s", body)
		}
		_, body = tc.get("/topics?q=bulk&page=2")
		wantContains(t, body, `href="/topics/bulk-100"`, `href="/topics/bulk-119"`, "Page 2 of 2")
		if strings.Contains(body, `href="/topics/bulk-099"`) {
			t.Errorf("page 2 shows bulk-099")
		}
		row := regexp.MustCompile(`(?s)href="/topics/bulk-105">.*?</tr>`).FindString(body)
		if !regexp.MustCompile(`<td class="num">7</td>`).MatchString(row) {
			t.Errorf("bulk-105's row does not count its 7 records: %s", row)
		}
		_, body = tc.get("/topics?q=BULK-11")
		wantContains(t, body, "10 topics", `href="/topics/bulk-119"`)
		if st, body := tc.get("/topics?page=x"); st != 400 {
			t.Errorf("page=x: status %d\n%s", st, body)
		}
	})

	t.Run("partitions of a 200-partition topic", func(t *testing.T) {
		if _, err := tc.Admin.CreateTopic(ctx(t), 200, 1, nil, "wide"); err != nil {
			t.Fatal(err)
		}
		topicsProduce(t, tc, "wide", 4, 7, 150)
		partRow := func(body string, p int) string {
			return regexp.MustCompile(fmt.Sprintf(`(?s)<tr>\s*<td class="num">%d</td>.*?</tr>`, p)).FindString(body)
		}
		st, body := tc.get("/topics/wide")
		if st != 200 {
			t.Fatalf("wide: %d\n%s", st, body)
		}
		wantContains(t, body, `id="topics-partitions"`, "Partitions 0–100 of 200")
		if r := partRow(body, 7); !strings.Contains(r, `<td class="num">0</td><td class="num">4</td>`) {
			t.Errorf("partition 7's row lacks offsets 0 and 4: %q", r)
		}
		if partRow(body, 150) != "" {
			t.Errorf("page 1 shows partition 150")
		}
		_, body = tc.get("/topics/wide/partitions?page=2")
		if r := partRow(body, 150); !strings.Contains(r, `<td class="num">0</td><td class="num">4</td>`) {
			t.Errorf("partition 150's row lacks offsets 0 and 4: %q", r)
		}
	})

	t.Run("delete records", func(t *testing.T) {
		if _, err := tc.Admin.CreateTopic(ctx(t), 2, 1, nil, "trim"); err != nil {
			t.Fatal(err)
		}
		topicsProduce(t, tc, "trim", 10, 0, 1)
		for _, form := range []url.Values{
			{"mode": {"partition"}, "partition": {"0"}, "offset": {"abc"}, "confirm": {"trim"}},
			{"mode": {"partition"}, "partition": {"9"}, "offset": {"3"}, "confirm": {"trim"}},
			{"mode": {"partition"}, "partition": {"0"}, "offset": {"3"}, "confirm": {"nope"}},
			{"mode": {"all"}, "confirm": {""}},
		} {
			if st, body, _ := tc.post("/topics/trim/delete-records", form); st != 400 {
				t.Errorf("%v: status %d, want 400\n%s", form, st, body)
			}
		}
		if starts, _ := topicsOffsets(t, tc, "trim"); starts[0] != 0 || starts[1] != 0 {
			t.Fatalf("refused deletes moved start offsets: %v", starts)
		}
		st, body, loc := tc.post("/topics/trim/delete-records", url.Values{"mode": {"partition"}, "partition": {"0"}, "offset": {"3"}, "confirm": {"trim"}})
		if st != http.StatusSeeOther || loc != "/topics/trim?done=records" {
			t.Fatalf("delete before 3: %d to %q\n%s", st, loc, body)
		}
		if starts, _ := topicsOffsets(t, tc, "trim"); starts[0] != 3 || starts[1] != 0 {
			t.Fatalf("after deleting partition 0 before 3: starts %v", starts)
		}
		_, body = tc.get(loc)
		wantContains(t, body, "Records deleted", `<td class="num">3</td><td class="num">10</td>`)
		if st, body, _ := tc.post("/topics/trim/delete-records", url.Values{"mode": {"all"}, "confirm": {"trim"}}); st != http.StatusSeeOther {
			t.Fatalf("truncate: %d\n%s", st, body)
		}
		if starts, ends := topicsOffsets(t, tc, "trim"); starts[0] != 10 || starts[1] != 10 || ends[0] != 10 {
			t.Fatalf("after truncating: starts %v ends %v", starts, ends)
		}
	})

	t.Run("configs", func(t *testing.T) {
		st, body := tc.get("/topics/orders/configs")
		if st != 200 {
			t.Fatalf("configs: %d\n%s", st, body)
		}
		// retention.ms is the topic's own, with Kafka's documentation from
		// DescribeConfigs and a revert box; segment.bytes is a default.
		wantContains(t, body, `name="set.retention.ms" value="3600000"`, "dynamic topic", `name="reset" value="retention.ms"`,
			`name="set.segment.bytes"`, `class="topics-doc muted"`)
		// Saving with one field changed writes only that one.
		form := url.Values{"set.retention.ms": {"3600000"}, "set.segment.bytes": {"1073741824"}, "set.cleanup.policy": {"delete"}, "set.delete.retention.ms": {"7777"}}
		if st, body, loc := tc.post("/topics/orders/configs", form); st != http.StatusSeeOther || loc != "/topics/orders/configs?done=configs" {
			t.Fatalf("save: %d to %q\n%s", st, loc, body)
		}
		if v, own := topicsConfig(t, tc, "orders", "delete.retention.ms"); v != "7777" || !own {
			t.Errorf("delete.retention.ms = %q (own %v), want 7777", v, own)
		}
		if _, own := topicsConfig(t, tc, "orders", "segment.bytes"); own {
			t.Errorf("an unchanged default was written into the topic")
		}
		// An unknown config is refused, the input kept, and nothing changes.
		st, body, _ = tc.post("/topics/orders/configs", url.Values{"set.delete.retention.ms": {"8888"}, "extra": {"no.such.config=1"}})
		if st != 400 {
			t.Fatalf("unknown config: %d\n%s", st, body)
		}
		wantContains(t, body, "INVALID_CONFIG", "no.such.config=1", `value="8888"`)
		if v, _ := topicsConfig(t, tc, "orders", "delete.retention.ms"); v != "7777" {
			t.Errorf("a refused save changed delete.retention.ms to %q", v)
		}
		// A bad value is refused with Kafka's error.
		if st, body, _ := tc.post("/topics/orders/configs", url.Values{"set.retention.ms": {"soon"}}); st != 400 {
			t.Errorf("retention.ms=soon: %d\n%s", st, body)
		}
		// Revert deletes the topic's own value.
		if st, body, _ := tc.post("/topics/orders/configs", url.Values{"reset": {"retention.ms"}}); st != http.StatusSeeOther {
			t.Fatalf("revert: %d\n%s", st, body)
		}
		if v, own := topicsConfig(t, tc, "orders", "retention.ms"); own || v == "3600000" {
			t.Errorf("after revert retention.ms = %q (own %v)", v, own)
		}
	})

	t.Run("add partitions", func(t *testing.T) {
		if st, body, _ := tc.post("/topics/orders/partitions", url.Values{"count": {"many"}}); st != 400 || !strings.Contains(body, "not a whole number") {
			t.Errorf("count=many: %d\n%s", st, body)
		}
		if st, body, _ := tc.post("/topics/orders/partitions", url.Values{"count": {"2"}}); st != 400 || !strings.Contains(body, "INVALID_PARTITIONS") {
			t.Errorf("count=2 (fewer): %d\n%s", st, body)
		}
		if st, body, _ := tc.post("/topics/orders/partitions", url.Values{"count": {"5"}}); st != http.StatusSeeOther {
			t.Fatalf("count=5: %d\n%s", st, body)
		}
		md, _ := topicsMetadata(ctx(t), tc.Client, "orders")
		if n := len(md["orders"].Partitions); n != 5 {
			t.Errorf("orders has %d partitions, want 5", n)
		}
	})

	t.Run("delete", func(t *testing.T) {
		st, body := tc.get("/topics/orders/delete")
		if st != 200 {
			t.Fatalf("confirm page: %d\n%s", st, body)
		}
		wantContains(t, body, `name="confirm"`, "Type the topic")
		if st, body, _ := tc.post("/topics/orders/delete", url.Values{"confirm": {"order"}}); st != 400 {
			t.Errorf("wrong confirmation: %d\n%s", st, body)
		}
		if !topicsExists(t, tc, "orders") {
			t.Fatal("a refused delete deleted orders")
		}
		if st, body, loc := tc.post("/topics/orders/delete", url.Values{"confirm": {"orders"}}); st != http.StatusSeeOther || loc != "/topics?done=deleted" {
			t.Fatalf("delete: %d to %q\n%s", st, loc, body)
		}
		if topicsExists(t, tc, "orders") {
			t.Fatal("orders still exists")
		}
		for _, p := range []string{"/topics/orders", "/topics/orders/configs", "/topics/orders/delete"} {
			if st, body := tc.get(p); st != 404 || !strings.Contains(body, "orders") {
				t.Errorf("%s after delete: %d\n%s", p, st, body)
			}
		}
	})
}

package console

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// groupsBase is the first record's timestamp on the test topic; record i
// of partition 0 is stamped groupsBase + i s, of partition 1 groupsBase +
// 10 s + i s.
var groupsBase = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// groupsSetUp makes topic gt (10 records in partition 0, 5 in 1) and
// three empty groups on it: cg-classic (commits 7 and 2: lag 3+3),
// cg-next, a KIP-848 consumer group (commits 4 and 5: lag 6+0), and
// cg-share, a share group that accepted every record (start offsets 10
// and 5: lag 0).
func groupsSetUp(t *testing.T, tc *testConsole) {
	t.Helper()
	c := ctx(t)
	if _, err := tc.Admin.CreateTopic(c, 2, 1, nil, "gt"); err != nil {
		t.Fatal(err)
	}
	prod := groupsClient(t, tc, kgo.DefaultProduceTopic("gt"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	var recs []*kgo.Record
	for i := range 10 {
		recs = append(recs, &kgo.Record{Partition: 0, Value: []byte("p0"), Timestamp: groupsBase.Add(time.Duration(i) * time.Second)})
	}
	for i := range 5 {
		recs = append(recs, &kgo.Record{Partition: 1, Value: []byte("p1"), Timestamp: groupsBase.Add(time.Duration(10+i) * time.Second)})
	}
	if err := prod.ProduceSync(c, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	groupsJoinAndCommit(t, tc, "cg-classic", map[int32]int64{0: 7, 1: 2}).Close()
	groupsJoinAndCommit(t, tc, "cg-next", map[int32]int64{0: 4, 1: 5}, kgo.ServerSideBalancer()).Close()

	// The share group reads from the start and accepts all 15 records.
	groupsSetShareReset(t, tc, "cg-share")
	sc := groupsClient(t, tc, kgo.ShareGroup("cg-share"), kgo.ConsumeTopics("gt"))
	for got := 0; got < 15; {
		fs := sc.PollFetches(c)
		if c.Err() != nil {
			t.Fatalf("share consumer read %d of 15 records: %v", got, c.Err())
		}
		fs.EachRecord(func(r *kgo.Record) { r.Ack(kgo.AckAccept); got++ })
	}
	if err := sc.FlushAcks(c); err != nil {
		t.Fatal(err)
	}
	sc.Close()
	groupsEventually(t, "the share group is empty with start offsets 10 and 5", func() bool {
		ds, err := tc.Admin.DescribeShareGroups(c, "cg-share")
		if err != nil || ds["cg-share"].GroupState != "Empty" {
			return false
		}
		so, err := tc.Admin.DescribeShareGroupOffsets(c, "cg-share")
		if err != nil {
			return false
		}
		o0, _ := so["cg-share"].Offsets.Lookup("gt", 0)
		o1, _ := so["cg-share"].Offsets.Lookup("gt", 1)
		return o0.StartOffset == 10 && o1.StartOffset == 5
	})
}

func groupsClient(t *testing.T, tc *testConsole, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(tc.Broker)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// groupsJoinAndCommit joins group on gt, reads a record (so it is
// assigned) and commits offsets; it answers the member, still in the
// group.
func groupsJoinAndCommit(t *testing.T, tc *testConsole, group string, offsets map[int32]int64, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	c := ctx(t)
	cl := groupsClient(t, tc, append([]kgo.Opt{kgo.ClientID("reader-" + group), kgo.ConsumerGroup(group), kgo.ConsumeTopics("gt"),
		kgo.Balancers(kgo.RangeBalancer()), kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}, opts...)...)
	for {
		fs := cl.PollFetches(c)
		if c.Err() != nil {
			t.Fatalf("%s: the member read nothing: %v", group, c.Err())
		}
		if fs.NumRecords() > 0 {
			break
		}
	}
	commit := map[int32]kgo.EpochOffset{}
	for p, o := range offsets {
		commit[p] = kgo.EpochOffset{Epoch: -1, Offset: o}
	}
	var commitErr error
	cl.CommitOffsetsSync(c, map[string]map[int32]kgo.EpochOffset{"gt": commit}, func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
		commitErr = err
		for _, rt := range resp.Topics {
			for _, rp := range rt.Partitions {
				if rp.ErrorCode != 0 && commitErr == nil {
					commitErr = kerr.ErrorForCode(rp.ErrorCode)
				}
			}
		}
	})
	if commitErr != nil {
		t.Fatalf("%s: commit: %v", group, commitErr)
	}
	return cl
}

func groupsSetShareReset(t *testing.T, tc *testConsole, group string) {
	t.Helper()
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeGroupConfig, group
	cfg := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	cfg.Name, cfg.Value = "share.auto.offset.reset", kmsg.StringPtr("earliest")
	res.Configs = append(res.Configs, cfg)
	req.Resources = append(req.Resources, res)
	resp, err := req.RequestWith(ctx(t), tc.Client)
	if err != nil {
		t.Fatal(err)
	}
	if code := resp.Resources[0].ErrorCode; code != 0 {
		t.Fatalf("set share.auto.offset.reset: code %d", code)
	}
}

func groupsEventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: timed out", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// groupsCommitted answers a group's committed offsets of gt (a share
// group's start offsets), partition -> offset.
func groupsCommitted(t *testing.T, tc *testConsole, group string) map[int32]int64 {
	t.Helper()
	out := map[int32]int64{}
	if strings.Contains(group, "share") {
		so, err := tc.Admin.DescribeShareGroupOffsets(ctx(t), group)
		if err != nil {
			t.Fatal(err)
		}
		so[group].Offsets.Each(func(o kadm.ShareOffset) { out[o.Partition] = o.StartOffset })
		return out
	}
	os, err := tc.Admin.FetchOffsets(ctx(t), group)
	if err != nil {
		t.Fatal(err)
	}
	os.Each(func(o kadm.OffsetResponse) { out[o.Partition] = o.At })
	return out
}

func groupsWantOffsets(t *testing.T, tc *testConsole, group string, want map[int32]int64) {
	t.Helper()
	got := groupsCommitted(t, tc, group)
	if len(got) != len(want) {
		t.Fatalf("%s: offsets %v, want %v", group, got, want)
	}
	for p, o := range want {
		if got[p] != o {
			t.Fatalf("%s: offsets %v, want %v", group, got, want)
		}
	}
}

// groupsRow is the HTML of the table row marked attr="key".
func groupsRowHTML(t *testing.T, body, attr, key string) string {
	t.Helper()
	m := regexp.MustCompile(`(?s)<tr ` + attr + `="` + regexp.QuoteMeta(key) + `">(.*?)</tr>`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no row %s=%q in:\n%s", attr, key, body)
	}
	return m[1]
}

// groupsCells are a row's cells, tags stripped.
func groupsCells(row string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`(?s)<td[^>]*>(.*?)</td>`).FindAllStringSubmatch(row, -1) {
		out = append(out, strings.TrimSpace(regexp.MustCompile(`<[^>]*>`).ReplaceAllString(m[1], "")))
	}
	return out
}

func groupsWantCells(t *testing.T, body, attr, key string, want ...string) {
	t.Helper()
	got := groupsCells(groupsRowHTML(t, body, attr, key))
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("row %s: cells %q, want %q", key, got, want)
	}
}

var groupsSetRE = regexp.MustCompile(`name="set" value="([^"]*)"`)

// groupsPreviewAndApply previews a reset (query), checks nothing changed,
// then applies the previewed plan; it answers the apply's status, body
// and redirect.
func groupsPreviewAndApply(t *testing.T, tc *testConsole, group string, q url.Values) (int, string, string) {
	t.Helper()
	before := groupsCommitted(t, tc, group)
	st, body := tc.get("/groups/" + group + "/reset?" + q.Encode())
	if st != 200 {
		t.Fatalf("preview %v: status %d:\n%s", q, st, body)
	}
	groupsWantOffsets(t, tc, group, before)
	form := url.Values{}
	for _, m := range groupsSetRE.FindAllStringSubmatch(body, -1) {
		form.Add("set", m[1])
	}
	if len(form["set"]) == 0 {
		t.Fatalf("preview %v has no plan:\n%s", q, body)
	}
	return tc.post("/groups/"+group+"/reset", form)
}

func TestGroups(t *testing.T) {
	tc := startConsole(t, Config{}, "--override", "group.initial.rebalance.delay.ms=0")
	groupsSetUp(t, tc)

	t.Run("list", func(t *testing.T) {
		st, body := tc.get("/groups")
		if st != 200 {
			t.Fatalf("status %d:\n%s", st, body)
		}
		wantContains(t, body, `id="groups-table"`, `data-search`)
		groupsWantCells(t, body, "data-group", "cg-classic", "cg-classic", "classic", "Empty", "0", "consumer", "6")
		groupsWantCells(t, body, "data-group", "cg-next", "cg-next", "consumer", "Empty", "0", "uniform", "6")
		row := groupsCells(groupsRowHTML(t, body, "data-group", "cg-share"))
		if row[1] != "share" || row[2] != "Empty" || row[5] != "0" {
			t.Fatalf("share row %q", row)
		}
		_, body = tc.get("/groups?type=share")
		if !strings.Contains(body, `data-group="cg-share"`) || strings.Contains(body, `data-group="cg-classic"`) {
			t.Fatalf("type=share shows other groups:\n%s", body)
		}
		_, body = tc.get("/groups?q=NEXT&state=Empty")
		if !strings.Contains(body, `data-group="cg-next"`) || strings.Contains(body, `data-group="cg-classic"`) {
			t.Fatalf("q=NEXT shows other groups:\n%s", body)
		}
		for _, q := range []string{"type=nosuch", "state=Sleepy", "page=0"} {
			if st, body := tc.get("/groups?" + q); st != 400 {
				t.Errorf("%s: status %d, want 400:\n%s", q, st, body)
			}
		}
	})

	t.Run("detail", func(t *testing.T) {
		st, body := tc.get("/groups/cg-classic")
		if st != 200 {
			t.Fatalf("status %d:\n%s", st, body)
		}
		wantContains(t, body, `<div class="value" id="groups-total-lag">6</div>`, `hx-get="/groups/cg-classic/lag-chart"`, `hx-trigger="every 5s"`, "<svg")
		groupsWantCells(t, body, "data-tp", "gt:0", "gt", "0", "7", "10", "3", "no")
		groupsWantCells(t, body, "data-tp", "gt:1", "gt", "1", "2", "5", "3", "no")
		_, body = tc.get("/groups/cg-next")
		wantContains(t, body, `id="groups-type-value">consumer<`, `id="groups-total-lag">6<`)
		groupsWantCells(t, body, "data-tp", "gt:0", "gt", "0", "4", "10", "6", "no")
		groupsWantCells(t, body, "data-tp", "gt:1", "gt", "1", "5", "5", "0", "no")
		_, body = tc.get("/groups/cg-share")
		wantContains(t, body, `id="groups-type-value">share<`, "Start offset", `id="groups-total-lag">0<`)
		groupsWantCells(t, body, "data-tp", "gt:0", "gt", "0", "10", "10", "0", "no")
		// The chart fragment samples again: its description names the lag.
		st, frag := tc.get("/groups/cg-classic/lag-chart")
		if st != 200 || !strings.Contains(frag, "total lag: latest 6 records") || strings.Contains(frag, "<html") {
			t.Fatalf("lag chart: status %d:\n%s", st, frag)
		}
		if st, body := tc.get("/groups/no-such-group"); st != 404 {
			t.Fatalf("unknown group: status %d, want 404:\n%s", st, body)
		}
	})

	t.Run("reset", func(t *testing.T) {
		// Preview alone changes nothing (checked inside), then each mode
		// commits exactly the previewed offsets.
		for _, c := range []struct {
			q    url.Values
			want map[int32]int64
		}{
			{url.Values{"to": {"earliest"}}, map[int32]int64{0: 0, 1: 0}},
			{url.Values{"to": {"latest"}, "topic": {"gt"}}, map[int32]int64{0: 10, 1: 5}},
			{url.Values{"to": {"timestamp"}, "value": {groupsBase.Add(3500 * time.Millisecond).Format(time.RFC3339Nano)}}, map[int32]int64{0: 4, 1: 0}},
			{url.Values{"to": {"offset"}, "value": {"3"}, "topic": {"gt"}, "partitions": {"1"}}, map[int32]int64{0: 4, 1: 3}},
			{url.Values{"to": {"shift"}, "value": {"-2"}, "topic": {"gt"}, "partitions": {"0"}}, map[int32]int64{0: 2, 1: 3}},
			{url.Values{"to": {"offset"}, "value": {"99"}}, map[int32]int64{0: 10, 1: 5}}, // clamped to the ends
		} {
			st, body, loc := groupsPreviewAndApply(t, tc, "cg-classic", c.q)
			if st != http.StatusSeeOther || !strings.HasPrefix(loc, "/groups/cg-classic?done=") {
				t.Fatalf("apply %v: status %d to %q:\n%s", c.q, st, loc, body)
			}
			groupsWantOffsets(t, tc, "cg-classic", c.want)
		}
		_, body := tc.get("/groups/cg-classic/reset?to=offset&value=99&topic=gt&partitions=0")
		groupsWantCells(t, body, "data-tp", "gt:0", "gt", "0", "10", "10 (moved into the log)", "0")

		if st, body, _ := groupsPreviewAndApply(t, tc, "cg-next", url.Values{"to": {"earliest"}}); st != http.StatusSeeOther {
			t.Fatalf("consumer group: status %d:\n%s", st, body)
		}
		groupsWantOffsets(t, tc, "cg-next", map[int32]int64{0: 0, 1: 0})
		if st, body, _ := groupsPreviewAndApply(t, tc, "cg-share", url.Values{"to": {"offset"}, "value": {"2"}}); st != http.StatusSeeOther {
			t.Fatalf("share group: status %d:\n%s", st, body)
		}
		groupsWantOffsets(t, tc, "cg-share", map[int32]int64{0: 2, 1: 2})
		_, body = tc.get("/groups/cg-share")
		groupsWantCells(t, body, "data-tp", "gt:0", "gt", "0", "2", "10", "8", "no")
	})

	t.Run("bad input", func(t *testing.T) {
		before := groupsCommitted(t, tc, "cg-classic")
		for q, want := range map[string]string{
			"to=earliest&topic=nosuch":          `topic &#34;nosuch&#34; does not exist`,
			"to=offset&value=-1":                "offset &#34;-1&#34;: want a number from 0",
			"to=timestamp&value=yesterday":      "timestamp &#34;yesterday&#34;",
			"to=earliest&topic=gt&partitions=9": "has no partition 9",
			"to=earliest&topic=gt&partitions=x": "partition &#34;x&#34;",
			"to=sideways":                       "reset to &#34;sideways&#34;",
			"to=shift&value=1.5":                "shift &#34;1.5&#34;",
		} {
			st, body := tc.get("/groups/cg-classic/reset?" + q)
			if st != 400 || !strings.Contains(body, want) {
				t.Errorf("%s: status %d, want 400 with %q:\n%s", q, st, want, body)
			}
		}
		for _, set := range []string{"gt:0:-1", "gt:x:1", "gt", "nosuch:0:1", "gt:7:1"} {
			if st, body, _ := tc.post("/groups/cg-classic/reset", url.Values{"set": {set}}); st != 400 {
				t.Errorf("apply %q: status %d, want 400:\n%s", set, st, body)
			}
		}
		groupsWantOffsets(t, tc, "cg-classic", before)
	})

	t.Run("active group", func(t *testing.T) {
		live := groupsJoinAndCommit(t, tc, "cg-live", map[int32]int64{0: 1, 1: 1})
		defer live.Close()
		_, body := tc.get("/groups/cg-live/reset?to=earliest")
		wantContains(t, body, "applying is refused until they leave")
		st, body, _ := groupsPreviewAndApply(t, tc, "cg-live", url.Values{"to": {"earliest"}})
		if st != http.StatusConflict || !strings.Contains(body, "has active members") {
			t.Fatalf("reset of a live group: status %d, want 409 naming the members:\n%s", st, body)
		}
		groupsWantOffsets(t, tc, "cg-live", map[int32]int64{0: 1, 1: 1})
		st, body, _ = tc.post("/groups/cg-live/delete", url.Values{"confirm": {"cg-live"}})
		if st != http.StatusConflict || !strings.Contains(body, "has active members") {
			t.Fatalf("delete of a live group: status %d, want 409:\n%s", st, body)
		}
	})

	t.Run("delete", func(t *testing.T) {
		if st, body, _ := tc.post("/groups/cg-next/delete", url.Values{"confirm": {"cg-nex"}}); st != 400 {
			t.Fatalf("wrong confirmation: status %d, want 400:\n%s", st, body)
		}
		if groupsCommitted(t, tc, "cg-next")[0] != 0 {
			t.Fatal("a refused delete changed the group")
		}
		st, _, loc := tc.post("/groups/cg-next/delete", url.Values{"confirm": {"cg-next"}})
		if st != http.StatusSeeOther || !strings.HasPrefix(loc, "/groups?done=") {
			t.Fatalf("delete: status %d to %q", st, loc)
		}
		listed, err := tc.Admin.ListGroups(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := listed["cg-next"]; ok {
			t.Fatal("the group is still listed after delete")
		}
		if st, body := tc.get("/groups/cg-next"); st != 404 {
			t.Fatalf("deleted group: status %d, want 404:\n%s", st, body)
		}
		if st, body := tc.get("/groups/cg-next/reset?to=earliest"); st != 404 {
			t.Fatalf("reset form of a deleted group: status %d, want 404:\n%s", st, body)
		}
		if st, body, _ := tc.post("/groups/cg-next/reset", url.Values{"set": {"gt:0:1"}}); st != 404 {
			t.Fatalf("reset of a deleted group: status %d, want 404:\n%s", st, body)
		}

		// Deleting one topic's offsets of the classic group.
		if st, body, _ := tc.post("/groups/cg-classic/delete-offsets", url.Values{"topic": {"nosuch"}}); st != 400 {
			t.Fatalf("delete-offsets of an unknown topic: status %d:\n%s", st, body)
		}
		st, body, loc := tc.post("/groups/cg-classic/delete-offsets", url.Values{"topic": {"gt"}})
		if st != http.StatusSeeOther || !strings.Contains(loc, "done=") {
			t.Fatalf("delete-offsets: status %d to %q:\n%s", st, loc, body)
		}
		groupsWantOffsets(t, tc, "cg-classic", map[int32]int64{})

		// A share group: its state of one topic, then the group.
		st, body, loc = tc.post("/groups/cg-share/delete-offsets", url.Values{"topic": {"gt"}})
		if st != http.StatusSeeOther || !strings.Contains(loc, "done=") {
			t.Fatalf("share delete-offsets: status %d to %q:\n%s", st, loc, body)
		}
		groupsWantOffsets(t, tc, "cg-share", map[int32]int64{})
		if st, body, _ := tc.post("/groups/cg-share/delete", url.Values{"confirm": {"cg-share"}}); st != http.StatusSeeOther {
			t.Fatalf("share delete: status %d:\n%s", st, body)
		}
		if st, body := tc.get("/groups/cg-share"); st != 404 {
			t.Fatalf("deleted share group: status %d, want 404:\n%s", st, body)
		}
	})

	// 101 groups: 100 on the first page, one on the second, each with
	// its lag (the end 10 of partition 0 less the committed i%10).
	t.Run("paging", func(t *testing.T) {
		for i := range 101 {
			var os kadm.Offsets
			os.AddOffset("gt", 0, int64(i%10), -1)
			if err := tc.Admin.CommitAllOffsets(ctx(t), fmt.Sprintf("pg-%03d", i), os); err != nil {
				t.Fatal(err)
			}
		}
		st, body := tc.get("/groups?q=pg-")
		if st != 200 {
			t.Fatalf("status %d:\n%s", st, body)
		}
		if n := strings.Count(body, `<tr data-group="pg-`); n != 100 {
			t.Fatalf("page 1 has %d groups, want 100", n)
		}
		groupsWantCells(t, body, "data-group", "pg-013", "pg-013", "classic", "Empty", "0", "", "7")
		wantContains(t, body, "Page 1 of 2", `href="/groups?page=2&amp;q=pg-"`)
		_, body = tc.get("/groups?q=pg-&page=2")
		if n := strings.Count(body, `<tr data-group="pg-`); n != 1 || !strings.Contains(body, `data-group="pg-100"`) {
			t.Fatalf("page 2 has %d groups, want pg-100 alone:\n%s", n, body)
		}
		groupsWantCells(t, body, "data-group", "pg-100", "pg-100", "classic", "Empty", "0", "", "10")
	})

	// A coordinator that moves mid-request (franz-go retries, then gives
	// up) is shown as such, with a link to retry the same page.
	t.Run("coordinator moved", func(t *testing.T) {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodGet, "/groups/cg-classic?page=1", nil)
		req.SetPathValue("id", "cg-classic")
		tc.c.groupsFail(rec, req, fmt.Errorf("describe: %w", kerr.NotCoordinator))
		body := rec.Body.String()
		if rec.Code != http.StatusServiceUnavailable {
			t.Fatalf("status %d, want 503:\n%s", rec.Code, body)
		}
		wantContains(t, body, "NOT_COORDINATOR", `href="/groups/cg-classic?page=1" id="groups-retry"`)
	})
}

// TestGroupsHistory: the lag history keeps one sample per second at most,
// forgets samples past the window (a group no one watches goes), and
// keeps each user's samples apart.
func TestGroupsHistory(t *testing.T) {
	h := &groupsHistory{samples: map[groupsHistoryKey][]Point{}}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h.add("ann", "g", t0, 5)
	if got := h.add("ann", "g", t0.Add(200*time.Millisecond), 6); len(got) != 1 || got[0].Value != 5 {
		t.Fatalf("a sample within a second of the last was kept: %v", got)
	}
	if got := h.add("ann", "g", t0.Add(2*time.Second), 7); len(got) != 2 || got[1].Value != 7 {
		t.Fatalf("samples %v, want 5 then 7", got)
	}
	if got := h.add("bob", "g", t0.Add(3*time.Second), 1); len(got) != 1 {
		t.Fatalf("bob sees ann's samples: %v", got)
	}
	h.add("ann", "other", t0.Add(groupsHistoryWindow+2500*time.Millisecond), 0)
	if ps := h.samples[groupsHistoryKey{"ann", "g"}]; len(ps) != 0 {
		t.Fatalf("samples past the window kept: %v", ps)
	}
	if ps := h.samples[groupsHistoryKey{"bob", "g"}]; len(ps) != 1 {
		t.Fatalf("a sample within the window dropped: %v", ps)
	}
}

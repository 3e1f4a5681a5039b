package console

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/devcluster"
)

// TestOverviewRateArithmetic: a rate is the clamped growth of the keys
// present in both readings over the time between them; no baseline, no
// time or too long a gap draws nothing.
func TestOverviewRateArithmetic(t *testing.T) {
	gap := 10 * time.Second
	type m = map[string]int64
	for _, tc := range []struct {
		name      string
		prev, cur m
		elapsed   time.Duration
		want      float64
		ok        bool
	}{
		{"no baseline", nil, m{"a": 5}, time.Second, 0, false},
		{"no time", m{"a": 1}, m{"a": 5}, 0, 0, false},
		{"gap too long", m{"a": 1}, m{"a": 5}, 11 * time.Second, 0, false},
		{"growth over 2 s", m{"a": 10, "b": 5}, m{"a": 30, "b": 5}, 2 * time.Second, 10, true},
		{"a new key has no baseline", m{"a": 10}, m{"a": 12, "c": 1000}, time.Second, 2, true},
		{"a gone key counts nothing", m{"a": 10, "b": 7}, m{"a": 12}, time.Second, 2, true},
		{"a drop is clamped at 0, not subtracted", m{"a": 100, "b": 10}, m{"a": 50, "b": 20}, 2 * time.Second, 5, true},
		{"all dropping is 0", m{"a": 100}, m{"a": 0}, time.Second, 0, true},
	} {
		got, ok := overviewRate(tc.prev, tc.cur, tc.elapsed, gap)
		if ok != tc.ok || math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s: got %v, %v; want %v, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}

	// A counter over readings: a failed reading (nil) keeps the baseline,
	// so the next good one averages over the whole span; a span past the
	// gap only starts a new baseline.
	var oc overviewCounter
	t0 := time.Unix(1000, 0)
	read := func(v int64) map[any]int64 { return map[any]int64{"p": v} }
	steps := []struct {
		at   time.Duration
		vals map[any]int64
		want float64
		ok   bool
	}{
		{0, read(100), 0, false},                 // baseline
		{time.Second, read(150), 50, true},       // +50 in 1 s
		{2 * time.Second, nil, 0, false},         // failed reading: a gap
		{3 * time.Second, read(250), 50, true},   // +100 over 2 s
		{4 * time.Second, read(200), 0, true},    // retention: clamped
		{20 * time.Second, read(1200), 0, false}, // 16 s > gap: new baseline
		{21 * time.Second, read(1230), 30, true}, // rates again
	}
	for i, s := range steps {
		got, ok := oc.next(t0.Add(s.at), s.vals, gap)
		if ok != s.ok || math.Abs(got-s.want) > 1e-9 {
			t.Errorf("step %d: got %v, %v; want %v, %v", i, got, ok, s.want, s.ok)
		}
	}

	// Latency: p50 and max per broker and overall, then afresh.
	var l overviewLatency
	for _, d := range []time.Duration{1, 2, 3, 10} {
		l.OnBrokerE2E(kgo.BrokerMetadata{NodeID: 1}, 0, kgo.BrokerE2E{TimeToWrite: d * time.Millisecond})
	}
	l.OnBrokerE2E(kgo.BrokerMetadata{NodeID: 2}, 0, kgo.BrokerE2E{TimeToWrite: 40 * time.Millisecond})
	l.OnBrokerE2E(kgo.BrokerMetadata{NodeID: 2}, 0, kgo.BrokerE2E{TimeToWrite: time.Hour, WriteErr: errors.New("broken")})
	all, by := l.take()
	if by[1].P50 != 2 || by[1].Max != 10 || by[2].Max != 40 || all.Max != 40 || all.N != 5 || all.P50 != 3 {
		t.Errorf("latency: all %+v, by %+v", all, by)
	}
	if all, _ := l.take(); all.N != 0 {
		t.Errorf("latency after take: %+v, want none", all)
	}
}

var overviewEventRE = regexp.MustCompile(`(?s)event: charts\n(data: [^\n]*\n)+\n`)

// TestOverview: a broker with topics shows its broker row, disk use,
// partition counts and the partitions under min ISR (a topic asking for
// 2 in-sync replicas on a single node); the charts fill in from the
// sampler, on reload and over the event stream, which ends when the
// console closes; the sampler stops when nobody watches.
func TestOverview(t *testing.T) {
	tc := startConsole(t, Config{SampleInterval: 150 * time.Millisecond})
	cx := ctx(t)
	if _, err := tc.Admin.CreateTopic(cx, 3, 1, nil, "ov-plain"); err != nil {
		t.Fatal(err)
	}
	two := "2"
	if _, err := tc.Admin.CreateTopic(cx, 2, 1, map[string]*string{"min.insync.replicas": &two}, "ov-strict"); err != nil {
		t.Fatal(err)
	}
	produce := func(n int) {
		for i := 0; i < n; i++ {
			if err := tc.Client.ProduceSync(cx, &kgo.Record{Topic: "ov-plain", Value: []byte(strings.Repeat("x", 100))}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	produce(20)
	md, err := tc.Admin.Metadata(kadm.WithAuthorizedOps(cx))
	if err != nil {
		t.Fatal(err)
	}
	parts := 0
	md.Topics.EachPartition(func(kadm.PartitionDetail) { parts++ })
	b := md.Brokers[0]

	st, body := tc.get("/")
	if st != 200 {
		t.Fatalf("GET /: status %d:\n%s", st, body)
	}
	wantContains(t, body,
		fmt.Sprintf(`<tr id="broker-%d"><td class="num">%d</td><td class="mono">%s:%d</td>`, b.NodeID, b.NodeID, b.Host, b.Port),
		`<span class="badge ok">active</span> <span class="badge">controller</span> <span class="badge">quorum leader</span>`,
		fmt.Sprintf(`KRaft quorum leader: %d`, b.NodeID),
		fmt.Sprintf(`id="ov-partitions">%d<`, parts),
		fmt.Sprintf(`id="ov-topics">%d<`, len(md.Topics)),
		`id="ov-under-replicated">0<`, `id="ov-offline">0<`, `id="ov-under-min-isr">2<`,
		`Unhealthy partitions (2)`,
		`<a href="/topics/ov-strict">ov-strict</a></td><td class="num">0</td>`,
		`<a href="/topics/ov-strict">ov-strict</a></td><td class="num">1</td>`,
		`<span class="badge bad">under min ISR</span>`,
		`sse-connect="/events/overview"`, `sse-swap="charts"`, `<svg class="chart"`,
	)
	if strings.Contains(body, `href="/topics/ov-plain"`) {
		t.Errorf("a healthy topic is listed as unhealthy:\n%s", body)
	}
	// Disk use: the broker answered DescribeLogDirs, with 2000+ bytes of
	// records in ov-plain.
	row := body[strings.Index(body, fmt.Sprintf(`<tr id="broker-%d">`, b.NodeID)):]
	row = row[:strings.Index(row, "</tr>")]
	if strings.Contains(row, "unknown") || !regexp.MustCompile(`<td class="num">\d+\.\d [KM]iB</td>`).MatchString(row) {
		t.Errorf("the broker's disk use is not shown:\n%s", row)
	}

	// The event stream sends the charts as fragments; with records
	// produced and a group committing meanwhile, the records chart has
	// rates in and out.
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for i := int64(1); ; i++ {
			select {
			case <-stop:
				return
			case <-cx.Done():
				return
			default:
			}
			if tc.Client.ProduceSync(cx, &kgo.Record{Topic: "ov-plain", Value: []byte("y")}).FirstErr() != nil {
				return
			}
			var os kadm.Offsets
			os.AddOffset("ov-plain", 0, i, -1)
			if _, err := tc.Admin.CommitOffsets(cx, "ov-readers", os); err != nil {
				return
			}
			time.Sleep(30 * time.Millisecond)
		}
	}()
	sctx, cancel := context.WithTimeout(cx, 15*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(sctx, http.MethodGet, tc.URL+"/events/overview", nil)
	resp, err := tc.browser.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || ct != "text/event-stream" {
		t.Fatalf("events: status %d, type %q", resp.StatusCode, ct)
	}
	rd := bufio.NewReader(resp.Body)
	var got, ev strings.Builder
	var chart string
	for chart == "" {
		line, err := rd.ReadString('\n')
		if err != nil {
			t.Fatalf("the stream ended before a chart with rates in and out (%v):\n%s", err, got.String())
		}
		got.WriteString(line)
		ev.WriteString(line)
		if line != "\n" {
			continue
		}
		if e := ev.String(); overviewEventRE.MatchString(e) && strings.Contains(e, "<svg") &&
			overviewLatestPositive(e, "in (produced)", "rec/s") && overviewLatestPositive(e, "out (committed by groups)", "rec/s") {
			chart = e
		}
		ev.Reset()
	}
	if !strings.Contains(chart, `id="chart-records"`) || !strings.Contains(chart, `<path class="line s0"`) {
		t.Errorf("the charts event draws no line:\n%s", chart)
	}
	if !strings.Contains(got.String(), "event: health\n") && !waitEvent(rd, "event: health\n") {
		t.Errorf("no health event after the charts:\n%s", got.String())
	}
	close(stop)
	<-done

	// Without JavaScript a reload shows the samples so far.
	if _, body := tc.get("/"); !strings.Contains(body, "in (produced): latest") || !strings.Contains(body, "p50: latest") {
		t.Errorf("the page's charts have no samples:\n%s", body)
	}

	// The sampler stops once nobody watches: a hub of its own with a
	// short linger, watched once.
	h := newOverviewHub(tc.c)
	h.linger = 400 * time.Millisecond
	sm := h.sampler(tc.c.sessions.shared)
	deadline := time.Now().Add(10 * time.Second)
	for {
		h.mu.Lock()
		running := h.samplers[""] != nil
		h.mu.Unlock()
		if !running {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the sampler still runs with nobody watching")
		}
		time.Sleep(50 * time.Millisecond)
	}
	md, err = tc.Admin.Metadata(kadm.WithAuthorizedOps(cx)) // uncached: __consumer_offsets came with the commits
	if err != nil {
		t.Fatal(err)
	}
	parts = 0
	md.Topics.EachPartition(func(kadm.PartitionDetail) { parts++ })
	if pts, hl := sm.snapshot(); len(pts) < 2 || hl == nil || hl.Partitions != parts {
		t.Errorf("the stopped sampler took %d points, health %+v", len(pts), hl)
	}

	// Closing the console ends the open stream.
	tc.c.Close()
	ended := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, rd)
		ended <- err
	}()
	select {
	case err := <-ended:
		if err != nil {
			t.Errorf("the stream ended with %v, want a clean end", err)
		}
	case <-time.After(5 * time.Second):
		t.Error("the event stream did not end when the console closed")
	}
	resp.Body.Close()
}

// waitEvent reads the stream until a line equals want (true) or it ends.
func waitEvent(rd *bufio.Reader, want string) bool {
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			return false
		}
		if line == want {
			return true
		}
	}
}

// TestOverviewDiskFailureIsUnknown: DescribeLogDirs failing on one broker
// makes that broker's disk use "unknown" (with the error) on the page,
// while the other broker's log dirs are summed, with their volume's size.
func TestOverviewDiskFailureIsUnknown(t *testing.T) {
	resp := kmsg.NewPtrDescribeLogDirsResponse()
	resp.Version = 4
	for i, dir := range []string{"/data/a", "/data/b"} {
		d := kmsg.NewDescribeLogDirsResponseDir()
		d.Dir, d.TotalBytes, d.UsableBytes = dir, 10<<30, 4<<30
		tp := kmsg.NewDescribeLogDirsResponseDirTopic()
		tp.Topic = "t"
		for p := int32(0); p < 2; p++ {
			pp := kmsg.NewDescribeLogDirsResponseDirTopicPartition()
			pp.Partition, pp.Size = p+int32(2*i), 1000*int64(p+1)
			tp.Partitions = append(tp.Partitions, pp)
		}
		d.Topics = append(d.Topics, tp)
		resp.Dirs = append(resp.Dirs, d)
	}
	out := &overviewHealth{Controller: 1, QuorumLeader: -1, Brokers: []overviewBroker{{ID: 1, Addr: "h1:9092"}, {ID: 2, Addr: "h2:9092"}}}
	byID := map[int32]*overviewBroker{1: &out.Brokers[0], 2: &out.Brokers[1]}
	leaders := map[overviewTP]int32{{"t", 0}: 1, {"t", 1}: 2, {"t", 2}: 1, {"t", 3}: 1}
	failed := overviewDisks(out, byID, leaders, []kgo.ResponseShard{
		{Meta: kgo.BrokerMetadata{NodeID: 1}, Resp: resp},
		{Meta: kgo.BrokerMetadata{NodeID: 2}, Err: errors.New("dial tcp h2:9092: connection refused")},
	})
	b1, b2 := out.Brokers[0], out.Brokers[1]
	if failed != 1 || !b1.DiskKnown || b1.Bytes != 6000 || len(b1.Dirs) != 2 || b1.Dirs[1].Bytes != 3000 || b1.Dirs[0].Usable != 4<<30 {
		t.Errorf("broker 1: failed %d, %+v", failed, b1)
	}
	if b2.DiskKnown || !strings.Contains(b2.DiskErr, "connection refused") {
		t.Errorf("broker 2: %+v", b2)
	}
	if len(out.leaderSizes) != 3 || out.leaderSizes[overviewTP{"t", 3}] != 2000 {
		t.Errorf("leader sizes %v, want t/0, t/2, t/3 on broker 1", out.leaderSizes)
	}

	c, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	html, err := c.fragmentString(r, "overview", "overview-brokers", overviewView{Health: out})
	if err != nil {
		t.Fatal(err)
	}
	wantContains(t, html, `<td class="num">5.9 KiB</td>`, `4.0 GiB free of 10.0 GiB`,
		`<span class="muted" title="dial tcp h2:9092: connection refused">unknown</span>`)
}

// TestOverviewBrokerMetricsArithmetic: the Prometheus text of a broker's
// /metrics is read for the overview's families only (labels with commas
// and escapes included), and two readings give bytes per second and the
// mean request time of the interval.
func TestOverviewBrokerMetricsArithmetic(t *testing.T) {
	text := func(in, out, prodSum, prodN float64) string {
		return fmt.Sprintf(`# HELP samsa_topic_bytes_in_total Record bytes appended by producers, per topic.
# TYPE samsa_topic_bytes_in_total counter
samsa_topic_bytes_in_total{topic="a"} %g
samsa_topic_bytes_in_total{topic="b"} 100
samsa_topic_bytes_out_total{topic="a"} %g
samsa_request_duration_seconds_bucket{api="Produce",le="0.001"} 3
samsa_request_duration_seconds_sum{api="Produce"} %g
samsa_request_duration_seconds_count{api="Produce"} %g
samsa_request_duration_seconds_sum{api="Fetch"} 7
samsa_request_duration_seconds_count{api="Fetch"} 2
samsa_other{x="a,b\"c",api="Produce"} 9
`, in, out, prodSum, prodN)
	}
	var names []string
	if err := overviewParseProm(strings.NewReader(`samsa_request_duration_seconds_sum{odd="x,\"y}",api="Produce"} 1.5e-3 1700000000`), func(name string, l map[string]string, v float64) {
		names = append(names, fmt.Sprintf("%s %s %s %g", name, l["api"], l["odd"], v))
	}); err != nil || len(names) != 1 || names[0] != `samsa_request_duration_seconds_sum Produce x,"y} 0.0015` {
		t.Fatalf("parse: %q, %v", names, err)
	}
	scrape := func(body string) *overviewScraped {
		s := &overviewScraped{bytesIn: map[any]int64{}, bytesOut: map[any]int64{},
			reqSum: map[string]map[any]int64{"Produce": {}, "Fetch": {}}, reqCount: map[string]map[any]int64{"Produce": {}, "Fetch": {}}}
		if err := overviewParseProm(strings.NewReader(body), func(name string, l map[string]string, v float64) {
			k := overviewLabelKey{"u", l["topic"]}
			switch name {
			case overviewMetricBytesIn:
				s.bytesIn[k] = int64(v)
			case overviewMetricBytesOut:
				s.bytesOut[k] = int64(v)
			case overviewMetricReqSum:
				s.reqSum[l["api"]][overviewLabelKey{"u", ""}] = int64(v * 1e6)
			case overviewMetricReqCount:
				s.reqCount[l["api"]][overviewLabelKey{"u", ""}] = int64(v)
			}
		}); err != nil {
			t.Fatal(err)
		}
		return s
	}
	var bc overviewBrokerCounters
	t0 := time.Unix(1000, 0)
	var p overviewPoint
	bc.next(t0, scrape(text(1000, 50, 0.010, 10)), 10*time.Second, &p)
	if p.HasBrokerIn || p.HasProduce {
		t.Fatalf("a first reading has no rate: %+v", p)
	}
	p = overviewPoint{}
	// 2 s later: +4000 bytes in, +1000 out; 20 more produces taking 0.1 s
	// in all (5 ms each); no fetch.
	bc.next(t0.Add(2*time.Second), scrape(text(5000, 1050, 0.110, 30)), 10*time.Second, &p)
	if !p.HasBrokerIn || p.BrokerIn != 2000 || p.BrokerOut != 500 || !p.HasProduce || math.Abs(p.ProduceMs-5) > 1e-6 || p.HasFetch {
		t.Errorf("rates: %+v", p)
	}
	// A broker restart (counters back near 0) is no negative traffic.
	p = overviewPoint{}
	bc.next(t0.Add(3*time.Second), scrape(text(10, 0, 0.001, 1)), 10*time.Second, &p)
	if p.BrokerIn != 0 || p.BrokerOut != 0 || p.HasProduce {
		t.Errorf("after a restart: %+v", p)
	}
}

var overviewHTTPRE = regexp.MustCompile(`msg="samsa serving".* http=([0-9.]+:[0-9]+)`)

// TestOverviewBrokerMetrics: with a Samsa broker's admin listener
// configured, the overview charts the broker's own bytes in and out and
// its Produce request time while records are produced and consumed.
func TestOverviewBrokerMetrics(t *testing.T) {
	addr, serve := devcluster.StartTestBroker(t, "--override", "samsa.http.listener=127.0.0.1:0")
	m := overviewHTTPRE.FindStringSubmatch(serve.Tail())
	if m == nil {
		t.Fatalf("no HTTP listener in the broker's log:\n%s", serve.Tail())
	}
	tc := startConsoleOn(t, addr, Config{SampleInterval: 150 * time.Millisecond, AdminURLs: []string{"http://" + m[1]}})
	cx := ctx(t)
	if _, err := tc.Admin.CreateTopic(cx, 1, 1, nil, "ov-metered"); err != nil {
		t.Fatal(err)
	}
	cons, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics("ov-metered"), kgo.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			_ = tc.Client.ProduceSync(cx, &kgo.Record{Topic: "ov-metered", Value: []byte(strings.Repeat("z", 500))}).FirstErr()
			cons.PollFetches(cx)
			time.Sleep(20 * time.Millisecond)
		}
	}()
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, body := tc.get("/")
		if strings.Contains(body, `id="chart-broker-bytes"`) && overviewLatestPositive(body, "in (produced)", "B/s") &&
			overviewLatestPositive(body, "out (to consumers)", "B/s") && overviewLatestPositive(body, "Produce", "ms") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the broker's charts never showed traffic:\n%s", body)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// overviewLatestPositive: some chart's description has series name's
// latest value above 0.
func overviewLatestPositive(body, name, unit string) bool {
	re := regexp.MustCompile(regexp.QuoteMeta(name) + `: latest ([0-9.]+)([kMG]?) ` + regexp.QuoteMeta(unit))
	for _, m := range re.FindAllStringSubmatch(body, -1) {
		if v, err := strconv.ParseFloat(m[1], 64); err == nil && v > 0 {
			return true
		}
	}
	return false
}

// TestOverviewPartitionHealth: partitions without a leader are offline,
// with fewer in-sync replicas than replicas under-replicated, with fewer
// than the topic's min.insync.replicas under min ISR; only the first 100
// unhealthy ones are listed, all are counted; a topic the metadata
// answered with an error is a note. The brokers table marks a fenced one.
func TestOverviewPartitionHealth(t *testing.T) {
	pd := func(topic string, p, leader int32, replicas, isr []int32) kadm.PartitionDetail {
		return kadm.PartitionDetail{Topic: topic, Partition: p, Leader: leader, Replicas: replicas, ISR: isr}
	}
	many := kadm.PartitionDetails{}
	for p := int32(0); p < 150; p++ {
		many[p] = pd("many", p, 1, []int32{1, 2}, []int32{1})
	}
	topics := kadm.TopicDetails{
		"a": {Topic: "a", Partitions: kadm.PartitionDetails{
			0: pd("a", 0, 1, []int32{1, 2, 3}, []int32{1, 2, 3}),
			1: pd("a", 1, -1, []int32{2, 3}, nil),
			2: pd("a", 2, 1, []int32{1, 2, 3}, []int32{1, 2}),
		}},
		"__consumer_offsets": {Topic: "__consumer_offsets", IsInternal: true, Partitions: kadm.PartitionDetails{0: pd("__consumer_offsets", 0, 1, []int32{1}, []int32{1})}},
		"many":               {Topic: "many", Partitions: many},
		"secret":             {Topic: "secret", Err: kerr.TopicAuthorizationFailed},
	}
	out := &overviewHealth{}
	overviewPartitions(out, topics, map[string]int{"a": 3, "many": 1, "__consumer_offsets": -1})
	if out.Topics != 3 || out.Partitions != 154 || out.Offline != 1 || out.UnderRepl != 152 || out.UnderMinISR != 2 || out.UnhealthyCount != 152 {
		t.Errorf("counts: topics %d partitions %d offline %d under-replicated %d under min ISR %d unhealthy %d",
			out.Topics, out.Partitions, out.Offline, out.UnderRepl, out.UnderMinISR, out.UnhealthyCount)
	}
	if len(out.Unhealthy) != 100 || out.Unhealthy[0].Topic != "a" || out.Unhealthy[0].Partition != 1 ||
		strings.Join(out.Unhealthy[0].Problems, ",") != "offline,under-replicated,under min ISR" ||
		strings.Join(out.Unhealthy[1].Problems, ",") != "under-replicated,under min ISR" || out.Unhealthy[2].Topic != "many" {
		t.Errorf("listed: %d, first %+v %+v %+v", len(out.Unhealthy), out.Unhealthy[0], out.Unhealthy[1], out.Unhealthy[2])
	}
	if strings.Join(out.topicNames, ",") != "a,many" || len(out.Notes) != 2 || !strings.Contains(out.Notes[0], "secret") ||
		!strings.Contains(out.Notes[1], "unknown for 1 topic(s)") {
		t.Errorf("topic names %v, notes %q", out.topicNames, out.Notes)
	}

	out.Brokers = []overviewBroker{{ID: 1, Addr: "h1:9092", DiskKnown: true}, {ID: 2, Addr: "h2:9092", Fenced: true, DiskErr: "no answer"}}
	c, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	html, err := c.fragmentString(r, "overview", "overview-health", overviewView{Health: out})
	if err != nil {
		t.Fatal(err)
	}
	wantContains(t, html, `Unhealthy partitions (152, the first 100 shown)`, `id="ov-offline">1<`,
		`<td class="num">none</td>`, `<span class="badge bad">offline</span>`, `Topic secret: `)
	if html, err = c.fragmentString(r, "overview", "overview-brokers", overviewView{Health: out}); err != nil {
		t.Fatal(err)
	}
	wantContains(t, html, `<tr id="broker-2"><td class="num">2</td><td class="mono">h2:9092</td><td><span class="muted">none</span></td>
<td><span class="badge bad">fenced</span>`)
}

package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"html"
	"io"
	"math"
	"net/http"
	"net/http/cookiejar"
	"slices"
	"strconv"
	"strings"
	"time"
)

// page is one console page the benchmark requests.
type page struct {
	name string
	// path is the page's path and query, with {placeholders} that
	// (dataSet).expand fills in.
	path string
	// browser marks a message-browser page: the records it read are
	// reported against the page size.
	browser bool
}

// pages are the console's pages as routed in internal/console; a path the
// console does not route answers 404 "no page at" and is reported absent.
var pages = []page{
	{name: "overview", path: "/"},
	{name: "topics list, page 1", path: "/topics"},
	{name: "topics list, page 10", path: "/topics?page=10"},
	{name: "topics list, search", path: "/topics?q=t07"},
	{name: "topics list, sorted by size", path: "/topics?sort=size"},
	{name: "big topic", path: "/topics/{big}"},
	{name: "big topic's partitions, page 1", path: "/topics/{big}/partitions"},
	{name: "big topic's partitions, page 10", path: "/topics/{big}/partitions?page=10"},
	{name: "big topic's configs", path: "/topics/{big}/configs"},
	{name: "a small topic", path: "/topics/{small}"},
	{name: "messages, newest", path: "/topics/{big}/messages", browser: true},
	{name: "messages, newest of partition 0", path: "/topics/{big}/messages?p=0", browser: true},
	{name: "messages, oldest", path: "/topics/{big}/messages?from=oldest", browser: true},
	{name: "messages, at an offset", path: "/topics/{big}/messages?p=0&from=offset&offset={p0mid}", browser: true},
	{name: "messages, at a timestamp", path: "/topics/{big}/messages?from=time&ts={tsmid}", browser: true},
	{name: "messages, key filter (rare key)", path: "/topics/{big}/messages?key={key}", browser: true},
	{name: "messages, value filter", path: "/topics/{big}/messages?value=amount%22%3A12.", browser: true},
	{name: "messages, expression filter", path: "/topics/{big}/messages?expr=json.amount+%3E%3D+990", browser: true},
	{name: "one record", path: "/topics/{big}/messages/0/{p0mid}", browser: true},
	{name: "messages, download", path: "/topics/{big}/messages/download", browser: true},
	{name: "produce form", path: "/topics/{big}/messages/produce"},
	{name: "groups list, page 1", path: "/groups"},
	{name: "groups list, page 2", path: "/groups?page=2"},
	{name: "a reader group (offsets in every partition of the big topic)", path: "/groups/{readers}"},
	{name: "the live group (a member assigned every partition of the big topic)", path: "/groups/{live}"},
	{name: "a group's lag chart", path: "/groups/{readers}/lag-chart"},
	{name: "a group's reset form", path: "/groups/{readers}/reset"},
	{name: "security: ACLs", path: "/security/acls"},
	{name: "security: SCRAM users", path: "/security/users"},
	{name: "security: quotas", path: "/security/quotas"},
	{name: "operations", path: "/ops"},
	{name: "schemas", path: "/schemas"},
	{name: "connect", path: "/connect"},
}

// expand fills a page path's placeholders from the data set.
func (d dataSet) expand(path string) string {
	mid := d.FirstTimestamp + (d.LastTimestamp-d.FirstTimestamp)/2
	return strings.NewReplacer(
		"{big}", bigTopic,
		"{small}", d.smallTopic(d.SmallTopics/2),
		"{readers}", fmt.Sprintf(readersFmt, 2),
		"{live}", liveGroup,
		"{p0mid}", strconv.FormatInt(d.Partition0End/2, 10),
		"{tsmid}", time.UnixMilli(mid).UTC().Format("2006-01-02T15:04:05"),
		"{key}", "user-4242",
	).Replace(path)
}

// result is one page's measurement.
type result struct {
	Name    string    `json:"name"`
	Path    string    `json:"path"`
	Browser bool      `json:"browser,omitempty"`
	Status  int       `json:"status"`
	Absent  bool      `json:"absent,omitempty"`
	Error   string    `json:"error,omitempty"`
	Millis  []float64 `json:"millis,omitempty"`
	Median  float64   `json:"median_ms"`
	P90     float64   `json:"p90_ms"`
	Bytes   int       `json:"bytes"`
	// From requests between two scrapes of /metrics (the least of
	// probes): the Kafka requests the page made and the broker's time in
	// them, the big topic's bytes the broker sent and the records that is.
	APIs        []apiUse `json:"apis,omitempty"`
	FetchBytes  int64    `json:"fetch_bytes"`
	RecordsRead float64  `json:"records_read"`
}

type apiUse struct {
	API      string  `json:"api"`
	Count    float64 `json:"count"`
	BrokerMs float64 `json:"broker_ms"`
}

// p90 is the nearest-rank 90th percentile.
func p90(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	return s[(len(s)*9+9)/10-1]
}

// browser is one browser session: its cookie, kept-alive connections.
type browser struct {
	base    string
	metrics []string // every node's /metrics
	hc      *http.Client
	// scrapeCost is what two scrapes in a row cause (measureScrapeCost).
	scrapeCost []apiUse
}

func newBrowser(base string, metrics []string) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{base: base, metrics: metrics, hc: &http.Client{Jar: jar, Timeout: 2 * time.Minute}}
}

// get requests path and reads the whole answer: its status, body and
// the time from the request to the last byte.
func (b *browser) get(ctx context.Context, path string) (int, []byte, time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.base+path, nil)
	if err != nil {
		return 0, nil, 0, err
	}
	start := time.Now()
	resp, err := b.hc.Do(req)
	if err != nil {
		return 0, nil, 0, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, body, time.Since(start), err
}

// measure requests p: warmup untimed, n timed, then one bracketed by
// scrapes of /metrics.
func (b *browser) measure(ctx context.Context, d dataSet, p page, warmup, n int) result {
	path := d.expand(p.path)
	r := result{Name: p.name, Path: path, Browser: p.browser}
	for i := range warmup + n {
		status, body, took, err := b.get(ctx, path)
		if err != nil {
			r.Error = err.Error()
			return r
		}
		r.Status, r.Bytes = status, len(body)
		if status == http.StatusNotFound && bytes.Contains(body, []byte("no page at")) {
			r.Absent = true
			return r
		}
		if status != http.StatusOK {
			r.Error = fmt.Sprintf("HTTP %d: %s", status, errorText(body))
			return r
		}
		if i >= warmup {
			r.Millis = append(r.Millis, float64(took.Microseconds())/1000)
		}
	}
	r.Median, r.P90 = median(r.Millis), p90(r.Millis)
	// The page's own requests: each probe's count less what a scrape
	// itself causes, the least of the probes (a request of the
	// background, such as a long poll ending, falls in some probes only).
	var (
		least     []apiUse
		leastSent = math.Inf(1)
	)
	for i := range probes {
		before, err := b.scrape(ctx)
		if err == nil {
			_, _, _, err = b.get(ctx, path)
		}
		var after metrics
		if err == nil {
			after, err = b.scrape(ctx)
		}
		if err != nil {
			r.Error = "probe: " + err.Error()
			return r
		}
		use := less(after.sub(before), b.scrapeCost)
		if i == 0 {
			least = use
		} else {
			least = leastOf(least, use)
		}
		leastSent = min(leastSent, after.bytesOut[bigTopic]-before.bytesOut[bigTopic])
	}
	r.APIs = least
	r.FetchBytes = int64(leastSent)
	if bpr := d.bytesPerRecord(); bpr > 0 {
		r.RecordsRead = float64(r.FetchBytes) / bpr
	}
	return r
}

// probes is how many requests of a page are bracketed by scrapes.
const probes = 3

// measureScrapeCost learns the requests two scrapes in a row cause with
// no page between them (the least of a few tries), so a probe's count
// leaves them out.
func (b *browser) measureScrapeCost(ctx context.Context) error {
	for i := range probes {
		before, err := b.scrape(ctx)
		if err != nil {
			return err
		}
		after, err := b.scrape(ctx)
		if err != nil {
			return err
		}
		if i == 0 {
			b.scrapeCost = after.sub(before)
		} else {
			b.scrapeCost = leastOf(b.scrapeCost, after.sub(before))
		}
	}
	return nil
}

// leastOf is, per API, the smaller count and time of a and b; an API
// missing from either is left out.
func leastOf(a, b []apiUse) []apiUse {
	var out []apiUse
	for _, u := range a {
		for _, v := range b {
			if u.API == v.API {
				out = append(out, apiUse{API: u.API, Count: min(u.Count, v.Count), BrokerMs: min(u.BrokerMs, v.BrokerMs)})
			}
		}
	}
	return sortUses(out)
}

// less is a with b's counts taken off (the broker time in proportion).
func less(a, b []apiUse) []apiUse {
	var out []apiUse
	for _, u := range a {
		for _, v := range b {
			if u.API == v.API && v.Count > 0 {
				keep := max(0, u.Count-v.Count)
				u.BrokerMs *= keep / u.Count
				u.Count = keep
			}
		}
		if u.Count > 0 {
			out = append(out, u)
		}
	}
	return sortUses(out)
}

// background is the Kafka requests served per second over d with no
// page requested.
func (b *browser) background(ctx context.Context, d time.Duration) ([]apiUse, error) {
	before, err := b.scrape(ctx)
	if err != nil {
		return nil, err
	}
	time.Sleep(d)
	after, err := b.scrape(ctx)
	if err != nil {
		return nil, err
	}
	us := after.sub(before)
	for i := range us {
		us[i].Count /= d.Seconds()
		us[i].BrokerMs /= d.Seconds()
	}
	return us, nil
}

// errorText is the gist of an error page: the text of its
// class="error" box (error.html's), or of the start of the body.
func errorText(body []byte) string {
	s := string(body)
	if i := strings.Index(s, `class="error"`); i >= 0 {
		s = s[i:]
		if j := strings.Index(s, "</div>"); j >= 0 {
			s = s[:j]
		}
		if j := strings.Index(s, ">"); j >= 0 {
			s = s[j+1:]
		}
	}
	// Drop the tags, keep the text.
	var b strings.Builder
	in := false
	for _, r := range s {
		switch {
		case r == '<':
			in = true
		case r == '>':
			in = false
		case !in:
			b.WriteRune(r)
		}
	}
	s = strings.Join(strings.Fields(html.UnescapeString(b.String())), " ")
	if len(s) > 160 {
		s = s[:160] + "..."
	}
	return s
}

// metrics are the broker's counters a page's cost is read from.
type metrics struct {
	requests map[string]float64 // per API
	seconds  map[string]float64 // per API, the broker's time in them
	bytesOut map[string]float64 // per topic, record bytes sent to consumers
}

// scrape sums the counters of every node.
func (b *browser) scrape(ctx context.Context) (metrics, error) {
	m := newMetrics()
	for _, url := range b.metrics {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return m, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return m, err
		}
		if resp.StatusCode != http.StatusOK {
			resp.Body.Close()
			return m, fmt.Errorf("GET %s: %s", url, resp.Status)
		}
		err = m.parse(resp.Body)
		resp.Body.Close()
		if err != nil {
			return m, err
		}
	}
	return m, nil
}

func newMetrics() metrics {
	return metrics{requests: map[string]float64{}, seconds: map[string]float64{}, bytesOut: map[string]float64{}}
}

// parse adds the counters of metrics in Prometheus' text format from r.
func (m metrics) parse(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		var into map[string]float64
		var label string
		switch {
		case strings.HasPrefix(line, "samsa_requests_total{"):
			into, label = m.requests, "api"
		case strings.HasPrefix(line, "samsa_request_duration_seconds_sum{"):
			into, label = m.seconds, "api"
		case strings.HasPrefix(line, "samsa_topic_bytes_out_total{"):
			into, label = m.bytesOut, "topic"
		default:
			continue
		}
		sp := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[sp+1:], 64)
		if err != nil {
			return fmt.Errorf("metrics line %q: %w", line, err)
		}
		into[labelValue(line[:sp], label)] += v
	}
	return sc.Err()
}

// labelValue is the value of label name in a series' name{labels}.
func labelValue(series, name string) string {
	i := strings.Index(series, name+`="`)
	if i < 0 {
		return ""
	}
	s := series[i+len(name)+2:]
	if j := strings.IndexByte(s, '"'); j >= 0 {
		return s[:j]
	}
	return s
}

// sub is what the Kafka APIs served between earlier and m, most time
// first.
func (m metrics) sub(earlier metrics) []apiUse {
	var us []apiUse
	for api, n := range m.requests {
		if d := n - earlier.requests[api]; d > 0 {
			us = append(us, apiUse{API: api, Count: d, BrokerMs: (m.seconds[api] - earlier.seconds[api]) * 1000})
		}
	}
	return sortUses(us)
}

// sortUses sorts by broker time, most first.
func sortUses(us []apiUse) []apiUse {
	slices.SortFunc(us, func(a, b apiUse) int {
		if a.BrokerMs != b.BrokerMs {
			if a.BrokerMs > b.BrokerMs {
				return -1
			}
			return 1
		}
		return strings.Compare(a.API, b.API)
	})
	return us
}

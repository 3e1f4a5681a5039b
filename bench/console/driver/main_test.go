package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The counters a page's cost is read from: requests and the broker's
// seconds per API (summed over versions and nodes), bytes sent per topic;
// the difference of two scrapes lists the APIs used, most time first.
func TestMetricsDifference(t *testing.T) {
	before, after := newMetrics(), newMetrics()
	scrape := func(m metrics, text string) {
		t.Helper()
		if err := m.parse(strings.NewReader(text)); err != nil {
			t.Fatal(err)
		}
	}
	scrape(before, `# HELP samsa_requests_total Requests handled, per API and version.
samsa_requests_total{api="Metadata",version="12"} 10
samsa_requests_total{api="ListOffsets",version="9"} 4
samsa_request_duration_seconds_sum{api="Metadata"} 0.5
samsa_request_duration_seconds_sum{api="ListOffsets"} 0.1
samsa_request_duration_seconds_count{api="ListOffsets"} 4
samsa_topic_bytes_out_total{topic="console-big"} 1000
`)
	scrape(after, `samsa_requests_total{api="Metadata",version="12"} 11
samsa_requests_total{api="ListOffsets",version="9"} 6
samsa_requests_total{api="Fetch",version="17"} 1
samsa_request_duration_seconds_sum{api="Metadata"} 0.501
samsa_request_duration_seconds_sum{api="ListOffsets"} 0.104
samsa_request_duration_seconds_sum{api="Fetch"} 0.002
samsa_topic_bytes_out_total{topic="console-big"} 5096
`)
	// A second node's counters add up.
	scrape(after, `samsa_requests_total{api="Metadata",version="12"} 3
samsa_requests_total{api="Metadata",version="11"} 2
samsa_request_duration_seconds_sum{api="Metadata"} 0.0
samsa_topic_bytes_out_total{topic="other"} 7
`)
	scrape(before, `samsa_requests_total{api="Metadata",version="12"} 3
samsa_requests_total{api="Metadata",version="11"} 1
`)
	got := apis(after.sub(before))
	if want := "ListOffsets×2 (4.0), Fetch×1 (2.0), Metadata×2 (1.0)"; got != want {
		t.Errorf("apis = %q, want %q", got, want)
	}
	if d := after.bytesOut[bigTopic] - before.bytesOut[bigTopic]; d != 4096 {
		t.Errorf("bytes out %v, want 4096", d)
	}
	if err := newMetrics().parse(strings.NewReader("samsa_requests_total{api=\"Fetch\"} x\n")); err == nil {
		t.Error("a value that is no number was taken")
	}
}

func TestP90(t *testing.T) {
	var vs []float64
	for i := 20; i >= 1; i-- {
		vs = append(vs, float64(i))
	}
	if got := p90(vs); got != 18 {
		t.Errorf("p90 of 1..20 = %v, want 18 (nearest rank)", got)
	}
	if got := p90([]float64{5}); got != 5 {
		t.Errorf("p90 of one = %v", got)
	}
	if p90(nil) != 0 {
		t.Error("p90 of none")
	}
}

func TestVerdict(t *testing.T) {
	for _, c := range []struct {
		r    result
		want string
	}{
		{result{P90: 299.9}, "PASS"},
		{result{P90: 300}, "MISS"},
		{result{Absent: true}, "absent"},
		{result{Error: "HTTP 500"}, "ERROR"},
	} {
		if got := verdict(c.r, 300); got != c.want {
			t.Errorf("verdict(%+v) = %s, want %s", c.r, got, c.want)
		}
	}
}

// Every placeholder of every page is filled.
func TestExpand(t *testing.T) {
	d := dataSet{SmallTopics: 1500, Partition0End: 10_000, FirstTimestamp: 1000, LastTimestamp: 3000}
	for _, p := range pages {
		if got := d.expand(p.path); strings.ContainsAny(got, "{}") {
			t.Errorf("%s: %s left a placeholder", p.name, got)
		}
	}
	if got := d.expand("/x?o={p0mid}&t={tsmid}&s={small}"); got != "/x?o=5000&t=1970-01-01T00:00:02&s=console-t0750" {
		t.Errorf("expand = %s", got)
	}
}

func TestValueSize(t *testing.T) {
	for _, i := range []int64{0, 7, 9_999_999} {
		if v := value(i, 100); len(v) != 100 || v[0] != '{' || v[len(v)-1] != '}' {
			t.Errorf("value(%d) = %q (%d bytes)", i, v, len(v))
		}
	}
}

func TestSetProperty(t *testing.T) {
	p := filepath.Join(t.TempDir(), "server.properties")
	if err := os.WriteFile(p, []byte("a=1\nsamsa.console.listener=\nb=2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := setProperty(p, "samsa.console.listener", "127.0.0.1:9"); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(p)
	if string(data) != "a=1\nsamsa.console.listener=127.0.0.1:9\nb=2\n" {
		t.Errorf("file: %q", data)
	}
	if err := setProperty(p, "missing", "x"); err == nil {
		t.Error("a missing key was not reported")
	}
}

func TestErrorText(t *testing.T) {
	page := `<html><body><h1>Error 404</h1><div class="error" role="alert"><strong>UNKNOWN_TOPIC_OR_PARTITION: </strong>no topic &#34;x&#34;</div><p>...</p></body></html>`
	if got := errorText([]byte(page)); got != `UNKNOWN_TOPIC_OR_PARTITION: no topic "x"` {
		t.Errorf("errorText = %q", got)
	}
	if got := errorText([]byte("<p>plain failure</p>")); got != "plain failure" {
		t.Errorf("errorText = %q", got)
	}
}

// A probe's count loses what the scrapes cause; of several probes the
// least count of each API is the page's (a background request falls in
// some only), and an API seen in one probe only is not the page's.
func TestLeastAndLess(t *testing.T) {
	scrapes := []apiUse{{API: "ListOffsets", Count: 6, BrokerMs: 1}}
	p1 := less([]apiUse{{API: "ListOffsets", Count: 12, BrokerMs: 4}, {API: "Fetch", Count: 2, BrokerMs: 900}, {API: "Metadata", Count: 1, BrokerMs: 1}}, scrapes)
	p2 := less([]apiUse{{API: "ListOffsets", Count: 12, BrokerMs: 2}, {API: "Metadata", Count: 1, BrokerMs: 0.5}}, scrapes)
	if got, want := apis(leastOf(p1, p2)), "ListOffsets×6 (1.0), Metadata×1 (0.5)"; got != want {
		t.Errorf("least = %q, want %q", got, want)
	}
	if got := apis(less([]apiUse{{API: "ListOffsets", Count: 6, BrokerMs: 3}}, scrapes)); got != "" {
		t.Errorf("only the scrapes' requests left %q", got)
	}
}

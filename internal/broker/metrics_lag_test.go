package broker

import (
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// commitOffsets commits group's offsets with the admin API.
func commitOffsets(t *testing.T, addr, group string, offsets kadm.Offsets) {
	t.Helper()
	cl := newClient(t, addr)
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	if err := kadm.NewClient(cl).CommitAllOffsets(ctx, group, offsets); err != nil {
		t.Fatal(err)
	}
}

// produceNTo writes n records to one partition.
func produceNTo(t *testing.T, addr, topic string, partition int32, n int) {
	t.Helper()
	cl := newClient(t, addr, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	defer cancel()
	for range n {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Partition: partition, Value: []byte("v")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
}

// The broker exports each group's lag: the high watermark less the
// committed offset, per partition, and the committed offset itself. A
// group whose name Prometheus' text format must escape still gives a
// scrape the format's parser and promtool accept.
func TestMetricsConsumerLag(t *testing.T) {
	b := startHTTPBroker(t)
	createTopic(t, b, "lagged", 2)
	produceNTo(t, b.Addr(), "lagged", 0, 10)
	produceNTo(t, b.Addr(), "lagged", 1, 4)
	odd := "odd \"group\"\\\n\xff"
	for _, g := range []string{"lagging", odd} {
		offsets := kadm.Offsets{}
		offsets.Add(kadm.Offset{Topic: "lagged", Partition: 0, At: 3, LeaderEpoch: -1})
		offsets.Add(kadm.Offset{Topic: "lagged", Partition: 1, At: 4, LeaderEpoch: -1})
		commitOffsets(t, b.Addr(), g, offsets)
	}
	s, text := scrapeHTTP(t, b)
	for _, c := range []struct {
		name, partition string
		want            float64
	}{
		{"samsa_consumer_group_lag", "0", 7},
		{"samsa_consumer_group_lag", "1", 0},
		{"samsa_consumer_group_committed_offset", "0", 3},
		{"samsa_consumer_group_committed_offset", "1", 4},
	} {
		labels := []string{`group="lagging"`, `topic="lagged"`, `partition="` + c.partition + `"`}
		if !s.has(c.name) {
			t.Fatalf("no %s in\n%s", c.name, text)
		}
		if got := s.sum(c.name, labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, labels, got, c.want)
		}
	}
	escaped := `group="odd \"group\"\\\n` + "\uFFFD" + `"`
	if got := s.sum("samsa_consumer_group_lag", escaped, `partition="0"`); got != 7 {
		t.Errorf("lag of the oddly named group = %v, want 7; the scrape:\n%s", got, text)
	}
	lintMetrics(t, text)
}

// In a cluster the group's coordinator exports the lag of partitions it
// does not lead too, asking their leaders for their high watermarks.
func TestClusterConsumerLag(t *testing.T) {
	c := newTestCluster(t, 3, nil)
	adm, ctx := c.admin()
	if resp, err := adm.CreateTopic(ctx, 3, 1, nil, "spread"); err != nil || resp.Err != nil {
		t.Fatalf("create: %v %v", err, resp.Err)
	}
	addr := c.nodes[0].get().Addr()
	offsets := kadm.Offsets{}
	for p := range int32(3) {
		produceNTo(t, addr, "spread", p, 5+int(p))
		offsets.Add(kadm.Offset{Topic: "spread", Partition: p, At: 2, LeaderEpoch: -1})
	}
	commitOffsets(t, addr, "spread-group", offsets)
	var lag [3]float64
	exporters := 0
	for _, n := range c.nodes {
		s, _ := scrapeHTTP(t, n.get())
		if !s.has("samsa_consumer_group_lag") {
			continue
		}
		exporters++
		for p := range 3 {
			lag[p] += s.sum("samsa_consumer_group_lag", `group="spread-group"`, `partition="`+strconv.Itoa(p)+`"`)
		}
	}
	if exporters != 1 {
		t.Fatalf("%d nodes export the group's lag, want its coordinator alone", exporters)
	}
	for p, got := range lag {
		if want := float64(5 + p - 2); got != want {
			t.Errorf("partition %d: lag %v, want %v", p, got, want)
		}
	}
}

// A scraper that asks for gzip gets the same scrape gzipped; one that
// does not, plain text.
func TestMetricsGzip(t *testing.T) {
	b := startHTTPBroker(t)
	createTopic(t, b, "zipped", 1)
	get := func(encoding string) (*http.Response, string) {
		req, err := http.NewRequest("GET", "http://"+b.HTTPAddr()+"/metrics", nil)
		if err != nil {
			t.Fatal(err)
		}
		// Set by hand, Accept-Encoding turns off the transport's own
		// decompression.
		req.Header.Set("Accept-Encoding", encoding)
		resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var r io.Reader = resp.Body
		if resp.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			r = zr
		}
		body, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		return resp, string(body)
	}
	for _, c := range []struct {
		accept string
		gzip   bool
	}{
		{"gzip", true}, {"deflate, gzip;q=0.5", true}, {"gzip;q=0", false}, {"identity", false},
	} {
		resp, body := get(c.accept)
		if got := resp.Header.Get("Content-Encoding") == "gzip"; got != c.gzip {
			t.Errorf("Accept-Encoding %q: gzipped %v, want %v", c.accept, got, c.gzip)
		}
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
			t.Errorf("Content-Type %q", ct)
		}
		if s := parseSeries(t, body); s.sum("samsa_log_segments", `topic="zipped"`) != 1 {
			t.Errorf("Accept-Encoding %q: no samsa_log_segments of the topic in\n%s", c.accept, body)
		}
	}
}

func TestAppendLabelValue(t *testing.T) {
	for in, want := range map[string]string{
		"plain.topic-1": "plain.topic-1",
		`a"b`:           `a\"b`,
		`a\b`:           `a\\b`,
		"a\nb":          `a\nb`,
		"ünïcode":       "ünïcode",
		"bad\xffbyte":   "bad\uFFFDbyte",
		"":              "",
	} {
		if got := string(appendLabelValue(nil, in)); got != want {
			t.Errorf("appendLabelValue(%q) = %q, want %q", in, got, want)
		}
	}
}

package main

import (
	"strings"
	"testing"
	"time"

	"github.com/samsa-io/samsa/bench/internal/tabulate"
)

// A second delivery of an offset is a duplicate, from whichever consumer
// it comes; offsets past the backlog are never duplicates.
func TestOffsetSet(t *testing.T) {
	s := newOffsetSet(130)
	for _, off := range []int64{0, 63, 64, 129} {
		if !s.add(off) {
			t.Fatalf("offset %d: first delivery counted as a duplicate", off)
		}
	}
	for _, off := range []int64{0, 63, 64, 129} {
		if s.add(off) {
			t.Fatalf("offset %d: second delivery not counted as a duplicate", off)
		}
	}
	if !s.add(1) || !s.add(130) || !s.add(130) || !s.add(-1) {
		t.Fatal("a new offset, or one outside the backlog, counted as a duplicate")
	}
}

func TestParseCounts(t *testing.T) {
	cs, err := parseCounts("1, 4,16")
	if err != nil || len(cs) != 3 || cs[0] != 1 || cs[1] != 4 || cs[2] != 16 {
		t.Fatalf("parseCounts: %v, %v", cs, err)
	}
	for _, bad := range []string{"", "0", "4,x", "-1"} {
		if _, err := parseCounts(bad); err == nil {
			t.Errorf("parseCounts(%q): no error", bad)
		}
	}
}

// Options a run would fail on late (after a broker start) are refused
// first.
func TestCheck(t *testing.T) {
	good := options{out: "x", brokers: []string{brokerSamsa}, start: startConfig, fallback: startLive, records: 1, valueBytes: 1, runs: 1}
	if err := good.check(); err != nil {
		t.Fatal(err)
	}
	for name, mod := range map[string]func(*options){
		"no out":         func(o *options) { o.out = "" },
		"unknown broker": func(o *options) { o.brokers = []string{"redpanda"} },
		"kafka no libs":  func(o *options) { o.brokers = []string{brokerKafka} },
		"fallback":       func(o *options) { o.fallback = "sometimes" },
		"start":          func(o *options) { o.start = "earliest" },
		"prime on kafka": func(o *options) { o.start, o.brokers, o.kafkaLibs = startPrime, []string{brokerKafka}, "x" },
		"no records":     func(o *options) { o.records = 0 },
	} {
		o := good
		mod(&o)
		if err := o.check(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// The report's ratios are Samsa's figure over Kafka's of the same run and
// consumer count; the median is over the runs.
func TestReportRatios(t *testing.T) {
	o := options{brokers: []string{brokerSamsa, brokerKafka}, consumers: []int{1, 4}, runs: 2, records: 1000, valueBytes: 100, start: startConfig, fallback: startLive}
	results := []trial{
		{Broker: brokerSamsa, Run: 1, Consumers: 1, Records: 1000, Rate: 200, Mode: startConfig},
		{Broker: brokerKafka, Run: 1, Consumers: 1, Records: 1000, Rate: 100, Mode: startConfig},
		{Broker: brokerSamsa, Run: 2, Consumers: 1, Records: 1000, Rate: 400, Mode: startConfig},
		{Broker: brokerKafka, Run: 2, Consumers: 1, Records: 1000, Rate: 100, Mode: startConfig},
		{Broker: brokerSamsa, Run: 1, Consumers: 4, Records: 1000, Rate: 50, Mode: startLive, Refused: "refused"},
		{Broker: brokerKafka, Run: 1, Consumers: 4, Records: 1000, Rate: 100, Mode: startConfig},
	}
	if got := ratios(results, 1, func(t trial) float64 { return t.Rate }); len(got) != 2 || got[0] != 2 || got[1] != 4 {
		t.Fatalf("ratios: %v, want [2 4]", got)
	}
	if got := tabulate.Spread(ratios(results, 1, func(t trial) float64 { return t.Rate }), format); got != "3.00 [2.00..4.00]" {
		t.Fatalf("spread: %q", got)
	}
	var md strings.Builder
	report(&md, o, results)
	out := md.String()
	for _, want := range []string{"### 1 consumer\n", "### 4 consumers\n", "| delivery throughput, from the consumers' start (records/s) | 300.0 [200.0..400.0] | 100.0 [100.0..100.0] | 3.00 [2.00..4.00] |",
		"Samsa: measured in the live mode: the consumers joined the empty topic, then the backlog was produced while they consumed, the clock started with the produce: the group config was refused (refused)"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

func TestPercentile(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	if p50, p99 := percentileMillis(d, 0.5), percentileMillis(d, 0.99); p50 != 50 || p99 != 99 {
		t.Fatalf("p50 %v, p99 %v", p50, p99)
	}
	if percentileMillis(nil, 0.5) != 0 {
		t.Fatal("empty: not 0")
	}
}

package main

import (
	"strings"
	"testing"
)

// The report's ratios are Samsa's figure over Java's run by run, and each
// topology gets its own table.
func TestReportRatios(t *testing.T) {
	o := options{runtimes: []string{"samsa", "java"}, topologies: []string{"wordcount", "windowed"}, runs: 2}
	results := []trial{
		{Runtime: "samsa", Topology: "wordcount", Run: 1, Rate: 300, Records: 1},
		{Runtime: "java", Topology: "wordcount", Run: 1, Rate: 100, Records: 1},
		{Runtime: "java", Topology: "wordcount", Run: 2, Rate: 100, Records: 1},
		{Runtime: "samsa", Topology: "wordcount", Run: 2, Rate: 500, Records: 1},
		{Runtime: "samsa", Topology: "windowed", Run: 1, Rate: 50, Records: 1},
		{Runtime: "java", Topology: "windowed", Run: 1, Rate: 100, Records: 1},
	}
	var b strings.Builder
	report(&b, o, results)
	out := b.String()
	for _, want := range []string{
		"| throughput (records/s) | 400.0 [300.0..500.0] | 100.0 [100.0..100.0] | 4.00 [3.00..5.00] |",
		"| throughput (records/s) | 50.0 [50.0..50.0] | 100.0 [100.0..100.0] | 0.50 [0.50..0.50] |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

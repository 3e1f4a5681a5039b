package main

import (
	"encoding/xml"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the golden files in testdata")

// The fixtures: results.jsonl has two rounds of samsa, samsa-durable, kafka
// and kfake (rotated), one produce and one consume workload, e2e at linger 0
// and 5 ms, a recovery that lost records in one Kafka round and an error;
// its numbers meet some targets and miss others. legacy-durable.jsonl is
// from the driver before samsa-durable existed: meta samsa_durable=true and
// broker "samsa", which must read as Samsa durable. cluster.jsonl is of
// the cluster mode (meta cluster): two rounds of samsa-3, kafka-3 and the
// single samsa node, rotated, a produce workload that meets the goal and
// one that misses it on CPU, an e2e workload and an error (Kafka 3 nodes
// lacks one workload in round 2). tls.jsonl is of the TLS mode (meta tls):
// two rounds of samsa-tls, samsa, kafka-tls and kafka, rotated, one
// produce, one consume and one e2e workload, the TLS brokers' negotiated
// suites on their start lines, and an error (Kafka TLS lacks the consume
// workload in round 2).
var fixtures = []struct{ in, golden string }{
	{"results.jsonl", "README.golden.md"},
	{"legacy-durable.jsonl", "legacy-durable.golden.md"},
	{"cluster.jsonl", "cluster.golden.md"},
	{"tls.jsonl", "tls.golden.md"},
}

// render runs the report on a fixture and returns the output directory.
func render(t *testing.T, fixture string) string {
	t.Helper()
	out := t.TempDir()
	if err := run(filepath.Join("testdata", fixture), out); err != nil {
		t.Fatal(err)
	}
	return out
}

func readme(t *testing.T, fixture string) string {
	t.Helper()
	got, err := os.ReadFile(filepath.Join(render(t, fixture), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(got)
}

// TestReport renders each fixture and compares the markdown with its
// golden file.
func TestReport(t *testing.T) {
	for _, f := range fixtures {
		got := readme(t, f.in)
		golden := filepath.Join("testdata", f.golden)
		if *rewrite {
			if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatal(err)
		}
		if got != string(want) {
			t.Errorf("%s: README.md differs from %s (go test -rewrite to accept):\n%s", f.in, golden, got)
		}
	}
}

// TestSections checks, independently of the golden files, the layout the
// report promises: Targets first, the main tables Samsa (page cache) vs
// Kafka with the client ceiling, then Durable mode; and for a legacy run,
// Samsa durable in the main tables and no Durable mode section.
func TestSections(t *testing.T) {
	doc := readme(t, "results.jsonl")
	order := []string{"## Targets", "## Throughput", "## End-to-end latency", "## Start-up, memory and recovery", "## Durable mode", "## Errors"}
	at := -1
	for _, h := range order {
		i := strings.Index(doc, h)
		if i < 0 || i < at {
			t.Errorf("section %q missing or out of order", h)
		}
		at = i
	}
	for _, want := range []string{
		"| Workload | Samsa records/s | Kafka records/s | Samsa MB/s | Kafka MB/s | Samsa/Kafka | Client ceiling records/s |",
		"| produce 100B p1 acks=1 | 115,000 [110,000..120,000] | 90,000 [80,000..100,000] | 0.780× [0.727..0.833] | 57,500 [55,000..60,000] |",
		"1: samsa, samsa-durable, kafka, kfake; 2: samsa-durable, kafka, kfake, samsa",
		"**6 met, 4 missed**",
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	legacy := readme(t, "legacy-durable.jsonl")
	if strings.Contains(legacy, "## Durable mode") || strings.Contains(legacy, "| Samsa records/s") {
		t.Errorf("legacy run: Samsa's lines must read as Samsa durable")
	}
	for _, want := range []string{"| Workload | Samsa durable records/s | Kafka records/s |", "compare Samsa durable with Kafka"} {
		if !strings.Contains(legacy, want) {
			t.Errorf("legacy report lacks %q", want)
		}
	}
}

// TestTargets checks the verdicts on the fixture's numbers.
func TestTargets(t *testing.T) {
	rep := build(mustLines(t, "results.jsonl"))
	want := map[[2]string]string{
		{"broker CPU per 1M records, Samsa/Kafka", "produce 100B p1 acks=1"}:  "**missed** by 20.0%", // 3.0/5.0
		{"broker CPU per 1M records, Samsa/Kafka", "consume 100B p1"}:         "met (0% to spare)",   // 1/2, at the limit
		{"throughput, Samsa/Kafka", "produce 100B p1 acks=1"}:                 "met (100% to spare)", // 2×
		{"throughput, Samsa/Kafka", "consume 100B p1"}:                        "met (100% to spare)",
		{"end-to-end p99, Samsa/Kafka", "e2e 100B p1 linger=0ms 20000/s"}:     "met (0% to spare)",
		{"end-to-end p99, Samsa/Kafka", "e2e 100B p1 linger=5ms 20000/s"}:     "**missed** by 50.0%",  // 9/12
		{"Samsa RSS idle after start", ""}:                                    "met (65.0% to spare)", // 10 MiB = 10.5 MB
		{"Samsa peak RSS under load (all workloads)", ""}:                     "**missed** by 15.2%",  // 225,000 KiB
		{"Samsa start to first Metadata answer", ""}:                          "met (70.0% to spare)",
		{"durable throughput, Samsa durable/Samsa", "produce 100B p1 acks=1"}: "**missed** by 2.46%", // (0.727+0.833)/2
	}
	got := map[[2]string]string{}
	for _, tg := range rep.targets() {
		got[[2]string{tg.goal, tg.workload}] = tg.result()
	}
	if len(got) != len(want) {
		t.Errorf("%d targets, want %d: %v", len(got), len(want), got)
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s %s: %q, want %q", k[0], k[1], got[k], w)
		}
	}
	// Without page-cache data the durable target has no data.
	for _, tg := range build(mustLines(t, "legacy-durable.jsonl")).targets() {
		if strings.HasPrefix(tg.goal, "durable") && tg.result() != "no data" {
			t.Errorf("legacy: %s: %q, want no data", tg.goal, tg.result())
		}
	}
}

// TestCluster: a cluster-mode run renders as the cluster report only (none
// of the single-node sections or charts), with every node's CPU summed as
// the bench reported it and the largest node's memory.
func TestCluster(t *testing.T) {
	out := render(t, "cluster.jsonl")
	data, err := os.ReadFile(filepath.Join(out, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	order := []string{"## Goal: at least Kafka's throughput at no more than half its CPU", "## Produce throughput, records/s",
		"## acks=all latency at full speed", "## End-to-end latency at a fixed rate (acks=all)",
		"## Broker CPU seconds per million records, summed over the nodes", "## Memory per node and start-up", "## Errors"}
	at := -1
	for _, h := range order {
		i := strings.Index(doc, h)
		if i < 0 || i < at {
			t.Errorf("section %q missing or out of order", h)
		}
		at = i
	}
	for _, lack := range []string{"## Targets", "## Durable mode", "## Start-up, memory and recovery"} {
		if strings.Contains(doc, lack) {
			t.Errorf("cluster report has %q", lack)
		}
	}
	for _, want := range []string{
		"**Met on 1 of 2 produce workloads.**",
		"| produce 1KiB p8 acks=all | 31,500 [30,000..33,000] | 21,000 [20,000..22,000] | 94,500 [90,000..99,000] | 1.50× [1.50..1.50] | 0.333× [0.333..0.333] |",
		"| peak RSS over all workloads, MiB per node | 42.1 [41.1..43.1] | 784 [783..785] |",
		"1: samsa-3, kafka-3, samsa; 2: kafka-3, samsa, samsa-3",
		"| produce 100B p8 acks=1 | 750 [500..1,000] | 500 | 750 [500..1,000] | 1.00× |",
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("cluster report lacks %q", want)
		}
	}
	for _, name := range []string{"throughput-produce.svg", "cpu.svg", "latency-e2e-1.svg"} {
		if _, err := os.Stat(filepath.Join(out, name)); err == nil {
			t.Errorf("cluster report wrote the single-node chart %s", name)
		}
	}
}

// TestTLS: a TLS-mode run renders as the TLS report only, each table with
// the four brokers' medians and the per-round ratios Samsa/Kafka (TLS and
// plaintext) and TLS/plaintext (each broker); a round a broker lacks drops
// out of its ratios.
func TestTLS(t *testing.T) {
	doc := readme(t, "tls.jsonl")
	order := []string{"## Throughput, MB/s", "## Broker CPU seconds per million records",
		"## End-to-end latency at a fixed rate (acks=all), ms", "## Errors"}
	at := -1
	for _, h := range order {
		i := strings.Index(doc, h)
		if i < 0 || i < at {
			t.Errorf("section %q missing or out of order", h)
		}
		at = i
	}
	for _, lack := range []string{"## Targets", "## Durable mode", "## Start-up, memory and recovery", "## Goal"} {
		if strings.Contains(doc, lack) {
			t.Errorf("TLS report has %q", lack)
		}
	}
	for _, want := range []string{
		"Negotiated: Samsa TLS TLSv1.3 TLS_AES_128_GCM_SHA256; Kafka TLS TLSv1.3 TLS_AES_256_GCM_SHA384 |",
		"1: samsa-tls, samsa, kafka-tls, kafka; 2: samsa, kafka-tls, kafka, samsa-tls",
		// MB/s: Samsa TLS 200, 220; Kafka TLS 100, 110 -> 2.00× both rounds;
		// plaintext 400/150, 380/160; TLS/plaintext 0.5, 0.579 and 0.667, 0.6875.
		"| produce 1KiB p1 acks=1 | 210 | 390 | 105 | 155 | 2.00× [2.00..2.00] | 2.52× [2.38..2.67] | 0.539× [0.500..0.579] | 0.677× [0.667..0.688] |",
		// Kafka TLS consumed in round 1 only: 150/400.
		"| consume 1KiB p1 | 310 | 510 | 150 | 410 | 2.00× | 1.24× [1.24..1.25] | 0.608× [0.600..0.615] | 0.375× |",
		// CPU: 4/12, 5/10.
		"| produce 1KiB p1 acks=1 | 4.50 | 2.25 | 11.0 | 8.00 | 0.417× [0.333..0.500] |",
		"| e2e 100B p1 linger=0ms 20000/s | p99 | 2.20 | 1.60 | 22.0 | 15.5 | 0.100× [0.100..0.100] |",
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("TLS report lacks %q", want)
		}
	}
}

func TestClusterGoal(t *testing.T) {
	gs := build(mustLines(t, "cluster.jsonl")).clusterGoals()
	got := map[string]string{}
	for _, g := range gs {
		got[g.workload] = g.result()
	}
	want := map[string]string{"produce 1KiB p8 acks=all": "met", "produce 100B p8 acks=1": "**missed** (CPU)"}
	if len(got) != len(want) || got["produce 1KiB p8 acks=all"] != want["produce 1KiB p8 acks=all"] ||
		got["produce 100B p8 acks=1"] != want["produce 100B p8 acks=1"] {
		t.Errorf("goals %v, want %v", got, want)
	}
	one := func(v float64) summary { return summarize([]float64{v}) }
	for _, c := range []struct {
		throughput, cpu summary
		want            string
	}{
		{one(1), one(0.5), "met"},
		{one(0.9), one(0.4), "**missed** (throughput)"},
		{one(0.9), one(0.6), "**missed** (throughput and CPU)"},
		{summary{}, one(0.4), "no data"},
	} {
		g := clusterGoal{throughput: target{s: c.throughput, limit: 1, unit: "×"},
			cpu: target{s: c.cpu, limit: 0.5, atMost: true, unit: "×"}}
		if r := g.result(); r != c.want {
			t.Errorf("throughput %v, cpu %v: %q, want %q", c.throughput, c.cpu, r, c.want)
		}
	}
}

func TestTargetResult(t *testing.T) {
	one := func(v float64) summary { return summarize([]float64{v}) }
	for _, c := range []struct {
		t    target
		want string
	}{
		{target{s: one(0.62), limit: 0.5, atMost: true}, "**missed** by 24.0%"},
		{target{s: one(0.4), limit: 0.5, atMost: true}, "met (20.0% to spare)"},
		{target{s: one(0.9), limit: 1}, "**missed** by 10.0%"},
		{target{s: one(1.5), limit: 1}, "met (50.0% to spare)"},
		{target{limit: 1}, "no data"},
	} {
		if got := c.t.result(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.t, got, c.want)
		}
	}
}

func mustLines(t *testing.T, fixture string) []line {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", fixture))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines, err := readLines(f)
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

// TestCharts checks that every chart is well-formed SVG with the bars and
// curves the fixtures call for.
func TestCharts(t *testing.T) {
	cases := []struct {
		fixture string
		file    string
		class   string
		count   int
	}{
		// samsa, samsa-durable, kafka, kfake
		{"results.jsonl", "throughput-produce.svg", "bar", 4},
		// samsa, kafka, kfake
		{"results.jsonl", "throughput-consume.svg", "bar", 3},
		// samsa, kafka; 4 workloads
		{"results.jsonl", "cpu.svg", "bar", 8},
		// samsa, samsa-durable, kafka; 2 rounds
		{"results.jsonl", "latency-e2e-2.svg", "round", 6},
		{"results.jsonl", "latency-e2e-2.svg", "median", 3},
		{"legacy-durable.jsonl", "throughput-produce.svg", "bar", 2},
		{"legacy-durable.jsonl", "throughput-consume.svg", "bar", 2},
		{"legacy-durable.jsonl", "cpu.svg", "bar", 6},
		{"legacy-durable.jsonl", "latency-e2e-1.svg", "round", 4},
		{"legacy-durable.jsonl", "latency-e2e-1.svg", "median", 2},
		// samsa-3, kafka-3, samsa; 2 workloads, Kafka's second missing in
		// round 2 still has round 1
		{"cluster.jsonl", "cluster-throughput.svg", "bar", 6},
		// 3 workloads
		{"cluster.jsonl", "cluster-cpu.svg", "bar", 9},
		{"cluster.jsonl", "cluster-latency-e2e-1.svg", "round", 6},
		{"cluster.jsonl", "cluster-latency-e2e-1.svg", "median", 3},
		// samsa-tls, samsa, kafka-tls, kafka; produce and consume, Kafka
		// TLS's consume from round 1 only
		{"tls.jsonl", "tls-throughput.svg", "bar", 8},
		// 3 workloads
		{"tls.jsonl", "tls-cpu.svg", "bar", 12},
	}
	outs := map[string]string{}
	for _, c := range cases {
		if outs[c.fixture] == "" {
			outs[c.fixture] = render(t, c.fixture)
		}
		data, err := os.ReadFile(filepath.Join(outs[c.fixture], c.file))
		if err != nil {
			t.Fatal(err)
		}
		classes, err := svgClasses(string(data))
		if err != nil {
			t.Fatalf("%s: %s: %v", c.fixture, c.file, err)
		}
		if classes[c.class] != c.count {
			t.Errorf("%s: %s: %d elements of class %q, want %d", c.fixture, c.file, classes[c.class], c.class, c.count)
		}
	}
}

// svgClasses parses an SVG document and counts elements by class.
func svgClasses(doc string) (map[string]int, error) {
	dec := xml.NewDecoder(strings.NewReader(doc))
	counts := map[string]int{}
	root := true
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return counts, nil
		}
		if err != nil {
			return nil, err
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if root && se.Name.Local != "svg" {
			return nil, errors.New("root element is " + se.Name.Local)
		}
		root = false
		for _, a := range se.Attr {
			if a.Name.Local == "class" {
				counts[a.Value]++
			}
		}
	}
}

func TestMedianCurve(t *testing.T) {
	got := medianCurve(map[int][]point{
		1: {{50, 1}, {99, 10}},
		2: {{50, 3}, {99, 30}},
		3: {{50, 2}, {99, 20}},
	})
	want := []point{{50, 2}, {99, 20}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("medianCurve = %v, want %v", got, want)
	}
}

func TestSig(t *testing.T) {
	for v, want := range map[float64]string{
		0: "0", 1234567: "1,234,567", 999.6: "1,000", 123.4: "123", 12.34: "12.3",
		1.234: "1.23", 0.99999: "1.00", 0.1234: "0.123", 0.001234: "0.0012", -2500: "-2,500",
	} {
		if got := sig(v); got != want {
			t.Errorf("sig(%g) = %q, want %q", v, got, want)
		}
	}
}

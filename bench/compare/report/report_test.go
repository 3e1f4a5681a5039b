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

var rewrite = flag.Bool("rewrite", false, "rewrite testdata/README.golden.md")

// TestReport renders the fixture (two rounds, both brokers, one workload of
// each kind, a recovery that lost records in one Kafka round and an error)
// and compares the markdown with the golden file.
func TestReport(t *testing.T) {
	out := t.TempDir()
	if err := run(filepath.Join("testdata", "results.jsonl"), out); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(out, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "README.golden.md")
	if *rewrite {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("README.md differs from %s (go test -rewrite to accept):\n%s", golden, got)
	}
}

// TestCharts checks that every chart is well-formed SVG with the bars and
// curves the fixture calls for.
func TestCharts(t *testing.T) {
	out := t.TempDir()
	if err := run(filepath.Join("testdata", "results.jsonl"), out); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		file  string
		class string
		count int
	}{
		{"throughput-produce.svg", "bar", 2},
		{"throughput-consume.svg", "bar", 2},
		{"cpu.svg", "bar", 6},
		{"latency-e2e-1.svg", "round", 4},
		{"latency-e2e-1.svg", "median", 2},
	}
	for _, c := range cases {
		data, err := os.ReadFile(filepath.Join(out, c.file))
		if err != nil {
			t.Fatal(err)
		}
		classes, err := svgClasses(string(data))
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if classes[c.class] != c.count {
			t.Errorf("%s: %d elements of class %q, want %d", c.file, classes[c.class], c.class, c.count)
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

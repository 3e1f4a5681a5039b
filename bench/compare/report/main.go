// Command report turns the results.jsonl of bench/compare/run.sh into a
// markdown report (README.md) and SVG charts in one directory:
//
//	go run ./bench/compare/report -in results.jsonl -out DIR
//
// Every figure is the median over rounds with the min..max beside it. A
// Samsa/Kafka ratio is taken per round, between the two brokers' runs of
// the same round, and then summarised the same way, so it is not the ratio
// of the two medians.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

func main() {
	in := flag.String("in", "", "results.jsonl written by bench/compare/driver")
	out := flag.String("out", "", "directory for README.md and the SVG charts")
	flag.Parse()
	if *in == "" || *out == "" {
		fmt.Fprintln(os.Stderr, "usage: report -in results.jsonl -out DIR")
		os.Exit(2)
	}
	if err := run(*in, *out); err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		os.Exit(1)
	}
}

func run(in, out string) error {
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	lines, err := readLines(f)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	rep := build(lines)
	for name, svg := range rep.charts() {
		if err := os.WriteFile(filepath.Join(out, name), []byte(svg), 0o644); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(out, "README.md"), []byte(rep.markdown()), 0o644)
}

// line is one line of results.jsonl (see bench/compare/driver).
type line struct {
	Kind      string       `json:"kind"`
	Round     int          `json:"round"`
	Broker    string       `json:"broker"`
	Workload  string       `json:"workload"`
	Bench     *benchResult `json:"bench"`
	PeakRSSKB int64        `json:"rss_peak_kb"`
	IdleRSSKB int64        `json:"rss_idle_kb"`
	// The cluster mode's: each process's figures (the ones above are the
	// largest), the topics' replication factor, the time to ready.
	PeakRSSKBNodes []int64 `json:"rss_peak_kb_nodes"`
	IdleRSSKBNodes []int64 `json:"rss_idle_kb_nodes"`
	Replication    int     `json:"replication_factor"`
	Nodes          int     `json:"nodes"`
	ReadyMS        float64 `json:"ready_ms"`
	// TLS is what a TLS broker negotiated with the client (start lines).
	TLS        string         `json:"tls"`
	ConnectMS  float64        `json:"connect_ms"`
	MetadataMS float64        `json:"metadata_ms"`
	ProduceMS  float64        `json:"produce_ms"`
	LogBytes   int64          `json:"log_bytes"`
	Produced   int64          `json:"produced"`
	EndOffsets int64          `json:"end_offsets"`
	Load1      float64        `json:"load1"`
	Time       string         `json:"time"`
	Error      string         `json:"error"`
	Meta       map[string]any `json:"meta"`
}

// benchResult is the part of `samsa bench --json` the report uses.
type benchResult struct {
	Records          int64    `json:"records"`
	RecordsPerSecond float64  `json:"records_per_s"`
	MBPerSecond      float64  `json:"mb_per_s"`
	Latency          *latency `json:"latency_ms"`
	CPUPerMillion    *float64 `json:"broker_cpu_s_per_million_records"`
	// ReplicatedAfter is the replication barrier's time (--wait-replicated).
	ReplicatedAfter *float64 `json:"replicated_after_s"`
}

type latency struct {
	P50         float64 `json:"p50"`
	P99         float64 `json:"p99"`
	P999        float64 `json:"p99_9"`
	Max         float64 `json:"max"`
	Percentiles []struct {
		P  float64 `json:"p"`
		MS float64 `json:"ms"`
	} `json:"percentiles"`
}

func readLines(r io.Reader) ([]line, error) {
	var out []line
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<24)
	for n := 1; sc.Scan(); n++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var l line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		out = append(out, l)
	}
	return out, sc.Err()
}

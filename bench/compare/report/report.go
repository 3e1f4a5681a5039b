package main

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// The pair every ratio compares: ours over theirs.
const (
	ours   = "samsa"
	theirs = "kafka"
)

var displayName = map[string]string{ours: "Samsa", theirs: "Kafka"}

// metric names, per workload and broker.
const (
	mRecords    = "records/s"
	mMB         = "MB/s"
	mCPU        = "cpu s/1M"
	mPeakRSS    = "peak RSS"
	mP50        = "p50"
	mP99        = "p99"
	mP999       = "p99.9"
	mConnect    = "connect"
	mMetadata   = "metadata"
	mProduce    = "produce"
	mIdleRSS    = "idle RSS"
	mRecovered  = "recovered"
	wStart      = "start"
	wRecovery   = "recovery"
	wWholePhase = "all workloads"
)

type key struct{ workload, broker, metric string }

// point is one point of a percentile curve.
type point struct{ p, ms float64 }

type report struct {
	meta      map[string]any
	kinds     map[string]string // workload -> produce, consume, e2e
	workloads []string          // in order of first appearance
	values    map[key]series
	// curves holds the e2e percentile curves: workload -> broker -> round.
	curves  map[string]map[string]map[int][]point
	loads   []float64
	first   string
	last    string
	errors  []line
	logMiB  int64
	rounds  map[int]bool
	brokers []string
	// driverRuns counts the runs whose lines were concatenated; the
	// header describes the first.
	driverRuns int
}

func build(lines []line) *report {
	rep := &report{
		kinds:  map[string]string{},
		values: map[key]series{},
		curves: map[string]map[string]map[int][]point{},
		rounds: map[int]bool{},
	}
	for _, l := range lines {
		if l.Kind == "meta" {
			if rep.meta == nil {
				rep.meta = l.Meta
			}
			rep.driverRuns++
			continue
		}
		rep.loads = append(rep.loads, l.Load1)
		if rep.first == "" {
			rep.first = l.Time
		}
		rep.last = l.Time
		if l.Broker != "" && !slices.Contains(rep.brokers, l.Broker) {
			rep.brokers = append(rep.brokers, l.Broker)
		}
		rep.rounds[l.Round] = true
		rep.add(l)
	}
	return rep
}

func (rep *report) set(workload, broker, metric string, round int, v float64) {
	k := key{workload, broker, metric}
	if rep.values[k] == nil {
		rep.values[k] = series{}
	}
	rep.values[k][round] = v
}

func (rep *report) get(workload, broker, metric string) series {
	return rep.values[key{workload, broker, metric}]
}

func (rep *report) add(l line) {
	switch l.Kind {
	case "error":
		rep.errors = append(rep.errors, l)
	case "start":
		rep.set(wStart, l.Broker, mConnect, l.Round, l.ConnectMS)
		rep.set(wStart, l.Broker, mMetadata, l.Round, l.MetadataMS)
		rep.set(wStart, l.Broker, mIdleRSS, l.Round, float64(l.IdleRSSKB)/1024)
	case "recovery":
		rep.logMiB = l.LogBytes >> 20
		rep.set(wRecovery, l.Broker, mConnect, l.Round, l.ConnectMS)
		rep.set(wRecovery, l.Broker, mMetadata, l.Round, l.MetadataMS)
		rep.set(wRecovery, l.Broker, mProduce, l.Round, l.ProduceMS)
		ok := 0.0
		if l.EndOffsets >= l.Produced+1 { // +1: the probe record
			ok = 1
		}
		rep.set(wRecovery, l.Broker, mRecovered, l.Round, ok)
	case "produce", "consume", "e2e":
		if l.Bench == nil {
			return
		}
		if _, seen := rep.kinds[l.Workload]; !seen {
			rep.kinds[l.Workload] = l.Kind
			rep.workloads = append(rep.workloads, l.Workload)
		}
		b := l.Bench
		rep.set(l.Workload, l.Broker, mRecords, l.Round, b.RecordsPerSecond)
		rep.set(l.Workload, l.Broker, mMB, l.Round, b.MBPerSecond)
		rep.set(l.Workload, l.Broker, mPeakRSS, l.Round, float64(l.PeakRSSKB)/1024)
		whole := rep.get(wWholePhase, l.Broker, mPeakRSS)
		if peak := float64(l.PeakRSSKB) / 1024; whole == nil || peak > whole[l.Round] {
			rep.set(wWholePhase, l.Broker, mPeakRSS, l.Round, peak)
		}
		if b.CPUPerMillion != nil {
			rep.set(l.Workload, l.Broker, mCPU, l.Round, *b.CPUPerMillion)
		}
		if b.Latency != nil {
			rep.set(l.Workload, l.Broker, mP50, l.Round, b.Latency.P50)
			rep.set(l.Workload, l.Broker, mP99, l.Round, b.Latency.P99)
			rep.set(l.Workload, l.Broker, mP999, l.Round, b.Latency.P999)
			if l.Kind == "e2e" {
				rep.addCurve(l)
			}
		}
	}
}

func (rep *report) addCurve(l line) {
	var pts []point
	for _, p := range l.Bench.Latency.Percentiles {
		pts = append(pts, point{p.P, p.MS})
	}
	if len(pts) == 0 {
		return
	}
	if rep.curves[l.Workload] == nil {
		rep.curves[l.Workload] = map[string]map[int][]point{}
	}
	if rep.curves[l.Workload][l.Broker] == nil {
		rep.curves[l.Workload][l.Broker] = map[int][]point{}
	}
	rep.curves[l.Workload][l.Broker][l.Round] = pts
}

func (rep *report) workloadsOf(kind string) []string {
	var ws []string
	for _, w := range rep.workloads {
		if rep.kinds[w] == kind {
			ws = append(ws, w)
		}
	}
	return ws
}

// cell is "median [min..max]", or "median" when there is one round.
func cell(s summary) string {
	switch s.n {
	case 0:
		return "–"
	case 1:
		return sig(s.median)
	}
	return fmt.Sprintf("%s [%s..%s]", sig(s.median), sig(s.min), sig(s.max))
}

// ratioCell is the per-round Samsa/Kafka ratio, as "1.23× [1.10..1.40]".
func ratioCell(s summary) string {
	switch s.n {
	case 0:
		return "–"
	case 1:
		return sig(s.median) + "×"
	}
	return fmt.Sprintf("%s× [%s..%s]", sig(s.median), sig(s.min), sig(s.max))
}

func (rep *report) metaString(k string) string {
	switch v := rep.meta[k].(type) {
	case nil:
		return "?"
	case float64: // every JSON number
		if v == math.Trunc(v) {
			return commas(v)
		}
		return sig(v)
	default:
		return fmt.Sprint(v)
	}
}

func (rep *report) markdown() string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("# Samsa vs Apache Kafka (bench/compare)\n\n")
	w("Generated by `go run ./bench/compare/report` from `results.jsonl` of `bench/compare/run.sh`.\n\n")
	w("| | |\n|---|---|\n")
	w("| Kafka | %s (jars from Maven Central, single-node KRaft broker+controller, heap %s, G1, defaults of kafka-server-start.sh) |\n",
		rep.metaString("kafka_version"), rep.metaString("kafka_heap"))
	durable := "default (acks without fsync)"
	if rep.metaString("samsa_durable") == "true" {
		durable = "`--durable` (acks after a group-committed fsync)"
	}
	w("| Samsa | %s, %s |\n", rep.metaString("samsa_version"), durable)
	w("| machine | %s CPUs, Linux %s, %s, %s |\n", rep.metaString("cpus"), rep.metaString("kernel"),
		rep.metaString("java"), rep.metaString("go"))
	w("| run | %s .. %s, %d round(s), brokers in the order %s each round", rep.first, rep.last,
		len(rep.rounds), strings.Join(rep.brokers, ", "))
	if rep.driverRuns > 1 {
		w(" (lines of %d driver runs; the rows below describe the first)", rep.driverRuns)
	}
	w(" |\n")
	ls := summarize(rep.loads)
	w("| load average (1 min) | %s [%s..%s] over the run |\n", sig(ls.median), sig(ls.min), sig(ls.max))
	w("| workloads | %s records per produce/consume workload, linger %s; e2e: %s records at %s records/s |\n\n",
		rep.metaString("records"), rep.metaString("produce_linger"), rep.metaString("e2e_records"), rep.metaString("e2e_rate"))
	w("Each cell: median [min..max] over rounds. Samsa/Kafka: the ratio within each round, then its median [min..max]; ")
	w("above 1 means Samsa has more of it (better for throughput, worse for latency, CPU, memory and time).\n\n")

	rep.throughputTable(&b)
	rep.ackLatencyTable(&b)
	rep.e2eTable(&b)
	rep.resourceTable(&b)
	rep.lifecycleTable(&b)
	if len(rep.errors) > 0 {
		w("## Errors\n\n")
		for _, e := range rep.errors {
			msg := strings.ReplaceAll(e.Error, "\n", " ")
			if len(msg) > 400 {
				msg = msg[:400] + "..."
			}
			w("- round %d, %s, %s: %s\n", e.Round, e.Broker, e.Workload, msg)
		}
		w("\n")
	}
	return b.String()
}

func (rep *report) throughputTable(b *strings.Builder) {
	fmt.Fprintf(b, "## Throughput\n\n")
	fmt.Fprintf(b, "| Workload | Samsa records/s | Kafka records/s | Samsa MB/s | Kafka MB/s | Samsa/Kafka |\n")
	fmt.Fprintf(b, "|---|---:|---:|---:|---:|---:|\n")
	for _, kind := range []string{"produce", "consume"} {
		for _, wl := range rep.workloadsOf(kind) {
			s, k := rep.get(wl, ours, mRecords), rep.get(wl, theirs, mRecords)
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s |\n", wl, cell(s.summary()), cell(k.summary()),
				sig(rep.get(wl, ours, mMB).summary().median), sig(rep.get(wl, theirs, mMB).summary().median),
				ratioCell(ratio(s, k)))
		}
	}
	fmt.Fprintf(b, "\n![produce throughput](throughput-produce.svg)\n\n![consume throughput](throughput-consume.svg)\n\n")
}

func (rep *report) ackLatencyTable(b *strings.Builder) {
	ws := rep.workloadsOf("produce")
	if len(ws) == 0 {
		return
	}
	fmt.Fprintf(b, "## Produce acknowledgement latency at full speed\n\n")
	fmt.Fprintf(b, "Per record, from hand-off to the client until its ack, while producing as fast as possible ")
	fmt.Fprintf(b, "(so it mostly measures queueing in the client).\n\n")
	fmt.Fprintf(b, "| Workload | Samsa p50 ms | Kafka p50 ms | Samsa p99 ms | Kafka p99 ms | Samsa/Kafka p99 |\n")
	fmt.Fprintf(b, "|---|---:|---:|---:|---:|---:|\n")
	for _, wl := range ws {
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s |\n", wl,
			cell(rep.get(wl, ours, mP50).summary()), cell(rep.get(wl, theirs, mP50).summary()),
			cell(rep.get(wl, ours, mP99).summary()), cell(rep.get(wl, theirs, mP99).summary()),
			ratioCell(ratio(rep.get(wl, ours, mP99), rep.get(wl, theirs, mP99))))
	}
	fmt.Fprintf(b, "\n")
}

func (rep *report) e2eTable(b *strings.Builder) {
	ws := rep.workloadsOf("e2e")
	if len(ws) == 0 {
		return
	}
	fmt.Fprintf(b, "## End-to-end latency at a fixed rate\n\n")
	fmt.Fprintf(b, "From hand-off to the producer until the consumer (same process) reads the record; acks=all.\n\n")
	fmt.Fprintf(b, "| Workload | Percentile | Samsa ms | Kafka ms | Samsa/Kafka |\n|---|---|---:|---:|---:|\n")
	for _, wl := range ws {
		for _, m := range []string{mP50, mP99, mP999} {
			s, k := rep.get(wl, ours, m), rep.get(wl, theirs, m)
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", wl, m, cell(s.summary()), cell(k.summary()), ratioCell(ratio(s, k)))
		}
	}
	fmt.Fprintf(b, "\n")
	for i, wl := range ws {
		fmt.Fprintf(b, "![%s](%s)\n\n", wl, latencyChartName(i))
	}
}

func (rep *report) resourceTable(b *strings.Builder) {
	fmt.Fprintf(b, "## Broker CPU and memory per workload\n\n")
	fmt.Fprintf(b, "CPU: the broker process's user+system seconds during the workload, per million records. ")
	fmt.Fprintf(b, "Peak RSS: VmHWM, reset before each workload (`/proc/PID/clear_refs`).\n\n")
	fmt.Fprintf(b, "| Workload | Samsa CPU s/1M | Kafka CPU s/1M | Samsa/Kafka | Samsa peak RSS MiB | Kafka peak RSS MiB |\n")
	fmt.Fprintf(b, "|---|---:|---:|---:|---:|---:|\n")
	for _, wl := range rep.workloads {
		s, k := rep.get(wl, ours, mCPU), rep.get(wl, theirs, mCPU)
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s |\n", wl, cell(s.summary()), cell(k.summary()), ratioCell(ratio(s, k)),
			cell(rep.get(wl, ours, mPeakRSS).summary()), cell(rep.get(wl, theirs, mPeakRSS).summary()))
	}
	fmt.Fprintf(b, "\n![broker CPU per million records](cpu.svg)\n\n")
}

func (rep *report) lifecycleTable(b *strings.Builder) {
	fmt.Fprintf(b, "## Start-up, memory and recovery\n\n")
	fmt.Fprintf(b, "Times from the fork of the broker process. Recovery: %d MiB of 1 KiB records in one partition ", rep.logMiB)
	fmt.Fprintf(b, "(acks=all), then `kill -9` and a restart on the same directory. The kernel accepts a connection once ")
	fmt.Fprintf(b, "the listener socket is open, which may be before the broker serves requests; the Metadata answer is ")
	fmt.Fprintf(b, "when it does.\n\n")
	fmt.Fprintf(b, "| Metric | Samsa | Kafka | Samsa/Kafka |\n|---|---:|---:|---:|\n")
	row := func(name, workload, metric string) {
		s, k := rep.get(workload, ours, metric), rep.get(workload, theirs, metric)
		if s == nil && k == nil {
			return
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", name, cell(s.summary()), cell(k.summary()), ratioCell(ratio(s, k)))
	}
	row("start to first accepted connection, ms", wStart, mConnect)
	row("start to first Metadata answer, ms", wStart, mMetadata)
	row("RSS idle after start, MiB", wStart, mIdleRSS)
	row("peak RSS over all workloads, MiB", wWholePhase, mPeakRSS)
	row("recovery: to first accepted connection, ms", wRecovery, mConnect)
	row("recovery: to first Metadata answer, ms", wRecovery, mMetadata)
	row("recovery: to first acks=all produce, ms", wRecovery, mProduce)
	if rec := rep.get(wRecovery, ours, mRecovered); rec != nil || rep.get(wRecovery, theirs, mRecovered) != nil {
		count := func(s series) string {
			n := 0
			for _, v := range s {
				n += int(v)
			}
			return fmt.Sprintf("%d of %d", n, len(s))
		}
		fmt.Fprintf(b, "| recovery: every acked record present, rounds | %s | %s | |\n",
			count(rec), count(rep.get(wRecovery, theirs, mRecovered)))
	}
	fmt.Fprintf(b, "\n")
}

func latencyChartName(i int) string { return fmt.Sprintf("latency-e2e-%d.svg", i+1) }

// charts renders every SVG, by file name.
func (rep *report) charts() map[string]string {
	out := map[string]string{}
	bars := func(file, title, metric, kind string) {
		var groups []barGroup
		for _, wl := range rep.workloadsOf(kind) {
			g := barGroup{label: wl}
			for _, br := range []string{ours, theirs} {
				g.bars = append(g.bars, bar{broker: br, s: rep.get(wl, br, metric).summary()})
			}
			groups = append(groups, g)
		}
		if len(groups) > 0 {
			out[file] = barChart(title, groups)
		}
	}
	bars("throughput-produce.svg", "Produce throughput, MB/s (median, whiskers min..max)", mMB, "produce")
	bars("throughput-consume.svg", "Consume throughput, MB/s (median, whiskers min..max)", mMB, "consume")
	var cpu []barGroup
	for _, wl := range rep.workloads {
		g := barGroup{label: wl}
		for _, br := range []string{ours, theirs} {
			g.bars = append(g.bars, bar{broker: br, s: rep.get(wl, br, mCPU).summary()})
		}
		cpu = append(cpu, g)
	}
	if len(cpu) > 0 {
		out["cpu.svg"] = barChart("Broker CPU seconds per million records (lower is better)", cpu)
	}
	for i, wl := range rep.workloadsOf("e2e") {
		out[latencyChartName(i)] = curveChart("End-to-end latency by percentile: "+wl, rep.curves[wl])
	}
	return out
}

package main

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
)

// Broker names in results.jsonl. The main comparison is Samsa in its
// default page-cache mode over Kafka; Samsa durable (--durable) has its own
// section; kfake, an in-memory fake, is the client-only ceiling.
const (
	bSamsa   = "samsa"
	bDurable = "samsa-durable"
	bKafka   = "kafka"
	bKfake   = "kfake"
	// The cluster mode's three-node clusters; bSamsa is the single node
	// (RF 1) there.
	bSamsa3 = "samsa-3"
	bKafka3 = "kafka-3"
	// The TLS mode's brokers with an SSL listener; bSamsa and bKafka are
	// the same brokers in plaintext there.
	bSamsaTLS = "samsa-tls"
	bKafkaTLS = "kafka-tls"
)

var displayName = map[string]string{
	bSamsa: "Samsa", bDurable: "Samsa durable", bKafka: "Kafka", bKfake: "client ceiling (kfake)",
	bSamsa3: "Samsa 3 nodes", bKafka3: "Kafka 3 nodes", bSamsaTLS: "Samsa TLS", bKafkaTLS: "Kafka TLS",
}

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
	mReady      = "ready"
	mReplicated = "replicated after"
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
	// order is the order in which brokers ran in each round.
	order map[int][]string
	// main is the Samsa broker of the main comparison: samsa, or
	// samsa-durable when there is no page-cache data (runs from before
	// the page-cache mode was measured).
	main string
	// driverRuns counts the runs whose lines were concatenated; the
	// header describes the first.
	driverRuns int
	// cluster: the lines are of the driver's cluster mode (meta cluster),
	// rendered as the cluster report.
	cluster bool
	// tls: the lines are of the driver's TLS mode (meta tls), rendered as
	// the TLS report; tlsNegotiated is what each TLS broker chose for the
	// client (protocol and cipher suite), each value once, in order seen.
	tls           bool
	tlsNegotiated map[string][]string
}

func build(lines []line) *report {
	rep := &report{
		kinds:  map[string]string{},
		values: map[key]series{},
		curves: map[string]map[string]map[int][]point{},
		rounds: map[int]bool{},
		order:  map[int][]string{},

		tlsNegotiated: map[string][]string{},
	}
	// legacyDurable: the run's driver predates the samsa-durable broker
	// and ran "samsa" with --durable (meta samsa_durable).
	legacyDurable := false
	for _, l := range lines {
		if l.Kind == "meta" {
			if rep.meta == nil {
				rep.meta = l.Meta
				rep.cluster = l.Meta["cluster"] == true
				rep.tls = l.Meta["tls"] == true
			}
			rep.driverRuns++
			legacyDurable = l.Meta["samsa_durable"] == true
			continue
		}
		if legacyDurable && l.Broker == bSamsa {
			l.Broker = bDurable
		}
		if l.Broker != "" && !slices.Contains(rep.order[l.Round], l.Broker) {
			rep.order[l.Round] = append(rep.order[l.Round], l.Broker)
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
	rep.main = bSamsa
	if !slices.Contains(rep.brokers, bSamsa) && slices.Contains(rep.brokers, bDurable) {
		rep.main = bDurable
	}
	return rep
}

// has reports whether broker has any line other than an error.
func (rep *report) has(broker string) bool {
	for k := range rep.values {
		if k.broker == broker {
			return true
		}
	}
	return false
}

// durableSection reports whether the durable mode is measured besides the
// page-cache mode.
func (rep *report) durableSection() bool { return rep.main == bSamsa && rep.has(bDurable) }

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
		if l.ReadyMS > 0 {
			rep.set(wStart, l.Broker, mReady, l.Round, l.ReadyMS)
		} else {
			rep.set(wStart, l.Broker, mConnect, l.Round, l.ConnectMS)
			rep.set(wStart, l.Broker, mMetadata, l.Round, l.MetadataMS)
		}
		rep.set(wStart, l.Broker, mIdleRSS, l.Round, float64(l.IdleRSSKB)/1024)
		if l.TLS != "" && !slices.Contains(rep.tlsNegotiated[l.Broker], l.TLS) {
			rep.tlsNegotiated[l.Broker] = append(rep.tlsNegotiated[l.Broker], l.TLS)
		}
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
		if b.ReplicatedAfter != nil {
			rep.set(l.Workload, l.Broker, mReplicated, l.Round, *b.ReplicatedAfter*1000)
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
	switch {
	case rep.cluster:
		return rep.clusterMarkdown()
	case rep.tls:
		return rep.tlsMarkdown()
	}
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("# Samsa vs Apache Kafka (bench/compare)\n\n")
	w("Generated by `go run ./bench/compare/report` from `results.jsonl` of `bench/compare/run.sh`.\n\n")
	w("| | |\n|---|---|\n")
	w("| Kafka | %s (jars from Maven Central, single-node KRaft broker+controller, heap %s, G1, defaults of kafka-server-start.sh) |\n",
		rep.metaString("kafka_version"), rep.metaString("kafka_heap"))
	var modes []string
	if rep.has(bSamsa) {
		modes = append(modes, "Samsa: default mode (acks once the write is in the page cache, no fsync)")
	}
	if rep.has(bDurable) {
		modes = append(modes, "Samsa durable: `--durable` (acks after a group-committed fsync)")
	}
	w("| Samsa | %s; %s |\n", rep.metaString("samsa_version"), strings.Join(modes, "; "))
	if rep.has(bKfake) {
		w("| client ceiling | kfake: franz-go's in-memory fake broker in its own process (`test/kfakeserver`), produce and consume only; the closest to a blackhole broker at hand (see Throughput) |\n")
	}
	rep.runRows(&b)
	w("| workloads | %s records per produce/consume workload, linger %s; e2e: %s records at %s records/s |\n\n",
		rep.metaString("records"), rep.metaString("produce_linger"), rep.metaString("e2e_records"), rep.metaString("e2e_rate"))
	w("Each cell: median [min..max] over rounds. %s/Kafka: the ratio within each round, then its median [min..max]; ", rep.name(rep.main))
	w("above 1 means %s has more of it (better for throughput, worse for latency, CPU, memory and time).", rep.name(rep.main))
	if rep.main == bDurable {
		w(" This run measured Samsa only with `--durable`, so the main tables compare Samsa durable with Kafka.")
	}
	w("\n\n")

	rep.targetsTable(&b)
	rep.throughputTable(&b)
	rep.ackLatencyTable(&b)
	rep.e2eTable(&b)
	rep.resourceTable(&b)
	rep.lifecycleTable(&b)
	rep.durableTables(&b)
	rep.errorList(&b)
	return b.String()
}

func (rep *report) errorList(b *strings.Builder) {
	if len(rep.errors) == 0 {
		return
	}
	fmt.Fprintf(b, "## Errors\n\n")
	for _, e := range rep.errors {
		msg := strings.ReplaceAll(e.Error, "\n", " ")
		if len(msg) > 400 {
			msg = msg[:400] + "..."
		}
		fmt.Fprintf(b, "- round %d, %s, %s: %s\n", e.Round, e.Broker, e.Workload, msg)
	}
	fmt.Fprintf(b, "\n")
}

// runRows are the header rows on the machine, the run and the load.
func (rep *report) runRows(b *strings.Builder) {
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	w("| machine | %s CPUs, Linux %s, %s, %s |\n", rep.metaString("cpus"), rep.metaString("kernel"),
		rep.metaString("java"), rep.metaString("go"))
	var orders []string
	for _, r := range slices.Sorted(maps.Keys(rep.order)) {
		orders = append(orders, fmt.Sprintf("%d: %s", r, strings.Join(rep.order[r], ", ")))
	}
	w("| run | %s .. %s, %d round(s); brokers in the order (round: order) %s", rep.first, rep.last,
		len(rep.rounds), strings.Join(orders, "; "))
	if rep.driverRuns > 1 {
		w(" (lines of %d driver runs; the rows below describe the first)", rep.driverRuns)
	}
	w(" |\n")
	ls := summarize(rep.loads)
	w("| load average (1 min) | %s [%s..%s] over the run |\n", sig(ls.median), sig(ls.min), sig(ls.max))
}

// name is a broker's display name.
func (rep *report) name(broker string) string { return displayName[broker] }

func (rep *report) throughputTable(b *strings.Builder) {
	m, k := rep.main, bKafka
	ceiling := rep.has(bKfake)
	fmt.Fprintf(b, "## Throughput\n\n")
	fmt.Fprintf(b, "| Workload | %[1]s records/s | Kafka records/s | %[1]s MB/s | Kafka MB/s | %[1]s/Kafka |", rep.name(m))
	if ceiling {
		fmt.Fprintf(b, " Client ceiling records/s | %[1]s/ceiling | Kafka/ceiling |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n", rep.name(m))
	} else {
		fmt.Fprintf(b, "\n|---|---:|---:|---:|---:|---:|\n")
	}
	for _, kind := range []string{"produce", "consume"} {
		for _, wl := range rep.workloadsOf(kind) {
			s, kf := rep.get(wl, m, mRecords), rep.get(wl, k, mRecords)
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s |", wl, cell(s.summary()), cell(kf.summary()),
				sig(rep.get(wl, m, mMB).summary().median), sig(rep.get(wl, k, mMB).summary().median),
				ratioCell(ratio(s, kf)))
			if ceiling {
				c := rep.get(wl, bKfake, mRecords)
				fmt.Fprintf(b, " %s | %s | %s |", cell(c.summary()), ratioCell(ratio(s, c)), ratioCell(ratio(kf, c)))
			}
			fmt.Fprintf(b, "\n")
		}
	}
	if ceiling {
		fmt.Fprintf(b, "\nClient ceiling: the same client against kfake, which keeps records in memory (no disk, no fsync). ")
		fmt.Fprintf(b, "It is the closest to a blackhole broker at hand but not a perfect one: it serves every request on one ")
		fmt.Fprintf(b, "goroutine, so where a broker beats it (above 1×) kfake, not the client, was the limit.\n")
	}
	fmt.Fprintf(b, "\n![produce throughput](throughput-produce.svg)\n\n![consume throughput](throughput-consume.svg)\n\n")
}

func (rep *report) ackLatencyTable(b *strings.Builder) {
	ws := rep.workloadsOf("produce")
	if len(ws) == 0 {
		return
	}
	m, k := rep.main, bKafka
	fmt.Fprintf(b, "## Produce acknowledgement latency at full speed\n\n")
	fmt.Fprintf(b, "Per record, from hand-off to the client until its ack, while producing as fast as possible ")
	fmt.Fprintf(b, "(so it mostly measures queueing in the client).\n\n")
	fmt.Fprintf(b, "| Workload | %[1]s p50 ms | Kafka p50 ms | %[1]s p99 ms | Kafka p99 ms | %[1]s/Kafka p99 |\n", rep.name(m))
	fmt.Fprintf(b, "|---|---:|---:|---:|---:|---:|\n")
	for _, wl := range ws {
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s |\n", wl,
			cell(rep.get(wl, m, mP50).summary()), cell(rep.get(wl, k, mP50).summary()),
			cell(rep.get(wl, m, mP99).summary()), cell(rep.get(wl, k, mP99).summary()),
			ratioCell(ratio(rep.get(wl, m, mP99), rep.get(wl, k, mP99))))
	}
	fmt.Fprintf(b, "\n")
}

func (rep *report) e2eTable(b *strings.Builder) {
	ws := rep.workloadsOf("e2e")
	if len(ws) == 0 {
		return
	}
	m, k := rep.main, bKafka
	fmt.Fprintf(b, "## End-to-end latency at a fixed rate\n\n")
	fmt.Fprintf(b, "From hand-off to the producer until the consumer (same process) reads the record; acks=all.\n\n")
	fmt.Fprintf(b, "| Workload | Percentile | %[1]s ms | Kafka ms | %[1]s/Kafka |\n|---|---|---:|---:|---:|\n", rep.name(m))
	for _, wl := range ws {
		for _, metric := range []string{mP50, mP99, mP999} {
			s, kf := rep.get(wl, m, metric), rep.get(wl, k, metric)
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", wl, metric, cell(s.summary()), cell(kf.summary()), ratioCell(ratio(s, kf)))
		}
	}
	fmt.Fprintf(b, "\n")
	for i, wl := range ws {
		fmt.Fprintf(b, "![%s](%s)\n\n", wl, latencyChartName(i))
	}
}

func (rep *report) resourceTable(b *strings.Builder) {
	m, k := rep.main, bKafka
	fmt.Fprintf(b, "## Broker CPU and memory per workload\n\n")
	fmt.Fprintf(b, "CPU: the broker process's user+system seconds during the workload, per million records. ")
	fmt.Fprintf(b, "Peak RSS: VmHWM, reset before each workload (`/proc/PID/clear_refs`).\n\n")
	fmt.Fprintf(b, "| Workload | %[1]s CPU s/1M | Kafka CPU s/1M | %[1]s/Kafka | %[1]s peak RSS MiB | Kafka peak RSS MiB |\n", rep.name(m))
	fmt.Fprintf(b, "|---|---:|---:|---:|---:|---:|\n")
	for _, wl := range rep.workloads {
		s, kf := rep.get(wl, m, mCPU), rep.get(wl, k, mCPU)
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s |\n", wl, cell(s.summary()), cell(kf.summary()), ratioCell(ratio(s, kf)),
			cell(rep.get(wl, m, mPeakRSS).summary()), cell(rep.get(wl, k, mPeakRSS).summary()))
	}
	fmt.Fprintf(b, "\n![broker CPU per million records](cpu.svg)\n\n")
}

func (rep *report) lifecycleTable(b *strings.Builder) {
	fmt.Fprintf(b, "## Start-up, memory and recovery\n\n")
	fmt.Fprintf(b, "Times from the fork of the broker process. Recovery: %d MiB of 1 KiB records in one partition ", rep.logMiB)
	fmt.Fprintf(b, "(acks=all), then `kill -9` and a restart on the same directory. The kernel accepts a connection once ")
	fmt.Fprintf(b, "the listener socket is open, which may be before the broker serves requests; the Metadata answer is ")
	fmt.Fprintf(b, "when it does.\n\n")
	rep.lifecycleRows(b, rep.main, bKafka)
}

// lifecycleRows is the start-up, memory and recovery table of a over b.
func (rep *report) lifecycleRows(b *strings.Builder, x, y string) {
	fmt.Fprintf(b, "| Metric | %[1]s | %[2]s | %[1]s/%[2]s |\n|---|---:|---:|---:|\n", rep.name(x), rep.name(y))
	row := func(name, workload, metric string) {
		s, k := rep.get(workload, x, metric), rep.get(workload, y, metric)
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
	if rec := rep.get(wRecovery, x, mRecovered); rec != nil || rep.get(wRecovery, y, mRecovered) != nil {
		count := func(s series) string {
			n := 0
			for _, v := range s {
				n += int(v)
			}
			return fmt.Sprintf("%d of %d", n, len(s))
		}
		fmt.Fprintf(b, "| recovery: every acked record present, rounds | %s | %s | |\n",
			count(rec), count(rep.get(wRecovery, y, mRecovered)))
	}
	fmt.Fprintf(b, "\n")
}

// durableTables compares Samsa durable with Samsa's page-cache mode and
// with Kafka's default (no fsync).
func (rep *report) durableTables(b *strings.Builder) {
	if !rep.durableSection() {
		return
	}
	p, d, k := bSamsa, bDurable, bKafka
	fmt.Fprintf(b, "## Durable mode\n\n")
	fmt.Fprintf(b, "Samsa with `--durable` acknowledges a write only after a group-committed fsync; Kafka (default flush ")
	fmt.Fprintf(b, "policy) and Samsa's default mode acknowledge once it is in the page cache. Ratios are taken within ")
	fmt.Fprintf(b, "each round, as above.\n\n")
	if ws := rep.workloadsOf("produce"); len(ws) > 0 {
		ceiling := rep.has(bKfake)
		fmt.Fprintf(b, "| Workload | Samsa records/s | Samsa durable records/s | durable/Samsa | Kafka records/s | durable/Kafka |")
		if ceiling {
			fmt.Fprintf(b, " Client ceiling records/s |\n|---|---:|---:|---:|---:|---:|---:|\n")
		} else {
			fmt.Fprintf(b, "\n|---|---:|---:|---:|---:|---:|\n")
		}
		for _, wl := range ws {
			ps, ds, ks := rep.get(wl, p, mRecords), rep.get(wl, d, mRecords), rep.get(wl, k, mRecords)
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s |", wl, cell(ps.summary()), cell(ds.summary()),
				ratioCell(ratio(ds, ps)), cell(ks.summary()), ratioCell(ratio(ds, ks)))
			if ceiling {
				fmt.Fprintf(b, " %s |", cell(rep.get(wl, bKfake, mRecords).summary()))
			}
			fmt.Fprintf(b, "\n")
		}
		fmt.Fprintf(b, "\n")
	}
	if ws := rep.workloadsOf("e2e"); len(ws) > 0 {
		fmt.Fprintf(b, "End-to-end latency at a fixed rate (acks=all):\n\n")
		fmt.Fprintf(b, "| Workload | Percentile | Samsa ms | Samsa durable ms | Kafka ms | durable/Kafka |\n|---|---|---:|---:|---:|---:|\n")
		for _, wl := range ws {
			for _, metric := range []string{mP50, mP99, mP999} {
				ds, ks := rep.get(wl, d, metric), rep.get(wl, k, metric)
				fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s |\n", wl, metric, cell(rep.get(wl, p, metric).summary()),
					cell(ds.summary()), cell(ks.summary()), ratioCell(ratio(ds, ks)))
			}
		}
		fmt.Fprintf(b, "\n")
	}
	fmt.Fprintf(b, "Broker CPU seconds per million records:\n\n")
	fmt.Fprintf(b, "| Workload | Samsa CPU s/1M | Samsa durable CPU s/1M | durable/Samsa | Kafka CPU s/1M | durable/Kafka |\n")
	fmt.Fprintf(b, "|---|---:|---:|---:|---:|---:|\n")
	for _, wl := range rep.workloads {
		ps, ds, ks := rep.get(wl, p, mCPU), rep.get(wl, d, mCPU), rep.get(wl, k, mCPU)
		if ds == nil {
			continue
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s |\n", wl, cell(ps.summary()), cell(ds.summary()),
			ratioCell(ratio(ds, ps)), cell(ks.summary()), ratioCell(ratio(ds, ks)))
	}
	fmt.Fprintf(b, "\nStart-up, memory and recovery:\n\n")
	rep.lifecycleRows(b, d, k)
}

func latencyChartName(i int) string { return fmt.Sprintf("latency-e2e-%d.svg", i+1) }

// chartBrokers are those of list with data for some workload of kind (all
// workloads if kind is empty).
func (rep *report) chartBrokers(kind, metric string, list ...string) []string {
	var out []string
	for _, br := range list {
		if slices.Contains(out, br) {
			continue
		}
		for _, wl := range rep.workloads {
			if (kind == "" || rep.kinds[wl] == kind) && rep.get(wl, br, metric) != nil {
				out = append(out, br)
				break
			}
		}
	}
	return out
}

// charts renders every SVG, by file name.
func (rep *report) charts() map[string]string {
	switch {
	case rep.cluster:
		return rep.clusterCharts()
	case rep.tls:
		return rep.tlsCharts()
	}
	out := map[string]string{}
	bars := func(file, title, metric, kind string, brokers []string) {
		var groups []barGroup
		for _, wl := range rep.workloads {
			if kind != "" && rep.kinds[wl] != kind {
				continue
			}
			g := barGroup{label: wl}
			for _, br := range brokers {
				g.bars = append(g.bars, bar{broker: br, s: rep.get(wl, br, metric).summary()})
			}
			groups = append(groups, g)
		}
		if len(groups) > 0 && len(brokers) > 0 {
			out[file] = barChart(title, groups, brokers)
		}
	}
	bars("throughput-produce.svg", "Produce throughput, MB/s (median, whiskers min..max)", mMB, "produce",
		rep.chartBrokers("produce", mMB, rep.main, bDurable, bKafka, bKfake))
	bars("throughput-consume.svg", "Consume throughput, MB/s (median, whiskers min..max)", mMB, "consume",
		rep.chartBrokers("consume", mMB, rep.main, bKafka, bKfake))
	bars("cpu.svg", "Broker CPU seconds per million records (lower is better)", mCPU, "",
		rep.chartBrokers("", mCPU, rep.main, bKafka))
	for i, wl := range rep.workloadsOf("e2e") {
		out[latencyChartName(i)] = curveChart("End-to-end latency by percentile: "+wl, rep.curves[wl],
			rep.chartBrokers("e2e", mP99, rep.main, bDurable, bKafka))
	}
	return out
}

// Command driver runs the bench/compare workloads against Samsa (page cache
// and --durable), Apache Kafka and optionally kfake (the client ceiling) in
// alternation and appends one JSON line per measurement to
// -out/results.jsonl. bench/compare/run.sh builds and fetches what it needs
// and calls it; bench/compare/report turns the lines into tables and charts.
//
// Each round starts every broker in turn on a fresh data directory, the
// order rotated by one each round (A B C, B C A, C A B, ...), twice: once for
// start-up, idle memory and the throughput and latency workloads, once to
// fill a log, kill -9 it and time the recovery. kfake runs only the produce
// and consume workloads. Every workload is the same `samsa bench` client run
// against each broker.
//
// With -cluster the brokers are clusters of three combined nodes on this
// machine, Samsa (samsa-3) and Kafka (kafka-3), with topics of replication
// factor 3 and min ISR 2, against the single Samsa node (RF 1), each running
// the produce and end-to-end workloads once per round (clusterPhase); CPU is
// summed over every process of a cluster, memory read per process.
//
// With -tls Samsa and Kafka run twice per round, with an SSL client
// listener (samsa-tls, kafka-tls: a throwaway CA and broker certificate
// made at the start) and in plaintext, the main phase only; the client is
// the same `samsa bench` with --tls --tls-ca.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

type options struct {
	samsaBin       string
	kfakeBin       string
	java           string
	kafkaLibs      string
	log4j          string
	heap           string
	out            string
	work           string
	rounds         int
	firstRound     int
	brokers        []string
	records        int64
	e2eRecords     int64
	e2eRate        float64
	recoveryBytes  int64
	produceLinger  time.Duration
	startTimeout   time.Duration
	samsaVersion   string
	skipThroughput bool
	skipRecovery   bool
	keepLogs       bool
	cluster        bool
	tls            bool
	// kafkaCipherSuites is ssl.cipher.suites of kafka-tls; empty: Kafka's
	// default, which lets the JVM choose (TLS_AES_256_GCM_SHA384 where Go,
	// serving Samsa, chooses TLS_AES_128_GCM_SHA256 for the same client).
	kafkaCipherSuites string
}

// result is one line of results.jsonl. Kind is meta, start, produce,
// consume, e2e, recovery or error; bench holds `samsa bench --json` as is.
type result struct {
	Kind       string `json:"kind"`
	Round      int    `json:"round,omitempty"`
	Broker     string `json:"broker,omitempty"`
	Workload   string `json:"workload,omitempty"`
	RecordSize int    `json:"record_size,omitempty"`
	Partitions int    `json:"partitions,omitempty"`
	// Replication is the topic's replication factor in the cluster mode.
	Replication int `json:"replication_factor,omitempty"`
	// Nodes is how many broker processes a cluster-mode line measured.
	Nodes     int             `json:"nodes,omitempty"`
	Acks      string          `json:"acks,omitempty"`
	LingerMS  *float64        `json:"linger_ms,omitempty"`
	Rate      float64         `json:"rate,omitempty"`
	Bench     json.RawMessage `json:"bench,omitempty"`
	PeakRSSKB int64           `json:"rss_peak_kb,omitempty"`
	IdleRSSKB int64           `json:"rss_idle_kb,omitempty"`
	// PeakRSSKBNodes and IdleRSSKBNodes are each process's figure for a
	// cluster, in node order; PeakRSSKB and IdleRSSKB are then the
	// largest of them.
	PeakRSSKBNodes []int64 `json:"rss_peak_kb_nodes,omitempty"`
	IdleRSSKBNodes []int64 `json:"rss_idle_kb_nodes,omitempty"`
	// ReadyMS is the time from a cluster's first process start until every
	// node lists every node as a broker.
	ReadyMS float64 `json:"ready_ms,omitempty"`
	// TLS is, on a TLS broker's start line, the protocol version and
	// cipher suite it chose for the client, e.g. "TLSv1.3
	// TLS_AES_128_GCM_SHA256".
	TLS        string         `json:"tls,omitempty"`
	ConnectMS  float64        `json:"connect_ms,omitempty"`
	MetadataMS float64        `json:"metadata_ms,omitempty"`
	ProduceMS  float64        `json:"produce_ms,omitempty"`
	LogBytes   int64          `json:"log_bytes,omitempty"`
	Produced   int64          `json:"produced,omitempty"`
	EndOffsets int64          `json:"end_offsets,omitempty"`
	Load1      float64        `json:"load1"`
	Time       string         `json:"time"`
	Error      string         `json:"error,omitempty"`
	Meta       map[string]any `json:"meta,omitempty"`
}

func main() {
	var o options
	var brokers string
	flag.StringVar(&o.samsaBin, "samsa", "bin/samsa", "samsa binary: the broker and the load generator")
	flag.StringVar(&o.kfakeBin, "kfake", "", "test/kfakeserver binary, for the kfake broker")
	flag.StringVar(&o.java, "java", "java", "java binary for Kafka")
	flag.StringVar(&o.kafkaLibs, "kafka-libs", "", "directory of Kafka's jars")
	flag.StringVar(&o.log4j, "log4j", "bench/compare/kafka/log4j2.properties", "Kafka's log4j2 config")
	flag.StringVar(&o.heap, "kafka-heap", "1G", "Kafka's -Xmx and -Xms (kafka-server-start.sh: 1G)")
	flag.StringVar(&o.out, "out", "", "output directory (results.jsonl is appended to)")
	flag.StringVar(&o.work, "work", "", "directory for data dirs (default: a new temp dir, removed at the end)")
	flag.IntVar(&o.rounds, "rounds", 3, "rounds; each runs every broker once")
	flag.IntVar(&o.firstRound, "first-round", 1, "number of the first round (to add rounds to an existing results.jsonl)")
	flag.StringVar(&brokers, "brokers", "samsa,samsa-durable,kafka,kfake",
		"brokers (samsa, samsa-durable, kafka, kfake) in the order of the first round; each round starts one later")
	flag.Int64Var(&o.records, "records", 1_000_000, "records per produce and consume workload")
	flag.Int64Var(&o.e2eRecords, "e2e-records", 200_000, "records per end-to-end latency workload")
	flag.Float64Var(&o.e2eRate, "e2e-rate", 20_000, "records/s of the end-to-end latency workloads")
	flag.Int64Var(&o.recoveryBytes, "recovery-bytes", 1<<30, "bytes of log (1 KiB records) before the kill -9")
	flag.DurationVar(&o.produceLinger, "linger", 5*time.Millisecond, "linger of the produce workloads (Kafka 4 producer default)")
	flag.DurationVar(&o.startTimeout, "start-timeout", 5*time.Minute, "how long a start or recovery may take")
	flag.StringVar(&o.samsaVersion, "samsa-version", "", "Samsa version or commit, for the report")
	flag.BoolVar(&o.skipThroughput, "skip-throughput", false, "skip the start, throughput and latency phase")
	flag.BoolVar(&o.skipRecovery, "skip-recovery", false, "skip the recovery phase")
	flag.BoolVar(&o.keepLogs, "keep-logs", false, "copy each broker's log to -out/logs/")
	flag.BoolVar(&o.cluster, "cluster", false,
		"cluster mode: -brokers default "+clusterBrokers+", each running only the cluster workloads (produce, e2e)")
	flag.BoolVar(&o.tls, "tls", false,
		"TLS mode: -brokers default "+tlsBrokers+" (samsa-tls and kafka-tls with an SSL listener), no recovery phase")
	flag.StringVar(&o.kafkaCipherSuites, "kafka-ssl-cipher-suites", "",
		"ssl.cipher.suites of kafka-tls, e.g. TLS_AES_128_GCM_SHA256 to match what Samsa negotiates (default: Kafka's)")
	flag.Parse()
	brokersSet := false
	flag.Visit(func(f *flag.Flag) { brokersSet = brokersSet || f.Name == "brokers" })
	switch {
	case o.cluster && !brokersSet:
		brokers = clusterBrokers
	case o.tls && !brokersSet:
		brokers = tlsBrokers
	}
	o.brokers = strings.Split(brokers, ",")
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "driver:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	if o.out == "" {
		return fmt.Errorf("-out is required")
	}
	if o.tls && o.cluster {
		return fmt.Errorf("-tls and -cluster: the TLS mode runs single nodes only")
	}
	if o.tls {
		o.skipRecovery = true // recovery is disk work, the same with TLS
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(o.out, "results.jsonl"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	if o.work == "" {
		if o.work, err = os.MkdirTemp("", "samsa-compare-"); err != nil {
			return err
		}
		defer os.RemoveAll(o.work)
	}
	kafka := kafkaKind{java: o.java, libs: o.kafkaLibs, log4j: o.log4j, heap: o.heap}
	kinds := map[string]brokerKind{
		"samsa":         samsaKind{bin: o.samsaBin},
		"samsa-durable": samsaKind{bin: o.samsaBin, durable: true},
		"kafka":         kafka,
		"kfake":         kfakeKind{bin: o.kfakeBin},
	}
	known := "samsa, samsa-durable, kafka, kfake"
	if o.tls {
		files, err := newTLSFiles(filepath.Join(o.work, "tls"))
		if err != nil {
			return err
		}
		kafka.tlsFiles, kafka.cipherSuites = files, o.kafkaCipherSuites
		kinds["samsa-tls"] = samsaKind{bin: o.samsaBin, tlsFiles: files}
		kinds["kafka-tls"] = kafka
		known = "samsa-tls, kafka-tls, " + known
	}
	seen := map[string]bool{}
	for _, name := range o.brokers {
		switch {
		case o.cluster:
			if seen[name] {
				return fmt.Errorf("broker %q listed twice", name)
			}
		case kinds[name] == nil && strings.HasSuffix(name, "-tls"):
			return fmt.Errorf("broker %q needs -tls", name)
		case kinds[name] == nil:
			return fmt.Errorf("unknown broker %q (%s)", name, known)
		case seen[name]:
			return fmt.Errorf("broker %q listed twice", name)
		case name == "kfake" && o.kfakeBin == "":
			return fmt.Errorf("broker kfake needs -kfake (go build ./test/kfakeserver)")
		}
		seen[name] = true
	}
	d := &driver{o: o, out: f}
	if o.cluster {
		return d.runClusters(kinds)
	}
	d.emit(result{Kind: "meta", Meta: d.meta()})
	for r := o.firstRound; r < o.firstRound+o.rounds; r++ {
		for _, name := range roundOrder(o.brokers, r) {
			kind := kinds[name]
			if !o.skipThroughput {
				d.phase(r, kind, "main", d.mainPhase)
			}
			if !o.skipRecovery && kind.full() {
				d.phase(r, kind, "recovery", d.recoveryPhase)
			}
		}
	}
	return nil
}

// tlsBrokers are the TLS mode's brokers by default: Samsa and Kafka, each
// with TLS and then without, so that TLS and plaintext run side by side on
// the same machine state. kfake, the client ceiling, is left out.
const tlsBrokers = "samsa-tls,samsa,kafka-tls,kafka"

// roundOrder is the order of round r (counted from 1): brokers rotated left
// by r-1, so that no broker always runs first and rounds added later with
// -first-round continue the rotation.
func roundOrder(brokers []string, r int) []string {
	n := len(brokers)
	k := ((r-1)%n + n) % n
	return append(append([]string{}, brokers[k:]...), brokers[:k]...)
}

type driver struct {
	o   options
	out *os.File
}

func (d *driver) emit(r result) {
	r.Load1, r.Time = loadAvg(), time.Now().UTC().Format(time.RFC3339)
	line, _ := json.Marshal(r)
	d.out.Write(append(line, '\n'))
	d.out.Sync()
}

func (d *driver) logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

func (d *driver) meta() map[string]any {
	host, _ := os.Hostname()
	kernel, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	javaVer, _ := exec.Command(d.o.java, "-version").CombinedOutput()
	m := map[string]any{
		"kafka_version":   kafkaVersion(d.o.kafkaLibs),
		"samsa_version":   d.o.samsaVersion,
		"kafka_heap":      d.o.heap,
		"java":            strings.SplitN(strings.TrimSpace(string(javaVer)), "\n", 2)[0],
		"go":              runtime.Version(),
		"cpus":            runtime.NumCPU(),
		"kernel":          strings.TrimSpace(string(kernel)),
		"host":            host,
		"rounds":          d.o.rounds,
		"brokers":         d.o.brokers,
		"records":         d.o.records,
		"e2e_records":     d.o.e2eRecords,
		"e2e_rate":        d.o.e2eRate,
		"recovery_bytes":  d.o.recoveryBytes,
		"produce_linger":  d.o.produceLinger.String(),
		"started":         time.Now().UTC().Format(time.RFC3339),
		"work_filesystem": d.o.work,
		"cluster":         d.o.cluster,
		"tls":             d.o.tls,
	}
	if d.o.kafkaCipherSuites != "" {
		m["kafka_ssl_cipher_suites"] = d.o.kafkaCipherSuites
	}
	return m
}

// phase runs fn on a broker started on a fresh directory and removes the
// directory afterwards; any failure becomes an error line.
func (d *driver) phase(round int, kind brokerKind, what string, fn func(round int, b *broker) error) {
	dir := filepath.Join(d.o.work, fmt.Sprintf("r%d-%s-%s", round, kind.name(), what))
	d.logf("round %d: %s: %s phase", round, kind.name(), what)
	b, err := newBroker(kind, dir)
	if err == nil {
		err = fn(round, b)
		b.stop(time.Minute)
	}
	if err != nil {
		d.logf("round %d: %s: %s: %v", round, kind.name(), what, err)
		d.emit(result{Kind: "error", Round: round, Broker: kind.name(), Workload: what, Error: err.Error()})
		if b != nil {
			_ = os.WriteFile(filepath.Join(d.o.out, fmt.Sprintf("r%d-%s-%s-broker.log.tail", round, kind.name(), what)), []byte(b.logTail()), 0o644)
		}
	}
	if d.o.keepLogs {
		if data, err := os.ReadFile(filepath.Join(dir, "broker.log")); err == nil {
			_ = os.MkdirAll(filepath.Join(d.o.out, "logs"), 0o755)
			_ = os.WriteFile(filepath.Join(d.o.out, "logs", filepath.Base(dir)+".log"), data, 0o644)
		}
	}
	os.RemoveAll(dir)
}

// mainPhase: start-up, idle RSS, a warm-up, then every throughput and
// latency workload.
func (d *driver) mainPhase(round int, b *broker) error {
	name := b.kind.name()
	if err := b.start(); err != nil {
		return err
	}
	connect, err := waitConnect(b, d.o.startTimeout)
	if err != nil {
		return err
	}
	if _, ok := b.kind.(kfakeKind); ok {
		if err := kfakeListening(b, d.o.startTimeout); err != nil {
			return err
		}
	}
	cl, err := newClient(b)
	if err != nil {
		return err
	}
	meta, err := probe(b, d.o.startTimeout, "metadata", metadataOK(cl))
	cl.Close()
	if err != nil {
		return err
	}
	if b.kind.full() {
		time.Sleep(2 * time.Second) // let start-up work settle before reading idle memory
		idle, err := procStatusKB(b.pid(), "VmRSS")
		if err != nil {
			return err
		}
		st := result{Kind: "start", Round: round, Broker: name, ConnectMS: ms(connect), MetadataMS: ms(meta), IdleRSSKB: idle}
		if f := b.kind.tls(); f != nil {
			if st.TLS, err = f.negotiated(b.addr()); err != nil {
				return err
			}
		}
		d.emit(st)
		d.logf("round %d: %s: connect %.0fms, metadata %.0fms, idle RSS %d MiB %s", round, name, ms(connect), ms(meta), idle>>10, st.TLS)
	}

	// Warm-up, not recorded: the JVM compiles its hot paths during the
	// first seconds of load, and the first workload should not pay for it.
	warm := max(d.o.records/10, 10_000)
	if _, err := d.bench(append([]string{"bench", "produce", "--bootstrap-server", b.addr(), "--json", "--topic", "warmup",
		"--records", strconv.FormatInt(warm, 10), "--record-size", "1024", "--partitions", "8"}, b.clientArgs()...)); err != nil {
		return err
	}
	if _, err := d.bench(append([]string{"bench", "consume", "--bootstrap-server", b.addr(), "--json", "--topic", "warmup",
		"--records", strconv.FormatInt(warm, 10)}, b.clientArgs()...)); err != nil {
		return err
	}
	for _, size := range []int{100, 1024} {
		for _, parts := range []int{1, 8} {
			var topic string
			for _, acks := range []string{"1", "all"} {
				topic = fmt.Sprintf("t%d-p%d-acks%s", size, parts, acks)
				w := workload{kind: "produce", size: size, partitions: parts, acks: acks, linger: d.o.produceLinger,
					topic: topic, records: d.o.records}
				if err := d.runWorkload(round, b, w); err != nil {
					return err
				}
			}
			w := workload{kind: "consume", size: size, partitions: parts, topic: topic, records: d.o.records}
			if err := d.runWorkload(round, b, w); err != nil {
				return err
			}
		}
	}
	if !b.kind.full() {
		return nil
	}
	for _, linger := range []time.Duration{0, 5 * time.Millisecond} {
		w := workload{kind: "e2e", size: 100, partitions: 1, acks: "all", linger: linger, rate: d.o.e2eRate,
			topic: fmt.Sprintf("e2e-linger%d", linger.Milliseconds()), records: d.o.e2eRecords}
		if err := d.runWorkload(round, b, w); err != nil {
			return err
		}
	}
	return nil
}

type workload struct {
	kind        string // produce, consume, e2e
	size        int
	partitions  int
	replication int // of the topic it creates; 0: the broker's default
	// waitReplicated ends a produce run with samsa bench's replication
	// barrier (--wait-replicated), so its CPU includes the followers'.
	waitReplicated bool
	acks           string
	linger         time.Duration
	rate           float64
	topic          string
	records        int64
}

// name identifies a workload across brokers and rounds.
func (w workload) name() string {
	size := fmt.Sprintf("%dB", w.size)
	if w.size == 1024 {
		size = "1KiB"
	}
	switch w.kind {
	case "produce":
		return fmt.Sprintf("produce %s p%d acks=%s", size, w.partitions, w.acks)
	case "consume":
		return fmt.Sprintf("consume %s p%d", size, w.partitions)
	}
	return fmt.Sprintf("e2e %s p%d linger=%dms %.0f/s", size, w.partitions, w.linger.Milliseconds(), w.rate)
}

// e2ePercentiles are the points of the latency curves in the report.
const e2ePercentiles = "50,75,90,95,99,99.5,99.9,99.99,100"

// runWorkload runs one `samsa bench` and records its result with the peak
// RSS each broker process reached during it. A failed workload is an error
// line; only a dead broker stops the phase.
func (d *driver) runWorkload(round int, b servers, w workload) error {
	pids := b.pids()
	args := []string{"bench", w.kind, "--bootstrap-server", b.bootstrap(), "--json", "--topic", w.topic,
		"--records", strconv.FormatInt(w.records, 10), "--broker-pid", joinInts(pids)}
	args = append(args, b.clientArgs()...)
	if w.kind != "consume" {
		args = append(args, "--record-size", strconv.Itoa(w.size), "--partitions", strconv.Itoa(w.partitions),
			"--acks", w.acks, "--linger", w.linger.String())
		if w.replication > 0 {
			args = append(args, "--replication-factor", strconv.Itoa(w.replication))
		}
		if w.waitReplicated {
			args = append(args, "--wait-replicated")
		}
	}
	if w.kind == "e2e" {
		args = append(args, "--rate", strconv.FormatFloat(w.rate, 'f', -1, 64), "--percentiles", e2ePercentiles)
	}
	if w.kind == "produce" {
		args = append(args, "--percentiles", e2ePercentiles)
	}
	for _, pid := range pids {
		if err := resetPeakRSS(pid); err != nil {
			return err
		}
	}
	out, err := d.bench(args)
	peaks, perr := readEach(pids, "VmHWM")
	r := result{Kind: w.kind, Round: round, Broker: b.name(), Workload: w.name(), RecordSize: w.size,
		Partitions: w.partitions, Acks: w.acks, Rate: w.rate, PeakRSSKB: slices.Max(peaks)}
	if w.replication > 0 {
		r.Replication, r.Nodes = w.replication, len(pids)
	}
	if len(pids) > 1 {
		r.PeakRSSKBNodes = peaks
	}
	if w.kind != "consume" {
		lms := float64(w.linger) / float64(time.Millisecond)
		r.LingerMS = &lms
	}
	if err != nil {
		r.Kind, r.Error = "error", err.Error()
		d.emit(r)
		d.logf("round %d: %s: %s: %v", round, b.name(), w.name(), err)
		if !b.alive() || perr != nil {
			return fmt.Errorf("%w:\n%s", errExited, b.logTail())
		}
		return nil
	}
	r.Bench = out
	d.emit(r)
	var s struct {
		RecordsPerS float64 `json:"records_per_s"`
		MBPerS      float64 `json:"mb_per_s"`
		Latency     *struct {
			P99 float64 `json:"p99"`
		} `json:"latency_ms"`
	}
	_ = json.Unmarshal(out, &s)
	line := fmt.Sprintf("round %d: %s: %-32s %9.0f rec/s %7.1f MB/s", round, b.name(), w.name(), s.RecordsPerS, s.MBPerS)
	if s.Latency != nil {
		line += fmt.Sprintf("  p99 %.1fms", s.Latency.P99)
	}
	d.logf("%s  peak RSS %d MiB", line, r.PeakRSSKB>>10)
	return nil
}

// bench runs the load generator and returns its JSON line.
func (d *driver) bench(args []string) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, d.o.samsaBin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("samsa %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	line := bytes.TrimSpace(stdout.Bytes())
	if !json.Valid(line) {
		return nil, fmt.Errorf("samsa %s: not JSON: %q", strings.Join(args, " "), line)
	}
	return line, nil
}

// recoveryPhase fills one partition with recoveryBytes of 1 KiB records,
// kills the broker with SIGKILL and times the restart: to the first
// accepted connection, the first Metadata answer and the first acks=all
// produce. It also checks that every acknowledged record is still there.
func (d *driver) recoveryPhase(round int, b *broker) error {
	name := b.kind.name()
	if err := b.start(); err != nil {
		return err
	}
	if _, err := waitConnect(b, d.o.startTimeout); err != nil {
		return err
	}
	const topic = "recovery"
	records := d.o.recoveryBytes / 1024
	fill, err := d.bench(append([]string{"bench", "produce", "--bootstrap-server", b.addr(), "--json", "--topic", topic,
		"--records", strconv.FormatInt(records, 10), "--record-size", "1024", "--partitions", "1", "--acks", "all",
		"--linger", d.o.produceLinger.String()}, b.clientArgs()...))
	if err != nil {
		return err
	}
	var filled struct {
		Records int64 `json:"records"`
	}
	_ = json.Unmarshal(fill, &filled)
	b.kill9()
	if err := b.start(); err != nil {
		return err
	}
	connect, err := waitConnect(b, d.o.startTimeout)
	if err != nil {
		return err
	}
	cl, err := newClient(b, kgo.RequiredAcks(kgo.AllISRAcks()), kgo.DisableIdempotentWrite(), kgo.ProducerLinger(0))
	if err != nil {
		return err
	}
	defer cl.Close()
	meta, err := probe(b, d.o.startTimeout, "metadata", metadataOK(cl))
	if err != nil {
		return err
	}
	produce, err := probe(b, d.o.startTimeout, "produce", produceOK(cl, topic))
	if err != nil {
		return err
	}
	ends, err := endOffsetSum(cl, topic)
	if err != nil {
		return err
	}
	r := result{Kind: "recovery", Round: round, Broker: name, Workload: "recovery", LogBytes: records * 1024,
		Produced: filled.Records, EndOffsets: ends, ConnectMS: ms(connect), MetadataMS: ms(meta), ProduceMS: ms(produce),
		Bench: fill}
	d.emit(r)
	d.logf("round %d: %s: recovery of %d MiB: connect %.0fms, metadata %.0fms, produce %.0fms; end offset %d of %d acked (+1 probe)",
		round, name, r.LogBytes>>20, r.ConnectMS, r.MetadataMS, r.ProduceMS, ends, filled.Records)
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The brokers a run may measure.
const (
	brokerSamsa = "samsa"
	brokerKafka = "kafka"
)

var allBrokers = []string{brokerSamsa, brokerKafka}

// How a trial's group starts at offset 0 of the backlog (-start), and
// what a trial with -start config does when the broker refuses the group
// config (-fallback).
const (
	// startConfig: produce the backlog, set share.auto.offset.reset to
	// earliest on the group, start the consumers.
	startConfig = "config"
	// startPrime: one consumer joins the empty topic (the group's
	// share-partition starts at its high watermark, 0) and leaves, then
	// the backlog is produced and the consumers start: the same backlog
	// as startConfig, with the default "latest".
	startPrime = "prime"
	// startLive: the consumers join the empty topic and the backlog is
	// produced while they consume; the clock starts with the produce.
	startLive = "live"
	// fallbackNever: a refused group config fails the run.
	fallbackNever = "never"
)

type options struct {
	samsa      string
	java       string
	kafkaLibs  string
	log4j      string
	kafkaHeap  string
	kafkaProps []string
	out        string
	brokers    []string
	consumers  []int
	records    int
	warmup     int
	valueBytes int
	runs       int
	timeout    time.Duration
	settle     time.Duration
	start      string
	fallback   string
}

func main() {
	var o options
	var brokers, consumers, kafkaProps, render string
	flag.StringVar(&o.samsa, "samsa", "bin/samsa", "the samsa binary")
	flag.StringVar(&o.java, "java", "java", "the java command (Kafka)")
	flag.StringVar(&o.kafkaLibs, "kafka-libs", "", "Apache Kafka's jars (bench/compare's kafka-libs directory; run.sh fetches them)")
	flag.StringVar(&o.log4j, "log4j", "bench/compare/kafka/log4j2.properties", "Kafka's log4j2 configuration")
	flag.StringVar(&o.kafkaHeap, "kafka-heap", "1G", "Kafka's -Xmx and -Xms (kafka-server-start.sh's default)")
	flag.StringVar(&kafkaProps, "kafka-props", "", "extra Kafka server properties, key=value, comma-separated")
	flag.StringVar(&o.out, "out", "", "a directory for logs, broker data, results.json and results.md (required)")
	flag.StringVar(&brokers, "brokers", strings.Join(allBrokers, ","), "which brokers, comma-separated: samsa, kafka")
	flag.StringVar(&consumers, "consumers", "1,4,16", "the consumer counts, comma-separated")
	flag.IntVar(&o.records, "records", 500_000, "records in the backlog (N)")
	flag.IntVar(&o.warmup, "warmup", 50_000, "records of an unrecorded one-consumer trial on each fresh broker first (0: none)")
	flag.IntVar(&o.valueBytes, "value-bytes", 100, "bytes per record value")
	flag.IntVar(&o.runs, "runs", 3, "runs, each with fresh brokers")
	flag.DurationVar(&o.timeout, "timeout", 10*time.Minute, "the longest one trial's consumption may take")
	flag.DurationVar(&o.settle, "settle", 3*time.Second, "with -start prime or live, the pause between the consumers being assigned the partition and the produce")
	flag.StringVar(&o.start, "start", startConfig, "how the group starts at the backlog's first offset: config (share.auto.offset.reset=earliest on the group), prime (a consumer joins the empty topic first and leaves), live (the consumers join the empty topic, the backlog is produced while they consume)")
	flag.StringVar(&o.fallback, "fallback", startLive, "with -start config, when the broker refuses the group config: live, prime (as -start) or never (fail)")
	flag.StringVar(&render, "render", "", "only write the report of this results.json (with -start as it ran) to results.md beside it")
	flag.Parse()
	if render != "" {
		if err := rerender(render, o.start); err != nil {
			fmt.Fprintln(os.Stderr, "bench-share:", err)
			os.Exit(1)
		}
		return
	}
	o.brokers = strings.Split(brokers, ",")
	if kafkaProps != "" {
		o.kafkaProps = strings.Split(kafkaProps, ",")
	}
	var err error
	if o.consumers, err = parseCounts(consumers); err == nil {
		err = run(o)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-share:", err)
		os.Exit(1)
	}
}

// parseCounts reads -consumers.
func parseCounts(s string) ([]int, error) {
	var cs []int
	for _, f := range strings.Split(s, ",") {
		c, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || c < 1 {
			return nil, fmt.Errorf("-consumers: %q is not a positive count", f)
		}
		cs = append(cs, c)
	}
	return cs, nil
}

func (o options) check() error {
	if o.out == "" {
		return fmt.Errorf("-out is required")
	}
	for _, b := range o.brokers {
		switch b {
		case brokerSamsa:
		case brokerKafka:
			if o.kafkaLibs == "" {
				return fmt.Errorf("-kafka-libs is needed for broker kafka")
			}
		default:
			return fmt.Errorf("-brokers: unknown broker %q (%s)", b, strings.Join(allBrokers, ", "))
		}
	}
	switch o.start {
	case startConfig, startPrime, startLive:
	default:
		return fmt.Errorf("-start: %q is not config, prime or live", o.start)
	}
	if o.start == startPrime && slices.Contains(o.brokers, brokerKafka) {
		// Seen with 4.4.0: the measured consumers got nothing of the
		// backlog produced after the priming member left.
		return fmt.Errorf("-start prime does not work on Kafka 4.4 (its group starts again at the high watermark once the priming member left): use config or live")
	}
	switch o.fallback {
	case startLive, startPrime, fallbackNever:
	default:
		return fmt.Errorf("-fallback: %q is not live, prime or never", o.fallback)
	}
	if o.records < 1 || o.valueBytes < 1 || o.runs < 1 || o.warmup < 0 {
		return fmt.Errorf("-records, -value-bytes and -runs must be at least 1")
	}
	return nil
}

func run(o options) error {
	if err := o.check(); err != nil {
		return err
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	// An interrupt stops the broker of the moment (each runs in a
	// process group of its own, so a ^C does not reach it) and exits.
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	var (
		mu      sync.Mutex
		current *server
	)
	go func() {
		<-ctx.Done()
		mu.Lock()
		defer mu.Unlock()
		if current != nil {
			fmt.Fprintf(os.Stderr, "bench-share: interrupted; stopping %s\n", current.kind)
			current.stop()
			os.Exit(1)
		}
	}()
	var results []trial
	for r := 1; r <= o.runs; r++ {
		// Alternate the order so no broker always runs first in a round.
		order := slices.Clone(o.brokers)
		if r%2 == 0 {
			slices.Reverse(order)
		}
		for _, b := range order {
			srv, err := startServer(ctx, o, b, filepath.Join(o.out, fmt.Sprintf("%s-%d", b, r)))
			if err != nil {
				return fmt.Errorf("%s run %d: %w", b, r, err)
			}
			mu.Lock()
			current = srv
			mu.Unlock()
			fmt.Fprintf(os.Stderr, "%s run %d on %s\n", b, r, srv.addr)
			if o.warmup > 0 {
				// Not recorded: the JVM compiles its hot paths, both
				// brokers open their share coordinator's partitions.
				w := o
				w.records = o.warmup
				t, err := runTrial(ctx, w, srv, 0, 1)
				if err != nil {
					srv.stop()
					return fmt.Errorf("%s run %d, warm-up: %w (broker log %s)", b, r, err, srv.log)
				}
				fmt.Fprintf(os.Stderr, "%s run %d, warm-up: %s\n", b, r, t)
			}
			for _, c := range o.consumers {
				t, err := runTrial(ctx, o, srv, r, c)
				if err != nil {
					srv.stop()
					return fmt.Errorf("%s run %d, %d consumers: %w (broker log %s)", b, r, c, err, srv.log)
				}
				fmt.Fprintf(os.Stderr, "%s run %d, %d consumers: %s\n", b, r, c, t)
				results = append(results, t)
				if err := writeJSON(filepath.Join(o.out, "results.json"), results); err != nil {
					srv.stop()
					return err
				}
			}
			mu.Lock()
			current = nil
			srv.stop()
			mu.Unlock()
		}
	}
	var md strings.Builder
	report(&md, o, results)
	if err := os.WriteFile(filepath.Join(o.out, "results.md"), []byte(md.String()), 0o644); err != nil {
		return err
	}
	fmt.Print(md.String())
	return nil
}

func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// rerender writes the report of a results.json again, its options taken
// from the trials.
func rerender(path, start string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var results []trial
	if err := json.Unmarshal(data, &results); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if len(results) == 0 {
		return fmt.Errorf("%s: no trials", path)
	}
	o := options{start: start, records: results[0].Records, valueBytes: results[0].ValueBytes}
	for _, t := range results {
		if !slices.Contains(o.brokers, t.Broker) {
			o.brokers = append(o.brokers, t.Broker)
		}
		if !slices.Contains(o.consumers, t.Consumers) {
			o.consumers = append(o.consumers, t.Consumers)
		}
		o.runs = max(o.runs, t.Run)
	}
	var md strings.Builder
	report(&md, o, results)
	return os.WriteFile(filepath.Join(filepath.Dir(path), "results.md"), []byte(md.String()), 0o644)
}

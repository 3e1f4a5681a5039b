package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/bench/internal/procstat"
)

type options struct {
	samsa      string
	samsaApp   string
	java       string
	javaOpts   string
	classpath  string
	log4j      string
	out        string
	runtimes   []string
	topologies []string
	records    int
	partitions int
	runs       int
	commitMs   int
	cacheBytes int
	timeout    time.Duration
}

func main() {
	var o options
	var runtimes, topologies string
	flag.StringVar(&o.samsa, "samsa", "bin/samsa", "the samsa binary (the broker)")
	flag.StringVar(&o.samsaApp, "samsa-app", "", "Samsa's side: a program taking Bench.java's arguments (TOPOLOGY PROPERTIES INPUT OUTPUT)")
	flag.StringVar(&o.java, "java", "java", "the java command")
	flag.StringVar(&o.javaOpts, "java-opts", "-Xms256M -Xmx1G -server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -Djava.awt.headless=true",
		"JVM options of the Kafka Streams application")
	flag.StringVar(&o.classpath, "classpath", "", "Bench.java's classes and jars (run.sh builds them)")
	flag.StringVar(&o.log4j, "log4j", "bench/streams/java/log4j2.properties", "the Java application's log4j2 configuration")
	flag.StringVar(&o.out, "out", "", "a directory for logs, state and results.json (required)")
	flag.StringVar(&runtimes, "runtimes", "java", "which runtimes, comma-separated: samsa, java")
	flag.StringVar(&topologies, "topologies", "wordcount,windowed", "which topologies, comma-separated: wordcount, windowed")
	flag.IntVar(&o.records, "records", 1_000_000, "input records per topology (N)")
	flag.IntVar(&o.partitions, "partitions", 4, "partitions of each input topic")
	flag.IntVar(&o.runs, "runs", 3, "runs per runtime and topology, each a fresh application")
	flag.IntVar(&o.commitMs, "commit-ms", 1000, "commit.interval.ms of both runtimes (the end is seen at a commit)")
	flag.IntVar(&o.cacheBytes, "cache-bytes", 10<<20, "statestore.cache.max.bytes of both runtimes (Kafka's default 10 MiB)")
	flag.DurationVar(&o.timeout, "timeout", 10*time.Minute, "the longest one run may take")
	flag.Parse()
	o.runtimes = strings.Split(runtimes, ",")
	o.topologies = strings.Split(topologies, ",")
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "bench-streams:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	if o.out == "" {
		return fmt.Errorf("-out is required")
	}
	for _, rt := range o.runtimes {
		switch {
		case rt == "java" && o.classpath == "":
			return fmt.Errorf("-classpath is needed for the java runtime")
		case rt == "samsa" && o.samsaApp == "":
			return fmt.Errorf("-samsa-app is needed for the samsa runtime")
		case rt != "java" && rt != "samsa":
			return fmt.Errorf("-runtimes: unknown runtime %q (samsa, java)", rt)
		}
	}
	for _, topo := range o.topologies {
		if topo != "wordcount" && topo != "windowed" {
			return fmt.Errorf("-topologies: unknown topology %q (wordcount, windowed)", topo)
		}
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	ctx := context.Background()
	b, err := startBroker(ctx, o.samsa, filepath.Join(o.out, "broker"))
	if err != nil {
		return err
	}
	defer b.stop()
	for _, topo := range o.topologies {
		start := time.Now()
		if err := produceInput(ctx, b, topo, o.records, o.partitions); err != nil {
			return fmt.Errorf("input of %s: %w", topo, err)
		}
		fmt.Fprintf(os.Stderr, "%s: %d records in %d partitions of %s (%.1fs)\n", topo, o.records, o.partitions, inputTopic(topo), time.Since(start).Seconds())
	}
	var results []trial
	for _, topo := range o.topologies {
		for r := 1; r <= o.runs; r++ {
			// Alternate the order so neither runtime always runs on the
			// warmer (or busier) machine.
			order := o.runtimes
			if r%2 == 0 {
				order = reversed(order)
			}
			for _, rt := range order {
				t, err := runTrial(ctx, o, b, rt, topo, r)
				if err != nil {
					return fmt.Errorf("%s %s run %d: %w", rt, topo, r, err)
				}
				fmt.Fprintf(os.Stderr, "%s %s run %d: %s\n", rt, topo, r, t)
				results = append(results, t)
			}
		}
	}
	if err := writeJSON(filepath.Join(o.out, "results.json"), results); err != nil {
		return err
	}
	report(os.Stdout, o, results)
	return nil
}

func reversed(s []string) []string {
	r := make([]string, len(s))
	for i, v := range s {
		r[len(s)-1-i] = v
	}
	return r
}

func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

func inputTopic(topology string) string { return "bench-" + topology + "-in" }

// produceInput writes the topology's input once; every run reads all of it.
// Word count: lines of 10 words drawn from 10,000 (skewed, as text is),
// keyed by line number. Windowed: 1,000 keys, 8-byte values, timestamps
// rising 1 ms per record with a few records up to 5 s out of order (within
// grace), so windows close as the input goes.
func produceInput(ctx context.Context, b *broker, topology string, n, partitions int) error {
	topic := inputTopic(topology)
	resp, err := b.admin.CreateTopic(ctx, int32(partitions), 1, map[string]*string{"retention.ms": ptr("-1")}, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		return err
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.addr), kgo.DefaultProduceTopic(topic),
		kgo.ProducerBatchMaxBytes(1<<20), kgo.ProducerLinger(5*time.Millisecond))
	if err != nil {
		return err
	}
	defer cl.Close()
	rng := rand.New(rand.NewPCG(19, 19))
	zipf := rand.NewZipf(rng, 1.1, 1, 9_999)
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	errs := make(chan error, 1)
	for i := range n {
		r := &kgo.Record{Key: []byte(strconv.Itoa(i))}
		switch topology {
		case "wordcount":
			var line strings.Builder
			for w := range 10 {
				if w > 0 {
					line.WriteByte(' ')
				}
				fmt.Fprintf(&line, "word%d", zipf.Uint64())
			}
			r.Value = []byte(line.String())
			r.Timestamp = base.Add(time.Duration(i) * time.Millisecond)
		case "windowed":
			r.Key = []byte("key" + strconv.Itoa(rng.IntN(1000)))
			r.Value = binary.BigEndian.AppendUint64(nil, uint64(rng.IntN(100)))
			ts := time.Duration(i) * time.Millisecond
			if rng.IntN(100) == 0 {
				ts -= time.Duration(rng.IntN(5000)) * time.Millisecond
			}
			r.Timestamp = base.Add(ts)
		}
		cl.Produce(ctx, r, func(_ *kgo.Record, err error) {
			if err != nil {
				select {
				case errs <- err:
				default:
				}
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		return err
	}
	select {
	case err := <-errs:
		return err
	default:
		return nil
	}
}

func ptr(s string) *string { return &s }

type broker struct {
	*process
	addr  string
	admin *kadm.Client
}

// startBroker runs one `samsa serve` (procstat.StartBroker).
func startBroker(ctx context.Context, bin, dir string) (*broker, error) {
	sb, err := procstat.StartBroker(ctx, bin, dir)
	if err != nil {
		return nil, err
	}
	return &broker{process: sb.Process, addr: sb.Addr, admin: sb.Admin}, nil
}

func (b *broker) stop() {
	b.admin.Close()
	b.process.Stop(10 * time.Second)
}

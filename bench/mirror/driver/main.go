package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The modes a run may mirror with: Samsa's three and MirrorMaker 2's
// default (at least once).
const (
	modeTranslate = "translate" // samsa mirror, MirrorMaker 2's translate mode, at least once
	modeEOS       = "eos"       // samsa mirror, B.exactly.once.source.support = enabled
	modePreserve  = "preserve"  // samsa mirror, samsa.offset.preserving.enabled = true
	modeMM2       = "mm2"       // Apache Kafka's MirrorMaker 2, its defaults
)

var allModes = []string{modeTranslate, modeEOS, modePreserve, modeMM2}

type options struct {
	samsa      string
	java       string
	javaOpts   string
	libs       string
	log4j      string
	out        string
	modes      []string
	records    int
	partitions int
	valueBytes int
	runs       int
	rate       int
	live       time.Duration
	tasksMax   int
	timeout    time.Duration
	lagLog     bool
	settle     time.Duration
}

func main() {
	var o options
	var modes string
	flag.StringVar(&o.samsa, "samsa", "bin/samsa", "the samsa binary (brokers and samsa mirror)")
	flag.StringVar(&o.java, "java", "java", "the java command")
	// kafka-run-class.sh's JVM options with connect-mirror-maker.sh's heap.
	flag.StringVar(&o.javaOpts, "java-opts", "-Xms256M -Xmx2G -server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent -Djava.awt.headless=true",
		"JVM options of MirrorMaker 2 (default: connect-mirror-maker.sh's)")
	flag.StringVar(&o.libs, "libs", "", "MirrorMaker 2's jars (test/kafkaref's mirror-libs directory; run.sh fetches them)")
	flag.StringVar(&o.log4j, "log4j", "test/kafkaref/log4j2.properties", "MirrorMaker 2's log4j2 configuration")
	flag.StringVar(&o.out, "out", "", "a directory for logs, broker data, results.json and results.md (required)")
	flag.StringVar(&modes, "modes", strings.Join(allModes, ","), "which mirrors, comma-separated: translate, eos, preserve (samsa mirror), mm2")
	flag.IntVar(&o.records, "records", 1_000_000, "records preloaded on the source (N)")
	flag.IntVar(&o.partitions, "partitions", 4, "partitions of the source topics")
	flag.IntVar(&o.valueBytes, "value-bytes", 100, "bytes per record value")
	flag.IntVar(&o.runs, "runs", 3, "runs per mode, each with a fresh target cluster")
	flag.IntVar(&o.rate, "rate", 20_000, "records/s produced to the source during the lag phase")
	flag.DurationVar(&o.live, "live", 20*time.Second, "how long the lag phase produces")
	flag.DurationVar(&o.settle, "settle", 5*time.Second, "the pause between the end of the backlog and the lag phase")
	flag.IntVar(&o.tasksMax, "tasks-max", 4, "tasks.max in mm2.properties")
	flag.DurationVar(&o.timeout, "timeout", 10*time.Minute, "the longest the backlog of one run may take")
	flag.BoolVar(&o.lagLog, "lag-log", false, "write each live record's produce time and lag to <out>/<mode>-<run>/lags.csv")
	flag.Parse()
	o.modes = strings.Split(modes, ",")
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "bench-mirror:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	if o.out == "" {
		return fmt.Errorf("-out is required")
	}
	for _, m := range o.modes {
		switch m {
		case modeTranslate, modeEOS, modePreserve:
		case modeMM2:
			if o.libs == "" {
				return fmt.Errorf("-libs is needed for mode mm2")
			}
		default:
			return fmt.Errorf("-modes: unknown mode %q (%s)", m, strings.Join(allModes, ", "))
		}
	}
	if o.records < 1 || o.partitions < 1 || o.valueBytes < 1 || o.runs < 1 || o.rate < 100 {
		return fmt.Errorf("-records, -partitions, -value-bytes and -runs must be at least 1, -rate at least 100")
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	ctx := context.Background()
	a, err := startBroker(ctx, o.samsa, filepath.Join(o.out, "source-A"))
	if err != nil {
		return fmt.Errorf("source broker: %w", err)
	}
	defer a.stop()
	if err := a.createTopic(ctx, backlogTopic, int32(o.partitions)); err != nil {
		return fmt.Errorf("create %s: %w", backlogTopic, err)
	}
	start := time.Now()
	if err := preload(ctx, a.addr, o); err != nil {
		return fmt.Errorf("preload: %w", err)
	}
	fmt.Fprintf(os.Stderr, "source A on %s: %d records of %d bytes in %s (%d partitions), produced in %v\n",
		a.addr, o.records, o.valueBytes, backlogTopic, o.partitions, time.Since(start).Round(time.Millisecond))
	var results []trial
	for r := 1; r <= o.runs; r++ {
		// Alternate the order so no mode always runs first in a round.
		order := o.modes
		if r%2 == 0 {
			order = reversed(order)
		}
		for _, m := range order {
			t, err := runTrial(ctx, o, a, m, r)
			if err != nil {
				return fmt.Errorf("%s run %d: %w", m, r, err)
			}
			fmt.Fprintf(os.Stderr, "%s run %d: %s\n", m, r, t)
			results = append(results, t)
			if err := writeJSON(filepath.Join(o.out, "results.json"), results); err != nil {
				return err
			}
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

func reversed(s []string) []string {
	r := make([]string, len(s))
	for i, v := range s {
		r[len(s)-1-i] = v
	}
	return r
}

// backlogTopic is the preloaded source topic.
const backlogTopic = "bench"

// preload produces N records to the backlog topic, round robin over its
// partitions: a distinct key each and a value of random letters and digits
// (a fixed seed), uncompressed (Kafka's producer default), acks=all.
func preload(ctx context.Context, addr string, o options) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerLinger(5*time.Millisecond),
		kgo.MaxBufferedRecords(100_000))
	if err != nil {
		return err
	}
	defer cl.Close()
	rng := rand.New(rand.NewPCG(20, 20))
	errc := make(chan error, 1)
	for i := range o.records {
		r := &kgo.Record{Topic: backlogTopic, Partition: int32(i % o.partitions),
			Key: fmt.Appendf(nil, "k%09d", i), Value: randomValue(rng, o.valueBytes)}
		cl.Produce(ctx, r, func(_ *kgo.Record, err error) {
			if err != nil {
				select {
				case errc <- err:
				default:
				}
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		return err
	}
	select {
	case err := <-errc:
		return err
	default:
		return nil
	}
}

const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// randomValue is n letters and digits, which compress about as little as
// text does, not as a run of one byte.
func randomValue(rng *rand.Rand, n int) []byte {
	v := make([]byte, n)
	for i := range v {
		v[i] = alphabet[rng.IntN(len(alphabet))]
	}
	return v
}

func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

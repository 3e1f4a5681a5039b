package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"
)

type options struct {
	samsa     string
	java      string
	javaOpts  string
	libs      string
	log4j     string
	out       string
	runtimes  []string
	lines     int
	lineBytes int
	runs      int
	batchSize int
	compress  string
	flushMs   int
	timeout   time.Duration
	profile   bool
}

func main() {
	var o options
	var runtimes string
	flag.StringVar(&o.samsa, "samsa", "bin/samsa", "the samsa binary (broker and samsa connect)")
	flag.StringVar(&o.java, "java", "java", "the java command")
	// kafka-run-class.sh's JVM options with connect-standalone.sh's heap.
	flag.StringVar(&o.javaOpts, "java-opts", "-Xms256M -Xmx2G -server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent -Djava.awt.headless=true",
		"JVM options of the Java worker (default: connect-standalone.sh's)")
	flag.StringVar(&o.libs, "libs", "", "the Java worker's jars (test/compat/connect/java-worker.sh fetches them)")
	flag.StringVar(&o.log4j, "log4j", "test/compat/connect/log4j2.properties", "the Java worker's log4j2 configuration")
	flag.StringVar(&o.out, "out", "", "a directory for the files, logs and results.json (required)")
	flag.StringVar(&runtimes, "runtimes", "samsa,java", "which workers, comma-separated: samsa, java")
	flag.IntVar(&o.lines, "lines", 1_000_000, "lines in the input file (N)")
	flag.IntVar(&o.lineBytes, "line-bytes", 100, "bytes per line, newline included")
	flag.IntVar(&o.runs, "runs", 3, "runs per runtime (R), each with a fresh worker and topic")
	flag.IntVar(&o.batchSize, "batch-size", 2000, "FileStreamSource's batch.size")
	flag.StringVar(&o.compress, "producer-compression", "none", "the workers' producer.compression.type (none is Kafka's default); empty leaves each runtime's default")
	flag.IntVar(&o.flushMs, "offset-flush-ms", 1000, "the workers' offset.flush.interval.ms")
	flag.DurationVar(&o.timeout, "timeout", 10*time.Minute, "the longest one run may take")
	flag.BoolVar(&o.profile, "cpuprofile", false, "write a CPU profile of each samsa connect run (SAMSA_CPUPROFILE) into -out")
	flag.Parse()
	o.runtimes = strings.Split(runtimes, ",")
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "bench-connect:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	if o.out == "" {
		return fmt.Errorf("-out is required")
	}
	if o.lineBytes < 10 {
		return fmt.Errorf("-line-bytes %d: at least 10 (a line number and a newline)", o.lineBytes)
	}
	for _, rt := range o.runtimes {
		if rt != "samsa" && rt != "java" {
			return fmt.Errorf("-runtimes: unknown runtime %q (samsa, java)", rt)
		}
		if rt == "java" && o.libs == "" {
			return fmt.Errorf("-libs is needed for the java runtime")
		}
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	input := filepath.Join(o.out, "input.txt")
	if err := writeInput(input, o.lines, o.lineBytes); err != nil {
		return err
	}
	ctx := context.Background()
	b, err := startBroker(ctx, o.samsa, filepath.Join(o.out, "broker"))
	if err != nil {
		return err
	}
	defer b.stop()
	fmt.Fprintf(os.Stderr, "broker on %s; %d lines of %d bytes in %s\n", b.addr, o.lines, o.lineBytes, input)
	var results []trial
	for r := 1; r <= o.runs; r++ {
		// Alternate the order so neither runtime always runs on the
		// warmer (or busier) machine.
		order := o.runtimes
		if r%2 == 0 {
			order = reversed(order)
		}
		for _, rt := range order {
			t, err := runTrial(ctx, o, b, rt, r, input)
			if err != nil {
				return fmt.Errorf("%s run %d: %w", rt, r, err)
			}
			fmt.Fprintf(os.Stderr, "%s run %d: %s\n", rt, r, t)
			results = append(results, t)
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

// writeInput writes n distinct lines of lineBytes bytes each: the line's
// number, so a duplicate or a lost or reordered line shows when the output
// is compared with it, then random letters and digits (from a fixed seed),
// which compress about as little as text does, not as a run of one byte.
func writeInput(path string, n, lineBytes int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := newBufWriter(f)
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	rng := rand.New(rand.NewPCG(18, 18))
	for i := range n {
		num := fmt.Sprintf("%09d ", i)
		if len(num) >= lineBytes {
			f.Close()
			return fmt.Errorf("-line-bytes %d is too short for line number %d", lineBytes, i)
		}
		w.WriteString(num)
		for range lineBytes - 1 - len(num) {
			w.WriteByte(alphabet[rng.IntN(len(alphabet))])
		}
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// sameFile reports how the output differs from the input: "" when they are
// equal byte for byte (so line for line, no line lost or doubled).
func sameFile(input, output string) (string, error) {
	a, err := os.Open(input)
	if err != nil {
		return "", err
	}
	defer a.Close()
	b, err := os.Open(output)
	if err != nil {
		return "", err
	}
	defer b.Close()
	ra, rb := newBufReader(a), newBufReader(b)
	for line := 1; ; line++ {
		la, errA := ra.ReadString('\n')
		lb, errB := rb.ReadString('\n')
		if la != lb {
			return fmt.Sprintf("line %d: input %q, output %q", line, strings.TrimSpace(la), strings.TrimSpace(lb)), nil
		}
		if errA == io.EOF && errB == io.EOF {
			return "", nil
		}
		if errA != nil && errA != io.EOF {
			return "", errA
		}
		if errB != nil && errB != io.EOF {
			return "", errB
		}
	}
}

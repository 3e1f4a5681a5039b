package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/samsa-io/samsa/streams"
	"github.com/samsa-io/samsa/streams/serde"
)

func main() {
	if len(os.Args) != 5 {
		fmt.Fprintln(os.Stderr, "usage: samsa-app wordcount|windowed PROPERTIES INPUT_TOPIC OUTPUT_TOPIC")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2], os.Args[3], os.Args[4]); err != nil {
		fmt.Println("ERROR", err)
		os.Exit(1)
	}
}

func run(topology, propsPath, input, output string) error {
	props, err := readProperties(propsPath)
	if err != nil {
		return err
	}
	cfg, err := streams.ParseConfig(props)
	if err != nil {
		return err
	}
	var topo *streams.Topology
	switch topology {
	case "wordcount":
		topo, err = wordCount(input, output)
	case "windowed":
		topo, err = windowedCount(input, output)
	default:
		return fmt.Errorf("unknown topology %s: wordcount or windowed", topology)
	}
	if err != nil {
		return err
	}
	if dir := os.Getenv("BENCH_STREAMS_PROFILE_DIR"); dir != "" {
		stop, err := profile(filepath.Join(dir, cfg.ApplicationID+".cpu.pprof"))
		if err != nil {
			return err
		}
		defer stop()
	}
	app, err := streams.New(topo, cfg)
	if err != nil {
		return err
	}
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer cancel()
	if err := app.Start(ctx); err != nil {
		return err
	}
	if err := announce(ctx, app); err != nil {
		_ = app.Close()
		return err
	}
	select {
	case <-ctx.Done():
	case <-app.Done():
	}
	if err := app.Close(); err != nil {
		return err
	}
	return nil
}

// announce prints RUNNING when the application first reaches it, as
// Bench.java's state listener does; the library has no listener, so it
// polls (a 5 ms step is well under the driver's 50 ms).
func announce(ctx context.Context, app *streams.App) error {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		switch app.State() {
		case streams.Running:
			fmt.Println("RUNNING")
			return nil
		case streams.Error, streams.NotRunning:
			return fmt.Errorf("application stopped before RUNNING: %v", app.Err())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// readProperties reads the driver's properties file: key=value lines, #
// and ! comments (the subset of java.util.Properties the driver writes;
// a line it cannot read is an error, not skipped).
func readProperties(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	props := map[string]string{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("%s:%d: no '=' in %q", path, n, line)
		}
		props[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return props, sc.Err()
}

// nonWord is Java's \W: Go's RE2 \W is the same ASCII class [^0-9A-Za-z_].
var nonWord = regexp.MustCompile(`\W+`)

// wordCount is Bench.wordCount: lines split on \W+ in lower case, counted
// per word; String keys and values in, String keys and Long counts out.
func wordCount(input, output string) (*streams.Topology, error) {
	b := streams.NewBuilder()
	lines := streams.From(b, []string{input}, streams.Consumed[string, string]{Key: serde.String(), Value: serde.String()})
	words := streams.FlatMapValues(lines, func(_ string, line string) []string {
		parts := nonWord.Split(strings.ToLower(line), -1)
		out := parts[:0]
		for _, w := range parts {
			if w != "" {
				out = append(out, w)
			}
		}
		return out
	})
	counts := streams.GroupBy(words, func(_, w string) string { return w }, streams.Grouped[string, string]{Key: serde.String(), Value: serde.String()}).
		Count(streams.Materialized[string, int64]{Key: serde.String(), Value: serde.Int64()})
	counts.ToStream().To(output, streams.Produced[string, int64]{Key: serde.String(), Value: serde.Int64()})
	return b.Build()
}

// windowedCount is Bench.windowedCount: per key, tumbling one-minute
// windows with 10 s of grace, written keyed key@start/end.
func windowedCount(input, output string) (*streams.Topology, error) {
	b := streams.NewBuilder()
	in := streams.From(b, []string{input}, streams.Consumed[string, int64]{Key: serde.String(), Value: serde.Int64()})
	windowed := in.GroupByKey(streams.Grouped[string, int64]{Key: serde.String(), Value: serde.Int64()}).
		WindowedBy(streams.OfSizeAndGrace(time.Minute, 10*time.Second))
	counts := streams.WindowedCount(windowed, streams.Materialized[string, int64]{Key: serde.String(), Value: serde.Int64()})
	flat := streams.Map(counts.ToStream(), func(wk streams.Windowed[string], v int64) (string, int64) {
		return wk.Key + "@" + strconv.FormatInt(wk.Window.Start, 10) + "/" + strconv.FormatInt(wk.Window.End, 10), v
	})
	flat.To(output, streams.Produced[string, int64]{Key: serde.String(), Value: serde.Int64()})
	return b.Build()
}

// profile writes a CPU profile to path until stop.
func profile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

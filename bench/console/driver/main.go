package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/samsa-io/samsa/bench/internal/procstat"
	"github.com/samsa-io/samsa/bench/internal/tabulate"
)

type options struct {
	samsa             string
	out               string
	data              string
	console           string
	nodes             int
	connect           bool
	records           int
	partitions        int
	clusterPartitions int
	topicPartitions   int
	valueBytes        int
	batchBytes        int
	producers         int
	readerGroups      int
	appGroups         int
	n                 int
	warmup            int
	target            time.Duration
	only              string
	settle            time.Duration
	profile           bool
	build             string
}

func main() {
	var o options
	flag.StringVar(&o.samsa, "samsa", "bin/samsa", "the samsa binary")
	flag.StringVar(&o.out, "out", "", "a directory for the broker's log, results.json and results.md (required)")
	flag.StringVar(&o.data, "data", "", "the broker's data directory, kept: a data set loaded there before is measured again without loading (default: a directory in -out)")
	flag.StringVar(&o.console, "console", consoleAuto, "which console: serve (samsa.console.listener of the serve process), inproc (internal/console in this process against the broker), auto (serve when the binary has the listener)")
	flag.IntVar(&o.nodes, "nodes", 3, "samsa serve nodes in the cluster (a node keeps 3 files open per partition: 10,000 partitions need more than one node under a 20,000 open-files limit)")
	flag.BoolVar(&o.connect, "connect", true, "run a Connect worker in every node (samsa.connect.listener), so the console's Connect page has a cluster to show")
	flag.IntVar(&o.records, "records", 10_000_000, "records in the big topic")
	flag.IntVar(&o.partitions, "partitions", 1000, "partitions of the big topic")
	flag.IntVar(&o.clusterPartitions, "cluster-partitions", 10_000, "partitions in the cluster, the big topic's included (internal topics not counted)")
	flag.IntVar(&o.topicPartitions, "topic-partitions", 6, "partitions of each small topic")
	flag.IntVar(&o.valueBytes, "value-bytes", 100, "bytes of each record's value (a JSON object)")
	flag.IntVar(&o.batchBytes, "batch-bytes", 16384, "the producers' largest batch (Java's batch.size default: the batches most clusters hold)")
	flag.IntVar(&o.producers, "producers", 4, "producer clients loading the big topic")
	flag.IntVar(&o.readerGroups, "reader-groups", 4, "groups with committed offsets in every partition of the big topic")
	flag.IntVar(&o.appGroups, "app-groups", 200, "groups with committed offsets on one small topic each")
	flag.IntVar(&o.n, "n", 20, "timed requests per page")
	flag.IntVar(&o.warmup, "warmup", 2, "untimed requests per page first")
	flag.DurationVar(&o.target, "target", 300*time.Millisecond, "the most a page may take (issue 22)")
	flag.DurationVar(&o.settle, "settle", 20*time.Second, "the pause before the pages, for the cluster to settle (the Connect workers' start, the ISRs after a restart)")
	flag.BoolVar(&o.profile, "profile", false, "with -console inproc, write a CPU profile of this process (the console's side) while each page is measured, profile-<n>.pprof in -out")
	flag.StringVar(&o.build, "build", "", "what the samsa binary was built from, for the report (run.sh: the commit)")
	flag.StringVar(&o.only, "only", "", "measure only the pages whose name contains this")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "bench-console:", err)
		os.Exit(1)
	}
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, time.Now().Format("15:04:05 ")+format+"\n", args...)
}

func (o options) check() error {
	switch {
	case o.out == "":
		return errors.New("-out is required")
	case o.console != consoleServe && o.console != consoleInproc && o.console != consoleAuto:
		return fmt.Errorf("-console: %q is not serve, inproc or auto", o.console)
	case o.records < 1 || o.partitions < 1 || o.topicPartitions < 1 || o.valueBytes < 20 || o.producers < 1 || o.n < 1 || o.nodes < 1:
		return errors.New("-nodes, -records, -partitions, -topic-partitions, -producers and -n must be at least 1, -value-bytes at least 20")
	case o.clusterPartitions < o.partitions:
		return fmt.Errorf("-cluster-partitions %d is fewer than the big topic's %d", o.clusterPartitions, o.partitions)
	case o.profile && o.console != consoleInproc:
		return errors.New("-profile needs -console inproc (the console must run in this process)")
	case o.readerGroups < 2:
		// The group pages are measured on the second readers' group.
		return errors.New("-reader-groups must be at least 2")
	}
	return nil
}

// machine is what the report says of the machine and the broker.
type machine struct {
	CPUs        int       `json:"cpus"`
	LoadBefore  string    `json:"load_before"`
	LoadAfter   string    `json:"load_after"`
	NoFile      string    `json:"nofile_limit"`
	Nodes       int       `json:"nodes"`
	BrokerFDs   []int     `json:"broker_fds"`
	BrokerRSS   []float64 `json:"broker_rss_mib"`
	BrokerPeak  []float64 `json:"broker_peak_rss_mib"`
	Console     string    `json:"console"`
	Reused      bool      `json:"reused_data"`
	Samsa       string    `json:"samsa"`
	StartedAt   string    `json:"started_at"`
	MeasureSecs float64   `json:"measure_seconds"`
}

type results struct {
	Machine machine  `json:"machine"`
	Data    dataSet  `json:"data"`
	Target  float64  `json:"target_ms"`
	N       int      `json:"n"`
	Warmup  int      `json:"warmup"`
	Pages   []result `json:"pages"`
	// Background is the Kafka requests per second with no page open.
	Background []apiUse `json:"background_per_second"`
	// ScrapeCost is the Kafka requests two scrapes of /metrics cause,
	// taken off each page's.
	ScrapeCost []apiUse `json:"scrape_cost"`
}

func run(o options) error {
	if err := o.check(); err != nil {
		return err
	}
	if o.data == "" {
		o.data = filepath.Join(o.out, "broker")
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	res := results{Target: float64(o.target.Milliseconds()), N: o.n, Warmup: o.warmup}
	res.Machine.StartedAt = time.Now().UTC().Format(time.RFC3339)
	res.Machine.LoadBefore = loadAverage()
	res.Machine.NoFile = noFileLimit()

	mode := o.console
	if mode == consoleAuto {
		mode = consoleInproc
		if ok, err := hasConsoleListener(o.samsa); err != nil {
			return err
		} else if ok {
			mode = consoleServe
		}
	}
	b, err := startCluster(ctx, o.samsa, o.data, o.nodes, mode == consoleServe, o.connect)
	if err != nil {
		return err
	}
	res.Machine.Console = mode
	res.Machine.Samsa = o.samsa
	if o.build != "" {
		res.Machine.Samsa += " built from " + o.build
	}
	res.Machine.Nodes = o.nodes
	// An interrupt stops the nodes (each in its own process group: a ^C
	// does not reach them).
	stopped := make(chan struct{})
	defer close(stopped)
	go func() {
		select {
		case <-ctx.Done():
			logf("interrupted; stopping the cluster")
			b.stop()
			os.Exit(1)
		case <-stopped:
		}
	}()
	defer b.stop()
	logf("%d nodes at %s (logs in %s), console %s", o.nodes, strings.Join(b.addrs, ","), o.data, mode)

	d, reused, err := loadData(ctx, o, b, filepath.Join(o.data, "dataset.json"))
	if err != nil {
		return fmt.Errorf("load: %w\n%s", err, b.dc.LogTails(5))
	}
	res.Data, res.Machine.Reused = d, reused
	if reused {
		logf("the data set of %s is there (loaded earlier in %.0fs)", o.data, d.LoadSeconds)
	}
	stopMember, err := liveMember(ctx, b.addrs)
	if err != nil {
		return err
	}
	defer stopMember()

	base := b.consoleURL
	if mode == consoleInproc {
		var stopConsole func()
		base, stopConsole, err = inprocConsole(ctx, b, filepath.Join(o.out, "console.log"))
		if err != nil {
			return err
		}
		defer stopConsole()
	}
	for _, pid := range b.pids() {
		fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		res.Machine.BrokerFDs = append(res.Machine.BrokerFDs, len(fds))
	}
	logf("console at %s; the nodes have %v open files", base, res.Machine.BrokerFDs)

	logf("settling for %s", o.settle)
	time.Sleep(o.settle)
	br := newBrowser(base, b.metricsURL)
	// The Kafka requests made with no page open (the registries' reads,
	// the live member's fetches): a page's probe may catch some of them.
	if res.Background, err = br.background(ctx, 5*time.Second); err != nil {
		return err
	}
	if err := br.measureScrapeCost(ctx); err != nil {
		return err
	}
	res.ScrapeCost = br.scrapeCost
	start := time.Now()
	for i, p := range pages {
		if o.only != "" && !strings.Contains(p.name, o.only) {
			continue
		}
		var stopProfile func()
		if o.profile && mode == consoleInproc {
			if stopProfile, err = startProfile(filepath.Join(o.out, fmt.Sprintf("profile-%02d.pprof", i))); err != nil {
				return err
			}
		}
		r := br.measure(ctx, d, p, o.warmup, o.n)
		if stopProfile != nil {
			stopProfile()
		}
		switch {
		case r.Absent:
			logf("%-45s absent", p.name)
		case r.Error != "":
			logf("%-45s %s", p.name, r.Error)
		default:
			logf("%-45s median %7.1f ms  p90 %7.1f ms  %8d bytes", p.name, r.Median, r.P90, r.Bytes)
		}
		res.Pages = append(res.Pages, r)
	}
	res.Machine.MeasureSecs = time.Since(start).Seconds()
	for _, pid := range b.pids() {
		rss, hwm, _ := procstat.Memory(pid)
		res.Machine.BrokerRSS = append(res.Machine.BrokerRSS, float64(rss)/1024)
		res.Machine.BrokerPeak = append(res.Machine.BrokerPeak, float64(hwm)/1024)
	}
	res.Machine.LoadAfter = loadAverage()
	res.Machine.CPUs = numCPU()
	if err := writeJSON(filepath.Join(o.out, "results.json"), res); err != nil {
		return err
	}
	var md strings.Builder
	report(&md, res)
	if err := os.WriteFile(filepath.Join(o.out, "results.md"), []byte(md.String()), 0o644); err != nil {
		return err
	}
	fmt.Print(md.String())
	return nil
}

// startProfile profiles this process's CPU into path until the returned
// stop.
func startProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

func median(vs []float64) float64 { return tabulate.Median(vs) }

func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(data))[:3], " ")
}

func noFileLimit() string {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return "?"
	}
	return fmt.Sprintf("%d", l.Cur)
}

package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

func benchJSON(t *testing.T, c *testCluster, args ...string) benchResult {
	t.Helper()
	out := c.ok("", append([]string{"bench"}, append(args, "--json")...)...)
	var res benchResult
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&res); err != nil {
		t.Fatalf("bench %v --json: %v\n%s", args, err, out)
	}
	if strings.Count(out, "\n") != 1 {
		t.Fatalf("bench --json printed more than one line:\n%s", out)
	}
	return res
}

func checkSane(t *testing.T, res benchResult, records, bytes int64) {
	t.Helper()
	if res.Records != records || res.Bytes != bytes {
		t.Fatalf("%s: %d records, %d bytes; want %d, %d", res.Mode, res.Records, res.Bytes, records, bytes)
	}
	if res.ElapsedSeconds <= 0 || res.RecordsPerSecond <= 0 || res.MBPerSecond <= 0 {
		t.Fatalf("%s: elapsed %g s, %g records/s, %g MB/s", res.Mode, res.ElapsedSeconds, res.RecordsPerSecond, res.MBPerSecond)
	}
	if got := res.RecordsPerSecond * res.ElapsedSeconds; got < float64(records)*0.99 || got > float64(records)*1.01 {
		t.Fatalf("%s: records/s × elapsed = %g, want %d", res.Mode, got, records)
	}
}

func checkLatency(t *testing.T, what string, l *latencySummary) {
	t.Helper()
	if l == nil {
		t.Fatalf("%s: no latency", what)
	}
	if !(0 < l.P50 && l.P50 <= l.P95 && l.P95 <= l.P99 && l.P99 <= l.P999 && l.P999 <= l.Max) {
		t.Fatalf("%s: percentiles out of order: %+v", what, *l)
	}
	if l.Max > 60_000 {
		t.Fatalf("%s: max latency %gms is not sane", what, l.Max)
	}
}

func TestBench(t *testing.T) {
	c := newTestCluster(t)
	const records, size = 3000, 64

	prod := benchJSON(t, c, "produce", "--topic", "b", "--create", "--partitions", "3",
		"--records", strconv.Itoa(records), "--record-size", strconv.Itoa(size), "--linger", "1ms",
		"--broker-pid", strconv.Itoa(os.Getpid())) // kfake runs in this process
	checkSane(t, prod, records, records*size)
	checkLatency(t, "produce ack", prod.Latency)
	if prod.AckLatency != nil {
		t.Fatalf("produce reports a separate ack latency: %+v", prod.AckLatency)
	}
	if prod.BrokerCPUSeconds == nil || *prod.BrokerCPUSeconds < 0 || prod.BrokerCPUPerMillionS == nil {
		t.Fatalf("produce: broker CPU = %v / %v", prod.BrokerCPUSeconds, prod.BrokerCPUPerMillionS)
	}
	if prod.BrokerCPUSecondsEach != nil {
		t.Fatalf("produce: one --broker-pid, yet CPU per process %v", prod.BrokerCPUSecondsEach)
	}
	if out := c.ok("", "topic", "list"); !strings.Contains(out, "b     3") {
		t.Fatalf("bench did not create the topic with 3 partitions:\n%s", out)
	}

	cons := benchJSON(t, c, "consume", "--topic", "b", "--records", strconv.Itoa(records))
	checkSane(t, cons, records, records*size)
	if cons.Latency != nil || cons.BrokerCPUSeconds != nil {
		t.Fatalf("consume reports latency or CPU it did not measure: %+v", cons)
	}

	// Fewer records than asked: read what is there and say so.
	r := c.run("", "bench", "consume", "--topic", "b", "--records", "5000")
	if r.err != nil || !strings.Contains(r.stderr, `topic "b" holds 3000 records; reading those`) ||
		!strings.HasPrefix(r.stdout, `consume: 3000 records (192000 bytes) on topic "b" in `) {
		t.Fatalf("bench consume beyond the topic: %v\nstdout: %s\nstderr: %s", r.err, r.stdout, r.stderr)
	}

	e2e := benchJSON(t, c, "e2e", "--topic", "b", "--records", "1000", "--record-size", "32", "--rate", "20000")
	checkSane(t, e2e, 1000, 1000*32)
	checkLatency(t, "e2e", e2e.Latency)
	checkLatency(t, "e2e ack", e2e.AckLatency)
	if e2e.Latency.Percentiles != nil || prod.Latency.Percentiles != nil {
		t.Fatalf("percentiles reported without --percentiles: %+v", e2e.Latency.Percentiles)
	}
	// --rate 20000 for 1000 records takes at least 50ms.
	if e2e.ElapsedSeconds < 0.045 {
		t.Fatalf("e2e at --rate 20000 took %gs, want >= 0.05s", e2e.ElapsedSeconds)
	}
}

func TestBenchPercentiles(t *testing.T) {
	c := newTestCluster(t)
	res := benchJSON(t, c, "e2e", "--topic", "pc", "--records", "500", "--rate", "20000",
		"--percentiles", "50,99,99.9,100")
	l := res.Latency
	checkLatency(t, "e2e", l)
	want := []float64{50, 99, 99.9, 100}
	if len(l.Percentiles) != len(want) {
		t.Fatalf("percentiles = %+v, want %v", l.Percentiles, want)
	}
	for i, p := range l.Percentiles {
		if p.P != want[i] || (i > 0 && p.MS < l.Percentiles[i-1].MS) {
			t.Fatalf("percentiles out of order: %+v", l.Percentiles)
		}
	}
	if l.Percentiles[0].MS != l.P50 || l.Percentiles[3].MS != l.Max {
		t.Fatalf("p50 %g / p100 %g disagree with the summary's %g / %g", l.Percentiles[0].MS, l.Percentiles[3].MS, l.P50, l.Max)
	}
	if len(res.AckLatency.Percentiles) != len(want) {
		t.Fatalf("ack percentiles = %+v", res.AckLatency.Percentiles)
	}
}

func TestBenchText(t *testing.T) {
	c := newTestCluster(t)
	out := c.ok("", "bench", "produce", "--topic", "text", "--records", "100", "--acks", "1", "--compression", "zstd")
	for _, want := range []string{
		`produce: 100 records (10000 bytes) on topic "text" in `,
		"throughput: ", " records/s, ", " MB/s\n",
		"ack latency ms: p50 ", " p99.9 ", " max ",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("bench produce output lacks %q:\n%s", want, out)
		}
	}
}

func TestBenchErrors(t *testing.T) {
	c := newTestCluster(t)
	c.fails(`topic "nope" does not exist`, "bench", "consume", "--topic", "nope")
	c.fails(`topic "nope" does not exist`, "bench", "produce", "--topic", "nope", "--create=false")
	c.fails("invalid --record-size 8", "bench", "produce", "--record-size", "8")
	c.fails(`invalid --acks "two"`, "bench", "produce", "--acks", "two")
	c.fails("invalid --records 0", "bench", "e2e", "--records", "0")
	c.fails("invalid --percentiles 0", "bench", "e2e", "--percentiles", "0")
	c.fails("invalid --percentiles 101", "bench", "produce", "--percentiles", "50,101")
	c.fails("--broker-pid 999999999", "bench", "produce", "--broker-pid", "999999999")
	c.fails("--broker-pid 999999999", "bench", "produce", "--broker-pid", strconv.Itoa(os.Getpid())+",999999999")
	c.fails("invalid --broker-pid -3", "bench", "produce", "--broker-pid", "-3")
	self := strconv.Itoa(os.Getpid())
	c.fails("--broker-pid "+self+" given twice", "bench", "produce", "--broker-pid", self, "--broker-pid", self)
	c.ok("", "topic", "create", "empty", "-p", "1")
	c.fails(`topic "empty" is empty`, "bench", "consume", "--topic", "empty")
}

// TestBenchSeveralBrokerPIDs: a cluster's nodes are given as several PIDs,
// comma-separated or with the flag repeated; the CPU figures are their sum,
// with each process's share beside it in the order given.
func TestBenchSeveralBrokerPIDs(t *testing.T) {
	c := newTestCluster(t)
	self, parent := strconv.Itoa(os.Getpid()), strconv.Itoa(os.Getppid()) // kfake runs in this process
	for _, pids := range [][]string{{"--broker-pid", self + "," + parent}, {"--broker-pid", self, "--broker-pid", parent}} {
		res := benchJSON(t, c, append([]string{"produce", "--topic", "pids", "--records", "500"}, pids...)...)
		if res.BrokerCPUSeconds == nil || len(res.BrokerCPUSecondsEach) != 2 {
			t.Fatalf("%v: broker CPU %v, per process %v", pids, res.BrokerCPUSeconds, res.BrokerCPUSecondsEach)
		}
		if sum := res.BrokerCPUSecondsEach[0] + res.BrokerCPUSecondsEach[1]; sum != *res.BrokerCPUSeconds {
			t.Fatalf("%v: per process %v, sum %g; total %g", pids, res.BrokerCPUSecondsEach, sum, *res.BrokerCPUSeconds)
		}
		if want := *res.BrokerCPUSeconds / 500 * 1e6; *res.BrokerCPUPerMillionS != want {
			t.Fatalf("%v: %g s per million, want %g", pids, *res.BrokerCPUPerMillionS, want)
		}
	}
	out := c.ok("", "bench", "produce", "--topic", "pids", "--records", "100", "--broker-pid", self+","+parent)
	if !regexp.MustCompile(`broker CPU: [0-9.]+s \([0-9.]+s per 1M records\), per process [0-9.]+s \+ [0-9.]+s\n`).MatchString(out) {
		t.Fatalf("text output lacks the CPU per process:\n%s", out)
	}
}

// TestBenchOnSeveralBrokers: on a cluster, the topic bench creates is
// known to every broker before the run starts, and e2e runs against it.
func TestBenchOnSeveralBrokers(t *testing.T) {
	c := newTestCluster(t, kfake.NumBrokers(3))
	res := benchJSON(t, c, "e2e", "--topic", "three", "--partitions", "4", "--records", "300", "--rate", "20000")
	checkSane(t, res, 300, 300*100)
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := waitEveryBroker(t.Context(), cl, "three"); err != nil {
		t.Fatalf("after the run: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	if err := waitEveryBroker(ctx, cl, "missing"); err == nil {
		t.Fatal("a topic no broker has: no error")
	}
}

// TestBenchWaitReplicated: --wait-replicated ends a produce run with one
// acks=all record per partition, reports how long that took, and counts
// none of them as the run's.
func TestBenchWaitReplicated(t *testing.T) {
	c := newTestCluster(t, kfake.NumBrokers(3))
	res := benchJSON(t, c, "produce", "--topic", "wr", "--partitions", "3", "--records", "400", "--acks", "1", "--wait-replicated")
	checkSane(t, res, 400, 400*100)
	if res.ReplicatedAfterSeconds == nil || *res.ReplicatedAfterSeconds < 0 {
		t.Fatalf("replicated after %v", res.ReplicatedAfterSeconds)
	}
	r := c.run("", "bench", "consume", "--topic", "wr", "--records", "1000")
	if r.err != nil || !strings.Contains(r.stderr, `topic "wr" holds 403 records`) {
		t.Fatalf("the topic should hold the run and a barrier record per partition: %v\n%s", r.err, r.stderr)
	}
	if plain := benchJSON(t, c, "produce", "--topic", "wr", "--records", "10"); plain.ReplicatedAfterSeconds != nil {
		t.Fatalf("without --wait-replicated: replicated after %v", *plain.ReplicatedAfterSeconds)
	}
	c.fails("unknown flag: --wait-replicated", "bench", "e2e", "--topic", "wr", "--wait-replicated")
}

// TestBenchSetBrokerCPU: the CPU figures from readings before and after.
func TestBenchSetBrokerCPU(t *testing.T) {
	r := benchResult{Records: 2_000_000}
	r.setBrokerCPU([]float64{1, 10, 100}, []float64{1.5, 12, 101})
	if *r.BrokerCPUSeconds != 3.5 || *r.BrokerCPUPerMillionS != 1.75 {
		t.Fatalf("total %g, per million %g; want 3.5, 1.75", *r.BrokerCPUSeconds, *r.BrokerCPUPerMillionS)
	}
	if want := []float64{0.5, 2, 1}; !slices.Equal(r.BrokerCPUSecondsEach, want) {
		t.Fatalf("each %v, want %v", r.BrokerCPUSecondsEach, want)
	}
	one := benchResult{Records: 1_000_000}
	one.setBrokerCPU([]float64{2}, []float64{2.25})
	if *one.BrokerCPUSeconds != 0.25 || one.BrokerCPUSecondsEach != nil {
		t.Fatalf("one process: total %g, each %v", *one.BrokerCPUSeconds, one.BrokerCPUSecondsEach)
	}
}

// TestProgressRateFromTheStart: the first tick of the bar shows records
// per second since the run started, not since the tick itself.
func TestProgressRateFromTheStart(t *testing.T) {
	var out bytes.Buffer
	bar := newBar(&out, 1<<20, "producing")
	const wait = 150 * time.Millisecond // past the bar's 100ms throttle
	start := time.Now()
	time.Sleep(wait) // the rate is over wall time; there is no event to wait on
	if err := bar.Add64(progressStep); err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(start)
	rates := regexp.MustCompile(`(\d+) records/s`).FindAllStringSubmatch(out.String(), -1)
	if len(rates) == 0 {
		t.Fatalf("no rate drawn:\n%q", out.String())
	}
	rate, _ := strconv.ParseFloat(rates[len(rates)-1][1], 64)
	if most := float64(progressStep) / wait.Seconds(); rate <= 0 || rate > most || rate < float64(progressStep)/elapsed.Seconds()/2 {
		t.Fatalf("first tick shows %g records/s; %d records took %s", rate, progressStep, elapsed)
	}
}

// TestBatchSizeFlag: produce and bench name the batch bound --batch-size;
// bench's old --batch-max-bytes still sets the same bound, and is gone
// from the help.
func TestBatchSizeFlag(t *testing.T) {
	c := newTestCluster(t, kfake.SeedTopics(1, "t"))
	for _, args := range [][]string{
		{"produce", "t", "--batch-size", "100"},
		{"bench", "produce", "--topic", "t", "--batch-size", "100"},
		{"bench", "e2e", "--topic", "t", "--batch-max-bytes", "100"},
	} {
		c.fails("invalid --batch-size 100: want 512 to 1073741824 bytes", args...)
	}
	// pflag prints the deprecation notice to the process's stderr.
	c.ok("", "bench", "produce", "--topic", "t", "--records", "10", "--batch-max-bytes", "2048")
	for _, cmd := range []string{"produce", "bench produce", "bench e2e"} {
		help := c.ok("", append(strings.Fields(cmd), "--help")...)
		if !strings.Contains(help, "--batch-size int32") || !strings.Contains(help, "batch.size") || strings.Contains(help, "batch-max-bytes") {
			t.Errorf("samsa %s --help:\n%s", cmd, help)
		}
	}
}

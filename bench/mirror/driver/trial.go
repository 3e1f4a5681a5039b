package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// trial is one run of one mode.
type trial struct {
	Mode    string `json:"mode"`
	Run     int    `json:"run"`
	Records int    `json:"records"` // N, the backlog
	// StartupSeconds is from the mirror's start to the first record on B;
	// BacklogSeconds to the last of the N.
	StartupSeconds float64 `json:"startup_seconds"`
	BacklogSeconds float64 `json:"backlog_seconds"`
	Rate           float64 `json:"rate"`      // N / BacklogSeconds
	CopyRate       float64 `json:"copy_rate"` // N / (BacklogSeconds - StartupSeconds)
	BacklogOnB     int     `json:"backlog_on_b"`
	// CPUBacklogSeconds is the mirror process's CPU time from its start to
	// the end of the backlog (start-up included); CPUCopySeconds from the
	// first record on B.
	CPUBacklogSeconds float64 `json:"cpu_backlog_seconds"`
	CPUCopySeconds    float64 `json:"cpu_copy_seconds"`
	// BrokerCPUSeconds is both brokers' CPU time over the backlog;
	// DriverCPUSeconds this program's (its consumer on B, mostly), which
	// shares the machine with the mirror.
	BrokerCPUSeconds float64 `json:"broker_cpu_seconds"`
	DriverCPUSeconds float64 `json:"driver_cpu_seconds"`
	// The lag phase: LiveSent records produced to A at LiveRate, LiveOnB
	// of them read on B, lag = arrival on B minus the produce time.
	LiveSent       int     `json:"live_sent"`
	LiveOnB        int     `json:"live_on_b"`
	LiveRate       float64 `json:"live_rate"`
	LagP50Millis   float64 `json:"lag_p50_ms"`
	LagP99Millis   float64 `json:"lag_p99_ms"`
	LagMaxMillis   float64 `json:"lag_max_ms"`
	CPULiveSeconds float64 `json:"cpu_live_seconds"`
	PeakRSSKiB     int64   `json:"peak_rss_kib"`
	MeanRSSKiB     int64   `json:"mean_rss_kib"`
}

func (t trial) String() string {
	return fmt.Sprintf("backlog %.0f rec/s (%.2fs, first record after %.2fs, copy %.0f rec/s, %d on B), CPU %.2fs (copy %.2fs, brokers %.2fs); "+
		"live %d/%d at %.0f rec/s, lag p50 %.1f ms p99 %.1f ms max %.1f ms, CPU %.2fs; peak RSS %d MiB, mean %d MiB",
		t.Rate, t.BacklogSeconds, t.StartupSeconds, t.CopyRate, t.BacklogOnB, t.CPUBacklogSeconds, t.CPUCopySeconds, t.BrokerCPUSeconds,
		t.LiveOnB, t.LiveSent, t.LiveRate, t.LagP50Millis, t.LagP99Millis, t.LagMaxMillis, t.CPULiveSeconds,
		t.PeakRSSKiB/1024, t.MeanRSSKiB/1024)
}

// producedHeader carries a live record's produce time, Unix nanoseconds in
// decimal: both mirrors copy headers.
const producedHeader = "bench-produced-ns"

// mm2Properties is the configuration both mirrors get: one flow A->B of the
// backlog and the run's live topic, replication factors 1 for the
// single-broker clusters, everything else at its default, and the mode's
// switch.
func mm2Properties(o options, a, b, live, mode string) string {
	lines := []string{
		"clusters = A, B",
		"A.bootstrap.servers = " + a,
		"B.bootstrap.servers = " + b,
		"A->B.enabled = true",
		"A->B.topics = " + backlogTopic + ", " + live,
		"tasks.max = " + strconv.Itoa(o.tasksMax),
		"replication.factor = 1",
		"checkpoints.topic.replication.factor = 1",
		"heartbeats.topic.replication.factor = 1",
		"offset-syncs.topic.replication.factor = 1",
		"config.storage.replication.factor = 1",
		"offset.storage.replication.factor = 1",
		"status.storage.replication.factor = 1",
	}
	switch mode {
	case modeEOS:
		lines = append(lines, "B.exactly.once.source.support = enabled")
	case modePreserve:
		lines = append(lines, "samsa.offset.preserving.enabled = true")
	}
	return strings.Join(lines, "\n") + "\n"
}

// arrivals is what the consumer on B has read so far.
type arrivals struct {
	mu      sync.Mutex
	backlog int
	first   time.Time // the first backlog record
	done    time.Time // the Nth backlog record
	live    int
	lags    []time.Duration
	sentAt  []time.Time // the produce time of each of lags, for -lag-log
	err     error
}

func (a *arrivals) snapshot() (backlog, live int, first, done time.Time, err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.backlog, a.live, a.first, a.done, a.err
}

// consume reads both remote topics on B from the start, read_committed,
// until ctx ends.
func consume(ctx context.Context, cl *kgo.Client, n int, remoteBacklog string, a *arrivals) {
	for ctx.Err() == nil {
		fs := cl.PollFetches(ctx)
		now := time.Now()
		a.mu.Lock()
		fs.EachError(func(t string, p int32, err error) {
			if ctx.Err() == nil && a.err == nil {
				a.err = fmt.Errorf("consume %s/%d on B: %w", t, p, err)
			}
		})
		fs.EachRecord(func(r *kgo.Record) {
			if r.Topic == remoteBacklog {
				a.backlog++
				if a.backlog == 1 {
					a.first = now
				}
				if a.backlog == n {
					a.done = now
				}
				return
			}
			a.live++
			for _, h := range r.Headers {
				if h.Key == producedHeader {
					if ns, err := strconv.ParseInt(string(h.Value), 10, 64); err == nil {
						a.lags = append(a.lags, now.Sub(time.Unix(0, ns)))
						a.sentAt = append(a.sentAt, time.Unix(0, ns))
					}
				}
			}
		})
		a.mu.Unlock()
	}
}

// sampler reads the mirror process's RSS every 250 ms.
type sampler struct {
	pid  int
	stop chan struct{}
	done chan struct{}
	sum  int64
	n    int64
}

func startSampler(pid int) *sampler {
	s := &sampler{pid: pid, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-tick.C:
				if rss, _, err := memory(pid); err == nil && rss > 0 {
					s.sum += rss
					s.n++
				}
			}
		}
	}()
	return s
}

func (s *sampler) mean() int64 {
	close(s.stop)
	<-s.done
	if s.n == 0 {
		return 0
	}
	return s.sum / s.n
}

func runTrial(ctx context.Context, o options, a *broker, mode string, run int) (trial, error) {
	t := trial{Mode: mode, Run: run, Records: o.records}
	dir := filepath.Join(o.out, fmt.Sprintf("%s-%d", mode, run))
	b, err := startBroker(ctx, o.samsa, filepath.Join(dir, "target-B"))
	if err != nil {
		return t, fmt.Errorf("target broker: %w", err)
	}
	defer func() {
		b.stop()
		// The target's data is not needed afterwards, and twelve copies
		// of the backlog fill a disk.
		os.RemoveAll(filepath.Join(dir, "target-B", "data"))
	}()
	live := fmt.Sprintf("live-%s-%d", mode, run)
	if err := a.createTopic(ctx, live, int32(o.partitions)); err != nil {
		return t, fmt.Errorf("create %s: %w", live, err)
	}
	// The live topic and the offset syncs of this run go; the backlog
	// topic stays for the next run.
	defer a.deleteTopics(context.Background(), live, "mm2-offset-syncs.B.internal")

	remoteBacklog, remoteLive := "A."+backlogTopic, "A."+live
	cons, err := kgo.NewClient(kgo.SeedBrokers(b.addr), kgo.ConsumeTopics(remoteBacklog, remoteLive),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		// The remote topics appear once the mirror creates them: look
		// often, so the first record is seen when it lands.
		kgo.MetadataMinAge(100*time.Millisecond), kgo.MetadataMaxAge(time.Second),
		kgo.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		return t, err
	}
	defer cons.Close()
	var arr arrivals
	cctx, stopConsume := context.WithCancel(ctx)
	consumed := make(chan struct{})
	go func() { defer close(consumed); consume(cctx, cons, o.records, remoteBacklog, &arr) }()
	defer func() { stopConsume(); <-consumed }()

	props := filepath.Join(dir, "mm2.properties")
	if err := os.WriteFile(props, []byte(mm2Properties(o, a.addr, b.addr, live, mode)), 0o644); err != nil {
		return t, err
	}
	var cmd *exec.Cmd
	if mode == modeMM2 {
		args := append(strings.Fields(o.javaOpts), "-Dlog4j2.configurationFile="+o.log4j, "-Dkafkaref.log.level=warn",
			"-cp", filepath.Join(o.libs, "*"), "org.apache.kafka.connect.mirror.MirrorMaker", props, "--clusters", "B")
		cmd = exec.Command(o.java, args...)
	} else {
		cmd = exec.Command(o.samsa, "mirror", "--config", props, "--clusters", "B")
	}
	aCPU0, _ := cpuSeconds(a.PID())
	bCPU0, _ := cpuSeconds(b.PID())
	dCPU0, _ := cpuSeconds(os.Getpid())
	start := time.Now()
	m, err := startProcess(cmd, filepath.Join(dir, "mirror.log"))
	if err != nil {
		return t, err
	}
	defer m.Stop(30 * time.Second)
	rss := startSampler(m.PID())
	meanTaken := false
	defer func() {
		if !meanTaken {
			rss.mean()
		}
	}()

	// The backlog.
	var cpuFirst float64
	firstSeen := false
	deadline := start.Add(o.timeout)
	for {
		n, _, first, done, err := arr.snapshot()
		if err != nil {
			return t, err
		}
		if !firstSeen && n > 0 {
			firstSeen = true
			cpuFirst, _ = cpuWithChildren(m.PID())
			t.StartupSeconds = first.Sub(start).Seconds()
		}
		if !done.IsZero() {
			t.BacklogSeconds = done.Sub(start).Seconds()
			break
		}
		if !m.Alive() {
			return t, fmt.Errorf("the mirror exited with %d of %d records on B (log %s)", n, o.records, m.Log)
		}
		if time.Now().After(deadline) {
			return t, fmt.Errorf("%d of %d records on B after %v (log %s)", n, o.records, o.timeout, m.Log)
		}
		time.Sleep(20 * time.Millisecond)
	}
	cpuDone, err := cpuWithChildren(m.PID())
	if err != nil {
		return t, err
	}
	aCPU1, _ := cpuSeconds(a.PID())
	bCPU1, _ := cpuSeconds(b.PID())
	dCPU1, _ := cpuSeconds(os.Getpid())
	t.DriverCPUSeconds = dCPU1 - dCPU0
	t.CPUBacklogSeconds = cpuDone
	t.CPUCopySeconds = cpuDone - cpuFirst
	t.BrokerCPUSeconds = aCPU1 - aCPU0 + bCPU1 - bCPU0
	t.Rate = float64(o.records) / t.BacklogSeconds
	t.CopyRate = float64(o.records) / (t.BacklogSeconds - t.StartupSeconds)

	// The lag phase: a steady load on the live topic, after a pause in
	// which what the backlog left behind (the brokers' writeback of the
	// copy, the mirror's buffers and garbage) settles, so the lag is the
	// steady state's, not the backlog's tail.
	time.Sleep(o.settle)
	sent, elapsed, err := produceLive(ctx, a.addr, live, o)
	if err != nil {
		return t, fmt.Errorf("live load: %w", err)
	}
	t.LiveSent = sent
	t.LiveRate = float64(sent) / elapsed.Seconds()
	drain := time.Now().Add(60 * time.Second)
	for {
		_, nLive, _, _, err := arr.snapshot()
		if err != nil {
			return t, err
		}
		if nLive >= sent || time.Now().After(drain) || !m.Alive() {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	cpuLive, err := cpuWithChildren(m.PID())
	if err != nil {
		return t, fmt.Errorf("the mirror exited during the lag phase (log %s): %w", m.Log, err)
	}
	t.CPULiveSeconds = cpuLive - cpuDone
	if _, hwm, err := memory(m.PID()); err == nil {
		t.PeakRSSKiB = hwm
	}
	t.MeanRSSKiB = rss.mean()
	meanTaken = true
	// A moment for duplicates (at least once) to show before counting.
	time.Sleep(time.Second)
	arr.mu.Lock()
	t.BacklogOnB, t.LiveOnB = arr.backlog, arr.live
	lags := slices.Clone(arr.lags)
	sentAt := slices.Clone(arr.sentAt)
	arr.mu.Unlock()
	if o.lagLog {
		if err := writeLagLog(filepath.Join(dir, "lags.csv"), sentAt, lags); err != nil {
			return t, err
		}
	}
	slices.Sort(lags)
	t.LagP50Millis = millis(percentile(lags, 0.50))
	t.LagP99Millis = millis(percentile(lags, 0.99))
	if len(lags) > 0 {
		t.LagMaxMillis = millis(lags[len(lags)-1])
	}
	return t, nil
}

// produceLive produces o.rate records a second to the live topic for
// o.live, spread evenly (every 5 ms the records due by then), each with
// its produce time in a header, and returns how many it sent and over
// how long.
func produceLive(ctx context.Context, addr, topic string, o options) (int, time.Duration, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerLinger(time.Millisecond))
	if err != nil {
		return 0, 0, err
	}
	defer cl.Close()
	rng := rand.New(rand.NewPCG(21, 21))
	errc := make(chan error, 1)
	sent := 0
	start := time.Now()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		elapsed := time.Since(start)
		if elapsed >= o.live {
			break
		}
		due := int(elapsed.Seconds() * float64(o.rate))
		for ; sent < due; sent++ {
			r := &kgo.Record{Topic: topic, Partition: int32(sent % o.partitions),
				Key: fmt.Appendf(nil, "live%09d", sent), Value: randomValue(rng, o.valueBytes),
				Headers: []kgo.RecordHeader{{Key: producedHeader, Value: strconv.AppendInt(nil, time.Now().UnixNano(), 10)}}}
			cl.Produce(ctx, r, func(_ *kgo.Record, err error) {
				if err != nil {
					select {
					case errc <- err:
					default:
					}
				}
			})
		}
		<-tick.C
	}
	elapsed := time.Since(start)
	if err := cl.Flush(ctx); err != nil {
		return sent, elapsed, err
	}
	select {
	case err := <-errc:
		return sent, elapsed, err
	default:
		return sent, elapsed, nil
	}
}

// writeLagLog writes each live record's produce time (seconds since the
// first) and lag in milliseconds, in arrival order: where the slow records
// fall in time shows a periodic stall.
func writeLagLog(path string, sentAt []time.Time, lags []time.Duration) error {
	var b strings.Builder
	b.WriteString("sent_s,lag_ms\n")
	for i := range lags {
		fmt.Fprintf(&b, "%.4f,%.3f\n", sentAt[i].Sub(sentAt[0]).Seconds(), millis(lags[i]))
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// percentile is the nearest-rank percentile of sorted durations.
func percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.999999) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
)

// trial is one run of one topology on one runtime.
type trial struct {
	Runtime  string `json:"runtime"`
	Topology string `json:"topology"`
	Run      int    `json:"run"`
	Records  int    `json:"records"`
	// StartupSeconds is from the exec until the application said RUNNING
	// (not part of the throughput).
	StartupSeconds float64 `json:"startup_seconds"`
	// Seconds is from RUNNING until the group committed the end of the
	// input and of the repartition topics.
	Seconds float64 `json:"seconds"`
	Rate    float64 `json:"records_per_second"`
	// PeakRSSKiB is VmHWM at the end (start-up included); MeanRSSKiB the
	// mean of VmRSS sampled every 100 ms while processing.
	PeakRSSKiB int64 `json:"peak_rss_kib"`
	MeanRSSKiB int64 `json:"mean_rss_kib"`
	// CPUSeconds is the application's utime+stime while processing;
	// BrokerCPUSeconds the broker's over the same time.
	CPUSeconds       float64 `json:"cpu_seconds"`
	CPUMicrosPerRec  float64 `json:"cpu_us_per_record"`
	BrokerCPUSeconds float64 `json:"broker_cpu_seconds"`
	// OutputRecords is what the application wrote (with a record cache,
	// fewer than one per input record).
	OutputRecords int64 `json:"output_records"`
}

func (t trial) String() string {
	return fmt.Sprintf("%.0f rec/s (%.2fs), peak RSS %d MiB, mean RSS %d MiB, CPU %.2f µs/record (broker %.1fs), %d output records, start-up %.1fs",
		t.Rate, t.Seconds, t.PeakRSSKiB/1024, t.MeanRSSKiB/1024, t.CPUMicrosPerRec, t.BrokerCPUSeconds, t.OutputRecords, t.StartupSeconds)
}

func runTrial(ctx context.Context, o options, b *broker, runtime, topology string, run int) (trial, error) {
	t := trial{Runtime: runtime, Topology: topology, Run: run, Records: o.records}
	appID := fmt.Sprintf("bench-%s-%s-%d", runtime, topology, run)
	dir := filepath.Join(o.out, appID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return t, err
	}
	output := appID + "-out"
	resp, err := b.admin.CreateTopic(ctx, int32(o.partitions), 1, nil, output)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		return t, fmt.Errorf("create topic %s: %w", output, err)
	}
	props := filepath.Join(dir, "streams.properties")
	if err := os.WriteFile(props, []byte(streamsProperties(o, b.addr, appID, dir)), 0o644); err != nil {
		return t, err
	}
	started := time.Now()
	p, err := startProcess(appCommand(o, runtime, topology, props, output), filepath.Join(dir, "app.log"))
	if err != nil {
		return t, err
	}
	defer p.Stop(30 * time.Second)
	if err := waitRunning(p, 2*time.Minute); err != nil {
		return t, err
	}
	running := time.Now()
	t.StartupSeconds = running.Sub(started).Seconds()
	s := startSampler(p.PID())
	cpu0, err := cpuSeconds(p.PID())
	if err != nil {
		return t, err
	}
	brokerCPU0, err := cpuSeconds(b.PID())
	if err != nil {
		return t, err
	}
	deadline := running.Add(o.timeout)
	for {
		if !p.Alive() {
			return t, fmt.Errorf("application exited (log %s)", p.Log)
		}
		if time.Now().After(deadline) {
			return t, fmt.Errorf("not done after %s (log %s)", o.timeout, p.Log)
		}
		done, err := consumed(ctx, b.admin, appID, inputTopic(topology))
		if err != nil {
			return t, err
		}
		if done {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Seconds = time.Since(running).Seconds()
	cpu1, err := cpuSeconds(p.PID())
	if err != nil {
		return t, err
	}
	brokerCPU1, _ := cpuSeconds(b.PID())
	t.PeakRSSKiB, t.MeanRSSKiB = s.stop()
	t.Rate = float64(o.records) / t.Seconds
	t.CPUSeconds = cpu1 - cpu0
	t.CPUMicrosPerRec = t.CPUSeconds / float64(o.records) * 1e6
	t.BrokerCPUSeconds = brokerCPU1 - brokerCPU0
	if t.OutputRecords, err = records(ctx, b.admin, output); err != nil {
		return t, err
	}
	if t.OutputRecords == 0 {
		return t, fmt.Errorf("the application wrote nothing to %s (log %s)", output, p.Log)
	}
	p.Stop(30 * time.Second)
	return t, deleteTopics(ctx, b.admin, appID)
}

// streamsProperties are one application's, the same for both runtimes.
func streamsProperties(o options, bootstrap, appID, dir string) string {
	return strings.Join([]string{
		"application.id=" + appID,
		"bootstrap.servers=" + bootstrap,
		"state.dir=" + filepath.Join(dir, "state"),
		"processing.guarantee=at_least_once",
		"commit.interval.ms=" + strconv.Itoa(o.commitMs),
		"statestore.cache.max.bytes=" + strconv.Itoa(o.cacheBytes),
		"num.stream.threads=1",
		"replication.factor=1",
		"consumer.auto.offset.reset=earliest",
	}, "\n") + "\n"
}

func appCommand(o options, runtime, topology, props, output string) *exec.Cmd {
	args := []string{topology, props, inputTopic(topology), output}
	if runtime == "samsa" {
		return exec.Command(o.samsaApp, args...)
	}
	jargs := strings.Fields(o.javaOpts)
	jargs = append(jargs, "-Dlog4j2.configurationFile="+o.log4j, "-cp", o.classpath, "io.samsa.benchstreams.Bench")
	return exec.Command(o.java, append(jargs, args...)...)
}

// waitRunning waits for the RUNNING line in the application's log.
func waitRunning(p *process, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		data, _ := os.ReadFile(p.Log)
		for _, line := range strings.Split(string(data), "\n") {
			switch {
			case line == "RUNNING":
				return nil
			case strings.HasPrefix(line, "ERROR"):
				return fmt.Errorf("the application failed (log %s)", p.Log)
			}
		}
		if !p.Alive() {
			return fmt.Errorf("application exited (log %s)", p.Log)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not RUNNING after %s (log %s)", limit, p.Log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// consumed reports whether the group has committed the end offset of
// every partition of the input and of its repartition topics (Kafka
// Streams' names: <application.id>-...-repartition). Offsets are read
// before end offsets, so a repartition record written for an input the
// commit covers is already counted.
func consumed(ctx context.Context, adm *kadm.Client, appID, input string) (bool, error) {
	committed, err := adm.FetchOffsets(ctx, appID)
	if err != nil {
		return false, err
	}
	topics, err := adm.ListTopics(ctx)
	if err != nil {
		return false, err
	}
	sources := []string{input}
	for _, name := range topics.Names() {
		if strings.HasPrefix(name, appID+"-") && strings.HasSuffix(name, "-repartition") {
			sources = append(sources, name)
		}
	}
	ends, err := adm.ListEndOffsets(ctx, sources...)
	if err != nil {
		return false, err
	}
	done := true
	ends.Each(func(end kadm.ListedOffset) {
		c, ok := committed.Lookup(end.Topic, end.Partition)
		if end.Err != nil || (end.Offset > 0 && (!ok || c.At < end.Offset)) {
			done = false
		}
	})
	return done, nil
}

// records is the number of records in a topic (its end offsets' sum).
func records(ctx context.Context, adm *kadm.Client, topic string) (int64, error) {
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return 0, err
	}
	var n int64
	ends.Each(func(end kadm.ListedOffset) { n += end.Offset })
	return n, nil
}

// deleteTopics deletes the run's output and internal topics: the disk is
// the benchmark's, not the run's.
func deleteTopics(ctx context.Context, adm *kadm.Client, appID string) error {
	topics, err := adm.ListTopics(ctx)
	if err != nil {
		return err
	}
	var names []string
	for _, name := range topics.Names() {
		if strings.HasPrefix(name, appID+"-") {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	resps, err := adm.DeleteTopics(ctx, names...)
	if err != nil {
		return err
	}
	return resps.Error()
}

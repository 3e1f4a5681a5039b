package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/samsa-io/samsa/internal/freeport"
)

// trial is one run of one runtime.
type trial struct {
	Runtime string `json:"runtime"`
	Run     int    `json:"run"`
	Records int    `json:"records"`
	// StartupSeconds is from the worker's exec until its /health said
	// ready (not part of the throughput).
	StartupSeconds float64 `json:"startup_seconds"`
	// SourceSeconds: connector creation until the topic held every line;
	// EndToEndSeconds: until the output file held every line.
	SourceSeconds   float64 `json:"source_seconds"`
	EndToEndSeconds float64 `json:"end_to_end_seconds"`
	SourceRate      float64 `json:"source_records_per_second"`
	EndToEndRate    float64 `json:"end_to_end_records_per_second"`
	// PeakRSSKiB is VmHWM at the end (the process's whole life, start-up
	// included); MeanRSSKiB the mean of VmRSS sampled every 100 ms from
	// connector creation to the end.
	PeakRSSKiB int64 `json:"peak_rss_kib"`
	MeanRSSKiB int64 `json:"mean_rss_kib"`
	// CPUSeconds is the worker's utime+stime from connector creation to
	// the end; BrokerCPUSeconds the broker's over the same time.
	CPUSeconds       float64 `json:"cpu_seconds"`
	CPUMicrosPerRec  float64 `json:"cpu_us_per_record"`
	BrokerCPUSeconds float64 `json:"broker_cpu_seconds"`
}

func (t trial) String() string {
	return fmt.Sprintf("end to end %.0f rec/s (%.2fs), source %.0f rec/s (%.2fs), peak RSS %d MiB, mean RSS %d MiB, CPU %.2f µs/record (broker %.1fs), start-up %.1fs",
		t.EndToEndRate, t.EndToEndSeconds, t.SourceRate, t.SourceSeconds, t.PeakRSSKiB/1024, t.MeanRSSKiB/1024, t.CPUMicrosPerRec, t.BrokerCPUSeconds, t.StartupSeconds)
}

func runTrial(ctx context.Context, o options, b *broker, runtime string, run int, input string) (trial, error) {
	t := trial{Runtime: runtime, Run: run, Records: o.lines}
	name := fmt.Sprintf("bench-%s-%d", runtime, run)
	dir := filepath.Join(o.out, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return t, err
	}
	if err := b.createTopic(ctx, name); err != nil {
		return t, fmt.Errorf("create topic %s: %w", name, err)
	}
	port, err := freeport.One()
	if err != nil {
		return t, err
	}
	props := filepath.Join(dir, "worker.properties")
	if err := os.WriteFile(props, []byte(workerProperties(o, b.addr, port, dir)), 0o644); err != nil {
		return t, err
	}
	started := time.Now()
	w, err := startProcess(workerCommand(o, runtime, props, dir), filepath.Join(dir, "worker.log"))
	if err != nil {
		return t, err
	}
	defer w.Stop(30 * time.Second)
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	if err := waitHealthy(ctx, w, base, 2*time.Minute); err != nil {
		return t, err
	}
	t.StartupSeconds = time.Since(started).Seconds()

	s := startSampler(w.PID())
	cpu0, err := cpuSeconds(w.PID())
	if err != nil {
		return t, err
	}
	brokerCPU0, err := cpuSeconds(b.PID())
	if err != nil {
		return t, err
	}
	output := filepath.Join(dir, "output.txt")
	created := time.Now()
	if err := createConnector(ctx, base, "source-"+name, map[string]string{
		"connector.class": "FileStreamSource", "tasks.max": "1",
		"file": input, "topic": name, "batch.size": strconv.Itoa(o.batchSize),
	}); err != nil {
		return t, err
	}
	if err := createConnector(ctx, base, "sink-"+name, map[string]string{
		"connector.class": "FileStreamSink", "tasks.max": "1",
		"file": output, "topics": name,
	}); err != nil {
		return t, err
	}
	want := int64(o.lines) * int64(o.lineBytes)
	deadline := created.Add(o.timeout)
	var sourceDone time.Duration
	// A worker that stops making progress (a JVM out of heap keeps
	// running with its threads dead) fails the run after stallLimit
	// rather than at the timeout.
	const stallLimit = time.Minute
	lastSize, lastGrowth := int64(0), created
	for {
		if !w.Alive() {
			return t, fmt.Errorf("worker exited (log %s)", w.Log)
		}
		if !b.Alive() {
			return t, fmt.Errorf("broker exited (log %s)", b.Log)
		}
		now := time.Now()
		if now.After(deadline) {
			return t, fmt.Errorf("not done after %s: output %d of %d bytes (log %s)", o.timeout, fileSize(output), want, w.Log)
		}
		if size := fileSize(output); size != lastSize {
			lastSize, lastGrowth = size, now
		} else if now.Sub(lastGrowth) > stallLimit {
			return t, fmt.Errorf("no progress for %s: output %d of %d bytes (log %s)", stallLimit, size, want, w.Log)
		}
		if sourceDone == 0 {
			end, err := b.endOffset(ctx, name)
			if err == nil && end >= int64(o.lines) {
				sourceDone = time.Since(created)
			}
		}
		// Every line has the same length, so the size says how many
		// arrived; the content is compared once it is complete.
		if fileSize(output) >= want {
			if sourceDone == 0 {
				sourceDone = time.Since(created) // the sink cannot be ahead
			}
			t.EndToEndSeconds = time.Since(created).Seconds()
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	cpu1, err := cpuSeconds(w.PID())
	if err != nil {
		return t, err
	}
	brokerCPU1, _ := cpuSeconds(b.PID())
	t.PeakRSSKiB, t.MeanRSSKiB = s.stop()
	t.SourceSeconds = sourceDone.Seconds()
	t.SourceRate = float64(o.lines) / t.SourceSeconds
	t.EndToEndRate = float64(o.lines) / t.EndToEndSeconds
	t.CPUSeconds = cpu1 - cpu0
	t.CPUMicrosPerRec = t.CPUSeconds / float64(o.lines) * 1e6
	t.BrokerCPUSeconds = brokerCPU1 - brokerCPU0

	// A doubled line would land after the last one: give the sink a
	// moment to write one before comparing.
	time.Sleep(2 * time.Second)
	w.Stop(30 * time.Second)
	if diff, err := sameFile(input, output); err != nil {
		return t, err
	} else if diff != "" {
		return t, fmt.Errorf("output %s differs from the input: %s", output, diff)
	}
	if size := fileSize(output); size != want {
		return t, fmt.Errorf("output has %d bytes, want %d", size, want)
	}
	// The files are the bulk of the disk used; the broker keeps the topic
	// until it is deleted.
	if err := os.Remove(output); err != nil {
		return t, err
	}
	return t, b.deleteTopic(ctx, name)
}

// workerProperties are one standalone worker's, the same for both
// runtimes: String converters, a fresh offsets file, the REST listener, and
// the producers' compression.type named (samsa connect's producers would
// otherwise use franz-go's default, snappy, where Kafka's default is none).
func workerProperties(o options, bootstrap string, port int, dir string) string {
	props := []string{
		"bootstrap.servers=" + bootstrap,
		"key.converter=org.apache.kafka.connect.storage.StringConverter",
		"value.converter=org.apache.kafka.connect.storage.StringConverter",
		"offset.storage.file.filename=" + filepath.Join(dir, "connect.offsets"),
		"offset.flush.interval.ms=" + strconv.Itoa(o.flushMs),
		"listeners=http://127.0.0.1:" + strconv.Itoa(port),
	}
	if o.compress != "" {
		props = append(props, "producer.compression.type="+o.compress)
	}
	return strings.Join(props, "\n") + "\n"
}

func workerCommand(o options, runtime, props, dir string) *exec.Cmd {
	if runtime == "samsa" {
		cmd := exec.Command(o.samsa, "connect", "--standalone", props)
		if o.profile {
			cmd.Env = append(os.Environ(), "SAMSA_CPUPROFILE="+filepath.Join(dir, "cpu.pprof"))
		}
		return cmd
	}
	args := strings.Fields(o.javaOpts)
	args = append(args, "-Dlog4j2.configurationFile="+o.log4j, "-cp", filepath.Join(o.libs, "*"),
		"org.apache.kafka.connect.cli.ConnectStandalone", props)
	return exec.Command(o.java, args...)
}

// waitHealthy waits for the worker's GET /health to answer 200.
func waitHealthy(ctx context.Context, w *process, base string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		if !w.Alive() {
			return fmt.Errorf("worker exited (log %s)", w.Log)
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/health", nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("worker not healthy after %s (log %s)", limit, w.Log)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// createConnector is POST /connectors; 201 Created is success.
func createConnector(ctx context.Context, base, name string, config map[string]string) error {
	body, _ := json.Marshal(map[string]any{"name": name, "config": config})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/connectors", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("create %s: %w", name, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		msg, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("create %s: %s: %s", name, resp.Status, msg)
	}
	return nil
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// sampler reads the worker's RSS every 100 ms.
type sampler struct {
	pid  int
	done chan struct{}
	res  chan [2]int64 // peak, mean
}

func startSampler(pid int) *sampler {
	s := &sampler{pid: pid, done: make(chan struct{}), res: make(chan [2]int64, 1)}
	go s.loop()
	return s
}

func (s *sampler) loop() {
	var sum, n, hwm int64
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		rss, h, err := memory(s.pid)
		if err == nil {
			sum, n, hwm = sum+rss, n+1, h
		}
		select {
		case <-s.done:
			mean := int64(0)
			if n > 0 {
				mean = sum / n
			}
			s.res <- [2]int64{hwm, mean}
			return
		case <-tick.C:
		}
	}
}

func (s *sampler) stop() (peak, mean int64) {
	close(s.done)
	r := <-s.res
	return r[0], r[1]
}

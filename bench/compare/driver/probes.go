package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// pollEvery is the gap between probes: short against the start-up times
// measured (hundreds of ms), long enough not to take a core from the broker
// on a small machine.
const pollEvery = time.Millisecond

// waitConnect returns the time from process start until a TCP connect to
// the client listener succeeds.
func waitConnect(b *broker, timeout time.Duration) (time.Duration, error) {
	deadline := b.started.Add(timeout)
	for time.Now().Before(deadline) {
		if !b.alive() {
			return 0, fmt.Errorf("%s: %w before accepting a connection:\n%s", b.kind.name(), errExited, b.logTail())
		}
		c, err := net.DialTimeout("tcp", b.addr(), 100*time.Millisecond)
		if err == nil {
			at := time.Since(b.started)
			c.Close()
			return at, nil
		}
		time.Sleep(pollEvery)
	}
	return 0, fmt.Errorf("%s: no connection accepted within %s:\n%s", b.kind.name(), timeout, b.logTail())
}

// probe retries fn until it succeeds and returns the time since the
// broker's process start.
func probe(b *broker, timeout time.Duration, what string, fn func(ctx context.Context) error) (time.Duration, error) {
	deadline := b.started.Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		if !b.alive() {
			return 0, fmt.Errorf("%s: %w before %s:\n%s", b.kind.name(), errExited, what, b.logTail())
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		last = fn(ctx)
		cancel()
		if last == nil {
			return time.Since(b.started), nil
		}
		time.Sleep(5 * pollEvery)
	}
	return 0, fmt.Errorf("%s: %s not done within %s: %v:\n%s", b.kind.name(), what, timeout, last, b.logTail())
}

// newClient is a client for probes: no retries of its own, so each probe
// is one attempt. It speaks TLS to a TLS broker, as the workloads do.
func newClient(b *broker, opts ...kgo.Opt) (*kgo.Client, error) {
	base := []kgo.Opt{
		kgo.SeedBrokers(b.addr()),
		kgo.RequestRetries(0),
		kgo.RecordRetries(1),
		kgo.RetryTimeout(time.Second),
		kgo.DialTimeout(time.Second),
		kgo.MetadataMinAge(10 * time.Millisecond),
	}
	if f := b.kind.tls(); f != nil {
		cfg, err := f.clientConfig()
		if err != nil {
			return nil, err
		}
		base = append(base, kgo.DialTLSConfig(cfg))
	}
	return kgo.NewClient(append(base, opts...)...)
}

// metadataOK succeeds once the broker answers Metadata listing itself.
func metadataOK(cl *kgo.Client) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		req := kmsg.NewPtrMetadataRequest()
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			return err
		}
		if len(resp.Brokers) == 0 {
			return fmt.Errorf("metadata lists no brokers")
		}
		return nil
	}
}

// produceOK succeeds once one record to topic is acknowledged by all
// in-sync replicas.
func produceOK(cl *kgo.Client, topic string) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		return cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("recovery-probe")}).FirstErr()
	}
}

// endOffsetSum is the sum of the high watermarks of topic's partitions.
func endOffsetSum(cl *kgo.Client, topic string) (int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, topic)
	if err != nil {
		return 0, err
	}
	var sum int64
	var ferr error
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			ferr = o.Err
		}
		sum += o.Offset
	})
	return sum, ferr
}

// procStatusKB reads a kB field (VmRSS, VmHWM) of /proc/PID/status.
func procStatusKB(pid int, field string) (int64, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || name != field {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			break
		}
		return strconv.ParseInt(f[0], 10, 64)
	}
	return 0, fmt.Errorf("/proc/%d/status: no %s", pid, field)
}

// resetPeakRSS sets VmHWM back to the current RSS (clear_refs 5, Linux
// 4.0+), so the next reading is the peak of one phase only.
func resetPeakRSS(pid int) error {
	return os.WriteFile("/proc/"+strconv.Itoa(pid)+"/clear_refs", []byte("5"), 0)
}

// loadAvg is the 1-minute load average.
func loadAvg() float64 {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	f := strings.Fields(string(data))
	if len(f) == 0 {
		return -1
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}

// readEach reads a kB field of /proc/PID/status for every pid, in order;
// the first error is returned with the figures read (0 where one failed).
func readEach(pids []int, field string) ([]int64, error) {
	out := make([]int64, len(pids))
	var first error
	for i, pid := range pids {
		v, err := procStatusKB(pid, field)
		if err != nil && first == nil {
			first = err
		}
		out[i] = v
	}
	return out, first
}

// joinInts is "1,2,3", as samsa bench --broker-pid takes several PIDs.
func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

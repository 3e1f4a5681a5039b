package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/bench/internal/procstat"
	"github.com/samsa-io/samsa/bench/internal/tabulate"
)

// trial is one consumer count on one broker in one run.
type trial struct {
	Broker     string `json:"broker"`
	Run        int    `json:"run"`
	Consumers  int    `json:"consumers"`
	Records    int    `json:"records"`
	ValueBytes int    `json:"value_bytes"`
	// Mode is how the group started at the backlog's first offset (-start:
	// config, prime or live); Refused is the broker's refusal of the group
	// config when Mode is the -fallback's instead of config.
	Mode    string `json:"mode"`
	Refused string `json:"refused,omitempty"`
	// ProduceSeconds is how long the backlog took to produce (acks=all).
	ProduceSeconds float64 `json:"produce_seconds"`
	// Seconds runs from the consumers' creation (in the live mode, from
	// the produce's start) to the last offset's first delivery; Rate is
	// Records over it. FirstSeconds is the time to the first record and
	// DeliveryRate the records over the time after it (join excluded).
	Seconds      float64 `json:"seconds"`
	Rate         float64 `json:"records_per_second"`
	FirstSeconds float64 `json:"first_record_seconds"`
	DeliveryRate float64 `json:"delivery_records_per_second"`
	// Delivered counts every record the consumers got; Duplicates those
	// whose offset had been delivered before; Redelivered those with a
	// delivery count above 1 (the broker's view of the same thing).
	Delivered   int64 `json:"delivered"`
	Duplicates  int64 `json:"duplicates"`
	Redelivered int64 `json:"redelivered"`
	// PerConsumerMin and Max are the fewest and most records one consumer
	// got: how evenly the broker spread one partition.
	PerConsumerMin int64 `json:"per_consumer_min"`
	PerConsumerMax int64 `json:"per_consumer_max"`
	// AckErrors counts partitions of acknowledgements the broker (or the
	// client) reported failed; FlushSeconds is the final FlushAcks.
	AckErrors    int64   `json:"ack_errors"`
	FirstAckErr  string  `json:"first_ack_error,omitempty"`
	FlushSeconds float64 `json:"flush_seconds"`
	// LatencyP50Millis and P99 are, in the live mode only, the
	// percentiles of poll time minus the record's produce timestamp over
	// every first delivery (the backlog mode's records wait by design).
	LatencyP50Millis float64 `json:"latency_p50_ms,omitempty"`
	LatencyP99Millis float64 `json:"latency_p99_ms,omitempty"`
	// StartOffset and Lag are the share-partition's start offset and lag
	// (KIP-1226: records not yet acknowledged) the group describes after
	// the consumers flushed their acknowledgements and left; -1: not
	// described.
	StartOffset int64 `json:"start_offset"`
	Lag         int64 `json:"lag"`
	// The broker's CPU seconds (user+system, all threads) during the
	// consumption, and its RSS sampled every 200 ms during it.
	BrokerCPUSeconds float64 `json:"broker_cpu_seconds"`
	PeakRSSKiB       int64   `json:"peak_rss_kib"`
	MeanRSSKiB       int64   `json:"mean_rss_kib"`
	// DriverCPUSeconds is this process's CPU during the consumption: the
	// consumers share the machine with the broker.
	DriverCPUSeconds float64 `json:"driver_cpu_seconds"`
}

func (t trial) String() string {
	s := fmt.Sprintf("%d records in %.2fs: %.0f records/s (after the first record %.0f/s), first after %.2fs; duplicates %d, redelivered %d, per consumer %d..%d, ack errors %d; broker CPU %.2fs (%.2fs per 1M), peak RSS %d MiB; after the flush start offset %d, lag %d",
		t.Records, t.Seconds, t.Rate, t.DeliveryRate, t.FirstSeconds, t.Duplicates, t.Redelivered,
		t.PerConsumerMin, t.PerConsumerMax, t.AckErrors, t.BrokerCPUSeconds, tabulate.PerMillion(t.BrokerCPUSeconds, t.Records),
		t.PeakRSSKiB/1024, t.StartOffset, t.Lag)
	if t.Mode == startLive {
		s += fmt.Sprintf("; produce to delivery p50 %.1f ms, p99 %.1f ms", t.LatencyP50Millis, t.LatencyP99Millis)
	}
	s += " [" + t.Mode + "]"
	return s
}

// resetKey is the group config that makes a new share group start at the
// log start instead of the high watermark.
const resetKey = "share.auto.offset.reset"

// setEarliest sets the group's share.auto.offset.reset to earliest with an
// IncrementalAlterConfigs on the GROUP resource (kadm has no call for
// group configs). The group need not exist yet.
func setEarliest(ctx context.Context, addr, group string) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return err
	}
	defer cl.Close()
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType = kmsg.ConfigResourceTypeGroupConfig
	res.ResourceName = group
	cfg := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	cfg.Name = resetKey
	cfg.Op = kmsg.IncrementalAlterConfigOpSet
	v := "earliest"
	cfg.Value = &v
	res.Configs = append(res.Configs, cfg)
	req.Resources = append(req.Resources, res)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return err
	}
	for _, r := range resp.Resources {
		if err := kerrOf(r.ErrorCode, r.ErrorMessage); err != nil {
			return err
		}
	}
	return nil
}

func kerrOf(code int16, msg *string) error {
	if code == 0 {
		return nil
	}
	err := kerr.ErrorForCode(code)
	if msg != nil && *msg != "" {
		return fmt.Errorf("%w: %s", err, *msg)
	}
	return err
}

// runTrial measures one consumer count on srv.
func runTrial(ctx context.Context, o options, srv *server, run, consumers int) (trial, error) {
	t := trial{Broker: srv.kind, Run: run, Consumers: consumers, Records: o.records, ValueBytes: o.valueBytes, StartOffset: -1, Lag: -1}
	topic := fmt.Sprintf("share-c%d", consumers)
	if run == 0 {
		topic = "share-warmup"
	}
	group := "bench-" + topic
	if resp, err := srv.admin.CreateTopic(ctx, 1, 1, nil, topic); err != nil || resp.Err != nil {
		return t, fmt.Errorf("create %s: %w", topic, errors.Join(err, resp.Err))
	}
	t.Mode = o.start
	if t.Mode == startConfig {
		if err := setEarliest(ctx, srv.addr, group); err != nil {
			if o.fallback == fallbackNever {
				return t, fmt.Errorf("%s=earliest on group %s: %w", resetKey, group, err)
			}
			t.Mode, t.Refused = o.fallback, err.Error()
			fmt.Fprintf(os.Stderr, "%s refuses %s=earliest on group %s (%v): -fallback %s\n",
				srv.kind, resetKey, group, err, o.fallback)
		}
	}
	if t.Mode == startPrime {
		if err := prime(ctx, srv, group, topic, o.settle); err != nil {
			return t, fmt.Errorf("prime the group: %w", err)
		}
	}
	if t.Mode != startLive {
		start := time.Now()
		if err := produce(ctx, srv.addr, topic, o); err != nil {
			return t, fmt.Errorf("produce: %w", err)
		}
		t.ProduceSeconds = time.Since(start).Seconds()
	}

	seen := newOffsetSet(o.records)
	var (
		delivered, dups, redelivered, ackErrs atomic.Int64
		firstAckErr                           atomic.Value
		firstAt                               atomic.Int64 // unix nanos of the first record
		lastAt                                atomic.Int64 // of the record that completed the backlog
		unique                                atomic.Int64
	)
	done := make(chan struct{})
	var doneOnce sync.Once
	pollCtx, cancelPoll := context.WithCancel(ctx)
	defer cancelPoll()

	cpu0, err := procstat.CPUSeconds(srv.pid)
	if err != nil {
		return t, err
	}
	self0, _ := procstat.CPUSeconds(os.Getpid())
	sampler := startSampler(srv.pid)
	start := time.Now()

	clients := make([]*kgo.Client, consumers)
	for i := range clients {
		cl, err := kgo.NewClient(kgo.SeedBrokers(srv.addr), kgo.ClientID(fmt.Sprintf("share-bench-%d", i)),
			kgo.ShareGroup(group), kgo.ConsumeTopics(topic),
			kgo.ShareAckCallback(func(_ *kgo.Client, rs kgo.ShareAckResults) {
				for _, r := range rs {
					if r.Err != nil {
						ackErrs.Add(1)
						firstAckErr.CompareAndSwap(nil, r.Err.Error())
					}
				}
			}))
		if err != nil {
			for _, c := range clients[:i] {
				c.Close()
			}
			return t, err
		}
		clients[i] = cl
	}
	counts := make([]int64, consumers)
	lats := make([][]time.Duration, consumers)
	pollErrs := make(chan error, consumers)
	var wg sync.WaitGroup
	for i, cl := range clients {
		wg.Go(func() {
			for {
				fs := cl.PollRecords(pollCtx, 0)
				if pollCtx.Err() == nil {
					for _, e := range fs.Errors() {
						select {
						case pollErrs <- fmt.Errorf("consumer %d: %s[%d]: %w", i, e.Topic, e.Partition, e.Err):
						default:
						}
						return
					}
				}
				now := time.Now().UnixNano()
				fs.EachRecord(func(r *kgo.Record) {
					firstAt.CompareAndSwap(0, now)
					counts[i]++
					delivered.Add(1)
					if r.DeliveryCount() > 1 {
						redelivered.Add(1)
					}
					if !seen.add(r.Offset) {
						dups.Add(1)
						return
					}
					if t.Mode == startLive {
						lats[i] = append(lats[i], time.Duration(now-r.Timestamp.UnixNano()))
					}
					if unique.Add(1) == int64(o.records) {
						lastAt.Store(now)
						doneOnce.Do(func() { close(done) })
					}
				})
				// Explicit acknowledgement: every record of this poll
				// accepted, sent with the next ShareFetch or
				// ShareAcknowledge (after the end, by the flush below).
				cl.MarkAcks(kgo.AckAccept)
				if pollCtx.Err() != nil {
					return
				}
			}
		})
	}

	var runErr error
	if t.Mode == startLive {
		if err := awaitMembers(ctx, srv.admin, group, topic, consumers, time.Minute); err != nil {
			runErr = err
		} else {
			// The share-partition starts at the high watermark (0) when
			// a member first fetches it.
			time.Sleep(o.settle)
			start = time.Now()
			if err := produce(ctx, srv.addr, topic, o); err != nil {
				runErr = fmt.Errorf("produce: %w", err)
			}
			t.ProduceSeconds = time.Since(start).Seconds()
		}
	}
	if runErr == nil {
		runErr = awaitDone(done, pollErrs, &firstAt, &unique, o)
	}
	cancelPoll()
	wg.Wait()
	cpu1, _ := procstat.CPUSeconds(srv.pid)
	self1, _ := procstat.CPUSeconds(os.Getpid())
	peak, mean := sampler.stop()

	flushStart := time.Now()
	var flushErr error
	for _, cl := range clients {
		fctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		if err := cl.FlushAcks(fctx); err != nil && flushErr == nil {
			flushErr = fmt.Errorf("flush acknowledgements: %w", err)
		}
		cancel()
	}
	t.FlushSeconds = time.Since(flushStart).Seconds()
	for _, cl := range clients {
		cl.Close()
	}
	if runErr != nil {
		return t, runErr
	}

	t.Seconds = time.Duration(lastAt.Load() - start.UnixNano()).Seconds()
	t.Rate = float64(o.records) / t.Seconds
	if f := firstAt.Load(); f > 0 {
		t.FirstSeconds = time.Duration(f - start.UnixNano()).Seconds()
		if d := time.Duration(lastAt.Load() - f).Seconds(); d > 0 {
			t.DeliveryRate = float64(o.records) / d
		}
	}
	t.Delivered, t.Duplicates, t.Redelivered = delivered.Load(), dups.Load(), redelivered.Load()
	t.PerConsumerMin, t.PerConsumerMax = counts[0], counts[0]
	for _, c := range counts {
		t.PerConsumerMin, t.PerConsumerMax = min(t.PerConsumerMin, c), max(t.PerConsumerMax, c)
	}
	if t.Mode == startLive {
		all := slices.Concat(lats...)
		slices.Sort(all)
		t.LatencyP50Millis, t.LatencyP99Millis = percentileMillis(all, 0.50), percentileMillis(all, 0.99)
	}
	t.AckErrors = ackErrs.Load()
	if s, ok := firstAckErr.Load().(string); ok {
		t.FirstAckErr = s
	}
	t.BrokerCPUSeconds = cpu1 - cpu0
	t.DriverCPUSeconds = self1 - self0
	t.PeakRSSKiB, t.MeanRSSKiB = peak, mean
	t.StartOffset, t.Lag = settled(ctx, srv.admin, group, topic, int64(o.records))
	if flushErr != nil {
		return t, flushErr
	}
	return t, nil
}

// percentileMillis is the p-quantile (nearest rank) of sorted, in ms.
func percentileMillis(sorted []time.Duration, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := min(len(sorted)-1, max(0, int(math.Ceil(p*float64(len(sorted))))-1))
	return float64(sorted[i]) / float64(time.Millisecond)
}

// firstRecordTimeout bounds the wait for the first record: a broker that
// accepted share.auto.offset.reset=earliest but starts the group at the
// high watermark would otherwise keep the trial waiting for -timeout.
const firstRecordTimeout = time.Minute

// awaitDone waits until every offset was delivered, a consumer failed, no
// record came within firstRecordTimeout or the backlog took o.timeout.
func awaitDone(done <-chan struct{}, pollErrs <-chan error, firstAt, unique *atomic.Int64, o options) error {
	deadline := time.After(o.timeout)
	first := time.NewTicker(firstRecordTimeout)
	defer first.Stop()
	for {
		select {
		case <-done:
			return nil
		case err := <-pollErrs:
			return err
		case <-first.C:
			if firstAt.Load() == 0 {
				return fmt.Errorf("no record delivered within %v of the consumers' start (did the broker apply %s=earliest?)", firstRecordTimeout, resetKey)
			}
		case <-deadline:
			return fmt.Errorf("%d of %d offsets delivered after %v", unique.Load(), o.records, o.timeout)
		}
	}
}

// prime makes the group's share-partition of topic (still empty) start at
// offset 0 whatever share.auto.offset.reset is: one consumer joins, is
// assigned the partition, fetches for settle (its first ShareFetch
// initializes the share-partition at the high watermark) and leaves.
func prime(ctx context.Context, srv *server, group, topic string, settle time.Duration) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(srv.addr), kgo.ClientID("share-bench-prime"),
		kgo.ShareGroup(group), kgo.ConsumeTopics(topic))
	if err != nil {
		return err
	}
	pctx, cancel := context.WithCancel(ctx)
	polled := make(chan error, 1)
	go func() {
		defer close(polled)
		for pctx.Err() == nil {
			fs := cl.PollRecords(pctx, 0)
			if n := fs.NumRecords(); n > 0 {
				polled <- fmt.Errorf("the empty topic delivered %d records", n)
				return
			}
		}
	}()
	err = awaitMembers(ctx, srv.admin, group, topic, 1, time.Minute)
	if err == nil {
		select {
		case err = <-polled:
		case <-time.After(settle):
		}
	}
	cancel()
	<-polled
	cl.Close()
	return err
}

// awaitMembers waits until the group describes n members, each assigned
// the topic's partition.
func awaitMembers(ctx context.Context, adm *kadm.Client, group, topic string, n int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		gs, err := adm.DescribeShareGroups(ctx, group)
		assigned := 0
		if err == nil {
			for _, m := range gs[group].Members {
				if _, ok := m.Assignment[topic]; ok {
					assigned++
				}
			}
			if assigned == n {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("share group %s: %d of %d members assigned %s after %v (%v)", group, assigned, n, topic, timeout, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// settled describes the group's share-partition once every record is
// acknowledged (its lag is 0, or, on a broker that reports no lag, its
// start offset is past the backlog), or as it is after 15 s: the start
// offset and the lag (-1 each when the group cannot be described or the
// broker reports none). Kafka's start offset may stay at the last batch
// its persister moved past while the lag is already 0.
func settled(ctx context.Context, adm *kadm.Client, group, topic string, want int64) (start, lag int64) {
	start, lag = -1, -1
	// A broker that cannot describe the group gets 2 s, one still moving
	// its start offset 15 s.
	for failed, i := 0, 0; failed < 20 && i < 150; i++ {
		offs, err := adm.DescribeShareGroupOffsets(ctx, group)
		o, ok := offs[group].Offsets[topic][0]
		if err != nil || !ok || o.Err != nil {
			failed++
		} else {
			start, lag = o.StartOffset, o.Lag
			if lag == 0 || (lag < 0 && start >= want) {
				return start, lag
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return start, lag
}

// produce writes the backlog to the topic's one partition: a distinct key
// each and a value of random letters and digits (a fixed seed),
// uncompressed (Kafka's producer default), acks=all, 5 ms linger.
func produce(ctx context.Context, addr, topic string, o options) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(topic),
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerLinger(5*time.Millisecond),
		kgo.MaxBufferedRecords(100_000))
	if err != nil {
		return err
	}
	defer cl.Close()
	rng := rand.New(rand.NewPCG(21, 21))
	var first atomic.Value
	for i := range o.records {
		r := &kgo.Record{Key: fmt.Appendf(nil, "k%09d", i), Value: randomValue(rng, o.valueBytes)}
		cl.Produce(ctx, r, func(_ *kgo.Record, err error) {
			if err != nil {
				first.CompareAndSwap(nil, err)
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		return err
	}
	if err, ok := first.Load().(error); ok {
		return err
	}
	return nil
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

// offsetSet is which offsets of the backlog were delivered, one bit each,
// set from every consumer's goroutine.
type offsetSet struct {
	n     int64
	words []atomic.Uint64
}

func newOffsetSet(n int) *offsetSet {
	return &offsetSet{n: int64(n), words: make([]atomic.Uint64, (n+63)/64)}
}

// add marks offset delivered and says whether it was new. An offset past
// the backlog (none is produced) counts as new, so it is not a duplicate.
func (s *offsetSet) add(offset int64) bool {
	if offset < 0 || offset >= s.n {
		return true
	}
	bit := uint64(1) << (offset % 64)
	return s.words[offset/64].Or(bit)&bit == 0
}

// sampler reads the broker's VmRSS every 200 ms.
type sampler struct {
	stopc chan struct{}
	done  chan struct{}
	peak  int64
	sum   int64
	n     int64
}

func startSampler(pid int) *sampler {
	s := &sampler{stopc: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			if rss, _, err := procstat.Memory(pid); err == nil {
				s.peak = max(s.peak, rss)
				s.sum += rss
				s.n++
			}
			select {
			case <-s.stopc:
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

// stop ends the sampling: the peak and the mean RSS in KiB.
func (s *sampler) stop() (peak, mean int64) {
	close(s.stopc)
	<-s.done
	if s.n == 0 {
		return 0, 0
	}
	return s.peak, s.sum / s.n
}

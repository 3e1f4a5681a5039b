package cli

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/clock"
	"github.com/samsa-io/samsa/internal/task"
)

// benchRun is one bench invocation.
type benchRun struct {
	cmd   *cobra.Command
	conn  *connection
	flags *benchFlags
	clock clock.Clock
	base  time.Time // send times in values are nanoseconds since base
}

// progressStep is how many records pass between progress bar updates, so
// the bar's mutex stays out of the per-record path.
const progressStep = 4096

// since is the monotonic time since base.
func (b *benchRun) since() time.Duration { return b.clock.Now().Sub(b.base) }

// poolSize bounds the records in flight: about 32 MiB of values, like the
// Java producer's buffer.memory, within [1024, 100000] records and never more
// than the run needs.
func (bf *benchFlags) poolSize() int {
	n := (32 << 20) / bf.recordSize
	n = min(max(n, 1024), 100_000)
	return int(min(int64(n), bf.records))
}

func (b *benchRun) produce(ctx context.Context) (benchResult, error) {
	p, err := b.newProducer(ctx, rand.Uint64())
	if err != nil {
		return benchResult{}, err
	}
	defer p.cl.Close()
	bar := newProgress(b.cmd.ErrOrStderr(), b.flags.records, "producing")
	start := b.since()
	err = p.run(ctx, b.flags.records, barAdder(bar))
	elapsed := b.since() - start
	finishBar(bar)
	if err != nil {
		return benchResult{}, err
	}
	acked, nbytes, latency := p.totals()
	res := benchResult{
		Records:        acked,
		Bytes:          nbytes,
		ElapsedSeconds: elapsed.Seconds(),
		Latency:        latency,
	}
	if b.flags.waitReplicated {
		after, err := b.awaitReplicated(ctx)
		if err != nil {
			return benchResult{}, err
		}
		secs := after.Seconds()
		res.ReplicatedAfterSeconds = &secs
	}
	return res, nil
}

// replicationBarrier is the value of awaitReplicated's records.
const replicationBarrier = "samsa bench: replication barrier"

// awaitReplicated produces one record to every partition of the topic with
// acks=all and waits for the acknowledgements. A leader acknowledges it
// once every in-sync replica has it, hence everything before it: with
// --acks 1 the run ends when the leaders have the records, while the
// followers may still be copying them, at a cost in CPU that would
// otherwise fall on whatever runs next. It returns the time the barrier
// took. The barrier records stay in the topic, after the run's.
func (b *benchRun) awaitReplicated(ctx context.Context) (time.Duration, error) {
	start := b.since()
	cl, err := b.conn.client(b.cmd, kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ProducerLinger(0),
		kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	adm := b.conn.adminFor(cl)
	octx, cancel := b.conn.opContext(ctx)
	defer cancel()
	td, err := topicMetadata(octx, adm, b.flags.topic)
	if err != nil {
		return 0, b.conn.reachErr(b.cmd, err)
	}
	var recs []*kgo.Record
	for _, p := range td.Partitions.Numbers() {
		recs = append(recs, &kgo.Record{Topic: b.flags.topic, Partition: p, Value: []byte(replicationBarrier)})
	}
	if err := cl.ProduceSync(octx, recs...).FirstErr(); err != nil {
		return 0, fmt.Errorf("replication barrier: %w", err)
	}
	return b.since() - start, nil
}

func (b *benchRun) consume(ctx context.Context) (benchResult, error) {
	starts, ends, err := b.listBounds(ctx)
	if err != nil {
		return benchResult{}, err
	}
	offsets := map[int32]kgo.Offset{}
	var available int64
	for p, end := range ends {
		if n := end - starts[p]; n > 0 {
			available += n
			offsets[p] = kgo.NewOffset().At(starts[p])
		}
	}
	target := min(b.flags.records, available)
	if target == 0 {
		return benchResult{}, fmt.Errorf("topic %q is empty: run bench produce first", b.flags.topic)
	}
	if target < b.flags.records {
		fmt.Fprintf(b.cmd.ErrOrStderr(), "topic %q holds %d records; reading those\n", b.flags.topic, available)
	}
	cl, err := b.conn.client(b.cmd, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{b.flags.topic: offsets}))
	if err != nil {
		return benchResult{}, err
	}
	defer cl.Close()
	bar := newProgress(b.cmd.ErrOrStderr(), target, "consuming")
	c := &benchConsumer{bench: b, cl: cl, target: target}
	start := b.since()
	err = c.consume(ctx, barAdder(bar))
	elapsed := b.since() - start
	finishBar(bar)
	if err != nil {
		return benchResult{}, err
	}
	return benchResult{Records: c.records, Bytes: c.bytes, ElapsedSeconds: elapsed.Seconds()}, nil
}

// e2e produces and consumes at once. The consumer starts at the end offsets
// listed before the first send and counts only values carrying this run's
// id, so other traffic on the topic does not count.
func (b *benchRun) e2e(ctx context.Context) (benchResult, error) {
	_, ends, err := b.listBounds(ctx)
	if err != nil {
		return benchResult{}, err
	}
	offsets := map[int32]kgo.Offset{}
	for p, end := range ends {
		offsets[p] = kgo.NewOffset().At(end)
	}
	fetching := make(chan struct{})
	var once sync.Once
	cl, err := b.conn.client(b.cmd,
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{b.flags.topic: offsets}),
		kgo.WithHooks(fetchSentHook(func() { once.Do(func() { close(fetching) }) })))
	if err != nil {
		return benchResult{}, err
	}
	defer cl.Close()
	runID := rand.Uint64()
	p, err := b.newProducer(ctx, runID)
	if err != nil {
		return benchResult{}, err
	}
	defer p.cl.Close()

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	c := &benchConsumer{bench: b, cl: cl, target: b.flags.records, runID: runID}
	consumed := make(chan error, 1)
	g := task.NewGroup(runCtx)
	defer g.Stop()
	g.Go(func(ctx context.Context) {
		err := c.consume(ctx, func(int64) {})
		if err != nil {
			cancel()
		}
		consumed <- err
	})
	// The consumer's first fetch is outstanding before the first send, so
	// early records do not measure consumer start-up.
	select {
	case <-fetching:
	case <-time.After(b.conn.timeout):
		return benchResult{}, fmt.Errorf("e2e: the consumer sent no fetch within %s (--timeout)", b.conn.timeout)
	case <-runCtx.Done():
	}

	bar := newProgress(b.cmd.ErrOrStderr(), b.flags.records, "e2e")
	start := b.since()
	if err := p.run(runCtx, b.flags.records, barAdder(bar)); err != nil {
		finishBar(bar)
		cancel()
		if cerr := <-consumed; cerr != nil && !errors.Is(cerr, context.Canceled) {
			return benchResult{}, cerr
		}
		return benchResult{}, err
	}
	err = <-consumed
	elapsed := b.since() - start
	_, _, ackLatency := p.totals()
	finishBar(bar)
	if err != nil {
		return benchResult{}, err
	}
	return benchResult{
		Records:        c.records,
		Bytes:          c.bytes,
		ElapsedSeconds: elapsed.Seconds(),
		Latency:        c.hist.summary(b.flags.percentiles...),
		AckLatency:     ackLatency,
	}, nil
}

// listBounds lists every partition's log start and high watermark.
func (b *benchRun) listBounds(ctx context.Context) (starts, ends map[int32]int64, err error) {
	cl, err := b.conn.client(b.cmd)
	if err != nil {
		return nil, nil, err
	}
	adm := b.conn.adminFor(cl)
	defer adm.Close()
	ctx, cancel := b.conn.opContext(ctx)
	defer cancel()
	td, err := topicMetadata(ctx, adm, b.flags.topic)
	if err != nil {
		return nil, nil, b.conn.reachErr(b.cmd, err)
	}
	ps := td.Partitions.Numbers()
	if starts, err = listOffsets(ctx, b.flags.topic, ps, adm.ListStartOffsets); err != nil {
		return nil, nil, b.conn.reachErr(b.cmd, err)
	}
	if ends, err = listOffsets(ctx, b.flags.topic, ps, adm.ListEndOffsets); err != nil {
		return nil, nil, b.conn.reachErr(b.cmd, err)
	}
	return starts, ends, nil
}

func barAdder(bar *progressbar.ProgressBar) func(int64) {
	if bar == nil {
		return func(int64) {}
	}
	return func(n int64) { _ = bar.Add64(n) }
}

func finishBar(bar *progressbar.ProgressBar) {
	if bar != nil {
		_ = bar.Finish()
	}
}

// benchProducer sends pooled records. Promises run serially on the client's
// promise goroutine; mu makes the totals safe to read from the loop.
type benchProducer struct {
	bench   *benchRun
	cl      *kgo.Client
	pool    chan *kgo.Record
	topic   string
	cancel  context.CancelCauseFunc
	acks    ackCounter
	trouble *brokerTrouble

	mu    sync.Mutex
	hist  histogram // ack latency
	acked int64
	bytes int64
	err   error
}

// newProducer fills the record pool once: values of random capital letters
// (compressible like text, not like zeros) headed by the run id. It opens the
// produce connections up front so the first records do not measure dialing.
func (b *benchRun) newProducer(ctx context.Context, runID uint64) (*benchProducer, error) {
	size := b.flags.poolSize()
	trouble := &brokerTrouble{}
	cl, err := b.conn.client(b.cmd, append(b.flags.producerBenchOpts(size), kgo.WithHooks(trouble))...)
	if err != nil {
		return nil, err
	}
	p := &benchProducer{bench: b, cl: cl, pool: make(chan *kgo.Record, size), topic: b.flags.topic, trouble: trouble}
	rng := rand.New(rand.NewPCG(runID, uint64(b.flags.recordSize)))
	for range size {
		v := make([]byte, b.flags.recordSize)
		binary.BigEndian.PutUint64(v, runID)
		for i := benchHeader; i < len(v); i++ {
			v[i] = 'A' + byte(rng.IntN(26))
		}
		p.pool <- &kgo.Record{Topic: p.topic, Value: v}
	}
	openCtx, cancel := b.conn.opContext(ctx)
	defer cancel()
	if err := cl.EnsureProduceConnectionIsOpen(openCtx); err != nil {
		cl.Close()
		return nil, b.conn.reachErr(b.cmd, err)
	}
	return p, nil
}

// promise records the ack latency and returns the record to the pool. It
// must not block: the pool has room for every record.
func (p *benchProducer) promise(r *kgo.Record, err error) {
	now := p.bench.since()
	p.acks.answered.Add(1)
	p.mu.Lock()
	if err != nil {
		if p.err == nil {
			p.err = err
			p.cancel(err)
		}
	} else {
		p.hist.record(now - sentAt(r.Value))
		p.acked++
		p.bytes += int64(len(r.Value))
	}
	p.mu.Unlock()
	*r = kgo.Record{Topic: p.topic, Value: r.Value}
	p.pool <- r
}

// totals reads what the promises counted.
func (p *benchProducer) totals() (acked, bytes int64, latency *latencySummary) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.acked, p.bytes, p.hist.summary(p.bench.flags.percentiles...)
}

// sentAt reads the send time stamped into a bench value.
func sentAt(v []byte) time.Duration {
	return time.Duration(binary.BigEndian.Uint64(v[8:benchHeader]))
}

// run sends n records, paced by --rate, and waits for every ack. It gives
// up when records are in flight and none is answered for --timeout.
func (p *benchProducer) run(ctx context.Context, n int64, progress func(int64)) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	p.cancel = cancel
	watch := task.NewGroup(ctx)
	defer watch.Stop()
	watchAcks(watch, p.bench.clock, p.bench.conn.timeout, &p.acks, func() { cancel(errStalled) })
	pace := newPacer(p.bench.clock, p.bench.flags.rate)
	promise := p.promise // a method value made per call would allocate per record
	for i := int64(0); i < n; i++ {
		if err := pace.wait(ctx, i); err != nil {
			break
		}
		var r *kgo.Record
		select {
		case r = <-p.pool:
		case <-ctx.Done():
		}
		if r == nil {
			break
		}
		binary.BigEndian.PutUint64(r.Value[8:benchHeader], uint64(p.bench.since()))
		p.acks.sent.Add(1)
		p.cl.Produce(ctx, r, promise)
		if (i+1)%progressStep == 0 {
			progress(progressStep)
		}
	}
	pace.stop()
	flushErr := p.cl.Flush(ctx)
	progress(n % progressStep)
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case context.Cause(ctx) == errStalled:
		return fmt.Errorf("produce to topic %q: no acknowledgement within %s (--timeout) after %d acknowledged records%s",
			p.topic, p.bench.conn.timeout, p.acked, lastTrouble(p.trouble))
	case p.err != nil:
		return produceFailure(p.bench.cmd, p.bench.conn, p.topic, p.err, "", lastTrouble(p.trouble))
	case ctx.Err() != nil:
		return ctx.Err()
	case flushErr != nil:
		return flushErr
	}
	return nil
}

// pacer holds a loop to a rate by sleeping whenever it is more than a
// millisecond ahead of schedule, so fast rates cost no sleep per record.
type pacer struct {
	clock clock.Clock
	rate  float64
	start time.Time
	timer *time.Timer
}

func newPacer(c clock.Clock, rate float64) *pacer {
	return &pacer{clock: c, rate: rate, start: c.Now()}
}

func (p *pacer) wait(ctx context.Context, i int64) error {
	if p.rate <= 0 {
		return nil
	}
	due := time.Duration(float64(i) / p.rate * float64(time.Second))
	ahead := due - p.clock.Now().Sub(p.start)
	if ahead < time.Millisecond {
		return ctx.Err()
	}
	if p.timer == nil {
		p.timer = time.NewTimer(ahead)
	} else {
		p.timer.Reset(ahead)
	}
	select {
	case <-p.timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (p *pacer) stop() {
	if p.timer != nil {
		p.timer.Stop()
	}
}

// benchConsumer reads until target records are counted. With a run id only
// values stamped with it count, and each one's end-to-end latency is
// recorded.
type benchConsumer struct {
	bench   *benchRun
	cl      *kgo.Client
	target  int64
	runID   uint64
	hist    histogram // end-to-end latency, e2e only
	records int64
	bytes   int64
}

func (c *benchConsumer) consume(ctx context.Context, progress func(int64)) error {
	var sinceProgress int64
	for c.records < c.target {
		pollCtx, cancel := context.WithTimeout(ctx, c.bench.conn.timeout)
		fetches := c.cl.PollFetches(pollCtx)
		idle := pollCtx.Err() != nil
		cancel()
		if err := ctx.Err(); err != nil {
			return err
		}
		for _, fe := range fetches.Errors() {
			if !errors.Is(fe.Err, context.DeadlineExceeded) {
				return fmt.Errorf("consume from topic %q partition %d: %s", fe.Topic, fe.Partition, kafkaReason(fe.Err, ""))
			}
		}
		before := c.records
		fetches.EachRecord(c.count)
		sinceProgress += c.records - before
		if sinceProgress >= progressStep {
			progress(sinceProgress)
			sinceProgress = 0
		}
		if idle && c.records == before {
			return fmt.Errorf("consume from topic %q: %d of %d records read, then nothing for %s (--timeout)",
				c.bench.flags.topic, c.records, c.target, c.bench.conn.timeout)
		}
	}
	progress(sinceProgress)
	return nil
}

func (c *benchConsumer) count(r *kgo.Record) {
	if c.records >= c.target {
		return
	}
	if c.runID != 0 {
		if len(r.Value) < benchHeader || binary.BigEndian.Uint64(r.Value) != c.runID {
			return
		}
		c.hist.record(c.bench.since() - sentAt(r.Value))
	}
	c.records++
	c.bytes += int64(len(r.Value))
}

// fetchSentHook calls fn whenever the client has written a Fetch request.
type fetchSentHook func()

func (h fetchSentHook) OnBrokerWrite(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	const fetchKey = 1
	if key == fetchKey && err == nil {
		h()
	}
}

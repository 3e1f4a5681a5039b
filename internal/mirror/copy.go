package mirror

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/mirror/mm2"
)

// runCopy is MirrorMaker 2's source task: records of the source's
// partitions go to the same partitions of the remote topics with their
// keys, values, headers and timestamps; each copied record's (source
// offset, target offset) pair feeds the offset-sync rule; the source
// offsets copied so far go to the progress topic (a Kafka Connect offsets
// topic). At least once: progress is written after the producer flushed,
// so a crash re-copies what followed the last progress. Exactly once: the
// records and their progress go in one transaction on the target.
func (fl *flow) runCopy(ctx context.Context, task int) error {
	if err := fl.waitTopics(ctx); err != nil {
		return err
	}
	popts := []kgo.Opt{
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.RecordPartitioner(mirrorPartitioner{progress: fl.progressTopic(), keyed: kgo.StickyKeyPartitioner(nil)}),
		kgo.ProducerLinger(5 * time.Millisecond),
		// 100,000 records in flight per flow, shared by its copiers: more
		// buys no throughput and costs memory per copier.
		kgo.MaxBufferedRecords(max(10_000, 100_000/fl.tasks())),
		kgo.ProducerBatchMaxBytes(1 << 20),
	}
	if fl.cfg.ExactlyOnce {
		popts = append(popts, kgo.TransactionalID(fl.transactionalID(task)), kgo.TransactionTimeout(30*time.Second))
	}
	prod, err := fl.roleClient(fl.cfg.Target, roleProducer, popts...)
	if err != nil {
		return err
	}
	defer prod.Close()
	syncs, err := fl.roleClient(fl.offsetSyncsCluster(), roleProducer, kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ProducerLinger(0))
	if err != nil {
		return err
	}
	defer syncs.Close()

	progress, err := fl.readProgress(ctx)
	if err != nil {
		return err
	}
	cons, err := fl.roleClient(fl.cfg.Source, roleConsumer,
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxBytes(64<<20), kgo.FetchMaxPartitionBytes(4<<20),
	)
	if err != nil {
		return err
	}
	defer cons.Close()

	c := &copier{fl: fl, task: task, prod: prod, syncs: syncs, cons: cons, writer: mm2.NewSyncWriter(fl.cfg.OffsetLagMax),
		added: map[tp]bool{}, acked: map[tp]int64{}, written: map[tp]int64{}}
	grew := fl.topicsGrew()
	c.assign(progress)
	watchCtx, stopWatch := context.WithCancel(ctx)
	watched := make(chan struct{})
	// Stopped and waited for before the clients it uses are closed.
	defer func() { stopWatch(); <-watched }()
	go func() {
		defer close(watched)
		for {
			select {
			case <-watchCtx.Done():
				return
			case <-grew:
				grew = fl.topicsGrew()
				c.assign(progress)
			}
		}
	}()
	if fl.cfg.ExactlyOnce {
		return c.loopTransactional(ctx)
	}
	return c.loopAtLeastOnce(ctx)
}

// pollTimeout is consumer.poll.timeout.ms (MirrorSourceConfig's 1 s
// default): how long one poll of the copier waits for records.
func (fl *flow) pollTimeout() time.Duration {
	if fl.cfg.ConsumerPollTimeout > 0 {
		return fl.cfg.ConsumerPollTimeout
	}
	return time.Second
}

// adminCtx bounds one admin call by admin.timeout.ms (MirrorMaker's 60 s
// default).
func (fl *flow) adminCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	if fl.cfg.AdminTimeout > 0 {
		return context.WithTimeout(ctx, fl.cfg.AdminTimeout)
	}
	return context.WithCancel(ctx)
}

// waitTopics waits until the topic sync published the first set.
func (fl *flow) waitTopics(ctx context.Context) error {
	for {
		grew := fl.topicsGrew()
		fl.mu.Lock()
		n := len(fl.topics)
		fl.mu.Unlock()
		if n > 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-grew:
		}
	}
}

// transactionalID is stable per flow and task, so a restarted mirror
// fences the process it replaces and aborts its open transaction.
func (fl *flow) transactionalID(task int) string {
	return fmt.Sprintf("samsa-mirror-%s-%s-%d", fl.cfg.Source, fl.cfg.Target, task)
}

// mirrorPartitioner keeps a copied record in its source partition and
// spreads the progress records by key as Kafka Connect's producer does.
type mirrorPartitioner struct {
	progress string
	keyed    kgo.Partitioner
}

func (p mirrorPartitioner) ForTopic(topic string) kgo.TopicPartitioner {
	if topic == p.progress {
		return p.keyed.ForTopic(topic)
	}
	return kgo.ManualPartitioner().ForTopic(topic)
}

type copier struct {
	fl    *flow
	task  int
	prod  *kgo.Client
	syncs *kgo.Client
	cons  *kgo.Client

	mu      sync.Mutex
	writer  *mm2.SyncWriter
	added   map[tp]bool
	acked   map[tp]int64 // last source offset the target acknowledged
	written map[tp]int64 // last source offset in the progress topic
	failed  error
	// syncsDone counts offset syncs whose send completed, to hand to
	// writer.Acked under mu: a producer may call a promise inline, so the
	// promise itself must not take mu.
	syncsDone atomic.Int64
}

// releaseSyncs gives the writer back the room of the syncs sent; c.mu held.
func (c *copier) releaseSyncs() {
	for n := c.syncsDone.Swap(0); n > 0; n-- {
		c.writer.Acked()
	}
}

// assign starts consuming the partitions the topic sync added, from the
// progress topic's offsets or the source's start.
func (c *copier) assign(progress map[tp]int64) {
	add := map[string]map[int32]kgo.Offset{}
	c.mu.Lock()
	for t, n := range c.fl.mirrored() {
		for p := int32(0); p < n; p++ {
			k := tp{t, p}
			if c.added[k] || !c.fl.owns(c.task, t, p) {
				continue
			}
			c.added[k] = true
			off := kgo.NewOffset().AtStart()
			next := int64(0)
			if last, ok := progress[k]; ok {
				off = kgo.NewOffset().At(last + 1)
				next = last + 1
				c.written[k] = last
			}
			c.fl.setNext(t, p, next, -1)
			if add[t] == nil {
				add[t] = map[int32]kgo.Offset{}
			}
			add[t][p] = off
		}
	}
	c.mu.Unlock()
	if len(add) > 0 {
		c.cons.AddConsumePartitions(add)
	}
}

func (c *copier) poll(ctx context.Context) (kgo.Fetches, error) {
	fs := c.cons.PollRecords(ctx, c.fl.pollRecords())
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	var err error
	fs.EachError(func(t string, p int32, e error) {
		if !errors.Is(e, context.Canceled) && err == nil {
			err = fmt.Errorf("fetch %s[%d] from %s: %w", t, p, c.fl.cfg.Source, e)
		}
	})
	fs.EachPartition(func(p kgo.FetchTopicPartition) {
		if len(p.Records) > 0 {
			last := p.Records[len(p.Records)-1]
			c.fl.setNext(p.Topic, p.Partition, last.Offset+1, p.LastStableOffset)
		}
	})
	return fs, err
}

func (c *copier) out(r *kgo.Record) *kgo.Record {
	return &kgo.Record{
		Topic: c.fl.remote(r.Topic), Partition: r.Partition,
		Key: r.Key, Value: r.Value, Headers: r.Headers, Timestamp: r.Timestamp,
	}
}

// loopAtLeastOnce produces asynchronously and records progress every
// ProgressInterval after a flush.
func (c *copier) loopAtLeastOnce(ctx context.Context) error {
	tick := time.NewTicker(c.fl.progressInterval())
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			if err := c.commitProgress(ctx); err != nil {
				return err
			}
		default:
		}
		pctx, cancel := context.WithTimeout(ctx, c.fl.pollTimeout())
		fs, err := c.poll(pctx)
		cancel()
		if ctx.Err() != nil {
			return nil
		}
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		fs.EachRecord(func(r *kgo.Record) {
			upstream, k := r.Offset, tp{r.Topic, r.Partition}
			ts := r.Timestamp
			c.prod.Produce(ctx, c.out(r), func(o *kgo.Record, err error) {
				c.acked1(k, upstream, o, ts, err)
			})
		})
		c.mu.Lock()
		failed := c.failed
		c.mu.Unlock()
		if failed != nil {
			return failed
		}
	}
}

func (c *copier) acked1(k tp, upstream int64, o *kgo.Record, ts time.Time, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		if c.failed == nil && !errors.Is(err, context.Canceled) {
			c.failed = fmt.Errorf("produce to %s[%d] on %s: %w", o.Topic, o.Partition, c.fl.cfg.Target, err)
		}
		return
	}
	c.acked[k] = upstream
	c.fl.records.Add(1)
	c.fl.bytes.Add(int64(len(o.Key) + len(o.Value)))
	c.fl.lastLatency.Store(time.Since(ts).Milliseconds())
	c.releaseSyncs()
	if c.fl.cfg.EmitOffsetSyncs {
		for _, s := range c.writer.Record(k.topic, k.partition, upstream, o.Offset) {
			c.sendSync(s)
		}
	}
}

// sendSync writes an offset sync; losing one costs translation precision,
// never correctness (the next sync supersedes it), so a failure is logged,
// as Kafka's task does.
func (c *copier) sendSync(s mm2.OffsetSync) {
	c.syncs.Produce(context.Background(), &kgo.Record{Topic: c.fl.offsetSyncsTopic(), Partition: 0, Key: s.Key(), Value: s.Value()},
		func(_ *kgo.Record, err error) {
			c.syncsDone.Add(1)
			if err != nil {
				c.fl.log.Warn("mirror: offset sync not written", "err", err)
				return
			}
			c.fl.offsetSyncs.Add(1)
		})
}

// commitProgress flushes the producer, then writes the source offsets the
// target acknowledged to the progress topic, and the offset syncs Kafka's
// task sends on commit.
func (c *copier) commitProgress(ctx context.Context) error {
	if err := c.prod.Flush(ctx); err != nil {
		return err
	}
	c.mu.Lock()
	if c.failed != nil {
		err := c.failed
		c.mu.Unlock()
		return err
	}
	var recs []*kgo.Record
	for k, off := range c.acked {
		if w, ok := c.written[k]; ok && w >= off {
			continue
		}
		recs = append(recs, c.progressRecord(k, off))
		c.written[k] = off
	}
	c.mu.Unlock()
	if len(recs) > 0 {
		if err := c.prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			return err
		}
	}
	// Kafka's SourceTask.commit: after the offsets are stored, the delayed
	// syncs go, so a quiet partition's last records get one too.
	c.mu.Lock()
	c.releaseSyncs()
	for _, s := range c.writer.Pending() {
		c.sendSync(s)
	}
	c.mu.Unlock()
	return nil
}

func (c *copier) progressRecord(k tp, last int64) *kgo.Record {
	return &kgo.Record{
		Topic: c.fl.progressTopic(),
		Key:   mm2.SourceOffsetKey(connectorName, c.fl.cfg.Source, k.topic, k.partition),
		Value: mm2.SourceOffsetValue(last),
	}
}

// loopTransactional copies each poll in one transaction with its
// progress; offset syncs follow the commit, so a sync never names a
// target offset of an aborted transaction.
func (c *copier) loopTransactional(ctx context.Context) error {
	type pair struct {
		k                    tp
		upstream, downstream int64
		ts                   time.Time
		size                 int
	}
	for {
		pctx, cancel := context.WithTimeout(ctx, c.fl.pollTimeout())
		fs, err := c.poll(pctx)
		cancel()
		if ctx.Err() != nil {
			return nil
		}
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		if fs.NumRecords() == 0 {
			continue
		}
		if err := c.prod.BeginTransaction(); err != nil {
			return err
		}
		var (
			pmu   sync.Mutex
			pairs []pair
			perr  error
			last  = map[tp]int64{}
		)
		fs.EachRecord(func(r *kgo.Record) {
			k, upstream, ts := tp{r.Topic, r.Partition}, r.Offset, r.Timestamp
			last[k] = upstream
			c.prod.Produce(ctx, c.out(r), func(o *kgo.Record, err error) {
				pmu.Lock()
				defer pmu.Unlock()
				if err != nil {
					if perr == nil {
						perr = err
					}
					return
				}
				pairs = append(pairs, pair{k, upstream, o.Offset, ts, len(o.Key) + len(o.Value)})
			})
		})
		for k, off := range last {
			c.prod.Produce(ctx, c.progressRecord(k, off), func(_ *kgo.Record, err error) {
				if err != nil {
					pmu.Lock()
					if perr == nil {
						perr = err
					}
					pmu.Unlock()
				}
			})
		}
		flushErr := c.prod.Flush(ctx)
		pmu.Lock()
		if flushErr == nil {
			flushErr = perr
		}
		pmu.Unlock()
		commit := kgo.TryCommit
		if flushErr != nil {
			commit = kgo.TryAbort
		}
		if err := c.prod.EndTransaction(ctx, commit); err != nil {
			return fmt.Errorf("end the transaction on %s: %w", c.fl.cfg.Target, err)
		}
		if flushErr != nil {
			// The copy was aborted: start again from the committed progress.
			return fmt.Errorf("produce to %s: %w", c.fl.cfg.Target, flushErr)
		}
		c.mu.Lock()
		c.releaseSyncs()
		for _, p := range pairs {
			c.fl.records.Add(1)
			c.fl.bytes.Add(int64(p.size))
			c.fl.lastLatency.Store(time.Since(p.ts).Milliseconds())
			if c.fl.cfg.EmitOffsetSyncs {
				for _, s := range c.writer.Record(p.k.topic, p.k.partition, p.upstream, p.downstream) {
					c.sendSync(s)
				}
			}
		}
		for k, off := range last {
			c.written[k] = off
		}
		for _, s := range c.writer.Pending() {
			c.sendSync(s)
		}
		c.mu.Unlock()
	}
}

// readProgress reads the progress topic to its end (committed records
// only) and returns the last copied source offset of each partition.
func (fl *flow) readProgress(ctx context.Context) (map[tp]int64, error) {
	out := map[tp]int64{}
	err := fl.readTopic(ctx, fl.cfg.Target, fl.progressTopic(), func(r *kgo.Record) {
		conn, cluster, topic, part, off, err := mm2.DecodeSourceOffset(r.Key, r.Value)
		if err != nil || conn != connectorName || cluster != fl.cfg.Source {
			return
		}
		if r.Value == nil {
			delete(out, tp{topic, part})
			return
		}
		out[tp{topic, part}] = off
	})
	return out, err
}

package connectrt

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/connect"
	"github.com/samsa-io/samsa/internal/connectrt/api"
)

// maxPollRecords is consumer.max.poll.records, the connector's
// consumer.override.max.poll.records winning (Kafka's default 500).
func (t *taskRunner) maxPollRecords() int {
	v, ok := t.connConfig["consumer.override.max.poll.records"]
	if !ok || t.w.cfg.ConnectorOverridePolicy == "None" {
		v, ok = t.w.cfg.Consumer["max.poll.records"]
	}
	if n, err := strconv.Atoi(strings.TrimSpace(v)); ok && err == nil && n > 0 {
		return n
	}
	return 500
}

// sinkGroup is the consumer group of a sink connector's tasks, as Kafka names it.
func sinkGroup(connector string) string { return "connect-" + connector }

// runSink consumes the connector's topics as a member of its group,
// converts and transforms each record, and puts batches into the task. A
// partition's offset is committed only after the task flushed it (or what
// PreCommit answered), on offset.flush.interval.ms, before partitions are
// revoked and when the task stops: at least once, and exactly once where
// the task's writes are idempotent.
func (t *taskRunner) runSink(ctx context.Context, pl connect.Plugin) error {
	snk, ok := pl.New().(connect.SinkConnector)
	if !ok {
		return fmt.Errorf("connector class %s is not a sink connector", pl.Class)
	}
	s := &sinkLoop{t: t, task: snk.NewTask(), next: map[connect.TopicPartition]int64{}, seek: map[connect.TopicPartition]int64{}}
	if err := s.open(ctx); err != nil {
		return err
	}
	defer s.close()
	if err := safe(func() error { return s.task.Start(sinkContext{s}, t.taskConfig()) }); err != nil {
		return fmt.Errorf("sink task %s failed to start: %w", t.id, err)
	}
	s.started = true
	t.setState(ctx, api.StateRunning, nil)
	return s.run(ctx)
}

type sinkLoop struct {
	t       *taskRunner
	task    connect.SinkTask
	cl      *kgo.Client
	started bool

	// taskMu serializes calls into the task: the poll loop's Put and the
	// rebalance callbacks' Flush, Open and Close.
	taskMu          sync.Mutex
	mu              sync.Mutex
	next            map[connect.TopicPartition]int64 // next offset to commit, per owned partition
	seek            map[connect.TopicPartition]int64 // SinkTaskContext.Offset requests
	assigned        []connect.TopicPartition
	paused          []connect.TopicPartition
	commitRequested bool
	// raw are the consumed records of the batch in the task, so a record
	// the task reports as errant goes to the DLQ as it was read.
	raw        map[rawKey]*kgo.Record
	lastCommit time.Time
}

func (s *sinkLoop) open(ctx context.Context) error {
	t := s.t
	over, err := t.clientOverrides(t.w.cfg.Consumer, "consumer.override.")
	if err != nil {
		return err
	}
	opts := t.w.clientOpts(
		kgo.ClientID(t.w.clientID(fmt.Sprintf("%s-%d", t.id.Connector, t.id.Task))),
		kgo.ConsumerGroup(sinkGroup(t.id.Connector)),
		kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.OnPartitionsAssigned(s.onAssigned),
		kgo.OnPartitionsRevoked(s.onRevoked),
		kgo.OnPartitionsLost(s.onLost),
	)
	if t.cc.topicsRegex != nil {
		opts = append(opts, kgo.ConsumeRegex(), kgo.ConsumeTopics(t.cc.topicsRegex.String()))
	} else {
		opts = append(opts, kgo.ConsumeTopics(t.cc.topics...))
	}
	opts = append(opts, over...)
	if s.cl, err = kgo.NewClient(opts...); err != nil {
		return err
	}
	if t.cc.dlqTopic != "" {
		if err := t.openDLQ(ctx); err != nil {
			s.cl.Close()
			return err
		}
	}
	return nil
}

// openDLQ creates the dead letter queue topic if missing and a producer.
func (t *taskRunner) openDLQ(ctx context.Context) error {
	resp, err := t.w.admin.CreateTopic(ctx, 1, t.cc.dlqRF, nil, t.cc.dlqTopic)
	if err == nil && resp.Err != nil && !isTopicExists(resp.Err) {
		err = resp.Err
	}
	if err != nil {
		return fmt.Errorf("create dead letter queue topic %s: %w", t.cc.dlqTopic, err)
	}
	dlq, err := kgo.NewClient(t.w.clientOpts(kgo.RequiredAcks(kgo.AllISRAcks()), kgo.ClientID(t.w.clientID("dlq-"+t.id.String())))...)
	if err != nil {
		return err
	}
	t.errs.dlq = dlq
	return nil
}

func (s *sinkLoop) close() {
	// The last flush and commit are bounded, so a cluster that is gone
	// cannot hold the task's stop.
	ctx, cancel := context.WithTimeout(context.Background(), s.t.w.cfg.OffsetFlushTimeout+s.t.w.cfg.TaskShutdownTimeout)
	defer cancel()
	if s.started {
		s.commitAll(ctx, true)
		s.taskMu.Lock()
		if h, ok := s.task.(connect.SinkPartitionsHandler); ok {
			_ = safe(func() error { return h.Close(s.assignment()) })
		}
		_ = safe(s.task.Stop)
		s.taskMu.Unlock()
	}
	s.cl.Close()
	if s.t.errs.dlq != nil {
		s.t.errs.dlq.Close()
	}
}

func (s *sinkLoop) run(ctx context.Context) error {
	t := s.t
	s.lastCommit = time.Now()
	maxPoll := t.maxPollRecords()
	for ctx.Err() == nil {
		if t.waitRunning(ctx) {
			s.applyPause()
			continue
		}
		s.applyPause()
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		fetches := s.cl.PollRecords(pctx, maxPoll)
		cancel()
		if err := fetchError(fetches); err != nil {
			t.logger.Warn("sink fetch failed; retrying", "err", err)
			backoff(ctx, time.Second)
			continue
		}
		if err := s.deliver(ctx, fetches); err != nil {
			return err
		}
		s.mu.Lock()
		due := s.commitRequested || time.Since(s.lastCommit) >= t.w.cfg.OffsetFlush
		s.mu.Unlock()
		if due {
			if err := s.commitAll(ctx, false); err != nil {
				return err
			}
		}
	}
	return nil
}

func fetchError(f kgo.Fetches) error {
	var out error
	f.EachError(func(_ string, _ int32, err error) {
		if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) && out == nil {
			out = err
		}
	})
	return out
}

// deliver converts, transforms and puts one poll's records.
func (s *sinkLoop) deliver(ctx context.Context, fetches kgo.Fetches) error {
	n := fetches.NumRecords()
	batch := make([]connect.SinkRecord, 0, n)
	last := map[connect.TopicPartition]int64{}
	owned := map[connect.TopicPartition]bool{}
	raw := make(map[rawKey]*kgo.Record, n)
	var err error
	fetches.EachRecord(func(r *kgo.Record) {
		if err != nil {
			return
		}
		tp := connect.TopicPartition{Topic: r.Topic, Partition: r.Partition}
		own, known := owned[tp]
		if !known {
			own = s.owns(tp) // once per partition and poll, not per record
			owned[tp] = own
		}
		if !own {
			// Fetched before its partition was revoked: its new owner reads
			// it from the committed offset.
			return
		}
		raw[rawKey{tp, r.Offset}] = r
		if _, seen := last[tp]; !seen {
			s.t.trackTopic(ctx, r.Topic)
		}
		last[tp] = r.Offset + 1
		var rec connect.SinkRecord
		var ok bool
		rec, ok, err = s.convert(ctx, r)
		if ok && err == nil {
			batch = append(batch, rec)
		}
	})
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.raw = raw
	s.mu.Unlock()
	if len(batch) > 0 {
		if err := s.put(ctx, batch); err != nil {
			return err
		}
	}
	s.mu.Lock()
	for tp, o := range last {
		if _, owned := s.next[tp]; owned {
			s.next[tp] = o
		}
	}
	s.mu.Unlock()
	return nil
}

// put hands a batch to the task, retrying while it says retriable (the
// partitions paused meanwhile, as Kafka's WorkerSinkTask does).
func (s *sinkLoop) put(ctx context.Context, batch []connect.SinkRecord) error {
	for {
		s.taskMu.Lock()
		err := safe(func() error { return s.task.Put(ctx, batch) })
		s.taskMu.Unlock()
		if err == nil {
			return nil
		}
		if !connect.IsRetriable(err) || ctx.Err() != nil {
			return fmt.Errorf("sink task put failed: %w", err)
		}
		s.t.logger.Warn("sink task put failed; retrying", "err", err)
		backoff(ctx, time.Second)
	}
}

// convert turns a consumed record into a sink record.
func (s *sinkLoop) convert(ctx context.Context, r *kgo.Record) (connect.SinkRecord, bool, error) {
	t := s.t
	off := r.Offset
	rec := connect.SinkRecord{
		Record:        connect.Record{Topic: r.Topic, Partition: connect.PartitionOf(r.Partition), Timestamp: r.Timestamp, KafkaOffset: &off},
		TimestampType: connect.CreateTime,
		OriginalTopic: r.Topic, OriginalPartition: r.Partition, OriginalOffset: r.Offset,
	}
	if r.Attrs.TimestampType() == 1 {
		rec.TimestampType = connect.LogAppendTime
	}
	for _, h := range r.Headers {
		var hs *connect.Schema
		var hv any
		ok, err := t.errs.run(ctx, stageHeaderConverter, r, func() error {
			var err error
			hs, hv, err = t.hdrConv.ToConnectHeader(r.Topic, h.Key, h.Value)
			return err
		})
		if err != nil || !ok {
			return rec, false, err
		}
		rec.Headers = append(rec.Headers, connect.Header{Key: h.Key, Schema: hs, Value: hv})
	}
	if ok, err := t.errs.run(ctx, stageKeyConverter, r, func() error {
		var err error
		rec.KeySchema, rec.Key, err = t.keyConv.ToConnectData(r.Topic, rec.Headers, r.Key)
		return err
	}); err != nil || !ok {
		return rec, false, err
	}
	if ok, err := t.errs.run(ctx, stageValueConverter, r, func() error {
		var err error
		rec.ValueSchema, rec.Value, err = t.valConv.ToConnectData(r.Topic, rec.Headers, r.Value)
		return err
	}); err != nil || !ok {
		return rec, false, err
	}
	var out connect.Record
	keep := true
	ok, err := t.errs.run(ctx, stageTransformation, r, func() error {
		var err error
		out, keep, err = t.chain.Apply(rec.Record)
		return err
	})
	if err != nil || !ok || !keep {
		return rec, false, err
	}
	rec.Record = out
	return rec, true, nil
}

// commitAll flushes the task and commits what it flushed.
func (s *sinkLoop) commitAll(ctx context.Context, final bool) error {
	s.mu.Lock()
	offsets := maps.Clone(s.next)
	s.commitRequested = false
	s.lastCommit = time.Now()
	s.mu.Unlock()
	return s.commit(ctx, offsets, final)
}

// commit flushes the task up to offsets and commits the consumer offsets
// the task says are safe.
func (s *sinkLoop) commit(ctx context.Context, offsets map[connect.TopicPartition]int64, final bool) error {
	if len(offsets) == 0 {
		return nil
	}
	s.taskMu.Lock()
	var safeOffsets map[connect.TopicPartition]int64
	err := safe(func() error {
		if pc, ok := s.task.(connect.SinkPreCommitter); ok {
			var err error
			safeOffsets, err = pc.PreCommit(ctx, maps.Clone(offsets))
			return err
		}
		safeOffsets = offsets
		return s.task.Flush(ctx, maps.Clone(offsets))
	})
	s.taskMu.Unlock()
	if err != nil {
		// Nothing is committed: the records are consumed again (at least once).
		if final {
			s.t.logger.Warn("sink task flush failed on close; offsets not committed", "err", err)
			return nil
		}
		if connect.IsRetriable(err) {
			s.t.logger.Warn("sink task flush failed; will retry", "err", err)
			return nil
		}
		return fmt.Errorf("sink task flush failed: %w", err)
	}
	commit := map[string]map[int32]kgo.EpochOffset{}
	for tp, o := range safeOffsets {
		if o < 0 {
			continue // nothing read from it yet: nothing to commit
		}
		if commit[tp.Topic] == nil {
			commit[tp.Topic] = map[int32]kgo.EpochOffset{}
		}
		commit[tp.Topic][tp.Partition] = kgo.EpochOffset{Epoch: -1, Offset: o}
	}
	if len(commit) == 0 {
		return nil
	}
	var commitErr error
	s.cl.CommitOffsetsSync(ctx, commit, func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, _ *kmsg.OffsetCommitResponse, err error) {
		commitErr = err
	})
	if commitErr != nil {
		s.t.logger.Warn("could not commit sink offsets; the records will be delivered again after a rebalance", "err", commitErr)
	}
	return nil
}

func (s *sinkLoop) onAssigned(ctx context.Context, _ *kgo.Client, added map[string][]int32) {
	tps := toTPs(added)
	s.mu.Lock()
	for _, tp := range tps {
		s.next[tp] = -1
	}
	s.assigned = append(s.assigned, tps...)
	s.mu.Unlock()
	s.taskMu.Lock()
	defer s.taskMu.Unlock()
	if h, ok := s.task.(connect.SinkPartitionsHandler); ok && s.started {
		if err := safe(func() error { return h.Open(tps) }); err != nil {
			s.t.logger.Error("sink task open failed", "err", err)
		}
	}
}

func (s *sinkLoop) onRevoked(ctx context.Context, _ *kgo.Client, revoked map[string][]int32) {
	s.release(ctx, toTPs(revoked), true)
}

func (s *sinkLoop) onLost(ctx context.Context, _ *kgo.Client, lost map[string][]int32) {
	// Lost partitions belong to another member already: nothing to commit.
	s.release(ctx, toTPs(lost), false)
}

func (s *sinkLoop) release(ctx context.Context, tps []connect.TopicPartition, commit bool) {
	s.mu.Lock()
	offsets := map[connect.TopicPartition]int64{}
	for _, tp := range tps {
		if o, ok := s.next[tp]; ok && o >= 0 {
			offsets[tp] = o
		}
		delete(s.next, tp)
	}
	s.assigned = slices.DeleteFunc(s.assigned, func(tp connect.TopicPartition) bool { return slices.Contains(tps, tp) })
	s.mu.Unlock()
	if commit && s.started {
		_ = s.commit(ctx, offsets, true)
	}
	s.taskMu.Lock()
	defer s.taskMu.Unlock()
	if h, ok := s.task.(connect.SinkPartitionsHandler); ok && s.started {
		_ = safe(func() error { return h.Close(tps) })
	}
}

func (s *sinkLoop) owns(tp connect.TopicPartition) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.next[tp]
	return ok
}

func (s *sinkLoop) assignment() []connect.TopicPartition {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.assigned)
}

// applyPause pauses all partitions while the connector is paused, and
// those the task paused; it applies seeks the task asked for.
func (s *sinkLoop) applyPause() {
	s.mu.Lock()
	seek := s.seek
	s.seek = map[connect.TopicPartition]int64{}
	paused := slices.Clone(s.paused)
	s.mu.Unlock()
	if len(seek) > 0 {
		set := map[string]map[int32]kgo.EpochOffset{}
		for tp, o := range seek {
			if set[tp.Topic] == nil {
				set[tp.Topic] = map[int32]kgo.EpochOffset{}
			}
			set[tp.Topic][tp.Partition] = kgo.EpochOffset{Epoch: -1, Offset: o}
		}
		s.cl.SetOffsets(set)
	}
	all := s.t.target() == api.TargetPaused
	want := map[string][]int32{}
	for _, tp := range s.assignment() {
		if all || slices.Contains(paused, tp) {
			want[tp.Topic] = append(want[tp.Topic], tp.Partition)
		}
	}
	current := s.cl.PauseFetchPartitions(nil)
	resume := map[string][]int32{}
	for topic, ps := range current {
		for _, p := range ps {
			if !slices.Contains(want[topic], p) {
				resume[topic] = append(resume[topic], p)
			}
		}
	}
	if len(resume) > 0 {
		s.cl.ResumeFetchPartitions(resume)
	}
	if len(want) > 0 {
		s.cl.PauseFetchPartitions(want)
	}
}

func toTPs(m map[string][]int32) []connect.TopicPartition {
	var out []connect.TopicPartition
	for topic, ps := range m {
		for _, p := range ps {
			out = append(out, connect.TopicPartition{Topic: topic, Partition: p})
		}
	}
	return out
}

// sinkContext is the task's connect.SinkTaskContext.
type sinkContext struct{ s *sinkLoop }

func (c sinkContext) Config() map[string]string            { return c.s.t.taskConfig() }
func (c sinkContext) Assignment() []connect.TopicPartition { return c.s.assignment() }
func (c sinkContext) Offset(offsets map[connect.TopicPartition]int64) {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	maps.Copy(c.s.seek, offsets)
}
func (c sinkContext) Pause(tps ...connect.TopicPartition) {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	c.s.paused = append(c.s.paused, tps...)
}
func (c sinkContext) Resume(tps ...connect.TopicPartition) {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	c.s.paused = slices.DeleteFunc(c.s.paused, func(tp connect.TopicPartition) bool { return slices.Contains(tps, tp) })
}
func (c sinkContext) RequestCommit() {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	c.s.commitRequested = true
}
func (c sinkContext) ErrantRecordReporter() connect.ErrantRecordReporter {
	return errantReporter{c.s}
}
func (c sinkContext) Logger() *slog.Logger { return c.s.t.logger }

// errantReporter sends records a task could not write through the error
// handler (KIP-610): skipped and sent to the DLQ with tolerance all,
// failing the task otherwise.
type errantReporter struct{ s *sinkLoop }

type rawKey struct {
	tp     connect.TopicPartition
	offset int64
}

func (e errantReporter) Report(ctx context.Context, r connect.SinkRecord, err error) error {
	e.s.mu.Lock()
	raw := e.s.raw[rawKey{connect.TopicPartition{Topic: r.OriginalTopic, Partition: r.OriginalPartition}, r.OriginalOffset}]
	e.s.mu.Unlock()
	if raw == nil {
		raw = &kgo.Record{Topic: r.OriginalTopic, Partition: r.OriginalPartition, Offset: r.OriginalOffset}
	}
	return e.s.t.errs.handle(ctx, failure{stage: stageTaskPut, err: err, raw: raw})
}

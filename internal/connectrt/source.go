package connectrt

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/connect"
	"github.com/samsa-io/samsa/internal/connectrt/api"
)

// runSource polls the task, transforms and converts each record and
// produces it. Offsets: at least once, the offsets of everything polled
// before a producer flush are written after the flush (every
// offset.flush.interval.ms); exactly once (the worker's
// exactly.once.source.support=enabled), the records and their offsets go
// in one transaction of the task's transactional producer, whose ID
// (<group.id>-<connector>-<task>) fences any older instance of the task.
func (t *taskRunner) runSource(ctx context.Context, pl connect.Plugin) error {
	src, ok := pl.New().(connect.SourceConnector)
	if !ok {
		return fmt.Errorf("connector class %s is not a source connector", pl.Class)
	}
	eos := t.w.cfg.ExactlyOnceSource && t.w.cfg.Distributed
	if err := t.checkExactlyOnce(src, eos); err != nil {
		return err
	}
	prod, err := t.sourceProducer(ctx, eos)
	if err != nil {
		return err
	}
	defer prod.Close()
	task := src.NewTask()
	if err := t.w.offsets.readToEnd(ctx); err != nil {
		return err
	}
	if err := safe(func() error { return task.Start(sourceContext{t}, t.taskConfig()) }); err != nil {
		return fmt.Errorf("source task %s failed to start: %w", t.id, err)
	}
	defer func() {
		if err := safe(task.Stop); err != nil {
			t.logger.Warn("source task stop failed", "err", err)
		}
	}()
	t.setState(ctx, api.StateRunning, nil)
	s := &sourceLoop{t: t, task: task, prod: prod, eos: eos, pending: map[string]api.ConnectorOffset{}}
	return s.run(ctx)
}

// checkExactlyOnce applies exactly.once.support=required (KIP-618).
func (t *taskRunner) checkExactlyOnce(src connect.SourceConnector, eos bool) error {
	if t.cc.exactlyOnce != "required" {
		return nil
	}
	if !eos {
		return errors.New("exactly.once.support=required, but the worker's exactly.once.source.support is not enabled (or the worker is standalone)")
	}
	if e, ok := src.(connect.ExactlyOnceSourceConnector); !ok || e.ExactlyOnceSupport(t.connConfig) != connect.ExactlyOnceSupported {
		return errors.New("exactly.once.support=required, but the connector does not say it supports exactly-once delivery")
	}
	return nil
}

func (t *taskRunner) sourceProducer(ctx context.Context, eos bool) (*kgo.Client, error) {
	over, err := t.clientOverrides(t.w.cfg.Producer, "producer.override.")
	if err != nil {
		return nil, err
	}
	// As Java producers do, a record for a missing topic lets the broker
	// create it (auto.create.topics.enable decides).
	opts := t.w.clientOpts(kgo.ClientID(t.w.clientID(fmt.Sprintf("%s-%d", t.id.Connector, t.id.Task))), kgo.RequiredAcks(kgo.AllISRAcks()), kgo.AllowAutoTopicCreation(),
		// Kafka's producers compress nothing unless told (franz-go's default is snappy).
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.RecordPartitioner(newSourcePartitioner()))
	opts = append(opts, over...)
	if eos {
		opts = append(opts, kgo.TransactionalID(fmt.Sprintf("%s-%s-%d", t.w.cfg.GroupID, t.id.Connector, t.id.Task)),
			kgo.TransactionTimeout(time.Minute))
	}
	return kgo.NewClient(opts...)
}

type sourceLoop struct {
	t    *taskRunner
	task connect.SourceTask
	prod *kgo.Client
	eos  bool

	mu         sync.Mutex
	pending    map[string]api.ConnectorOffset // the latest offset per source partition, polled since the last commit
	sendErr    error
	lastCommit time.Time
	inTxn      bool
	// committable holds, exactly once, the records of the open transaction
	// and their metadata: the task hears of them (CommitRecord) only once
	// the transaction committed, as Kafka's ExactlyOnceWorkerSourceTask.
	committable []committable
}

type committable struct {
	rec connect.SourceRecord
	md  *connect.RecordMetadata
}

// recordDone tells the task a record is in Kafka (md nil: dropped): at
// once, or exactly once after its transaction commits.
func (s *sourceLoop) recordDone(committer connect.SourceRecordCommitter, rec connect.SourceRecord, md *connect.RecordMetadata) {
	if s.eos {
		s.mu.Lock()
		s.committable = append(s.committable, committable{rec, md})
		s.mu.Unlock()
		return
	}
	_ = safe(func() error { return committer.CommitRecord(rec, md) })
}

func (s *sourceLoop) run(ctx context.Context) error {
	t := s.t
	s.lastCommit = time.Now()
	interval := t.w.cfg.OffsetFlush
	if s.eos && t.cc.txBoundary == "interval" && t.cc.txInterval > 0 {
		interval = time.Duration(t.cc.txInterval) * time.Millisecond
	}
	for ctx.Err() == nil {
		if t.waitRunning(ctx) {
			continue
		}
		var recs []connect.SourceRecord
		ok, err := t.errs.run(ctx, stageTaskPoll, nil, func() error {
			var err error
			recs, err = s.task.Poll(ctx)
			return err
		})
		if err != nil || !ok {
			if ctx.Err() != nil {
				break
			}
			if connect.IsRetriable(err) {
				backoff(ctx, time.Second)
				continue
			}
			if err == nil {
				continue
			}
			return fmt.Errorf("source task poll failed: %w", err)
		}
		if err := s.send(ctx, recs); err != nil {
			return err
		}
		boundary := !s.eos || t.cc.txBoundary == "poll"
		if s.eos && boundary && len(recs) > 0 || time.Since(s.lastCommit) >= interval {
			if err := s.commit(ctx); err != nil {
				return err
			}
		}
	}
	// A last commit on the way out, so a clean stop loses nothing it read;
	// bounded, so a cluster that is gone cannot hold the stop.
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), t.w.cfg.OffsetFlushTimeout+t.w.cfg.TaskShutdownTimeout)
	defer cancel()
	return s.commit(fctx)
}

// send transforms, converts and produces the records.
func (s *sourceLoop) send(ctx context.Context, recs []connect.SourceRecord) error {
	t := s.t
	if len(recs) > 0 && s.eos && !s.inTxn {
		if err := s.prod.BeginTransaction(); err != nil {
			return fmt.Errorf("begin transaction: %w", err)
		}
		s.inTxn = true
	}
	for _, rec := range recs {
		kr, ok, err := s.convert(ctx, rec)
		if err != nil {
			return err
		}
		s.track(rec)
		committer, wants := s.task.(connect.SourceRecordCommitter)
		if !ok {
			// A record a transform dropped or the error handler skipped is
			// done with: the task hears of it with no metadata, as Kafka's
			// commitRecord(record, null).
			if wants {
				s.recordDone(committer, rec, nil)
			}
			continue
		}
		if t.w.cfg.TopicCreation {
			if err := t.cc.creation.ensure(ctx, t.w.admin, kr.Topic); err != nil {
				return err
			}
		}
		t.trackTopic(ctx, kr.Topic)
		// The record outlives the task's context: a stop must not fail what
		// is buffered, so the last commit can still flush and store it.
		s.prod.Produce(context.WithoutCancel(ctx), kr, func(r *kgo.Record, err error) {
			if err != nil {
				s.mu.Lock()
				if s.sendErr == nil {
					s.sendErr = err
				}
				s.mu.Unlock()
				return
			}
			if wants {
				s.recordDone(committer, rec, &connect.RecordMetadata{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Timestamp: r.Timestamp})
			}
		})
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sendErr != nil {
		return s.producerFailure()
	}
	return nil
}

func (s *sourceLoop) producerFailure() error {
	if s.t.cc.tolerance == "all" && !s.eos {
		// KIP-779: with errors.tolerance=all a record Kafka refused is skipped.
		s.t.logger.Warn("a record could not be produced; skipped (errors.tolerance=all)", "err", s.sendErr)
		s.sendErr = nil
		return nil
	}
	return fmt.Errorf("Unrecoverable exception from producer send callback: %w", s.sendErr)
}

// track remembers a record's source offset for the next commit.
func (s *sourceLoop) track(rec connect.SourceRecord) {
	if rec.SourcePartition == nil {
		return
	}
	key := partitionKey(rec.SourcePartition)
	s.mu.Lock()
	s.pending[key] = api.ConnectorOffset{Partition: rec.SourcePartition, Offset: rec.SourceOffset}
	s.mu.Unlock()
}

// convert applies the transforms and converters to a source record.
func (s *sourceLoop) convert(ctx context.Context, rec connect.SourceRecord) (*kgo.Record, bool, error) {
	t := s.t
	r := rec.Record
	keep := true
	ok, err := t.errs.run(ctx, stageTransformation, nil, func() error {
		var err error
		r, keep, err = t.chain.Apply(rec.Record)
		return err
	})
	if err != nil || !ok || !keep {
		return nil, false, err
	}
	kr := &kgo.Record{Topic: r.Topic, Timestamp: r.Timestamp}
	if r.Partition != nil {
		kr.Partition = *r.Partition
		// Background: the record outlives the task's context (send).
		kr.Context = withExplicitPartition(context.Background())
	}
	for _, h := range r.Headers {
		var b []byte
		ok, err := t.errs.run(ctx, stageHeaderConverter, nil, func() error {
			var err error
			b, err = t.hdrConv.FromConnectHeader(r.Topic, h.Key, h.Schema, h.Value)
			return err
		})
		if err != nil || !ok {
			return nil, false, err
		}
		kr.Headers = append(kr.Headers, kgo.RecordHeader{Key: h.Key, Value: b})
	}
	if ok, err := t.errs.run(ctx, stageKeyConverter, nil, func() error {
		var err error
		kr.Key, err = t.keyConv.FromConnectData(r.Topic, r.Headers, r.KeySchema, r.Key)
		return err
	}); err != nil || !ok {
		return nil, false, err
	}
	if ok, err := t.errs.run(ctx, stageValueConverter, nil, func() error {
		var err error
		kr.Value, err = t.valConv.FromConnectData(r.Topic, r.Headers, r.ValueSchema, r.Value)
		return err
	}); err != nil || !ok {
		return nil, false, err
	}
	return kr, true, nil
}

// commit makes what was sent durable, then its offsets: a flush and an
// offset write (at least once), or the offsets in the transaction and a
// commit (exactly once).
func (s *sourceLoop) commit(ctx context.Context) error {
	t := s.t
	s.lastCommit = time.Now()
	if s.eos {
		return s.commitTransaction(ctx)
	}
	fctx, cancel := context.WithTimeout(ctx, t.w.cfg.OffsetFlushTimeout+30*time.Second)
	defer cancel()
	if err := s.prod.Flush(fctx); err != nil {
		return fmt.Errorf("flush records before committing offsets: %w", err)
	}
	s.mu.Lock()
	if s.sendErr != nil {
		err := s.producerFailure()
		s.mu.Unlock()
		if err != nil {
			return err
		}
		s.mu.Lock()
	}
	entries := slicesOf(s.pending)
	s.pending = map[string]api.ConnectorOffset{}
	s.mu.Unlock()
	if err := t.w.offsets.put(ctx, t.id.Connector, entries); err != nil {
		// The records are in Kafka; their offsets are not: they will be
		// sent again after a restart (at least once), never lost.
		t.logger.Warn("could not commit source offsets; will retry", "err", err)
		s.mu.Lock()
		for _, e := range entries {
			k := partitionKey(e.Partition)
			if _, newer := s.pending[k]; !newer {
				s.pending[k] = e
			}
		}
		s.mu.Unlock()
		return nil
	}
	if c, ok := s.task.(connect.SourceTaskCommitter); ok && len(entries) > 0 {
		_ = safe(c.Commit)
	}
	return nil
}

func (s *sourceLoop) commitTransaction(ctx context.Context) error {
	t := s.t
	if !s.inTxn {
		return nil
	}
	s.mu.Lock()
	entries := slicesOf(s.pending)
	s.pending = map[string]api.ConnectorOffset{}
	failed := s.sendErr
	s.mu.Unlock()
	for _, r := range offsetRecords(t.w.cfg.OffsetTopic, t.id.Connector, entries) {
		s.prod.Produce(ctx, r, nil)
	}
	if err := s.prod.Flush(ctx); err != nil && failed == nil {
		failed = err
	}
	s.inTxn = false
	commit := kgo.TryCommit
	if failed != nil {
		commit = kgo.TryAbort
	}
	s.mu.Lock()
	done := s.committable
	s.committable = nil
	s.mu.Unlock()
	if err := s.prod.EndTransaction(ctx, commit); err != nil {
		return fmt.Errorf("end transaction: %w", err)
	}
	if failed != nil {
		return fmt.Errorf("transaction aborted: %w", failed)
	}
	if committer, ok := s.task.(connect.SourceRecordCommitter); ok {
		for _, c := range done {
			_ = safe(func() error { return committer.CommitRecord(c.rec, c.md) })
		}
	}
	if c, ok := s.task.(connect.SourceTaskCommitter); ok && len(entries) > 0 {
		_ = safe(c.Commit)
	}
	return nil
}

func slicesOf(m map[string]api.ConnectorOffset) []api.ConnectorOffset {
	out := make([]api.ConnectorOffset, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, m[k])
	}
	return out
}

// sourceContext is the task's connect.SourceTaskContext.
type sourceContext struct{ t *taskRunner }

func (c sourceContext) Offset(partition map[string]any) (map[string]any, error) {
	return c.t.w.offsets.get(c.t.id.Connector, normalize(partition)), nil
}
func (c sourceContext) Config() map[string]string { return c.t.taskConfig() }
func (c sourceContext) Logger() *slog.Logger      { return c.t.logger }

// trackTopic records a topic the task used (KIP-558), once per topic.
func (t *taskRunner) trackTopic(ctx context.Context, topic string) {
	if !t.w.cfg.TopicTracking {
		return
	}
	if err := t.w.statuses.putTopic(ctx, t.id.Connector, t.id.Task, topic); err != nil && ctx.Err() == nil {
		t.logger.Warn("could not record the topic the connector used", "topic", topic, "err", err)
	}
}

// partitionKey tells source partitions apart in the pending offsets, per
// record: cheaper than their JSON (the offset topic's key is written once
// per partition per commit). Values print with their Go type, so 1 and "1"
// differ.
func partitionKey(p map[string]any) string {
	if len(p) == 1 {
		for k, v := range p {
			return fmt.Sprintf("%s\x00%T\x00%v", k, v, v)
		}
	}
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(p)) {
		fmt.Fprintf(&b, "%s\x00%T\x00%v\x01", k, p[k], p[k])
	}
	return b.String()
}

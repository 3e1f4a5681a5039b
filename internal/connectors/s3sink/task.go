package s3sink

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/samsa-io/samsa/connect"
	"github.com/samsa-io/samsa/internal/clock"
)

// recoveryTimeout bounds the bucket reads of one partition's recovery in
// Open, which has no context of its own: a store that does not answer
// fails the Open (retriable) instead of hanging the task.
const recoveryTimeout = 2 * time.Minute

// sinkTask is the S3 sink's task (Confluent's S3SinkTask). The runtime
// commits a partition's consumer offset only as far as PreCommit says, and
// PreCommit says only as far as the files already in the bucket reach.
type sinkTask struct {
	clock clock.Clock

	mu      sync.Mutex // the runtime calls one method at a time; the lock makes that a fact
	ctx     connect.SinkTaskContext
	cfg     *config
	store   *store
	log     *slog.Logger
	writers map[connect.TopicPartition]*partitionWriter
}

func newTask() *sinkTask { return &sinkTask{clock: clock.Real} }

// Start reads the config and recovers the partitions already assigned.
func (t *sinkTask) Start(ctx connect.SinkTaskContext, props map[string]string) error {
	cfg, err := parseConfig(props)
	if err != nil {
		return err
	}
	st, err := newStore(context.Background(), cfg)
	if err != nil {
		return err
	}
	t.mu.Lock()
	t.ctx, t.cfg, t.store = ctx, cfg, st
	t.log = ctx.Logger().With("component", "s3sink")
	t.writers = map[connect.TopicPartition]*partitionWriter{}
	t.mu.Unlock()
	if a := ctx.Assignment(); len(a) > 0 {
		return t.Open(a)
	}
	return nil
}

// Open recovers each new partition's position from the bucket and asks the
// runtime to read from there.
func (t *sinkTask) Open(partitions []connect.TopicPartition) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	seek := map[connect.TopicPartition]int64{}
	for _, tp := range partitions {
		if _, open := t.writers[tp]; open {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), recoveryTimeout)
		w, next, err := t.openLocked(ctx, tp)
		cancel()
		if err != nil {
			return err
		}
		t.writers[tp] = w
		if next >= 0 {
			seek[tp] = next
		}
	}
	if len(seek) > 0 {
		t.ctx.Offset(seek)
	}
	return nil
}

func (t *sinkTask) openLocked(ctx context.Context, tp connect.TopicPartition) (*partitionWriter, int64, error) {
	w := newPartitionWriter(tp, t.cfg, t.store, t.log, t.clock.Now())
	next, err := w.recover(ctx)
	if err != nil {
		return nil, -1, connect.Retriable(fmt.Errorf("s3sink: recover %s-%d from the bucket: %w", tp.Topic, tp.Partition, err))
	}
	if next >= 0 {
		t.log.Info("recovered position from the bucket", "topic", tp.Topic, "partition", tp.Partition, "next_offset", next)
	}
	return w, next, nil
}

// Close drops the partitions' open files: their records were never
// committed, so whoever reads the partitions next writes them again.
func (t *sinkTask) Close(partitions []connect.TopicPartition) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, tp := range partitions {
		delete(t.writers, tp)
	}
	return nil
}

// Put writes records into open files, committing files as rotation says.
// A store failure is retriable: the runtime hands the same records again,
// and those already taken are skipped (nextOffset), so nothing is written
// twice and the failed commit is retried from the same bytes.
func (t *sinkTask) Put(ctx context.Context, records []connect.SinkRecord) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.clock.Now()
	for i := range records {
		r := &records[i]
		w, err := t.writerLocked(ctx, topicPartitionOf(r))
		if err != nil {
			return err
		}
		if err := w.put(ctx, r, now); err != nil {
			if err := t.handleRecordError(ctx, w, r, err); err != nil {
				return err
			}
		}
	}
	return t.tickLocked(ctx)
}

// writerLocked is the partition's writer, made and recovered here when the
// runtime did not Open the partition first.
func (t *sinkTask) writerLocked(ctx context.Context, tp connect.TopicPartition) (*partitionWriter, error) {
	if w, ok := t.writers[tp]; ok {
		return w, nil
	}
	w, next, err := t.openLocked(ctx, tp)
	if err != nil {
		return nil, err
	}
	t.writers[tp] = w
	if next >= 0 {
		t.ctx.Offset(map[connect.TopicPartition]int64{tp: next})
	}
	return w, nil
}

// handleRecordError sends a record that cannot be written to the errant
// record reporter when the runtime has one (errors.tolerance=all with a
// dead letter queue) and skips it; any other error is returned.
func (t *sinkTask) handleRecordError(ctx context.Context, w *partitionWriter, r *connect.SinkRecord, err error) error {
	rep := t.ctx.ErrantRecordReporter()
	if !isRecordError(err) || rep == nil {
		return err
	}
	if rerr := rep.Report(ctx, *r, err); rerr != nil {
		return fmt.Errorf("s3sink: report errant record: %w (after %w)", rerr, err)
	}
	w.nextOffset = max(w.nextOffset, r.Offset()+1)
	return nil
}

func (t *sinkTask) tickLocked(ctx context.Context) error {
	now := t.clock.Now()
	for _, w := range t.writers {
		if err := w.tick(ctx, now); err != nil {
			return err
		}
	}
	return nil
}

// Flush does not cut open files: files end only where rotation says, so a
// replay after a crash cuts them at the same offsets (Confluent's sink does
// the same). It retries a failed upload and applies the wall-clock
// schedule; what is safe to commit is PreCommit's answer.
func (t *sinkTask) Flush(ctx context.Context, _ map[connect.TopicPartition]int64) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.tickLocked(ctx)
}

// PreCommit returns, per partition, the offset after the last file in the
// bucket: the consumer never commits past a record that is not in a whole
// object.
func (t *sinkTask) PreCommit(ctx context.Context, _ map[connect.TopicPartition]int64) (map[connect.TopicPartition]int64, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.tickLocked(ctx); err != nil {
		// The offsets below are still true; the failed upload is retried
		// by the next Put, which returns the error to the runtime.
		t.log.Warn("upload failed during offset commit", "error", err)
	}
	out := map[connect.TopicPartition]int64{}
	for tp, w := range t.writers {
		if w.committed >= 0 {
			out[tp] = w.committed
		}
	}
	return out, nil
}

// Stop drops every open file (see Close).
func (t *sinkTask) Stop() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.writers = map[connect.TopicPartition]*partitionWriter{}
	return nil
}

package streams

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/streams/internal/assign"
	"github.com/samsa-io/samsa/streams/state"
)

type (
	kmsgTxnOffsetCommit  = kmsg.TxnOffsetCommitRequest
	kmsgOffsetCommitReq  = kmsg.OffsetCommitRequest
	kmsgOffsetCommitResp = kmsg.OffsetCommitResponse
)

// rewriteTxnOffsets makes the transaction commit the offsets the tasks
// processed to, not the ones kgo polled to: records polled and still
// waiting in a task's queue are not consumed yet.
func rewriteTxnOffsets(req *kmsg.TxnOffsetCommitRequest, offsets map[string]map[int32]kgo.EpochOffset) error {
	topics := req.Topics[:0]
	for _, t := range req.Topics {
		ps := t.Partitions[:0]
		for _, p := range t.Partitions {
			if o, ok := offsets[t.Topic][p.Partition]; ok {
				p.Offset = o.Offset
				p.LeaderEpoch = -1
				ps = append(ps, p)
			}
		}
		if len(ps) > 0 {
			t.Partitions = ps
			topics = append(topics, t)
		}
	}
	req.Topics = topics
	return nil
}

func offsetCommitErr(resp *kmsg.OffsetCommitResponse) error {
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return fmt.Errorf("%s-%d: %w", t.Topic, p.Partition, err)
			}
		}
	}
	return nil
}

// taskPartitioner sends changelog records (and records a sink's partitioner
// placed) to the partition they name, and the rest by murmur2 of the key
// as Kafka's producer does.
type taskPartitioner struct{ inner kgo.Partitioner }

func (p taskPartitioner) ForTopic(topic string) kgo.TopicPartitioner {
	return taskTopicPartitioner{p.inner.ForTopic(topic)}
}

type taskTopicPartitioner struct{ inner kgo.TopicPartitioner }

func (p taskTopicPartitioner) RequiresConsistency(r *kgo.Record) bool {
	return isManual(r) || p.inner.RequiresConsistency(r)
}

func (p taskTopicPartitioner) Partition(r *kgo.Record, n int) int {
	if isManual(r) {
		return int(r.Partition)
	}
	return p.inner.Partition(r, n)
}

func (p taskTopicPartitioner) OnNewBatch() {
	if nb, ok := p.inner.(kgo.TopicPartitionerOnNewBatch); ok {
		nb.OnNewBatch()
	}
}

func isManual(r *kgo.Record) bool {
	return r.Context != nil && r.Context.Value(manualPartition{}) != nil
}

// openStore opens a task's store in the task's directory; a logged store
// writes every change to the changelog partition of the task.
func (th *streamThread) openStore(t *task, def *storeDef) (any, error) {
	ts := th.taskState(t.id)
	if ts.dir == nil && th.app.stateDir != nil && th.app.persistent {
		dir, err := th.app.stateDir.LockTask(t.id.String())
		if err != nil {
			return nil, fmt.Errorf("streams: task %s: %w", t.id, err)
		}
		ts.dir = dir
	}
	topic := changelogName(th.app.cfg.ApplicationID, def.name)
	partition := t.id.Partition
	env := &threadEnv{th: th}
	log := func(key, value []byte, ts int64) {
		_ = env.send(outRecord{topic: topic, partition: partition, key: key, value: value, ts: ts})
	}
	s, h, err := openStateStoreCached(t, def, ts.dir, th.app.blockCache, log, th.recordCache, t.id.String()+"-"+def.name)
	if err != nil {
		return nil, err
	}
	if h != nil {
		h.changelog = topicPartition{topic, partition}
		ts.handles = append(ts.handles, h)
	}
	return s, nil
}

// taskStores is what the thread keeps of a task's state: its directory
// (locked while the task lives here) and its stores.
type taskStores struct {
	dir     *state.TaskDirectory
	handles []*storeHandle
}

func (th *streamThread) taskState(id TaskID) *taskStores {
	ts := th.stores[id]
	if ts == nil {
		ts = &taskStores{}
		th.stores[id] = ts
	}
	return ts
}

// restore brings the task's logged stores up to their changelogs' ends,
// from the offsets in the task's checkpoint file (persistent stores) or
// from the start.
func (th *streamThread) restore(ctx context.Context, t *task) error {
	ts := th.taskState(t.id)
	checkpoint := map[state.TopicPartition]int64{}
	if ts.dir != nil {
		cp, err := state.ReadCheckpoint(ts.dir.CheckpointPath())
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			th.log.Warn("unreadable checkpoint; restoring from the changelogs' start", "task", t.id.String(), "error", err)
		} else if err == nil {
			checkpoint = cp
		}
	}
	for _, h := range ts.handles {
		if h.restorer == nil {
			continue
		}
		from := int64(-1)
		if off, ok := checkpoint[state.TopicPartition{Topic: h.changelog.topic, Partition: h.changelog.partition}]; ok && h.store.Persistent() {
			from = off
		}
		n, end, err := th.restoreStore(ctx, h, from, t.id)
		if err != nil {
			return fmt.Errorf("streams: task %s: restore %s: %w", t.id, h.def.name, err)
		}
		th.setChangelogEnd(h.changelog, end)
		if n > 0 {
			th.log.Info("store restored", "task", t.id.String(), "store", h.def.name, "records", n)
		}
		th.app.mets.restored.WithLabelValues(t.id.String(), h.def.name).Add(float64(n))
	}
	return th.checkpoint(t.id)
}

// restoreStore replays one changelog partition from offset from (-1: its
// start) to its end (the last stable offset under exactly once), in
// committed batches. It answers the records applied and the end reached.
func (th *streamThread) restoreStore(ctx context.Context, h *storeHandle, from int64, id TaskID) (int, int64, error) {
	left := th.app.mets.restoreLeft.WithLabelValues(id.String(), h.def.name)
	defer left.Set(0)
	topic, partition := h.changelog.topic, h.changelog.partition
	// The log end says whether the checkpoint belongs to this changelog;
	// the restore reads to the last stable offset under exactly once (an
	// open transaction of a killed instance may hold it below the
	// checkpoint: then there is nothing to read yet that is committed).
	logEnds, err := th.adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return 0, 0, err
	}
	logEnd, ok := logEnds.Lookup(topic, partition)
	if !ok || logEnd.Err != nil {
		return 0, 0, fmt.Errorf("end offset of %s-%d: %v", topic, partition, logEnd.Err)
	}
	end := logEnd
	if th.eos {
		stable, err := th.adm.ListCommittedOffsets(ctx, topic)
		if err != nil {
			return 0, 0, err
		}
		if end, ok = stable.Lookup(topic, partition); !ok || end.Err != nil {
			return 0, 0, fmt.Errorf("last stable offset of %s-%d: %v", topic, partition, end.Err)
		}
	}
	starts, err := th.adm.ListStartOffsets(ctx, topic)
	if err != nil {
		return 0, 0, err
	}
	start, _ := starts.Lookup(topic, partition)
	if from > logEnd.Offset {
		// The changelog is shorter than the checkpoint says (the topic was
		// recreated): the local state is not this changelog's.
		return 0, 0, fmt.Errorf("checkpoint offset %d is past the end %d of %s-%d; delete the task's state directory", from, logEnd.Offset, topic, partition)
	}
	if from < start.Offset {
		from = start.Offset
	}
	if from >= end.Offset {
		return 0, max(from, end.Offset), nil
	}
	opts := []kgo.Opt{kgo.SeedBrokers(th.app.cfg.BootstrapServers...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {partition: kgo.NewOffset().At(from)}})}
	if th.eos {
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	}
	opts = append(opts, th.app.cfg.ClientOptions...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return 0, 0, err
	}
	defer cl.Close()
	n := 0
	for {
		// An empty poll means the end is reached: under read_committed the
		// end may be a transaction marker no record stands at.
		pollCtx, cancel := context.WithTimeout(ctx, 2*time.Second)
		fs := cl.PollFetches(pollCtx)
		cancel()
		if ctx.Err() != nil {
			return n, 0, ctx.Err()
		}
		var batch []state.ChangelogRecord
		done := fs.NumRecords() == 0
		fs.EachRecord(func(r *kgo.Record) {
			batch = append(batch, state.ChangelogRecord{Key: r.Key, Value: r.Value, Timestamp: r.Timestamp.UnixMilli()})
			if r.Offset+1 >= end.Offset {
				done = true
			}
			left.Set(float64(end.Offset - r.Offset - 1))
		})
		if len(batch) > 0 {
			if err := h.restorer.RestoreBatch(batch); err != nil {
				return n, 0, err
			}
			if err := h.store.Commit(); err != nil {
				return n, 0, err
			}
			n += len(batch)
		}
		if done {
			return n, end.Offset, nil
		}
	}
}

// setChangelogEnd notes the offset after the last record of a changelog
// partition, for the checkpoint.
func (th *streamThread) setChangelogEnd(tp topicPartition, end int64) {
	th.produceMu.Lock()
	defer th.produceMu.Unlock()
	if end > th.changelogs[tp] {
		th.changelogs[tp] = end
	}
}

// commitStores makes the tasks' store writes durable and checkpoints the
// changelog offsets they reflect; it runs after the producer flushed (at
// least once) or the transaction committed (exactly once).
func (th *streamThread) commitStores() error {
	for id, ts := range th.stores {
		for _, h := range ts.handles {
			if err := h.store.Commit(); err != nil {
				return fmt.Errorf("streams: task %s: commit store %s: %w", id, h.def.name, err)
			}
		}
		if err := th.checkpoint(id); err != nil {
			return err
		}
	}
	return nil
}

// abortStores drops the writes since the last commit.
func (th *streamThread) abortStores() {
	for id, ts := range th.stores {
		for _, h := range ts.handles {
			if err := h.store.Abort(); err != nil {
				th.log.Warn("abort store", "task", id.String(), "store", h.def.name, "error", err)
			}
		}
	}
}

// checkpoint writes the task's checkpoint file: the changelog offset each
// persistent store reflects.
func (th *streamThread) checkpoint(id TaskID) error {
	ts := th.stores[id]
	if ts == nil || ts.dir == nil {
		return nil
	}
	offsets := map[state.TopicPartition]int64{}
	th.produceMu.Lock()
	for _, h := range ts.handles {
		if h.restorer != nil && h.store.Persistent() {
			if end, ok := th.changelogs[h.changelog]; ok {
				offsets[state.TopicPartition{Topic: h.changelog.topic, Partition: h.changelog.partition}] = end
			}
		}
	}
	th.produceMu.Unlock()
	if len(offsets) == 0 {
		return nil
	}
	if err := state.WriteCheckpoint(ts.dir.CheckpointPath(), offsets); err != nil {
		return fmt.Errorf("streams: task %s: %w", id, err)
	}
	return nil
}

// closeStores closes a task's stores and unlocks its directory.
func (th *streamThread) closeStores(id TaskID) {
	ts := th.stores[id]
	if ts == nil {
		return
	}
	for _, h := range ts.handles {
		if err := h.store.Close(); err != nil {
			th.log.Warn("close store", "task", id.String(), "store", h.def.name, "error", err)
		}
	}
	if ts.dir != nil {
		if err := ts.dir.Unlock(); err != nil {
			th.log.Warn("unlock task directory", "task", id.String(), "error", err)
		}
	}
	delete(th.stores, id)
}

// taskSource answers the leader's balancer: the tasks of every
// subtopology, sized by the plan made at start (the internal topics exist
// by then), with their source partitions.
type taskSource struct{ app *App }

func (s taskSource) Tasks(_ context.Context, topics map[string]int32) (assign.Tasks, error) {
	a := s.app
	out := assign.Tasks{Partitions: map[assign.TaskID][]assign.TopicPartition{}, Stateful: map[assign.TaskID]bool{}}
	for _, st := range a.bt.subtopologies {
		n := a.plan.tasks[st.id]
		for p := int32(0); p < n; p++ {
			id := assign.TaskID{Subtopology: st.id, Partition: p}
			for name := range st.topics {
				topic := a.resolveTopic(name)
				count, ok := topics[topic]
				if !ok {
					return assign.Tasks{}, fmt.Errorf("streams: topic %s has no metadata: %w", topic, assign.ErrIncompleteSourceTopicMetadata)
				}
				if p < count {
					out.Partitions[id] = append(out.Partitions[id], assign.TopicPartition{Topic: topic, Partition: p})
				}
			}
			if len(st.stores) > 0 {
				out.Stateful[id] = true
			}
		}
	}
	return out, nil
}

// prevTasks answers the balancer, at each join, the tasks this thread ran.
func (th *streamThread) prevTasks() (active, standby []assign.TaskID, sums map[assign.TaskID]int64) {
	th.mu.Lock()
	defer th.mu.Unlock()
	return append([]assign.TaskID(nil), th.prevActive...), append([]assign.TaskID(nil), th.prevStandby...), nil
}

// flushCaches flushes the tasks' record caches before a commit: what they
// forward downstream and write to the changelogs must be in the producer's
// flush (or the transaction) that the commit waits for.
func (th *streamThread) flushCaches() error {
	for _, t := range th.sortedTasks() {
		for _, h := range th.taskState(t.id).handles {
			if h.cache == nil {
				continue
			}
			if err := h.store.Flush(); err != nil {
				return fmt.Errorf("streams: task %s: flush the cache of %s: %w", t.id, h.def.name, err)
			}
			if err := h.cache.flushErr(); err != nil {
				return fmt.Errorf("streams: task %s: forwarding the cache of %s: %w", t.id, h.def.name, err)
			}
		}
	}
	return nil
}

// updateGauges sets the lag and store-size gauges at a commit.
func (th *streamThread) updateGauges() {
	m := th.app.mets
	for id, t := range th.tasks {
		var lag int64
		for _, q := range t.order {
			lag += int64(len(q.recs) - q.head)
			if q.lag > 0 {
				lag += q.lag
			}
		}
		m.lag.WithLabelValues(id.String()).Set(float64(lag))
		for _, h := range th.taskState(id).handles {
			if kv, ok := h.store.(state.KeyValueStore); ok {
				if n, err := kv.ApproximateNumEntries(); err == nil {
					m.storeEntries.WithLabelValues(id.String(), h.def.name).Set(float64(n))
				}
			}
		}
	}
}

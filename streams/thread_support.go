package streams

import (
	"context"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/streams/internal/assign"
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

// openStore opens a task's store: logged stores write every change to
// the changelog partition of the task.
func (th *streamThread) openStore(t *task, def *storeDef) (any, error) {
	if def.kind != keyValueStore {
		// Until these kinds are backed by streams/state with their
		// changelogs, they live in memory: correct while the task runs,
		// empty after it moves (docs/DESIGN-streams.md, in progress).
		return openMemoryStore(def)
	}
	kv := newMemKV(def)
	if def.logging {
		topic := changelogName(th.app.cfg.ApplicationID, def.name)
		partition := t.id.Partition
		env := &threadEnv{th: th}
		kv.logger = func(key, value []byte, ts int64) {
			_ = env.send(outRecord{topic: topic, partition: partition, key: key, value: value, ts: ts})
		}
	}
	return kv, nil
}

// restore replays the changelog partitions of the task's logged stores.
func (th *streamThread) restore(ctx context.Context, t *task) error {
	for name, s := range t.stores {
		def := th.app.topo.stores[name]
		kv, ok := s.(*memKV)
		if !def.logging || def.global || !ok {
			continue
		}
		topic := changelogName(th.app.cfg.ApplicationID, name)
		n, err := th.restoreStore(ctx, topic, t.id.Partition, kv)
		if err != nil {
			return fmt.Errorf("streams: task %s: restore %s: %w", t.id, name, err)
		}
		if n > 0 {
			th.log.Info("store restored", "task", t.id.String(), "store", name, "records", n)
		}
	}
	return nil
}

func (th *streamThread) restoreStore(ctx context.Context, topic string, partition int32, kv *memKV) (int, error) {
	ends, err := th.adm.ListEndOffsets(ctx, topic)
	if th.eos && err == nil {
		ends, err = th.adm.ListCommittedOffsets(ctx, topic)
	}
	if err != nil {
		return 0, err
	}
	end, ok := ends.Lookup(topic, partition)
	if !ok || end.Err != nil {
		return 0, fmt.Errorf("end offset of %s-%d: %v", topic, partition, end.Err)
	}
	starts, err := th.adm.ListStartOffsets(ctx, topic)
	if err != nil {
		return 0, err
	}
	start, _ := starts.Lookup(topic, partition)
	if start.Offset >= end.Offset {
		return 0, nil
	}
	opts := []kgo.Opt{kgo.SeedBrokers(th.app.cfg.BootstrapServers...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {partition: kgo.NewOffset().At(start.Offset)}})}
	if th.eos {
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	}
	opts = append(opts, th.app.cfg.ClientOptions...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return 0, err
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
			return n, ctx.Err()
		}
		done := fs.NumRecords() == 0
		fs.EachRecord(func(r *kgo.Record) {
			kv.restore(r.Key, r.Value, r.Timestamp.UnixMilli())
			n++
			if r.Offset+1 >= end.Offset {
				done = true
			}
		})
		if done {
			return n, nil
		}
	}
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
	return append([]assign.TaskID(nil), th.prevActive...), nil, nil
}

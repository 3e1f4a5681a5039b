package mm2

import "container/list"

// MaxOutstandingOffsetSyncs is how many offset syncs Kafka's source task
// lets be in flight to the offset-syncs topic at once
// (OffsetSyncWriter.MAX_OUTSTANDING_OFFSET_SYNCS). Further syncs wait,
// coalesced to the newest per partition, until one completes.
const MaxOutstandingOffsetSyncs = 10

type topicPartition struct {
	topic     string
	partition int32
}

// SyncWriter decides when the source side sends an offset sync, as Kafka's
// OffsetSyncWriter and MirrorSourceTask do. It is not safe for concurrent
// use; the caller serializes Record, Pending and Acked.
//
// A sync for a record is sent at once when the record is the first of its
// partition since the task started, when the upstream offsets skipped (the
// record does not follow the previous one: compaction, transaction markers,
// a seek), when the downstream offset went backwards (the remote topic was
// truncated or recreated), or when the downstream offset has moved at least
// maxOffsetLag past one after the last sync sent (offset.lag.max, default
// 100: a sync translates a group at most one offset past it, so this bounds
// how far behind a translated group can be). Any other record's sync is
// delayed: it replaces the partition's previous delayed sync and is sent
// on the next Pending (Kafka: the next SourceTask.commit).
//
// Syncs to send wait in a queue of one per partition (a newer one replaces
// an older one in place); at most MaxOutstandingOffsetSyncs are out at
// once, each released by Acked.
type SyncWriter struct {
	maxOffsetLag int64
	states       map[topicPartition]*partitionState
	delayed      syncQueue // Kafka's delayedOffsetSyncs
	pending      syncQueue // Kafka's pendingOffsetSyncs
	outstanding  int       // sent and not yet acked; Kafka's semaphore
}

// NewSyncWriter returns a writer for offset.lag.max = maxOffsetLag.
func NewSyncWriter(maxOffsetLag int64) *SyncWriter {
	return &SyncWriter{
		maxOffsetLag: maxOffsetLag,
		states:       map[topicPartition]*partitionState{},
		delayed:      newSyncQueue(),
		pending:      newSyncQueue(),
	}
}

// Record is Kafka's MirrorSourceTask.commitRecord for a record the target
// acknowledged: topic and partition are the record's source partition
// (the source cluster's name, not the remote topic), upstream its source
// offset, downstream the offset the target gave it. Call it for every
// acknowledged record, in order per partition; Kafka skips records without
// an offset (filtered by a transform, or acks=0) and so should the caller.
//
// It returns the syncs to send now, in order, each to partition 0 of the
// offset-syncs topic: usually none or this record's, but also syncs that
// waited for room among the outstanding ones. The caller must call Acked
// once for each returned sync when its send completes, failed or not (the
// producer callback that releases Kafka's semaphore); without that, after
// MaxOutstandingOffsetSyncs nothing more is returned.
func (w *SyncWriter) Record(topic string, partition int32, upstream, downstream int64) []OffsetSync {
	tp := topicPartition{topic, partition}
	st := w.states[tp]
	if st == nil {
		st = newPartitionState()
		w.states[tp] = st
	}
	sync := OffsetSync{Topic: topic, Partition: partition, UpstreamOffset: upstream, DownstreamOffset: downstream}
	if st.update(upstream, downstream, w.maxOffsetLag) {
		w.delayed.remove(tp)
		w.pending.put(tp, sync)
	} else {
		w.delayed.put(tp, sync)
	}
	return w.fire()
}

// Pending is Kafka's MirrorSourceTask.commit for offset syncs: every
// delayed sync joins the queue to send (promoteDelayedOffsetSyncs) and
// those that fit under MaxOutstandingOffsetSyncs are returned to send now
// (firePendingOffsetSyncs), to be Acked as Record's. It drains: what it
// returns is no longer queued, and Queued shows what is left (syncs that
// found no room wait for the next Record or Pending).
//
// Kafka's worker calls commit after each successful flush of the task's
// source offsets, that is every offset.flush.interval.ms (60 s by
// default) and once more when the task stops, and not after a failed
// flush. It is why a quiet partition's last records still get a sync, so
// a group at the end of the topic translates to the end. Call Pending at
// those moments: after the mirror stored its source offsets.
func (w *SyncWriter) Pending() []OffsetSync {
	for e := w.delayed.order.Front(); e != nil; e = e.Next() {
		it := e.Value.(*queued)
		w.pending.put(it.tp, it.sync)
	}
	w.delayed = newSyncQueue()
	return w.fire()
}

// Acked releases one outstanding sync: call it once per sync returned by
// Record or Pending, when the producer reports its send done (succeeded or
// failed; Kafka logs a failure and does not resend). Syncs that were
// waiting for room are returned by the next Record or Pending, as in
// Kafka.
func (w *SyncWriter) Acked() {
	if w.outstanding > 0 {
		w.outstanding--
	}
}

// Outstanding is how many returned syncs are not yet acked.
func (w *SyncWriter) Outstanding() int { return w.outstanding }

// Queued returns, without changing anything, the syncs that wait: delayed
// ones (sent on the next Pending) and ones to send as soon as there is room.
func (w *SyncWriter) Queued() (delayed, toSend []OffsetSync) {
	return w.delayed.list(), w.pending.list()
}

// fire is firePendingOffsetSyncs: send the queue's oldest entries while
// fewer than MaxOutstandingOffsetSyncs are out.
func (w *SyncWriter) fire() []OffsetSync {
	var out []OffsetSync
	for w.pending.order.Len() > 0 && w.outstanding < MaxOutstandingOffsetSyncs {
		it := w.pending.order.Remove(w.pending.order.Front()).(*queued)
		delete(w.pending.index, it.tp)
		w.outstanding++
		out = append(out, it.sync)
	}
	return out
}

// partitionState is Kafka's OffsetSyncWriter.PartitionState. Its
// shouldSyncOffsets flag is reset right after every update that set it, so
// here update simply reports it.
type partitionState struct {
	previousUpstream, previousDownstream, lastSyncDownstream int64
}

func newPartitionState() *partitionState {
	return &partitionState{previousUpstream: -1, previousDownstream: -1, lastSyncDownstream: -1}
}

func (p *partitionState) update(upstream, downstream, maxOffsetLag int64) bool {
	first := p.lastSyncDownstream == -1
	// Translation puts a group one past the last sync, hence the +1.
	stale := downstream-(p.lastSyncDownstream+1) >= maxOffsetLag
	skipped := upstream-p.previousUpstream != 1
	truncated := downstream < p.previousDownstream
	sync := first || stale || skipped || truncated
	if sync {
		p.lastSyncDownstream = downstream
	}
	p.previousUpstream, p.previousDownstream = upstream, downstream
	return sync
}

// syncQueue is Kafka's LinkedHashMap<TopicPartition, OffsetSync>: one sync
// per partition, in the order partitions were first put; putting a
// partition already there replaces its sync in place.
type syncQueue struct {
	order *list.List
	index map[topicPartition]*list.Element
}

type queued struct {
	tp   topicPartition
	sync OffsetSync
}

func newSyncQueue() syncQueue {
	return syncQueue{order: list.New(), index: map[topicPartition]*list.Element{}}
}

func (q syncQueue) put(tp topicPartition, s OffsetSync) {
	if e, ok := q.index[tp]; ok {
		e.Value.(*queued).sync = s
		return
	}
	q.index[tp] = q.order.PushBack(&queued{tp: tp, sync: s})
}

func (q syncQueue) remove(tp topicPartition) {
	if e, ok := q.index[tp]; ok {
		q.order.Remove(e)
		delete(q.index, tp)
	}
}

func (q syncQueue) list() []OffsetSync {
	out := make([]OffsetSync, 0, q.order.Len())
	for e := q.order.Front(); e != nil; e = e.Next() {
		out = append(out, e.Value.(*queued).sync)
	}
	return out
}

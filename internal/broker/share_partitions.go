package broker

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-io/samsa/internal/config"
	"github.com/samsa-io/samsa/internal/model"
	"github.com/samsa-io/samsa/internal/record"
	"github.com/samsa-io/samsa/internal/replication"
	"github.com/samsa-io/samsa/internal/share"
	"github.com/samsa-io/samsa/internal/storage"
	"github.com/samsa-io/samsa/internal/task"
)

// Share-partitions (KIP-932) live on the leader of their topic partition,
// as in Kafka: for each share group that fetches a partition this broker
// leads, a sharePart holds the in-flight records' states and locks
// (internal/share's Partition) and writes their durable part through the
// share coordinator (share_state.go) before an acknowledgement is
// answered. A sharePart is loaded from the coordinator on first use and
// again whenever the partition's leader epoch changes (another leader may
// have changed the state meanwhile); one whose partition is no longer led
// here is dropped, and its records' locks die with it (the new leader
// reads the state as last written: acquired records are available there
// again, acknowledged ones stay acknowledged).

type sharePartKey struct {
	group     string
	topic     model.TopicID
	partition int32
}

type shareParts struct {
	mu    sync.Mutex
	parts map[sharePartKey]*sharePart
	// released is notified when records become available again (a
	// release, a lock expiry, a reload), waking waiting share fetches.
	released task.Broadcast
}

func newShareParts() *shareParts { return &shareParts{parts: map[sharePartKey]*sharePart{}} }

// sharePart is one share-partition. mu guards everything but the write
// sequence, which wmu serialises (wmu before mu).
type sharePart struct {
	key sharePartKey
	mu  sync.Mutex
	// p is nil until loaded, and again after a failed write: the next use
	// loads the state as the coordinator has it.
	p                       *share.Partition
	leaderEpoch, stateEpoch int32
	// changes counts the changes to p's durable state; written is the
	// count the last successful write covered.
	changes, written uint64
	wmu              sync.Mutex
}

// part returns the group's share-partition of a topic partition, making
// it if needed (unloaded).
func (sps *shareParts) part(k sharePartKey) *sharePart {
	sps.mu.Lock()
	defer sps.mu.Unlock()
	sp, ok := sps.parts[k]
	if !ok {
		sp = &sharePart{key: k}
		sps.parts[k] = sp
	}
	return sp
}

// drop forgets a share-partition: its next use loads it again from the
// share coordinator.
func (sps *shareParts) drop(k sharePartKey) {
	sps.mu.Lock()
	sp, ok := sps.parts[k]
	sps.mu.Unlock()
	if !ok {
		return
	}
	sp.mu.Lock()
	sp.p = nil
	sp.mu.Unlock()
}

// dropGroup forgets every share-partition of a group.
func (sps *shareParts) dropGroup(group string) {
	sps.mu.Lock()
	var parts []*sharePart
	for k, sp := range sps.parts {
		if k.group == group {
			parts = append(parts, sp)
		}
	}
	sps.mu.Unlock()
	for _, sp := range parts {
		sp.mu.Lock()
		sp.p = nil
		sp.mu.Unlock()
	}
}

// loaded makes sure sp holds the state of partition rp as led now; sp.mu
// is held. It reads the state from the share coordinator, or starts it at
// the offset share.auto.offset.reset picks when there is none.
func (b *Broker) loadSharePart(ctx context.Context, sp *sharePart, rp *replication.Partition) error {
	epoch := rp.LeaderEpoch()
	if sp.p != nil && sp.leaderEpoch == epoch {
		return nil
	}
	sp.p = nil
	settings := b.shareSettings(sp.key.group)
	k := shareKey(sp.key.group, sp.key.topic, sp.key.partition)
	st, found, err := b.shareRead(ctx, k, epoch)
	if err != nil {
		return err
	}
	if !found || st.StartOffset < 0 {
		start, err := b.shareStartOffset(rp, settings.autoReset)
		if err != nil {
			return err
		}
		stateEpoch := int32(0)
		if found {
			stateEpoch = st.StateEpoch
		}
		if err := b.shareInitialize(ctx, k, stateEpoch, start); err != nil {
			return err
		}
		st.StateEpoch, st.StartOffset, st.Batches = stateEpoch, start, nil
	}
	p := share.New(settings.partitionConfig(), share.State{StateEpoch: st.StateEpoch, LeaderEpoch: epoch,
		StartOffset: st.StartOffset, Batches: st.Batches})
	if ls := rp.LogStartOffset(); p.StartOffset() < ls {
		p.AdvanceStart(ls)
	}
	sp.p, sp.leaderEpoch, sp.stateEpoch = p, epoch, st.StateEpoch
	sp.changes, sp.written = 0, 0
	b.shareParts.released.Notify()
	return nil
}

// shareStartOffset is where a share-partition with no state starts
// (share.auto.offset.reset): the high watermark (latest, the default), the
// log start (earliest), or the first offset at or after now minus a
// duration (by_duration:<ISO-8601 duration>), the high watermark when
// nothing is that recent.
func (b *Broker) shareStartOffset(rp *replication.Partition, reset config.ShareAutoOffsetReset) (int64, error) {
	switch reset.Strategy {
	case "earliest":
		return rp.LogStartOffset(), nil
	case "by_duration":
		ts := b.cfg.Clock.Now().Add(-reset.Duration).UnixMilli()
		off, _, _, err := rp.ListOffset(ts, false)
		if err != nil {
			return 0, err
		}
		if off >= 0 {
			return off, nil
		}
	}
	return rp.HighWatermark(), nil
}

// shareAcquire reads from rp for member: the records from the
// share-partition's next fetch offset, acquired up to maxRecords, and the
// bytes of the batches holding them. sp.mu is held.
func (b *Broker) shareAcquire(sp *sharePart, rp *replication.Partition, member string, maxBytes int32, maxRecords int, strict, readCommitted bool) ([]share.AcquiredRange, []byte, error) {
	p := sp.p
	if ls := rp.LogStartOffset(); p.StartOffset() < ls {
		p.AdvanceStart(ls)
	}
	if maxRecords <= 0 || !p.CanAcquire() {
		return nil, nil, nil
	}
	from := p.NextFetchOffset()
	limit := rp.HighWatermark()
	if readCommitted {
		limit = rp.LastStableOffset()
	}
	if from >= limit {
		return nil, nil, nil
	}
	// A share fetch takes a few hundred records: reading the request's
	// whole MaxBytes (50 MiB from most clients) to acquire them cost most
	// of the broker's CPU. The first batch is read whole however large.
	readSize := min(maxBytes, shareReadChunk)
	var rr storage.ReadResult
	var err error
	if readCommitted {
		rr, _, err = rp.ReadCommitted(from, readSize, true)
	} else {
		rr, _, err = rp.Read(from, readSize, true)
	}
	if err != nil {
		return nil, nil, err
	}
	data, err := rr.ReadAll()
	rr.Release()
	if err != nil {
		return nil, nil, err
	}
	var aborted []storage.AbortedTxn
	if readCommitted {
		aborted = rp.AbortedTransactions(from, limit)
	}
	type span struct {
		pos, end int
		first    int64
		last     int64
	}
	var spans []span
	var batches []share.LogBatch
	for pos := 0; pos < len(data); {
		h, err := record.ParseHeader(data[pos:])
		if err != nil || pos+h.Size() > len(data) {
			break
		}
		if h.BaseOffset >= limit {
			break
		}
		skip := h.IsControl()
		if !skip && readCommitted && h.IsTransactional() {
			for _, a := range aborted {
				if a.ProducerID == h.ProducerID && a.FirstOffset <= h.BaseOffset && h.LastOffset() <= a.LastOffset {
					skip = true
					break
				}
			}
		}
		batches = append(batches, share.LogBatch{FirstOffset: h.BaseOffset, LastOffset: min(h.LastOffset(), limit-1), Skip: skip})
		spans = append(spans, span{pos: pos, end: pos + h.Size(), first: h.BaseOffset, last: h.LastOffset()})
		pos += h.Size()
	}
	if len(batches) == 0 {
		return nil, nil, nil
	}
	if !strict {
		// Kafka's batch-optimized acquisition (the default; ShareFetch
		// v2's record_limit mode is strict): the batch holding the last
		// record asked for is taken whole, so a batch is not split over
		// fetches and sent again with each part; but not past twice
		// MaxRecords: a batch of thousands of records, acquired whole,
		// fills the in-flight bound at one consumer and the others wait
		// (Kafka's own broker does, at half the records/s; measured in
		// docs/PERFORMANCE.md#share-groups).
		seen := 0
		for _, lb := range batches {
			if lb.Skip || lb.LastOffset < from {
				continue
			}
			seen += int(lb.LastOffset - max(lb.FirstOffset, from) + 1)
			if seen >= maxRecords {
				if seen <= 2*maxRecords {
					maxRecords = seen
				}
				break
			}
		}
	}
	acquired := p.Acquire(member, batches, maxRecords, b.cfg.Clock.Now())
	if len(acquired) == 0 {
		return nil, nil, nil
	}
	// The batches holding acquired records, whole: the client keeps only
	// the acquired offsets.
	var out []byte
	j := 0
	for _, s := range spans {
		for j < len(acquired) && acquired[j].LastOffset < s.first {
			j++
		}
		if j < len(acquired) && acquired[j].FirstOffset <= s.last {
			out = append(out, data[s.pos:s.end]...)
		}
	}
	return acquired, out, nil
}

// shareReadChunk bounds one share fetch's read of a partition.
const shareReadChunk = 1 << 20

// shareAck applies member's acknowledgements to sp and, when they changed
// its durable state, writes it before returning: an acknowledgement
// answered without error is on the share coordinator's replicas. The
// result is one error per range, or one error for all (the write failed:
// the state is reloaded on next use and the acknowledgements are lost, as
// the client is told).
func (b *Broker) shareAck(ctx context.Context, sp *sharePart, rp *replication.Partition, member string, ranges []share.AckRange) ([]error, error) {
	sp.mu.Lock()
	if err := b.loadSharePart(ctx, sp, rp); err != nil {
		sp.mu.Unlock()
		return nil, err
	}
	errs, changed := sp.p.Acknowledge(member, ranges, b.cfg.Clock.Now())
	if changed {
		sp.changes++
	}
	sp.mu.Unlock()
	if changed {
		// A release makes records available; any acknowledgement may move
		// the start offset and so make room under the in-flight bound:
		// waiting share fetches look again.
		b.shareParts.released.Notify()
	}
	if !changed {
		return errs, nil
	}
	return errs, b.persistSharePart(ctx, sp)
}

// persistSharePart writes sp's state if a change is not written yet.
// Concurrent callers share writes: whoever holds wmu writes everything
// changed so far, and a caller whose change that covered returns at once.
func (b *Broker) persistSharePart(ctx context.Context, sp *sharePart) error {
	sp.mu.Lock()
	want := sp.changes
	sp.mu.Unlock()
	sp.wmu.Lock()
	defer sp.wmu.Unlock()
	sp.mu.Lock()
	if sp.p == nil {
		sp.mu.Unlock()
		return kerr.NotLeaderForPartition
	}
	if sp.written >= want {
		sp.mu.Unlock()
		return nil
	}
	st, upTo := sp.p.Snapshot(), sp.changes
	stateEpoch, leaderEpoch := sp.stateEpoch, sp.leaderEpoch
	p := sp.p
	sp.mu.Unlock()
	err := b.shareWrite(ctx, shareKey(sp.key.group, sp.key.topic, sp.key.partition), stateEpoch, leaderEpoch, st)
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if err != nil {
		if sp.p == p {
			sp.p = nil // what is in memory is not what is stored: reload
		}
		b.log.Warn("share-partition state not written", "group", sp.key.group, "partition", sp.key.partition, "err", err)
		return shareWriteError(err)
	}
	if sp.p == p {
		sp.written = max(sp.written, upTo)
	}
	return nil
}

// shareWriteError is what a client's acknowledgement gets when its state
// could not be written: a fenced leader is NOT_LEADER_OR_FOLLOWER (the
// client finds the new leader), the rest as the coordinator answered.
func shareWriteError(err error) error {
	switch {
	case errors.Is(err, kerr.FencedLeaderEpoch):
		return kerr.NotLeaderForPartition
	case errors.Is(err, kerr.FencedStateEpoch):
		return kerr.FencedStateEpoch
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled), errors.Is(err, errShareRetry):
		return kerr.RequestTimedOut
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke
	}
	return kerr.UnknownServerError
}

// releaseShareMember releases what member holds on the listed
// share-partitions (its share session closed) and writes their state if
// that archived something.
func (b *Broker) releaseShareMember(ctx context.Context, group, member string, keys []sharePartKey) {
	for _, k := range keys {
		b.shareParts.mu.Lock()
		sp, ok := b.shareParts.parts[k]
		b.shareParts.mu.Unlock()
		if !ok {
			continue
		}
		sp.mu.Lock()
		changed := false
		if sp.p != nil {
			changed = sp.p.ReleaseMember(member)
			if changed {
				sp.changes++
			}
		}
		sp.mu.Unlock()
		if changed {
			if err := b.persistSharePart(ctx, sp); err != nil {
				b.log.Debug("share-partition state after a release not written", "group", group, "err", err)
			}
		}
	}
	b.shareParts.released.Notify()
}

// dropIdleShareGroup drops a group's share-partitions once no member of it
// has a share session here (what they must keep is written by then): an
// AlterShareGroupOffsets, allowed only on an empty group, takes effect on
// the next fetch even when it ran on another broker. Called after the
// releases of the sessions that closed.
func (b *Broker) dropIdleShareGroup(group string) {
	if !b.shareSessions.hasGroup(group) {
		b.shareParts.dropGroup(group)
	}
}

// runShareLocks expires acquisition locks (every 100 ms: Kafka's minimum
// lock duration is a second and more) and drops the share-partitions of
// partitions no longer led here, until ctx ends.
func (b *Broker) runShareLocks(ctx context.Context) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		b.expireShareLocks(ctx)
	}
}

func (b *Broker) expireShareLocks(ctx context.Context) {
	now := b.cfg.Clock.Now()
	b.shareParts.mu.Lock()
	parts := make([]*sharePart, 0, len(b.shareParts.parts))
	for k, sp := range b.shareParts.parts {
		if !b.ledHere(k.topic, k.partition) {
			delete(b.shareParts.parts, k)
			continue
		}
		parts = append(parts, sp)
	}
	b.shareParts.mu.Unlock()
	released := 0
	var dirty []*sharePart
	for _, sp := range parts {
		sp.mu.Lock()
		if sp.p != nil {
			if next := sp.p.NextLockExpiry(); !next.IsZero() && !next.After(now) {
				// An expiry changes what is written only when it archives
				// (at the delivery-count limit): an acquired record is
				// written as available already. An archive shows as more
				// archived offsets, or as a start offset moved over them.
				archived, start := sp.p.Stats().Archived, sp.p.StartOffset()
				n := sp.p.ExpireLocks(now)
				released += n
				if n > 0 && (sp.p.Stats().Archived != archived || sp.p.StartOffset() != start) {
					sp.changes++
					dirty = append(dirty, sp)
				}
			}
		}
		sp.mu.Unlock()
	}
	if released > 0 {
		b.shareParts.released.Notify()
	}
	for _, sp := range dirty {
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		if err := b.persistSharePart(wctx, sp); err != nil {
			b.log.Debug("share-partition state after lock expiry not written", "err", err)
		}
		cancel()
	}
}

// ledHere reports whether this broker leads the topic partition.
func (b *Broker) ledHere(id model.TopicID, partition int32) bool {
	ts, ok := b.topics.byTopicID(id)
	if !ok {
		return false
	}
	p, code := ts.partition(partition)
	return code == 0 && p.IsLeader()
}

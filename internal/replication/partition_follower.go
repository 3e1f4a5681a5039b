package replication

import (
	"errors"
	"fmt"
	"slices"

	"github.com/samsa-io/samsa/internal/record"
)

// The follower's half of replication, driven by the broker's fetcher: one
// fetcher per partition calls FetchState, sends the fetch, and hands the
// leader's answer to AppendAsFollower, TruncateDiverging or
// TruncateOutOfRange, one call at a time. A late answer from a former
// leader is harmless: its batches carry their leader epochs, and the next
// fetch to the new leader finds any divergence.

// FetchPosition is what a follower's next fetch carries.
type FetchPosition struct {
	// FetchOffset is the follower's log end, which the leader takes for
	// its progress; in durable mode it is also the fsynced end, so the
	// leader's high watermark means "on disk on every ISR member".
	FetchOffset      int64
	LastFetchedEpoch int32 // the log's latest leader epoch (-1: none)
	LeaderEpoch      int32 // the fetch's CurrentLeaderEpoch
	Leader           int32 // where to send it (NoLeader: nowhere yet)
	// InSync: this replica is in the committed ISR, or its log reached
	// the high watermark the leader last sent. The follower's replication
	// throttle never holds such a replica back: Kafka's follower asks
	// only the second (its fetch state's lag), but a member of the ISR
	// that falls behind for a moment must not be slowed out of it.
	InSync bool
}

// FetchState is the follower's next fetch. In durable mode it first
// fsyncs the log to its end (the group commit), and so may return the
// log's I/O error; it also lets the high watermark follow the fsynced end
// up to what the leader last sent. A replica that leads, or has no role
// yet, is ErrNotFollower.
func (p *Partition) FetchState() (FetchPosition, error) {
	p.roleMu.RLock()
	defer p.roleMu.RUnlock()
	p.mu.Lock()
	pos := FetchPosition{LastFetchedEpoch: -1, LeaderEpoch: p.mu.leaderEpoch, Leader: p.mu.leader}
	err := p.checkFollowerLocked()
	inISR, leaderHW := slices.Contains(p.mu.isr, p.mu.self), p.mu.leaderHW
	p.mu.Unlock()
	if err != nil {
		return pos, err
	}
	pos.FetchOffset = p.log().LogEndOffset()
	pos.InSync = inISR || leaderHW >= 0 && pos.FetchOffset >= leaderHW
	if p.durable {
		if err := p.log().Sync(pos.FetchOffset); err != nil {
			return pos, err
		}
		p.mu.Lock()
		p.followLeaderHighWatermarkLocked()
		p.mu.Unlock()
	}
	if e, ok := p.log().LatestEpoch(); ok {
		pos.LastFetchedEpoch = e.Epoch
	}
	return pos, nil
}

func (p *Partition) checkFollowerLocked() error {
	if p.mu.offline {
		return p.offlineError()
	}
	if !p.mu.known || p.mu.leaderState != nil {
		return fmt.Errorf("%w: %s", ErrNotFollower, p.TP)
	}
	return nil
}

// AppendAsFollower appends the batches of the leader's answer to a fetch
// (storage.Log.AppendAsFollower: kept as the leader wrote them), dropping
// a last batch that maxBytes cut short; then the high watermark moves to
// the leader's, bounded by the follower's log end (durable mode: its
// fsynced end), and never back; and the log start follows the leader's
// (DeleteRecords, retention), up to the high watermark. Waiters wake when
// the high watermark moves. An answer with no records still brings the
// leader's bounds.
//
// An answer whose first batch holds the log end without starting there
// (the log end lies inside one of the leader's batches, see
// startsInsideLog) appends nothing: the log is cut to the batch's base
// instead, and the next fetch, from there, brings the batch whole.
// FollowerAppend says so, for the broker to log.
func (p *Partition) AppendAsFollower(batches []byte, leaderHW, leaderLogStart int64) (FollowerAppend, error) {
	whole := wholeBatches(batches)
	if p.answerStartsInsideLog(whole) {
		return p.truncateToBatchBase(whole)
	}
	p.roleMu.RLock()
	defer p.roleMu.RUnlock()
	p.mu.Lock()
	err := p.checkFollowerLocked()
	p.mu.Unlock()
	if err != nil {
		return FollowerAppend{}, err
	}
	if len(whole) > 0 {
		if _, err := p.log().AppendAsFollower(whole); err != nil {
			return FollowerAppend{}, err
		}
	}
	p.mu.Lock()
	p.mu.leaderHW = leaderHW
	p.followLeaderHighWatermarkLocked()
	p.mu.Unlock()
	if start := min(leaderLogStart, p.HighWatermark()); start > p.log().LogStartOffset() {
		return FollowerAppend{}, p.log().SetLogStartOffset(start)
	}
	return FollowerAppend{}, nil
}

// FollowerAppend is what AppendAsFollower did besides appending.
type FollowerAppend struct {
	// Truncated: the log end lay inside the answer's first batch; the log
	// was cut from TruncatedFrom to TruncatedTo and nothing was appended.
	Truncated                  bool
	TruncatedFrom, TruncatedTo int64
}

// startsInsideLog reports whether a leader's first batch h holds the end
// of a follower's log without starting there, so that the follower must
// cut its log back to the batch's base before it can take the batch.
// The leader answers a fetch with the batch that holds the fetch offset,
// from that batch's base; the follower's log end then lies inside it when
// the two logs were cut at different points of the same offsets: a
// follower that truncated, after an unclean election, to where its epoch
// ended on a leader whose log start (DeleteRecords) fell inside a batch
// the follower's log splits; or a log whose leader-epoch checkpoint was
// lost, whose fetches carry no last epoch for the leader to check.
//
// An empty log (start == end) is left to storage, which restarts it at
// the batch's base keeping its log start: that case is the only one
// Kafka's follower takes (it refuses the batch on a log that is not
// empty). A batch that ends below the log
// end, or of an older leader epoch than the log's latest, is a late
// answer to a fetch made before the log moved on (a former leader's, say,
// after this replica led an epoch of its own): cutting for it could throw
// away records of a newer epoch, so it is left to storage to refuse, as
// the fetch that follows finds any divergence by epoch.
func startsInsideLog(h *record.Header, logStart, logEnd int64, latestEpoch int32) bool {
	return logStart < logEnd && h.BaseOffset < logEnd && logEnd <= h.LastOffset() &&
		h.PartitionLeaderEpoch >= latestEpoch
}

// answerStartsInsideLog is startsInsideLog for the first batch of an
// answer and the log as it is now.
func (p *Partition) answerStartsInsideLog(batches []byte) bool {
	h, err := record.ParseHeader(batches)
	if err != nil {
		return false
	}
	end := p.log().LogEndOffset()
	if h.BaseOffset >= end {
		return false // every answer but a rare one: no more look-ups
	}
	latest := int32(-1)
	if e, ok := p.log().LatestEpoch(); ok {
		latest = e.Epoch
	}
	return startsInsideLog(&h, p.log().LogStartOffset(), end, latest)
}

// truncateToBatchBase cuts the log back to the base of the answer's first
// batch, which holds the log end (answerStartsInsideLog, checked again
// under roleMu: the log may have moved since), with the truncation
// divergence uses, which cuts the epoch cache, producer state and indexes
// with it and keeps the high watermark within the new end. The leader's
// log is authoritative for the offsets it sends, and below its high
// watermark both logs hold the same records anyway, so replacing them is
// safe.
//
// It appends nothing: the next fetch, from the new end, brings the batch
// again. Appending it now would save that round trip, but the cut may
// land below the base (a batch of the follower's own straddles it, or
// the base lies below the log start, where the log restarts empty at its
// start), and a fetch from the new end is checked by the leader for
// divergence against the log as it now is, where this answer was checked
// against the log before the cut.
func (p *Partition) truncateToBatchBase(batches []byte) (FollowerAppend, error) {
	p.roleMu.Lock()
	defer p.roleMu.Unlock()
	p.mu.Lock()
	err := p.checkFollowerLocked()
	p.mu.Unlock()
	if err != nil {
		return FollowerAppend{}, err
	}
	if !p.answerStartsInsideLog(batches) {
		return FollowerAppend{}, nil // the log moved; the next fetch asks again
	}
	h, _ := record.ParseHeader(batches)
	from := p.log().LogEndOffset()
	// Below the log start the log restarts empty at its start
	// (storage.Log.TruncateTo), keeping the log start offset; the next
	// fetch then takes the batch whole (storage.Log.AppendAsFollower).
	to := max(h.BaseOffset, p.log().LogStartOffset())
	if err := p.truncateLocked(to); err != nil {
		return FollowerAppend{}, err
	}
	return FollowerAppend{Truncated: true, TruncatedFrom: from, TruncatedTo: p.log().LogEndOffset()}, nil
}

// followLeaderHighWatermarkLocked moves a follower's high watermark to
// the leader's, as far as the follower holds (durable mode: has fsynced).
func (p *Partition) followLeaderHighWatermarkLocked() {
	held := p.log().LogEndOffset()
	if p.durable {
		held = min(held, p.log().Offsets().RecoveryPoint)
	}
	p.setHighWatermarkLocked(min(p.mu.leaderHW, held))
}

// wholeBatches is data up to its first incomplete batch: a read cut short
// by maxBytes ends with part of a batch, which a follower drops, as a
// consumer does, and fetches whole next time. A batch that is not cut
// short but garbled stays, for the log's checks to refuse.
func wholeBatches(data []byte) []byte {
	pos := 0
	for pos < len(data) {
		h, err := record.ParseHeader(data[pos:])
		if errors.Is(err, record.ErrTruncated) || err == nil && pos+h.Size() > len(data) {
			break
		}
		if err != nil {
			return data
		}
		pos += h.Size()
	}
	return data[:pos]
}

// TruncateTo cuts the follower's log at offset (storage.Log.TruncateTo:
// a batch straddling it goes whole) and keeps the high watermark at or
// below the new log end. A replica that leads is ErrNotFollower.
func (p *Partition) TruncateTo(offset int64) error {
	p.roleMu.Lock()
	defer p.roleMu.Unlock()
	return p.truncateLocked(offset)
}

func (p *Partition) truncateLocked(offset int64) error {
	p.mu.Lock()
	err := p.checkFollowerLocked()
	p.mu.Unlock()
	if err != nil {
		return err
	}
	if err := p.log().TruncateTo(offset); err != nil {
		return err
	}
	p.mu.Lock()
	p.highWatermark.Store(min(p.HighWatermark(), p.log().LogEndOffset()))
	p.mu.Unlock()
	return nil
}

// TruncateFullyAndStartAt empties the follower's log and restarts it at
// offset, the leader's log start when the follower's fetch offset fell
// below it; the high watermark is offset. A replica that leads is
// ErrNotFollower.
func (p *Partition) TruncateFullyAndStartAt(offset int64) error {
	p.roleMu.Lock()
	defer p.roleMu.Unlock()
	return p.truncateFullyLocked(offset)
}

func (p *Partition) truncateFullyLocked(offset int64) error {
	p.mu.Lock()
	err := p.checkFollowerLocked()
	p.mu.Unlock()
	if err != nil {
		return err
	}
	if err := p.log().TruncateFullyAndStartAt(offset); err != nil {
		return err
	}
	p.mu.Lock()
	p.highWatermark.Store(offset)
	p.notifyLocked()
	p.mu.Unlock()
	return nil
}

// TruncateDiverging applies the leader's diverging-epoch answer: it
// truncates where TruncationOffset says (by leader epoch, never to the
// high watermark blindly) and returns that offset. done is false when the
// follower's epoch there was not the leader's: the next fetch may diverge
// again, further back.
func (p *Partition) TruncateDiverging(d EpochEndOffset) (offset int64, done bool, err error) {
	p.roleMu.Lock()
	defer p.roleMu.Unlock()
	offset, done = TruncationOffset(p.log().EndOffsetForEpoch, p.log().LogEndOffset(), p.HighWatermark(), d)
	return offset, done, p.truncateLocked(offset)
}

// TruncateOutOfRange handles a fetch the leader answered out of range,
// with its log's bounds: a follower behind the leader's log start restarts
// its log there (TruncateFullyAndStartAt); one past the leader's log end
// (only a fetch without a last fetched epoch gets here) truncates to it.
// A follower whose log end now lies within the leader's bounds (they
// moved meanwhile) keeps its log and fetches again.
func (p *Partition) TruncateOutOfRange(leaderLogStart, leaderLogEnd int64) error {
	p.roleMu.Lock()
	defer p.roleMu.Unlock()
	switch end := p.log().LogEndOffset(); {
	case end < leaderLogStart:
		return p.truncateFullyLocked(leaderLogStart)
	case end > leaderLogEnd:
		return p.truncateLocked(leaderLogEnd)
	}
	return nil
}

package replication

import (
	"fmt"
	"time"

	"github.com/samsa-io/samsa/internal/storage"
)

// The leader's half of replication: answering its followers' fetches,
// which moves the high watermark and may propose an ISR change, the lag
// check on a tick, and the controller's answer to a proposal.

// FollowerRead is the leader's answer to a follower's fetch.
type FollowerRead struct {
	// Records are whole batches from the fetch offset up to the log end
	// (not the high watermark: followers copy what is not committed yet),
	// at least one batch when there is any. Release them once sent.
	Records storage.ReadResult
	// Diverged: the follower's log is not a prefix of the leader's; it
	// must truncate (Partition.TruncateDiverging with DivergingEpoch) and
	// fetch again. No records come with it.
	Diverged       bool
	DivergingEpoch EpochEndOffset
	// The leader's bounds, sent with every answer, an out-of-range one
	// too (then for Partition.TruncateOutOfRange).
	HighWatermark  int64
	LogStartOffset int64
	LogEndOffset   int64
}

// FollowerFetch answers a fetch from follower replica at fetchOffset, its
// log end (durable mode: its fsynced end), whose last record has leader
// epoch lastFetchedEpoch (-1: not sent, no divergence check). A
// currentLeaderEpoch other than -1 must be this leader's epoch: older is
// ErrFencedLeaderEpoch, newer ErrUnknownLeaderEpoch; a replica that does
// not lead is ErrNotLeader, a replica ID outside the partition's replicas
// ErrNotReplica. A follower whose log diverges from the leader's gets the
// diverging epoch and nothing else. A fetch offset outside the leader's
// log is storage.ErrOffsetOutOfRange, with the leader's bounds. Any other
// fetch counts as the follower's progress (LeaderState.FollowerFetch): it
// may move the high watermark, waking waiters, and propose an ISR change
// through Options.ProposeISR before FollowerFetch returns.
func (p *Partition) FollowerFetch(replica int32, fetchOffset int64, lastFetchedEpoch, currentLeaderEpoch, maxBytes int32, now time.Time) (FollowerRead, error) {
	out, pr, err := p.followerFetch(replica, fetchOffset, lastFetchedEpoch, currentLeaderEpoch, maxBytes, now)
	p.propose(pr)
	return out, err
}

func (p *Partition) followerFetch(replica int32, fetchOffset int64, lastFetchedEpoch, currentLeaderEpoch, maxBytes int32, now time.Time) (FollowerRead, *isrProposal, error) {
	p.roleMu.RLock()
	defer p.roleMu.RUnlock()
	ls, err := p.checkLeaderEpoch(currentLeaderEpoch)
	if err != nil {
		return FollowerRead{}, nil, err
	}
	out := FollowerRead{HighWatermark: p.HighWatermark(), LogStartOffset: p.log().LogStartOffset(), LogEndOffset: p.log().LogEndOffset()}
	if d, ok := DivergingEpoch(p.log().EndOffsetForEpoch, fetchOffset, lastFetchedEpoch); !ok {
		out.Diverged, out.DivergingEpoch = true, d
		return out, nil, nil
	}
	if fetchOffset < out.LogStartOffset || fetchOffset > out.LogEndOffset {
		return out, nil, fmt.Errorf("%w: %s follower %d fetches %d, the log is [%d, %d]",
			storage.ErrOffsetOutOfRange, p.TP, replica, fetchOffset, out.LogStartOffset, out.LogEndOffset)
	}
	if err := p.syncInheritedTail(ls); err != nil {
		return out, nil, err
	}
	p.mu.Lock()
	eff, ok := ls.FollowerFetch(replica, fetchOffset, now)
	pr := p.leaderEffectsLocked(eff)
	p.mu.Unlock()
	if !ok {
		return out, nil, fmt.Errorf("%w: %s has no replica %d", ErrNotReplica, p.TP, replica)
	}
	out.HighWatermark = p.HighWatermark()
	out.Records, err = p.log().ReadWhole(fetchOffset, maxBytes, -1)
	return out, pr, err
}

// ReadReplicas is LeaderState.ReadReplicas for a consumer's fetch at
// fetchOffset, nil on a replica that does not lead. The leader does not
// track its followers' log starts (Kafka asks that a follower's be at or
// below the fetch offset): a follower's log start follows the leader's,
// which it learns with every fetch, so below the leader's own only the
// leader is offered, and it answers OFFSET_OUT_OF_RANGE.
func (p *Partition) ReadReplicas(fetchOffset int64, now time.Time) []ReplicaView {
	p.mu.Lock()
	defer p.mu.Unlock()
	ls := p.mu.leaderState
	if ls == nil {
		return nil
	}
	out := ls.ReadReplicas(fetchOffset, now)
	if fetchOffset < p.log().LogStartOffset() {
		return out[:1]
	}
	return out
}

// checkLeaderEpoch checks a request's current leader epoch, as Kafka
// does, before whether this replica leads; it returns the leader state.
func (p *Partition) checkLeaderEpoch(currentLeaderEpoch int32) (*LeaderState, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch ours := p.mu.leaderEpoch; {
	case currentLeaderEpoch >= 0 && currentLeaderEpoch < ours:
		return nil, fmt.Errorf("%w: %s: %d, the leader's is %d", ErrFencedLeaderEpoch, p.TP, currentLeaderEpoch, ours)
	case currentLeaderEpoch > ours:
		return nil, fmt.Errorf("%w: %s: %d, this replica knows %d", ErrUnknownLeaderEpoch, p.TP, currentLeaderEpoch, ours)
	case p.mu.leaderState == nil:
		return nil, fmt.Errorf("%w: %s (the leader is %d)", ErrNotLeader, p.TP, p.mu.leader)
	}
	return p.mu.leaderState, nil
}

// syncInheritedTail, in durable mode, fsyncs the records a new leader
// holds from before its leadership and had not fsynced (its own appends
// are fsynced as they come), so they count for the high watermark once
// the followers have them too. It runs at most once per leadership in
// practice: later the durable end is past the epoch's start.
func (p *Partition) syncInheritedTail(ls *LeaderState) error {
	if !p.durable || ls.LogEnd() >= ls.epochStartOffset {
		return nil
	}
	if err := p.log().Sync(ls.epochStartOffset); err != nil {
		return err
	}
	p.mu.Lock()
	p.leaderEffectsLocked(ls.Appended(p.log().Offsets().RecoveryPoint))
	p.mu.Unlock()
	return nil
}

// Tick runs the leader's lag check (LeaderState.Tick): an ISR member that
// has not caught up for State.LagTime is proposed out through
// Options.ProposeISR. On a follower it does nothing.
func (p *Partition) Tick(now time.Time) {
	p.mu.Lock()
	var pr *isrProposal
	if ls := p.mu.leaderState; ls != nil {
		pr = p.leaderEffectsLocked(ls.Tick(now))
	}
	p.mu.Unlock()
	p.propose(pr)
}

// ISRCommitted applies the controller's answer to this leader's
// AlterPartition: the ISR it committed at partitionEpoch. An answer for
// another leader epoch, or not newer than the partition epoch already
// applied (the metadata image brought it first), changes nothing.
func (p *Partition) ISRCommitted(leaderEpoch, partitionEpoch int32, isr []int32) {
	p.mu.Lock()
	defer p.mu.Unlock()
	ls := p.mu.leaderState
	if ls == nil || leaderEpoch != p.mu.leaderEpoch || partitionEpoch <= p.mu.partitionEpoch {
		return
	}
	p.mu.partitionEpoch, p.mu.isr = partitionEpoch, sortedClone(isr)
	p.leaderEffectsLocked(ls.ISRCommitted(p.mu.isr, partitionEpoch))
	p.notifyLocked() // acks=all waiters check min.insync.replicas again
}

// AlterPartitionFailed drops this leader's ISR proposal isr, made at
// leaderEpoch and partitionEpoch, when the controller surely did not
// commit it (it refused it as ineligible or invalid); the next fetch or
// tick proposes again if the ISR still needs changing. It changes nothing
// unless that proposal is still the one in flight: an answer that comes
// after the metadata settled the proposal, or after a newer one was made,
// must not drop the newer one (which would count the high watermark
// without a replica the controller may already hold in sync).
//
// An answer whose outcome is unknown (no answer, a timeout, a controller
// that lost its leadership mid-write) or that says the controller has
// moved on (a newer partition or leader epoch, another leader) is not a
// refusal: the proposal stays in flight until the metadata says what the
// controller committed (ISRCommitted through Apply), as Kafka's leader
// keeps its pending ISR state (Partition.handleAlterPartitionError).
func (p *Partition) AlterPartitionFailed(leaderEpoch, partitionEpoch int32, isr []int32) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ls := p.mu.leaderState; ls != nil && leaderEpoch == p.mu.leaderEpoch && ls.PendingIs(partitionEpoch, isr) {
		ls.ISRRejected()
	}
}

// ProposalInFlight reports whether the ISR proposal isr, made at
// leaderEpoch and partitionEpoch, is still in flight: the broker sends it
// again while it is and the controller's answer is unknown.
func (p *Partition) ProposalInFlight(leaderEpoch, partitionEpoch int32, isr []int32) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	ls := p.mu.leaderState
	return ls != nil && leaderEpoch == p.mu.leaderEpoch && ls.PendingIs(partitionEpoch, isr)
}

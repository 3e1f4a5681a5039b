package replication

import (
	"slices"
	"time"
)

// LeaderState is the pure state machine of a partition's leader replica:
// it tracks each follower's log end offset from its fetches, moves the high
// watermark to the smallest log end offset of the in-sync replicas, and
// decides when the ISR should shrink (a follower has not caught up for
// replica.lag.time.max.ms) or expand (a follower reached the high watermark
// in this leader epoch). It does no I/O and reads no clock: the broker
// feeds it events with the time, and carries out what it returns (wake
// waiters when the watermark moved, send an AlterPartition to the
// controller). Tests drive it from text scripts (testdata/leader_*.txt).
//
// The ISR has two forms, as in Kafka (KIP-497, KIP-841): the committed ISR
// is the controller's, and bounds acks=all (min.insync.replicas); while an
// AlterPartition is in flight, the maximal ISR is the union of the
// committed and the proposed one, and the high watermark waits for all of
// it, so a shrink does not commit anything early and an expansion does not
// let a new member miss a committed record.
type LeaderState struct {
	self           int32
	leaderEpoch    int32
	partitionEpoch int32
	replicas       []int32
	isr            []int32
	// pending is the ISR proposed to the controller and not yet answered;
	// nil when none is in flight.
	pending []int32
	// epochStartOffset is the log end offset when this replica became
	// leader: a follower joins the ISR only once it has fetched past it, so
	// it holds this epoch's first record.
	epochStartOffset int64
	logEnd           int64
	highWatermark    int64
	followers        map[int32]*followerProgress
	lagTime          time.Duration
}

// followerProgress is what the leader knows of one follower.
type followerProgress struct {
	logEnd int64 // -1 until the follower's first fetch in this epoch
	// lastCaughtUp is the last time the follower had everything the leader
	// had (Kafka's lastCaughtUpTimeMs); the ISR loses it when this is older
	// than replica.lag.time.max.ms.
	lastCaughtUp time.Time
	// lastFetch and leaderEndAtLastFetch let a follower that reaches what
	// the leader had at its previous fetch count as caught up at that time.
	lastFetch            time.Time
	leaderEndAtLastFetch int64
}

// Leadership is a partition's leader and replica sets as the metadata has
// them.
type Leadership struct {
	Leader         int32
	LeaderEpoch    int32
	PartitionEpoch int32
	Replicas       []int32
	ISR            []int32
}

// LeaderEffects is what an event asks the broker to do.
type LeaderEffects struct {
	// HighWatermarkMoved: the high watermark advanced; wake the waiters
	// (long-polling fetches, acks=all produces).
	HighWatermarkMoved bool
	// ProposeISR, when not nil, is the ISR to send to the controller in an
	// AlterPartition at PartitionEpoch.
	ProposeISR []int32
}

// NewLeaderState starts a leader at the log's end and high watermark, as
// the broker is told it leads a partition. Every ISR member counts as
// caught up now, as in Kafka, so none is dropped before it had time to
// fetch.
func NewLeaderState(self int32, l Leadership, logEnd, highWatermark int64, lagTime time.Duration, now time.Time) *LeaderState {
	s := &LeaderState{
		self: self, leaderEpoch: l.LeaderEpoch, partitionEpoch: l.PartitionEpoch,
		replicas: slices.Clone(l.Replicas), isr: slices.Clone(l.ISR),
		epochStartOffset: logEnd, logEnd: logEnd, highWatermark: min(highWatermark, logEnd),
		followers: map[int32]*followerProgress{}, lagTime: lagTime,
	}
	for _, r := range l.Replicas {
		if r == self {
			continue
		}
		f := &followerProgress{logEnd: -1, leaderEndAtLastFetch: -1}
		if slices.Contains(l.ISR, r) {
			f.lastCaughtUp = now
		}
		s.followers[r] = f
	}
	s.advanceHighWatermark() // a leader alone in its ISR commits its log at once
	return s
}

// HighWatermark is the offset below which records are committed.
func (s *LeaderState) HighWatermark() int64 { return s.highWatermark }

// LogEnd is the leader's log end offset as last reported.
func (s *LeaderState) LogEnd() int64 { return s.logEnd }

// ISR is the committed in-sync replica set.
func (s *LeaderState) ISR() []int32 { return slices.Clone(s.isr) }

// PartitionEpoch is the partition epoch of the committed state, which an
// AlterPartition must carry.
func (s *LeaderState) PartitionEpoch() int32 { return s.partitionEpoch }

// LeaderEpoch is this leadership's epoch.
func (s *LeaderState) LeaderEpoch() int32 { return s.leaderEpoch }

// Pending reports whether an ISR change is in flight.
func (s *LeaderState) Pending() bool { return s.pending != nil }

// maximalISR is the committed ISR together with the one in flight.
func (s *LeaderState) maximalISR() []int32 {
	out := slices.Clone(s.isr)
	for _, r := range s.pending {
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	slices.Sort(out)
	return out
}

// Appended records that the leader's log end moved (an append as leader;
// in durable mode, the durable end moving).
func (s *LeaderState) Appended(logEnd int64) LeaderEffects {
	s.logEnd = max(s.logEnd, logEnd)
	return LeaderEffects{HighWatermarkMoved: s.advanceHighWatermark()}
}

// LogStarted records that the leader's log now starts at logStart: a
// mirror append restarted the empty log at its source's log start
// (storage.Log.AppendMirror). No offset below it exists any more, so the
// high watermark moves up to it, as Kafka keeps a high watermark at or
// above the log start; followers behind it fetch out of range and restart
// their logs there (Partition.TruncateOutOfRange), which they could not
// do if the leader answered with a high watermark below its log start.
func (s *LeaderState) LogStarted(logStart int64) LeaderEffects {
	s.logEnd = max(s.logEnd, logStart)
	if logStart <= s.highWatermark {
		return LeaderEffects{}
	}
	s.highWatermark = logStart
	return LeaderEffects{HighWatermarkMoved: true}
}

// FollowerFetch records a fetch from a follower at fetchOffset, its log end
// offset (in durable mode, its durable end). It returns false for a replica
// that is not one of the partition's.
func (s *LeaderState) FollowerFetch(replica int32, fetchOffset int64, now time.Time) (LeaderEffects, bool) {
	f, ok := s.followers[replica]
	if !ok {
		return LeaderEffects{}, false
	}
	switch {
	case fetchOffset >= s.logEnd:
		f.lastCaughtUp = now
	case f.leaderEndAtLastFetch >= 0 && fetchOffset >= f.leaderEndAtLastFetch:
		f.lastCaughtUp = f.lastFetch
	}
	f.lastFetch, f.leaderEndAtLastFetch = now, s.logEnd
	f.logEnd = fetchOffset
	eff := LeaderEffects{HighWatermarkMoved: s.advanceHighWatermark()}
	if s.pending == nil && !slices.Contains(s.isr, replica) &&
		fetchOffset >= s.highWatermark && fetchOffset >= s.epochStartOffset {
		eff.ProposeISR = s.propose(append(slices.Clone(s.isr), replica))
	}
	return eff, true
}

// Tick checks the followers' lag: ISR members that have not caught up for
// replica.lag.time.max.ms are proposed out of the ISR.
func (s *LeaderState) Tick(now time.Time) LeaderEffects {
	if s.pending != nil {
		return LeaderEffects{}
	}
	var keep []int32
	dropped := false
	for _, r := range s.isr {
		if f, ok := s.followers[r]; ok && now.Sub(f.lastCaughtUp) > s.lagTime {
			dropped = true
			continue
		}
		keep = append(keep, r)
	}
	if !dropped {
		return LeaderEffects{}
	}
	return LeaderEffects{ProposeISR: s.propose(keep)}
}

func (s *LeaderState) propose(isr []int32) []int32 {
	slices.Sort(isr)
	s.pending = isr
	return slices.Clone(isr)
}

// ISRCommitted applies the controller's answer to an AlterPartition, or a
// metadata change of the ISR: the committed ISR and partition epoch.
func (s *LeaderState) ISRCommitted(isr []int32, partitionEpoch int32) LeaderEffects {
	s.isr = slices.Clone(isr)
	slices.Sort(s.isr)
	s.partitionEpoch = partitionEpoch
	s.pending = nil
	return LeaderEffects{HighWatermarkMoved: s.advanceHighWatermark()}
}

// SetReplicas applies a change of the partition's replica set within the
// leader epoch (a reassignment adds or removes replicas without a new
// leader): a new follower is unknown until it fetches and, being outside
// the ISR, is not timed for lag; a removed one is forgotten. Followers that
// stay keep their progress, and a proposal in flight stays in flight.
func (s *LeaderState) SetReplicas(replicas []int32) {
	for _, r := range replicas {
		if _, ok := s.followers[r]; !ok && r != s.self {
			s.followers[r] = &followerProgress{logEnd: -1, leaderEndAtLastFetch: -1}
		}
	}
	for r := range s.followers {
		if !slices.Contains(replicas, r) {
			delete(s.followers, r)
		}
	}
	s.replicas = slices.Clone(replicas)
}

// SetLagTime applies a changed replica.lag.time.max.ms.
func (s *LeaderState) SetLagTime(d time.Duration) { s.lagTime = d }

// ISRRejected drops the proposal in flight (the controller surely did not
// commit it); the next fetch or tick proposes again if still needed.
func (s *LeaderState) ISRRejected() { s.pending = nil }

// PendingIs reports whether the proposal in flight is isr, made at
// partitionEpoch: an answer to an older proposal must not settle a newer
// one.
func (s *LeaderState) PendingIs(partitionEpoch int32, isr []int32) bool {
	return s.pending != nil && s.partitionEpoch == partitionEpoch && slices.Equal(s.pending, sortedClone(isr))
}

// advanceHighWatermark moves the high watermark to the smallest log end
// offset over the maximal ISR; it never moves back, and waits for a
// follower whose log end is not yet known.
func (s *LeaderState) advanceHighWatermark() bool {
	hw := s.logEnd
	for _, r := range s.maximalISR() {
		if r == s.self {
			continue
		}
		f, ok := s.followers[r]
		if !ok || f.logEnd < 0 {
			return false
		}
		hw = min(hw, f.logEnd)
	}
	if hw <= s.highWatermark {
		return false
	}
	s.highWatermark = hw
	return true
}

// FollowerLogEnd is a follower's log end offset as last fetched (-1 when
// unknown); DescribeQuorum-style tools and tests read it.
func (s *LeaderState) FollowerLogEnd(replica int32) int64 {
	if f, ok := s.followers[replica]; ok {
		return f.logEnd
	}
	return -1
}

// ReplicaView is a replica a consumer could read from, as the leader sees
// it (KIP-392; Kafka's ReplicaView).
type ReplicaView struct {
	ID     int32
	LogEnd int64
	// SinceCaughtUp is how long ago the replica last had everything the
	// leader had; zero for the leader.
	SinceCaughtUp time.Duration
}

// ReadReplicas lists the replicas a consumer fetching at fetchOffset may
// be sent to, as Kafka's ReplicaManager.findPreferredReadReplica gathers
// them: the leader first, then, by ID, each follower of the committed ISR
// whose log end (as of its last fetch) is at or past fetchOffset. A
// follower outside the ISR may lag for good, and the consumer with it, so
// it is never offered.
func (s *LeaderState) ReadReplicas(fetchOffset int64, now time.Time) []ReplicaView {
	out := []ReplicaView{{ID: s.self, LogEnd: s.logEnd}}
	for _, r := range s.isr {
		f, ok := s.followers[r]
		if !ok || f.logEnd < fetchOffset {
			continue
		}
		out = append(out, ReplicaView{ID: r, LogEnd: f.logEnd, SinceCaughtUp: now.Sub(f.lastCaughtUp)})
	}
	return out
}

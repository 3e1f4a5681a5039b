package replication

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/samsa-io/samsa/internal/clock"
	"github.com/samsa-io/samsa/internal/model"
	"github.com/samsa-io/samsa/internal/storage"
)

// NoLeader is State.Leader when the partition has no leader.
const NoLeader int32 = -1

// Partition is this broker's replica of one partition, leader or follower
// as the metadata says (Apply). As leader it appends, answers its
// followers' fetches (partition_leader.go) and moves the high watermark
// through its LeaderState; as follower it appends what its fetcher brings
// from the leader and truncates by leader epoch (partition_follower.go).
// Either way it serves consumers below its high watermark.
//
// Lock order: roleMu, then mu, then the log's own locks. No fsync runs
// under mu, and no callback runs under either lock.
type Partition struct {
	TP      model.TopicPartition
	TopicID model.TopicID
	// logPtr is the replica's log. A move between data directories
	// (SwapLog) replaces it while holding roleMu exclusively, so whoever
	// holds roleMu sees one log throughout; a reader without it may finish
	// on the old, closed log's in-memory state.
	logPtr     atomic.Pointer[storage.Log]
	durable    bool // acknowledge only what is fsynced (durable mode)
	proposeISR func(tp model.TopicPartition, leaderEpoch, partitionEpoch int32, isr []int32)

	// roleMu orders the log's writers against changes of role. Appends
	// (as leader or follower), follower fetches and FetchState hold it
	// shared; Apply and the truncations hold it exclusively. So a role
	// change never lands between an append's role check and its write,
	// a new leader starts its LeaderState at a log end no follower append
	// is moving, and no truncation cuts under a fetch's range check.
	roleMu sync.RWMutex

	mu struct {
		sync.Mutex
		known          bool // a role was applied; until then the replica only serves reads
		offline        bool // its data directory failed (SetOffline): no role, no reads, for good
		self           int32
		leader         int32
		leaderEpoch    int32
		partitionEpoch int32
		replicas       []int32
		isr            []int32 // committed (the controller's), for min.insync.replicas
		lagTime        time.Duration
		leaderState    *LeaderState // nil unless this replica leads
		// leaderHW is, on a follower, the high watermark its leader last
		// sent; the follower's own is that, bounded by what it holds
		// (durable mode: what it has fsynced).
		leaderHW int64
		waiters  map[*Waiter]struct{}
	}
	// highWatermark is written under mu, read without it.
	highWatermark atomic.Int64
}

// Options configure a replica.
type Options struct {
	// Durable: the high watermark counts only fsynced records, on the
	// leader and on every follower (durable mode). Default false.
	Durable bool
	// ProposeISR is called when the leader wants the ISR changed (a
	// follower fell behind for State.LagTime, or caught up): the broker
	// sends it as an AlterPartition at partitionEpoch and answers with
	// ISRCommitted or AlterPartitionFailed. It runs outside the
	// partition's locks, on the goroutine of the FollowerFetch or Tick
	// that decided it, and must not block for long. Default nil: the
	// proposal stays in flight forever (a single node never makes one).
	ProposeISR func(tp model.TopicPartition, leaderEpoch, partitionEpoch int32, isr []int32)
	// HighWatermark is the high watermark the broker last checkpointed for
	// the partition (Kafka's replication-offset-checkpoint): committed then,
	// so the replica starts there rather than at its log start, as far as
	// its log goes. Zero: the log start.
	HighWatermark int64
}

// NewReplica wraps an open log as a replica whose role the metadata has
// not given yet: it serves reads below a high watermark known to be
// committed (the checkpointed one, Options.HighWatermark, within the log;
// else the log start), and takes no appends until Apply.
func NewReplica(tp model.TopicPartition, id model.TopicID, log *storage.Log, opts Options) *Partition {
	p := &Partition{TP: tp, TopicID: id, durable: opts.Durable, proposeISR: opts.ProposeISR}
	p.logPtr.Store(log)
	p.mu.self, p.mu.leader, p.mu.leaderEpoch, p.mu.partitionEpoch = -1, NoLeader, -1, -1
	p.mu.leaderHW = -1
	p.mu.waiters = map[*Waiter]struct{}{}
	hw := log.LogStartOffset()
	if opts.HighWatermark > hw {
		hw = min(opts.HighWatermark, log.LogEndOffset())
	}
	p.highWatermark.Store(hw)
	return p
}

// NewPartition wraps an open log as the sole replica and leader of its
// partition (a single node): its ISR is itself, so its high watermark is
// the log end (durable mode: the fsynced end) from the start.
func NewPartition(tp model.TopicPartition, id model.TopicID, log *storage.Log, leader, leaderEpoch int32, durable bool) *Partition {
	p := NewReplica(tp, id, log, Options{Durable: durable})
	self := []int32{leader}
	p.Apply(State{Leader: leader, LeaderEpoch: leaderEpoch, Replicas: self, ISR: self, Self: leader}, clock.Real.Now())
	return p
}

// State is a partition's replication state in the metadata image, as this
// broker sees it.
type State struct {
	Leader         int32 // NoLeader when none
	LeaderEpoch    int32
	PartitionEpoch int32
	Replicas       []int32
	ISR            []int32
	Self           int32         // this broker's node ID
	LagTime        time.Duration // replica.lag.time.max.ms; 0 is Kafka's default, DefaultLagTime
}

// DefaultLagTime is Kafka's replica.lag.time.max.ms default.
const DefaultLagTime = 30 * time.Second

// Transition is what Apply changed, for the broker to start or stop
// fetchers and load or unload coordinators.
type Transition int

const (
	// Unchanged: the same leader and epoch (a stale or repeated image, or
	// one changing only the ISR, replicas or partition epoch).
	Unchanged Transition = iota
	// BecameLeader: this replica leads a new leader epoch (whether or not
	// it led the one before): stop its fetcher.
	BecameLeader
	// BecameFollower: this replica follows, and before it led or had no
	// role: start a fetcher from State.Leader (none while NoLeader).
	BecameFollower
	// LeaderChanged: still a follower, of a new leader or leader epoch:
	// point its fetcher at the new one (stop it for NoLeader).
	LeaderChanged
)

func (t Transition) String() string {
	return [...]string{"unchanged", "became leader", "became follower", "leader changed"}[t]
}

// Apply brings the replica to the metadata's state of its partition, each
// time the image changes. A leader epoch older than the one applied is
// stale and ignored. A new leader epoch, or the first state, makes this
// replica leader or follower. A leader starts a LeaderState at its log end
// (durable mode: its fsynced end), keeping its high watermark; its epoch
// enters the log's epoch cache with its first append. A follower drops any
// leader state and remembers the leader and epoch for FetchState. Within
// an epoch, a newer partition epoch is the controller's commit of an ISR
// (or replica) change. Every change wakes every waiter, so acks=all
// produces see a lost leadership or a shrunk ISR.
func (p *Partition) Apply(st State, now time.Time) Transition {
	p.roleMu.Lock()
	defer p.roleMu.Unlock()
	p.mu.Lock()
	defer p.mu.Unlock()
	m := &p.mu
	if m.offline || m.known && st.LeaderEpoch < m.leaderEpoch {
		return Unchanged
	}
	if st.LagTime <= 0 {
		st.LagTime = DefaultLagTime
	}
	m.self, m.lagTime = st.Self, st.LagTime
	if m.known && st.LeaderEpoch == m.leaderEpoch && st.Leader == m.leader {
		p.updateLocked(st)
		return Unchanged
	}
	wasKnown, wasLeader := m.known, m.leaderState != nil
	m.known, m.leader, m.leaderEpoch, m.partitionEpoch = true, st.Leader, st.LeaderEpoch, st.PartitionEpoch
	m.replicas, m.isr = sortedClone(st.Replicas), sortedClone(st.ISR)
	m.leaderState, m.leaderHW = nil, -1
	p.notifyLocked()
	switch {
	case st.Leader != NoLeader && st.Leader == st.Self:
		p.becomeLeaderLocked(now)
		return BecameLeader
	case wasLeader || !wasKnown:
		return BecameFollower
	}
	return LeaderChanged
}

// Stop ends this replica's role for good: the metadata no longer places it
// on this broker (a reassignment moved it away, or its topic was deleted),
// so no later state will say it lost its leadership. It leads no more:
// every acks=all produce waiting on it is answered NOT_LEADER_OR_FOLLOWER
// at once, as Kafka's broker completes its delayed produces when it stops
// a replica, and the client finds the new leader. Without this a waiter
// would wait out the produce timeout while its producer's pipeline to the
// partition stands still. Appends are refused from now on.
func (p *Partition) Stop() {
	p.roleMu.Lock()
	defer p.roleMu.Unlock()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mu.leaderState, p.mu.leaderHW, p.mu.leader = nil, -1, NoLeader
	p.notifyLocked()
}

// updateLocked applies a state of the current leadership: a newer
// partition epoch carries the committed ISR and replicas.
func (p *Partition) updateLocked(st State) {
	m := &p.mu
	ls := m.leaderState
	if ls != nil {
		ls.SetLagTime(st.LagTime)
	}
	if st.PartitionEpoch <= m.partitionEpoch {
		return
	}
	m.partitionEpoch = st.PartitionEpoch
	m.replicas, m.isr = sortedClone(st.Replicas), sortedClone(st.ISR)
	if ls != nil {
		ls.SetReplicas(m.replicas)
		p.leaderEffectsLocked(ls.ISRCommitted(m.isr, st.PartitionEpoch))
	}
	p.notifyLocked() // acks=all waiters check min.insync.replicas again
}

// becomeLeaderLocked starts this replica's leadership of the epoch just
// applied.
func (p *Partition) becomeLeaderLocked(now time.Time) {
	m := &p.mu
	// The new epoch starts at the log end, in the log's epoch cache, as
	// Kafka's makeLeader assigns it: a follower's fetch is checked against
	// the leader's epochs, and a leader of an empty log would have none,
	// so a follower that led an earlier epoch (with an entry for it and no
	// records) would be told it diverges on every fetch, and never rejoin
	// the ISR. A failed write fails the log, which every later append then
	// reports (KAFKA_STORAGE_ERROR).
	_ = p.log().AssignEpoch(m.leaderEpoch)
	end := p.log().LogEndOffset()
	l := Leadership{Leader: m.self, LeaderEpoch: m.leaderEpoch, PartitionEpoch: m.partitionEpoch, Replicas: m.replicas, ISR: m.isr}
	ls := NewLeaderState(m.self, l, p.leaderEnd(), p.HighWatermark(), m.lagTime, now)
	// A follower joins the ISR once it holds the whole log this leader
	// began with, fsynced or not: records past the durable end were
	// written in earlier epochs and may have been committed then.
	ls.epochStartOffset = end
	m.leaderState = ls
	p.setHighWatermarkLocked(ls.HighWatermark())
}

// leaderEnd is the log end the leader's high watermark may reach: the log
// end, or in durable mode the fsynced end.
func (p *Partition) leaderEnd() int64 {
	if p.durable {
		return p.log().Offsets().RecoveryPoint
	}
	return p.log().LogEndOffset()
}

func sortedClone(ids []int32) []int32 {
	out := slices.Clone(ids)
	slices.Sort(out)
	return out
}

// HighWatermark is the offset below which records are committed (readable
// by consumers).
func (p *Partition) HighWatermark() int64 { return p.highWatermark.Load() }

// setHighWatermarkLocked moves the watermark forward (never back) and
// wakes every waiter.
func (p *Partition) setHighWatermarkLocked(hw int64) {
	if hw <= p.highWatermark.Load() {
		return
	}
	p.highWatermark.Store(hw)
	p.notifyLocked()
}

func (p *Partition) notifyLocked() {
	for w := range p.mu.waiters {
		w.notify()
	}
}

// notifyAppendLocked wakes the append waiters: the log end moved.
func (p *Partition) notifyAppendLocked() {
	for w := range p.mu.waiters {
		if w.appends {
			w.notify()
		}
	}
}

// LeaderEpoch is the current leader epoch (-1 before any role).
func (p *Partition) LeaderEpoch() int32 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mu.leaderEpoch
}

// Leader is the current leader's node ID (NoLeader when none is known).
func (p *Partition) Leader() int32 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mu.leader
}

// IsLeader reports whether this replica leads the partition.
func (p *Partition) IsLeader() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mu.leaderState != nil
}

// SetLeader applies a leadership from the metadata image with the
// partition epoch unchanged, this broker being the node the replica was
// made for.
//
// Deprecated: the single node's path until the broker calls Apply.
func (p *Partition) SetLeader(leader, epoch int32, isr []int32) {
	p.mu.Lock()
	st := State{Leader: leader, LeaderEpoch: epoch, PartitionEpoch: p.mu.partitionEpoch,
		Replicas: isr, ISR: isr, Self: p.mu.self, LagTime: p.mu.lagTime}
	p.mu.Unlock()
	p.Apply(st, clock.Real.Now())
}

// Append appends batches as leader and advances the high watermark as far
// as the ISR allows: at once for a leader alone in its ISR, as the
// followers fetch otherwise. In durable mode the append first waits for
// the group commit to cover the batches, and only fsynced records count,
// so acks=all (and consumers) see only durable data. A replica that does
// not lead is ErrNotLeader. The broker checks ISRSize against
// min.insync.replicas before an acks=all append, and then WaitCommitted.
func (p *Partition) Append(batches []byte) (storage.AppendResult, error) {
	return p.appendAsLeader(batches, (*storage.Log).AppendAsLeader)
}

// AppendMirror appends a mirror topic's batches as leader at the offsets
// they carry (storage.Log.AppendMirror: batches the log holds are skipped,
// an empty log restarts at the first base, a gap is kept), stamped with the
// leader's epoch, and advances the high watermark as Append does; the
// followers then fetch them as any other batch.
func (p *Partition) AppendMirror(batches []byte) (storage.AppendResult, error) {
	return p.appendAsLeader(batches, (*storage.Log).AppendMirror)
}

func (p *Partition) appendAsLeader(batches []byte, appendFn func(*storage.Log, []byte, int32) (storage.AppendResult, error)) (storage.AppendResult, error) {
	p.roleMu.RLock()
	defer p.roleMu.RUnlock()
	p.mu.Lock()
	ls, epoch, offline := p.mu.leaderState, p.mu.leaderEpoch, p.mu.offline
	p.mu.Unlock()
	if offline {
		return storage.AppendResult{}, p.offlineError()
	}
	if ls == nil {
		return storage.AppendResult{}, fmt.Errorf("%w: %s append", ErrNotLeader, p.TP)
	}
	res, err := appendFn(p.log(), batches, epoch)
	if err != nil {
		return res, err
	}
	end := res.LastOffset + 1
	if p.durable {
		if err := p.log().Sync(end); err != nil {
			return res, err
		}
		end = p.log().Offsets().RecoveryPoint
	}
	p.mu.Lock()
	// roleMu keeps ls the leader's state throughout.
	if start := res.LogStartOffset; start > ls.HighWatermark() {
		p.leaderEffectsLocked(ls.LogStarted(start))
	}
	p.leaderEffectsLocked(ls.Appended(end))
	p.notifyAppendLocked()
	p.mu.Unlock()
	return res, nil
}

// leaderEffectsLocked carries out what the leader's state machine asked:
// the high watermark it moved, and an ISR proposal, returned for the
// caller to send once it holds no lock.
func (p *Partition) leaderEffectsLocked(eff LeaderEffects) *isrProposal {
	ls := p.mu.leaderState
	if eff.HighWatermarkMoved {
		p.setHighWatermarkLocked(ls.HighWatermark())
	}
	if eff.ProposeISR == nil {
		return nil
	}
	return &isrProposal{leaderEpoch: ls.LeaderEpoch(), partitionEpoch: ls.PartitionEpoch(), isr: eff.ProposeISR}
}

type isrProposal struct {
	leaderEpoch, partitionEpoch int32
	isr                         []int32
}

// propose hands a proposal to the broker; call it with no lock held.
func (p *Partition) propose(pr *isrProposal) {
	if pr != nil && p.proposeISR != nil {
		p.proposeISR(p.TP, pr.leaderEpoch, pr.partitionEpoch, pr.isr)
	}
}

// WaitCommitted waits, for an acks=all produce, until the high watermark
// passes offset (the produce's last offset) and returns nil. It returns
// ErrNotLeader if this replica stops leading the epoch it led when the
// wait began, ErrNotEnoughReplicasAfterAppend if the committed ISR is
// smaller than minISR (then or meanwhile, as Kafka answers), and ctx's
// error when ctx ends first (the produce timeout: REQUEST_TIMED_OUT).
func (p *Partition) WaitCommitted(ctx context.Context, offset int64, minISR int) error {
	p.mu.Lock()
	epoch := p.mu.leaderEpoch
	p.mu.Unlock()
	if done, err := p.committed(epoch, offset, minISR); done {
		return err // already decided: no waiter
	}
	w := NewWaiter([]*Partition{p}) // before the next check: no wake-up is lost
	defer w.Done()
	for {
		if done, err := p.committed(epoch, offset, minISR); done {
			return err
		}
		select {
		case <-w.C():
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Committed is WaitCommitted's answer now, without waiting: done reports
// whether it is decided (committed, or an error), so a caller that finds
// every batch decided needs no timer and no waiter.
func (p *Partition) Committed(offset int64, minISR int) (done bool, err error) {
	p.mu.Lock()
	epoch := p.mu.leaderEpoch
	p.mu.Unlock()
	return p.committed(epoch, offset, minISR)
}

// committed checks one wake-up of WaitCommitted.
func (p *Partition) committed(epoch int32, offset int64, minISR int) (bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.mu.leaderState == nil || p.mu.leaderEpoch != epoch:
		return true, fmt.Errorf("%w: %s lost its leadership of epoch %d", ErrNotLeader, p.TP, epoch)
	case len(p.mu.isr) < minISR:
		return true, fmt.Errorf("%w: %s has %d in-sync replicas, min.insync.replicas is %d",
			ErrNotEnoughReplicasAfterAppend, p.TP, len(p.mu.isr), minISR)
	case p.HighWatermark() > offset:
		return true, nil
	}
	return false, nil
}

// ISRSize is the number of replicas in the committed ISR, for
// min.insync.replicas.
func (p *Partition) ISRSize() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.mu.isr)
}

// ISR is the committed in-sync replica set, sorted.
func (p *Partition) ISR() []int32 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.mu.isr)
}

// InISR reports whether replica is in the committed ISR. A leader asks it
// of the follower whose fetch it answers: the replication throttle never
// holds back an ISR member (Kafka's shouldLeaderThrottle).
func (p *Partition) InISR(replica int32) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Contains(p.mu.isr, replica)
}

// Read reads committed data from offset (records below the high
// watermark), Kafka's consumer view, on a leader or a follower.
func (p *Partition) Read(offset int64, maxBytes int32, minOneBatch bool) (storage.ReadResult, int64, error) {
	return p.readUpTo(offset, maxBytes, minOneBatch, (*Partition).HighWatermark)
}

// LastStableOffset is the high watermark, or the first offset of the
// oldest open transaction if that is lower: read_committed consumers read
// below it.
func (p *Partition) LastStableOffset() int64 {
	hw := p.HighWatermark()
	if fu := p.log().FirstUnstableOffset(); fu >= 0 && fu < hw {
		return fu
	}
	return hw
}

// ReadCommitted reads up to the last stable offset (read_committed) and
// returns it.
func (p *Partition) ReadCommitted(offset int64, maxBytes int32, minOneBatch bool) (storage.ReadResult, int64, error) {
	return p.readUpTo(offset, maxBytes, minOneBatch, (*Partition).LastStableOffset)
}

// readUpTo reads below the limit it takes from the partition. As in
// Kafka, only an offset outside the log is out of range: one between the
// limit and the log end (written, not yet committed) reads nothing yet.
//
// It holds roleMu shared, so no follower truncation runs during the read:
// the log's read scans the batch headers up to the one holding the limit,
// which may lie past a truncation point, and would find the file cut
// under it. What it returns lies below the high watermark, which a
// truncation does not cut after a clean election.
func (p *Partition) readUpTo(offset int64, maxBytes int32, minOneBatch bool, limitOf func(*Partition) int64) (storage.ReadResult, int64, error) {
	p.roleMu.RLock()
	defer p.roleMu.RUnlock()
	if err := p.checkOnline(); err != nil {
		return storage.ReadResult{}, -1, err
	}
	limit := limitOf(p)
	if start, end := p.log().LogStartOffset(), p.log().LogEndOffset(); offset < start || offset > end {
		return storage.ReadResult{}, limit, fmt.Errorf("%w: %d not in [%d, %d]", storage.ErrOffsetOutOfRange, offset, start, end)
	}
	if offset >= limit {
		return storage.ReadResult{}, limit, nil
	}
	rr, err := p.log().Read(offset, maxBytes, limit, minOneBatch)
	return rr, limit, err
}

// Waiter is a fetch waiting for data on any of several partitions: it
// registers with each, and any high-watermark advance (or change of role
// or ISR) wakes it; an append waiter is woken by the leader's appends too.
type Waiter struct {
	ch      chan struct{}
	parts   []*Partition
	appends bool
}

// NewWaiter registers a waiter with the given partitions, for a consumer's
// fetch, which reads below the high watermark. Call Done when finished
// waiting.
func NewWaiter(parts []*Partition) *Waiter { return newWaiter(parts, false) }

// NewAppendWaiter is NewWaiter for a follower's fetch, which copies past
// the high watermark: a leader's append wakes it, since with followers in
// the ISR the append alone does not move the high watermark (the followers'
// next fetch does).
func NewAppendWaiter(parts []*Partition) *Waiter { return newWaiter(parts, true) }

func newWaiter(parts []*Partition, appends bool) *Waiter {
	w := &Waiter{ch: make(chan struct{}, 1), parts: parts, appends: appends}
	for _, p := range parts {
		p.mu.Lock()
		p.mu.waiters[w] = struct{}{}
		p.mu.Unlock()
	}
	return w
}

func (w *Waiter) notify() {
	select {
	case w.ch <- struct{}{}:
	default:
	}
}

// Wait blocks until a registered partition's high watermark moves or ctx
// is done; it reports false for the latter.
func (w *Waiter) Wait(ctx context.Context) bool {
	select {
	case <-w.ch:
		return true
	case <-ctx.Done():
		return false
	}
}

// C is the wake-up channel, for callers that select on more.
func (w *Waiter) C() <-chan struct{} { return w.ch }

// Done unregisters the waiter.
func (w *Waiter) Done() {
	for _, p := range w.parts {
		p.mu.Lock()
		delete(p.mu.waiters, w)
		p.mu.Unlock()
	}
}

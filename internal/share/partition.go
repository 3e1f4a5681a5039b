package share

import (
	"math"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// AckType is Kafka's acknowledge type (ShareFetch/ShareAcknowledge
// AcknowledgeTypes).
type AckType int8

const (
	AckGap     AckType = 0 // an offset with no record (compacted away): archived
	AckAccept  AckType = 1
	AckRelease AckType = 2
	AckReject  AckType = 3
	AckRenew   AckType = 4 // KIP-1222 (ShareFetch/ShareAcknowledge v2): extend the lock, state unchanged
)

// RecordState is Kafka's delivery state as __share_group_state stores it.
type RecordState int8

const (
	Available    RecordState = 0
	Acquired     RecordState = 1
	Acknowledged RecordState = 2
	Archived     RecordState = 4
)

func (s RecordState) terminal() bool { return s == Acknowledged || s == Archived }

func (s RecordState) String() string {
	switch s {
	case Available:
		return "available"
	case Acquired:
		return "acquired"
	case Acknowledged:
		return "acknowledged"
	case Archived:
		return "archived"
	}
	return "state(" + itoa(int64(s)) + ")"
}

// Config is a share group's per-partition settings, in Kafka's names.
type Config struct {
	LockDuration       time.Duration // group.share.record.lock.duration.ms (Kafka default 30s)
	DeliveryCountLimit int16         // group.share.delivery.count.limit (Kafka default 5)
	// MaxInFlight is group.share.partition.max.record.locks (Kafka 4.2
	// default 2000): at most this many offsets between StartOffset and
	// EndOffset; Acquire takes no new offsets past it.
	MaxInFlight int64
}

// StateBatch is one run of offsets with the same state and delivery count
// (Kafka's StateBatch).
type StateBatch struct {
	FirstOffset, LastOffset int64
	DeliveryState           RecordState // Available, Acknowledged or Archived (never Acquired when persisted)
	DeliveryCount           int16
}

// State is what persists (Kafka's ShareSnapshotValue, minus the epochs the
// coordinator owns).
type State struct {
	StateEpoch  int32
	LeaderEpoch int32
	StartOffset int64
	Batches     []StateBatch // sorted, non-overlapping, all >= StartOffset
}

// LogBatch is one record batch the broker read from the log, as Acquire
// sees it.
type LogBatch struct {
	FirstOffset, LastOffset int64 // the batch's base offset and last offset
	// Skip: the whole batch is never delivered (a control batch, or a batch
	// of an aborted transaction under read_committed): its offsets go
	// straight to Archived without counting a delivery.
	Skip bool
}

// AcquiredRange is Kafka's AcquiredRecords entry in a ShareFetch response.
type AcquiredRange struct {
	FirstOffset, LastOffset int64
	DeliveryCount           int16
}

// AckRange is one AcknowledgementBatch: Types has one entry (applies to
// every offset) or one per offset.
type AckRange struct {
	FirstOffset, LastOffset int64
	Types                   []AckType
}

// Stats counts the in-flight offsets ([StartOffset, EndOffset)) by state,
// for `samsa group` and DescribeShareGroupOffsets.
type Stats struct{ Available, Acquired, Acknowledged, Archived int64 }

var (
	// ErrInvalidRecordState is Kafka's INVALID_RECORD_STATE: an
	// acknowledgement of an offset that is not acquired by this member
	// under a live lock.
	ErrInvalidRecordState = kerr.InvalidRecordState
	// ErrInvalidRequest is Kafka's INVALID_REQUEST: an acknowledgement
	// range that is malformed (first > last, a Types list of the wrong
	// length, an unknown type), as Kafka's ShareFetch validation answers.
	ErrInvalidRequest = kerr.InvalidRequest
)

// run is a stretch of in-flight offsets in one state. Runs tile
// [StartOffset, EndOffset) with no holes, ascending; neighbours that agree
// on every field are merged, so a batch acquired, then accepted, whole stays
// one run however many offsets it has.
type run struct {
	first, last int64
	state       RecordState
	count       int16
	member      string // the holder while Acquired
	deadline    int64  // lock expiry (Unix nanoseconds) while Acquired
}

func (r *run) sameAs(o *run) bool {
	return r.state == o.state && r.count == o.count && r.member == o.member && r.deadline == o.deadline
}

// Partition is one share-partition's in-flight state: which offsets past the
// share-partition start offset are available, acquired (by whom, until when),
// acknowledged or archived, and how often each was delivered. Not safe for
// concurrent use.
type Partition struct {
	cfg   Config
	start int64 // StartOffset: every offset below is delivered or forgotten
	end   int64 // EndOffset: one past the last in-flight offset
	runs  []run // tile [start, end)

	stateEpoch, leaderEpoch int32
}

// New makes a share-partition from persisted state (State{StartOffset: x}
// for a fresh one). Offsets between the state's batches (a state Samsa
// itself never writes, as its snapshots tile the range) are taken as
// Available and never delivered; an Acquired batch is taken as Available.
func New(cfg Config, st State) *Partition {
	p := &Partition{cfg: cfg, start: st.StartOffset, end: st.StartOffset,
		stateEpoch: st.StateEpoch, leaderEpoch: st.LeaderEpoch}
	batches := append([]StateBatch(nil), st.Batches...)
	sort.SliceStable(batches, func(i, j int) bool { return batches[i].FirstOffset < batches[j].FirstOffset })
	for _, b := range batches {
		first := max(b.FirstOffset, p.end)
		if first > b.LastOffset {
			continue // below the start offset, or overlapping the previous batch
		}
		if first > p.end {
			p.appendRun(run{first: p.end, last: first - 1, state: Available})
		}
		state := b.DeliveryState
		if !state.terminal() {
			state = Available
		}
		p.appendRun(run{first: first, last: b.LastOffset, state: state, count: b.DeliveryCount})
		p.end = b.LastOffset + 1
	}
	p.advanceStart()
	return p
}

// SetConfig applies changed group configs; they count from the next
// operation (locks already granted keep their deadlines).
func (p *Partition) SetConfig(cfg Config) { p.cfg = cfg }

// Config returns the settings in force.
func (p *Partition) Config() Config { return p.cfg }

// StartOffset is the share-partition start offset (SPSO).
func (p *Partition) StartOffset() int64 { return p.start }

// EndOffset is one past the last offset ever acquired or recovered (>=
// StartOffset). Kafka's SharePartition keeps the last offset itself
// (inclusive); this is that plus one.
func (p *Partition) EndOffset() int64 { return p.end }

// NextFetchOffset is where the broker reads the log from: the first
// Available in-flight offset, else EndOffset.
func (p *Partition) NextFetchOffset() int64 {
	for i := range p.runs {
		if p.runs[i].state == Available {
			return p.runs[i].first
		}
	}
	return p.end
}

// CanAcquire reports whether Acquire could take anything: an Available
// in-flight offset, or room under MaxInFlight for new ones.
func (p *Partition) CanAcquire() bool {
	return p.NextFetchOffset() < p.end || p.end-p.start < p.cfg.MaxInFlight
}

// Acquire takes for member the Available offsets among batches. Offsets
// below StartOffset, and batches (or parts) at or below an offset already
// seen in this call, are ignored. In-flight Available offsets are
// re-acquired with DeliveryCount+1 (or archived, if their count already
// reached the limit, which only a lowered limit allows); offsets past
// EndOffset are acquired with DeliveryCount 1 and move EndOffset. Offsets
// past EndOffset that no batch covers (compacted away between batches) are
// archived without a delivery, as are Skip batches. Acquisition stops
// exactly at maxRecords offsets (it splits a batch rather than exceed it, a
// stricter bound than Kafka's whole-batch rule) and takes no new offset at
// or past StartOffset+MaxInFlight, StartOffset as it was at the call. Locks
// expire at now+LockDuration. Returns the acquired ranges, ascending,
// coalesced where neighbours share a delivery count.
func (p *Partition) Acquire(member string, batches []LogBatch, maxRecords int, now time.Time) []AcquiredRange {
	if maxRecords <= 0 {
		return nil
	}
	limit := p.start + p.cfg.MaxInFlight
	if limit < p.start { // saturate a huge MaxInFlight
		limit = math.MaxInt64
	}
	a := acquisition{p: p, member: member, left: int64(maxRecords),
		deadline: now.Add(p.cfg.LockDuration).UnixNano(), limit: limit}
	cursor := p.start
	for _, b := range batches {
		lo := max(b.FirstOffset, cursor)
		if lo > b.LastOffset {
			continue
		}
		cursor = b.LastOffset + 1
		if lo < p.end && !a.inFlight(lo, min(b.LastOffset, p.end-1), b.Skip) {
			break
		}
		if b.LastOffset >= p.end && !a.fresh(max(lo, p.end), b.LastOffset, b.Skip) {
			break
		}
	}
	p.coalesce()
	p.advanceStart()
	return a.out
}

// acquisition is one Acquire call's progress.
type acquisition struct {
	p        *Partition
	member   string
	left     int64 // offsets still allowed by maxRecords
	deadline int64
	limit    int64 // no new offset at or past this
	out      []AcquiredRange
}

// inFlight acquires the Available offsets of [lo, hi], all in flight. It
// reports false once maxRecords is used up.
func (a *acquisition) inFlight(lo, hi int64, skip bool) bool {
	p := a.p
	for i := p.find(lo); i < len(p.runs) && p.runs[i].first <= hi; i++ {
		r := &p.runs[i]
		if r.state != Available {
			continue
		}
		if a.left == 0 {
			return false
		}
		from, to := max(r.first, lo), min(r.last, hi)
		if !skip && r.count < p.cfg.DeliveryCountLimit {
			to = min(to, from+a.left-1)
		}
		i = p.isolate(i, from, to)
		r = &p.runs[i]
		switch {
		case skip:
			r.state = Archived
		case r.count >= p.cfg.DeliveryCountLimit:
			r.state = Archived
		default:
			r.state, r.count, r.member, r.deadline = Acquired, r.count+1, a.member, a.deadline
			a.left -= to - from + 1
			a.emit(from, to, r.count)
		}
	}
	return true
}

// fresh takes [lo, hi], all at or past EndOffset, archiving the hole between
// EndOffset and lo. It reports false once a limit stopped it.
func (a *acquisition) fresh(lo, hi int64, skip bool) bool {
	p := a.p
	if a.left == 0 || lo >= a.limit {
		return false
	}
	stopped := false
	if hi >= a.limit {
		hi, stopped = a.limit-1, true
	}
	if !skip && hi-lo+1 > a.left {
		hi, stopped = lo+a.left-1, true
	}
	if lo > p.end {
		p.appendRun(run{first: p.end, last: lo - 1, state: Archived})
	}
	if skip {
		p.appendRun(run{first: lo, last: hi, state: Archived})
	} else {
		p.appendRun(run{first: lo, last: hi, state: Acquired, count: 1, member: a.member, deadline: a.deadline})
		a.left -= hi - lo + 1
		a.emit(lo, hi, 1)
	}
	p.end = hi + 1
	return !stopped
}

func (a *acquisition) emit(first, last int64, count int16) {
	if n := len(a.out); n > 0 && a.out[n-1].LastOffset+1 == first && a.out[n-1].DeliveryCount == count {
		a.out[n-1].LastOffset = last
		return
	}
	a.out = append(a.out, AcquiredRange{FirstOffset: first, LastOffset: last, DeliveryCount: count})
}

// Acknowledge applies member's acknowledgements. Each range is checked
// whole before any change: it must be well formed (else ErrInvalidRequest)
// and every offset must be Acquired by member with a lock unexpired at now
// (else ErrInvalidRecordState); a failed range changes nothing, and ranges
// are independent (applied in order). Accept -> Acknowledged; Release ->
// Available, or Archived once DeliveryCount >= DeliveryCountLimit; Reject ->
// Archived; Gap -> Archived; Renew -> lock extended to now+LockDuration.
// Then StartOffset moves over the leading terminal offsets. Returns one
// error per range (nil = applied) and whether any offset changed state
// (Renew alone changes none): the caller then writes a snapshot, which also
// records the delivery counts Acquire raised since the last write.
func (p *Partition) Acknowledge(member string, ranges []AckRange, now time.Time) (errs []error, changed bool) {
	errs = make([]error, len(ranges))
	nowNanos := now.UnixNano()
	for k, ar := range ranges {
		if err := p.checkAck(member, ar, nowNanos); err != nil {
			errs[k] = err
			continue
		}
		if len(ar.Types) == 1 {
			changed = p.applyAck(ar.FirstOffset, ar.LastOffset, ar.Types[0], nowNanos) || changed
			continue
		}
		for o := ar.FirstOffset; o <= ar.LastOffset; o++ {
			changed = p.applyAck(o, o, ar.Types[o-ar.FirstOffset], nowNanos) || changed
		}
	}
	p.coalesce()
	p.advanceStart()
	return errs, changed
}

func (p *Partition) checkAck(member string, ar AckRange, now int64) error {
	if ar.FirstOffset > ar.LastOffset || (len(ar.Types) != 1 && int64(len(ar.Types)) != ar.LastOffset-ar.FirstOffset+1) {
		return ErrInvalidRequest
	}
	for _, t := range ar.Types {
		if t < AckGap || t > AckRenew {
			return ErrInvalidRequest
		}
	}
	if ar.FirstOffset < p.start || ar.LastOffset >= p.end {
		return ErrInvalidRecordState
	}
	for i := p.find(ar.FirstOffset); i < len(p.runs) && p.runs[i].first <= ar.LastOffset; i++ {
		r := &p.runs[i]
		if r.state != Acquired || r.member != member || now >= r.deadline {
			return ErrInvalidRecordState
		}
	}
	return nil
}

// applyAck applies t to [lo, hi], every offset of it checked Acquired.
func (p *Partition) applyAck(lo, hi int64, t AckType, now int64) bool {
	for i := p.find(lo); i < len(p.runs) && p.runs[i].first <= hi; i++ {
		i = p.isolate(i, max(p.runs[i].first, lo), min(p.runs[i].last, hi))
		r := &p.runs[i]
		switch t {
		case AckAccept:
			r.state = Acknowledged
		case AckRelease:
			p.release(r)
		case AckReject, AckGap:
			r.state = Archived
		case AckRenew:
			r.deadline = now + int64(p.cfg.LockDuration)
		}
		if t != AckRenew {
			r.member, r.deadline = "", 0
		}
	}
	return t != AckRenew
}

// release makes an Acquired run Available again, or Archived once it was
// delivered DeliveryCountLimit times (Kafka's InFlightState.tryUpdateState).
func (p *Partition) release(r *run) {
	r.state, r.member, r.deadline = Available, "", 0
	if r.count >= p.cfg.DeliveryCountLimit {
		r.state = Archived
	}
}

// ReleaseMember releases every offset member holds (it left, or its share
// session closed), as Release. It reports whether any offset changed state.
func (p *Partition) ReleaseMember(member string) (changed bool) {
	return p.releaseWhere(func(r *run) bool { return r.member == member }) > 0
}

// ExpireLocks releases every offset whose lock expired by now (deadline <=
// now), as Release, and returns how many offsets it released.
func (p *Partition) ExpireLocks(now time.Time) (released int) {
	n := now.UnixNano()
	return int(p.releaseWhere(func(r *run) bool { return r.deadline <= n }))
}

func (p *Partition) releaseWhere(match func(*run) bool) int64 {
	var released int64
	for i := range p.runs {
		r := &p.runs[i]
		if r.state == Acquired && match(r) {
			released += r.last - r.first + 1
			p.release(r)
		}
	}
	if released > 0 {
		p.coalesce()
		p.advanceStart()
	}
	return released
}

// NextLockExpiry is the earliest lock deadline (zero time if no offset is
// acquired), so the broker can time its next ExpireLocks.
func (p *Partition) NextLockExpiry() time.Time {
	var earliest int64
	found := false
	for i := range p.runs {
		if r := &p.runs[i]; r.state == Acquired && (!found || r.deadline < earliest) {
			earliest, found = r.deadline, true
		}
	}
	if !found {
		return time.Time{}
	}
	return time.Unix(0, earliest)
}

// AdvanceStart moves StartOffset up to offset (the log start moved past it:
// retention, DeleteRecords): everything below is forgotten, locks included.
// An offset at or below StartOffset changes nothing.
func (p *Partition) AdvanceStart(offset int64) {
	if offset <= p.start {
		return
	}
	i := 0
	for i < len(p.runs) && p.runs[i].last < offset {
		i++
	}
	p.runs = append(p.runs[:0], p.runs[i:]...)
	if len(p.runs) > 0 && p.runs[0].first < offset {
		p.runs[0].first = offset
	}
	p.start = offset
	p.end = max(p.end, offset)
	p.advanceStart()
}

// Reset discards all in-flight state and starts at offset
// (AlterShareGroupOffsets; only on an empty group). It is the one way
// StartOffset moves back.
func (p *Partition) Reset(offset int64) {
	p.runs = p.runs[:0]
	p.start, p.end = offset, offset
}

// Snapshot is the state to persist: Acquired offsets are written as
// Available with their delivery count (after a failover they are delivered
// again), runs coalesced.
func (p *Partition) Snapshot() State {
	st := State{StateEpoch: p.stateEpoch, LeaderEpoch: p.leaderEpoch, StartOffset: p.start}
	for i := range p.runs {
		r := &p.runs[i]
		state := r.state
		if state == Acquired {
			state = Available
		}
		if n := len(st.Batches); n > 0 && st.Batches[n-1].DeliveryState == state && st.Batches[n-1].DeliveryCount == r.count {
			st.Batches[n-1].LastOffset = r.last
			continue
		}
		st.Batches = append(st.Batches, StateBatch{FirstOffset: r.first, LastOffset: r.last, DeliveryState: state, DeliveryCount: r.count})
	}
	return st
}

// Stats counts the in-flight offsets by state.
func (p *Partition) Stats() Stats {
	var s Stats
	for i := range p.runs {
		r := &p.runs[i]
		n := r.last - r.first + 1
		switch r.state {
		case Available:
			s.Available += n
		case Acquired:
			s.Acquired += n
		case Acknowledged:
			s.Acknowledged += n
		case Archived:
			s.Archived += n
		}
	}
	return s
}

// DeliveryCompleteCount is the number of offsets in [StartOffset,
// EndOffset) that are Acknowledged or Archived (KIP-1226, for lag).
func (p *Partition) DeliveryCompleteCount() int64 {
	s := p.Stats()
	return s.Acknowledged + s.Archived
}

// find returns the index of the run holding offset o (len(runs) if o is at
// or past EndOffset).
func (p *Partition) find(o int64) int {
	return sort.Search(len(p.runs), func(i int) bool { return p.runs[i].last >= o })
}

// isolate splits run i so that [from, to], within it, is a run of its own,
// and returns that run's index.
func (p *Partition) isolate(i int, from, to int64) int {
	r := p.runs[i]
	if r.first < from {
		left, right := r, r
		left.last, right.first = from-1, from
		p.runs[i] = left
		p.runs = append(p.runs, run{})
		copy(p.runs[i+2:], p.runs[i+1:])
		p.runs[i+1] = right
		i++
		r = right
	}
	if r.last > to {
		left, right := r, r
		left.last, right.first = to, to+1
		p.runs[i] = left
		p.runs = append(p.runs, run{})
		copy(p.runs[i+2:], p.runs[i+1:])
		p.runs[i+1] = right
	}
	return i
}

// appendRun adds r at EndOffset's side, merging it into the last run when
// they agree.
func (p *Partition) appendRun(r run) {
	if n := len(p.runs); n > 0 && p.runs[n-1].sameAs(&r) && p.runs[n-1].last+1 == r.first {
		p.runs[n-1].last = r.last
		return
	}
	p.runs = append(p.runs, r)
}

// coalesce merges neighbouring runs that agree on every field.
func (p *Partition) coalesce() {
	if len(p.runs) < 2 {
		return
	}
	out := p.runs[:1]
	for _, r := range p.runs[1:] {
		if last := &out[len(out)-1]; last.sameAs(&r) {
			last.last = r.last
			continue
		}
		out = append(out, r)
	}
	clear(p.runs[len(out):])
	p.runs = out
}

// advanceStart moves StartOffset over the leading terminal runs: an offset
// is done with once it is Acknowledged or Archived, and Kafka's start offset
// is the first offset that may still be delivered.
func (p *Partition) advanceStart() {
	i := 0
	for i < len(p.runs) && p.runs[i].state.terminal() {
		i++
	}
	if i == 0 {
		return
	}
	if i == len(p.runs) {
		p.start = p.end
	} else {
		p.start = p.runs[i].first
	}
	n := copy(p.runs, p.runs[i:])
	clear(p.runs[n:])
	p.runs = p.runs[:n]
}

func itoa(n int64) string {
	if n == 0 {
		return "0"
	}
	neg := n < 0
	if neg {
		n = -n
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}

package quota

import (
	"math"
	"sync"
	"time"
)

// Replication is one side of the replication throttle, the leader's or
// the follower's (Kafka's ReplicationQuotaManager): a broker-wide byte rate
// (leader.replication.throttled.rate, follower.replication.throttled.rate)
// over the record bytes of the partitions the topics' throttled-replica
// lists name for this broker.
//
// The rate is Kafka's SimpleRate over replication.quota.window.num windows
// of replication.quota.window.size.seconds: divided by the time since the
// oldest kept window began, at least one window. Not padded to Samples-1
// windows as a client quota's is (rate.windowMs): a throttle that let a
// reassignment start with ten seconds' worth at once would not hold.
//
// Kafka asks "is the quota exceeded?" before a read and takes the whole
// read (up to replica.fetch.max.bytes) when it is not. Samsa asks how much
// is left (Allowance) and caps the read at that, so the rate overshoots by
// at most one batch, not one fetch of every throttled partition: at
// 512 KiB/s, one 1 MiB read past the throttle in each 11 s span is a
// fifth over it. And
// one window may hold at most one window's worth of the throttle: after a
// quiet spell Kafka lets the unused quota of the windows before go at
// once (up to 11 seconds' worth), where Samsa keeps the pace.
type Replication struct {
	cfg Config
	mu  sync.Mutex
	r   rate
	// limit is the throttle in bytes per second; math.MaxInt64 (Kafka's
	// default) is none.
	limit int64
	// reserved is what budgets in flight have granted and not yet
	// finished (Budget.Finish).
	reserved int64
}

// Unlimited is the rate of a side with no throttle set, Kafka's default
// for the two configs (Long.MAX_VALUE).
const Unlimited = math.MaxInt64

// NewReplication returns an unthrottled side measuring over cfg's windows.
func NewReplication(cfg Config) *Replication {
	return &Replication{cfg: cfg, limit: Unlimited}
}

// SetLimit sets the throttle in bytes per second (Unlimited: none). What
// was measured so far stays, as Kafka's sensor keeps its samples when its
// quota changes.
func (q *Replication) SetLimit(bytesPerSecond int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.limit = max(bytesPerSecond, 0)
}

// Limit is the throttle in bytes per second, Unlimited when none.
func (q *Replication) Limit() int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.limit
}

// Record counts n bytes of throttled partitions replicated at now, whether
// or not the replica they went to was throttled: as in Kafka, in-sync
// replicas' traffic counts too, so that the total a broker replicates for
// the listed partitions stays within the throttle.
func (q *Replication) Record(n int64, now time.Time) {
	if n <= 0 {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.r.record(q.cfg, float64(n), now.UnixMilli())
}

// Rate is the measured byte rate per second at now: Kafka's byte-rate
// metric of the LeaderReplication or FollowerReplication group.
func (q *Replication) Rate(now time.Time) float64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	ms := now.UnixMilli()
	return q.r.sum(q.cfg, ms) / (float64(q.r.simpleWindowMs(q.cfg, ms)) / 1000)
}

// Allowance is how many more bytes may be replicated at now before the
// measured rate passes the throttle: Unlimited without one; zero or less
// means the throttle is reached (Kafka's isQuotaExceeded, but for the
// equality, which Kafka lets through and where nothing is left).
func (q *Replication) Allowance(now time.Time) int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.allowanceLocked(now.UnixMilli())
}

func (q *Replication) allowanceLocked(ms int64) int64 {
	if q.limit == Unlimited {
		return Unlimited
	}
	w := q.r.simpleWindowMs(q.cfg, ms)
	overall := float64(q.limit)*float64(w)/1000 - q.r.sum(q.cfg, ms)
	window := float64(q.limit)*float64(q.cfg.windowMs())/1000 - q.r.open(q.cfg, ms)
	return int64(math.Floor(min(overall, window)))
}

// Reopens is how long after now the allowance turns positive again if
// nothing more is recorded meanwhile: 0 when it is positive now, at least
// a millisecond otherwise, and at most one window (the throttle may be
// raised, or the windows move, meanwhile: the caller looks again).
func (q *Replication) Reopens(now time.Time) time.Duration {
	q.mu.Lock()
	defer q.mu.Unlock()
	ms := now.UnixMilli()
	if a := q.allowanceLocked(ms); a > q.reserved {
		return 0
	} else if a > 0 {
		// Fetches in flight hold what is left: they finish within a
		// fetch's time, recording what they brought.
		return min(reservedWait, q.cfg.Window)
	}
	if q.limit == 0 {
		return q.cfg.Window
	}
	// The overall allowance is limit × the measured time - the sum, and
	// the measured time stretches with the clock once past one window: it
	// reopens when limit × (elapsed + d) passes the sum by a byte. A full
	// window reopens when the next one may begin.
	elapsed := ms - q.r.oldestValued(q.cfg, ms)
	need := (q.r.sum(q.cfg, ms) + 1) * 1000 / float64(q.limit)
	d := time.Duration(math.Ceil(need-float64(elapsed))) * time.Millisecond
	if q.r.open(q.cfg, ms) >= float64(q.limit)*float64(q.cfg.windowMs())/1000 {
		d = max(d, time.Duration(q.r.cur(ms).start+q.cfg.windowMs()-ms)*time.Millisecond)
	}
	return min(max(d, time.Millisecond), q.cfg.Window)
}

// reservedWait is how long a fetch held back by other fetches'
// reservations waits before it asks again.
const reservedWait = 10 * time.Millisecond

// Budget is what one fetch may replicate of the partitions this side
// throttles: the leader's answer to one follower fetch, or one follower
// fetch request. Its grants are reserved from the side's allowance until
// Finish, so fetches in flight at once share it: a follower fetches from
// every leader at once, and a leader answers every follower at once, and
// each taking the whole allowance let a copy start (and resume) at several
// times the throttle, then stand still to pay it back (the grow test's
// copy ran at 0.8× its throttle between such bursts).
type Budget struct {
	q   *Replication
	now int64 // Unix milliseconds
	// reserved is what this budget holds of q.reserved: its grants,
	// corrected by Settle.
	reserved int64
}

// Budget starts a fetch's budget at now. Call Finish once what it
// granted is recorded (Record), or will not be.
func (q *Replication) Budget(now time.Time) Budget {
	return Budget{q: q, now: now.UnixMilli()}
}

// Take decides one partition of the fetch, which would bring at most
// maxBytes: listed says the partition is in this side's throttled-replica
// list for this broker, inSync that the replica fetching it is in sync.
// It returns how many bytes the partition may bring (maxBytes, or less
// where the allowance caps it; a read still brings at least one batch) and
// false when the partition is held back: listed, out of sync, and the
// allowance spent or reserved by other fetches. A replica in sync is never
// held back, so throttling a reassignment can never shrink the ISR or slow
// an acks=all producer (Kafka's shouldLeaderThrottle and
// shouldFollowerThrottle).
func (b *Budget) Take(listed, inSync bool, maxBytes int32) (int32, bool) {
	if !listed || inSync || b.q == nil {
		return maxBytes, true
	}
	q := b.q
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.limit == Unlimited {
		return maxBytes, true
	}
	left := q.allowanceLocked(b.now) - q.reserved
	if left <= 0 {
		return 0, false
	}
	n := int32(min(int64(maxBytes), left))
	q.reserved += int64(n)
	b.reserved += int64(n)
	return n, true
}

// Finish releases what the budget reserved; the bytes its fetch
// replicated count through Record, called before.
func (b *Budget) Finish() {
	if b.q == nil || b.reserved == 0 {
		return
	}
	b.q.mu.Lock()
	b.q.reserved -= b.reserved
	b.q.mu.Unlock()
	b.reserved = 0
}

// Settle corrects the budget once a partition granted bytes brought used:
// a read brings less when there is less, and more when its first batch is
// larger than the grant. The partitions after it, in this fetch and in
// others, get what is left.
func (b *Budget) Settle(granted int32, used int64) {
	if b.q == nil {
		return
	}
	b.q.mu.Lock()
	defer b.q.mu.Unlock()
	if b.q.limit == Unlimited {
		return // nothing was reserved (or the throttle went meanwhile)
	}
	// Never below what this budget holds: a grant made without a
	// reservation (the throttle set meanwhile) must not free others'.
	d := max(used-int64(granted), -b.reserved)
	b.q.reserved += d
	b.reserved += d
}

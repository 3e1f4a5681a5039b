package quota

import (
	"math"
	"testing"
	"time"
)

func TestParseThrottledReplicas(t *testing.T) {
	tests := []struct {
		name   string
		items  []string
		broker int32
		has    []int32
		hasNot []int32
		err    bool
	}{
		{name: "none", items: []string{}, broker: 1, hasNot: []int32{0, 1}},
		{name: "all", items: []string{"*"}, broker: 7, has: []int32{0, 1, 1 << 20}},
		{name: "this broker's", items: []string{"0:1", "1:2", "2:1", "2:1"}, broker: 1, has: []int32{0, 2}, hasNot: []int32{1, 3}},
		{name: "another broker's", items: []string{"0:1", "1:2"}, broker: 3, hasNot: []int32{0, 1}},
		{name: "spaces", items: []string{" 4:3 "}, broker: 3, has: []int32{4}},
		{name: "star among pairs", items: []string{"0:1", "*"}, broker: 1, err: true},
		{name: "no broker", items: []string{"0"}, broker: 1, err: true},
		{name: "not a number", items: []string{"a:1"}, broker: 1, err: true},
		{name: "negative", items: []string{"-1:1"}, broker: 1, err: true},
		{name: "past int32", items: []string{"2147483648:1"}, broker: 1, err: true},
		{name: "empty item", items: []string{"0:1", ""}, broker: 1, err: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseThrottledReplicas(tt.items, tt.broker)
			if (err != nil) != tt.err {
				t.Fatalf("err = %v, want error %v", err, tt.err)
			}
			for _, p := range tt.has {
				if !got.Has(p) {
					t.Errorf("%v does not have partition %d", got, p)
				}
			}
			for _, p := range tt.hasNot {
				if got.Has(p) {
					t.Errorf("%v has partition %d", got, p)
				}
			}
			if tt.err && !got.IsZero() {
				t.Errorf("a refused list names %v", got)
			}
		})
	}
}

// The allowance is what keeps the SimpleRate at the throttle: one
// window's worth to start with, and it comes back as time passes.
func TestReplicationAllowance(t *testing.T) {
	q := NewReplication(DefaultConfig)
	if a := q.Allowance(t0); a != Unlimited {
		t.Fatalf("no throttle: allowance %d, want Unlimited", a)
	}
	q.SetLimit(1000)
	if a := q.Allowance(t0); a != 1000 {
		t.Fatalf("first allowance %d, want one window's worth, 1000", a)
	}
	q.Record(600, t0)
	q.Record(600, t0)
	if a := q.Allowance(t0); a != -200 {
		t.Fatalf("after 1200 of 1000: allowance %d, want -200", a)
	}
	// The measure is one window at least: the debt is paid from the
	// window's end, 1201 ms in, and the wait is a window at most.
	if d := q.Reopens(t0); d != time.Second {
		t.Errorf("reopens in %v, want a window (capped)", d)
	}
	if d := q.Reopens(at(300)); d != 901*time.Millisecond {
		t.Errorf("at 300 ms: reopens in %v, want 901ms", d)
	}
	if a := q.Allowance(at(1200)); a > 0 {
		t.Errorf("at 1200 ms: allowance %d, want none yet", a)
	}
	if a := q.Allowance(at(1201)); a <= 0 {
		t.Errorf("at 1201 ms: allowance %d, want some", a)
	}
	// Two seconds in, the rate is measured over them.
	if a := q.Allowance(at(2000)); a != 800 {
		t.Errorf("at 2 s: allowance %d, want 2000-1200", a)
	}
	if r := q.Rate(at(2000)); r != 600 {
		t.Errorf("rate %v, want 1200 over 2 s", r)
	}
	// A changed throttle applies to what was measured.
	q.SetLimit(500)
	if a := q.Allowance(at(2000)); a != -200 {
		t.Errorf("throttle lowered to 500: allowance %d, want 1000-1200", a)
	}
	q.SetLimit(0)
	if a, d := q.Allowance(at(2000)), q.Reopens(at(2000)); a > 0 || d != time.Second {
		t.Errorf("throttle 0: allowance %d, reopens in %v; want none, a window", a, d)
	}
	q.SetLimit(Unlimited)
	if a, d := q.Allowance(at(2000)), q.Reopens(at(2000)); a != Unlimited || d != 0 {
		t.Errorf("throttle removed: allowance %d, reopens in %v", a, d)
	}
}

// Quiet windows do not stretch the measure: a throttle that starts after
// a quiet spell, however often the allowance was asked meanwhile, lets
// one window's worth through, not the span's.
func TestReplicationQuietSpellGivesOneWindow(t *testing.T) {
	q := NewReplication(DefaultConfig)
	q.SetLimit(1000)
	q.Record(1000, t0) // an old spell of traffic, forgotten after the span
	for ms := int64(0); ms <= 30_000; ms += 100 {
		q.Allowance(at(ms))
		q.Rate(at(ms))
	}
	if a := q.Allowance(at(30_000)); a != 1000 {
		t.Errorf("after a quiet spell: allowance %d, want 1000", a)
	}
}

// A quiet spell inside the measured span leaves the windows' quota
// unused; a window still takes at most its own worth, so the sender after
// the spell keeps the throttle's pace instead of spending the spell's
// quota at once.
func TestReplicationKeepsThePaceAfterAPause(t *testing.T) {
	q := NewReplication(DefaultConfig)
	q.SetLimit(1000)
	send := func(from, to int64) (sent int64) {
		for ms := from; ms < to; ms++ {
			b := q.Budget(at(ms))
			if n, ok := b.Take(true, false, 1<<20); ok {
				got := max(int64(n)/100*100, 100) // batches of 100
				q.Record(got, at(ms))
				sent += got
			}
			b.Finish()
		}
		return sent
	}
	send(0, 3000)
	if got := send(8000, 10_000); got > 2100 {
		t.Errorf("2 s after a 5 s pause: sent %d, want 2000 and a batch", got)
	}
}

// A sender that takes whatever the allowance gives, batch by batch,
// replicates at the throttle: within one batch over the whole run.
func TestReplicationHoldsTheThrottle(t *testing.T) {
	for _, tt := range []struct {
		limit, batch int64
		step         time.Duration
	}{
		{512 << 10, 16 << 10, time.Millisecond},
		{512 << 10, 1 << 20, 5 * time.Millisecond},
		{50 << 20, 64 << 10, 10 * time.Millisecond},
	} {
		q := NewReplication(DefaultConfig)
		q.SetLimit(tt.limit)
		var sent int64
		const run = 30 * time.Second
		for d := time.Duration(0); d <= run; d += tt.step {
			now := t0.Add(d)
			b := q.Budget(now)
			n, ok := b.Take(true, false, 1<<20)
			if !ok {
				continue
			}
			// A read brings whole batches up to n, at least one.
			got := max(int64(n)/tt.batch*tt.batch, tt.batch)
			q.Record(got, now)
			b.Finish()
			sent += got
		}
		want := float64(tt.limit) * run.Seconds()
		if over := float64(sent) - want; over > float64(tt.batch)+float64(tt.limit) || over < -0.01*want {
			t.Errorf("limit %d, batches of %d: sent %d in %v, want %.0f (+ one window and one batch)", tt.limit, tt.batch, sent, run, want)
		}
		if r := q.Rate(t0.Add(run)); math.Abs(r-float64(tt.limit)) > 0.1*float64(tt.limit) {
			t.Errorf("limit %d: measured rate %.0f", tt.limit, r)
		}
	}
}

// A fetch's budget holds back a partition only when it is listed, its
// replica out of sync, and the allowance spent; it caps the others it
// grants by what is left.
func TestBudgetTake(t *testing.T) {
	q := NewReplication(DefaultConfig)
	q.SetLimit(1000)
	q.Record(1500, t0) // 500 over
	for _, tt := range []struct {
		listed, inSync bool
		ok             bool
	}{
		{listed: false, inSync: false, ok: true},
		{listed: true, inSync: true, ok: true},
		{listed: false, inSync: true, ok: true},
		{listed: true, inSync: false, ok: false},
	} {
		b := q.Budget(t0)
		n, ok := b.Take(tt.listed, tt.inSync, 4096)
		if ok != tt.ok || ok && n != 4096 {
			t.Errorf("listed %v, in sync %v, over the throttle: (%d, %v), want (4096, %v)", tt.listed, tt.inSync, n, ok, tt.ok)
		}
	}
	b := NewReplication(DefaultConfig)
	b.SetLimit(1000)
	bu := b.Budget(t0)
	if n, ok := bu.Take(true, false, 600); n != 600 || !ok {
		t.Errorf("first of 1000: (%d, %v), want 600", n, ok)
	}
	if n, ok := bu.Take(true, false, 600); n != 400 || !ok {
		t.Errorf("second: (%d, %v), want the 400 left", n, ok)
	}
	if _, ok := bu.Take(true, false, 600); ok {
		t.Error("third granted with nothing left")
	}
	bu.Settle(400, 300) // the second brought 300 of its 400
	if n, ok := bu.Take(true, false, 600); n != 100 || !ok {
		t.Errorf("after 100 unused: (%d, %v), want 100", n, ok)
	}
	bu.Settle(100, 250) // one batch of 250 for a grant of 100
	if _, ok := bu.Take(true, false, 600); ok {
		t.Error("granted after a batch past the grant")
	}
	bu.Finish()
	again := b.Budget(t0)
	if n, ok := again.Take(true, false, 600); n != 600 || !ok {
		t.Errorf("once the fetch finished without recording: (%d, %v), want 600", n, ok)
	}
	un := NewReplication(DefaultConfig).Budget(t0)
	if n, ok := un.Take(true, false, 1<<20); n != 1<<20 || !ok {
		t.Errorf("no throttle: (%d, %v)", n, ok)
	}
}

// Fetches in flight at once share the allowance: what one was granted
// another is not, until the first finishes (having recorded what it
// brought), and a fetch held back only by others' grants is told to look
// again soon, not to wait for the windows.
func TestBudgetsShareTheAllowance(t *testing.T) {
	q := NewReplication(DefaultConfig)
	q.SetLimit(1000)
	a, b := q.Budget(t0), q.Budget(t0)
	if n, ok := a.Take(true, false, 700); n != 700 || !ok {
		t.Fatalf("first fetch: (%d, %v), want 700", n, ok)
	}
	if n, ok := b.Take(true, false, 700); n != 300 || !ok {
		t.Fatalf("second fetch at once: (%d, %v), want the 300 the first left", n, ok)
	}
	c := q.Budget(t0)
	if _, ok := c.Take(true, false, 700); ok {
		t.Fatal("a third fetch granted while two hold the whole allowance")
	}
	if d := q.Reopens(t0); d <= 0 || d > reservedWait {
		t.Errorf("held back by reservations: reopens in %v, want at most %v", d, reservedWait)
	}
	q.Record(700, t0)
	a.Finish()
	b.Finish() // brought nothing
	last := q.Budget(t0)
	if n, ok := last.Take(true, false, 700); n != 300 || !ok {
		t.Errorf("after both finished, 700 recorded: (%d, %v), want 300", n, ok)
	}
}

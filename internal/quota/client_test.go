package quota

import (
	"math"
	"testing"
	"time"
)

var t0 = time.UnixMilli(1_700_000_000_000)

func at(ms int64) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

func near(got, want, tolerance float64) bool { return math.Abs(got-want) <= tolerance }

// A steady rate reads as itself once the windows are full, and a first
// record is divided by Samples-1 whole windows, not by the instant it
// took.
func TestRateMeasuresOverTheWindows(t *testing.T) {
	c := DefaultConfig
	var r rate
	r.record(c, 500, t0.UnixMilli())
	if got := r.measure(c, t0.UnixMilli()); !near(got, 50, 1e-9) {
		t.Errorf("500 at the start: %v per second, want 500 over 10 windows, 50", got)
	}
	r = rate{}
	for ms := int64(0); ms <= 20_000; ms += 100 {
		r.record(c, 100, t0.UnixMilli()+ms)
	}
	if got := r.measure(c, t0.UnixMilli()+20_000); !near(got, 1000, 20) {
		t.Errorf("100 every 100 ms: %v per second, want 1000", got)
	}
	// Eleven quiet windows later every sample is forgotten.
	if got := r.measure(c, t0.UnixMilli()+20_000+c.span().Milliseconds()); got != 0 {
		t.Errorf("after a quiet span: %v per second, want 0", got)
	}
}

// The throttle time is Kafka's (O - T) / T × W.
func TestThrottleTimeIsKafkas(t *testing.T) {
	m := NewManager(Produce, DefaultConfig)
	m.SetQuotas(map[Entity]float64{{ClientID: Named("p")}: 100})
	// 150 a second for nine seconds, then 150 more: 1500 over the minimum
	// window of 10 s is 150/s against 100/s: (150-100)/100 × 10 s.
	for i := range int64(9) {
		m.Record("ANONYMOUS", "p", 150, at(i*1000))
	}
	if d := m.Record("ANONYMOUS", "p", 150, at(9000)); d != 5*time.Second {
		t.Errorf("150/s against 100/s: throttled %v, want 5s", d)
	}
	// Another client is not throttled.
	if d := m.Record("ANONYMOUS", "q", 1e9, at(0)); d != 0 {
		t.Errorf("a client without a quota throttled %v", d)
	}
}

// A window may take two windows' worth of the quota: past that the client
// waits for the next window, however little the windows before held.
func TestBurstsAreCappedAtTwoWindows(t *testing.T) {
	m := NewManager(Produce, DefaultConfig)
	m.SetQuotas(map[Entity]float64{{ClientID: Named("p")}: 100})
	if d := m.Record("ANONYMOUS", "p", 200, at(0)); d != 0 {
		t.Errorf("two windows' worth at once: throttled %v", d)
	}
	if d := m.Record("ANONYMOUS", "p", 50, at(300)); d != 700*time.Millisecond {
		t.Errorf("more in the same window: throttled %v, want until it ends, 700ms", d)
	}
	if d := m.Record("ANONYMOUS", "p", 100, at(1000)); d != 0 {
		t.Errorf("in the next window: throttled %v", d)
	}
}

// A client that waits out each throttle time runs at its quota: simulated
// over 30 s of a fake clock, a producer sending 64 KiB requests as fast
// as it may stays within 10% of 1 MiB/s, from the start.
func TestAThrottledClientRunsAtItsQuota(t *testing.T) {
	const quota = 1 << 20
	m := NewManager(Produce, DefaultConfig)
	m.SetQuotas(map[Entity]float64{{User: Named("alice")}: quota})
	var sent float64
	now := int64(0)
	for now < 30_000 {
		sent += 64 << 10
		d := m.Record("alice", "c", 64<<10, at(now))
		now += 1 + d.Milliseconds() // a millisecond per request, then the throttle
	}
	if got := sent / (float64(now) / 1000); !near(got, quota, quota/10) {
		t.Errorf("%.0f bytes/s over %d ms, want %d ±10%%", got, now, quota)
	}
}

// Kafka's eight levels of precedence, and the sensor each shares.
func TestQuotaPrecedence(t *testing.T) {
	u, c := Named("alice"), Named("app")
	d := DefaultPart
	levels := []struct {
		e    Entity
		tags Tags
	}{
		{Entity{u, c}, Tags{"alice", "app"}},
		{Entity{u, d}, Tags{"alice", "app"}},
		{Entity{User: u}, Tags{User: "alice"}},
		{Entity{d, c}, Tags{"alice", "app"}},
		{Entity{d, d}, Tags{"alice", "app"}},
		{Entity{User: d}, Tags{User: "alice"}},
		{Entity{ClientID: c}, Tags{ClientID: "app"}},
		{Entity{ClientID: d}, Tags{ClientID: "app"}},
	}
	// With the levels from i down set, level i wins, with its value.
	for i := range levels {
		quotas := map[Entity]float64{}
		for j := i; j < len(levels); j++ {
			quotas[levels[j].e] = float64(j + 1)
		}
		m := NewManager(Fetch, DefaultConfig)
		m.SetQuotas(quotas)
		tags, limit, ok := m.Resolve("alice", "app")
		if !ok || tags != levels[i].tags || limit != float64(i+1) {
			t.Errorf("levels %d and below set: tags %+v, quota %v (%v), want %+v, %d", i+1, tags, limit, ok, levels[i].tags, i+1)
		}
	}
	// Quotas of other users and clients do not apply.
	m := NewManager(Fetch, DefaultConfig)
	m.SetQuotas(map[Entity]float64{{User: Named("bob")}: 1, {ClientID: Named("other")}: 2, {Named("bob"), c}: 3})
	if _, _, ok := m.Resolve("alice", "app"); ok {
		t.Error("a quota of bob's or of another client applies to alice's app")
	}
}

// A user's quota is one sensor for all the user's clients: what one used
// counts against the other.
func TestAUsersClientsShareItsQuota(t *testing.T) {
	m := NewManager(Produce, DefaultConfig)
	m.SetQuotas(map[Entity]float64{{User: Named("alice")}: 100})
	m.Record("alice", "one", 1000, at(0))
	if d := m.Record("alice", "two", 1000, at(0)); d == 0 {
		t.Error("alice's second client was not throttled for what her first used")
	}
	if d := m.Record("bob", "one", 1000, at(0)); d != 0 {
		t.Errorf("bob, without a quota, throttled %v", d)
	}
}

// A quota changed keeps what the client used; one removed stops the
// throttling; without any, nothing is recorded.
func TestQuotaChanges(t *testing.T) {
	m := NewManager(Produce, DefaultConfig)
	if m.Enabled() {
		t.Fatal("enabled without a quota")
	}
	e := Entity{ClientID: Named("p")}
	m.SetQuotas(map[Entity]float64{e: 10_000})
	m.Record("u", "p", 15_000, at(0)) // 1500/s
	m.SetQuotas(map[Entity]float64{e: 500})
	if d := m.Record("u", "p", 0, at(0)); d != 20*time.Second {
		t.Errorf("1500/s against a quota lowered to 500/s: %v, want 20s", d)
	}
	m.SetQuotas(nil)
	if m.Enabled() || m.Record("u", "p", 1e9, at(0)) != 0 {
		t.Error("throttled after the quota was removed")
	}
}

// A throttled fetch's bytes are taken back; a fetch may be as large as
// one window of the quota.
func TestUnrecordAndPerWindow(t *testing.T) {
	m := NewManager(Fetch, DefaultConfig)
	if !math.IsInf(m.PerWindow("u", "c"), 1) {
		t.Error("a fetch is capped without a quota")
	}
	m.SetQuotas(map[Entity]float64{{ClientID: DefaultPart}: 1000})
	if got := m.PerWindow("u", "c"); got != 1000 {
		t.Errorf("per window %v, want 1000/s × 1 s", got)
	}
	if d := m.Record("u", "c", 30_000, at(0)); d == 0 {
		t.Fatal("3000/s against 1000/s not throttled")
	}
	m.Unrecord("u", "c", 30_000, at(0))
	if d := m.Record("u", "c", 0, at(0)); d != 0 {
		t.Errorf("throttled %v for bytes taken back", d)
	}
}

// Request percentages are throttled at most one window, as Kafka bounds
// them.
func TestRequestThrottleIsBoundedByAWindow(t *testing.T) {
	m := NewManager(Request, DefaultConfig)
	m.SetQuotas(map[Entity]float64{{ClientID: Named("c")}: 1})
	if d := m.Record("u", "c", 1e6, at(0)); d != time.Second {
		t.Errorf("throttled %v, want the one-second window", d)
	}
}

// The controller mutation quota is a token bucket: the burst is the
// quota over all the windows; a request may go into debt, and the next is
// refused until the debt is paid at the quota's rate. The permissive form
// admits everything and reports the debt as a throttle time.
func TestControllerMutationQuota(t *testing.T) {
	m := NewManager(ControllerMutation, DefaultConfig)
	m.SetQuotas(map[Entity]float64{{User: Named("alice")}: 10}) // burst 110
	if ok, d := m.Admit("alice", "c", 100, true, at(0)); !ok || d != 0 {
		t.Fatalf("100 of a 110 burst refused: %v %v", ok, d)
	}
	if ok, _ := m.Admit("alice", "c", 30, true, at(0)); !ok {
		t.Fatal("30 more with 10 tokens left refused: the bucket may go into debt")
	}
	ok, d := m.Admit("alice", "c", 1, true, at(0))
	if ok || d != 2*time.Second {
		t.Fatalf("with a debt of 20 at 10/s: admitted %v, throttle %v, want refused for 2s", ok, d)
	}
	if ok, _ := m.Admit("alice", "c", 1, true, at(2000)); !ok {
		t.Error("refused once the debt was paid")
	}
	p := NewManager(ControllerMutation, DefaultConfig)
	p.SetQuotas(map[Entity]float64{{User: Named("alice")}: 10})
	if ok, d := p.Admit("alice", "c", 130, false, at(0)); !ok || d != 2*time.Second {
		t.Errorf("permissive: admitted %v, throttle %v, want admitted, 2s", ok, d)
	}
}

// Sensors no one recorded in for an hour are forgotten.
func TestIdleSensorsExpire(t *testing.T) {
	m := NewManager(Produce, DefaultConfig)
	m.SetQuotas(map[Entity]float64{{ClientID: DefaultPart}: 1})
	m.Record("u", "old", 1, at(0))
	m.Record("u", "new", 1, at(inactive.Milliseconds()+time.Minute.Milliseconds()))
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.sensors[Tags{ClientID: "old"}]; ok || len(m.sensors) != 1 {
		t.Errorf("sensors after an hour: %v", m.sensors)
	}
}

// A limiter throttles what goes over its limit, at most one window, and
// takes back what is unrecorded.
func TestLimiter(t *testing.T) {
	l := NewLimiter(DefaultConfig)
	for i := range 10 { // 10 in a 10 s window: 1/s
		if d := l.Record(1, 1, at(0)); d != 0 {
			t.Fatalf("event %d of 10 against 1/s throttled %v", i+1, d)
		}
	}
	if d := l.Record(1, 1, at(0)); d != time.Second {
		t.Errorf("the 11th: throttled %v, want the one-second bound", d)
	}
	l.Unrecord(1, at(0))
	l.Unrecord(1, at(0))
	if d := l.Record(1, 1, at(0)); d != 0 {
		t.Errorf("throttled %v after two were taken back", d)
	}
}

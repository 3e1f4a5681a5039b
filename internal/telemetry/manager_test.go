package telemetry

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-io/samsa/internal/clock"
	"github.com/samsa-io/samsa/internal/config"
	"github.com/samsa-io/samsa/internal/record"
)

// newTestManager is a Manager on a manual clock that hands out IDs 1, 2,
// ... in their first byte, with a subscription to the producer's metrics
// every second.
func newTestManager(t *testing.T) (*Manager, *clock.Manual, *Store) {
	t.Helper()
	clk := clock.NewManual(time.Unix(1_700_000_000, 0))
	store := NewStore(clk)
	var next byte
	m := NewManager(Options{MaxBytes: 1 << 20, Clock: clk, Store: store, NewID: func() InstanceID {
		next++
		return InstanceID{next, 0xaa}
	}})
	m.SetSubscriptions([]config.ClientMetricsSubscription{
		sub(t, "producers", map[string]string{"metrics": "org.apache.kafka.producer.", "interval.ms": "1000"}),
	})
	return m, clk, store
}

func wantErr(t *testing.T, what string, got, want *kerr.Error, msg string) {
	t.Helper()
	if got != want {
		t.Fatalf("%s: %v (%s), want %v", what, got, msg, want)
	}
}

func TestGetSubscriptions(t *testing.T) {
	m, clk, _ := newTestManager(t)
	s := m.GetSubscriptions(InstanceID{}, javaClient)
	if s.Err != nil || s.InstanceID != (InstanceID{1, 0xaa}) {
		t.Fatalf("a new client: %+v", s)
	}
	if s.IntervalMs != 1000 || len(s.Metrics) != 1 || s.Metrics[0] != "org.apache.kafka.producer." {
		t.Fatalf("subscription %+v", s.Subscribed)
	}
	// Again within the interval: throttled. After it: answered.
	clk.Advance(500 * time.Millisecond)
	wantErr(t, "get within the interval", m.GetSubscriptions(s.InstanceID, javaClient).Err, kerr.ThrottlingQuotaExceeded, "")
	clk.Advance(500 * time.Millisecond)
	again := m.GetSubscriptions(s.InstanceID, javaClient)
	if again.Err != nil || again.SubscriptionID != s.SubscriptionID || again.InstanceID != s.InstanceID {
		t.Fatalf("get after the interval: %+v", again)
	}
	// A change of the subscriptions is told at once, with a new ID.
	clk.Advance(10 * time.Millisecond)
	m.SetSubscriptions([]config.ClientMetricsSubscription{sub(t, "all", map[string]string{"metrics": "*", "interval.ms": "200"})})
	changed := m.GetSubscriptions(s.InstanceID, javaClient)
	if changed.Err != nil || changed.SubscriptionID == s.SubscriptionID || changed.IntervalMs != 200 || changed.Metrics[0] != "*" {
		t.Fatalf("after the subscriptions changed: %+v", changed)
	}
	// No subscription matching: an empty one, the default interval.
	m.SetSubscriptions(nil)
	none := m.GetSubscriptions(InstanceID{}, javaClient)
	if none.Err != nil || len(none.Metrics) != 0 || none.IntervalMs != DefaultIntervalMs {
		t.Fatalf("no subscription: %+v", none)
	}
}

func TestPushRules(t *testing.T) {
	m, clk, store := newTestManager(t)
	s := m.GetSubscriptions(InstanceID{}, javaClient)
	metrics := payload(t, record.CodecZstd, gauge("org.apache.kafka.producer.record.queue.time.avg", 5))
	push := func(p Push) (*kerr.Error, string) {
		p.Client, p.InstanceID = javaClient, s.InstanceID
		if p.SubscriptionID == 0 {
			p.SubscriptionID = s.SubscriptionID
		}
		return m.Push(p)
	}
	// Right after the get: accepted, whatever the interval.
	err, msg := push(Push{Compression: 4, Metrics: metrics})
	wantErr(t, "first push", err, nil, msg)
	if st := store.Stats(); st.Clients != 1 || st.Series != 1 {
		t.Fatalf("stored %+v", st)
	}
	clk.Advance(999 * time.Millisecond)
	err, msg = push(Push{Compression: 4, Metrics: metrics})
	wantErr(t, "a push too soon", err, kerr.ThrottlingQuotaExceeded, msg)
	clk.Advance(time.Millisecond)
	err, msg = push(Push{Compression: 4, Metrics: metrics})
	wantErr(t, "a push after the interval", err, nil, msg)

	clk.Advance(time.Second)
	err, msg = push(Push{SubscriptionID: s.SubscriptionID + 1, Compression: 4, Metrics: metrics})
	wantErr(t, "a stale subscription id", err, kerr.UnknownSubscriptionID, msg)
	// The client asks again at once: not throttled after that error.
	clk.Advance(time.Millisecond)
	if g := m.GetSubscriptions(s.InstanceID, javaClient); g.Err != nil {
		t.Fatalf("get after UNKNOWN_SUBSCRIPTION_ID: %v", g.Err)
	}
	err, msg = push(Push{Compression: 9, Metrics: metrics})
	wantErr(t, "an unknown codec", err, kerr.UnsupportedCompressionType, msg)

	clk.Advance(time.Second)
	err, msg = push(Push{Compression: 0, Metrics: make([]byte, 1<<20+1)})
	wantErr(t, "over telemetry.max.bytes", err, kerr.TelemetryTooLarge, msg)
	clk.Advance(time.Second)
	err, msg = push(Push{Compression: 0, Metrics: []byte{0xff, 0xff, 0xff}})
	wantErr(t, "not OTLP", err, kerr.InvalidRecord, msg)
	clk.Advance(time.Second)
	err, msg = push(Push{Compression: 1, Metrics: []byte("not gzip")})
	wantErr(t, "not gzip", err, kerr.InvalidRecord, msg)

	// Terminating: accepted even too soon, forgotten by the store, and
	// nothing after it.
	clk.Advance(time.Second)
	err, msg = push(Push{Compression: 4, Metrics: metrics})
	wantErr(t, "a push before terminating", err, nil, msg)
	err, msg = push(Push{Terminating: true, Compression: 4, Metrics: metrics})
	wantErr(t, "terminating, too soon", err, nil, msg)
	if st := store.Stats(); st.Clients != 0 {
		t.Fatalf("a terminated client is still stored: %+v", st)
	}
	clk.Advance(2 * time.Second)
	err, msg = push(Push{Compression: 4, Metrics: metrics})
	wantErr(t, "a push after terminating", err, kerr.InvalidRequest, msg)

	err, msg = m.Push(Push{Client: javaClient, Compression: 4, Metrics: metrics})
	wantErr(t, "the zero instance id", err, kerr.InvalidRequest, msg)
	err, msg = m.Push(Push{Client: javaClient, InstanceID: InstanceID{15: 1}, Compression: 4, Metrics: metrics})
	wantErr(t, "a reserved instance id", err, kerr.InvalidRequest, msg)
}

// A broker that never saw the client's GetTelemetrySubscriptions (it went
// to another broker) accepts its pushes: the subscription ID depends on
// the subscriptions only.
func TestPushToAnotherBroker(t *testing.T) {
	m1, _, _ := newTestManager(t)
	m2, _, store2 := newTestManager(t)
	s := m1.GetSubscriptions(InstanceID{}, javaClient)
	err, msg := m2.Push(Push{Client: javaClient, InstanceID: s.InstanceID, SubscriptionID: s.SubscriptionID, Compression: 4,
		Metrics: payload(t, record.CodecZstd, gauge("org.apache.kafka.producer.io.ratio", 0.5))})
	wantErr(t, "push to the other broker", err, nil, msg)
	if store2.Stats().Series != 1 {
		t.Fatal("the other broker stored nothing")
	}
}

func TestInstancesExpire(t *testing.T) {
	m, clk, _ := newTestManager(t)
	s := m.GetSubscriptions(InstanceID{}, javaClient)
	count := func() int {
		m.mu.Lock()
		defer m.mu.Unlock()
		m.expireLocked(clk.Now())
		return m.mu.lru.Len()
	}
	clk.Advance(minInstanceTTL)
	if count() != 1 {
		t.Fatal("forgotten before its time")
	}
	clk.Advance(time.Millisecond)
	if count() != 0 {
		t.Fatal("not forgotten after max(60 s, 3 intervals)")
	}
	// Forgotten, it starts over: its next push counts as its first.
	err, msg := m.Push(Push{Client: javaClient, InstanceID: s.InstanceID, SubscriptionID: s.SubscriptionID, Compression: 0})
	wantErr(t, "push after expiry", err, nil, msg)
}

func TestInstancesBounded(t *testing.T) {
	m, _, _ := newTestManager(t)
	for i := range MaxInstances + 10 {
		m.GetSubscriptions(InstanceID{byte(i), byte(i >> 8), 0xbb}, javaClient)
	}
	if n := m.mu.lru.Len(); n != MaxInstances || len(m.mu.instances) != MaxInstances {
		t.Fatalf("%d instances, %d in the map, want %d", n, len(m.mu.instances), MaxInstances)
	}
}

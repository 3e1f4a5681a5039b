package telemetry

import (
	"container/list"
	"crypto/rand"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-io/samsa/internal/clock"
	"github.com/samsa-io/samsa/internal/config"
)

// MaxInstances is how many client instances a Manager keeps, Kafka's
// client metrics cache size (16k active clients per broker); past it the
// least recently seen is forgotten.
const MaxInstances = 16384

// minInstanceTTL is Kafka's cache expiry: an instance is forgotten after
// max(60 s, three push intervals) without a request.
const minInstanceTTL = 60 * time.Second

// AcceptedCompression are the codecs the broker takes in a push, most
// preferred first, as Kafka 4.x lists them: zstd, lz4, gzip, snappy. A
// push may also come uncompressed.
var AcceptedCompression = []int8{4, 3, 1, 2}

// DecompressedFactor bounds a pushed payload once decompressed, as a
// multiple of telemetry.max.bytes (which bounds it as sent): a zstd bomb
// costs at most that much memory, and is TELEMETRY_TOO_LARGE.
const DecompressedFactor = 4

// Options configure a Manager.
type Options struct {
	// MaxBytes is telemetry.max.bytes: the largest payload a push may
	// carry, as sent.
	MaxBytes int32
	// Clock tells the time of each request; nil is the real clock.
	Clock clock.Clock
	// Store receives what clients push; nil keeps nothing.
	Store *Store
	// NewID draws a new client instance ID; nil draws random ones.
	NewID func() InstanceID
}

// Manager answers GetTelemetrySubscriptions and PushTelemetry by the rules
// of Kafka's ClientMetricsManager. It is safe for concurrent use.
type Manager struct {
	opts Options
	mu   struct {
		sync.Mutex
		subs []config.ClientMetricsSubscription
		// version counts the subscription changes: an instance evaluated
		// under an older one is evaluated again on its next request.
		version   uint64
		instances map[InstanceID]*list.Element // of *instance
		lru       list.List                    // most recently seen first
		results   map[string]uint64            // pushes by result
	}
}

// instance is one client instance's state.
type instance struct {
	id      InstanceID
	client  Client // as first seen: what its subscriptions matched
	version uint64
	sub     Subscribed
	subID   int32
	// lastGet and lastPush are when a request of each kind was last
	// accepted; zero before the first.
	lastGet, lastPush time.Time
	lastSeen          time.Time
	terminating       bool
	lastErr           *kerr.Error // of the last push; nil for none
}

func (in *instance) interval() time.Duration {
	return time.Duration(in.sub.IntervalMs) * time.Millisecond
}

func (in *instance) ttl() time.Duration { return max(minInstanceTTL, 3*in.interval()) }

// NewManager returns a Manager without subscriptions: every client gets an
// empty subscription until SetSubscriptions gives it one.
func NewManager(o Options) *Manager {
	if o.Clock == nil {
		o.Clock = clock.Real
	}
	if o.NewID == nil {
		o.NewID = func() InstanceID {
			var id InstanceID
			_, _ = rand.Read(id[:]) // never fails (crypto/rand)
			return id
		}
	}
	m := &Manager{opts: o}
	m.mu.instances = map[InstanceID]*list.Element{}
	m.mu.results = map[string]uint64{}
	return m
}

// SetSubscriptions replaces the subscriptions. Every client instance is
// evaluated against them again on its next request.
func (m *Manager) SetSubscriptions(subs []config.ClientMetricsSubscription) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mu.subs = subs
	m.mu.version++
}

// Subscription is the answer to a GetTelemetrySubscriptions.
type Subscription struct {
	InstanceID     InstanceID
	SubscriptionID int32
	Subscribed
	// Err is the request's error, nil for none; Message says why.
	Err     *kerr.Error
	Message string
}

// GetSubscriptions answers a GetTelemetrySubscriptions of client instance
// id (zero: a new client, which gets an ID). A request sooner than the
// push interval after the client's last accepted one is
// THROTTLING_QUOTA_EXCEEDED, unless its last push failed on its
// subscription ID or codec (it must learn the new ones), or the
// subscriptions changed since.
func (m *Manager) GetSubscriptions(id InstanceID, c Client) Subscription {
	now := m.opts.Clock.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	if id == (InstanceID{}) {
		id = m.newIDLocked()
	}
	in := m.instanceLocked(id, c, now)
	if !in.lastGet.IsZero() || !in.lastPush.IsZero() {
		last := in.lastGet
		if in.lastPush.After(last) {
			last = in.lastPush
		}
		if now.Sub(last) < in.interval() && in.lastErr != kerr.UnknownSubscriptionID && in.lastErr != kerr.UnsupportedCompressionType {
			return Subscription{InstanceID: id, Err: kerr.ThrottlingQuotaExceeded,
				Message: fmt.Sprintf("request from client instance %s arrived before the next push interval", id)}
		}
	}
	in.lastGet, in.lastErr = now, nil
	return Subscription{InstanceID: id, SubscriptionID: in.subID, Subscribed: in.sub}
}

func (m *Manager) newIDLocked() InstanceID {
	for {
		id := m.opts.NewID()
		if _, taken := m.mu.instances[id]; !taken && !id.reserved() {
			return id
		}
	}
}

// instanceLocked finds or creates a client instance, evaluating its
// subscriptions again if they changed since, and marks it seen.
func (m *Manager) instanceLocked(id InstanceID, c Client, now time.Time) *instance {
	m.expireLocked(now)
	var in *instance
	if e, ok := m.mu.instances[id]; ok {
		in = e.Value.(*instance)
		m.mu.lru.MoveToFront(e)
		if in.version != m.mu.version {
			// As Kafka: a new instance with the same metadata, so its
			// timestamps start over and the client gets the new
			// subscription at once.
			*in = instance{id: id, client: in.client}
			m.evaluateLocked(in)
		}
	} else {
		in = &instance{id: id, client: c}
		m.evaluateLocked(in)
		m.mu.instances[id] = m.mu.lru.PushFront(in)
		for m.mu.lru.Len() > MaxInstances {
			m.removeLocked(m.mu.lru.Back())
		}
	}
	in.lastSeen = now
	return in
}

func (m *Manager) evaluateLocked(in *instance) {
	in.version = m.mu.version
	in.sub = subscribe(m.mu.subs, in.id, in.client)
	in.subID = SubscriptionID(in.sub, in.id)
}

// expireLocked forgets the least recently seen instances whose time is up.
// The list is in order of last request, not of expiry (intervals differ),
// so one not yet expired stops the walk; the cap bounds what waits.
func (m *Manager) expireLocked(now time.Time) {
	for e := m.mu.lru.Back(); e != nil; e = m.mu.lru.Back() {
		in := e.Value.(*instance)
		if now.Sub(in.lastSeen) <= in.ttl() {
			return
		}
		m.removeLocked(e)
	}
}

func (m *Manager) removeLocked(e *list.Element) {
	in := m.mu.lru.Remove(e).(*instance)
	delete(m.mu.instances, in.id)
}

// Push is a PushTelemetry request.
type Push struct {
	// Client is who sent it: a push may be the first request the broker
	// sees of an instance (its GetTelemetrySubscriptions went to another
	// broker), and the instance's subscriptions are evaluated for it.
	Client         Client
	InstanceID     InstanceID
	SubscriptionID int32
	Terminating    bool
	Compression    int8
	Metrics        []byte
}

// Push answers a PushTelemetry: nil, or the error and why. The checks are
// Kafka's, in its order: a reserved instance ID is INVALID_REQUEST; a push
// after a terminating one INVALID_REQUEST; a push sooner than the push
// interval after the last, unless it follows a GetTelemetrySubscriptions
// or is terminating, THROTTLING_QUOTA_EXCEEDED; a subscription ID that is
// not the instance's UNKNOWN_SUBSCRIPTION_ID; a codec Kafka does not know
// UNSUPPORTED_COMPRESSION_TYPE; a payload over MaxBytes as sent, or over
// DecompressedFactor times it decompressed, TELEMETRY_TOO_LARGE; one that
// does not decode INVALID_RECORD. The accepted points go to the Store; a
// terminating push's instance is forgotten there.
func (m *Manager) Push(p Push) (*kerr.Error, string) {
	err, msg := m.push(p)
	name := "ok"
	if err != nil {
		name = err.Message
	}
	m.mu.Lock()
	m.mu.results[name]++
	m.mu.Unlock()
	return err, msg
}

func (m *Manager) push(p Push) (*kerr.Error, string) {
	if p.InstanceID.reserved() {
		return kerr.InvalidRequest, fmt.Sprintf("invalid client instance id %s", p.InstanceID)
	}
	client, interval, kerrr, msg := m.checkPush(p)
	if kerrr != nil {
		return kerrr, msg
	}
	var points []Point
	if len(p.Metrics) > 0 {
		var err error
		if points, _, err = Decode(p.Compression, p.Metrics, DecompressedFactor*int(m.opts.MaxBytes)); err != nil {
			code := kerr.InvalidRecord
			if errors.Is(err, ErrTooLarge) {
				code = kerr.TelemetryTooLarge
			}
			m.mu.Lock()
			if e, ok := m.mu.instances[p.InstanceID]; ok {
				e.Value.(*instance).lastErr = code
			}
			m.mu.Unlock()
			return code, err.Error()
		}
	}
	if s := m.opts.Store; s != nil {
		if p.Terminating {
			s.Forget(p.InstanceID)
		} else if len(points) > 0 {
			s.Record(p.InstanceID, client, interval, points)
		}
	}
	return nil, ""
}

// checkPush applies the checks that need the instance's state, and
// records the push's terminating flag whatever their outcome, as Kafka.
// It returns the instance's client and push interval as they are now.
func (m *Manager) checkPush(p Push) (client Client, interval time.Duration, err *kerr.Error, msg string) {
	now := m.opts.Clock.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	in := m.instanceLocked(p.InstanceID, p.Client, now)
	client, interval = in.client, in.interval()
	defer func() {
		in.terminating = p.Terminating
		if err != nil {
			in.lastErr = err
		}
	}()
	if in.terminating {
		return client, interval, kerr.InvalidRequest, fmt.Sprintf("client instance %s pushed after a terminating push", p.InstanceID)
	}
	// A push right after a GetTelemetrySubscriptions is accepted whatever
	// the interval: the client applies a jitter of half an interval either
	// way to its first push.
	accept := in.lastGet.After(in.lastPush) || in.lastPush.IsZero() || now.Sub(in.lastPush) >= in.interval()
	if !accept && !p.Terminating {
		return client, interval, kerr.ThrottlingQuotaExceeded, fmt.Sprintf("push from client instance %s arrived before the next push interval", p.InstanceID)
	}
	if accept {
		in.lastPush = now
	}
	switch {
	case p.SubscriptionID != in.subID:
		return client, interval, kerr.UnknownSubscriptionID, fmt.Sprintf("unknown subscription id %d for client instance %s", p.SubscriptionID, p.InstanceID)
	case p.Compression < 0 || p.Compression > 4:
		return client, interval, kerr.UnsupportedCompressionType, fmt.Sprintf("unknown compression type %d", p.Compression)
	case len(p.Metrics) > int(m.opts.MaxBytes):
		return client, interval, kerr.TelemetryTooLarge, fmt.Sprintf("%d bytes of metrics, more than telemetry.max.bytes (%d)", len(p.Metrics), m.opts.MaxBytes)
	}
	return client, interval, nil, ""
}

var (
	descInstances = prometheus.NewDesc("samsa_telemetry_client_instances",
		"KIP-714 client instances the broker keeps state of (GetTelemetrySubscriptions and PushTelemetry).", nil, nil)
	descPushes = prometheus.NewDesc("samsa_telemetry_pushes_total",
		"PushTelemetry requests, per result: ok or the Kafka error.", []string{"result"}, nil)
	descStoredClients = prometheus.NewDesc("samsa_telemetry_stored_clients",
		"Client instances whose pushed metrics are re-exported.", nil, nil)
	descStoredSeries = prometheus.NewDesc("samsa_telemetry_series",
		"Series of pushed client metrics re-exported.", nil, nil)
	descDropped = prometheus.NewDesc("samsa_telemetry_dropped_points_total",
		"Pushed data points not re-exported: past the store's bounds.", nil, nil)
)

// Describe sends nothing: the Manager is an unchecked collector.
func (*Manager) Describe(chan<- *prometheus.Desc) {}

// Collect exports the Manager's own metrics and the Store's series.
func (m *Manager) Collect(ch chan<- prometheus.Metric) {
	m.mu.Lock()
	m.expireLocked(m.opts.Clock.Now())
	instances := m.mu.lru.Len()
	results := make(map[string]uint64, len(m.mu.results))
	for k, v := range m.mu.results {
		results[k] = v
	}
	m.mu.Unlock()
	ch <- prometheus.MustNewConstMetric(descInstances, prometheus.GaugeValue, float64(instances))
	for k, v := range results {
		ch <- prometheus.MustNewConstMetric(descPushes, prometheus.CounterValue, float64(v), k)
	}
	if s := m.opts.Store; s != nil {
		st := s.Stats()
		ch <- prometheus.MustNewConstMetric(descStoredClients, prometheus.GaugeValue, float64(st.Clients))
		ch <- prometheus.MustNewConstMetric(descStoredSeries, prometheus.GaugeValue, float64(st.Series))
		ch <- prometheus.MustNewConstMetric(descDropped, prometheus.CounterValue, float64(st.Dropped))
		s.Collect(ch)
	}
}

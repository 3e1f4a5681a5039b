package quota

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// Kind is a kind of client quota, by its key in the metadata.
type Kind int

const (
	// Produce is producer_byte_rate: bytes of produce requests per second.
	Produce Kind = iota
	// Fetch is consumer_byte_rate: bytes of fetch responses per second.
	Fetch
	// Request is request_percentage: time spent handling the client's
	// requests, in percent of one thread, per second.
	Request
	// ControllerMutation is controller_mutation_rate: partitions created
	// or deleted per second (KIP-599).
	ControllerMutation
)

var kindKeys = [...]string{"producer_byte_rate", "consumer_byte_rate", "request_percentage", "controller_mutation_rate"}

// Key is the kind's quota key, as Kafka names it.
func (k Kind) Key() string { return kindKeys[k] }

func (k Kind) String() string { return k.Key() }

// Part is one part of a quota entity: absent (Set false), the default
// entity (<default>), or a name.
type Part struct {
	Set, Default bool
	Name         string
}

// Named is the part naming name.
func Named(name string) Part { return Part{Set: true, Name: name} }

// DefaultPart is the part of the default entity.
var DefaultPart = Part{Set: true, Default: true}

// Entity is a client quota entity: a user, a client ID, or both.
type Entity struct {
	User, ClientID Part
}

func (p Part) String() string {
	switch {
	case !p.Set:
		return "-"
	case p.Default:
		return "<default>"
	}
	return fmt.Sprintf("%q", p.Name)
}

func (e Entity) String() string {
	return "user=" + e.User.String() + " client-id=" + e.ClientID.String()
}

// Tags name the sensor a client's usage is recorded in, as Kafka's quota
// metric tags: the user and the client ID, either empty when the quota
// that applies covers every value of it (a user's quota is shared by all
// the user's clients).
type Tags struct {
	User, ClientID string
}

// burstWindows is how many windows' worth of its quota a producer may use
// within one window. Kafka allows all but one window's worth at once (the
// rate of a first burst is divided by Samples-1 windows), and the window
// that holds such a burst drops out of the rate as a whole once the
// windows have passed it, so a client that sends what it may, as fast as
// it may, goes in bursts of ten seconds' quota every eleven seconds
// (librdkafka's producer did: 1.13 to 1.17 of its quota over 30 s). Two
// windows' worth keeps the pace within a tenth of the quota, and still
// lets a client catch up after a pause. Consumers need no such cap: a
// fetch carries at most one window's worth (the broker caps it).
const burstWindows = 2

// inactive is how long a sensor no one records in is kept, as Kafka's
// inactive sensor expiry.
const inactive = time.Hour

// Manager enforces one kind of client quota for every client. It is safe
// for concurrent use; without any quota of its kind it records nothing.
type Manager struct {
	kind    Kind
	cfg     Config
	enabled atomic.Bool

	mu      sync.Mutex
	quotas  map[Entity]float64
	sensors map[Tags]*sensor
	sweepAt int64
}

// sensor is what one quota entity's clients used.
type sensor struct {
	rate   rate
	bucket bucket
	used   int64 // ms of the last record
}

// NewManager returns the manager of kind's quotas, with none set.
func NewManager(kind Kind, cfg Config) *Manager {
	return &Manager{kind: kind, cfg: cfg, quotas: map[Entity]float64{}, sensors: map[Tags]*sensor{}}
}

// Kind is what the manager enforces.
func (m *Manager) Kind() Kind { return m.kind }

// Enabled reports whether any quota of the manager's kind is set.
func (m *Manager) Enabled() bool { return m.enabled.Load() }

// SetQuotas replaces the quotas of the manager's kind: the value of its
// key on each entity that has one. What clients used so far is kept, as
// in Kafka, where a changed quota applies to the sensor already running.
func (m *Manager) SetQuotas(quotas map[Entity]float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.quotas = make(map[Entity]float64, len(quotas))
	for e, v := range quotas {
		m.quotas[e] = v
	}
	m.enabled.Store(len(m.quotas) > 0)
}

func (m *Manager) has(e Entity) bool {
	_, ok := m.quotas[e]
	return ok
}

// Resolve returns the tags of the sensor the client's usage goes to and
// the quota that applies, with Kafka's precedence (highest first):
//
//  1. user and client ID        5. default user, default client ID
//  2. user, default client ID   6. default user
//  3. user                      7. client ID
//  4. default user, client ID   8. default client ID
//
// ok is false when no quota applies.
func (m *Manager) Resolve(user, clientID string) (tags Tags, limit float64, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.resolve(user, clientID)
}

func (m *Manager) resolve(user, clientID string) (Tags, float64, bool) {
	u, c := Named(user), Named(clientID)
	var tags Tags
	switch {
	case m.has(Entity{u, c}), m.has(Entity{u, DefaultPart}):
		tags = Tags{user, clientID}
	case m.has(Entity{User: u}):
		tags = Tags{User: user}
	case m.has(Entity{DefaultPart, c}), m.has(Entity{DefaultPart, DefaultPart}):
		tags = Tags{user, clientID}
	case m.has(Entity{User: DefaultPart}):
		tags = Tags{User: user}
	default:
		tags = Tags{ClientID: clientID}
	}
	limit, ok := m.limit(tags)
	return tags, limit, ok
}

// limit is the quota of a sensor's tags, as Kafka's quotaLimit: the most
// specific entity the tags can name.
func (m *Manager) limit(t Tags) (float64, bool) {
	u, c := Named(t.User), Named(t.ClientID)
	var candidates []Entity
	switch {
	case t.User != "" && t.ClientID != "":
		candidates = []Entity{{u, c}, {u, DefaultPart}, {DefaultPart, c}, {DefaultPart, DefaultPart}}
	case t.User != "":
		candidates = []Entity{{User: u}, {User: DefaultPart}}
	case t.ClientID != "":
		candidates = []Entity{{ClientID: c}, {ClientID: DefaultPart}}
	}
	for _, e := range candidates {
		if v, ok := m.quotas[e]; ok {
			return v, true
		}
	}
	return 0, false
}

// sensorFor returns the tags' sensor, made on first use, and forgets the
// sensors no one recorded in for an hour.
func (m *Manager) sensorFor(t Tags, now int64) *sensor {
	if now >= m.sweepAt {
		for k, s := range m.sensors {
			if now-s.used >= inactive.Milliseconds() {
				delete(m.sensors, k)
			}
		}
		m.sweepAt = now + time.Minute.Milliseconds()
	}
	s, ok := m.sensors[t]
	if !ok {
		s = &sensor{}
		m.sensors[t] = s
	}
	s.used = now
	return s
}

// Record adds what a request of the client used at now, and returns how
// long the client must be throttled to bring its rate back within its
// quota: 0 when it is within, or no quota applies. The throttle time is
// Kafka's: with the measured rate O over the window W and the quota T,
// (O - T) / T × W; or, when the current window already holds more than
// burstWindows of the quota, at least until the next window begins. A
// request percentage's is at most one window, as Kafka bounds it. Not for
// the controller mutation quota (Admit).
func (m *Manager) Record(user, clientID string, value float64, now time.Time) time.Duration {
	if !m.enabled.Load() {
		return 0
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	tags, limit, ok := m.resolve(user, clientID)
	if !ok {
		return 0
	}
	ms := now.UnixMilli()
	s := m.sensorFor(tags, ms)
	s.rate.record(m.cfg, value, ms)
	measured := s.rate.measure(m.cfg, ms)
	if measured <= limit && (m.kind != Produce || s.rate.cur(ms).value <= burstWindows*limit*m.cfg.Window.Seconds()) {
		return 0
	}
	d := time.Duration(math.Round((measured-limit)/limit*float64(s.rate.windowMs(m.cfg, ms)))) * time.Millisecond
	if m.kind == Produce && s.rate.cur(ms).value > burstWindows*limit*m.cfg.Window.Seconds() {
		d = max(d, time.Duration(s.rate.cur(ms).start+m.cfg.windowMs()-ms)*time.Millisecond)
	}
	if m.kind == Request {
		d = min(d, m.cfg.Window)
	}
	return d
}

// Unrecord takes back a value recorded at now: a fetch throttled after
// its bytes were counted is answered empty, so its bytes were never sent.
func (m *Manager) Unrecord(user, clientID string, value float64, now time.Time) {
	if !m.enabled.Load() {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	tags, _, ok := m.resolve(user, clientID)
	if !ok {
		return
	}
	ms := now.UnixMilli()
	m.sensorFor(tags, ms).rate.record(m.cfg, -value, ms)
}

// PerWindow is what the quota allows in one window (quota.window.size
// seconds of it), +Inf when no quota applies: the most a consumer's fetch
// may carry (the broker's capFetchBytes says why one window, where Kafka's
// getMaxValueInQuotaWindow allows all windows but one).
func (m *Manager) PerWindow(user, clientID string) float64 {
	if !m.enabled.Load() {
		return math.Inf(1)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	_, limit, ok := m.resolve(user, clientID)
	if !ok {
		return math.Inf(1)
	}
	return limit * m.cfg.Window.Seconds()
}

// Admit is the controller mutation quota's check (KIP-599): a request
// that would create or delete n partitions is refused, with the time until
// the bucket is out of debt, while earlier mutations have left the
// client's bucket below zero; otherwise its n partitions are taken, which
// may leave the bucket below zero for the next request. With strict false
// (the versions before THROTTLING_QUOTA_EXCEEDED, Kafka's permissive
// quota) nothing is refused: the partitions are taken and the time the
// debt needs is returned as a throttle time.
func (m *Manager) Admit(user, clientID string, n float64, strict bool, now time.Time) (ok bool, throttle time.Duration) {
	if !m.enabled.Load() {
		return true, 0
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	tags, limit, found := m.resolve(user, clientID)
	if !found {
		return true, 0
	}
	ms := now.UnixMilli()
	s := m.sensorFor(tags, ms)
	if strict {
		if debt := s.bucket.debtMs(m.cfg, limit, ms); debt > 0 {
			return false, time.Duration(math.Round(debt)) * time.Millisecond
		}
		s.bucket.take(m.cfg, limit, n, ms)
		return true, 0
	}
	s.bucket.take(m.cfg, limit, n, ms)
	return true, time.Duration(math.Round(s.bucket.debtMs(m.cfg, limit, ms))) * time.Millisecond
}

package telemetry

import (
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/samsa-io/samsa/internal/clock"
)

// The Store's bounds. A client past MaxStoredClients, or a series past
// either series bound, is not stored (its push is still accepted) and
// counts in samsa_telemetry_dropped_points_total. A series costs a few
// hundred bytes, so the bounds hold the store to tens of megabytes; a Java
// producer subscribed to every metric pushes about 100 to 300 series.
const (
	MaxStoredClients   = 1000
	MaxSeriesPerClient = 2000
	MaxSeries          = 100000
)

// FamilyPrefix starts the name of every re-exported client metric.
const FamilyPrefix = "samsa_client_"

// identityLabels are the labels of every re-exported series: who pushed it.
var identityLabels = []string{"client_instance_id", "client_id", "client_software_name", "client_software_version"}

// familyHelp is the help of every re-exported family: one text for all, as
// two OTLP names can sanitize to one family name and a family must have
// one help.
const familyHelp = "A client metric pushed with PushTelemetry (KIP-714), per client instance; see docs/METRICS.md."

// Store keeps the last values of the metrics clients pushed, per client
// instance, and exports them as a Prometheus collector: gauges as gauges,
// monotonic sums as counters (a delta sum accumulated over the pushes).
// It is safe for concurrent use.
type Store struct {
	clock clock.Clock
	mu    struct {
		sync.Mutex
		clients map[InstanceID]*storedClient
		series  int // over every client
		dropped uint64
	}
}

// storedClient is one client instance's series.
type storedClient struct {
	labels   []string // the identityLabels' values
	interval time.Duration
	lastPush time.Time
	series   map[string]*series // by seriesKey
}

// series is one re-exported series.
type series struct {
	family string
	kind   Kind
	desc   *prometheus.Desc
	values []string // label values, identity first
	value  float64
}

// NewStore returns an empty store that reads time from c (nil: the real
// clock).
func NewStore(c clock.Clock) *Store {
	if c == nil {
		c = clock.Real
	}
	s := &Store{clock: c}
	s.mu.clients = map[InstanceID]*storedClient{}
	return s
}

// Record stores one push's points for a client instance: a gauge's or
// cumulative sum's value replaces the last, a delta sum's adds to it (from
// zero for a series not seen before). interval is the client's push
// interval: three of them without a push and the client is forgotten.
func (s *Store) Record(id InstanceID, c Client, interval time.Duration, points []Point) {
	now := s.clock.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked(now)
	sc := s.mu.clients[id]
	if sc == nil {
		if len(s.mu.clients) >= MaxStoredClients {
			s.mu.dropped += uint64(len(points))
			return
		}
		sc = &storedClient{labels: []string{id.String(), c.ClientID, c.SoftwareName, c.SoftwareVersion}, series: map[string]*series{}}
		s.mu.clients[id] = sc
	}
	sc.interval, sc.lastPush = interval, now
	for _, p := range points {
		if !s.recordLocked(sc, p) {
			s.mu.dropped++
		}
	}
}

// recordLocked applies one point; false when it is dropped.
func (s *Store) recordLocked(sc *storedClient, p Point) bool {
	family := FamilyName(p.Name, p.Kind)
	names, values := seriesLabels(p.Attrs)
	key := seriesKey(family, names, values)
	sr := sc.series[key]
	if sr != nil && sr.kind != p.Kind {
		// The client changed the metric's type: start the series over.
		delete(sc.series, key)
		s.mu.series--
		sr = nil
	}
	if sr == nil {
		if len(sc.series) >= MaxSeriesPerClient || s.mu.series >= MaxSeries {
			return false
		}
		sr = &series{
			family: family,
			kind:   p.Kind,
			desc:   prometheus.NewDesc(family, familyHelp, append(slices.Clone(identityLabels), names...), nil),
			values: append(slices.Clone(sc.labels), values...),
		}
		sc.series[key] = sr
		s.mu.series++
	}
	if p.Delta {
		sr.value += p.Value
	} else {
		sr.value = p.Value
	}
	return true
}

// Forget drops a client instance's series: it said it is terminating.
func (s *Store) Forget(id InstanceID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.forgetLocked(id)
}

func (s *Store) forgetLocked(id InstanceID) {
	if sc, ok := s.mu.clients[id]; ok {
		s.mu.series -= len(sc.series)
		delete(s.mu.clients, id)
	}
}

// expireLocked forgets the clients that have not pushed for three of their
// push intervals.
func (s *Store) expireLocked(now time.Time) {
	for id, sc := range s.mu.clients {
		if now.Sub(sc.lastPush) > 3*sc.interval {
			s.forgetLocked(id)
		}
	}
}

// Stats are the store's own counts.
type Stats struct {
	Clients, Series int
	Dropped         uint64
}

// Stats returns the store's counts, after forgetting the expired clients.
func (s *Store) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked(s.clock.Now())
	return Stats{Clients: len(s.mu.clients), Series: s.mu.series, Dropped: s.mu.dropped}
}

// Describe sends nothing: the store is an unchecked collector, as the
// families come and go with what clients push.
func (*Store) Describe(chan<- *prometheus.Desc) {}

// Collect exports every stored series. A family takes the type of the
// first series collected; a series of another type under the same name
// (two clients disagreeing) is left out of the scrape rather than fail it.
func (s *Store) Collect(ch chan<- prometheus.Metric) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked(s.clock.Now())
	kinds := map[string]Kind{}
	for _, id := range slices.SortedFunc(maps.Keys(s.mu.clients), func(a, b InstanceID) int { return strings.Compare(string(a[:]), string(b[:])) }) {
		for _, sr := range s.mu.clients[id].series {
			if k, ok := kinds[sr.family]; ok && k != sr.kind {
				continue
			}
			kinds[sr.family] = sr.kind
			vt := prometheus.GaugeValue
			if sr.kind == Counter {
				vt = prometheus.CounterValue
			}
			// NewConstMetric, not MustNewConstMetric: a label value that is
			// not UTF-8 drops its series, never the scrape.
			if m, err := prometheus.NewConstMetric(sr.desc, vt, sr.value, sr.values...); err == nil {
				ch <- m
			}
		}
	}
}

// FamilyName is the Prometheus name a pushed metric is exported under:
// FamilyPrefix, then the OTLP name with every character Prometheus does
// not allow (dots among them) turned into '_', and for a counter the
// "_total" suffix Prometheus' conventions (and OpenTelemetry's Prometheus
// mapping) give counters, unless it ends so already.
func FamilyName(otlpName string, k Kind) string {
	name := FamilyPrefix + sanitize(otlpName)
	if k == Counter && !strings.HasSuffix(name, "_total") {
		name += "_total"
	}
	return name
}

// sanitize keeps [a-zA-Z0-9_] and turns anything else into '_'.
func sanitize(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			b[i] = '_'
		}
	}
	return string(b)
}

// seriesLabels turns a point's attributes into label names and values,
// sorted by name: each key sanitized, prefixed with '_' when it starts
// with a digit, and with "attr_" when it would take an identity label's
// name or Prometheus' reserved "__" prefix. Of two keys that sanitize to
// one name the first is kept.
func seriesLabels(attrs []Attr) (names, values []string) {
	byName := map[string]string{}
	for _, a := range attrs {
		n := sanitize(a.Key)
		switch {
		case n == "":
			continue
		case n[0] >= '0' && n[0] <= '9':
			n = "_" + n
		}
		if strings.HasPrefix(n, "__") || slices.Contains(identityLabels, n) {
			n = "attr_" + n
		}
		if _, dup := byName[n]; !dup {
			byName[n] = a.Value
		}
	}
	names = slices.Sorted(maps.Keys(byName))
	for _, n := range names {
		values = append(values, byName[n])
	}
	return names, values
}

// seriesKey identifies a series within a client: its family and labels.
func seriesKey(family string, names, values []string) string {
	var b strings.Builder
	b.WriteString(family)
	for i := range names {
		b.WriteByte(0)
		b.WriteString(names[i])
		b.WriteByte(0)
		b.WriteString(values[i])
	}
	return b.String()
}

package console

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

const (
	// overviewKeep is how much of the charts' history is kept in memory.
	overviewKeep = 10 * time.Minute
	// overviewLinger is how long a sampler runs after its last viewer
	// (a page load or an open event stream) went away.
	overviewLinger = time.Minute
	// overviewMaxGapIntervals: a rate over a span longer than this many
	// intervals (samples failed or were late) is not drawn; the next
	// sample starts a new baseline instead.
	overviewMaxGapIntervals = 4
	// overviewMaxLatencies bounds the latencies kept per broker between
	// two samples.
	overviewMaxLatencies = 4096
)

// overviewTP keys a partition; overviewGTP a group's committed offset.
type overviewTP struct {
	Topic     string
	Partition int32
}

type overviewGTP struct {
	Group string
	overviewTP
}

// overviewRate is the per-second growth from prev to cur: the sum, over
// the keys in both, of cur-prev, each clamped at 0 (retention deleting
// bytes, an offset reset, a recreated topic never count as negative
// traffic), divided by elapsed. Keys new in cur have no baseline and are
// left out. ok is false when there is no baseline (prev nil) or the span
// is not positive or longer than maxGap.
func overviewRate[K comparable](prev, cur map[K]int64, elapsed, maxGap time.Duration) (rate float64, ok bool) {
	if prev == nil || cur == nil || elapsed <= 0 || elapsed > maxGap {
		return 0, false
	}
	var sum int64
	for k, v := range cur {
		if p, had := prev[k]; had && v > p {
			sum += v - p
		}
	}
	return float64(sum) / elapsed.Seconds(), true
}

// overviewCounter is one sampled counter: its last good reading and
// when it was taken, the baseline of the next rate.
type overviewCounter struct {
	at   time.Time
	vals map[any]int64
}

// next takes a new reading (nil when it failed: the baseline stays, so
// the next good reading spans the gap) and answers the rate since the
// baseline, when there is one close enough.
func (oc *overviewCounter) next(at time.Time, vals map[any]int64, maxGap time.Duration) (float64, bool) {
	if vals == nil {
		return 0, false
	}
	rate, ok := overviewRate(oc.vals, vals, at.Sub(oc.at), maxGap)
	oc.at, oc.vals = at, vals
	return rate, ok
}

// overviewLatency collects the sampler's client's request latencies per
// broker (a kgo HookBrokerE2E) between two samples.
type overviewLatency struct {
	mu sync.Mutex
	by map[int32][]time.Duration
}

func (l *overviewLatency) OnBrokerE2E(meta kgo.BrokerMetadata, _ int16, e2e kgo.BrokerE2E) {
	if e2e.Err() != nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.by == nil {
		l.by = map[int32][]time.Duration{}
	}
	if d := l.by[meta.NodeID]; len(d) < overviewMaxLatencies {
		l.by[meta.NodeID] = append(d, e2e.DurationE2E())
	}
}

// overviewLatStat is a p50 and a max, in milliseconds.
type overviewLatStat struct {
	P50, Max float64
	N        int
}

// take answers the p50 and max per broker and over all brokers since
// the last take, and starts afresh.
func (l *overviewLatency) take() (all overviewLatStat, by map[int32]overviewLatStat) {
	l.mu.Lock()
	got := l.by
	l.by = nil
	l.mu.Unlock()
	by = map[int32]overviewLatStat{}
	var every []time.Duration
	for id, ds := range got {
		every = append(every, ds...)
		if id >= 0 { // seed brokers have negative IDs until known
			by[id] = overviewLatStats(ds)
		}
	}
	return overviewLatStats(every), by
}

func overviewLatStats(ds []time.Duration) overviewLatStat {
	if len(ds) == 0 {
		return overviewLatStat{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	return overviewLatStat{P50: ms(s[(len(s)-1)/2]), Max: ms(s[len(s)-1]), N: len(s)}
}

// overviewPoint is one sample's rates; a NaN-free "has" flag per series
// marks a gap (the reading failed or had no baseline).
type overviewPoint struct {
	At                         time.Time
	RecIn, RecOut, BytesIn     float64
	HasRecIn, HasRecOut, HasBy bool
	Lat                        overviewLatStat
	LatBy                      map[int32]overviewLatStat
	// From the Samsa brokers' /metrics, when AdminURLs are set.
	BrokerIn, BrokerOut, ProduceMs, FetchMs         float64
	HasBrokerIn, HasBrokerOut, HasProduce, HasFetch bool
}

// overviewSampler samples one user's view of the cluster every
// SampleInterval while someone watches, with a client of its own (the
// user's identity), keeping overviewKeep of points.
type overviewSampler struct {
	hub      *overviewHub
	user     string
	password string // for the admin listeners' /metrics, as the user
	opts     []kgo.Opt
	linger   time.Duration

	mu      sync.Mutex
	points  []overviewPoint
	health  *overviewHealth // the last sample's health; nil before
	watched time.Time
	subs    map[chan struct{}]struct{}
}

// watch marks the sampler watched now.
func (s *overviewSampler) watch() {
	s.mu.Lock()
	s.watched = time.Now()
	s.mu.Unlock()
}

// subscribe answers a channel told (without blocking) of each new
// sample, and its cancel.
func (s *overviewSampler) subscribe() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	s.mu.Lock()
	s.subs[ch] = struct{}{}
	s.mu.Unlock()
	return ch, func() {
		s.mu.Lock()
		delete(s.subs, ch)
		s.mu.Unlock()
	}
}

// snapshot is the points so far and the last health.
func (s *overviewSampler) snapshot() ([]overviewPoint, *overviewHealth) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.points), s.health
}

// run samples until nobody watched for linger or the console closes.
func (s *overviewSampler) run() {
	c := s.hub.c
	lat := &overviewLatency{}
	cl, err := kgo.NewClient(append(append([]kgo.Opt{}, s.opts...), kgo.WithHooks(lat))...)
	if err != nil {
		c.log.Warn("overview sampler: client", "err", err)
		s.hub.drop(s)
		return
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-c.closed:
			cancel()
		case <-ctx.Done():
		}
	}()
	maxGap := overviewMaxGapIntervals * c.cfg.SampleInterval
	var recIn, recOut, bytesIn overviewCounter
	var brokers overviewBrokerCounters
	tick := time.NewTicker(c.cfg.SampleInterval)
	defer tick.Stop()
	for {
		s.sample(ctx, cl, adm, lat, &recIn, &recOut, &bytesIn, &brokers, maxGap)
		select {
		case <-ctx.Done():
			s.hub.drop(s)
			return
		case <-tick.C:
		}
		s.mu.Lock()
		idle := time.Since(s.watched) > s.linger
		s.mu.Unlock()
		if idle && s.hub.dropIfIdle(s) {
			return
		}
	}
}

// sample takes one sample: the cluster's health, the end offsets of all
// partitions, the committed offsets of all groups, and the latencies
// the client measured since the last one.
func (s *overviewSampler) sample(ctx context.Context, cl *kgo.Client, adm *kadm.Client, lat *overviewLatency,
	recIn, recOut, bytesIn *overviewCounter, brokers *overviewBrokerCounters, maxGap time.Duration) {
	c := s.hub.c
	rctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	h, err := s.hub.collect(rctx, s.user, cl, adm)
	at := time.Now()
	p := overviewPoint{At: at}
	if err == nil {
		if ends := overviewEndOffsets(rctx, adm, h.topicNames); ends != nil {
			p.RecIn, p.HasRecIn = recIn.next(at, ends, maxGap)
		}
		if sizes := h.leaderSizes; sizes != nil {
			p.BytesIn, p.HasBy = bytesIn.next(at, sizes, maxGap)
		}
	} else {
		// Keep showing the last good look, marked as failed now.
		s.mu.Lock()
		prev := s.health
		s.mu.Unlock()
		h = &overviewHealth{Controller: -1, QuorumLeader: -1}
		if prev != nil {
			cp := *prev
			h = &cp
		}
		h.Err, h.At = err.Error(), at
	}
	if committed := overviewCommitted(rctx, adm); committed != nil {
		p.RecOut, p.HasRecOut = recOut.next(at, committed, maxGap)
	}
	p.Lat, p.LatBy = lat.take()
	if len(c.cfg.AdminURLs) > 0 {
		scraped, err := overviewScrape(rctx, c.http, c.cfg.AdminURLs, s.user, s.password)
		if err != nil {
			c.log.Debug("overview: broker metrics", "err", err)
		}
		brokers.next(time.Now(), scraped, maxGap, &p)
	}
	if ctx.Err() != nil {
		return
	}
	s.mu.Lock()
	s.points = append(s.points, p)
	cut := at.Add(-overviewKeep)
	i := 0
	for i < len(s.points) && s.points[i].At.Before(cut) {
		i++
	}
	s.points = s.points[i:]
	s.health = h
	for ch := range s.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	s.mu.Unlock()
}

// overviewEndOffsets is the end offset of every partition of topics
// (one ListOffsets round); nil when it failed.
func overviewEndOffsets(ctx context.Context, adm *kadm.Client, topics []string) map[any]int64 {
	out := map[any]int64{}
	if len(topics) == 0 {
		return out
	}
	listed, err := adm.ListEndOffsets(ctx, topics...)
	if err != nil && len(listed) == 0 {
		return nil
	}
	listed.Each(func(o kadm.ListedOffset) {
		if o.Err == nil && o.Offset >= 0 {
			out[overviewTP{o.Topic, o.Partition}] = o.Offset
		}
	})
	return out
}

// overviewCommitted is every group's committed offsets (one ListGroups,
// one OffsetFetch per coordinator); nil when listing groups failed.
func overviewCommitted(ctx context.Context, adm *kadm.Client) map[any]int64 {
	groups, err := adm.ListGroups(ctx)
	if err != nil {
		return nil
	}
	out := map[any]int64{}
	names := groups.Groups()
	if len(names) == 0 {
		return out
	}
	for g, r := range adm.FetchManyOffsets(ctx, names...) {
		if r.Err != nil {
			continue
		}
		r.Fetched.Each(func(o kadm.OffsetResponse) {
			if o.Err == nil && o.At >= 0 {
				out[overviewGTP{g, overviewTP{o.Topic, o.Partition}}] = o.At
			}
		})
	}
	return out
}

// overviewHub holds a console's samplers (one per user) and the
// min.insync.replicas cache.
type overviewHub struct {
	c      *Console
	linger time.Duration // how long a sampler outlives its last viewer

	mu       sync.Mutex
	samplers map[string]*overviewSampler
	minISR   map[string]*overviewMinISR // by user
}

func newOverviewHub(c *Console) *overviewHub {
	return &overviewHub{c: c, linger: overviewLinger, samplers: map[string]*overviewSampler{}, minISR: map[string]*overviewMinISR{}}
}

// sampler is the running sampler of the request's user, started when
// none runs, and marked watched. It is nil once the console closed.
func (h *overviewHub) sampler(s *session) *overviewSampler {
	h.mu.Lock()
	defer h.mu.Unlock()
	if sm := h.samplers[s.user]; sm != nil {
		sm.watch()
		return sm
	}
	select {
	case <-h.c.closed:
		return nil
	default:
	}
	sm := &overviewSampler{hub: h, user: s.user, password: s.password, opts: s.opts, linger: h.linger,
		watched: time.Now(), subs: map[chan struct{}]struct{}{}}
	h.samplers[s.user] = sm
	// Added under h.mu after checking closed: Close's Wait sees it.
	h.c.wg.Add(1)
	go func() {
		defer h.c.wg.Done()
		sm.run()
	}()
	return sm
}

// drop forgets sm (it stopped).
func (h *overviewHub) drop(sm *overviewSampler) {
	h.mu.Lock()
	if h.samplers[sm.user] == sm {
		delete(h.samplers, sm.user)
	}
	h.mu.Unlock()
}

// dropIfIdle forgets sm unless a viewer came back; under h.mu so a
// viewer either finds it before (and it keeps running) or not at all.
func (h *overviewHub) dropIfIdle(sm *overviewSampler) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	sm.mu.Lock()
	idle := time.Since(sm.watched) > sm.linger
	sm.mu.Unlock()
	if idle && h.samplers[sm.user] == sm {
		delete(h.samplers, sm.user)
	}
	return idle
}

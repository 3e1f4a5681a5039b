package streams

import (
	"fmt"

	"github.com/samsa-io/samsa/streams/serde"
)

// TimeWindowedStream is a grouped stream cut into time windows or sliding
// windows, ready to aggregate per key and window (Kafka's
// TimeWindowedKStream). Its aggregations make a Table keyed by
// Windowed[K].
type TimeWindowedStream[K, V any] struct {
	g       *GroupedStream[K, V]
	windows TimeWindows
	sliding *SlidingWindows
}

// WindowedBy cuts the grouped stream into tumbling or hopping windows.
func (g *GroupedStream[K, V]) WindowedBy(w TimeWindows) *TimeWindowedStream[K, V] {
	g.s.b.fail(w.err)
	return &TimeWindowedStream[K, V]{g: g, windows: w}
}

// WindowedBySliding cuts the grouped stream into sliding windows (Kafka's
// windowedBy(SlidingWindows)).
func (g *GroupedStream[K, V]) WindowedBySliding(w SlidingWindows) *TimeWindowedStream[K, V] {
	g.s.b.fail(w.err)
	return &TimeWindowedStream[K, V]{g: g, sliding: &w}
}

// aggregation is an aggregation's functions on runtime values. init's
// result may be nil (Kafka's reduce starts from null); add gets the
// aggregate so far, never nil except after a nil init.
type aggregation struct {
	init  func() any
	add   func(k, v, agg any) any
	merge func(k, a, b any) any // sessions: the merger
}

func countAggregation() aggregation {
	return aggregation{
		init:  func() any { return int64(0) },
		add:   func(_, _, agg any) any { return agg.(int64) + 1 },
		merge: func(_, a, b any) any { return a.(int64) + b.(int64) },
	}
}

// reduceAggregation is Kafka's aggregatorForReducer: the first value is
// the first aggregate (a null value too, as Kafka's).
func reduceAggregation[V any](fn func(agg, value V) V) aggregation {
	add := func(_, v, agg any) any {
		if agg == nil {
			return v
		}
		return fn(agg.(V), as[V](v))
	}
	return aggregation{
		init: func() any { return nil },
		add:  add,
		// Kafka's mergerForAggregator: the older session is the aggregate
		// the newer one's value is reduced into.
		merge: func(k, a, b any) any { return add(k, b, a) },
	}
}

func userAggregation[K, V, VA any](init func() VA, fn func(key K, value V, agg VA) VA) aggregation {
	return aggregation{
		init: func() any { return init() },
		add:  func(k, v, agg any) any { return fn(as[K](k), as[V](v), as[VA](agg)) },
	}
}

// WindowedCount counts each key's records per window (Kafka's
// TimeWindowedKStream#count). A record with a null key is dropped; with
// time windows a null value counts (Kafka's windowed count does not check
// it), with sliding windows it is dropped.
//
// The windowed aggregations are functions, not methods: a method of a
// generic type cannot return a table keyed by Windowed[K] (Go refuses the
// instantiation cycle through that table's own grouping methods).
func WindowedCount[K, V any](w *TimeWindowedStream[K, V], m ...Materialized[K, int64]) *Table[Windowed[K], int64] {
	return timeWindowedAggregate(w, "KSTREAM-AGGREGATE-", m, true, serde.Int64(), countAggregation())
}

// WindowedReduce combines each key's values per window with fn; a window's
// first value is its first aggregate.
func WindowedReduce[K, V any](w *TimeWindowedStream[K, V], fn func(agg, value V) V, m ...Materialized[K, V]) *Table[Windowed[K], V] {
	return timeWindowedAggregate(w, "KSTREAM-REDUCE-", m, false, w.g.s.valueSerde, reduceAggregation(fn))
}

// WindowedAggregate folds each key's values per window into an aggregate
// starting from init() (Kafka's TimeWindowedKStream#aggregate).
func WindowedAggregate[K, V, VA any](w *TimeWindowedStream[K, V], init func() VA, fn func(key K, value V, agg VA) VA, m ...Materialized[K, VA]) *Table[Windowed[K], VA] {
	return timeWindowedAggregate(w, "KSTREAM-AGGREGATE-", m, false, nil, userAggregation(init, fn))
}

// windowedStoreSpec is the store a windowed aggregation keeps.
type windowedStoreSpec struct {
	kind       storeKind
	retention  int64 // the default
	minimum    int64 // the least retention the windows need
	windowSize int64
	closeAfter int64
	what       string // Kafka's words for the error
}

func timeWindowedAggregate[K, V, VA any](w *TimeWindowedStream[K, V], prefix string, m []Materialized[K, VA], countQuirk bool, defaultVS serde.Serde[VA], agg aggregation) *Table[Windowed[K], VA] {
	spec := windowedStoreSpec{kind: windowStore}
	if w.sliding != nil {
		sw := *w.sliding
		spec.retention = 2*sw.timeDifference + sw.grace
		spec.minimum = spec.retention
		spec.windowSize = sw.timeDifference
		spec.closeAfter = sw.grace
		spec.what = fmt.Sprintf("must be no smaller than 2 * time difference plus the grace period. Got time difference=[%d], grace=[%d]", sw.timeDifference, sw.grace)
	} else {
		tw := w.windows
		spec.retention = tw.size + tw.grace
		spec.minimum = spec.retention
		spec.windowSize = tw.size
		spec.closeAfter = tw.grace
		spec.what = fmt.Sprintf("must be no smaller than its window size plus the grace period. Got size=[%d], grace=[%d]", tw.size, tw.grace)
	}
	// Kafka's sliding windowed count has no burned name
	// (SlidingWindowedKStreamImpl.count); the time windowed one has.
	countQuirk = countQuirk && w.sliding == nil
	return windowedAggregate(w.g, prefix, m, countQuirk, defaultVS, spec, func(def *storeDef, tn *tableNode) func() processor {
		mk := windowedKey[K]
		if w.sliding != nil {
			sw := *w.sliding
			return func() processor {
				return &slidingWindowAggProc{windows: sw, agg: agg, def: def, tn: tn, mkKey: mk, observed: -1}
			}
		}
		tw := w.windows
		return func() processor {
			return &timeWindowAggProc{windows: tw, agg: agg, def: def, tn: tn, mkKey: mk, observed: -1}
		}
	})
}

func windowedKey[K any](k any, w Window) any { return Windowed[K]{Key: as[K](k), Window: w} }

// windowedAggregate adds a windowed aggregation's store and processor,
// named as Kafka names them: the store first, then the processor, then the
// repartition topic's nodes.
func windowedAggregate[K, V, VA any](g *GroupedStream[K, V], prefix string, m []Materialized[K, VA], countQuirk bool, defaultVS serde.Serde[VA], spec windowedStoreSpec, newProc func(def *storeDef, tn *tableNode) func() processor) *Table[Windowed[K], VA] {
	b := g.s.b
	mat, err := optional(m)
	b.fail(err)
	if countQuirk && len(m) == 1 && mat.StoreName == "" {
		// Kafka's count(Materialized) takes a store name it never uses
		// before the one it does: the numbering of every later node
		// depends on it.
		b.newStoreName(prefix)
	}
	storeName := mat.StoreName
	if storeName == "" {
		storeName = b.newStoreName(prefix)
	}
	retention := spec.retention
	switch {
	case mat.Retention < 0:
		b.failf("store %s: retention must not be negative, got %s", storeName, mat.Retention)
	case mat.Retention > 0:
		retention = mat.Retention.Milliseconds()
		if retention < spec.minimum {
			kind := "window"
			if spec.kind == sessionStore {
				kind = "session"
			}
			b.failf("the retention period of the %s store %s %s, retention=[%d]", kind, storeName, spec.what, retention)
		}
	}
	ks := serdeOr(b, firstSerde(mat.Key, firstSerde(g.grouped.Key, g.s.keySerde)))
	vs := serdeOr(b, firstSerde(mat.Value, firstSerde(defaultVS, defaultOrNil[VA]())))
	name := b.newName(prefix)
	source := g.aggregateSource(storeName)
	def := &storeDef{name: storeName, kind: spec.kind, timestamped: spec.kind == windowStore, inMemory: mat.InMemory,
		logging: !mat.LoggingDisabled, logConfig: mat.LogConfig, caching: !mat.CachingDisabled,
		retention: retention, windowSize: spec.windowSize, segmentInterval: max(retention/2, 60_000),
		keySerde: box(ks), valueSerde: box(vs)}
	b.addStore(def)
	tn := &tableNode{store: storeName, windowed: &windowedTable{closeAfter: spec.closeAfter,
		windowEnd: func(key any) int64 { return key.(Windowed[K]).Window.End }}}
	tn.storesForGetter = func() []string { return []string{storeName} }
	if spec.kind == sessionStore {
		tn.getter = sessionGetter[K](storeName)
	} else {
		tn.getter = windowGetter[K](storeName)
	}
	b.addProcessor(name, []string{source}, newProc(def, tn), storeName)
	return &Table[Windowed[K], VA]{b: b, name: name, keySerde: windowedSerde(ks, spec), valueSerde: vs, tn: tn}
}

// windowedSerde is the windowed table's key serde, as Kafka's: the
// session layout for sessions, else the time-window layout that reads the
// end back as start + size (FullTimeWindowedSerde; the time difference
// for sliding windows).
func windowedSerde[K any](ks serde.Serde[K], spec windowedStoreSpec) serde.Serde[Windowed[K]] {
	if ks == nil {
		return nil
	}
	if spec.kind == sessionStore {
		return serde.SessionWindowed(ks)
	}
	return serde.TimeWindowed(ks, spec.windowSize)
}

// windowGetter reads a windowed table's row from its window store (Kafka's
// KStreamWindowAggregateValueGetter).
func windowGetter[K any](store string) func(nc *nodeContext) (valueGetter, error) {
	return func(nc *nodeContext) (valueGetter, error) {
		s, err := nc.task.storeFor(store)
		if err != nil {
			return nil, err
		}
		ws := s.(windowState)
		return func(key any) (any, int64, error) {
			wk := key.(Windowed[K])
			v, ts, ok, err := ws.fetch(wk.Key, wk.Window.Start)
			if !ok || err != nil {
				return nil, -1, err
			}
			return v, ts, nil
		}, nil
	}
}

// timeWindowAggProc is Kafka's KStreamWindowAggregate (emitting on each
// window update): a record updates every window holding it that has not
// closed; a window closes when the processor's observed stream time passes
// its end plus the grace period.
type timeWindowAggProc struct {
	nc       *nodeContext
	def      *storeDef
	tn       *tableNode
	store    windowState
	windows  TimeWindows
	agg      aggregation
	mkKey    func(k any, w Window) any
	observed int64 // Kafka's observedStreamTime: this processor's largest record timestamp
	cached   bool  // the store's cache forwards (Kafka's TimestampedTupleForwarder)
}

func (p *timeWindowAggProc) init(nc *nodeContext) error {
	p.nc = nc
	s, err := nc.store(p.def.name)
	if err != nil {
		return err
	}
	ws, ok := s.(windowState)
	if !ok {
		return fmt.Errorf("streams: store %s is a %T, not a window store", p.def.name, s)
	}
	p.store = ws
	if cs, ok := s.(cachingWindowState); ok && cs.caching() {
		p.cached = true
		cs.setFlushListener(func(key any, start int64, newV, oldV any, ts int64) error {
			if !p.tn.sendOld {
				oldV = nil
			}
			w := Window{Start: start, End: start + p.windows.size}
			return nc.forward(rec{key: p.mkKey(key, w), value: change{newV: newV, oldV: oldV}, ts: ts})
		})
	}
	return nil
}

func (p *timeWindowAggProc) close() error { return nil }

func (p *timeWindowAggProc) process(r rec) error {
	if r.key == nil {
		p.nc.task.dropped("a windowed aggregation's record with a null key")
		return nil
	}
	p.observed = max(p.observed, r.ts)
	closeTime := p.observed - p.windows.grace
	for _, w := range p.windows.windowsFor(r.ts) {
		if w.End <= closeTime {
			// Kafka counts a drop per expired window of the record.
			p.nc.task.dropped("a record for an expired window")
			continue
		}
		if err := p.update(r, w); err != nil {
			return err
		}
	}
	return nil
}

func (p *timeWindowAggProc) update(r rec, w Window) error {
	old, oldTS, found, err := p.store.fetch(r.key, w.Start)
	if err != nil {
		return err
	}
	agg, ts := old, r.ts
	if found {
		ts = max(r.ts, oldTS)
	} else {
		agg = p.agg.init()
	}
	newAgg := p.agg.add(r.key, r.value, agg)
	if err := p.store.put(r.key, w.Start, newAgg, ts); err != nil {
		return err
	}
	if p.cached {
		return nil
	}
	return p.nc.forward(rec{key: p.mkKey(r.key, w), value: p.change(newAgg, old, found), ts: ts, headers: r.headers})
}

// change is the table change a windowed aggregation forwards. The old
// value of a new window is null, as Kafka's caching store forwards it (its
// default); Kafka without caching would send the initial aggregate.
func (p *timeWindowAggProc) change(newAgg, old any, found bool) change {
	if !p.tn.sendOld || !found {
		old = nil
	}
	return change{newV: newAgg, oldV: old}
}

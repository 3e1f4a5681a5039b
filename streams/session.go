package streams

import (
	"fmt"

	"github.com/samsa-io/samsa/streams/serde"
)

// SessionWindowedStream is a grouped stream cut into sessions, ready to
// aggregate per key and session (Kafka's SessionWindowedKStream). Its
// aggregations make a Table keyed by Windowed[K], the window being the
// session's first and last record times (both included).
type SessionWindowedStream[K, V any] struct {
	g       *GroupedStream[K, V]
	windows SessionWindows
}

// WindowedBySession cuts the grouped stream into sessions (Kafka's
// windowedBy(SessionWindows)).
func (g *GroupedStream[K, V]) WindowedBySession(w SessionWindows) *SessionWindowedStream[K, V] {
	g.s.b.fail(w.err)
	return &SessionWindowedStream[K, V]{g: g, windows: w}
}

// SessionCount counts each key's records per session (a record with a
// null key is dropped, a null value counts, as Kafka's).
func SessionCount[K, V any](s *SessionWindowedStream[K, V], m ...Materialized[K, int64]) *Table[Windowed[K], int64] {
	return sessionAggregate(s, "KSTREAM-AGGREGATE-", m, true, serde.Int64(), countAggregation())
}

// SessionReduce combines each key's values per session with fn; merging
// two sessions reduces the later one's aggregate into the earlier one's.
func SessionReduce[K, V any](s *SessionWindowedStream[K, V], fn func(agg, value V) V, m ...Materialized[K, V]) *Table[Windowed[K], V] {
	return sessionAggregate(s, "KSTREAM-REDUCE-", m, false, s.g.s.valueSerde, reduceAggregation(fn))
}

// SessionAggregate folds each key's values per session into an aggregate
// starting from init(); merger combines the aggregates of sessions that a
// record joins into one (Kafka's SessionWindowedKStream#aggregate).
func SessionAggregate[K, V, VA any](s *SessionWindowedStream[K, V], init func() VA, fn func(key K, value V, agg VA) VA, merger func(key K, agg1, agg2 VA) VA, m ...Materialized[K, VA]) *Table[Windowed[K], VA] {
	agg := userAggregation(init, fn)
	agg.merge = func(k, a, b any) any { return merger(as[K](k), as[VA](a), as[VA](b)) }
	return sessionAggregate(s, "KSTREAM-AGGREGATE-", m, false, nil, agg)
}

func sessionAggregate[K, V, VA any](s *SessionWindowedStream[K, V], prefix string, m []Materialized[K, VA], countQuirk bool, defaultVS serde.Serde[VA], agg aggregation) *Table[Windowed[K], VA] {
	w := s.windows
	spec := windowedStoreSpec{kind: sessionStore, retention: w.gap + w.grace, minimum: w.gap + w.grace,
		closeAfter: w.gap + w.grace,
		what:       fmt.Sprintf("must be no smaller than the session inactivity gap plus the grace period. Got gap=[%d], grace=[%d]", w.gap, w.grace)}
	return windowedAggregate(s.g, prefix, m, countQuirk, defaultVS, spec, func(def *storeDef, tn *tableNode) func() processor {
		return func() processor {
			return &sessionAggProc{windows: w, agg: agg, def: def, tn: tn, mkKey: windowedKey[K], observed: -1}
		}
	})
}

// sessionGetter reads a session table's row (Kafka's
// KTableSessionWindowValueGetter); sessions carry no timestamp of their
// own, so the row's is the session's end.
func sessionGetter[K any](store string) func(nc *nodeContext) (valueGetter, error) {
	return func(nc *nodeContext) (valueGetter, error) {
		s, err := nc.task.storeFor(store)
		if err != nil {
			return nil, err
		}
		ss := s.(sessionState)
		return func(key any) (any, int64, error) {
			wk := key.(Windowed[K])
			v, ok, err := ss.fetchSession(wk.Key, wk.Window)
			if !ok || err != nil {
				return nil, -1, err
			}
			return v, wk.Window.End, nil
		}, nil
	}
}

// sessionAggProc is Kafka's KStreamSessionWindowAggregate (emitting on
// each update): a record joins every session of its key within the
// inactivity gap of it; when that merges sessions (or grows one), each
// session merged away is removed and forwarded as a tombstone before the
// merged session is forwarded. Records are stamped with their session's
// end. A session that ends before observed stream time minus grace minus
// gap is closed: a record that would only reach it is dropped.
type sessionAggProc struct {
	nc       *nodeContext
	def      *storeDef
	tn       *tableNode
	store    sessionState
	windows  SessionWindows
	agg      aggregation
	mkKey    func(k any, w Window) any
	observed int64
	cached   bool // the store's cache forwards (Kafka's TimestampedTupleForwarder)
}

func (p *sessionAggProc) init(nc *nodeContext) error {
	p.nc = nc
	s, err := nc.store(p.def.name)
	if err != nil {
		return err
	}
	ss, ok := s.(sessionState)
	if !ok {
		return fmt.Errorf("streams: store %s is a %T, not a session store", p.def.name, s)
	}
	p.store = ss
	if cs, ok := s.(cachingSessionState); ok && cs.caching() {
		p.cached = true
		cs.setFlushListener(func(key any, w Window, newV, oldV any) error {
			if !p.tn.sendOld {
				oldV = nil
			}
			return nc.forward(rec{key: p.mkKey(key, w), value: change{newV: newV, oldV: oldV}, ts: w.End})
		})
	}
	return nil
}

func (p *sessionAggProc) close() error { return nil }

func (p *sessionAggProc) process(r rec) error {
	if r.key == nil {
		p.nc.task.dropped("a session aggregation's record with a null key")
		return nil
	}
	p.observed = max(p.observed, r.ts)
	closeTime := p.observed - p.windows.grace - p.windows.gap
	own := Window{Start: r.ts, End: r.ts}
	merged, err := p.store.findSessions(r.key, r.ts-p.windows.gap, r.ts+p.windows.gap)
	if err != nil {
		return err
	}
	agg := p.agg.init()
	session := own
	for _, s := range merged {
		agg = p.agg.merge(r.key, agg, s.value)
		session = Window{Start: min(session.Start, s.window.Start), End: max(session.End, s.window.End)}
	}
	if session.End < closeTime {
		p.nc.task.dropped("a record for an expired session")
		return nil
	}
	if session != own {
		for _, s := range merged {
			if err := p.store.remove(r.key, s.window); err != nil {
				return err
			}
			if err := p.forward(r, s.window, nil, s.value); err != nil {
				return err
			}
		}
	}
	agg = p.agg.add(r.key, r.value, agg)
	if err := p.store.put(r.key, session, agg); err != nil {
		return err
	}
	return p.forward(r, session, agg, nil)
}

func (p *sessionAggProc) forward(r rec, w Window, newV, oldV any) error {
	if p.cached {
		// The cache forwards the merged sessions' removals and the new
		// session when it flushes, one update per session.
		return nil
	}
	if !p.tn.sendOld {
		oldV = nil
	}
	// Kafka makes a new record here: it carries no headers.
	return p.nc.forward(rec{key: p.mkKey(r.key, w), value: change{newV: newV, oldV: oldV}, ts: w.End})
}

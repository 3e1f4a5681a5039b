package streams

import (
	"fmt"
	"sync"
	"time"

	"github.com/samsa-io/samsa/streams/serde"
)

// JoinWindows says which records of two streams join (Kafka's
// JoinWindows): a left record at t joins the right records of its key
// within [t-Before, t+After]; records arriving up to Grace after a window
// closed still join. Left and outer joins emit a record without partner
// only once its window closed (Kafka 3.1+, KIP-633's spurious result fix).
type JoinWindows struct {
	BeforeMs, AfterMs, GraceMs int64
}

// JoinWindowsOfTimeDifferenceWithNoGrace joins records at most d apart,
// either way, with no grace (JoinWindows.ofTimeDifferenceWithNoGrace).
func JoinWindowsOfTimeDifferenceWithNoGrace(d time.Duration) JoinWindows {
	return JoinWindows{BeforeMs: d.Milliseconds(), AfterMs: d.Milliseconds()}
}

// JoinWindowsOfTimeDifferenceAndGrace joins records at most d apart,
// accepting records up to grace late (JoinWindows.ofTimeDifferenceAndGrace).
func JoinWindowsOfTimeDifferenceAndGrace(d, grace time.Duration) JoinWindows {
	return JoinWindows{BeforeMs: d.Milliseconds(), AfterMs: d.Milliseconds(), GraceMs: grace.Milliseconds()}
}

// Before sets how far before a left record a right record may be.
func (w JoinWindows) Before(d time.Duration) JoinWindows { w.BeforeMs = d.Milliseconds(); return w }

// After sets how far after a left record a right record may be.
func (w JoinWindows) After(d time.Duration) JoinWindows { w.AfterMs = d.Milliseconds(); return w }

func (w JoinWindows) size() int64 { return w.BeforeMs + w.AfterMs }

func (w JoinWindows) check() error {
	if w.BeforeMs+w.AfterMs < 0 {
		return fmt.Errorf("streams: join windows: the window interval (before %dms + after %dms) must not be negative", w.BeforeMs, w.AfterMs)
	}
	if w.GraceMs < 0 {
		return fmt.Errorf("streams: join windows: the grace period %dms must not be negative", w.GraceMs)
	}
	return nil
}

// StreamJoined configures a stream-stream join (Kafka's StreamJoined):
// the serdes of the stores and repartition topics; Name names the join's
// nodes (<name>-this-join ...) and repartition topics (<name>-left-
// repartition); StoreName names its stores (<store>-this-join-store ...).
type StreamJoined[K, V, VO any] struct {
	Key        serde.Serde[K]
	Value      serde.Serde[V]
	OtherValue serde.Serde[VO]
	Name       string
	StoreName  string
	StoreOptions
}

// StreamStreamJoin joins each record with the other stream's records of
// its key within the windows (Kafka's KStream#join(KStream, JoinWindows)):
// one result per pair, timestamped with the later of the two; records
// with a null key or value are dropped.
func StreamStreamJoin[K, V, VO, VR any](l *Stream[K, V], r *Stream[K, VO], joiner func(key K, left V, right VO) VR, w JoinWindows, j ...StreamJoined[K, V, VO]) *Stream[K, VR] {
	this := func(k, a, b any) any { return joiner(as[K](k), a.(V), b.(VO)) }
	other := func(k, a, b any) any { return joiner(as[K](k), b.(V), a.(VO)) }
	return streamStreamJoin[K, V, VO, VR](l, r, false, false, this, other, w, j)
}

// StreamStreamLeftJoin also emits each left record that joined nothing,
// with right nil, once its window closed (stream time past its end plus
// grace), timestamped with its own time.
func StreamStreamLeftJoin[K, V, VO, VR any](l *Stream[K, V], r *Stream[K, VO], joiner func(key K, left V, right *VO) VR, w JoinWindows, j ...StreamJoined[K, V, VO]) *Stream[K, VR] {
	this := func(k, a, b any) any { return joiner(as[K](k), a.(V), ptrTo[VO](b)) }
	other := func(k, a, b any) any { return joiner(as[K](k), b.(V), ptrTo[VO](a)) }
	return streamStreamJoin[K, V, VO, VR](l, r, true, false, this, other, w, j)
}

// StreamStreamOuterJoin emits the records of either side that joined
// nothing, the absent side nil, once their windows closed.
func StreamStreamOuterJoin[K, V, VO, VR any](l *Stream[K, V], r *Stream[K, VO], joiner func(key K, left *V, right *VO) VR, w JoinWindows, j ...StreamJoined[K, V, VO]) *Stream[K, VR] {
	this := func(k, a, b any) any { return joiner(as[K](k), ptrTo[V](a), ptrTo[VO](b)) }
	other := func(k, a, b any) any { return joiner(as[K](k), ptrTo[V](b), ptrTo[VO](a)) }
	return streamStreamJoin[K, V, VO, VR](l, r, true, true, this, other, w, j)
}

// streamStreamJoin builds Kafka's StreamStreamJoinNode (KStreamImplJoin):
// each side goes through a KSTREAM-WINDOWED- node keeping it in its window
// store, then a join node looking up the other side's store; both join
// nodes feed a KSTREAM-MERGE-. Left and outer joins share a store of
// records not joined yet. thisJoiner takes (key, left, right),
// otherJoiner (key, right, left).
func streamStreamJoin[K, V, VO, VR any](l *Stream[K, V], r *Stream[K, VO], leftOuter, rightOuter bool, thisJoiner, otherJoiner func(k, a, b any) any, w JoinWindows, opts []StreamJoined[K, V, VO]) *Stream[K, VR] {
	b := l.b
	sj, err := optional(opts)
	b.fail(err)
	b.fail(w.check())
	ks := serdeOr(b, firstSerde(sj.Key, l.keySerde))
	vs := serdeOr(b, firstSerde(sj.Value, l.valueSerde))
	ovs := serdeOr(b, firstSerde(sj.OtherValue, r.valueSerde))
	left, right := l.name, r.name
	if l.repartition {
		left = repartitionFor(l, suffixOr(sj.Name, "-left", l.name), ks, vs, 0, nil)
	}
	if r.repartition {
		right = repartitionFor(r, suffixOr(sj.Name, "-right", r.name), ks, ovs, 0, nil)
	}
	if b.err != nil {
		return &Stream[K, VR]{b: b}
	}
	b.topo.copartitionSources(append(sourcesOf(b.topo, left), sourcesOf(b.topo, right)...)...)

	n := newStreamJoinNames(b, sj.Name, sj.StoreName, leftOuter, rightOuter)
	def := func(name string, vs anySerde) *storeDef {
		return &storeDef{name: name, kind: windowStore, timestamped: false, inMemory: sj.InMemory,
			logging: !sj.LoggingDisabled, logConfig: sj.LogConfig, caching: false,
			retention: w.size() + w.GraceMs, windowSize: w.size(), retainDuplicates: true,
			keySerde: box(ks), valueSerde: vs}
	}
	b.addStore(def(n.thisStore, box(vs)))
	b.addStore(def(n.otherStore, box(ovs)))
	var shared []string
	if leftOuter {
		b.addStore(&storeDef{name: n.outerStore, kind: listValueStore, inMemory: sj.InMemory,
			logging: !sj.LoggingDisabled, logConfig: sj.LogConfig, keySerde: box(ks), valueSerde: box(vs), otherValueSerde: box(ovs)})
		shared = []string{n.outerStore}
	}
	b.addProcessor(n.thisWindowed, []string{left}, joinWindowProc(n.thisStore), n.thisStore)
	b.addProcessor(n.otherWindowed, []string{right}, joinWindowProc(n.otherStore), n.otherStore)
	trackers := &timeTrackers{byTask: map[*task]*timeTracker{}}
	side := func(isLeft, outer bool, otherStore string, joiner func(k, a, b any) any) func() processor {
		before, after := w.BeforeMs, w.AfterMs
		if !isLeft {
			before, after = after, before
		}
		return func() processor {
			return &streamJoinProc{isLeft: isLeft, outer: outer, otherStore: otherStore, sharedStore: firstOf(shared),
				joinBefore: before, joinAfter: after, w: w, joiner: joiner, trackers: trackers}
		}
	}
	b.addProcessor(n.joinThis, []string{n.thisWindowed}, side(true, leftOuter, n.otherStore, thisJoiner), append([]string{n.otherStore}, shared...)...)
	b.addProcessor(n.joinOther, []string{n.otherWindowed}, side(false, rightOuter, n.thisStore, otherJoiner), append([]string{n.thisStore}, shared...)...)
	b.addProcessor(n.merge, []string{n.joinThis, n.joinOther}, stateless(func(nc *nodeContext, r rec) error { return nc.forward(r) }))
	return &Stream[K, VR]{b: b, name: n.merge, keySerde: ks, valueSerde: defaultOrNil[VR]()}
}

func firstOf(xs []string) string {
	if len(xs) == 0 {
		return ""
	}
	return xs[0]
}

func suffixOr(name, suffix, otherwise string) string {
	if name != "" {
		return name + suffix
	}
	return otherwise
}

// streamJoinNames are a stream-stream join's node and store names, drawn
// from the builder's counter in Kafka's order (KStreamImplJoin#join).
type streamJoinNames struct {
	thisWindowed, otherWindowed, joinThis, joinOther, merge string
	thisStore, otherStore, outerStore                       string
}

func newStreamJoinNames(b *Builder, name, storeName string, leftOuter, rightOuter bool) streamJoinNames {
	var n streamJoinNames
	thisSuffix, otherSuffix := "-this-join", "-other-join"
	thisPrefix, otherPrefix := "KSTREAM-JOINTHIS-", "KSTREAM-JOINOTHER-"
	if rightOuter {
		thisSuffix, thisPrefix = "-outer-this-join", "KSTREAM-OUTERTHIS-"
	}
	if leftOuter {
		otherSuffix, otherPrefix = "-outer-other-join", "KSTREAM-OUTEROTHER-"
	}
	n.thisWindowed = suffixOrNew(b, name, "-this-windowed", "KSTREAM-WINDOWED-")
	n.otherWindowed = suffixOrNew(b, name, "-other-windowed", "KSTREAM-WINDOWED-")
	thisGen, otherGen := b.newName(thisPrefix), b.newName(otherPrefix)
	n.joinThis, n.joinOther = suffixOr(name, thisSuffix, thisGen), suffixOr(name, otherSuffix, otherGen)
	n.merge = suffixOrNew(b, name, "-merge", "KSTREAM-MERGE-")
	n.thisStore, n.otherStore = suffixOr(storeName, thisSuffix, thisGen)+"-store", suffixOr(storeName, otherSuffix, otherGen)+"-store"
	sharedSuffix := "-left-shared-join"
	if rightOuter {
		sharedSuffix = "-outer-shared-join"
	}
	n.outerStore = suffixOr(storeName, sharedSuffix, "KSTREAM-OUTERSHARED-"+thisGen[len(thisPrefix):]) + "-store"
	return n
}

// suffixOrNew is Kafka's NamedInternal#suffixWithOrElseGet: the user's
// name with a suffix, or a generated name.
func suffixOrNew(b *Builder, name, suffix, prefix string) string {
	if name != "" {
		return name + suffix
	}
	return b.newName(prefix)
}

// joinWindowProc is Kafka's KStreamJoinWindow: it passes each record on
// (to the join looking up the other side) and then keeps it in its side's
// window store.
func joinWindowProc(store string) func() processor {
	return func() processor { return &windowedProc{store: store} }
}

type windowedProc struct {
	nc    *nodeContext
	store string
	win   joinWindowState
}

func (p *windowedProc) init(nc *nodeContext) error {
	p.nc = nc
	s, err := nc.store(p.store)
	if err != nil {
		return err
	}
	p.win = s.(joinWindowState)
	return nil
}

func (p *windowedProc) process(r rec) error {
	if err := p.nc.forward(r); err != nil {
		return err
	}
	if r.key == nil {
		return nil
	}
	return p.win.put(r.key, r.value, r.ts)
}

func (p *windowedProc) close() error { return nil }

// timeTracker is the time both sides of one join share in a task (Kafka's
// KStreamImplJoin.TimeTracker): the largest timestamp either side saw, the
// smallest timestamp in the shared store, and when the shared store may
// next be scanned (wall clock).
type timeTracker struct {
	streamTime     int64
	minTime        int64
	nextTimeToEmit int64
}

// defaultOuterJoinEmitIntervalMs throttles the scans of the shared store,
// as Kafka's internal emit.interval.ms.kstreams.outer.join.spurious.results.fix
// (default 1000): a scan runs at most once per interval of wall-clock time.
const defaultOuterJoinEmitIntervalMs = 1000

// outerJoinEmitIntervalConfig is the interval's (internal) property name.
const outerJoinEmitIntervalConfig = "__emit.interval.ms.kstreams.outer.join.spurious.results.fix__"

// outerJoinEmitIntervaler is a task environment that sets the interval;
// the TestDriver sets 0, as Kafka's TopologyTestDriver, so that results
// do not depend on the mock wall clock.
type outerJoinEmitIntervaler interface {
	outerJoinEmitIntervalMs() int64
}

func (d *TestDriver) outerJoinEmitIntervalMs() int64 { return 0 }

// The runtime's tasks take Config.OuterJoinEmitInterval.
func (e *threadEnv) outerJoinEmitIntervalMs() int64 {
	return e.th.app.cfg.OuterJoinEmitInterval.Milliseconds()
}

func outerJoinEmitInterval(env taskEnv) int64 {
	if e, ok := env.(outerJoinEmitIntervaler); ok {
		return e.outerJoinEmitIntervalMs()
	}
	return defaultOuterJoinEmitIntervalMs
}

type timeTrackers struct {
	mu     sync.Mutex
	byTask map[*task]*timeTracker
}

func (ts *timeTrackers) get(t *task) *timeTracker {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	tt, ok := ts.byTask[t]
	if !ok {
		tt = &timeTracker{streamTime: -1, minTime: maxInt64}
		ts.byTask[t] = tt
	}
	return tt
}

func (ts *timeTrackers) remove(t *task) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	delete(ts.byTask, t)
}

const maxInt64 = int64(^uint64(0) >> 1)

// streamJoinProc is Kafka's KStreamKStreamJoin (LeftSide / RightSide): a
// record joins the other side's records in its window; in a left or outer
// join a record that joined nothing waits in the shared store until its
// window closes, and an inner result for a waiting record removes it.
type streamJoinProc struct {
	nc                    *nodeContext
	isLeft, outer         bool
	otherStore            string
	sharedStore           string
	joinBefore, joinAfter int64
	w                     JoinWindows
	joiner                func(k, this, other any) any
	trackers              *timeTrackers
	tracker               *timeTracker
	other                 joinWindowState
	shared                outerJoinState
}

func (p *streamJoinProc) init(nc *nodeContext) error {
	p.nc = nc
	s, err := nc.store(p.otherStore)
	if err != nil {
		return err
	}
	p.other = s.(joinWindowState)
	if p.sharedStore != "" {
		s, err := nc.store(p.sharedStore)
		if err != nil {
			return err
		}
		p.shared = s.(outerJoinState)
	}
	p.tracker = p.trackers.get(nc.task)
	return nil
}

func (p *streamJoinProc) close() error {
	p.trackers.remove(p.nc.task)
	return nil
}

func (p *streamJoinProc) process(r rec) error {
	tt := p.tracker
	if r.ts > tt.streamTime {
		tt.streamTime = r.ts
	}
	if p.outer && r.key == nil && r.value != nil {
		// KIP-962: a null key joins nothing, but an outer side keeps it.
		r.value = p.joiner(nil, r.value, nil)
		return p.nc.forward(r)
	}
	if r.key == nil || r.value == nil {
		p.nc.task.dropped("a stream-stream join record with a null key or value")
		return nil
	}
	if p.shared != nil && r.ts == tt.streamTime {
		if err := p.emitNonJoined(r); err != nil {
			return err
		}
	}
	from, to := max(0, r.ts-p.joinBefore), max(0, r.ts+p.joinAfter)
	joined := false
	err := p.other.fetch(r.key, from, to, func(ts int64, other any) error {
		joined = true
		if p.shared != nil {
			if err := p.shared.remove(ts, !p.isLeft, r.key); err != nil {
				return err
			}
		}
		out := r
		out.value, out.ts = p.joiner(r.key, r.value, other), max(r.ts, ts)
		return p.nc.forward(out)
	})
	if err != nil || joined || !p.outer {
		return err
	}
	if p.shared == nil || to < tt.streamTime {
		// Its window is already behind stream time: nothing can join it
		// any more (the other side's store covers it), so emit now.
		r.value = p.joiner(r.key, r.value, nil)
		return p.nc.forward(r)
	}
	if r.ts < tt.minTime {
		tt.minTime = r.ts
	}
	return p.shared.add(r.ts, p.isLeft, r.key, r.value)
}

// emitNonJoined emits the waiting records whose windows closed, in the
// shared store's order (timestamp, right before left, key), each with its
// own timestamp, and removes them. Kafka scans at most once per emit
// interval of wall-clock time, and only when the oldest waiting record
// may have expired.
func (p *streamJoinProc) emitNonJoined(r rec) error {
	tt := p.tracker
	if tt.minTime+p.joinAfter+p.w.GraceMs >= tt.streamTime {
		return nil
	}
	now := p.nc.task.env.now()
	if now < tt.nextTimeToEmit {
		return nil
	}
	tt.nextTimeToEmit = now + outerJoinEmitInterval(p.nc.task.env)
	tt.minTime = maxInt64
	leftOpen, rightOpen := false, false
	type entryKey struct {
		id   string
		ts   int64
		left bool
		key  any
	}
	var prev *entryKey
	err := p.shared.each(func(id string, ts int64, left bool, key, value any) (bool, error) {
		tt.minTime = ts
		if leftOpen && rightOpen {
			return false, nil
		}
		lookBack := p.w.BeforeMs
		if left {
			lookBack = p.w.AfterMs
		}
		if tt.minTime+lookBack+p.w.GraceMs >= tt.streamTime {
			if left {
				leftOpen = true
			} else {
				rightOpen = true
			}
			return true, nil
		}
		out := r
		out.key, out.ts = key, ts
		if left == p.isLeft {
			out.value = p.joiner(key, value, nil)
		} else {
			out.value = p.joiner(key, nil, value)
		}
		if err := p.nc.forward(out); err != nil {
			return false, err
		}
		// A key's values are removed together once all were emitted (Kafka
		// deletes the previous key when the scan moves on).
		cur := &entryKey{id, ts, left, key}
		if prev != nil && prev.id != cur.id {
			if err := p.shared.remove(prev.ts, prev.left, prev.key); err != nil {
				return false, err
			}
		}
		prev = cur
		return true, nil
	})
	if err != nil {
		return err
	}
	if prev != nil {
		return p.shared.remove(prev.ts, prev.left, prev.key)
	}
	return nil
}

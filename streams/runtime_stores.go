package streams

import (
	"sort"

	"github.com/samsa-io/samsa/streams/state"
)

// The runtime's stores: streams/state's byte stores (pebble in the task's
// directory, or in memory), wrapped by the logging layer that writes each
// change to the task's changelog partition, seen by the processors through
// the small interfaces they use (kvState, windowState, sessionState,
// joinWindowState). Kinds not backed by streams/state yet (the suppression
// buffer, the outer join's shared store, the foreign-key subscription
// store) stay in memory (docs/DESIGN-streams.md, in progress).

// storeHandle is one open store of a task, as the runtime commits,
// restores and closes it.
type storeHandle struct {
	def       *storeDef
	store     state.Store
	restorer  state.Restorer // nil when not logged
	changelog topicPartition
	rc        *state.RecordContext
	// cache is the store's view when it caches: flushed before commits.
	cache interface{ flushErr() error }
}

// openStateStore opens def for task t in its directory.
func openStateStore(t *task, def *storeDef, dir *state.TaskDirectory, cache *state.BlockCache, log state.ChangeLogger) (any, *storeHandle, error) {
	return openStateStoreCached(t, def, dir, cache, log, nil, "")
}

// openStateStoreCached is openStateStore with a record cache for the
// key-value stores that cache (Kafka's caching layer): their updates reach
// the changelog and the processors downstream when the cache flushes (on
// commit or eviction), one per key, as Kafka Streams' KTables emit.
func openStateStoreCached(t *task, def *storeDef, dir *state.TaskDirectory, cache *state.BlockCache, log state.ChangeLogger, records *state.Cache, namespace string) (any, *storeHandle, error) {
	rc := &state.RecordContext{}
	h := &storeHandle{def: def, rc: rc}
	persistent := !def.inMemory && dir != nil
	path := ""
	if persistent {
		p, err := dir.StorePath(def.name)
		if err != nil {
			return nil, nil, err
		}
		path = p
	}
	po := state.PebbleOptions{BlockCache: cache}
	switch def.kind {
	case keyValueStore:
		var inner state.KeyValueStore
		var err error
		if persistent {
			inner, err = state.OpenPebbleKeyValueStore(def.name, path, po)
		} else {
			inner = state.NewInMemoryKeyValueStore(def.name)
		}
		if err != nil {
			return nil, nil, err
		}
		var kv state.KeyValueStore = inner
		if def.logging {
			logged := state.LogTimestampedKeyValueStore(inner, rc, log)
			kv, h.restorer = logged, logged
		}
		sk := &stateKV{def: def, rc: rc}
		if records != nil && def.caching {
			cached, err := state.NewCachingKeyValueStore(kv, records, namespace, rc, sk.flushed)
			if err != nil {
				return nil, nil, err
			}
			kv, sk.cached = cached, true
			h.cache = sk
		}
		sk.s = kv
		h.store = kv
		return sk, h, nil
	case windowStore:
		o := state.WindowOptions{RetentionPeriod: def.retention, WindowSize: max(def.windowSize, 1), RetainDuplicates: def.retainDuplicates, SegmentInterval: def.segmentInterval}
		if o.RetentionPeriod < o.WindowSize {
			o.RetentionPeriod = o.WindowSize
		}
		var inner state.WindowStore
		var err error
		if persistent {
			inner, err = state.OpenPebbleWindowStore(def.name, path, o, po)
		} else {
			inner, err = state.NewInMemoryWindowStore(def.name, o)
		}
		if err != nil {
			return nil, nil, err
		}
		ws := inner
		if def.logging {
			logged, err := state.LogTimestampedWindowStore(inner, rc, log)
			if err != nil {
				return nil, nil, err
			}
			ws, h.restorer = logged, logged
		}
		if def.retainDuplicates {
			h.store = ws
			return &stateJoinWindow{def: def, s: ws, rc: rc}, h, nil
		}
		sw := &stateWindow{def: def, rc: rc}
		if records != nil && def.caching {
			cached, err := state.NewCachingWindowStore(ws, records, namespace, rc, sw.flushed)
			if err != nil {
				return nil, nil, err
			}
			ws, sw.cached = cached, true
			h.cache = sw
		}
		sw.s = ws
		h.store = ws
		return sw, h, nil
	case sessionStore:
		o := state.SessionOptions{RetentionPeriod: def.retention, SegmentInterval: def.segmentInterval}
		var inner state.SessionStore
		var err error
		if persistent {
			inner, err = state.OpenPebbleSessionStore(def.name, path, o, po)
		} else {
			inner, err = state.NewInMemorySessionStore(def.name, o)
		}
		if err != nil {
			return nil, nil, err
		}
		ss := state.SessionStore(inner)
		if def.logging {
			logged := state.LogSessionStore(inner, rc, log)
			ss, h.restorer = logged, logged
		}
		sess := &stateSession{def: def, rc: rc}
		if records != nil && def.caching {
			cached, err := state.NewCachingSessionStore(ss, records, namespace, rc, sess.flushed)
			if err != nil {
				return nil, nil, err
			}
			ss, sess.cached = cached, true
			h.cache = sess
		}
		sess.s = ss
		h.store = ss
		return sess, h, nil
	}
	if def.kind == suppressionBuffer {
		buf := newTimeOrderedBuffer(def)
		h.store = buf
		if def.logging {
			buf.logger = log
			h.restorer = buf
		}
		return buf, h, nil
	}
	switch def.kind {
	case listValueStore:
		m := newMemOuterJoin(def)
		h.store = m
		if def.logging {
			m.logger, h.restorer = log, m
		}
		return m, h, nil
	case subscriptionStore:
		m := newMemSubscriptions(def)
		h.store = m
		if def.logging {
			m.logger, h.restorer = log, m
		}
		return m, h, nil
	}
	s, err := openMemoryStore(def)
	return s, nil, err
}

// stateKV is a timestamped key-value store: the local value is the 8-byte
// timestamp then the value, as Kafka's TimestampedKeyValueStore.
type stateKV struct {
	def *storeDef
	s   state.KeyValueStore
	rc  *state.RecordContext
	// cached stores forward through onFlush, which the processor that
	// writes the store sets (cachingState).
	cached  bool
	onFlush func(key, newV, oldV any, ts int64) error
	err     error // the first error onFlush returned, for the committer
}

// cachingState is a store whose writes reach downstream when its cache
// flushes: the processor forwards from the listener instead of at once.
type cachingState interface {
	caching() bool
	setFlushListener(fn func(key, newV, oldV any, ts int64) error)
	flushErr() error
}

func (k *stateKV) caching() bool { return k.cached }
func (k *stateKV) setFlushListener(fn func(key, newV, oldV any, ts int64) error) {
	k.onFlush = fn
}
func (k *stateKV) flushErr() error {
	err := k.err
	k.err = nil
	return err
}

// flushed is the cache's listener: it decodes the entry and hands it to the
// processor's listener.
func (k *stateKV) flushed(key, newValue, oldValue []byte, ts int64) {
	if k.onFlush == nil || k.err != nil {
		return
	}
	kv, nv, ov, err := decodeFlushed(k.def, key, newValue, oldValue)
	if err == nil {
		err = k.onFlush(kv, nv, ov, ts)
	}
	k.err = err
}

func (k *stateKV) get(key any) (any, int64, bool, error) {
	kb, err := k.def.keySerde.serialize(k.def.name, key)
	if err != nil {
		return nil, 0, false, err
	}
	b, err := k.s.Get(kb)
	if err != nil || b == nil {
		return nil, 0, false, err
	}
	vb, ts, err := state.SplitValueAndTimestamp(b)
	if err != nil {
		return nil, 0, false, err
	}
	v, err := k.def.valueSerde.deserialize(k.def.name, vb)
	return v, ts, true, err
}

func (k *stateKV) put(key, value any, ts int64) error {
	kb, err := k.def.keySerde.serialize(k.def.name, key)
	if err != nil {
		return err
	}
	k.rc.Timestamp = ts
	if value == nil {
		_, err := k.s.Delete(kb)
		return err
	}
	vb, err := k.def.valueSerde.serialize(k.def.name, value)
	if err != nil {
		return err
	}
	if vb == nil {
		vb = []byte{}
	}
	return k.s.Put(kb, state.ValueWithTimestamp(vb, ts))
}

// stateWindow is a timestamped window store.
type stateWindow struct {
	def *storeDef
	s   state.WindowStore
	rc  *state.RecordContext
	// cached, onFlush, err: as stateKV's, for the windowed aggregation.
	cached  bool
	onFlush func(key any, start int64, newV, oldV any, ts int64) error
	err     error
}

// cachingWindowState is a window store whose writes reach downstream when
// its cache flushes.
type cachingWindowState interface {
	caching() bool
	setFlushListener(fn func(key any, start int64, newV, oldV any, ts int64) error)
}

func (w *stateWindow) caching() bool { return w.cached }
func (w *stateWindow) setFlushListener(fn func(key any, start int64, newV, oldV any, ts int64) error) {
	w.onFlush = fn
}
func (w *stateWindow) flushErr() error {
	err := w.err
	w.err = nil
	return err
}

func (w *stateWindow) flushed(key []byte, win state.Window, newValue, oldValue []byte, ts int64) {
	if w.onFlush == nil || w.err != nil {
		return
	}
	k, nv, ov, err := decodeFlushed(w.def, key, newValue, oldValue)
	if err == nil {
		err = w.onFlush(k, win.Start, nv, ov, ts)
	}
	w.err = err
}

func (w *stateWindow) fetch(key any, start int64) (any, int64, bool, error) {
	kb, err := w.def.keySerde.serialize(w.def.name, key)
	if err != nil {
		return nil, 0, false, err
	}
	b, err := w.s.Fetch(kb, start)
	if err != nil || b == nil {
		return nil, 0, false, err
	}
	vb, ts, err := state.SplitValueAndTimestamp(b)
	if err != nil {
		return nil, 0, false, err
	}
	v, err := w.def.valueSerde.deserialize(w.def.name, vb)
	return v, ts, true, err
}

func (w *stateWindow) put(key any, start int64, value any, ts int64) error {
	kb, err := w.def.keySerde.serialize(w.def.name, key)
	if err != nil {
		return err
	}
	w.rc.Timestamp = ts
	if value == nil {
		return w.s.Put(kb, nil, start)
	}
	vb, err := w.def.valueSerde.serialize(w.def.name, value)
	if err != nil {
		return err
	}
	if vb == nil {
		vb = []byte{}
	}
	return w.s.Put(kb, state.ValueWithTimestamp(vb, ts), start)
}

func (w *stateWindow) fetchRange(key any, from, to int64, backward bool) ([]windowRow, error) {
	kb, err := w.def.keySerde.serialize(w.def.name, key)
	if err != nil {
		return nil, err
	}
	var it state.WindowedIterator
	if backward {
		it, err = w.s.BackwardFetchTimeRange(kb, from, to)
	} else {
		it, err = w.s.FetchTimeRange(kb, from, to)
	}
	if err != nil {
		return nil, err
	}
	return w.rows(it)
}

func (w *stateWindow) fetchAll(from, to int64) ([]windowRow, error) {
	it, err := w.s.FetchAll(from, to)
	if err != nil {
		return nil, err
	}
	rows, err := w.rows(it)
	if err != nil {
		return nil, err
	}
	// The windowState contract orders by start, then serialized key.
	sortWindowRows(rows, w.def)
	return rows, nil
}

func (w *stateWindow) rows(it state.WindowedIterator) ([]windowRow, error) {
	defer it.Close()
	var out []windowRow
	for it.Next() {
		k, err := w.def.keySerde.deserialize(w.def.name, it.Key())
		if err != nil {
			return nil, err
		}
		vb, ts, err := state.SplitValueAndTimestamp(it.Value())
		if err != nil {
			return nil, err
		}
		v, err := w.def.valueSerde.deserialize(w.def.name, vb)
		if err != nil {
			return nil, err
		}
		out = append(out, windowRow{key: k, start: it.Window().Start, value: v, ts: ts})
	}
	return out, it.Err()
}

// stateJoinWindow is a join side's window store with duplicates.
type stateJoinWindow struct {
	def *storeDef
	s   state.WindowStore
	rc  *state.RecordContext
}

func (w *stateJoinWindow) put(key, value any, ts int64) error {
	kb, err := w.def.keySerde.serialize(w.def.name, key)
	if err != nil {
		return err
	}
	vb, err := w.def.valueSerde.serialize(w.def.name, value)
	if err != nil {
		return err
	}
	if vb == nil {
		vb = []byte{}
	}
	w.rc.Timestamp = ts
	return w.s.Put(kb, state.ValueWithTimestamp(vb, ts), ts)
}

func (w *stateJoinWindow) fetch(key any, from, to int64, fn func(ts int64, value any) error) error {
	kb, err := w.def.keySerde.serialize(w.def.name, key)
	if err != nil {
		return err
	}
	it, err := w.s.FetchTimeRange(kb, from, to)
	if err != nil {
		return err
	}
	defer it.Close()
	for it.Next() {
		vb, ts, err := state.SplitValueAndTimestamp(it.Value())
		if err != nil {
			return err
		}
		v, err := w.def.valueSerde.deserialize(w.def.name, vb)
		if err != nil {
			return err
		}
		if err := fn(ts, v); err != nil {
			return err
		}
	}
	return it.Err()
}

// stateSession is a session store.
type stateSession struct {
	def *storeDef
	s   state.SessionStore
	rc  *state.RecordContext
	// cached, onFlush, err: as stateKV's, for the session aggregation.
	cached  bool
	onFlush func(key any, w Window, newV, oldV any) error
	err     error
}

// cachingSessionState is a session store whose writes reach downstream
// when its cache flushes.
type cachingSessionState interface {
	caching() bool
	setFlushListener(fn func(key any, w Window, newV, oldV any) error)
}

func (s *stateSession) caching() bool { return s.cached }
func (s *stateSession) setFlushListener(fn func(key any, w Window, newV, oldV any) error) {
	s.onFlush = fn
}
func (s *stateSession) flushErr() error {
	err := s.err
	s.err = nil
	return err
}

// flushed is the cache's listener; session values carry no timestamp.
func (s *stateSession) flushed(key []byte, win state.Window, newValue, oldValue []byte, _ int64) {
	if s.onFlush == nil || s.err != nil {
		return
	}
	decode := func(b []byte) (any, error) {
		if b == nil {
			return nil, nil
		}
		return s.def.valueSerde.deserialize(s.def.name, b)
	}
	k, err := s.def.keySerde.deserialize(s.def.name, key)
	var nv, ov any
	if err == nil {
		nv, err = decode(newValue)
	}
	if err == nil {
		ov, err = decode(oldValue)
	}
	if err == nil {
		err = s.onFlush(k, Window{Start: win.Start, End: win.End}, nv, ov)
	}
	s.err = err
}

func (s *stateSession) findSessions(key any, earliestEnd, latestStart int64) ([]sessionRow, error) {
	kb, err := s.def.keySerde.serialize(s.def.name, key)
	if err != nil {
		return nil, err
	}
	it, err := s.s.FindSessions(kb, earliestEnd, latestStart)
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var out []sessionRow
	for it.Next() {
		v, err := s.def.valueSerde.deserialize(s.def.name, it.Value())
		if err != nil {
			return nil, err
		}
		w := it.Window()
		out = append(out, sessionRow{key: key, window: Window{Start: w.Start, End: w.End}, value: v})
	}
	return out, it.Err()
}

func (s *stateSession) fetchSession(key any, w Window) (any, bool, error) {
	kb, err := s.def.keySerde.serialize(s.def.name, key)
	if err != nil {
		return nil, false, err
	}
	b, err := s.s.FetchSession(kb, w.Start, w.End)
	if err != nil || b == nil {
		return nil, false, err
	}
	v, err := s.def.valueSerde.deserialize(s.def.name, b)
	return v, true, err
}

func (s *stateSession) put(key any, w Window, value any) error {
	if value == nil {
		return s.remove(key, w)
	}
	kb, err := s.def.keySerde.serialize(s.def.name, key)
	if err != nil {
		return err
	}
	vb, err := s.def.valueSerde.serialize(s.def.name, value)
	if err != nil {
		return err
	}
	if vb == nil {
		vb = []byte{}
	}
	s.rc.Timestamp = w.End
	return s.s.Put(kb, state.Window{Start: w.Start, End: w.End}, vb)
}

func (s *stateSession) remove(key any, w Window) error {
	kb, err := s.def.keySerde.serialize(s.def.name, key)
	if err != nil {
		return err
	}
	s.rc.Timestamp = w.End
	return s.s.Remove(kb, state.Window{Start: w.Start, End: w.End})
}

// sortWindowRows orders rows by window start, then serialized key, as the
// windowState contract says.
func sortWindowRows(rows []windowRow, def *storeDef) {
	keys := make([]string, len(rows))
	for i, r := range rows {
		b, _ := def.keySerde.serialize(def.name, r.key)
		keys[i] = string(b)
	}
	idx := make([]int, len(rows))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		ra, rb := rows[idx[a]], rows[idx[b]]
		if ra.start != rb.start {
			return ra.start < rb.start
		}
		return keys[idx[a]] < keys[idx[b]]
	})
	sorted := make([]windowRow, len(rows))
	for i, j := range idx {
		sorted[i] = rows[j]
	}
	copy(rows, sorted)
}

// decodeFlushed reads a cache flush's key and timestamped new and old
// values (nil stays nil).
func decodeFlushed(def *storeDef, key, newValue, oldValue []byte) (k, nv, ov any, err error) {
	decode := func(b []byte) (any, error) {
		if b == nil {
			return nil, nil
		}
		vb, _, err := state.SplitValueAndTimestamp(b)
		if err != nil {
			return nil, err
		}
		return def.valueSerde.deserialize(def.name, vb)
	}
	if k, err = def.keySerde.deserialize(def.name, key); err != nil {
		return nil, nil, nil, err
	}
	if nv, err = decode(newValue); err != nil {
		return nil, nil, nil, err
	}
	ov, err = decode(oldValue)
	return k, nv, ov, err
}

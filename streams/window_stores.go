package streams

import (
	"fmt"
	"sort"
)

// windowState is a task's timestamped window store as the windowed
// aggregations use it (Kafka's TimestampedWindowStore): keys and values
// are Go values, nil a null. Windows are found by their start; a store
// keeps windows for its retention period behind its observed stream time
// (the largest window start put), as Kafka's segmented stores do.
type windowState interface {
	// fetch returns the window of key starting at start.
	fetch(key any, start int64) (value any, ts int64, ok bool, err error)
	// put writes the window of key starting at start; a nil value deletes
	// it. A window already expired is not written (Kafka logs and skips).
	put(key any, start int64, value any, ts int64) error
	// fetchRange returns key's windows starting in [from, to], by start
	// (backward: descending, Kafka's backwardFetch).
	fetchRange(key any, from, to int64, backward bool) ([]windowRow, error)
	// fetchAll returns every key's windows starting in [from, to], by
	// start, then by serialized key.
	fetchAll(from, to int64) ([]windowRow, error)
}

// windowRow is one window of a window store.
type windowRow struct {
	key   any
	start int64
	value any
	ts    int64
}

// sessionState is a task's session store as the session aggregation uses
// it (Kafka's SessionStore). Sessions expire by their end: a store keeps
// sessions ending within its retention period behind its observed stream
// time (the largest session end put).
type sessionState interface {
	// findSessions returns key's sessions ending at or after earliestEnd
	// and starting at or before latestStart, by end then start (Kafka's
	// findSessions order).
	findSessions(key any, earliestEnd, latestStart int64) ([]sessionRow, error)
	// fetchSession returns key's session with exactly these bounds.
	fetchSession(key any, w Window) (value any, ok bool, err error)
	put(key any, w Window, value any) error // nil value removes
	remove(key any, w Window) error
}

// sessionRow is one session of a session store.
type sessionRow struct {
	key    any
	window Window
	value  any
}

// memWindow is the in-memory window store the test driver uses (Kafka's
// InMemoryWindowStore semantics: exact expiry by window start).
type memWindow struct {
	def      *storeDef
	observed int64
	seq      int
	// data maps a serialized key to its windows; a window holds several
	// values only when the store retains duplicates (stream-stream joins).
	data map[string]*memWindowKey
}

type memWindowKey struct {
	key     any
	windows map[int64][]memWindowValue
}

type memWindowValue struct {
	value []byte
	ts    int64
	seq   int
}

func newMemWindow(def *storeDef) *memWindow {
	return &memWindow{def: def, observed: -1 << 63, data: map[string]*memWindowKey{}}
}

// expired says whether a window starting at start is past retention.
func (m *memWindow) expired(start int64) bool {
	return m.observed != -1<<63 && start <= m.observed-m.def.retention
}

func (m *memWindow) keyBytes(key any) (string, error) {
	kb, err := m.def.keySerde.serialize(m.def.name, key)
	if err != nil {
		return "", fmt.Errorf("streams: store %s: %w", m.def.name, err)
	}
	return string(kb), nil
}

func (m *memWindow) fetch(key any, start int64) (any, int64, bool, error) {
	kb, err := m.keyBytes(key)
	if err != nil || m.expired(start) {
		return nil, 0, false, err
	}
	k, ok := m.data[kb]
	if !ok || len(k.windows[start]) == 0 {
		return nil, 0, false, nil
	}
	e := k.windows[start][0]
	v, err := m.def.valueSerde.deserialize(m.def.name, e.value)
	return v, e.ts, true, err
}

func (m *memWindow) put(key any, start int64, value any, ts int64) error {
	kb, err := m.keyBytes(key)
	if err != nil {
		return err
	}
	m.observed = max(m.observed, start)
	m.expire()
	if m.expired(start) {
		return nil
	}
	k, ok := m.data[kb]
	if !ok {
		k = &memWindowKey{key: key, windows: map[int64][]memWindowValue{}}
		m.data[kb] = k
	}
	if value == nil {
		if !m.def.retainDuplicates {
			delete(k.windows, start)
		}
		return nil
	}
	vb, err := m.def.valueSerde.serialize(m.def.name, value)
	if err != nil {
		return fmt.Errorf("streams: store %s: %w", m.def.name, err)
	}
	m.seq++
	e := memWindowValue{value: vb, ts: ts, seq: m.seq}
	if m.def.retainDuplicates {
		k.windows[start] = append(k.windows[start], e)
	} else {
		k.windows[start] = []memWindowValue{e}
	}
	return nil
}

// expire drops the windows past retention, as Kafka drops old segments.
func (m *memWindow) expire() {
	for kb, k := range m.data {
		for start := range k.windows {
			if m.expired(start) {
				delete(k.windows, start)
			}
		}
		if len(k.windows) == 0 {
			delete(m.data, kb)
		}
	}
}

func (m *memWindow) fetchRange(key any, from, to int64, backward bool) ([]windowRow, error) {
	kb, err := m.keyBytes(key)
	if err != nil {
		return nil, err
	}
	rows, err := m.rows([]string{kb}, from, to)
	if backward {
		for i, j := 0, len(rows)-1; i < j; i, j = i+1, j-1 {
			rows[i], rows[j] = rows[j], rows[i]
		}
	}
	return rows, err
}

func (m *memWindow) fetchAll(from, to int64) ([]windowRow, error) {
	keys := make([]string, 0, len(m.data))
	for kb := range m.data {
		keys = append(keys, kb)
	}
	sort.Strings(keys)
	return m.rows(keys, from, to)
}

// rows returns the keys' windows starting in [from, to], by start, then
// key (in the order given), then insertion.
func (m *memWindow) rows(keys []string, from, to int64) ([]windowRow, error) {
	type found struct {
		keyIdx int
		start  int64
		e      memWindowValue
	}
	var fs []found
	for i, kb := range keys {
		k, ok := m.data[kb]
		if !ok {
			continue
		}
		for start, es := range k.windows {
			if start < from || start > to || m.expired(start) {
				continue
			}
			for _, e := range es {
				fs = append(fs, found{i, start, e})
			}
		}
	}
	sort.Slice(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if a.start != b.start {
			return a.start < b.start
		}
		if a.keyIdx != b.keyIdx {
			return a.keyIdx < b.keyIdx
		}
		return a.e.seq < b.e.seq
	})
	out := make([]windowRow, 0, len(fs))
	for _, f := range fs {
		v, err := m.def.valueSerde.deserialize(m.def.name, f.e.value)
		if err != nil {
			return nil, fmt.Errorf("streams: store %s: %w", m.def.name, err)
		}
		out = append(out, windowRow{key: m.data[keys[f.keyIdx]].key, start: f.start, value: v, ts: f.e.ts})
	}
	return out, nil
}

// memSession is the in-memory session store the test driver uses (Kafka's
// InMemorySessionStore semantics: exact expiry by session end).
type memSession struct {
	def      *storeDef
	observed int64
	data     map[string]map[Window][]byte
}

func newMemSession(def *storeDef) *memSession {
	return &memSession{def: def, observed: -1 << 63, data: map[string]map[Window][]byte{}}
}

func (m *memSession) expired(end int64) bool {
	return m.observed != -1<<63 && end <= m.observed-m.def.retention
}

func (m *memSession) keyBytes(key any) (string, error) {
	kb, err := m.def.keySerde.serialize(m.def.name, key)
	if err != nil {
		return "", fmt.Errorf("streams: store %s: %w", m.def.name, err)
	}
	return string(kb), nil
}

func (m *memSession) findSessions(key any, earliestEnd, latestStart int64) ([]sessionRow, error) {
	kb, err := m.keyBytes(key)
	if err != nil {
		return nil, err
	}
	var ws []Window
	for w := range m.data[kb] {
		if w.End >= earliestEnd && w.Start <= latestStart && !m.expired(w.End) {
			ws = append(ws, w)
		}
	}
	sort.Slice(ws, func(i, j int) bool {
		if ws[i].End != ws[j].End {
			return ws[i].End < ws[j].End
		}
		return ws[i].Start < ws[j].Start
	})
	out := make([]sessionRow, 0, len(ws))
	for _, w := range ws {
		v, err := m.def.valueSerde.deserialize(m.def.name, m.data[kb][w])
		if err != nil {
			return nil, fmt.Errorf("streams: store %s: %w", m.def.name, err)
		}
		out = append(out, sessionRow{key: key, window: w, value: v})
	}
	return out, nil
}

func (m *memSession) fetchSession(key any, w Window) (any, bool, error) {
	kb, err := m.keyBytes(key)
	if err != nil || m.expired(w.End) {
		return nil, false, err
	}
	vb, ok := m.data[kb][w]
	if !ok {
		return nil, false, nil
	}
	v, err := m.def.valueSerde.deserialize(m.def.name, vb)
	return v, true, err
}

func (m *memSession) put(key any, w Window, value any) error {
	kb, err := m.keyBytes(key)
	if err != nil {
		return err
	}
	m.observed = max(m.observed, w.End)
	if m.expired(w.End) {
		return nil
	}
	if value == nil {
		delete(m.data[kb], w)
		if len(m.data[kb]) == 0 {
			delete(m.data, kb)
		}
		return nil
	}
	vb, err := m.def.valueSerde.serialize(m.def.name, value)
	if err != nil {
		return fmt.Errorf("streams: store %s: %w", m.def.name, err)
	}
	if m.data[kb] == nil {
		m.data[kb] = map[Window][]byte{}
	}
	m.data[kb][w] = vb
	return nil
}

func (m *memSession) remove(key any, w Window) error { return m.put(key, w, nil) }

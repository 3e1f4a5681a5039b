package streams

import (
	"bytes"
	"fmt"
	"sort"
)

// The stores the joins use, as the join processors see them: keys and
// values are Go values, nil a null. The in-memory twins below serve the
// test driver; the runtime backs the same interfaces with streams/state.

// joinWindowState is a stream-stream join side's window store (Kafka's
// WindowStore with retainDuplicates): every put is kept, a record older
// than the store's retention behind the largest timestamp put is
// dropped, and fetch never returns such records.
type joinWindowState interface {
	put(key, value any, ts int64) error
	// fetch calls fn for the key's records with from <= ts <= to, in
	// timestamp order, duplicates in the order they were put.
	fetch(key any, from, to int64, fn func(ts int64, value any) error) error
}

// outerJoinState is the stream-stream left/outer join's shared store
// (Kafka's KeyValueStore<TimestampedKeyAndJoinSide, LeftOrRightValue>
// over a ListValueStore): records that found no partner yet, by
// (timestamp, side, key), a list of values each.
type outerJoinState interface {
	add(ts int64, left bool, key, value any) error
	// remove deletes every value of (ts, side, key).
	remove(ts int64, left bool, key any) error
	// each calls fn for each value in Kafka's byte order of the key:
	// timestamp, then the right side before the left (false < true), then
	// the serialized key; fn returning false stops. fn may remove entries.
	// id names the entry (its store key) so that fn can tell a key's
	// values apart from the next key's.
	each(fn func(id string, ts int64, left bool, key, value any) (bool, error)) error
}

// subscriptionState is the foreign-key join's subscription store on the
// right table's side: for each foreign key, the left rows subscribed to it.
type subscriptionState interface {
	get(fk, pk any) (sub *subscription, ts int64, ok bool, err error)
	put(fk, pk any, sub *subscription, ts int64) error
	remove(fk, pk any) error
	// scan calls fn for each subscription of fk, in primary key byte order.
	scan(fk any, fn func(pk any, sub *subscription) error) error
}

// memJoinWindow is the in-memory joinWindowState.
type memJoinWindow struct {
	def      *storeDef
	observed int64
	seq      int64
	data     map[string][]windowEntry // by serialized key, sorted by (ts, seq)
}

type windowEntry struct {
	ts, seq int64
	value   any
}

func newMemJoinWindow(def *storeDef) *memJoinWindow {
	return &memJoinWindow{def: def, observed: -1 << 63, data: map[string][]windowEntry{}}
}

func (m *memJoinWindow) keyBytes(key any) (string, error) {
	kb, err := m.def.keySerde.serialize(m.def.name, key)
	if err != nil {
		return "", fmt.Errorf("streams: store %s: %w", m.def.name, err)
	}
	return string(kb), nil
}

func (m *memJoinWindow) put(key, value any, ts int64) error {
	if value == nil {
		// No record to keep, and no time seen (Kafka's store with
		// duplicates ignores a null before anything else).
		return nil
	}
	if ts > m.observed {
		m.observed = ts
	}
	if ts <= m.observed-m.def.retention {
		// Expired on arrival: Kafka logs and drops it.
		return nil
	}
	k, err := m.keyBytes(key)
	if err != nil {
		return err
	}
	m.seq++
	es := append(m.data[k], windowEntry{ts: ts, seq: m.seq, value: value})
	sort.SliceStable(es, func(i, j int) bool { return es[i].ts < es[j].ts })
	m.data[k] = m.expire(es)
	return nil
}

// expire drops what fell out of the retention, so memory stays bounded.
func (m *memJoinWindow) expire(es []windowEntry) []windowEntry {
	i := 0
	for i < len(es) && es[i].ts <= m.observed-m.def.retention {
		i++
	}
	return es[i:]
}

func (m *memJoinWindow) fetch(key any, from, to int64, fn func(int64, any) error) error {
	if low := m.observed - m.def.retention + 1; from < low {
		from = low
	}
	k, err := m.keyBytes(key)
	if err != nil {
		return err
	}
	for _, e := range m.data[k] {
		if e.ts >= from && e.ts <= to {
			if err := fn(e.ts, e.value); err != nil {
				return err
			}
		}
	}
	return nil
}

// memOuterJoin is the in-memory outerJoinState.
type memOuterJoin struct {
	def    *storeDef
	data   map[string]*outerEntry // by the store's byte key
	logger func(key, value []byte, ts int64)
}

type outerEntry struct {
	ts     int64
	left   bool
	key    any
	values []any
}

func newMemOuterJoin(def *storeDef) *memOuterJoin {
	return &memOuterJoin{def: def, data: map[string]*outerEntry{}}
}

// storeKey is Kafka's TimestampedKeyAndJoinSide bytes: the timestamp big
// endian, a byte 1 for the left side and 0 for the right, the key.
func (m *memOuterJoin) storeKey(ts int64, left bool, key any) (string, error) {
	kb, err := m.def.keySerde.serialize(m.def.name, key)
	if err != nil {
		return "", fmt.Errorf("streams: store %s: %w", m.def.name, err)
	}
	var b bytes.Buffer
	for i := 7; i >= 0; i-- {
		b.WriteByte(byte(uint64(ts) >> (8 * i)))
	}
	side := byte(0)
	if left {
		side = 1
	}
	b.WriteByte(side)
	b.Write(kb)
	return b.String(), nil
}

func (m *memOuterJoin) add(ts int64, left bool, key, value any) error {
	k, err := m.storeKey(ts, left, key)
	if err != nil {
		return err
	}
	e, ok := m.data[k]
	if !ok {
		e = &outerEntry{ts: ts, left: left, key: key}
		m.data[k] = e
	}
	e.values = append(e.values, value)
	return m.log(k, e)
}

func (m *memOuterJoin) remove(ts int64, left bool, key any) error {
	k, err := m.storeKey(ts, left, key)
	if err != nil {
		return err
	}
	delete(m.data, k)
	if m.logger != nil {
		m.logger([]byte(k), nil, ts)
	}
	return nil
}

func (m *memOuterJoin) each(fn func(string, int64, bool, any, any) (bool, error)) error {
	keys := make([]string, 0, len(m.data))
	for k := range m.data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		e := m.data[k]
		for _, v := range e.values {
			more, err := fn(k, e.ts, e.left, e.key, v)
			if err != nil || !more {
				return err
			}
		}
	}
	return nil
}

// subscription is Kafka's SubscriptionWrapper: a left row's subscription
// to a foreign key, with the hash of the left value it was made from.
type subscription struct {
	hash             []byte // nil: the left row was deleted
	instruction      subscriptionInstruction
	primaryKey       any
	primaryPartition int32 // -1: unknown
}

// memSubscriptions is the in-memory subscriptionState: by serialized
// foreign key, then serialized primary key.
type memSubscriptions struct {
	def    *storeDef // keySerde: the foreign key's; valueSerde: the primary key's
	data   map[string]map[string]subEntry
	logger func(key, value []byte, ts int64)
}

type subEntry struct {
	sub *subscription
	ts  int64
}

func newMemSubscriptions(def *storeDef) *memSubscriptions {
	return &memSubscriptions{def: def, data: map[string]map[string]subEntry{}}
}

func (m *memSubscriptions) keys(fk, pk any) (string, string, error) {
	fb, err := m.def.keySerde.serialize(m.def.name, fk)
	if err != nil {
		return "", "", fmt.Errorf("streams: store %s: %w", m.def.name, err)
	}
	pb, err := m.def.valueSerde.serialize(m.def.name, pk)
	if err != nil {
		return "", "", fmt.Errorf("streams: store %s: %w", m.def.name, err)
	}
	return string(fb), string(pb), nil
}

func (m *memSubscriptions) get(fk, pk any) (*subscription, int64, bool, error) {
	f, p, err := m.keys(fk, pk)
	if err != nil {
		return nil, 0, false, err
	}
	e, ok := m.data[f][p]
	return e.sub, e.ts, ok, nil
}

func (m *memSubscriptions) put(fk, pk any, sub *subscription, ts int64) error {
	f, p, err := m.keys(fk, pk)
	if err != nil {
		return err
	}
	if m.data[f] == nil {
		m.data[f] = map[string]subEntry{}
	}
	m.data[f][p] = subEntry{sub: sub, ts: ts}
	return m.log(f, p, sub, ts)
}

func (m *memSubscriptions) remove(fk, pk any) error {
	f, p, err := m.keys(fk, pk)
	if err != nil {
		return err
	}
	delete(m.data[f], p)
	if len(m.data[f]) == 0 {
		delete(m.data, f)
	}
	if m.logger != nil {
		m.logger(subscriptionLogKey(f, p), nil, 0)
	}
	return nil
}

func (m *memSubscriptions) scan(fk any, fn func(pk any, sub *subscription) error) error {
	fb, err := m.def.keySerde.serialize(m.def.name, fk)
	if err != nil {
		return fmt.Errorf("streams: store %s: %w", m.def.name, err)
	}
	subs := m.data[string(fb)]
	pks := make([]string, 0, len(subs))
	for p := range subs {
		pks = append(pks, p)
	}
	sort.Strings(pks)
	for _, p := range pks {
		e := subs[p]
		if err := fn(e.sub.primaryKey, e.sub); err != nil {
			return err
		}
	}
	return nil
}

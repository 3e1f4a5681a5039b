package streams

import (
	"fmt"
	"time"

	"github.com/samsa-io/samsa/streams/serde"
)

// StoreBuilder describes a state store for the Processor API (Kafka's
// StoreBuilder): KeyValueStore, WindowStore, SessionStore make one.
type StoreBuilder interface {
	storeDef() *storeDef
}

// StoreOptions are what Kafka's StoreBuilder and Materialized set besides
// serdes.
type StoreOptions struct {
	// InMemory keeps the store in memory instead of pebble (Kafka's
	// Stores.inMemory...); it restores from its changelog on every start.
	InMemory bool
	// LoggingDisabled turns the changelog off (withLoggingDisabled): the
	// store does not survive a move to another instance.
	LoggingDisabled bool
	// LogConfig are topic configs for the changelog (withLoggingEnabled).
	LogConfig map[string]string
	// CachingDisabled turns the record cache off for this store
	// (withCachingDisabled); Kafka's DSL stores cache by default.
	CachingDisabled bool
}

type storeBuilder struct{ def *storeDef }

func (s storeBuilder) storeDef() *storeDef { return s.def }

// KeyValueStore describes a timestamped key-value store.
func KeyValueStore[K, V any](name string, ks serde.Serde[K], vs serde.Serde[V], o StoreOptions) StoreBuilder {
	return storeBuilder{def: &storeDef{name: name, kind: keyValueStore, timestamped: true, inMemory: o.InMemory,
		logging: !o.LoggingDisabled, logConfig: o.LogConfig, caching: !o.CachingDisabled,
		keySerde: box(ks), valueSerde: box(vs)}}
}

// WindowStore describes a window store keeping windows of size for
// retention; retainDuplicates keeps every put (stream-stream joins).
func WindowStore[K, V any](name string, ks serde.Serde[K], vs serde.Serde[V], retention, size time.Duration, retainDuplicates bool, o StoreOptions) StoreBuilder {
	return storeBuilder{def: &storeDef{name: name, kind: windowStore, timestamped: true, inMemory: o.InMemory,
		logging: !o.LoggingDisabled, logConfig: o.LogConfig, caching: !o.CachingDisabled,
		retention: retention.Milliseconds(), windowSize: size.Milliseconds(), retainDuplicates: retainDuplicates,
		keySerde: box(ks), valueSerde: box(vs)}}
}

// SessionStore describes a session store keeping sessions for retention.
func SessionStore[K, V any](name string, ks serde.Serde[K], vs serde.Serde[V], retention time.Duration, o StoreOptions) StoreBuilder {
	return storeBuilder{def: &storeDef{name: name, kind: sessionStore, inMemory: o.InMemory,
		logging: !o.LoggingDisabled, logConfig: o.LogConfig, caching: !o.CachingDisabled,
		retention: retention.Milliseconds(), keySerde: box(ks), valueSerde: box(vs)}}
}

// Materialized names and configures the store an aggregation or a table
// keeps (Kafka's Materialized). A named store can be queried
// (interactive queries); an unnamed one gets a generated name.
type Materialized[K, V any] struct {
	StoreName string
	Key       serde.Serde[K]
	Value     serde.Serde[V]
	StoreOptions
	// Retention of a windowed store, as Kafka's Materialized.withRetention.
	// Zero takes the least the windows need (Kafka's default): size plus
	// grace for time windows, twice the time difference plus grace for
	// sliding windows, gap plus grace for sessions; less is refused.
	Retention time.Duration
}

// kvState is a task's timestamped key-value store as the DSL's processors
// use it: keys and values are Go values, nil a null.
type kvState interface {
	get(key any) (value any, ts int64, ok bool, err error)
	put(key, value any, ts int64) error // nil value deletes
}

// memKV is the in-memory timestamped key-value store the runtime uses
// until stores are opened through streams/state.
type memKV struct {
	def    *storeDef
	data   map[string]memEntry
	logger func(key, value []byte, ts int64) // the changelog, when logged
}

type memEntry struct {
	value []byte
	ts    int64
}

func newMemKV(def *storeDef) *memKV { return &memKV{def: def, data: map[string]memEntry{}} }

func (m *memKV) get(key any) (any, int64, bool, error) {
	kb, err := m.def.keySerde.serialize(m.def.name, key)
	if err != nil {
		return nil, 0, false, err
	}
	e, ok := m.data[string(kb)]
	if !ok {
		return nil, 0, false, nil
	}
	v, err := m.def.valueSerde.deserialize(m.def.name, e.value)
	return v, e.ts, true, err
}

func (m *memKV) put(key, value any, ts int64) error {
	kb, err := m.def.keySerde.serialize(m.def.name, key)
	if err != nil {
		return err
	}
	if value == nil {
		delete(m.data, string(kb))
		if m.logger != nil {
			m.logger(kb, nil, ts)
		}
		return nil
	}
	vb, err := m.def.valueSerde.serialize(m.def.name, value)
	if err != nil {
		return err
	}
	if vb == nil {
		return fmt.Errorf("streams: store %s: the value serde made nil of a value", m.def.name)
	}
	m.data[string(kb)] = memEntry{value: vb, ts: ts}
	if m.logger != nil {
		m.logger(kb, vb, ts)
	}
	return nil
}

// restore applies a changelog record.
func (m *memKV) restore(key, value []byte, ts int64) {
	if value == nil {
		delete(m.data, string(key))
		return
	}
	m.data[string(key)] = memEntry{value: append([]byte(nil), value...), ts: ts}
}

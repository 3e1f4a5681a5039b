package streams

import (
	"github.com/samsa-io/samsa/streams/serde"
)

// Table is a changelog stream seen as a table (Kafka's KTable): each
// record is an update of its key, a null value a delete. Downstream of a
// table flows the change: the new value and, when a downstream processor
// needs it, the old one.
type Table[K, V any] struct {
	b          *Builder
	name       string
	keySerde   serde.Serde[K]
	valueSerde serde.Serde[V]
	tn         *tableNode
}

// tableNode is what the processors of a table share with the builder,
// settled at Build and read when tasks start.
type tableNode struct {
	// sendOld asks the node to forward old values with new ones (Kafka's
	// enableSendingOldValues); a node that cannot read its old values
	// asks its parent.
	sendOld bool
	parent  *tableNode
	// store is the materialized store, "" when the node has none.
	store string
	// materialize makes the node keep a store (the lazily materialized
	// source of Kafka's KTableSource); nil when it cannot.
	materialize func() string
	// getter looks values up by key in a task (Kafka's
	// KTableValueGetter): from the node's store, or through the parent's.
	getter func(nc *nodeContext) (valueGetter, error)
	// storesForGetter are the stores the getter reads: a processor that
	// uses the getter must be connected to them.
	storesForGetter func() []string
	// onSendOld is called when a downstream asks for old values: a node of
	// two parents (a table-table join) asks both.
	onSendOld func()
	// windowed is set on a windowed aggregation's node (windows.go).
	windowed *windowedTable
}

// valueGetter looks up a table's current value (nil: none) and its
// timestamp.
type valueGetter func(key any) (value any, ts int64, err error)

func (tn *tableNode) enableSendOld() {
	for n := tn; n != nil; n = n.parent {
		n.sendOld = true
		if n.onSendOld != nil {
			n.onSendOld()
		}
		if n.store != "" {
			return
		}
	}
}

// storeGetter reads a key-value store of a task.
func storeGetter(store string) func(nc *nodeContext) (valueGetter, error) {
	return func(nc *nodeContext) (valueGetter, error) {
		s, err := nc.task.storeFor(store)
		if err != nil {
			return nil, err
		}
		kv := s.(kvState)
		return func(key any) (any, int64, error) {
			v, ts, ok, err := kv.get(key)
			if !ok || err != nil {
				return nil, -1, err
			}
			return v, ts, nil
		}, nil
	}
}

// TableFrom reads a table from a topic (StreamsBuilder.table). Records with
// a null key are dropped; a null value deletes the key.
func TableFrom[K, V any](b *Builder, topic string, c Consumed[K, V], m ...Materialized[K, V]) *Table[K, V] {
	mat, err := optional(m)
	b.fail(err)
	ks, vs := serdeOr(b, firstSerde(mat.Key, c.Key)), serdeOr(b, firstSerde(mat.Value, c.Value))
	storeName := mat.StoreName
	if storeName == "" {
		storeName = b.newStoreName(topic + "-")
	}
	source := c.Name
	tableSource := c.Name
	if c.Name != "" {
		source = c.Name + "-source"
	} else {
		source = b.newName("KSTREAM-SOURCE-")
		tableSource = b.newName("KTABLE-SOURCE-")
	}
	b.addSource(&node{name: source, kind: sourceNode, topics: []string{topic}, keySerde: box(ks), valueSerde: box(vs),
		extractor: c.TimestampExtractor, resetPolicy: c.OffsetReset})
	tn := &tableNode{}
	def := &storeDef{name: storeName, kind: keyValueStore, timestamped: true, inMemory: mat.InMemory,
		logging: !mat.LoggingDisabled, logConfig: mat.LogConfig, caching: !mat.CachingDisabled,
		keySerde: box(ks), valueSerde: box(vs)}
	tn.materialize = func() string {
		if tn.store == "" {
			tn.store = storeName
			b.addStore(def)
			b.fail(b.topo.ConnectProcessorAndStateStores([]string{tableSource}, storeName))
		}
		return storeName
	}
	tn.getter = func(nc *nodeContext) (valueGetter, error) { return storeGetter(tn.store)(nc) }
	tn.storesForGetter = func() []string { return []string{tn.materialize()} }
	b.addProcessor(tableSource, []string{source}, func() processor { return &tableSourceProc{tn: tn} })
	if mat.StoreName != "" {
		tn.materialize() // after the node exists: it connects the store to it
	}
	return &Table[K, V]{b: b, name: tableSource, keySerde: ks, valueSerde: vs, tn: tn}
}

func firstSerde[T any](a, b serde.Serde[T]) serde.Serde[T] {
	if a != nil {
		return a
	}
	return b
}

// tableSourceProc is Kafka's KTableSource: drop null keys, keep the store
// (when materialized), forward the change.
type tableSourceProc struct {
	nc     *nodeContext
	tn     *tableNode
	store  kvState
	cached bool
}

func (p *tableSourceProc) init(nc *nodeContext) error {
	p.nc = nc
	if p.tn.store != "" {
		s, err := nc.store(p.tn.store)
		if err != nil {
			return err
		}
		p.store = s.(kvState)
		p.cached = forwardOnFlush(nc, s, p.tn)
	}
	return nil
}

func (p *tableSourceProc) process(r rec) error {
	if r.key == nil {
		p.nc.task.dropped("a table record with a null key")
		return nil
	}
	var old any
	if p.store != nil {
		v, _, ok, err := p.store.get(r.key)
		if err != nil {
			return err
		}
		if ok {
			old = v
		}
		if err := p.store.put(r.key, r.value, r.ts); err != nil {
			return err
		}
		if p.cached {
			return nil
		}
	}
	if !p.tn.sendOld {
		old = nil
	}
	r.value = change{newV: r.value, oldV: old}
	return p.nc.forward(r)
}

func (p *tableSourceProc) close() error { return nil }

// ToStream turns the table's changes into a stream of new values (a delete
// becomes a record with a null value).
func (t *Table[K, V]) ToStream(name ...Named) *Stream[K, V] {
	n := t.b.nameOr(one(name), "KTABLE-TOSTREAM-")
	t.b.addProcessor(n, []string{t.name}, stateless(func(nc *nodeContext, r rec) error {
		r.value = r.value.(change).newV
		return nc.forward(r)
	}))
	return &Stream[K, V]{b: t.b, name: n, keySerde: t.keySerde, valueSerde: t.valueSerde}
}

// Filter keeps the rows pred holds for; a row that stops matching is
// deleted downstream (Kafka's KTable#filter).
func (t *Table[K, V]) Filter(pred func(key K, value V) bool, name ...Named) *Table[K, V] {
	return t.filter(pred, false, name)
}

// FilterNot drops the rows pred holds for.
func (t *Table[K, V]) FilterNot(pred func(key K, value V) bool, name ...Named) *Table[K, V] {
	return t.filter(pred, true, name)
}

func (t *Table[K, V]) filter(pred func(K, V) bool, not bool, names []Named) *Table[K, V] {
	n := t.b.nameOr(one(names), "KTABLE-FILTER-")
	keep := func(k, v any) any {
		if v == nil || pred(as[K](k), as[V](v)) == not {
			return nil
		}
		return v
	}
	return t.mapTable(n, keep, t.valueSerde)
}

// mapTable adds a node computing each new (and old) value from the
// parent's, as Kafka's KTableFilter and KTableMapValues; fn never sees a
// null value (it is not called for deletes).
func (t *Table[K, V]) mapTable(n string, fn func(k, v any) any, vs serde.Serde[V]) *Table[K, V] {
	tn := &tableNode{parent: t.tn}
	parent := t.tn
	t.b.addProcessor(n, []string{t.name}, stateless(func(nc *nodeContext, r rec) error {
		c := r.value.(change)
		var newV, oldV any
		if c.newV != nil {
			newV = fn(r.key, c.newV)
		}
		if tn.sendOld && c.oldV != nil {
			oldV = fn(r.key, c.oldV)
		}
		if tn.sendOld && newV == nil && oldV == nil {
			// Nothing changed downstream. Without old values Kafka forwards
			// (null, null) too: a row filtered out becomes a tombstone.
			return nil
		}
		r.value = change{newV: newV, oldV: oldV}
		return nc.forward(r)
	}))
	tn.getter = func(nc *nodeContext) (valueGetter, error) {
		g, err := parent.getter(nc)
		if err != nil {
			return nil, err
		}
		return func(key any) (any, int64, error) {
			v, ts, err := g(key)
			if v == nil || err != nil {
				return nil, ts, err
			}
			return fn(key, v), ts, nil
		}, nil
	}
	tn.storesForGetter = parent.storesForGetter
	return &Table[K, V]{b: t.b, name: n, keySerde: t.keySerde, valueSerde: vs, tn: tn}
}

// MapTableValues maps each row's value; deletes pass through.
func MapTableValues[K, V, VR any](t *Table[K, V], fn func(key K, value V) VR, name ...Named) *Table[K, VR] {
	n := t.b.nameOr(one(name), "KTABLE-MAPVALUES-")
	mapped := (&Table[K, V]{b: t.b, name: t.name, keySerde: t.keySerde, tn: t.tn}).mapTable(n, func(k, v any) any {
		return fn(as[K](k), as[V](v))
	}, nil)
	return &Table[K, VR]{b: t.b, name: mapped.name, keySerde: t.keySerde, valueSerde: defaultOrNil[VR](), tn: mapped.tn}
}

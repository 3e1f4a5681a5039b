package streams

import (
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"

	"github.com/samsa-io/samsa/streams/serde"
)

// GroupedTable is a table re-grouped by a new key, ready to aggregate
// (Kafka's KGroupedTable). Each row contributes to the group its selector
// maps it to; an update moving it elsewhere is subtracted from the old
// group and added to the new one.
type GroupedTable[K, V any] struct {
	b       *Builder
	selectN string
	grouped Grouped[K, V]
	ks      serde.Serde[K]
	vs      serde.Serde[V]
	source  string // the repartition source, reused when the topic is named
}

// GroupTableBy groups a table's rows by fn's key and value (Kafka's
// KTable#groupBy and KTableRepartitionMap): the table sends its old values,
// each change becomes a subtraction of the old row's pair and an addition
// of the new one's (one record when both land on the same key), written
// through a repartition topic. Pairs whose key or value is nil (pointer,
// map, slice or interface types) are skipped, as Kafka skips null ones.
func GroupTableBy[K, V, KR, VR any](t *Table[K, V], fn func(key K, value V) (KR, VR), g ...Grouped[KR, VR]) *GroupedTable[KR, VR] {
	b := t.b
	gr, err := optional(g)
	b.fail(err)
	n := b.nameOr(gr.Name, "KTABLE-SELECT-")
	pair := func(k, v any) (any, any, bool) {
		if v == nil {
			return nil, nil, false
		}
		nk, nv := fn(as[K](k), v.(V))
		if isNil(nk) || isNil(nv) {
			return nil, nil, false
		}
		return nk, nv, true
	}
	b.addProcessor(n, []string{t.name}, stateless(func(nc *nodeContext, r rec) error {
		if r.key == nil {
			return errors.New("streams: record key for the grouping table should not be null")
		}
		c := r.value.(change)
		newK, newV, newOK := pair(r.key, c.newV)
		oldK, oldV, oldOK := pair(r.key, c.oldV)
		if newOK && oldOK && reflect.DeepEqual(newK, oldK) {
			return nc.forward(rec{key: newK, value: change{newV: newV, oldV: oldV}, ts: r.ts, headers: r.headers})
		}
		// The old pair first, as Kafka's, so a reduce sees the subtraction
		// before the addition.
		if oldOK {
			if err := nc.forward(rec{key: oldK, value: change{oldV: oldV}, ts: r.ts, headers: r.headers}); err != nil {
				return err
			}
		}
		if newOK {
			return nc.forward(rec{key: newK, value: change{newV: newV}, ts: r.ts, headers: r.headers})
		}
		return nil
	}))
	sendOldForced(t.tn)
	return &GroupedTable[KR, VR]{b: b, selectN: n, grouped: gr,
		ks: firstSerde(gr.Key, defaultOrNil[KR]()), vs: firstSerde(gr.Value, defaultOrNil[VR]())}
}

// sendOldForced asks tn for old values and materializes the first node
// up the chain that can keep a store, as Kafka's
// enableSendingOldValues(forceMaterialization=true).
func sendOldForced(tn *tableNode) {
	if tn == nil {
		return
	}
	tn.enableSendOld()
	for n := tn; n != nil; n = n.parent {
		if n.store != "" {
			return
		}
		if n.materialize != nil {
			n.materialize()
			return
		}
	}
}

// isNil says whether a Go value stands for Kafka's null.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface, reflect.Func, reflect.Chan:
		return rv.IsNil()
	}
	return false
}

// Count counts the rows of each group (Kafka's KGroupedTable#count).
func (g *GroupedTable[K, V]) Count(m ...Materialized[K, int64]) *Table[K, int64] {
	mat, err := optional(m)
	g.b.fail(err)
	return tableAggregateWith(g, "KTABLE-AGGREGATE-", mat, serde.Int64(), &tableAggregateProc{
		initial: func() any { return int64(0) },
		add:     func(_, _, agg any) any { return agg.(int64) + 1 },
		sub:     func(_, _, agg any) any { return agg.(int64) - 1 },
	})
}

// Reduce combines each group's rows with adder and takes a row's old value
// out with subtractor (Kafka's KGroupedTable#reduce). A subtractor result
// that is nil (for pointer-like V) deletes the group.
func (g *GroupedTable[K, V]) Reduce(adder, subtractor func(agg, value V) V, m ...Materialized[K, V]) *Table[K, V] {
	mat, err := optional(m)
	g.b.fail(err)
	return tableAggregateWith(g, "KTABLE-REDUCE-", mat, g.vs, &tableAggregateProc{
		reduce: true,
		add:    func(_, v, agg any) any { return nilOr(adder(agg.(V), v.(V))) },
		sub:    func(_, v, agg any) any { return nilOr(subtractor(agg.(V), v.(V))) },
	})
}

// TableAggregate folds each group's rows into an aggregate starting from
// init(): adder for a row's new value, subtractor for its old one (Kafka's
// KGroupedTable#aggregate). A nil result (pointer-like VA) deletes the
// group; a zero count does not.
func TableAggregate[K, V, VA any](g *GroupedTable[K, V], init func() VA, adder, subtractor func(key K, value V, agg VA) VA, m ...Materialized[K, VA]) *Table[K, VA] {
	mat, err := optional(m)
	g.b.fail(err)
	return tableAggregateWith(g, "KTABLE-AGGREGATE-", mat, nil, &tableAggregateProc{
		initial: func() any { return nilOr(init()) },
		add:     func(k, v, agg any) any { return nilOr(adder(as[K](k), v.(V), as[VA](agg))) },
		sub:     func(k, v, agg any) any { return nilOr(subtractor(as[K](k), v.(V), as[VA](agg))) },
	})
}

func nilOr(v any) any {
	if isNil(v) {
		return nil
	}
	return v
}

// tableAggregateWith is Kafka's KGroupedTableImpl#doAggregate: the store
// name first, then the repartition sink and source, then the aggregate
// node; the topic is <Grouped.Name or store>-repartition.
func tableAggregateWith[K, V, VA any](g *GroupedTable[K, V], prefix string, mat Materialized[K, VA], defaultVS serde.Serde[VA], p *tableAggregateProc) *Table[K, VA] {
	b := g.b
	storeName := mat.StoreName
	if storeName == "" {
		storeName = b.newStoreName("KTABLE-AGGREGATE-")
	}
	ks := serdeOr(b, firstSerde(mat.Key, g.ks))
	vs := serdeOr(b, firstSerde(mat.Value, firstSerde(defaultVS, defaultOrNil[VA]())))
	sink, source := b.newName("KSTREAM-SINK-"), b.newName("KSTREAM-SOURCE-")
	name := b.newName(prefix)
	if g.source == "" || g.grouped.Name == "" {
		topic := storeName + "-repartition"
		if g.grouped.Name != "" {
			topic = g.grouped.Name + "-repartition"
		}
		gks, gvs := serdeOr(b, g.ks), serdeOr(b, g.vs)
		cs := changeSerde{inner: box(gvs)}
		b.addSink(&node{name: sink, kind: sinkNode, topic: topic, keySerde: box(gks), valueSerde: cs}, []string{g.selectN})
		b.addSource(&node{name: source, kind: sourceNode, topics: []string{topic}, keySerde: box(gks), valueSerde: cs})
		b.topo.addInternalTopic(topic, 0)
		g.source = source
	}
	b.addStore(&storeDef{name: storeName, kind: keyValueStore, timestamped: true, inMemory: mat.InMemory,
		logging: !mat.LoggingDisabled, logConfig: mat.LogConfig, caching: !mat.CachingDisabled,
		keySerde: box(ks), valueSerde: box(vs)})
	tn := &tableNode{store: storeName}
	tn.getter = storeGetter(storeName)
	tn.storesForGetter = func() []string { return []string{storeName} }
	p.tn = tn
	b.addProcessor(name, []string{g.source}, func() processor { c := *p; return &c }, storeName)
	return &Table[K, VA]{b: b, name: name, keySerde: ks, valueSerde: vs, tn: tn}
}

// tableAggregateProc is Kafka's KTableAggregate (and KTableReduce with
// reduce set): subtract the old value from the group's aggregate, then add
// the new one; the timestamp is the largest of the record's and the
// aggregate's.
type tableAggregateProc struct {
	nc       *nodeContext
	tn       *tableNode
	store    kvState
	cached   bool
	reduce   bool
	initial  func() any
	add, sub func(k, v, agg any) any
}

func (p *tableAggregateProc) init(nc *nodeContext) error {
	p.nc = nc
	s, err := nc.store(p.tn.store)
	if err != nil {
		return err
	}
	p.store = s.(kvState)
	p.cached = forwardOnFlush(nc, s, p.tn)
	return nil
}

func (p *tableAggregateProc) process(r rec) error {
	if r.key == nil {
		return fmt.Errorf("streams: record key for the table aggregate with store %s should not be null", p.tn.store)
	}
	c := r.value.(change)
	oldAgg, oldTS, found, err := p.store.get(r.key)
	if err != nil {
		return err
	}
	if !found {
		oldAgg = nil
	}
	ts := r.ts
	inter := oldAgg
	if c.oldV != nil && oldAgg != nil {
		inter = p.sub(r.key, c.oldV, oldAgg)
		ts = max(r.ts, oldTS)
	}
	newAgg := inter
	if c.newV != nil {
		switch {
		case p.reduce && inter == nil:
			newAgg = c.newV
		case p.reduce:
			newAgg = p.add(r.key, c.newV, inter)
			ts = max(r.ts, oldTS)
		default:
			if inter == nil {
				inter = p.initial()
			}
			newAgg = p.add(r.key, c.newV, inter)
			if found {
				ts = max(r.ts, oldTS)
			}
		}
	}
	if err := p.store.put(r.key, newAgg, ts); err != nil {
		return err
	}
	if p.cached {
		return nil
	}
	if !p.tn.sendOld {
		oldAgg = nil
	}
	r.value, r.ts = change{newV: newAgg, oldV: oldAgg}, ts
	return p.nc.forward(r)
}

func (p *tableAggregateProc) close() error { return nil }

// changeSerde is Kafka's ChangedSerializer/ChangedDeserializer, the value
// format of a grouped table's repartition topic:
// [old][0], [new][1] or [varint len(new)][new][old][2]; it also reads
// Kafka's 3–5 (the same with an isLatest byte before the flag).
type changeSerde struct{ inner anySerde }

func (s changeSerde) serialize(topic string, v any) ([]byte, error) {
	c, ok := v.(change)
	if !ok {
		return nil, fmt.Errorf("streams: a table repartition topic %q got %T, not a change", topic, v)
	}
	nb, err := s.inner.serialize(topic, c.newV)
	if err != nil {
		return nil, err
	}
	ob, err := s.inner.serialize(topic, c.oldV)
	if err != nil {
		return nil, err
	}
	switch {
	case c.newV != nil && c.oldV != nil:
		out := binary.AppendVarint(nil, int64(len(nb)))
		out = append(append(out, nb...), ob...)
		return append(out, 2), nil
	case c.newV != nil:
		return append(append([]byte{}, nb...), 1), nil
	case c.oldV != nil:
		return append(append([]byte{}, ob...), 0), nil
	}
	return nil, fmt.Errorf("streams: both old and new values are null in a change for topic %q", topic)
}

func (s changeSerde) deserialize(topic string, data []byte) (any, error) {
	if len(data) == 0 {
		return nil, fmt.Errorf("streams: topic %q: an empty change: %w", topic, serde.ErrInvalidData)
	}
	flag := data[len(data)-1]
	body := data[:len(data)-1]
	if flag >= 3 && flag <= 5 {
		if len(body) == 0 {
			return nil, fmt.Errorf("streams: topic %q: a change without its isLatest byte: %w", topic, serde.ErrInvalidData)
		}
		body, flag = body[:len(body)-1], flag-3
	}
	var nb, ob []byte
	switch flag {
	case 0:
		ob = body
	case 1:
		nb = body
	case 2:
		n, k := binary.Varint(body)
		if k <= 0 || n < 0 || int64(len(body)-k) < n {
			return nil, fmt.Errorf("streams: topic %q: a change with a bad new-value length: %w", topic, serde.ErrInvalidData)
		}
		nb, ob = body[k:k+int(n)], body[k+int(n):]
	default:
		return nil, fmt.Errorf("streams: topic %q: unknown change encoding flag %d: %w", topic, flag, serde.ErrInvalidData)
	}
	var c change
	var err error
	if nb != nil {
		if c.newV, err = s.inner.deserialize(topic, nb); err != nil {
			return nil, err
		}
	}
	if ob != nil {
		if c.oldV, err = s.inner.deserialize(topic, ob); err != nil {
			return nil, err
		}
	}
	return c, nil
}

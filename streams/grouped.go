package streams

import (
	"github.com/samsa-io/samsa/streams/serde"
)

// Grouped says how to repartition for a grouping (Kafka's Grouped): the
// serdes of the repartition topic and the name its topic and nodes take.
type Grouped[K, V any] struct {
	Key   serde.Serde[K]
	Value serde.Serde[V]
	Name  string
}

// GroupedStream is a stream grouped by key, ready to aggregate (Kafka's
// KGroupedStream).
type GroupedStream[K, V any] struct {
	s       *Stream[K, V]
	grouped Grouped[K, V]
}

// GroupByKey groups by the records' keys; after a key-changing operation
// the records go through a repartition topic first.
func (s *Stream[K, V]) GroupByKey(g ...Grouped[K, V]) *GroupedStream[K, V] {
	gr, err := optional(g)
	s.b.fail(err)
	return &GroupedStream[K, V]{s: s, grouped: gr}
}

// GroupBy groups by a new key (always repartitioned).
func GroupBy[K, V, KR any](s *Stream[K, V], fn func(key K, value V) KR, g ...Grouped[KR, V]) *GroupedStream[KR, V] {
	gr, err := optional(g)
	s.b.fail(err)
	n := s.b.nameOr(gr.Name, "KSTREAM-KEY-SELECT-")
	s.b.addProcessor(n, []string{s.name}, selectKey(fn))
	return &GroupedStream[KR, V]{s: derive(s, n, defaultOrNil[KR](), s.valueSerde, true), grouped: gr}
}

// repartitionFor writes the stream through the repartition topic
// <prefix>-repartition when a key changed upstream, returning the node the
// aggregation reads from (Kafka's createRepartitionedSource).
func repartitionFor[K, V any](s *Stream[K, V], prefix string, ks serde.Serde[K], vs serde.Serde[V], partitions int32, partitioner func(string, any, any, int32) (int32, bool)) string {
	b := s.b
	topic := prefix
	if len(topic) < len("-repartition") || topic[len(topic)-len("-repartition"):] != "-repartition" {
		topic += "-repartition"
	}
	genSink, genFilter, genSource := b.newName("KSTREAM-SINK-"), b.newName("KSTREAM-FILTER-"), b.newName("KSTREAM-SOURCE-")
	sink, filter, source := topic+"-sink", topic+"-filter", topic+"-source"
	if generatedName.MatchString(prefix) {
		sink, filter, source = genSink, genFilter, genSource
	}
	b.addProcessor(filter, []string{s.name}, stateless(func(nc *nodeContext, r rec) error { return nc.forward(r) }))
	b.addSink(&node{name: sink, kind: sinkNode, topic: topic, keySerde: box(ks), valueSerde: box(vs), partitioner: partitioner}, []string{filter})
	b.addSource(&node{name: source, kind: sourceNode, topics: []string{topic}, keySerde: box(ks), valueSerde: box(vs)})
	b.topo.addInternalTopic(topic, partitions)
	return source
}

// aggregateSource is where a grouped stream's aggregation reads from: the
// stream itself, or a repartition topic named after prefix.
func (g *GroupedStream[K, V]) aggregateSource(storeName string) string {
	if !g.s.repartition {
		return g.s.name
	}
	prefix := g.grouped.Name
	if prefix == "" {
		prefix = storeName
	}
	ks := serdeOr(g.s.b, firstSerde(g.grouped.Key, g.s.keySerde))
	vs := serdeOr(g.s.b, firstSerde(g.grouped.Value, g.s.valueSerde))
	return repartitionFor(g.s, prefix, ks, vs, 0, nil)
}

// Count counts the records of each key (records with a null key or value
// are dropped, as Kafka's).
func (g *GroupedStream[K, V]) Count(m ...Materialized[K, int64]) *Table[K, int64] {
	if len(m) == 1 && m[0].StoreName == "" {
		// Kafka's count(Materialized) burns a store name first, for the
		// compatibility of its topologies (KGroupedStreamImpl.count);
		// count() does not.
		g.s.b.newStoreName("KSTREAM-AGGREGATE-")
	}
	return Aggregate(g, func() int64 { return 0 }, func(_ K, _ V, agg int64) int64 { return agg + 1 }, m...)
}

// Reduce combines each key's values with fn; the first value of a key is
// its first aggregate.
func (g *GroupedStream[K, V]) Reduce(fn func(agg, value V) V, m ...Materialized[K, V]) *Table[K, V] {
	b := g.s.b
	mat, err := optional(m)
	b.fail(err)
	return aggregateWith(g, "KSTREAM-REDUCE-", mat, g.s.valueSerde, func(_ any, v any, agg any, found bool) any {
		if !found {
			return v
		}
		return fn(agg.(V), v.(V))
	})
}

// Aggregate folds each key's values into an aggregate starting from init().
func Aggregate[K, V, VA any](g *GroupedStream[K, V], init func() VA, fn func(key K, value V, agg VA) VA, m ...Materialized[K, VA]) *Table[K, VA] {
	mat, err := optional(m)
	g.s.b.fail(err)
	return aggregateWith(g, "KSTREAM-AGGREGATE-", mat, nil, func(k any, v any, agg any, found bool) any {
		if !found {
			agg = init()
		}
		return fn(as[K](k), v.(V), agg.(VA))
	})
}

func aggregateWith[K, V, VA any](g *GroupedStream[K, V], prefix string, mat Materialized[K, VA], defaultVS serde.Serde[VA], fn func(k, v, agg any, found bool) any) *Table[K, VA] {
	b := g.s.b
	storeName := mat.StoreName
	if storeName == "" {
		storeName = b.newStoreName(prefix)
	}
	ks := serdeOr(b, firstSerde(mat.Key, firstSerde(g.grouped.Key, g.s.keySerde)))
	vs := serdeOr(b, firstSerde(mat.Value, firstSerde(defaultVS, defaultOrNil[VA]())))
	name := b.newName(prefix)
	source := g.aggregateSource(storeName)
	b.addStore(&storeDef{name: storeName, kind: keyValueStore, timestamped: true, inMemory: mat.InMemory,
		logging: !mat.LoggingDisabled, logConfig: mat.LogConfig, caching: !mat.CachingDisabled,
		keySerde: box(ks), valueSerde: box(vs)})
	tn := &tableNode{store: storeName}
	tn.getter = storeGetter(storeName)
	tn.storesForGetter = func() []string { return []string{storeName} }
	b.addProcessor(name, []string{source}, func() processor {
		return &streamAggregateProc{tn: tn, fn: fn}
	}, storeName)
	return &Table[K, VA]{b: b, name: name, keySerde: ks, valueSerde: vs, tn: tn}
}

// streamAggregateProc is Kafka's KStreamAggregate/KStreamReduce: records
// with a null key or value are dropped; the aggregate's timestamp is the
// largest of its records'.
type streamAggregateProc struct {
	nc     *nodeContext
	tn     *tableNode
	store  kvState
	fn     func(k, v, agg any, found bool) any
	cached bool
}

func (p *streamAggregateProc) init(nc *nodeContext) error {
	p.nc = nc
	s, err := nc.store(p.tn.store)
	if err != nil {
		return err
	}
	p.store = s.(kvState)
	p.cached = forwardOnFlush(nc, s, p.tn)
	return nil
}

// forwardOnFlush makes a caching store's flushes the node's output (Kafka's
// TimestampedTupleForwarder): the processor then does not forward itself.
func forwardOnFlush(nc *nodeContext, s any, tn *tableNode) bool {
	cs, ok := s.(cachingState)
	if !ok || !cs.caching() {
		return false
	}
	cs.setFlushListener(func(key, newV, oldV any, ts int64) error {
		if !tn.sendOld {
			oldV = nil
		}
		return nc.forward(rec{key: key, value: change{newV: newV, oldV: oldV}, ts: ts})
	})
	return true
}

func (p *streamAggregateProc) process(r rec) error {
	if r.key == nil || r.value == nil {
		p.nc.task.dropped("an aggregated record with a null key or value")
		return nil
	}
	old, oldTS, found, err := p.store.get(r.key)
	if err != nil {
		return err
	}
	agg := p.fn(r.key, r.value, old, found)
	ts := r.ts
	if found && oldTS > ts {
		ts = oldTS
	}
	if err := p.store.put(r.key, agg, ts); err != nil {
		return err
	}
	if p.cached {
		return nil
	}
	var oldV any
	if p.tn.sendOld && found {
		oldV = old
	}
	r.value, r.ts = change{newV: agg, oldV: oldV}, ts
	return p.nc.forward(r)
}

func (p *streamAggregateProc) close() error { return nil }

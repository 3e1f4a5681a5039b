package streams

import "github.com/samsa-io/samsa/streams/serde"

// CogroupedStream aggregates several grouped streams of one key type into
// one table (Kafka's CogroupedKStream): each input has its own aggregator,
// all share the aggregate's store.
type CogroupedStream[K, VA any] struct {
	b      *Builder
	inputs []*cogroupInput
	ks     serde.Serde[K] // the first input's, when Materialized gives none
}

// cogroupInput is one grouped stream with its aggregator, types erased.
type cogroupInput struct {
	key any // the *GroupedStream, identifying the input as Kafka's map key
	// parent returns the node the input's aggregate reads from, going
	// through <prefix>-repartition when the key changed upstream.
	parent  func(storeName string) string
	sources func() []string
	agg     func(k, v, agg any, found bool) any
}

// CogroupStart starts a cogroup with g and its aggregator (Kafka's
// KGroupedStream#cogroup).
func CogroupStart[K, V, VA any](g *GroupedStream[K, V], agg func(key K, value V, agg VA) VA) *CogroupedStream[K, VA] {
	cs := &CogroupedStream[K, VA]{b: g.s.b, ks: firstSerde(g.grouped.Key, g.s.keySerde)}
	return CogroupAdd(cs, g, agg)
}

// CogroupAdd adds a grouped stream and its aggregator (Kafka's
// CogroupedKStream#cogroup); adding the same stream again replaces its
// aggregator.
func CogroupAdd[K, V, VA any](cs *CogroupedStream[K, VA], g *GroupedStream[K, V], agg func(key K, value V, agg VA) VA) *CogroupedStream[K, VA] {
	in := &cogroupInput{key: g,
		parent: func(storeName string) string { return g.aggregateSource(storeName) },
		agg: func(k, v, a any, _ bool) any {
			return agg(as[K](k), v.(V), a.(VA))
		}}
	for i, old := range cs.inputs {
		if old.key == any(g) {
			cs.inputs[i] = in
			return cs
		}
	}
	cs.inputs = append(cs.inputs, in)
	return cs
}

// CogroupAggregate aggregates the inputs into a table (Kafka's
// CogroupedKStream#aggregate and CogroupedStreamAggregateBuilder): the
// store name first, then each input's repartition (named after its
// Grouped.Name or the store), then one COGROUPKSTREAM-AGGREGATE- node per
// input, all on the store, then COGROUPKSTREAM-MERGE- passing their
// changes on. The inputs must be co-partitioned.
func CogroupAggregate[K, VA any](cs *CogroupedStream[K, VA], init func() VA, m ...Materialized[K, VA]) *Table[K, VA] {
	b := cs.b
	mat, err := optional(m)
	b.fail(err)
	storeName := mat.StoreName
	if storeName == "" {
		storeName = b.newStoreName("COGROUPKSTREAM-AGGREGATE-")
	}
	ks := serdeOr(b, firstSerde(mat.Key, cs.ks))
	vs := serdeOr(b, firstSerde(mat.Value, defaultOrNil[VA]()))
	parents := make([]string, len(cs.inputs))
	var sources []string
	for i, in := range cs.inputs {
		parents[i] = in.parent(storeName)
		sources = append(sources, sourcesOf(b.topo, parents[i])...)
	}
	if len(cs.inputs) > 1 && b.err == nil {
		b.topo.copartitionSources(sources...)
	}
	b.addStore(&storeDef{name: storeName, kind: keyValueStore, timestamped: true, inMemory: mat.InMemory,
		logging: !mat.LoggingDisabled, logConfig: mat.LogConfig, caching: !mat.CachingDisabled,
		keySerde: box(ks), valueSerde: box(vs)})
	tn := &tableNode{store: storeName}
	tn.getter = storeGetter(storeName)
	tn.storesForGetter = func() []string { return []string{storeName} }
	aggs := make([]string, len(cs.inputs))
	for i, in := range cs.inputs {
		fn := in.agg
		aggs[i] = b.newName("COGROUPKSTREAM-AGGREGATE-")
		b.addProcessor(aggs[i], []string{parents[i]}, func() processor {
			return &streamAggregateProc{tn: tn, fn: func(k, v, agg any, found bool) any {
				if !found {
					agg = init()
				}
				return fn(k, v, agg, found)
			}}
		}, storeName)
	}
	merge := b.newName("COGROUPKSTREAM-MERGE-")
	// Kafka's KTablePassThrough: the aggregates already wrote the store.
	b.addProcessor(merge, aggs, stateless(func(nc *nodeContext, r rec) error { return nc.forward(r) }))
	return &Table[K, VA]{b: b, name: merge, keySerde: ks, valueSerde: vs, tn: tn}
}

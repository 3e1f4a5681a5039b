package streams

import (
	"github.com/samsa-io/samsa/streams/serde"
)

// GlobalTable is a table replicated whole to every instance (Kafka's
// GlobalKTable): its store is filled from every partition of its topic
// before the application processes anything, and kept current by a
// global processor outside the tasks. A stream joins it without
// co-partitioning, through a key mapper.
type GlobalTable[K, V any] struct {
	b          *Builder
	store      string
	keySerde   serde.Serde[K]
	valueSerde serde.Serde[V]
}

// StoreName is the global store's name (queryable).
func (g *GlobalTable[K, V]) StoreName() string { return g.store }

// GlobalTableFrom reads a global table from a topic
// (StreamsBuilder#globalTable). Its store is always materialized and never
// logged (the topic is its changelog); records with a null key are dropped
// and a null value deletes the key, as a table.
func GlobalTableFrom[K, V any](b *Builder, topic string, c Consumed[K, V], m ...Materialized[K, V]) *GlobalTable[K, V] {
	mat, err := optional(m)
	b.fail(err)
	if c.OffsetReset != "" {
		b.failf("global table %s: an offset reset policy does not apply (a global store always reads its topic from the start)", topic)
	}
	if mat.LoggingDisabled || mat.LogConfig != nil {
		b.failf("global table %s: a global store has no changelog to configure (its topic is its changelog)", topic)
	}
	ks, vs := serdeOr(b, firstSerde(mat.Key, c.Key)), serdeOr(b, firstSerde(mat.Value, c.Value))
	storeName := mat.StoreName
	if storeName == "" {
		storeName = b.newStoreName(topic + "-")
	}
	source, processorName := c.Name+"-source", c.Name
	if c.Name == "" {
		source, processorName = b.newName("KSTREAM-SOURCE-"), b.newName("KTABLE-SOURCE-")
	}
	b.addSource(&node{name: source, kind: sourceNode, topics: []string{topic}, keySerde: box(ks), valueSerde: box(vs),
		extractor: c.TimestampExtractor, global: true})
	tn := &tableNode{store: storeName}
	b.addProcessor(processorName, []string{source}, func() processor { return &tableSourceProc{tn: tn} })
	b.addStore(&storeDef{name: storeName, kind: keyValueStore, timestamped: true, inMemory: mat.InMemory,
		caching: !mat.CachingDisabled, keySerde: box(ks), valueSerde: box(vs), global: true, changelog: topic,
		processors: []string{processorName}})
	if b.err == nil {
		b.topo.globals[topic] = true
	}
	return &GlobalTable[K, V]{b: b, store: storeName, keySerde: ks, valueSerde: vs}
}

// StreamGlobalTableJoin joins each stream record with the global table's
// row of keyMapper(key, value) (Kafka's KStream#join(GlobalKTable)); a
// mapper returning ok=false is Kafka's null join key: the record is
// dropped, as records with a null value (the mapper is not called for
// them) and those without a row. The
// result keeps the stream record's key and timestamp; no repartition is
// needed, whatever the stream's key.
func StreamGlobalTableJoin[K, V, KG, VG, VR any](s *Stream[K, V], g *GlobalTable[KG, VG], keyMapper func(key K, value V) (KG, bool), joiner func(key K, value V, other VG) VR, name ...Named) *Stream[K, VR] {
	return streamGlobalJoin[K, V, VR](s, g.store, false, globalKeyMapper(keyMapper), func(k, v, o any) any {
		return joiner(as[K](k), as[V](v), o.(VG))
	}, one(name))
}

// StreamGlobalTableLeftJoin is StreamGlobalTableJoin keeping the records
// without a row (other is nil), those whose mapper says no key, and those
// with a null key (the mapper still sees them and its key is looked up),
// as Kafka 4.4. Records with a null value are dropped (before the mapper
// is called: Kafka calls it with the null).
func StreamGlobalTableLeftJoin[K, V, KG, VG, VR any](s *Stream[K, V], g *GlobalTable[KG, VG], keyMapper func(key K, value V) (KG, bool), joiner func(key K, value V, other *VG) VR, name ...Named) *Stream[K, VR] {
	return streamGlobalJoin[K, V, VR](s, g.store, true, globalKeyMapper(keyMapper), func(k, v, o any) any {
		return joiner(as[K](k), as[V](v), ptrTo[VG](o))
	}, one(name))
}

func globalKeyMapper[K, V, KG any](fn func(K, V) (KG, bool)) func(k, v any) any {
	return func(k, v any) any {
		kg, ok := fn(as[K](k), as[V](v))
		if !ok {
			return nil
		}
		return kg
	}
}

func streamGlobalJoin[K, V, VR any](s *Stream[K, V], store string, left bool, mapper func(k, v any) any, joiner func(k, v, o any) any, userName string) *Stream[K, VR] {
	b := s.b
	// Kafka names both the inner and the left global join KSTREAM-LEFTJOIN-.
	name := b.nameOr(userName, "KSTREAM-LEFTJOIN-")
	b.addProcessor(name, []string{s.name}, func() processor {
		return &streamTableJoinProc{getter: storeGetter(store), left: left, keyMapper: mapper, joiner: joiner}
	})
	return &Stream[K, VR]{b: b, name: name, keySerde: s.keySerde, valueSerde: defaultOrNil[VR](), repartition: s.repartition}
}

// addGlobalStores gives a task the global stores, opened once per
// instance and shared by its tasks and the global processors.
func (t *task) addGlobalStores(stores map[string]any) {
	for name, s := range stores {
		t.stores[name] = s
	}
}

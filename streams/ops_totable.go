package streams

// ToTable turns the stream into a table (Kafka's KStream#toTable): each
// record is an update of its key, a null value a delete, a null key is
// dropped. The node is KSTREAM-TOTABLE-<n>; its store (timestamped
// key-value, KSTREAM-TOTABLE-STATE-STORE-<n> unless named) is kept when
// named or when a downstream needs it (old values, lookups), as Kafka
// materializes a toTable's KTableSource lazily. After a key change the
// records go through <node>-repartition first.
func (s *Stream[K, V]) ToTable(m ...Materialized[K, V]) *Table[K, V] {
	b := s.b
	mat, err := optional(m)
	b.fail(err)
	name := b.newName("KSTREAM-TOTABLE-")
	storeName := mat.StoreName
	if storeName == "" {
		storeName = b.newStoreName("KSTREAM-TOTABLE-")
	}
	ks := serdeOr(b, firstSerde(mat.Key, s.keySerde))
	vs := serdeOr(b, firstSerde(mat.Value, s.valueSerde))
	parent := s.name
	if s.repartition {
		parent = repartitionFor(s, name, ks, vs, 0, nil)
	}
	tn := &tableNode{}
	def := &storeDef{name: storeName, kind: keyValueStore, timestamped: true, inMemory: mat.InMemory,
		logging: !mat.LoggingDisabled, logConfig: mat.LogConfig, caching: !mat.CachingDisabled,
		keySerde: box(ks), valueSerde: box(vs)}
	b.addProcessor(name, []string{parent}, func() processor { return &tableSourceProc{tn: tn} })
	tn.materialize = func() string {
		if tn.store == "" {
			tn.store = storeName
			b.addStore(def)
			b.fail(b.topo.ConnectProcessorAndStateStores([]string{name}, storeName))
		}
		return storeName
	}
	tn.getter = func(nc *nodeContext) (valueGetter, error) { return storeGetter(tn.store)(nc) }
	tn.storesForGetter = func() []string { return []string{tn.materialize()} }
	if mat.StoreName != "" {
		tn.materialize()
	}
	return &Table[K, V]{b: b, name: name, keySerde: ks, valueSerde: vs, tn: tn}
}

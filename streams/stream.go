package streams

import (
	"fmt"

	"github.com/samsa-io/samsa/streams/serde"
)

// Stream is a record stream (Kafka's KStream). Operations that keep the
// key and value types are methods; those that change them are functions
// (Go methods cannot take type parameters): Map, MapValues, FlatMap,
// FlatMapValues, SelectKey, GroupBy, Process, the joins.
type Stream[K, V any] struct {
	b          *Builder
	name       string
	keySerde   serde.Serde[K]
	valueSerde serde.Serde[V]
	// repartition is set after a key-changing operation: a grouping or a
	// join downstream must write the records through a repartition topic
	// first so that each key lands on one task.
	repartition bool
}

// Name is the name of the node this stream comes out of.
func (s *Stream[K, V]) Name() string { return s.name }

func derive[K, V, KR, VR any](s *Stream[K, V], name string, ks serde.Serde[KR], vs serde.Serde[VR], repartition bool) *Stream[KR, VR] {
	return &Stream[KR, VR]{b: s.b, name: name, keySerde: ks, valueSerde: vs, repartition: repartition}
}

// funcProc is a stateless DSL processor.
type funcProc struct {
	nc *nodeContext
	fn func(nc *nodeContext, r rec) error
}

func (p *funcProc) init(nc *nodeContext) error { p.nc = nc; return nil }
func (p *funcProc) process(r rec) error        { return p.fn(p.nc, r) }
func (p *funcProc) close() error               { return nil }

func stateless(fn func(nc *nodeContext, r rec) error) func() processor {
	return func() processor { return &funcProc{fn: fn} }
}

// Named names an operation's node (Kafka's Named); empty generates one.
type Named string

func one(names []Named) string {
	if len(names) > 0 {
		return string(names[0])
	}
	return ""
}

// Filter keeps the records for which pred is true.
func (s *Stream[K, V]) Filter(pred func(key K, value V) bool, name ...Named) *Stream[K, V] {
	return s.filter(pred, false, name)
}

// FilterNot drops the records for which pred is true.
func (s *Stream[K, V]) FilterNot(pred func(key K, value V) bool, name ...Named) *Stream[K, V] {
	return s.filter(pred, true, name)
}

func (s *Stream[K, V]) filter(pred func(K, V) bool, not bool, names []Named) *Stream[K, V] {
	n := s.b.nameOr(one(names), "KSTREAM-FILTER-")
	s.b.addProcessor(n, []string{s.name}, stateless(func(nc *nodeContext, r rec) error {
		if pred(as[K](r.key), as[V](r.value)) != not {
			return nc.forward(r)
		}
		return nil
	}))
	return derive(s, n, s.keySerde, s.valueSerde, s.repartition)
}

// Peek calls fn for each record and passes it on unchanged.
func (s *Stream[K, V]) Peek(fn func(key K, value V), name ...Named) *Stream[K, V] {
	n := s.b.nameOr(one(name), "KSTREAM-PEEK-")
	s.b.addProcessor(n, []string{s.name}, stateless(func(nc *nodeContext, r rec) error {
		fn(as[K](r.key), as[V](r.value))
		return nc.forward(r)
	}))
	return derive(s, n, s.keySerde, s.valueSerde, s.repartition)
}

// Foreach calls fn for each record; nothing comes out of it.
func (s *Stream[K, V]) Foreach(fn func(key K, value V), name ...Named) {
	n := s.b.nameOr(one(name), "KSTREAM-FOREACH-")
	s.b.addProcessor(n, []string{s.name}, stateless(func(nc *nodeContext, r rec) error {
		fn(as[K](r.key), as[V](r.value))
		return nil
	}))
}

// Merge interleaves this stream's records with other's.
func (s *Stream[K, V]) Merge(other *Stream[K, V], name ...Named) *Stream[K, V] {
	n := s.b.nameOr(one(name), "KSTREAM-MERGE-")
	s.b.addProcessor(n, []string{s.name, other.name}, stateless(func(nc *nodeContext, r rec) error { return nc.forward(r) }))
	return derive(s, n, s.keySerde, s.valueSerde, s.repartition || other.repartition)
}

// Map replaces each record's key and value.
func Map[K, V, KR, VR any](s *Stream[K, V], fn func(key K, value V) (KR, VR), name ...Named) *Stream[KR, VR] {
	n := s.b.nameOr(one(name), "KSTREAM-MAP-")
	s.b.addProcessor(n, []string{s.name}, stateless(func(nc *nodeContext, r rec) error {
		k, v := fn(as[K](r.key), as[V](r.value))
		r.key, r.value = k, v
		return nc.forward(r)
	}))
	return derive(s, n, defaultOrNil[KR](), defaultOrNil[VR](), true)
}

// MapNullable is Map for functions that must see and keep nulls, as
// Kafka's KStream#map does (its mapper gets a null value and may return
// one): value is nil for a null value, and a nil result is forwarded as a
// null (a tombstone stays one). Map itself gives its function V's zero
// value for a null, so it cannot keep a null through.
func MapNullable[K, V, KR, VR any](s *Stream[K, V], fn func(key K, value *V) (KR, *VR), name ...Named) *Stream[KR, VR] {
	n := s.b.nameOr(one(name), "KSTREAM-MAP-")
	s.b.addProcessor(n, []string{s.name}, stateless(func(nc *nodeContext, r rec) error {
		var in *V
		if r.value != nil {
			v := r.value.(V)
			in = &v
		}
		k, v := fn(as[K](r.key), in)
		r.key, r.value = k, nil
		if v != nil {
			r.value = *v
		}
		return nc.forward(r)
	}))
	return derive(s, n, defaultOrNil[KR](), defaultOrNil[VR](), true)
}

// MapValues replaces each record's value, keeping its key (and partition).
func MapValues[K, V, VR any](s *Stream[K, V], fn func(key K, value V) VR, name ...Named) *Stream[K, VR] {
	n := s.b.nameOr(one(name), "KSTREAM-MAPVALUES-")
	s.b.addProcessor(n, []string{s.name}, stateless(func(nc *nodeContext, r rec) error {
		r.value = fn(as[K](r.key), as[V](r.value))
		return nc.forward(r)
	}))
	return derive(s, n, s.keySerde, defaultOrNil[VR](), s.repartition)
}

// KeyValue is a key and a value, as FlatMap returns them.
type KeyValue[K, V any] struct {
	Key   K
	Value V
}

// FlatMap replaces each record with zero or more records.
func FlatMap[K, V, KR, VR any](s *Stream[K, V], fn func(key K, value V) []KeyValue[KR, VR], name ...Named) *Stream[KR, VR] {
	n := s.b.nameOr(one(name), "KSTREAM-FLATMAP-")
	s.b.addProcessor(n, []string{s.name}, stateless(func(nc *nodeContext, r rec) error {
		for _, kv := range fn(as[K](r.key), as[V](r.value)) {
			out := r
			out.key, out.value = kv.Key, kv.Value
			if err := nc.forward(out); err != nil {
				return err
			}
		}
		return nil
	}))
	return derive(s, n, defaultOrNil[KR](), defaultOrNil[VR](), true)
}

// FlatMapValues replaces each record's value with zero or more values,
// each a record with the same key.
func FlatMapValues[K, V, VR any](s *Stream[K, V], fn func(key K, value V) []VR, name ...Named) *Stream[K, VR] {
	n := s.b.nameOr(one(name), "KSTREAM-FLATMAPVALUES-")
	s.b.addProcessor(n, []string{s.name}, stateless(func(nc *nodeContext, r rec) error {
		for _, v := range fn(as[K](r.key), as[V](r.value)) {
			out := r
			out.value = v
			if err := nc.forward(out); err != nil {
				return err
			}
		}
		return nil
	}))
	return derive(s, n, s.keySerde, defaultOrNil[VR](), s.repartition)
}

// SelectKey gives each record a new key.
func SelectKey[K, V, KR any](s *Stream[K, V], fn func(key K, value V) KR, name ...Named) *Stream[KR, V] {
	n := s.b.nameOr(one(name), "KSTREAM-KEY-SELECT-")
	s.b.addProcessor(n, []string{s.name}, selectKey(fn))
	return derive(s, n, defaultOrNil[KR](), s.valueSerde, true)
}

func selectKey[K, V, KR any](fn func(K, V) KR) func() processor {
	return stateless(func(nc *nodeContext, r rec) error {
		r.key = fn(as[K](r.key), as[V](r.value))
		return nc.forward(r)
	})
}

// defaultOrNil is the default serde of T, or nil (then the operation that
// needs one fails at Build and names the type).
func defaultOrNil[T any]() serde.Serde[T] {
	s, _ := defaultSerde[T]()
	return s
}

// Produced says how to write a topic (Kafka's Produced).
type Produced[K, V any] struct {
	Key   serde.Serde[K]
	Value serde.Serde[V]
	// Partitioner picks the partition; ok=false leaves it to the default
	// (murmur2 of the serialized key).
	Partitioner func(topic string, key K, value V, partitions int32) (partition int32, ok bool)
	Name        string
}

// To writes the stream to a topic.
func (s *Stream[K, V]) To(topic string, opts ...Produced[K, V]) {
	p, err := optional(opts)
	s.b.fail(err)
	ks, vs := p.Key, p.Value
	if ks == nil {
		ks = serdeOr(s.b, s.keySerde)
	}
	if vs == nil {
		vs = serdeOr(s.b, s.valueSerde)
	}
	n := &node{name: s.b.nameOr(p.Name, "KSTREAM-SINK-"), kind: sinkNode, topic: topic, keySerde: box(ks), valueSerde: box(vs)}
	if p.Partitioner != nil {
		WithPartitioner(p.Partitioner)(n)
	}
	if topic == "" {
		s.b.failf("sink %s needs a topic", n.name)
	}
	s.b.addSink(n, []string{s.name})
}

// Splitter routes each record to the first branch whose predicate holds
// (Kafka's BranchedKStream).
type Splitter[K, V any] struct {
	s        *Stream[K, V]
	name     string
	branches *[]branch
	done     bool
}

type branch struct {
	pred  func(key, value any) bool
	child string
}

// Split starts a split; add branches with Branch and Default.
func (s *Stream[K, V]) Split(name ...Named) *Splitter[K, V] {
	n := s.b.nameOr(one(name), "KSTREAM-BRANCH-")
	branches := &[]branch{}
	s.b.addProcessor(n, []string{s.name}, stateless(func(nc *nodeContext, r rec) error {
		for _, br := range *branches {
			if br.pred == nil || br.pred(r.key, r.value) {
				return nc.forwardTo(br.child, r)
			}
		}
		return nil
	}))
	return &Splitter[K, V]{s: s, name: n, branches: branches}
}

// Branch adds a branch taking the records pred holds for (and that no
// earlier branch took). Its node is named as Kafka's: the split's name then
// name, or then the branch's number (from 1) when name is empty.
func (sp *Splitter[K, V]) Branch(pred func(key K, value V) bool, name string) *Stream[K, V] {
	return sp.add(func(k, v any) bool { return pred(as[K](k), as[V](v)) }, name, len(*sp.branches)+1)
}

// Default adds the branch that takes every record no branch took (number 0
// when unnamed, as Kafka's); no branch can follow it.
func (sp *Splitter[K, V]) Default(name string) *Stream[K, V] {
	st := sp.add(nil, name, 0)
	sp.done = true
	return st
}

func (sp *Splitter[K, V]) add(pred func(k, v any) bool, name string, index int) *Stream[K, V] {
	b := sp.s.b
	if sp.done {
		b.failf("split %s: no branch can follow the default branch", sp.name)
	}
	child := sp.name + name
	if name == "" {
		child = sp.name + fmt.Sprint(index)
	}
	b.newName("KSTREAM-BRANCHCHILD-") // Kafka burns an index per branch
	*sp.branches = append(*sp.branches, branch{pred: pred, child: child})
	b.addProcessor(child, []string{sp.name}, stateless(func(nc *nodeContext, r rec) error { return nc.forward(r) }))
	return derive(sp.s, child, sp.s.keySerde, sp.s.valueSerde, sp.s.repartition)
}

// Process runs a Processor API processor on the stream (Kafka's
// KStream#process); the stores named must be added with AddStore. Its
// output may have any key, so a grouping after it repartitions.
func Process[K, V, KR, VR any](s *Stream[K, V], supplier func() Processor[K, V, KR, VR], stores []string, name ...Named) *Stream[KR, VR] {
	n := s.b.nameOr(one(name), "KSTREAM-PROCESSOR-")
	s.b.addProcessor(n, []string{s.name}, func() processor { return &userProcessor[K, V, KR, VR]{supplier()} }, stores...)
	return derive(s, n, defaultOrNil[KR](), defaultOrNil[VR](), true)
}

// ProcessValues runs a processor that keeps keys (Kafka's processValues):
// no repartition follows it, so it must forward the keys it got.
func ProcessValues[K, V, VR any](s *Stream[K, V], supplier func() Processor[K, V, K, VR], stores []string, name ...Named) *Stream[K, VR] {
	n := s.b.nameOr(one(name), "KSTREAM-PROCESSVALUES-")
	s.b.addProcessor(n, []string{s.name}, func() processor { return &userProcessor[K, V, K, VR]{supplier()} }, stores...)
	return derive(s, n, s.keySerde, defaultOrNil[VR](), s.repartition)
}

// AddStore adds a state store for Process and ProcessValues to use.
func (b *Builder) AddStore(sb StoreBuilder) {
	b.addStore(sb.storeDef())
}

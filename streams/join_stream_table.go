package streams

import (
	"github.com/samsa-io/samsa/streams/serde"
)

// Joiners. Every joiner of this package takes the join key first (Kafka's
// ValueJoinerWithKey): Go has no overloads to offer both of Kafka's
// ValueJoiner and ValueJoinerWithKey, and the keyed form is the general one
// (ignore the key with _). Where Kafka passes null for an absent side (left
// and outer joins) the joiner takes a pointer, nil when that side is absent;
// an inner join's joiner never sees an absent side.

// Joined configures a stream-table join (Kafka's Joined; the table's
// value serde is the table's own): the serdes of the
// repartition topic a key-changed stream is written through, and the name
// of the join's node (and of that repartition topic, <name>-repartition).
type Joined[K, V any] struct {
	Key   serde.Serde[K]
	Value serde.Serde[V]
	Name  string
}

// StreamTableJoin joins each stream record with the table's current row of
// its key (Kafka's KStream#join(KTable)): records with a null key or value
// and records whose key has no row are dropped; table updates produce
// nothing; the result keeps the stream record's key and timestamp.
func StreamTableJoin[K, V, VO, VR any](s *Stream[K, V], t *Table[K, VO], joiner func(key K, value V, other VO) VR, j ...Joined[K, V]) *Stream[K, VR] {
	return streamTableJoin[K, V, VO, VR](s, t, false, func(k, v, o any) any {
		return joiner(as[K](k), as[V](v), o.(VO))
	}, j)
}

// StreamTableLeftJoin is StreamTableJoin keeping the stream records whose
// key has no row (other is nil), and those with a null key (Kafka's
// KIP-962: they cannot match, but are not dropped).
func StreamTableLeftJoin[K, V, VO, VR any](s *Stream[K, V], t *Table[K, VO], joiner func(key K, value V, other *VO) VR, j ...Joined[K, V]) *Stream[K, VR] {
	return streamTableJoin[K, V, VO, VR](s, t, true, func(k, v, o any) any {
		return joiner(as[K](k), as[V](v), ptrTo[VO](o))
	}, j)
}

// ptrTo is a pointer to an untyped value as T, nil for null.
func ptrTo[T any](v any) *T {
	if v == nil {
		return nil
	}
	t := v.(T)
	return &t
}

func streamTableJoin[K, V, VO, VR any](s *Stream[K, V], t *Table[K, VO], left bool, joiner func(k, v, o any) any, opts []Joined[K, V]) *Stream[K, VR] {
	b := s.b
	jd, err := optional(opts)
	b.fail(err)
	parent := s.name
	if s.repartition {
		prefix := jd.Name
		if prefix == "" {
			prefix = s.name
		}
		ks := serdeOr(b, firstSerde(jd.Key, s.keySerde))
		vs := serdeOr(b, firstSerde(jd.Value, s.valueSerde))
		parent = repartitionFor(s, prefix, ks, vs, 0, nil)
	}
	if b.err != nil {
		return &Stream[K, VR]{b: b}
	}
	b.topo.copartitionSources(append(sourcesOf(b.topo, parent), sourcesOf(b.topo, t.name)...)...)
	name := b.nameOr(jd.Name, map[bool]string{false: "KSTREAM-JOIN-", true: "KSTREAM-LEFTJOIN-"}[left])
	if t.tn == nil || t.tn.getter == nil || t.tn.storesForGetter == nil {
		b.failf("join %s: table %s cannot be looked up (no value getter)", name, t.name)
		return &Stream[K, VR]{b: b}
	}
	tn := t.tn
	identity := func(k, _ any) any { return k }
	b.addProcessor(name, []string{parent}, func() processor {
		return &streamTableJoinProc{getter: tn.getter, left: left, keyMapper: identity, joiner: joiner}
	}, tn.storesForGetter()...)
	return &Stream[K, VR]{b: b, name: name, keySerde: firstSerde(jd.Key, s.keySerde), valueSerde: defaultOrNil[VR]()}
}

// sourcesOf returns the source nodes upstream of a node in its
// subtopology: the ones whose partitions must line up with another side's.
func sourcesOf(t *Topology, name string) []string {
	var out []string
	seen := map[*node]bool{}
	var walk func(n *node)
	walk = func(n *node) {
		if n == nil || seen[n] {
			return
		}
		seen[n] = true
		if n.kind == sourceNode {
			out = append(out, n.name)
			return
		}
		for _, p := range n.parents {
			walk(p)
		}
	}
	walk(t.nodes[name])
	return out
}

// streamTableJoinProc is Kafka's KStreamKTableJoinProcessor (and, with a
// key mapper, KStreamGlobalKTableJoin): the stream side looks the table up;
// the table side is not connected to it, so table updates emit nothing.
type streamTableJoinProc struct {
	nc        *nodeContext
	getter    func(nc *nodeContext) (valueGetter, error)
	get       valueGetter
	left      bool
	keyMapper func(k, v any) any
	joiner    func(k, v, other any) any
}

func (p *streamTableJoinProc) init(nc *nodeContext) error {
	p.nc = nc
	g, err := p.getter(nc)
	p.get = g
	return err
}

func (p *streamTableJoinProc) process(r rec) error {
	if r.value == nil {
		p.nc.task.dropped("a stream-table join record with a null value")
		return nil
	}
	// Kafka 4.4's rule (KIP-962 and after): a left join keeps a record
	// whose join key is null, an inner join drops it.
	mapped := p.keyMapper(r.key, r.value)
	if mapped == nil && !p.left {
		p.nc.task.dropped("a stream-table join record with a null join key")
		return nil
	}
	var other any
	if mapped != nil {
		v, _, err := p.get(mapped)
		if err != nil {
			return err
		}
		other = v
	}
	if other == nil && !p.left {
		return nil
	}
	r.value = p.joiner(r.key, r.value, other)
	return p.nc.forward(r)
}

func (p *streamTableJoinProc) close() error { return nil }

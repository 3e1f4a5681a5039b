package streams

import (
	"github.com/samsa-io/samsa/streams/serde"
)

// Repartitioned says how Stream.Repartition writes its topic (Kafka's
// Repartitioned): serdes (the stream's when nil), the name of the topic and
// its nodes, the partition count and a partitioner.
type Repartitioned[K, V any] struct {
	Key   serde.Serde[K]
	Value serde.Serde[V]
	// Name makes the topic <application.id>-<Name>-repartition and the
	// nodes <Name>-repartition-{filter,sink,source}; empty generates
	// KSTREAM-REPARTITION-<n>.
	Name string
	// NumberOfPartitions of the topic; 0 sizes it as the runtime sizes
	// repartition topics (from the subtopology writing it).
	NumberOfPartitions int32
	// Partitioner picks the partition; ok=false leaves it to the default.
	Partitioner func(topic string, key K, value V, partitions int32) (partition int32, ok bool)
}

// Repartition writes the stream through a repartition topic and reads it
// back (Kafka's KStream#repartition): always, whether or not a key changed
// upstream, so the result needs no further repartition.
func (s *Stream[K, V]) Repartition(opts ...Repartitioned[K, V]) *Stream[K, V] {
	rp, err := optional(opts)
	s.b.fail(err)
	if rp.NumberOfPartitions < 0 {
		s.b.failf("repartition %q: number of partitions %d is negative", rp.Name, rp.NumberOfPartitions)
	}
	// Kafka takes the name first, then the three repartition node names.
	name := s.b.nameOr(rp.Name, "KSTREAM-REPARTITION-")
	ks := serdeOr(s.b, firstSerde(rp.Key, s.keySerde))
	vs := serdeOr(s.b, firstSerde(rp.Value, s.valueSerde))
	var partitioner func(string, any, any, int32) (int32, bool)
	if p := rp.Partitioner; p != nil {
		partitioner = func(topic string, k, v any, n int32) (int32, bool) {
			return p(topic, as[K](k), as[V](v), n)
		}
	}
	source := repartitionFor(s, name, ks, vs, rp.NumberOfPartitions, partitioner)
	return derive(s, source, ks, vs, false)
}

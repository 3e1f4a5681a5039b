package streams

import (
	"errors"
	"fmt"
	"regexp"

	"github.com/samsa-io/samsa/streams/serde"
)

// Builder builds a topology with the DSL (Kafka's StreamsBuilder). Nodes
// are named as Kafka Streams names them (KSTREAM-FILTER-0000000003 ...),
// so Describe() reads like Kafka's for the same program. The DSL's
// functions do not return errors; the first misuse is kept and returned by
// Build.
type Builder struct {
	topo  *Topology
	index int
	err   error
}

// NewBuilder returns an empty builder.
func NewBuilder() *Builder { return &Builder{topo: NewTopology()} }

// Build returns the topology, or the first error the DSL met.
func (b *Builder) Build() (*Topology, error) {
	if b.err != nil {
		return nil, b.err
	}
	if _, err := b.topo.build(); err != nil {
		return nil, err
	}
	return b.topo, nil
}

func (b *Builder) fail(err error) {
	if b.err == nil && err != nil {
		b.err = err
	}
}

func (b *Builder) failf(format string, args ...any) { b.fail(fmt.Errorf("streams: "+format, args...)) }

// newName is Kafka's InternalStreamsBuilder.newProcessorName.
func (b *Builder) newName(prefix string) string {
	name := fmt.Sprintf("%s%010d", prefix, b.index)
	b.index++
	return name
}

// newStoreName is Kafka's newStoreName.
func (b *Builder) newStoreName(prefix string) string {
	return b.newName(prefix + "STATE-STORE-")
}

// nameOr returns the user's name, or generates one.
func (b *Builder) nameOr(user, prefix string) string {
	if user != "" {
		return user
	}
	return b.newName(prefix)
}

var generatedName = regexp.MustCompile(`^KSTREAM.*-[0-9]{10}$`)

func (b *Builder) addProcessor(name string, parents []string, p func() processor, stores ...string) {
	if b.err != nil {
		return
	}
	if err := b.topo.add(&node{name: name, kind: processorNode, newProcessor: p}, parents); err != nil {
		b.fail(err)
		return
	}
	if len(stores) > 0 {
		b.fail(b.topo.ConnectProcessorAndStateStores([]string{name}, stores...))
	}
}

func (b *Builder) addSource(n *node) {
	if b.err != nil {
		return
	}
	for _, topic := range n.topics {
		for _, other := range b.topo.order {
			if other.kind == sourceNode && contains(other.topics, topic) {
				b.failf("topic %q is read by two sources (%s and %s); read it once and reuse the stream", topic, other.name, n.name)
				return
			}
		}
	}
	b.fail(b.topo.add(n, nil))
}

func (b *Builder) addSink(n *node, parents []string) {
	if b.err != nil {
		return
	}
	b.fail(b.topo.add(n, parents))
}

func (b *Builder) addStore(def *storeDef) {
	if b.err != nil {
		return
	}
	if _, dup := b.topo.stores[def.name]; dup {
		b.failf("store %q is defined twice; name each store once", def.name)
		return
	}
	b.topo.stores[def.name] = def
}

// Consumed says how to read a topic (Kafka's Consumed): serdes (inferred
// from K and V for the basic types when nil), the timestamp extractor, the
// offset reset policy, the source node's name.
type Consumed[K, V any] struct {
	Key                serde.Serde[K]
	Value              serde.Serde[V]
	TimestampExtractor TimestampExtractor
	OffsetReset        string
	Name               string
}

func optional[T any](opts []T) (T, error) {
	var zero T
	switch len(opts) {
	case 0:
		return zero, nil
	case 1:
		return opts[0], nil
	}
	return zero, errors.New("streams: give at most one options value")
}

// From reads a stream from topics (StreamsBuilder.stream).
func From[K, V any](b *Builder, topics []string, opts ...Consumed[K, V]) *Stream[K, V] {
	c, err := optional(opts)
	b.fail(err)
	ks, vs := serdeOr(b, c.Key), serdeOr(b, c.Value)
	name := b.nameOr(c.Name, "KSTREAM-SOURCE-")
	if len(topics) == 0 {
		b.failf("source %s needs a topic", name)
	}
	if c.OffsetReset != "" && c.OffsetReset != "earliest" && c.OffsetReset != "latest" {
		b.failf("source %s: offset reset %q is neither earliest nor latest", name, c.OffsetReset)
	}
	b.addSource(&node{name: name, kind: sourceNode, topics: topics, keySerde: box(ks), valueSerde: box(vs),
		extractor: c.TimestampExtractor, resetPolicy: c.OffsetReset})
	return &Stream[K, V]{b: b, name: name, keySerde: ks, valueSerde: vs}
}

// serdeOr returns s, or the default serde for T: String for string,
// Bytes for []byte, Int64/Int32/Int16 and Float64/Float32 for those,
// Bool for bool. Other types need a serde.
func serdeOr[T any](b *Builder, s serde.Serde[T]) serde.Serde[T] {
	if s != nil {
		return s
	}
	d, ok := defaultSerde[T]()
	if !ok {
		var zero T
		b.failf("no serde for %T: give one (serde.JSON[%T]() for JSON)", zero, zero)
	}
	return d
}

func defaultSerde[T any]() (serde.Serde[T], bool) {
	var zero T
	var s any
	switch any(zero).(type) {
	case string:
		s = serde.String()
	case []byte:
		s = serde.Bytes()
	case int64:
		s = serde.Int64()
	case int32:
		s = serde.Int32()
	case int16:
		s = serde.Int16()
	case float64:
		s = serde.Float64()
	case float32:
		s = serde.Float32()
	case bool:
		s = serde.Bool()
	default:
		return nil, false
	}
	return s.(serde.Serde[T]), true
}

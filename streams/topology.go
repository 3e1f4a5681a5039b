package streams

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/samsa-io/samsa/streams/serde"
)

// Topology is a graph of sources, processors and sinks with the state
// stores they use (Kafka's Topology). Build one with the DSL (Builder) or
// node by node with AddSource, AddProcessor, AddSink and AddStateStore.
type Topology struct {
	nodes  map[string]*node
	order  []*node // insertion order: subtopologies are numbered by it, as Kafka's
	stores map[string]*storeDef
	// internalTopics are repartition topics by their name without the
	// application.id prefix.
	internalTopics map[string]*internalTopic
	// copartition lists the groups of source topics that must have the same
	// partition count (the two sides of a join).
	copartition [][]string
	globals     map[string]bool // source topics read by global stores

	built *builtTopology
}

type nodeKind int

const (
	sourceNode nodeKind = iota
	processorNode
	sinkNode
)

// node is one vertex of the topology.
type node struct {
	name     string
	kind     nodeKind
	parents  []*node
	children []*node

	// source
	topics      []string
	pattern     *regexp.Regexp
	keySerde    anySerde
	valueSerde  anySerde
	extractor   TimestampExtractor
	resetPolicy string // "", "earliest", "latest"
	global      bool

	// processor
	newProcessor func() processor
	stores       []string

	// sink
	topic       string
	partitioner func(topic string, key, value any, partitions int32) (int32, bool)
}

// internalTopic is a repartition topic the application creates.
type internalTopic struct {
	name       string // without the application.id prefix
	partitions int32  // 0: as many as the source topics of the writing subtopology
}

// storeKind is the shape of a state store.
type storeKind int

const (
	keyValueStore storeKind = iota
	windowStore
	sessionStore
	versionedStore
	// suppressionBuffer is Suppress's buffer (Kafka's
	// InMemoryTimeOrderedKeyValueChangeBuffer, logged to a changelog).
	suppressionBuffer
	// listValueStore is a key-value store keeping a list of values per key
	// (Kafka's ListValueStore): the stream-stream outer join's shared
	// store of records not joined yet.
	listValueStore
	// subscriptionStore is the foreign-key join's store of subscriptions:
	// a key-value store keyed by (foreign key, primary key) that scans by
	// foreign key (Kafka's CombinedKey prefix scan).
	subscriptionStore
)

// storeDef is what the runtime needs to open a store in a task.
type storeDef struct {
	name             string
	kind             storeKind
	inMemory         bool
	logging          bool
	logConfig        map[string]string
	caching          bool
	timestamped      bool
	retention        int64 // window and session stores, ms
	windowSize       int64
	segmentInterval  int64
	retainDuplicates bool
	keySerde         anySerde
	valueSerde       anySerde
	// otherValueSerde is the right side's value serde of a stream-stream
	// outer join's shared store (valueSerde is the left's).
	otherValueSerde anySerde
	processors      []string
	global          bool
	changelog       string // the topic when global (the source topic), else derived
}

// NewTopology returns an empty topology.
func NewTopology() *Topology {
	return &Topology{
		nodes:          map[string]*node{},
		stores:         map[string]*storeDef{},
		internalTopics: map[string]*internalTopic{},
		globals:        map[string]bool{},
	}
}

func (t *Topology) add(n *node, parents []string) error {
	if n.name == "" {
		return fmt.Errorf("streams: a node needs a name")
	}
	if _, dup := t.nodes[n.name]; dup {
		return fmt.Errorf("streams: processor %q is already added", n.name)
	}
	for _, p := range parents {
		parent, ok := t.nodes[p]
		if !ok {
			return fmt.Errorf("streams: parent processor %q of %q is not added yet", p, n.name)
		}
		if parent.kind == sinkNode {
			return fmt.Errorf("streams: sink %q cannot be used as a parent of %q", p, n.name)
		}
		n.parents = append(n.parents, parent)
	}
	for _, parent := range n.parents {
		parent.children = append(parent.children, n)
	}
	t.nodes[n.name] = n
	t.order = append(t.order, n)
	t.built = nil
	return nil
}

// SourceOption configures a source node.
type SourceOption func(*node)

// WithTimestampExtractor sets the source's timestamp extractor (default:
// the record's own timestamp, FailOnInvalidTimestamp).
func WithTimestampExtractor(e TimestampExtractor) SourceOption {
	return func(n *node) { n.extractor = e }
}

// WithOffsetReset sets where the source starts when the group has no
// committed offset: "earliest" or "latest" (default: auto.offset.reset).
func WithOffsetReset(policy string) SourceOption {
	return func(n *node) { n.resetPolicy = policy }
}

// AddSource adds a source node reading the topics with the serdes.
func AddSource[K, V any](t *Topology, name string, ks serde.Serde[K], vs serde.Serde[V], topics []string, opts ...SourceOption) error {
	if len(topics) == 0 {
		return fmt.Errorf("streams: source %q needs at least one topic", name)
	}
	if ks == nil || vs == nil {
		return fmt.Errorf("streams: source %q needs a key and a value serde", name)
	}
	n := &node{name: name, kind: sourceNode, topics: topics, keySerde: box(ks), valueSerde: box(vs)}
	for _, o := range opts {
		o(n)
	}
	if n.resetPolicy != "" && n.resetPolicy != "earliest" && n.resetPolicy != "latest" {
		return fmt.Errorf("streams: source %q: offset reset %q is neither earliest nor latest", name, n.resetPolicy)
	}
	for _, topic := range topics {
		for _, other := range t.order {
			if other.kind == sourceNode && contains(other.topics, topic) {
				return fmt.Errorf("streams: topic %q is already read by source %q", topic, other.name)
			}
		}
	}
	return t.add(n, nil)
}

// AddProcessor adds a user processor as a child of the parents.
func AddProcessor[KIn, VIn, KOut, VOut any](t *Topology, name string, supplier func() Processor[KIn, VIn, KOut, VOut], parents ...string) error {
	if len(parents) == 0 {
		return fmt.Errorf("streams: processor %q needs at least one parent", name)
	}
	if supplier == nil {
		return fmt.Errorf("streams: processor %q needs a supplier", name)
	}
	return t.add(&node{name: name, kind: processorNode, newProcessor: func() processor {
		return &userProcessor[KIn, VIn, KOut, VOut]{supplier()}
	}}, parents)
}

// SinkOption configures a sink node.
type SinkOption func(*node)

// WithPartitioner chooses the partition of each record a sink writes (Kafka's
// StreamPartitioner); returning false leaves it to the default (murmur2 of
// the serialized key, as Kafka's producer).
func WithPartitioner[K, V any](p func(topic string, key K, value V, partitions int32) (int32, bool)) SinkOption {
	return func(n *node) {
		n.partitioner = func(topic string, key, value any, partitions int32) (int32, bool) {
			return p(topic, as[K](key), as[V](value), partitions)
		}
	}
}

// AddSink adds a sink node writing to topic with the serdes.
func AddSink[K, V any](t *Topology, name, topic string, ks serde.Serde[K], vs serde.Serde[V], parents []string, opts ...SinkOption) error {
	if topic == "" {
		return fmt.Errorf("streams: sink %q needs a topic", name)
	}
	if len(parents) == 0 {
		return fmt.Errorf("streams: sink %q needs at least one parent", name)
	}
	if ks == nil || vs == nil {
		return fmt.Errorf("streams: sink %q needs a key and a value serde", name)
	}
	n := &node{name: name, kind: sinkNode, topic: topic, keySerde: box(ks), valueSerde: box(vs)}
	for _, o := range opts {
		o(n)
	}
	return t.add(n, parents)
}

// AddStateStore adds a store and connects it to the processors.
func (t *Topology) AddStateStore(b StoreBuilder, processors ...string) error {
	def := b.storeDef()
	if _, dup := t.stores[def.name]; dup {
		return fmt.Errorf("streams: store %q is already added", def.name)
	}
	t.stores[def.name] = def
	return t.ConnectProcessorAndStateStores(processors, def.name)
}

// ConnectProcessorAndStateStores gives processors access to stores.
func (t *Topology) ConnectProcessorAndStateStores(processors []string, stores ...string) error {
	for _, p := range processors {
		n, ok := t.nodes[p]
		if !ok || n.kind != processorNode {
			return fmt.Errorf("streams: processor %q is not added yet", p)
		}
		for _, s := range stores {
			def, ok := t.stores[s]
			if !ok {
				return fmt.Errorf("streams: store %q is not added yet", s)
			}
			if def.global {
				return fmt.Errorf("streams: global store %q is connected to every processor already", s)
			}
			if !contains(n.stores, s) {
				n.stores = append(n.stores, s)
				def.processors = append(def.processors, p)
			}
		}
	}
	t.built = nil
	return nil
}

// addInternalTopic declares a repartition topic.
func (t *Topology) addInternalTopic(name string, partitions int32) {
	t.internalTopics[name] = &internalTopic{name: name, partitions: partitions}
	t.built = nil
}

// copartitionSources asks that the source topics of the named source nodes
// have equal partition counts.
func (t *Topology) copartitionSources(sourceNodes ...string) {
	var topics []string
	for _, s := range sourceNodes {
		topics = append(topics, t.nodes[s].topics...)
	}
	t.copartition = append(t.copartition, topics)
	t.built = nil
}

func contains[T comparable](xs []T, x T) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// subtopology is a connected part of the topology; it runs as one task per
// partition of its source topics.
type subtopology struct {
	id      int32
	nodes   []*node // insertion order
	sources []*node
	// topics maps each source topic to its source node.
	topics map[string]*node
	stores []string
}

// builtTopology is the topology grouped for running.
type builtTopology struct {
	subtopologies []*subtopology
	// globalGroups are the source and processor of each global store:
	// numbered with the subtopologies, as Kafka's, but they make no tasks.
	globalGroups []*subtopology
	globalStores []string
}

// build groups the nodes into subtopologies as Kafka does: nodes joined by
// an edge or a shared state store are one subtopology; a repartition topic
// separates the subtopology that writes it from the one that reads it.
func (t *Topology) build() (*builtTopology, error) {
	if t.built != nil {
		return t.built, nil
	}
	parent := map[string]string{}
	var find func(string) string
	find = func(x string) string {
		p, ok := parent[x]
		if !ok || p == x {
			parent[x] = x
			return x
		}
		r := find(p)
		parent[x] = r
		return r
	}
	union := func(a, b string) { parent[find(a)] = find(b) }
	storeOwner := map[string]string{}
	for _, n := range t.order {
		find(n.name)
		for _, p := range n.parents {
			union(n.name, p.name)
		}
		for _, s := range n.stores {
			if o, ok := storeOwner[s]; ok {
				union(n.name, o)
			} else {
				storeOwner[s] = n.name
			}
		}
	}
	bt := &builtTopology{}
	byRoot := map[string]*subtopology{}
	globalRoot := map[string]bool{}
	for _, n := range t.order {
		if n.global {
			globalRoot[find(n.name)] = true
		}
	}
	next := int32(0)
	for _, n := range t.order {
		r := find(n.name)
		st, ok := byRoot[r]
		if !ok {
			st = &subtopology{id: next, topics: map[string]*node{}}
			next++
			byRoot[r] = st
			if globalRoot[r] {
				bt.globalGroups = append(bt.globalGroups, st)
			} else {
				bt.subtopologies = append(bt.subtopologies, st)
			}
		}
		st.nodes = append(st.nodes, n)
		if n.kind == sourceNode {
			st.sources = append(st.sources, n)
			for _, topic := range n.topics {
				st.topics[topic] = n
			}
		}
		for _, s := range n.stores {
			if !contains(st.stores, s) {
				st.stores = append(st.stores, s)
			}
		}
	}
	for _, st := range bt.subtopologies {
		if len(st.sources) == 0 {
			return nil, fmt.Errorf("streams: processors %s have no source", nodeNames(st.nodes))
		}
	}
	for name, def := range t.stores {
		if def.global {
			bt.globalStores = append(bt.globalStores, name)
		} else if len(def.processors) == 0 {
			return nil, fmt.Errorf("streams: store %q is connected to no processor", name)
		}
	}
	sort.Strings(bt.globalStores)
	t.built = bt
	return bt, nil
}

func nodeNames(ns []*node) string {
	var names []string
	for _, n := range ns {
		names = append(names, n.name)
	}
	return strings.Join(names, ", ")
}

package streams

import (
	"fmt"
	"sort"
	"strings"
)

// TopologyDescription is a topology's shape as Kafka's
// TopologyDescription prints it; String() matches Kafka's text, so a
// topology written with this library and with Kafka Streams can be
// compared line by line.
type TopologyDescription struct {
	text string
}

func (d TopologyDescription) String() string { return d.text }

// Describe returns the topology's description, or an error when it is not
// a valid topology (a processor without a source, a store without a
// processor).
func (t *Topology) Describe() (TopologyDescription, error) {
	bt, err := t.build()
	if err != nil {
		return TopologyDescription{}, err
	}
	var groups []*subtopology
	groups = append(groups, bt.subtopologies...)
	groups = append(groups, bt.globalGroups...)
	sort.Slice(groups, func(i, j int) bool { return groups[i].id < groups[j].id })
	var b strings.Builder
	b.WriteString("Topologies:\n ")
	for _, st := range groups {
		b.WriteString("  ")
		if isGlobalGroup(bt, st) {
			fmt.Fprintf(&b, "Sub-topology: %d for global store (will not generate tasks)\n", st.id)
			for _, n := range st.nodes {
				b.WriteString("    " + t.describeNode(n) + "\n")
			}
			continue
		}
		fmt.Fprintf(&b, "Sub-topology: %d\n", st.id)
		succs, preds := kafkaEdgeOrder(st)
		for _, n := range describeOrder(st.nodes) {
			b.WriteString("    " + t.describeEdges(n, succs[n], preds[n]) + "\n")
		}
		b.WriteString("\n")
	}
	return TopologyDescription{text: b.String()}, nil
}

func isGlobalGroup(bt *builtTopology, st *subtopology) bool {
	for _, g := range bt.globalGroups {
		if g == st {
			return true
		}
	}
	return false
}

// describeOrder sorts nodes as Kafka's NodeComparator: larger subtrees
// first (a node's size counts itself and, through every path, what is below
// it), then by name.
func describeOrder(nodes []*node) []*node {
	size := map[*node]int{}
	var sizeOf func(n *node) int
	sizeOf = func(n *node) int {
		if s, ok := size[n]; ok {
			return s
		}
		s := 1
		for _, c := range n.children {
			s += sizeOf(c)
		}
		size[n] = s
		return s
	}
	out := append([]*node(nil), nodes...)
	sort.SliceStable(out, func(i, j int) bool {
		si, sj := sizeOf(out[i]), sizeOf(out[j])
		if si != sj {
			return si > sj
		}
		return out[i].name < out[j].name
	})
	return out
}

func (t *Topology) describeNode(n *node) string {
	return t.describeEdges(n, describeOrder(n.children), describeOrder(n.parents))
}

// describeEdges prints a node with its successors and predecessors in the
// order given.
func (t *Topology) describeEdges(n *node, succs, preds []*node) string {
	switch n.kind {
	case sourceNode:
		topics := "[" + strings.Join(n.topics, ", ") + "]"
		if n.pattern != nil {
			topics = n.pattern.String()
		}
		return fmt.Sprintf("Source: %s (topics: %s)\n      --> %s", n.name, topics, describeNames(succs))
	case sinkNode:
		return fmt.Sprintf("Sink: %s (topic: %s)\n      <-- %s", n.name, n.topic, describeNames(preds))
	}
	stores := append([]string(nil), n.stores...)
	for name, def := range t.stores {
		if def.global && len(n.parents) == 1 && n.parents[0].global && contains(def.processors, n.name) {
			stores = append(stores, name)
		}
	}
	// Kafka's Processor holds its store names in a HashSet.
	stores = javaHashOrder(stores, copiedCapacity(len(stores)))
	return fmt.Sprintf("Processor: %s (stores: [%s])\n      --> %s\n      <-- %s",
		n.name, strings.Join(stores, ", "), describeNames(succs), describeNames(preds))
}

func describeNames(ns []*node) string {
	if len(ns) == 0 {
		return "none"
	}
	return nodeNames(ns)
}

package streams

import (
	"slices"
	"unicode/utf16"
)

// Kafka prints a node's successors and predecessors from TreeSets ordered
// by its NodeComparator (larger subtree first, then name), but it fills
// them while the subtree sizes are still being summed: each edge is added
// with the sizes as they are at that moment, in the order Java's HashMap
// iterates the subtopology's node names, and a TreeSet does not reorder
// what it holds when sizes change later. kafkaEdgeOrder replays that
// (String.hashCode, HashMap's buckets, TreeMap's red-black insertion), so
// the "-->" and "<--" lines come out in Kafka's order.

// javaStringHash is java.lang.String#hashCode (over UTF-16 code units).
func javaStringHash(s string) int32 {
	var h int32
	for _, u := range utf16.Encode([]rune(s)) {
		h = 31*h + int32(u)
	}
	return h
}

// javaHashOrder is the iteration order of a java.util.HashSet of names
// added in the given order to a set of the given table capacity: by
// bucket (the spread hash masked), ties in insertion order (a bucket's
// list keeps it, through resizes too).
func javaHashOrder(names []string, capacity int) []string {
	bucket := func(s string) int {
		h := uint32(javaStringHash(s))
		return int((h ^ h>>16) & uint32(capacity-1))
	}
	out := slices.Clone(names)
	slices.SortStableFunc(out, func(a, b string) int { return bucket(a) - bucket(b) })
	return out
}

// grownCapacity is a default HashMap's table size after n insertions (16,
// doubled whenever the size passes three quarters of it).
func grownCapacity(n int) int {
	c := 16
	for float64(n) > 0.75*float64(c) {
		c *= 2
	}
	return c
}

// copiedCapacity is the table size of new HashSet<>(collection of n).
func copiedCapacity(n int) int {
	want := max(int(float64(n)/0.75)+1, 16)
	c := 1
	for c < want {
		c *= 2
	}
	return c
}

// describedNode is Kafka's AbstractNode while a subtopology is described.
type describedNode struct {
	n            *node
	size         int
	preds, succs javaTreeSet
}

// kafkaEdgeOrder answers each node's successors and predecessors in the
// order Kafka's describeSubtopology leaves them.
func kafkaEdgeOrder(st *subtopology) (succs, preds map[*node][]*node) {
	byName := map[string]*describedNode{}
	var names []string
	for _, n := range st.nodes {
		d := &describedNode{n: n, size: 1}
		d.preds.cmp, d.succs.cmp = compareDescribed, compareDescribed
		byName[n.name] = d
		names = append(names, n.name)
	}
	for _, name := range javaHashOrder(names, grownCapacity(len(names))) {
		d := byName[name]
		for _, p := range d.n.parents {
			pd, ok := byName[p.name]
			if !ok {
				continue
			}
			d.preds.add(pd)
			pd.succs.add(d)
			addSize(pd, d.size)
		}
	}
	succs, preds = map[*node][]*node{}, map[*node][]*node{}
	for _, d := range byName {
		for _, s := range d.succs.inOrder() {
			succs[d.n] = append(succs[d.n], s.n)
		}
		for _, p := range d.preds.inOrder() {
			preds[d.n] = append(preds[d.n], p.n)
		}
	}
	return succs, preds
}

// addSize is Kafka's updateSize: the delta goes up through every
// predecessor known so far.
func addSize(d *describedNode, delta int) {
	d.size += delta
	for _, p := range d.preds.inOrder() {
		addSize(p, delta)
	}
}

// compareDescribed is Kafka's NodeComparator.
func compareDescribed(a, b *describedNode) int {
	if a == b {
		return 0
	}
	if a.size != b.size {
		return b.size - a.size
	}
	switch {
	case a.n.name < b.n.name:
		return -1
	case a.n.name > b.n.name:
		return 1
	}
	return 0
}

// javaTreeSet is java.util.TreeSet's red-black tree (TreeMap's insertion
// and its fixAfterInsertion): the tree's shape decides where later
// elements go when the comparator's answers change over time.
type javaTreeSet struct {
	root *rbNode
	cmp  func(a, b *describedNode) int
}

type rbNode struct {
	key                 *describedNode
	left, right, parent *rbNode
	red                 bool
}

func (t *javaTreeSet) add(k *describedNode) {
	if t.root == nil {
		t.root = &rbNode{key: k}
		return
	}
	var parent *rbNode
	c := 0
	for x := t.root; x != nil; {
		parent = x
		c = t.cmp(k, x.key)
		switch {
		case c < 0:
			x = x.left
		case c > 0:
			x = x.right
		default:
			return
		}
	}
	e := &rbNode{key: k, parent: parent}
	if c < 0 {
		parent.left = e
	} else {
		parent.right = e
	}
	t.fixAfterInsertion(e)
}

func (t *javaTreeSet) inOrder() []*describedNode {
	var out []*describedNode
	var walk func(n *rbNode)
	walk = func(n *rbNode) {
		if n == nil {
			return
		}
		walk(n.left)
		out = append(out, n.key)
		walk(n.right)
	}
	walk(t.root)
	return out
}

func parentOf(n *rbNode) *rbNode {
	if n == nil {
		return nil
	}
	return n.parent
}

func leftOf(n *rbNode) *rbNode {
	if n == nil {
		return nil
	}
	return n.left
}

func rightOf(n *rbNode) *rbNode {
	if n == nil {
		return nil
	}
	return n.right
}

func isRed(n *rbNode) bool { return n != nil && n.red }

func setRed(n *rbNode, red bool) {
	if n != nil {
		n.red = red
	}
}

func (t *javaTreeSet) fixAfterInsertion(x *rbNode) {
	x.red = true
	for x != nil && x != t.root && x.parent.red {
		if parentOf(x) == leftOf(parentOf(parentOf(x))) {
			y := rightOf(parentOf(parentOf(x)))
			if isRed(y) {
				setRed(parentOf(x), false)
				setRed(y, false)
				setRed(parentOf(parentOf(x)), true)
				x = parentOf(parentOf(x))
				continue
			}
			if x == rightOf(parentOf(x)) {
				x = parentOf(x)
				t.rotateLeft(x)
			}
			setRed(parentOf(x), false)
			setRed(parentOf(parentOf(x)), true)
			t.rotateRight(parentOf(parentOf(x)))
		} else {
			y := leftOf(parentOf(parentOf(x)))
			if isRed(y) {
				setRed(parentOf(x), false)
				setRed(y, false)
				setRed(parentOf(parentOf(x)), true)
				x = parentOf(parentOf(x))
				continue
			}
			if x == leftOf(parentOf(x)) {
				x = parentOf(x)
				t.rotateRight(x)
			}
			setRed(parentOf(x), false)
			setRed(parentOf(parentOf(x)), true)
			t.rotateLeft(parentOf(parentOf(x)))
		}
	}
	t.root.red = false
}

func (t *javaTreeSet) rotateLeft(p *rbNode) {
	if p == nil {
		return
	}
	r := p.right
	p.right = r.left
	if r.left != nil {
		r.left.parent = p
	}
	r.parent = p.parent
	switch {
	case p.parent == nil:
		t.root = r
	case p.parent.left == p:
		p.parent.left = r
	default:
		p.parent.right = r
	}
	r.left = p
	p.parent = r
}

func (t *javaTreeSet) rotateRight(p *rbNode) {
	if p == nil {
		return
	}
	l := p.left
	p.left = l.right
	if l.right != nil {
		l.right.parent = p
	}
	l.parent = p.parent
	switch {
	case p.parent == nil:
		t.root = l
	case p.parent.right == p:
		p.parent.right = l
	default:
		p.parent.left = l
	}
	l.right = p
	p.parent = l
}

package state

import (
	"bytes"
	"iter"
	"sync/atomic"

	"github.com/RaduBerinde/btreemap"
)

// memoryEngine keeps the store in a B-tree. Writes go to the tree at once
// and an undo log remembers what they replaced, so abort restores the tree
// and reads need no overlay. Iterators walk a lazy copy-on-write clone, so a
// write during an iteration does not disturb it.
type memoryEngine struct {
	tree *btreemap.BTreeMap[[]byte, []byte]
	undo []undoEntry
	// snapshot is the tree as of the last commit, a lazy copy-on-write
	// clone that no one writes: the committed views read it. It is kept
	// only once a view was asked for, since every commit's clone makes
	// the next writes copy the nodes they touch.
	snapshot atomic.Pointer[btreemap.BTreeMap[[]byte, []byte]]
	viewed   bool
}

// undoEntry is what a write replaced: the old value, or absent.
type undoEntry struct {
	key     []byte
	value   []byte
	existed bool
}

const memoryDegree = 32

func newMemoryEngine() *memoryEngine {
	return &memoryEngine{tree: btreemap.New[[]byte, []byte](memoryDegree, bytes.Compare)}
}

func (e *memoryEngine) persistent() bool { return false }

func (e *memoryEngine) get(key []byte) ([]byte, error) {
	_, v, ok := e.tree.Get(key)
	if !ok {
		return nil, nil
	}
	return cloneValue(v), nil
}

func (e *memoryEngine) set(key, value []byte) error {
	k := bytes.Clone(key)
	_, old, existed := e.tree.ReplaceOrInsert(k, cloneValue(value))
	e.undo = append(e.undo, undoEntry{key: k, value: old, existed: existed})
	return nil
}

func (e *memoryEngine) delete(key []byte) error {
	k, old, existed := e.tree.Delete(key)
	if existed {
		e.undo = append(e.undo, undoEntry{key: k, value: old, existed: true})
	}
	return nil
}

func (e *memoryEngine) deleteRange(start, end []byte) error {
	var keys [][]byte
	for k := range e.tree.Ascend(btreemap.GE(start), btreemap.LT(end)) {
		keys = append(keys, k)
	}
	for _, k := range keys {
		if err := e.delete(k); err != nil {
			return err
		}
	}
	return nil
}

func (e *memoryEngine) commit() error {
	if e.viewed && len(e.undo) > 0 {
		e.snapshot.Store(e.tree.Clone())
	}
	e.undo = e.undo[:0]
	return nil
}

// abort replays the undo log backwards, so the oldest value of each key wins.
func (e *memoryEngine) abort() error {
	for i := len(e.undo) - 1; i >= 0; i-- {
		u := e.undo[i]
		if u.existed {
			e.tree.ReplaceOrInsert(u.key, u.value)
		} else {
			e.tree.Delete(u.key)
		}
	}
	e.undo = e.undo[:0]
	return nil
}

func (e *memoryEngine) close() error { return nil }

func (e *memoryEngine) approximateCount() (int64, error) { return int64(e.tree.Len()), nil }

func (e *memoryEngine) newIter(lower, upper []byte, reverse bool) (rawIter, error) {
	return &memoryIter{
		tree:    e.tree.Clone(),
		lower:   bytes.Clone(lower),
		upper:   bytes.Clone(upper),
		reverse: reverse,
	}, nil
}

// memoryIter pulls from the clone's push iterator; a seek starts a new one.
type memoryIter struct {
	tree         *btreemap.BTreeMap[[]byte, []byte]
	lower, upper []byte
	reverse      bool
	pull         func() ([]byte, []byte, bool)
	stop         func()
	k, v         []byte
}

func (it *memoryIter) first() bool {
	if it.reverse {
		return it.start(it.tree.Descend(it.upperBoundExclusive(), it.lowerBound()))
	}
	return it.start(it.tree.Ascend(it.lowerBound(), it.upperBoundExclusive()))
}

func (it *memoryIter) seek(k []byte) bool {
	if it.reverse {
		if it.upper != nil && bytes.Compare(k, it.upper) >= 0 {
			return it.first()
		}
		return it.start(it.tree.Descend(btreemap.LE(k), it.lowerBound()))
	}
	if it.lower != nil && bytes.Compare(k, it.lower) < 0 {
		return it.first()
	}
	return it.start(it.tree.Ascend(btreemap.GE(k), it.upperBoundExclusive()))
}

func (it *memoryIter) lowerBound() btreemap.LowerBound[[]byte] {
	if it.lower == nil {
		return btreemap.Min[[]byte]()
	}
	return btreemap.GE(it.lower)
}

func (it *memoryIter) upperBoundExclusive() btreemap.UpperBound[[]byte] {
	if it.upper == nil {
		return btreemap.Max[[]byte]()
	}
	return btreemap.LT(it.upper)
}

func (it *memoryIter) start(seq iter.Seq2[[]byte, []byte]) bool {
	if it.stop != nil {
		it.stop()
	}
	it.pull, it.stop = iter.Pull2(seq)
	return it.next()
}

func (it *memoryIter) next() bool {
	if it.pull == nil {
		return false
	}
	k, v, ok := it.pull()
	if !ok {
		it.k, it.v = nil, nil
		return false
	}
	it.k, it.v = k, v
	return true
}

func (it *memoryIter) key() []byte   { return it.k }
func (it *memoryIter) value() []byte { return it.v }
func (it *memoryIter) err() error    { return nil }

func (it *memoryIter) close() error {
	if it.stop != nil {
		it.stop()
		it.stop, it.pull = nil, nil
	}
	return nil
}

// cloneValue copies a value keeping present-but-empty distinct from absent.
func cloneValue(v []byte) []byte {
	if v == nil {
		return nil
	}
	return append(make([]byte, 0, len(v)), v...)
}

// committed starts keeping snapshots: the first is the tree with the open
// transaction's writes undone on the clone.
func (e *memoryEngine) committed() engine {
	if !e.viewed {
		e.viewed = true
		snap := e.tree.Clone()
		for i := len(e.undo) - 1; i >= 0; i-- {
			u := e.undo[i]
			if u.existed {
				snap.ReplaceOrInsert(u.key, u.value)
			} else {
				snap.Delete(u.key)
			}
		}
		e.snapshot.Store(snap)
	}
	return committedMemory{e: e}
}

// committedMemory reads the last commit's snapshot. Readers never clone it
// (a clone writes the tree it is taken from); they walk it as it is.
type committedMemory struct{ e *memoryEngine }

func (c committedMemory) get(key []byte) ([]byte, error) {
	_, v, ok := c.e.snapshot.Load().Get(key)
	if !ok {
		return nil, nil
	}
	return cloneValue(v), nil
}

func (c committedMemory) newIter(lower, upper []byte, reverse bool) (rawIter, error) {
	return &memoryIter{tree: c.e.snapshot.Load(), lower: bytes.Clone(lower), upper: bytes.Clone(upper), reverse: reverse}, nil
}

func (c committedMemory) approximateCount() (int64, error) {
	return int64(c.e.snapshot.Load().Len()), nil
}

func (committedMemory) set(_, _ []byte) error         { return errReadOnly }
func (committedMemory) delete([]byte) error           { return errReadOnly }
func (committedMemory) deleteRange(_, _ []byte) error { return errReadOnly }
func (committedMemory) commit() error                 { return errReadOnly }
func (committedMemory) abort() error                  { return errReadOnly }
func (committedMemory) close() error                  { return nil }
func (committedMemory) persistent() bool              { return false }
func (c committedMemory) committed() engine           { return c }

package state

import "errors"

// engine is the sorted byte map every store is built on: pebble on disk or a
// B-tree in memory. Both run the same store code, so the two variants of a
// store cannot drift apart in semantics; only durability and speed differ.
//
// Writes are buffered in the engine's open transaction and visible to its own
// reads (read-your-writes) until commit makes them durable or abort discards
// them. An engine is used by one goroutine at a time (the task's).
type engine interface {
	// get returns the value of key, nil when absent; a present empty value
	// is a non-nil empty slice. The slice is the caller's.
	get(key []byte) ([]byte, error)
	set(key, value []byte) error
	delete(key []byte) error
	// deleteRange deletes the keys in [start, end).
	deleteRange(start, end []byte) error
	// newIter iterates over [lower, upper) (nil: unbounded), forward or in
	// reverse; it sees the engine as it was when it was made.
	newIter(lower, upper []byte, reverse bool) (rawIter, error)
	commit() error
	abort() error
	close() error
	persistent() bool
	// approximateCount is a cheap estimate of the number of keys.
	approximateCount() (int64, error)
	// committed is a read-only engine over the state as of the last
	// commit, safe for use by other goroutines (its writes fail).
	committed() engine
}

// errReadOnly is a write to a committed view.
var errReadOnly = errors.New("state: a committed view is read-only")

// rawIter walks an engine in one direction. seek moves to the first key at
// or after k (forward) or at or before k (reverse); next moves one step in
// the iterator's direction. key and value are valid until the next move.
type rawIter interface {
	first() bool
	seek(k []byte) bool
	next() bool
	key() []byte
	value() []byte
	err() error
	close() error
}

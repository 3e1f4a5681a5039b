package state

import (
	"bytes"
	"errors"
	"fmt"
)

// Store is what the runtime does with every store of a task, whatever its
// kind: writes are buffered until Commit (and visible to the store's own
// reads meanwhile); Abort discards them, as an aborted transaction's.
type Store interface {
	Name() string
	// Persistent reports whether the store survives a restart (pebble)
	// or must be restored from its changelog (memory).
	Persistent() bool
	// Flush hands what a caching layer holds to the layers below (and so
	// to the changelog); the runtime calls it before the producer's flush
	// or the transaction's commit. Stores without a cache have nothing to
	// flush.
	Flush() error
	// Commit makes the buffered writes durable.
	Commit() error
	// Abort discards the writes since the last Commit.
	Abort() error
	Close() error
}

// KeyValueIterator walks key-value pairs in order. Key and Value are the
// caller's to keep. Close it when done.
type KeyValueIterator interface {
	Next() bool
	Key() []byte
	Value() []byte
	Err() error
	Close() error
}

// ErrClosed is returned by a store used after Close.
var ErrClosed = errors.New("state: store closed")

// ErrNilKey is returned for a nil key, which Kafka's stores refuse too.
var ErrNilKey = errors.New("state: nil key")

// keyValueIter adapts a raw iterator: copies the pairs out and strips the
// keyspace prefix.
type keyValueIter struct {
	raw     rawIter
	started bool
	first   func(rawIter) bool
	strip   int
	k, v    []byte
	done    bool
}

func (it *keyValueIter) Next() bool {
	if it.done {
		return false
	}
	var ok bool
	if !it.started {
		it.started = true
		ok = it.first(it.raw)
	} else {
		ok = it.raw.next()
	}
	if !ok {
		it.done = true
		it.k, it.v = nil, nil
		return false
	}
	it.k = bytes.Clone(it.raw.key()[it.strip:])
	it.v = cloneValue(it.raw.value())
	if it.v == nil {
		it.v = []byte{}
	}
	return true
}

func (it *keyValueIter) Key() []byte   { return it.k }
func (it *keyValueIter) Value() []byte { return it.v }
func (it *keyValueIter) Err() error    { return it.raw.err() }
func (it *keyValueIter) Close() error  { return it.raw.close() }

// emptyIter is the answer to an empty range.
type emptyIter struct{}

func (emptyIter) Next() bool    { return false }
func (emptyIter) Key() []byte   { return nil }
func (emptyIter) Value() []byte { return nil }
func (emptyIter) Err() error    { return nil }
func (emptyIter) Close() error  { return nil }

// prefixSuccessor is the smallest key greater than every key starting with
// p, nil when there is none (p is all 0xff).
func prefixSuccessor(p []byte) []byte {
	s := bytes.Clone(p)
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] < 0xff {
			s[i]++
			return s[:i+1]
		}
	}
	return nil
}

// closedCheck is shared by the stores' methods.
func closedCheck(closed bool, name string) error {
	if closed {
		return fmt.Errorf("state: %s: %w", name, ErrClosed)
	}
	return nil
}

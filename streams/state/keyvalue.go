package state

import (
	"bytes"
	"fmt"
	"path/filepath"
)

// ReadOnlyKeyValueStore is the reading half of a KeyValueStore (Kafka's
// ReadOnlyKeyValueStore), which interactive queries get.
type ReadOnlyKeyValueStore interface {
	// Get returns the value of key, nil when absent.
	Get(key []byte) ([]byte, error)
	// Range iterates over from..to, both inclusive, nil meaning unbounded;
	// from > to gives nothing.
	Range(from, to []byte) (KeyValueIterator, error)
	// ReverseRange is Range in descending order.
	ReverseRange(from, to []byte) (KeyValueIterator, error)
	// PrefixScan iterates over the keys starting with prefix.
	PrefixScan(prefix []byte) (KeyValueIterator, error)
	All() (KeyValueIterator, error)
	ReverseAll() (KeyValueIterator, error)
	// ApproximateNumEntries is exact in memory and an estimate on pebble.
	ApproximateNumEntries() (int64, error)
}

// KeyValueStore is Kafka Streams' KeyValueStore over bytes, ordered as
// Kafka's RocksDB store: lexicographically by unsigned bytes. A nil value
// is a delete; an empty value is a value.
type KeyValueStore interface {
	Store
	ReadOnlyKeyValueStore
	// Put sets key to value; a nil value deletes key.
	Put(key, value []byte) error
	// PutIfAbsent puts only when key is absent and returns the value that
	// was there (nil when it put).
	PutIfAbsent(key, value []byte) ([]byte, error)
	// PutAll puts each pair in order.
	PutAll(entries []KeyValue) error
	// Delete removes key and returns its old value.
	Delete(key []byte) ([]byte, error)
	// Committed is a view of the state as of the last Commit, safe for
	// use by other goroutines while the task writes (interactive queries).
	// Close waits for the view's open iterators.
	Committed() ReadOnlyKeyValueStore
}

// KeyValue is one pair.
type KeyValue struct {
	Key, Value []byte
}

// keyValueStore is both variants: the engine decides.
type keyValueStore struct {
	name   string
	eng    engine
	closed bool
}

// OpenPebbleKeyValueStore opens (or creates) a persistent store in dir.
func OpenPebbleKeyValueStore(name, dir string, o PebbleOptions) (KeyValueStore, error) {
	eng, err := openPebble(filepath.Clean(dir), o)
	if err != nil {
		return nil, err
	}
	return &keyValueStore{name: name, eng: eng}, nil
}

// NewInMemoryKeyValueStore returns an empty store in memory.
func NewInMemoryKeyValueStore(name string) KeyValueStore {
	return &keyValueStore{name: name, eng: newMemoryEngine()}
}

// The store's keys sit under one prefix byte, leaving room for metadata.
const kvPrefix = 'k'

func kvKey(key []byte) []byte {
	k := make([]byte, 0, len(key)+1)
	return append(append(k, kvPrefix), key...)
}

func (s *keyValueStore) Name() string { return s.name }

func (s *keyValueStore) Committed() ReadOnlyKeyValueStore {
	return &keyValueStore{name: s.name, eng: s.eng.committed()}
}
func (s *keyValueStore) Persistent() bool { return s.eng.persistent() }

func (s *keyValueStore) check(key []byte) error {
	if err := closedCheck(s.closed, s.name); err != nil {
		return err
	}
	if key == nil {
		return fmt.Errorf("state: %s: %w", s.name, ErrNilKey)
	}
	return nil
}

func (s *keyValueStore) Get(key []byte) ([]byte, error) {
	if err := s.check(key); err != nil {
		return nil, err
	}
	return s.eng.get(kvKey(key))
}

func (s *keyValueStore) Put(key, value []byte) error {
	if err := s.check(key); err != nil {
		return err
	}
	if value == nil {
		return s.eng.delete(kvKey(key))
	}
	return s.eng.set(kvKey(key), value)
}

func (s *keyValueStore) PutIfAbsent(key, value []byte) ([]byte, error) {
	old, err := s.Get(key)
	if err != nil || old != nil {
		return old, err
	}
	return nil, s.Put(key, value)
}

func (s *keyValueStore) PutAll(entries []KeyValue) error {
	for _, e := range entries {
		if err := s.Put(e.Key, e.Value); err != nil {
			return err
		}
	}
	return nil
}

func (s *keyValueStore) Delete(key []byte) ([]byte, error) {
	old, err := s.Get(key)
	if err != nil {
		return nil, err
	}
	return old, s.eng.delete(kvKey(key))
}

func (s *keyValueStore) Range(from, to []byte) (KeyValueIterator, error) {
	return s.rangeIter(from, to, false)
}

func (s *keyValueStore) ReverseRange(from, to []byte) (KeyValueIterator, error) {
	return s.rangeIter(from, to, true)
}

func (s *keyValueStore) All() (KeyValueIterator, error) { return s.rangeIter(nil, nil, false) }

func (s *keyValueStore) ReverseAll() (KeyValueIterator, error) { return s.rangeIter(nil, nil, true) }

func (s *keyValueStore) PrefixScan(prefix []byte) (KeyValueIterator, error) {
	if err := s.check(prefix); err != nil {
		return nil, err
	}
	upper := prefixSuccessor(kvKey(prefix))
	return s.iter(kvKey(prefix), upper, false)
}

// rangeIter maps the inclusive, nil-unbounded range of Kafka's API onto
// the engine's [lower, upper) bounds.
func (s *keyValueStore) rangeIter(from, to []byte, reverse bool) (KeyValueIterator, error) {
	if err := closedCheck(s.closed, s.name); err != nil {
		return nil, err
	}
	if from != nil && to != nil && bytes.Compare(from, to) > 0 {
		return emptyIter{}, nil
	}
	lower := []byte{kvPrefix}
	if from != nil {
		lower = kvKey(from)
	}
	upper := []byte{kvPrefix + 1}
	if to != nil {
		upper = append(kvKey(to), 0) // to itself is included
	}
	return s.iter(lower, upper, reverse)
}

func (s *keyValueStore) iter(lower, upper []byte, reverse bool) (KeyValueIterator, error) {
	raw, err := s.eng.newIter(lower, upper, reverse)
	if err != nil {
		return nil, err
	}
	return &keyValueIter{raw: raw, first: rawIter.first, strip: 1}, nil
}

func (s *keyValueStore) ApproximateNumEntries() (int64, error) {
	if err := closedCheck(s.closed, s.name); err != nil {
		return 0, err
	}
	return s.eng.approximateCount()
}

func (s *keyValueStore) Flush() error { return nil }

func (s *keyValueStore) Commit() error {
	if err := closedCheck(s.closed, s.name); err != nil {
		return err
	}
	return s.eng.commit()
}

func (s *keyValueStore) Abort() error {
	if err := closedCheck(s.closed, s.name); err != nil {
		return err
	}
	return s.eng.abort()
}

// Close discards uncommitted writes, as a crash would.
func (s *keyValueStore) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	return s.eng.close()
}

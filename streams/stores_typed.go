package streams

import "fmt"

// Typed views of a task's stores for Processor API processors (Kafka's
// KeyValueStore, WindowStore and SessionStore as a processor gets them
// from its context): the store's serdes turn K and V into the store's
// bytes, so K and V must be the types the store was built with.

// StoreGetter is what the typed accessors need of a ProcessorContext.
type StoreGetter interface {
	StateStore(name string) (any, error)
}

// KeyValueStoreView is a key-value store seen with its types.
type KeyValueStoreView[K, V any] struct{ s kvState }

// KeyValueStoreOf returns the key-value store name connected to the
// processor.
func KeyValueStoreOf[K, V any](ctx StoreGetter, name string) (*KeyValueStoreView[K, V], error) {
	s, err := ctx.StateStore(name)
	if err != nil {
		return nil, err
	}
	kv, ok := s.(kvState)
	if !ok {
		return nil, fmt.Errorf("streams: store %q is not a key-value store", name)
	}
	return &KeyValueStoreView[K, V]{kv}, nil
}

// Get returns key's value, its timestamp, and whether it was there.
func (v *KeyValueStoreView[K, V]) Get(key K) (value V, timestamp int64, found bool, err error) {
	x, ts, ok, err := v.s.get(key)
	if err != nil || !ok {
		return value, 0, false, err
	}
	return as[V](x), ts, true, nil
}

// Put sets key to value with a timestamp (the record's, usually).
func (v *KeyValueStoreView[K, V]) Put(key K, value V, timestamp int64) error {
	return v.s.put(key, value, timestamp)
}

// Delete removes key.
func (v *KeyValueStoreView[K, V]) Delete(key K) error { return v.s.put(key, nil, 0) }

// WindowStoreView is a window store seen with its types.
type WindowStoreView[K, V any] struct{ s windowState }

// WindowStoreOf returns the window store name connected to the processor.
func WindowStoreOf[K, V any](ctx StoreGetter, name string) (*WindowStoreView[K, V], error) {
	s, err := ctx.StateStore(name)
	if err != nil {
		return nil, err
	}
	w, ok := s.(windowState)
	if !ok {
		return nil, fmt.Errorf("streams: store %q is not a window store (one that keeps duplicates belongs to a join)", name)
	}
	return &WindowStoreView[K, V]{w}, nil
}

// Fetch returns key's window starting at start.
func (v *WindowStoreView[K, V]) Fetch(key K, start int64) (value V, timestamp int64, found bool, err error) {
	x, ts, ok, err := v.s.fetch(key, start)
	if err != nil || !ok {
		return value, 0, false, err
	}
	return as[V](x), ts, true, nil
}

// Put writes key's window starting at start.
func (v *WindowStoreView[K, V]) Put(key K, start int64, value V, timestamp int64) error {
	return v.s.put(key, start, value, timestamp)
}

// FetchRange returns key's windows starting in [from, to], by start.
func (v *WindowStoreView[K, V]) FetchRange(key K, from, to int64) ([]WindowValue[V], error) {
	rows, err := v.s.fetchRange(key, from, to, false)
	if err != nil {
		return nil, err
	}
	out := make([]WindowValue[V], len(rows))
	for i, r := range rows {
		out[i] = WindowValue[V]{Window: Window{Start: r.start}, Value: as[V](r.value), Timestamp: r.ts}
	}
	return out, nil
}

// SessionStoreView is a session store seen with its types.
type SessionStoreView[K, V any] struct{ s sessionState }

// SessionStoreOf returns the session store name connected to the
// processor.
func SessionStoreOf[K, V any](ctx StoreGetter, name string) (*SessionStoreView[K, V], error) {
	s, err := ctx.StateStore(name)
	if err != nil {
		return nil, err
	}
	ss, ok := s.(sessionState)
	if !ok {
		return nil, fmt.Errorf("streams: store %q is not a session store", name)
	}
	return &SessionStoreView[K, V]{ss}, nil
}

// FindSessions returns key's sessions ending at or after earliestEnd and
// starting at or before latestStart.
func (v *SessionStoreView[K, V]) FindSessions(key K, earliestEnd, latestStart int64) ([]WindowValue[V], error) {
	rows, err := v.s.findSessions(key, earliestEnd, latestStart)
	if err != nil {
		return nil, err
	}
	out := make([]WindowValue[V], len(rows))
	for i, r := range rows {
		out[i] = WindowValue[V]{Window: r.window, Value: as[V](r.value), Timestamp: r.window.End}
	}
	return out, nil
}

// Put writes key's session.
func (v *SessionStoreView[K, V]) Put(key K, session Window, value V) error {
	return v.s.put(key, session, value)
}

// Remove deletes key's session.
func (v *SessionStoreView[K, V]) Remove(key K, session Window) error {
	return v.s.remove(key, session)
}

package streams

// Header is one record header, as Kafka's.
type Header struct {
	Key   string
	Value []byte
}

// Record is a record as a processor sees it. Kafka keys and values may be
// null; a Go K or V cannot say so, hence NullKey and NullValue (a null
// value is a tombstone to a table). Key and Value hold the zero value
// when they are null.
type Record[K, V any] struct {
	Key       K
	Value     V
	Timestamp int64 // milliseconds since the epoch
	Headers   []Header
	NullKey   bool
	NullValue bool
}

// rec is a record inside the runtime: key and value untyped, nil meaning
// null. The typed Record is made from it at the edge of user code.
type rec struct {
	key, value any
	ts         int64
	headers    []Header
}

// change is the value a table forwards downstream: the new value and,
// when a downstream processor asked for it (Kafka's sendOldValues), the
// old one; nil means null (a delete, or no previous value).
type change struct {
	newV, oldV any
}

// typed makes the user's view of a runtime record.
func typed[K, V any](r rec) Record[K, V] {
	out := Record[K, V]{Timestamp: r.ts, Headers: r.headers, NullKey: r.key == nil, NullValue: r.value == nil}
	if r.key != nil {
		out.Key = r.key.(K)
	}
	if r.value != nil {
		out.Value = r.value.(V)
	}
	return out
}

// untyped makes the runtime's view of a user's record.
func untyped[K, V any](r Record[K, V]) rec {
	out := rec{ts: r.Timestamp, headers: r.Headers}
	if !r.NullKey {
		out.key = r.Key
	}
	if !r.NullValue {
		out.value = r.Value
	}
	return out
}

// as converts an untyped value to T, the zero T for null.
func as[T any](v any) T {
	if v == nil {
		var zero T
		return zero
	}
	return v.(T)
}

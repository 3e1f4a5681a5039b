package state

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// ChangeLogger receives every write of a logged store, in the changelog
// topic's format: key, value (nil: a tombstone) and the record timestamp.
// The runtime sends it to `<application.id>-<store>-changelog`.
type ChangeLogger func(key, value []byte, timestamp int64)

// ChangelogRecord is one record read back from a changelog topic.
type ChangelogRecord struct {
	Key, Value []byte
	Timestamp  int64
}

// RecordContext is the record being processed, shared by the stores of a
// task: the runtime sets Timestamp before each record, the logging layer
// stamps changelog records with it, and the cache sets it to an entry's
// own timestamp while flushing the entry, as Kafka Streams' record context.
type RecordContext struct {
	Timestamp int64
}

// ErrMalformedChangelogRecord is returned by RestoreBatch for a record
// that is not in the store's changelog format.
var ErrMalformedChangelogRecord = errors.New("state: malformed changelog record")

// Restorer rebuilds a store from its changelog. RestoreBatch buffers the
// writes like any others: the runtime commits the store after a batch, then
// checkpoints the changelog offset.
type Restorer interface {
	RestoreBatch(records []ChangelogRecord) error
}

// The changelog keys of windowed stores are Kafka Streams':
// WindowKeySchema's [key][start: int64 BE][seqnum: int32 BE] and
// SessionKeySchema's [key][end: int64 BE][start: int64 BE].
const (
	windowChangelogSuffix  = timestampBytes + seqnumBytes
	sessionChangelogSuffix = 2 * timestampBytes
)

// WindowChangelogKey is a window store's changelog key.
func WindowChangelogKey(key []byte, windowStart int64, seqnum uint32) []byte {
	b := make([]byte, 0, len(key)+windowChangelogSuffix)
	b = append(b, key...)
	b = binary.BigEndian.AppendUint64(b, uint64(windowStart))
	return binary.BigEndian.AppendUint32(b, seqnum)
}

// ParseWindowChangelogKey splits a window store's changelog key.
func ParseWindowChangelogKey(b []byte) (key []byte, windowStart int64, seqnum uint32, err error) {
	if len(b) < windowChangelogSuffix {
		return nil, 0, 0, fmt.Errorf("%w: window key of %d bytes", ErrMalformedChangelogRecord, len(b))
	}
	n := len(b) - windowChangelogSuffix
	return b[:n:n], int64(binary.BigEndian.Uint64(b[n:])), binary.BigEndian.Uint32(b[n+timestampBytes:]), nil
}

// SessionChangelogKey is a session store's changelog key.
func SessionChangelogKey(key []byte, session Window) []byte {
	b := make([]byte, 0, len(key)+sessionChangelogSuffix)
	b = append(b, key...)
	b = binary.BigEndian.AppendUint64(b, uint64(session.End))
	return binary.BigEndian.AppendUint64(b, uint64(session.Start))
}

// ParseSessionChangelogKey splits a session store's changelog key.
func ParseSessionChangelogKey(b []byte) (key []byte, session Window, err error) {
	if len(b) < sessionChangelogSuffix {
		return nil, Window{}, fmt.Errorf("%w: session key of %d bytes", ErrMalformedChangelogRecord, len(b))
	}
	n := len(b) - sessionChangelogSuffix
	end := int64(binary.BigEndian.Uint64(b[n:]))
	start := int64(binary.BigEndian.Uint64(b[n+timestampBytes:]))
	return b[:n:n], Window{Start: start, End: end}, nil
}

// ValueWithTimestamp is Kafka's ValueAndTimestamp bytes, the local value
// of timestamped stores: [timestamp: int64 BE][value].
func ValueWithTimestamp(value []byte, timestamp int64) []byte {
	b := make([]byte, 0, timestampBytes+len(value))
	b = binary.BigEndian.AppendUint64(b, uint64(timestamp))
	return append(b, value...)
}

// SplitValueAndTimestamp reads ValueWithTimestamp's bytes.
func SplitValueAndTimestamp(b []byte) (value []byte, timestamp int64, err error) {
	if len(b) < timestampBytes {
		return nil, 0, fmt.Errorf("state: value with timestamp of %d bytes", len(b))
	}
	return b[timestampBytes:], int64(binary.BigEndian.Uint64(b)), nil
}

// LoggedKeyValueStore reports each write of its inner store to a
// ChangeLogger, as Kafka's ChangeLoggingKeyValueBytesStore (or, when
// timestamped, ChangeLoggingTimestampedKeyValueBytesStore).
type LoggedKeyValueStore struct {
	KeyValueStore
	rc          *RecordContext
	log         ChangeLogger
	timestamped bool
}

// LogKeyValueStore logs inner's writes with the record's timestamp.
func LogKeyValueStore(inner KeyValueStore, rc *RecordContext, log ChangeLogger) *LoggedKeyValueStore {
	return &LoggedKeyValueStore{KeyValueStore: inner, rc: rc, log: log}
}

// LogTimestampedKeyValueStore logs a timestamped store (Kafka's
// TimestampedKeyValueStore, a KTable's): inner holds ValueWithTimestamp
// bytes; the changelog gets the plain value with its timestamp as the
// record timestamp, and restore puts that timestamp back.
func LogTimestampedKeyValueStore(inner KeyValueStore, rc *RecordContext, log ChangeLogger) *LoggedKeyValueStore {
	return &LoggedKeyValueStore{KeyValueStore: inner, rc: rc, log: log, timestamped: true}
}

// logWrite sends one write (value as stored) to the changelog.
func (s *LoggedKeyValueStore) logWrite(key, value []byte) error {
	if value == nil || !s.timestamped {
		s.log(key, value, s.rc.Timestamp)
		return nil
	}
	raw, ts, err := SplitValueAndTimestamp(value)
	if err != nil {
		return err
	}
	s.log(key, raw, ts)
	return nil
}

func (s *LoggedKeyValueStore) Put(key, value []byte) error {
	if s.timestamped && value != nil && len(value) < timestampBytes {
		return fmt.Errorf("state: %s: value of %d bytes has no timestamp", s.Name(), len(value))
	}
	if err := s.KeyValueStore.Put(key, value); err != nil {
		return err
	}
	return s.logWrite(key, value)
}

// PutIfAbsent logs only when it put.
func (s *LoggedKeyValueStore) PutIfAbsent(key, value []byte) ([]byte, error) {
	old, err := s.KeyValueStore.Get(key)
	if err != nil || old != nil {
		return old, err
	}
	return nil, s.Put(key, value)
}

func (s *LoggedKeyValueStore) PutAll(entries []KeyValue) error {
	for _, e := range entries {
		if err := s.Put(e.Key, e.Value); err != nil {
			return err
		}
	}
	return nil
}

func (s *LoggedKeyValueStore) Delete(key []byte) ([]byte, error) {
	old, err := s.KeyValueStore.Delete(key)
	if err != nil {
		return nil, err
	}
	return old, s.logWrite(key, nil)
}

// RestoreBatch applies changelog records to the inner store, unlogged.
func (s *LoggedKeyValueStore) RestoreBatch(records []ChangelogRecord) error {
	for _, r := range records {
		value := r.Value
		if value != nil && s.timestamped {
			value = ValueWithTimestamp(value, r.Timestamp)
		}
		if err := s.KeyValueStore.Put(r.Key, value); err != nil {
			return fmt.Errorf("state: %s: restore: %w", s.Name(), err)
		}
	}
	return nil
}

// LoggedWindowStore reports each write of its inner window store to a
// ChangeLogger under Kafka's window changelog key, as Kafka's
// ChangeLoggingWindowBytesStore (timestamped: ...TimestampedWindowBytesStore).
type LoggedWindowStore struct {
	WindowStore
	inner       *windowStore
	rc          *RecordContext
	log         ChangeLogger
	timestamped bool
}

// LogWindowStore logs inner's writes; inner must be a store of this package.
func LogWindowStore(inner WindowStore, rc *RecordContext, log ChangeLogger) (*LoggedWindowStore, error) {
	return logWindowStore(inner, rc, log, false)
}

// LogTimestampedWindowStore logs a timestamped window store (Kafka's
// TimestampedWindowStore, the DSL's windowed aggregations): inner holds
// ValueWithTimestamp bytes, the changelog plain values with their
// timestamps.
func LogTimestampedWindowStore(inner WindowStore, rc *RecordContext, log ChangeLogger) (*LoggedWindowStore, error) {
	return logWindowStore(inner, rc, log, true)
}

func logWindowStore(inner WindowStore, rc *RecordContext, log ChangeLogger, timestamped bool) (*LoggedWindowStore, error) {
	ws, ok := inner.(*windowStore)
	if !ok {
		return nil, fmt.Errorf("state: %s: change logging needs a window store of this package, not %T", inner.Name(), inner)
	}
	return &LoggedWindowStore{WindowStore: inner, inner: ws, rc: rc, log: log, timestamped: timestamped}, nil
}

func (s *LoggedWindowStore) Put(key, value []byte, windowStart int64) error {
	if value == nil && s.inner.opts.RetainDuplicates {
		return nil // a no-op in Kafka's store too
	}
	raw, ts := value, s.rc.Timestamp
	if value != nil && s.timestamped {
		var err error
		if raw, ts, err = SplitValueAndTimestamp(value); err != nil {
			return fmt.Errorf("state: %s: %w", s.Name(), err)
		}
	}
	seq, err := s.inner.put(key, value, windowStart)
	if err != nil {
		return err
	}
	s.log(WindowChangelogKey(key, windowStart, seq), raw, ts)
	return nil
}

// RestoreBatch applies changelog records under their own sequence numbers,
// so a replayed record overwrites itself instead of duplicating.
func (s *LoggedWindowStore) RestoreBatch(records []ChangelogRecord) error {
	for _, r := range records {
		key, start, seq, err := ParseWindowChangelogKey(r.Key)
		if err != nil {
			return fmt.Errorf("state: %s: restore: %w", s.Name(), err)
		}
		value := r.Value
		if value != nil && s.timestamped {
			value = ValueWithTimestamp(value, r.Timestamp)
		}
		if err := s.inner.putSeq(key, value, start, seq); err != nil {
			return fmt.Errorf("state: %s: restore: %w", s.Name(), err)
		}
		// New puts continue after the restored numbers (Kafka restarts at
		// zero and could overwrite a restored duplicate).
		s.inner.seqnum = max(s.inner.seqnum, seq)
	}
	return nil
}

// LoggedSessionStore reports each write of its inner session store to a
// ChangeLogger under Kafka's session changelog key, as Kafka's
// ChangeLoggingSessionBytesStore.
type LoggedSessionStore struct {
	SessionStore
	rc  *RecordContext
	log ChangeLogger
}

// LogSessionStore logs inner's writes with the record's timestamp.
func LogSessionStore(inner SessionStore, rc *RecordContext, log ChangeLogger) *LoggedSessionStore {
	return &LoggedSessionStore{SessionStore: inner, rc: rc, log: log}
}

func (s *LoggedSessionStore) Put(key []byte, session Window, value []byte) error {
	if err := s.SessionStore.Put(key, session, value); err != nil {
		return err
	}
	s.log(SessionChangelogKey(key, session), value, s.rc.Timestamp)
	return nil
}

func (s *LoggedSessionStore) Remove(key []byte, session Window) error {
	return s.Put(key, session, nil)
}

func (s *LoggedSessionStore) RestoreBatch(records []ChangelogRecord) error {
	for _, r := range records {
		key, session, err := ParseSessionChangelogKey(r.Key)
		if err != nil {
			return fmt.Errorf("state: %s: restore: %w", s.Name(), err)
		}
		if err := s.SessionStore.Put(key, session, r.Value); err != nil {
			return fmt.Errorf("state: %s: restore: %w", s.Name(), err)
		}
	}
	return nil
}

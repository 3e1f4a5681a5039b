package serde

import (
	"encoding/binary"
	"fmt"
	"math"
)

// The sizes of the suffixes Kafka Streams appends to a serialized key.
const (
	TimestampSize = 8 // a window's start or end, big-endian milliseconds
	SeqnumSize    = 4 // a window store's sequence number (duplicates of a key)
)

// TimeWindowed is Kafka Streams' TimeWindowedSerde for keys of tumbling,
// hopping and sliding windows: the inner key's bytes, then the window's
// start as 8 big-endian bytes (WindowKeySchema.toBinary). The end is not
// written: Deserialize makes it start + windowSize, as Kafka's
// TimeWindowedDeserializer given the window size does (the end is
// math.MaxInt64 when the sum overflows). Serialize ignores Window.End.
// A windowSize that is not positive makes every Deserialize fail, since
// Kafka's TimeWindow needs end > start.
func TimeWindowed[K any](inner Serde[K], windowSize int64) Serde[Windowed[K]] {
	return timeWindowed[K]{inner: inner, size: windowSize}
}

type timeWindowed[K any] struct {
	inner Serde[K]
	size  int64
}

func (s timeWindowed[K]) Serialize(topic string, v Windowed[K]) ([]byte, error) {
	key, err := s.inner.Serialize(topic, v.Key)
	if err != nil {
		return nil, err
	}
	return AppendWindowKey(nil, key, v.Window.Start), nil
}

func (s timeWindowed[K]) Deserialize(topic string, data []byte) (Windowed[K], error) {
	var out Windowed[K]
	key, start, err := SplitWindowKey(data)
	if err != nil {
		return out, err
	}
	if out.Window, err = TimeWindowFor(start, s.size); err != nil {
		return out, err
	}
	out.Key, err = s.inner.Deserialize(topic, key)
	return out, err
}

// TimeWindowFor is the time window of size starting at start, as Kafka's
// WindowKeySchema.timeWindowForSize makes it: the end is start + size,
// math.MaxInt64 when that is negative (an overflow). It refuses what
// Kafka's TimeWindow refuses: a negative start, an end not after start.
func TimeWindowFor(start, size int64) (Window, error) {
	if size <= 0 {
		return Window{}, fmt.Errorf("serde: a time window's size must be positive, not %d ms", size)
	}
	if start < 0 {
		return Window{}, invalid("a window's start cannot be negative (%d)", start)
	}
	end := start + size
	if end < 0 {
		end = math.MaxInt64
	}
	return Window{Start: start, End: end}, nil
}

// SessionWindowed is Kafka Streams' SessionWindowedSerde for keys of
// session windows: the inner key's bytes, the window's end, then its
// start, each 8 big-endian bytes (SessionKeySchema.toBinary; the end
// comes first so that a store finds overlapping sessions by a range scan).
func SessionWindowed[K any](inner Serde[K]) Serde[Windowed[K]] {
	return sessionWindowed[K]{inner: inner}
}

type sessionWindowed[K any] struct{ inner Serde[K] }

func (s sessionWindowed[K]) Serialize(topic string, v Windowed[K]) ([]byte, error) {
	key, err := s.inner.Serialize(topic, v.Key)
	if err != nil {
		return nil, err
	}
	return AppendSessionKey(nil, key, v.Window), nil
}

func (s sessionWindowed[K]) Deserialize(topic string, data []byte) (Windowed[K], error) {
	var out Windowed[K]
	key, w, err := SplitSessionKey(data)
	if err != nil {
		return out, err
	}
	out.Window = w
	out.Key, err = s.inner.Deserialize(topic, key)
	return out, err
}

// AppendWindowKey appends Kafka Streams' windowed key of a time window
// (WindowKeySchema.toBinary): key, then start (8 bytes, big-endian). It
// is what TimeWindowed writes, on output and repartition topics.
func AppendWindowKey(dst, key []byte, start int64) []byte {
	dst = append(dst, key...)
	return binary.BigEndian.AppendUint64(dst, uint64(start))
}

// SplitWindowKey splits AppendWindowKey's bytes. key aliases b.
func SplitWindowKey(b []byte) (key []byte, start int64, err error) {
	n := len(b) - TimestampSize
	if n < 0 {
		return nil, 0, invalid("a time-windowed key has at least %d bytes (the start), not %d", TimestampSize, len(b))
	}
	return b[:n], int64(binary.BigEndian.Uint64(b[n:])), nil
}

// AppendSessionKey appends Kafka Streams' session key
// (SessionKeySchema.toBinary): key, end, start (8 bytes each,
// big-endian). It is the key of a session store, its changelog, and
// SessionWindowed's bytes.
func AppendSessionKey(dst, key []byte, w Window) []byte {
	dst = append(dst, key...)
	dst = binary.BigEndian.AppendUint64(dst, uint64(w.End))
	return binary.BigEndian.AppendUint64(dst, uint64(w.Start))
}

// SplitSessionKey splits AppendSessionKey's bytes. key aliases b. It
// refuses what Kafka's SessionWindow refuses: a negative start, an end
// before the start.
func SplitSessionKey(b []byte) (key []byte, w Window, err error) {
	n := len(b) - 2*TimestampSize
	if n < 0 {
		return nil, Window{}, invalid("a session key has at least %d bytes (end and start), not %d", 2*TimestampSize, len(b))
	}
	w.End = int64(binary.BigEndian.Uint64(b[n:]))
	w.Start = int64(binary.BigEndian.Uint64(b[n+TimestampSize:]))
	if w.Start < 0 {
		return nil, Window{}, invalid("a session's start cannot be negative (%d)", w.Start)
	}
	if w.End < w.Start {
		return nil, Window{}, invalid("a session's end (%d) is before its start (%d)", w.End, w.Start)
	}
	return b[:n], w, nil
}

// AppendWindowStoreKey appends the key of Kafka Streams' window store and
// its changelog (WindowKeySchema.toStoreKeyBinary): key, the window's
// start (8 bytes), a sequence number (4 bytes), all big-endian. The
// sequence number tells apart the duplicates a store that retains them
// (a stream-stream join's) keeps for one key and window; others write 0.
func AppendWindowStoreKey(dst, key []byte, start int64, seqnum int32) []byte {
	dst = AppendWindowKey(dst, key, start)
	return binary.BigEndian.AppendUint32(dst, uint32(seqnum))
}

// SplitWindowStoreKey splits AppendWindowStoreKey's bytes. key aliases b.
func SplitWindowStoreKey(b []byte) (key []byte, start int64, seqnum int32, err error) {
	n := len(b) - TimestampSize - SeqnumSize
	if n < 0 {
		return nil, 0, 0, invalid("a window store key has at least %d bytes (start and sequence number), not %d", TimestampSize+SeqnumSize, len(b))
	}
	start = int64(binary.BigEndian.Uint64(b[n:]))
	seqnum = int32(binary.BigEndian.Uint32(b[n+TimestampSize:]))
	return b[:n], start, seqnum, nil
}

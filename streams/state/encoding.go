package state

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// The local keys of window and session stores are
//
//	[prefix][segment id][escaped key][timestamps...]
//
// with the user's key escaped so that the encoding is order-preserving and
// prefix-free (0x00 becomes 0x00 0xff, and 0x00 0x01 ends the key): then a
// key range with a time range is one contiguous range of local keys, even
// when one key is a prefix of another. Numbers are big-endian with the sign
// bit flipped, so they sort numerically. Only the changelog formats are
// Kafka's (changelog.go); these stay local.

const (
	escapeByte     = 0x00
	escapedZero    = 0xff
	keyTerminator  = 0x01
	timestampBytes = 8
	seqnumBytes    = 4
)

// errBadLocalKey means a local key the store did not write: corruption.
var errBadLocalKey = errors.New("state: malformed local key")

func appendEscaped(dst, key []byte) []byte {
	for _, b := range key {
		if b == escapeByte {
			dst = append(dst, escapeByte, escapedZero)
		} else {
			dst = append(dst, b)
		}
	}
	return append(dst, escapeByte, keyTerminator)
}

// readEscaped returns the key at the start of b and the rest after its
// terminator.
func readEscaped(b []byte) (key, rest []byte, err error) {
	key = make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] != escapeByte {
			key = append(key, b[i])
			continue
		}
		if i+1 >= len(b) {
			break
		}
		switch b[i+1] {
		case escapedZero:
			key = append(key, 0)
			i++
		case keyTerminator:
			return key, b[i+2:], nil
		default:
			return nil, nil, errBadLocalKey
		}
	}
	return nil, nil, errBadLocalKey
}

func appendOrderedInt64(dst []byte, v int64) []byte {
	return binary.BigEndian.AppendUint64(dst, uint64(v)^(1<<63))
}

func orderedInt64(b []byte) int64 {
	return int64(binary.BigEndian.Uint64(b) ^ (1 << 63))
}

// segmentID is the segment of a timestamp: floor(timestamp / interval), as
// Kafka's AbstractSegments (for non-negative timestamps, the only ones
// Kafka's windows have).
func segmentID(timestamp, interval int64) int64 {
	id := timestamp / interval
	if timestamp < 0 && timestamp%interval != 0 {
		id--
	}
	return id
}

// segments is the retention rule shared by window and session stores, as
// Kafka's AbstractRocksDBSegmentedBytesStore: the observed stream time is
// the largest timestamp put; a record whose segment is older than the
// segment of streamTime-retention is dropped; whole segments older than
// that are deleted; reads return nothing older than streamTime-retention+1.
type segments struct {
	retention, interval int64
	streamTime          int64 // observed; noTimestamp before the first put
	committedStreamTime int64
	droppedRecords      int64
	cleanedBelow        int64 // segments below this one have been deleted
}

// noTimestamp is Kafka's ConsumerRecord.NO_TIMESTAMP.
const noTimestamp = -1

func newSegments(retention, interval int64) (segments, error) {
	if retention < 0 {
		return segments{}, fmt.Errorf("state: retention period %d must not be negative", retention)
	}
	if interval <= 0 {
		return segments{}, fmt.Errorf("state: segment interval %d must be positive", interval)
	}
	return segments{retention: retention, interval: interval, streamTime: noTimestamp,
		committedStreamTime: noTimestamp, cleanedBelow: -1 << 62}, nil
}

// defaultSegmentInterval is Kafka's for window and session stores.
func defaultSegmentInterval(retention int64) int64 {
	return max(retention/2, 60_000)
}

// observe advances stream time and reports whether timestamp is live.
func (s *segments) observe(timestamp int64) bool {
	s.streamTime = max(s.streamTime, timestamp)
	return segmentID(timestamp, s.interval) >= s.minLiveSegment()
}

func (s *segments) minLiveSegment() int64 {
	return segmentID(s.streamTime-s.retention, s.interval)
}

// actualFrom is the earliest timestamp a read may return.
func (s *segments) actualFrom(from int64) int64 {
	return max(from, s.streamTime-s.retention+1)
}

// segmentKey is the start of a segment's local keys.
func segmentKey(prefix byte, id int64) []byte {
	return appendOrderedInt64([]byte{prefix}, id)
}

// expire deletes the segments that fell out of retention.
func (s *segments) expire(eng engine, prefix byte) error {
	live := s.minLiveSegment()
	if live <= s.cleanedBelow {
		return nil
	}
	if err := eng.deleteRange([]byte{prefix}, segmentKey(prefix, live)); err != nil {
		return err
	}
	s.cleanedBelow = live
	return nil
}

// The observed stream time is kept beside the data, committed with it, so
// a reopened persistent store applies retention as before.
var streamTimeKey = []byte("m/observedStreamTime")

func (s *segments) load(eng engine) error {
	v, err := eng.get(streamTimeKey)
	if err != nil || v == nil {
		return err
	}
	if len(v) != timestampBytes {
		return fmt.Errorf("state: observed stream time: %w", errBadLocalKey)
	}
	s.streamTime = int64(binary.BigEndian.Uint64(v))
	s.committedStreamTime = s.streamTime
	return nil
}

func (s *segments) commit(eng engine) error {
	if s.streamTime != s.committedStreamTime {
		if err := eng.set(streamTimeKey, binary.BigEndian.AppendUint64(nil, uint64(s.streamTime))); err != nil {
			return err
		}
	}
	if err := eng.commit(); err != nil {
		return err
	}
	s.committedStreamTime = s.streamTime
	return nil
}

func (s *segments) abort(eng engine) error {
	s.streamTime = s.committedStreamTime
	s.cleanedBelow = -1 << 62 // an aborted expiry must be redone
	return eng.abort()
}

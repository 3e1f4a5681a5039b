package state

import (
	"bytes"
	"fmt"
	"math"
)

// segmentedScan walks the local keys of a window or session store,
//
//	[prefix][segment][escaped key][first timestamp][rest]
//
// segment by segment, over a key range and a range of the first timestamp
// (a window's start, a session's end), seeking past what the ranges exclude
// instead of reading it. filter decides what the ranges cannot (a session's
// start). The order is Kafka's RocksDB stores': segment, key, timestamps.
type segmentedScan struct {
	raw            rawIter
	prefix         byte
	restLen        int // bytes after the first timestamp
	reverse        bool
	keyFrom, keyTo []byte // inclusive; nil: unbounded
	timeFrom       int64  // first timestamp, inclusive
	timeTo         int64
	filter         func(first int64, rest []byte) bool

	started bool
	done    bool
	err     error

	// the current entry
	key   []byte
	first int64
	rest  []byte
	value []byte
}

func newSegmentedScan(eng engine, prefix byte, restLen int, segLo, segHi int64, sc segmentedScan) (*segmentedScan, error) {
	if segLo > segHi || sc.timeFrom > sc.timeTo ||
		(sc.keyFrom != nil && sc.keyTo != nil && bytes.Compare(sc.keyFrom, sc.keyTo) > 0) {
		return &segmentedScan{done: true}, nil
	}
	upper := []byte{prefix + 1}
	if segHi < math.MaxInt64 {
		upper = segmentKey(prefix, segHi+1)
	}
	raw, err := eng.newIter(segmentKey(prefix, segLo), upper, sc.reverse)
	if err != nil {
		return nil, err
	}
	sc.raw, sc.prefix, sc.restLen = raw, prefix, restLen
	return &sc, nil
}

// localKey builds [prefix][segment][escaped key][first][rest].
func (s *segmentedScan) localKey(seg int64, key []byte, first int64, rest []byte) []byte {
	b := segmentKey(s.prefix, seg)
	b = appendEscaped(b, key)
	b = appendOrderedInt64(b, first)
	return append(b, rest...)
}

func (s *segmentedScan) ones() []byte { return bytes.Repeat([]byte{0xff}, s.restLen) }

func (s *segmentedScan) Next() bool {
	if s.done {
		return false
	}
	var ok bool
	if !s.started {
		s.started = true
		ok = s.raw.first()
	} else {
		ok = s.raw.next()
	}
	for ok {
		seg, key, first, rest, err := s.decode(s.raw.key())
		if err != nil {
			s.err, s.done = err, true
			return false
		}
		if seek := s.skip(seg, key, first); seek != nil {
			ok = s.raw.seek(seek)
			continue
		}
		if s.filter == nil || s.filter(first, rest) {
			s.key, s.first, s.rest = key, first, bytes.Clone(rest)
			s.value = cloneValue(s.raw.value())
			if s.value == nil {
				s.value = []byte{}
			}
			return true
		}
		ok = s.raw.next()
	}
	s.done = true
	s.err = s.raw.err()
	return false
}

// skip returns where to seek when the entry is outside the ranges, nil
// when it is inside them. Every seek moves strictly past the entry.
func (s *segmentedScan) skip(seg int64, key []byte, first int64) []byte {
	if !s.reverse {
		switch {
		case s.keyFrom != nil && bytes.Compare(key, s.keyFrom) < 0:
			return s.localKey(seg, s.keyFrom, s.timeFrom, nil)
		case s.keyTo != nil && bytes.Compare(key, s.keyTo) > 0:
			return segmentKey(s.prefix, seg+1)
		case first < s.timeFrom:
			return s.localKey(seg, key, s.timeFrom, nil)
		case first > s.timeTo:
			return prefixSuccessor(appendEscaped(segmentKey(s.prefix, seg), key))
		}
		return nil
	}
	switch {
	case s.keyTo != nil && bytes.Compare(key, s.keyTo) > 0:
		return s.localKey(seg, s.keyTo, s.timeTo, s.ones())
	case s.keyFrom != nil && bytes.Compare(key, s.keyFrom) < 0:
		return segmentKey(s.prefix, seg) // before the segment's first key
	case first > s.timeTo:
		return s.localKey(seg, key, s.timeTo, s.ones())
	case first < s.timeFrom:
		return appendEscaped(segmentKey(s.prefix, seg), key) // before the key's first entry
	}
	return nil
}

func (s *segmentedScan) decode(k []byte) (seg int64, key []byte, first int64, rest []byte, err error) {
	if len(k) < 1+timestampBytes {
		return 0, nil, 0, nil, fmt.Errorf("state: %q: %w", k, errBadLocalKey)
	}
	seg = orderedInt64(k[1:])
	key, tail, err := readEscaped(k[1+timestampBytes:])
	if err != nil || len(tail) != timestampBytes+s.restLen {
		return 0, nil, 0, nil, fmt.Errorf("state: %q: %w", k, errBadLocalKey)
	}
	return seg, key, orderedInt64(tail), tail[timestampBytes:], nil
}

func (s *segmentedScan) Err() error { return s.err }

func (s *segmentedScan) Close() error {
	if s.raw == nil {
		return nil
	}
	return s.raw.close()
}

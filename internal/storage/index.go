package storage

import (
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/samsa-io/samsa/internal/vfs"
)

// The index files use Kafka's entry layouts, big-endian:
//
//	.index      relative offset int32, position int32          (8 bytes)
//	.timeindex  timestamp int64, relative offset int32          (12 bytes)
//
// Entries live in memory for lookups and are appended to their file as they
// are made. The files are only trusted for segments below the recovery point;
// the rest are rebuilt from the log on recovery, so index writes need no
// sync of their own until the segment they index is flushed.
const (
	offsetEntrySize = 8
	timeEntrySize   = 12
)

type offsetEntry struct {
	relOffset uint32
	position  uint32
}

type timeEntry struct {
	timestamp int64
	relOffset uint32
}

// offsetIndex maps a batch's base offset to its position in the segment,
// for one batch every index.interval.bytes.
type offsetIndex struct {
	file    vfs.File
	entries []offsetEntry
	max     int // entries allowed, from segment.index.bytes
}

// lookup returns the position of the last indexed batch whose base offset
// is <= rel, or 0 when there is none: the place to start a forward scan.
func (x *offsetIndex) lookup(rel uint32) int64 {
	i := sort.Search(len(x.entries), func(i int) bool { return x.entries[i].relOffset > rel })
	if i == 0 {
		return 0
	}
	return int64(x.entries[i-1].position)
}

func (x *offsetIndex) full() bool { return len(x.entries) >= x.max }

func (x *offsetIndex) append(rel, pos uint32) error {
	var b [offsetEntrySize]byte
	binary.BigEndian.PutUint32(b[0:], rel)
	binary.BigEndian.PutUint32(b[4:], pos)
	if _, err := x.file.WriteAt(b[:], int64(len(x.entries))*offsetEntrySize); err != nil {
		return err
	}
	x.entries = append(x.entries, offsetEntry{rel, pos})
	return nil
}

// truncateToPosition drops entries at or past pos.
func (x *offsetIndex) truncateToPosition(pos int64) error {
	n := sort.Search(len(x.entries), func(i int) bool { return int64(x.entries[i].position) >= pos })
	// Clip the capacity so a concurrent reader's copy of the old slice never
	// sees entries overwritten by later appends.
	x.entries = x.entries[:n:n]
	return x.file.Truncate(int64(n) * offsetEntrySize)
}

// timeIndex maps a timestamp T to the base offset O of a batch such that
// every record before O has a timestamp <= T (T is the largest timestamp
// seen up to and including that batch). An entry is added only when the
// largest timestamp grows, so timestamps are strictly increasing.
type timeIndex struct {
	file    vfs.File
	entries []timeEntry
}

// lookupBefore returns the relative offset of the last entry whose timestamp
// is < ts: every record before it is older than ts, so a search for the
// first record at or after ts may start there.
func (x *timeIndex) lookupBefore(ts int64) (uint32, bool) {
	i := sort.Search(len(x.entries), func(i int) bool { return x.entries[i].timestamp >= ts })
	if i == 0 {
		return 0, false
	}
	return x.entries[i-1].relOffset, true
}

func (x *timeIndex) last() (timeEntry, bool) {
	if len(x.entries) == 0 {
		return timeEntry{}, false
	}
	return x.entries[len(x.entries)-1], true
}

func (x *timeIndex) maybeAppend(ts int64, rel uint32) error {
	if l, ok := x.last(); ok && ts <= l.timestamp {
		return nil
	}
	var b [timeEntrySize]byte
	binary.BigEndian.PutUint64(b[0:], uint64(ts))
	binary.BigEndian.PutUint32(b[8:], rel)
	if _, err := x.file.WriteAt(b[:], int64(len(x.entries))*timeEntrySize); err != nil {
		return err
	}
	x.entries = append(x.entries, timeEntry{ts, rel})
	return nil
}

// truncateToOffset drops entries at or past rel.
func (x *timeIndex) truncateToOffset(rel uint32) error {
	n := sort.Search(len(x.entries), func(i int) bool { return x.entries[i].relOffset >= rel })
	x.entries = x.entries[:n:n]
	return x.file.Truncate(int64(n) * timeEntrySize)
}

// loadOffsetIndex reads and sanity-checks an offset index file against the
// size of its log. A failed check is an error wrapping errIndexCorrupt; the
// caller rebuilds the index from the log.
func loadOffsetIndex(f vfs.File, logSize int64) ([]offsetEntry, error) {
	b, err := readAll(f)
	if err != nil {
		return nil, err
	}
	if len(b)%offsetEntrySize != 0 {
		return nil, fmt.Errorf("%w: %s size %d is not a multiple of %d", errIndexCorrupt, f.Name(), len(b), offsetEntrySize)
	}
	entries := make([]offsetEntry, len(b)/offsetEntrySize)
	for i := range entries {
		e := offsetEntry{binary.BigEndian.Uint32(b[i*8:]), binary.BigEndian.Uint32(b[i*8+4:])}
		if i > 0 && (e.relOffset <= entries[i-1].relOffset || e.position <= entries[i-1].position) {
			return nil, fmt.Errorf("%w: %s entry %d not increasing", errIndexCorrupt, f.Name(), i)
		}
		if int64(e.position) >= logSize {
			return nil, fmt.Errorf("%w: %s entry %d points past the log", errIndexCorrupt, f.Name(), i)
		}
		entries[i] = e
	}
	return entries, nil
}

func loadTimeIndex(f vfs.File, nextRel uint32) ([]timeEntry, error) {
	b, err := readAll(f)
	if err != nil {
		return nil, err
	}
	if len(b)%timeEntrySize != 0 {
		return nil, fmt.Errorf("%w: %s size %d is not a multiple of %d", errIndexCorrupt, f.Name(), len(b), timeEntrySize)
	}
	entries := make([]timeEntry, len(b)/timeEntrySize)
	for i := range entries {
		e := timeEntry{int64(binary.BigEndian.Uint64(b[i*12:])), binary.BigEndian.Uint32(b[i*12+8:])}
		if i > 0 && (e.timestamp <= entries[i-1].timestamp || e.relOffset < entries[i-1].relOffset) {
			return nil, fmt.Errorf("%w: %s entry %d not increasing", errIndexCorrupt, f.Name(), i)
		}
		if e.relOffset >= nextRel {
			return nil, fmt.Errorf("%w: %s entry %d points past the log", errIndexCorrupt, f.Name(), i)
		}
		entries[i] = e
	}
	return entries, nil
}

func readAll(f vfs.File) ([]byte, error) {
	size, err := f.Size()
	if err != nil {
		return nil, err
	}
	b := make([]byte, size)
	if size == 0 {
		return b, nil
	}
	if _, err := f.ReadAt(b, 0); err != nil {
		return nil, err
	}
	return b, nil
}

package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"

	"github.com/samsa-io/samsa/internal/vfs"
)

// The index files use Kafka's entry layouts, big-endian:
//
//	.index      relative offset int32, position int32          (8 bytes)
//	.timeindex  timestamp int64, relative offset int32          (12 bytes)
//
// Entries live in memory, for lookups and as they are made; the files are
// written whole, and synced, only when the segment rolls, is recovered
// (rebuilt) or the log closes cleanly (segment.writeIndexes). Files are
// trusted only for segments below the recovery point, or after a clean
// close, and the recovery point passes a segment only once it has rolled:
// so the active segment's indexes need no file at all, and a segment holds
// one open file, its log, not three (Kafka's brokers hold the log too and
// map the indexes). A partition directory's index files for its active
// segment are thus absent or stale while it runs; recovery ignores them.
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
	path    string // the .index file
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

func (x *offsetIndex) append(rel, pos uint32) {
	x.entries = append(x.entries, offsetEntry{rel, pos})
}

// truncateToPosition drops entries at or past pos.
func (x *offsetIndex) truncateToPosition(pos int64) {
	n := sort.Search(len(x.entries), func(i int) bool { return int64(x.entries[i].position) >= pos })
	// Clip the capacity so a concurrent reader's copy of the old slice never
	// sees entries overwritten by later appends.
	x.entries = x.entries[:n:n]
}

// encode is the index file's content.
func (x *offsetIndex) encode() []byte {
	b := make([]byte, len(x.entries)*offsetEntrySize)
	for i, e := range x.entries {
		binary.BigEndian.PutUint32(b[i*offsetEntrySize:], e.relOffset)
		binary.BigEndian.PutUint32(b[i*offsetEntrySize+4:], e.position)
	}
	return b
}

// timeIndex maps a timestamp T to the base offset O of a batch such that
// every record before O has a timestamp <= T (T is the largest timestamp
// seen up to and including that batch). An entry is added only when the
// largest timestamp grows, so timestamps are strictly increasing.
type timeIndex struct {
	path    string // the .timeindex file
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

func (x *timeIndex) maybeAppend(ts int64, rel uint32) {
	if l, ok := x.last(); ok && ts <= l.timestamp {
		return
	}
	x.entries = append(x.entries, timeEntry{ts, rel})
}

// truncateToOffset drops entries at or past rel.
func (x *timeIndex) truncateToOffset(rel uint32) {
	n := sort.Search(len(x.entries), func(i int) bool { return x.entries[i].relOffset >= rel })
	x.entries = x.entries[:n:n]
}

// encode is the index file's content.
func (x *timeIndex) encode() []byte {
	b := make([]byte, len(x.entries)*timeEntrySize)
	for i, e := range x.entries {
		binary.BigEndian.PutUint64(b[i*timeEntrySize:], uint64(e.timestamp))
		binary.BigEndian.PutUint32(b[i*timeEntrySize+8:], e.relOffset)
	}
	return b
}

// readIndexFile reads the index file at path whole. A missing file is
// errIndexCorrupt: the caller rebuilds the index from the log.
func readIndexFile(fsys vfs.FS, path string) ([]byte, error) {
	b, err := vfs.ReadFile(fsys, path)
	if errors.Is(err, vfs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s is missing", errIndexCorrupt, path)
	}
	return b, err
}

// loadOffsetIndex reads and sanity-checks an offset index file against the
// size of its log. A failed check is an error wrapping errIndexCorrupt; the
// caller rebuilds the index from the log.
func loadOffsetIndex(fsys vfs.FS, name string, logSize int64) ([]offsetEntry, error) {
	b, err := readIndexFile(fsys, name)
	if err != nil {
		return nil, err
	}
	if len(b)%offsetEntrySize != 0 {
		return nil, fmt.Errorf("%w: %s size %d is not a multiple of %d", errIndexCorrupt, name, len(b), offsetEntrySize)
	}
	entries := make([]offsetEntry, len(b)/offsetEntrySize)
	for i := range entries {
		e := offsetEntry{binary.BigEndian.Uint32(b[i*8:]), binary.BigEndian.Uint32(b[i*8+4:])}
		if i > 0 && (e.relOffset <= entries[i-1].relOffset || e.position <= entries[i-1].position) {
			return nil, fmt.Errorf("%w: %s entry %d not increasing", errIndexCorrupt, name, i)
		}
		if int64(e.position) >= logSize {
			return nil, fmt.Errorf("%w: %s entry %d points past the log", errIndexCorrupt, name, i)
		}
		entries[i] = e
	}
	return entries, nil
}

func loadTimeIndex(fsys vfs.FS, name string, nextRel uint32) ([]timeEntry, error) {
	b, err := readIndexFile(fsys, name)
	if err != nil {
		return nil, err
	}
	if len(b)%timeEntrySize != 0 {
		return nil, fmt.Errorf("%w: %s size %d is not a multiple of %d", errIndexCorrupt, name, len(b), timeEntrySize)
	}
	entries := make([]timeEntry, len(b)/timeEntrySize)
	for i := range entries {
		e := timeEntry{int64(binary.BigEndian.Uint64(b[i*12:])), binary.BigEndian.Uint32(b[i*12+8:])}
		if i > 0 && (e.timestamp <= entries[i-1].timestamp || e.relOffset < entries[i-1].relOffset) {
			return nil, fmt.Errorf("%w: %s entry %d not increasing", errIndexCorrupt, name, i)
		}
		if e.relOffset >= nextRel {
			return nil, fmt.Errorf("%w: %s entry %d points past the log", errIndexCorrupt, name, i)
		}
		entries[i] = e
	}
	return entries, nil
}

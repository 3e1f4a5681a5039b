package storage

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math/bits"
)

// offsetMapEntrySize is the memory one slot of an offsetMap costs: a 16-byte
// key hash and an 8-byte offset, as in Kafka's SkimpyOffsetMap with MD5.
const offsetMapEntrySize = 16 + 8

// defaultOffsetMapLoadFactor is log.cleaner.io.buffer.load.factor's default.
const defaultOffsetMapLoadFactor = 0.9

// offsetMap maps a record key to the largest offset seen for it, in a fixed
// amount of memory: the cleaner builds one over the dirty section of a log
// and then keeps a record only if it is the latest for its key.
//
// Keys are not stored, only the first 16 bytes of their SHA-256. Two keys
// with the same hash would share an entry, and the older record of one of
// them could be dropped although it is the latest for its own key. With n
// distinct keys in the map, the odds that any two collide are about
// n²/2^129: for a billion keys, under 2e-21. SHA-256 rather than a fast
// non-cryptographic hash because a producer must not be able to choose keys
// that collide with someone else's (Kafka accepts MD5 for the same role;
// SHA-256 is hardware-accelerated on current CPUs).
//
// The table is open-addressed with linear probing; it never grows. Full
// reports when the load factor is reached, and the cleaner stops adding
// segments to the dirty section there, as Kafka's does. Put still accepts new
// keys past that point (a batch is never split across two cleanings) and only
// refuses once one free slot is left, which keeps every probe finite.
//
// An offsetMap is not safe for concurrent use; the cleaner owns one per thread.
type offsetMap struct {
	slots      []offsetMapSlot
	entries    int
	fullAt     int   // entries at which Full reports true
	lastOffset int64 // the largest offset Put, -1 when empty
}

type offsetMapSlot struct {
	hash [16]byte
	// next is the offset plus one, so the zero slot is empty and Clear is a
	// plain memclr.
	next int64
}

// newOffsetMap sizes the table from a byte budget, Kafka's
// log.cleaner.dedupe.buffer.size divided by the number of cleaner threads,
// and the load factor at which Full reports true (log.cleaner.io.buffer.load.factor).
func newOffsetMap(memory int, loadFactor float64) (*offsetMap, error) {
	n := memory / offsetMapEntrySize
	if n < 2 {
		return nil, fmt.Errorf("storage: offset map of %d bytes: need at least %d", memory, 2*offsetMapEntrySize)
	}
	if !(loadFactor > 0 && loadFactor <= 1) {
		return nil, fmt.Errorf("storage: offset map load factor %v: want (0, 1]", loadFactor)
	}
	fullAt := min(max(int(float64(n)*loadFactor), 1), n-1)
	return &offsetMap{slots: make([]offsetMapSlot, n), fullAt: fullAt, lastOffset: -1}, nil
}

// Put records offset for key, keeping the larger offset when the key is
// already there. offset must be non-negative. It returns false, changing
// nothing, only when key is new and the table has a single free slot left.
func (m *offsetMap) Put(key []byte, offset int64) bool {
	h := sha256.Sum256(key)
	i := m.find((*[16]byte)(h[:16]))
	s := &m.slots[i]
	if s.next == 0 {
		if m.entries >= len(m.slots)-1 {
			return false
		}
		s.hash = [16]byte(h[:16])
		m.entries++
	}
	s.next = max(s.next, offset+1)
	m.lastOffset = max(m.lastOffset, offset)
	return true
}

// Get returns the largest offset Put for key.
func (m *offsetMap) Get(key []byte) (offset int64, ok bool) {
	h := sha256.Sum256(key)
	s := &m.slots[m.find((*[16]byte)(h[:16]))]
	return s.next - 1, s.next != 0
}

// find returns the slot holding hash, or the empty slot where it would go.
// There is always an empty slot, so the probe ends.
func (m *offsetMap) find(hash *[16]byte) int {
	// Fold the top 64 bits onto [0, len) with a multiply, not a modulo.
	i, _ := bits.Mul64(binary.LittleEndian.Uint64(hash[:8]), uint64(len(m.slots)))
	for {
		s := &m.slots[i]
		if s.next == 0 || s.hash == *hash {
			return int(i)
		}
		if i++; i == uint64(len(m.slots)) {
			i = 0
		}
	}
}

// Full reports whether the map has reached its load factor.
func (m *offsetMap) Full() bool { return m.entries >= m.fullAt }

// Len is the number of distinct keys (key hashes) in the map.
func (m *offsetMap) Len() int { return m.entries }

// Slots is the capacity of the table.
func (m *offsetMap) Slots() int { return len(m.slots) }

// LastOffset is the largest offset Put since the last Clear, or -1: the
// end of the dirty section the map covers.
func (m *offsetMap) LastOffset() int64 { return m.lastOffset }

// Clear empties the map for the next cleaning, keeping its memory.
func (m *offsetMap) Clear() {
	clear(m.slots)
	m.entries = 0
	m.lastOffset = -1
}

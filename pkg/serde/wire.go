package serde

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Confluent's wire format: a magic byte 0, the schema ID as a 4-byte
// big-endian integer, then (Protobuf only) the message-index array, then
// the format's encoding of the value.

// MagicByte opens every payload of Confluent's wire format.
const MagicByte = 0

// headerSize is the magic byte and the schema ID.
const headerSize = 5

// Errors of the wire format; every decoding error wraps one of them, so
// callers can tell them apart with errors.Is.
var (
	// ErrShortPayload: fewer bytes than the header needs.
	ErrShortPayload = errors.New("serde: payload too short for Confluent's wire format")
	// ErrUnknownMagicByte: the first byte is not MagicByte, so the
	// payload was not written by a schema registry serializer.
	ErrUnknownMagicByte = errors.New("serde: unknown magic byte")
	// ErrBadMessageIndexes: a Protobuf payload's message-index array is
	// truncated or out of range.
	ErrBadMessageIndexes = errors.New("serde: bad message-index array")
)

// maxMessageDepth bounds the message-index array: no schema nests
// messages this deep, and a count read from a hostile payload must not
// size an allocation.
const maxMessageDepth = 100

// AppendHeader appends the magic byte and the schema ID to dst.
func AppendHeader(dst []byte, id int) []byte {
	dst = append(dst, MagicByte)
	return binary.BigEndian.AppendUint32(dst, uint32(id))
}

// ParseHeader reads the magic byte and the schema ID, and returns the
// bytes after them.
func ParseHeader(payload []byte) (id int, rest []byte, err error) {
	if len(payload) < headerSize {
		return 0, nil, fmt.Errorf("%w: %d bytes, want at least %d (magic byte and schema id)", ErrShortPayload, len(payload), headerSize)
	}
	if payload[0] != MagicByte {
		return 0, nil, fmt.Errorf("%w %d: want %d (was the record written with a schema registry serializer?)", ErrUnknownMagicByte, payload[0], MagicByte)
	}
	return int(binary.BigEndian.Uint32(payload[1:headerSize])), payload[headerSize:], nil
}

// AppendMessageIndexes appends a Protobuf message's path in its file (the
// index of its top-level message, then of each nested message) as
// Confluent writes it: a zigzag varint count, then each index as a zigzag
// varint; the common [0] (the file's first message) is the single byte 0.
func AppendMessageIndexes(dst []byte, indexes []int) []byte {
	if len(indexes) == 1 && indexes[0] == 0 {
		return append(dst, 0)
	}
	dst = binary.AppendVarint(dst, int64(len(indexes)))
	for _, i := range indexes {
		dst = binary.AppendVarint(dst, int64(i))
	}
	return dst
}

// ParseMessageIndexes reads a message-index array and returns the bytes
// after it. A count of 0 is [0].
func ParseMessageIndexes(b []byte) (indexes []int, rest []byte, err error) {
	count, n := binary.Varint(b)
	if n <= 0 {
		return nil, nil, fmt.Errorf("%w: cannot read the count", ErrBadMessageIndexes)
	}
	b = b[n:]
	switch {
	case count == 0:
		return []int{0}, b, nil
	case count < 0 || count > maxMessageDepth:
		return nil, nil, fmt.Errorf("%w: count %d, want 0 to %d", ErrBadMessageIndexes, count, maxMessageDepth)
	}
	indexes = make([]int, 0, count)
	for range count {
		i, n := binary.Varint(b)
		if n <= 0 {
			return nil, nil, fmt.Errorf("%w: %d indexes announced, only %d readable", ErrBadMessageIndexes, count, len(indexes))
		}
		if i < 0 || i > math.MaxInt32 {
			return nil, nil, fmt.Errorf("%w: index %d", ErrBadMessageIndexes, i)
		}
		indexes = append(indexes, int(i))
		b = b[n:]
	}
	return indexes, b, nil
}

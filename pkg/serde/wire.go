package serde

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/samsa-io/samsa/internal/schemaregistry/msgindex"
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
	ErrBadMessageIndexes = msgindex.ErrBad
)

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
// The broker's schema ID validation reads the same bytes (msgindex).
func AppendMessageIndexes(dst []byte, indexes []int) []byte {
	return msgindex.Append(dst, indexes)
}

// ParseMessageIndexes reads a message-index array and returns the bytes
// after it. A count of 0 is [0].
func ParseMessageIndexes(b []byte) (indexes []int, rest []byte, err error) {
	indexes, rest, err = msgindex.Parse(b)
	if err != nil {
		return nil, nil, fmt.Errorf("serde: %w", err)
	}
	return indexes, rest, nil
}

package mm2

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// ErrMalformed marks a record that cannot be decoded: a key or value too
// short for its schema, a negative string length, a missing key or value.
// Kafka throws SchemaException for the same records and MM2 skips them
// where it reads a topic (CheckpointStore, MirrorClient); test with
// errors.Is.
var ErrMalformed = errors.New("mm2: malformed record")

// MaxStringLen is the longest string, in UTF-8 bytes, that Kafka's protocol
// type STRING holds: its length is an int16. Kafka refuses to write a longer
// one (SchemaException "String length N is larger than the maximum string
// length"); see the Validate methods.
const MaxStringLen = math.MaxInt16

// The encoding below is Kafka's org.apache.kafka.common.protocol.types.Type
// for the types MM2's schemas use, all big-endian: INT16, INT32, INT64 as
// two's complement, STRING as an int16 length then that many UTF-8 bytes.
// Schemas are their fields one after the other with no framing.

func appendInt16(b []byte, v int16) []byte { return binary.BigEndian.AppendUint16(b, uint16(v)) }
func appendInt32(b []byte, v int32) []byte { return binary.BigEndian.AppendUint32(b, uint32(v)) }
func appendInt64(b []byte, v int64) []byte { return binary.BigEndian.AppendUint64(b, uint64(v)) }

// appendString writes s as STRING. Callers check the length first (the
// Validate methods); a longer string is a programming error, as Kafka's
// SchemaException on write is.
func appendString(b []byte, s string) []byte {
	if len(s) > MaxStringLen {
		panic(fmt.Sprintf("mm2: string length %d is larger than the maximum string length", len(s)))
	}
	b = appendInt16(b, int16(len(s)))
	return append(b, s...)
}

func checkString(field, s string) error {
	if len(s) > MaxStringLen {
		return fmt.Errorf("mm2: field '%s': string length %d is larger than the maximum string length %d", field, len(s), MaxStringLen)
	}
	return nil
}

// structReader reads a schema's fields in order. The first failure sticks
// (as kbin's reader), so a decoder reads every field and checks err once;
// nothing it reads can panic. Trailing bytes are left unread, as Kafka's
// Schema.read leaves them.
type structReader struct {
	b   []byte
	err error
}

func (r *structReader) fail(field, format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: error reading field '%s': %s", ErrMalformed, field, fmt.Sprintf(format, args...))
	}
}

func (r *structReader) take(field string, n int) []byte {
	if r.err != nil {
		return nil
	}
	if len(r.b) < n {
		r.fail(field, "need %d bytes, only %d available", n, len(r.b))
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *structReader) int16(field string) int16 {
	if v := r.take(field, 2); v != nil {
		return int16(binary.BigEndian.Uint16(v))
	}
	return 0
}

func (r *structReader) int32(field string) int32 {
	if v := r.take(field, 4); v != nil {
		return int32(binary.BigEndian.Uint32(v))
	}
	return 0
}

func (r *structReader) int64(field string) int64 {
	if v := r.take(field, 8); v != nil {
		return int64(binary.BigEndian.Uint64(v))
	}
	return 0
}

// string reads STRING with Kafka's checks and messages (Type.STRING.read).
// The bytes are kept as they are: Java would turn invalid UTF-8 into
// U+FFFD, which only matters for names no Kafka client can create.
func (r *structReader) string(field string) string {
	n := r.int16(field)
	if r.err != nil {
		return ""
	}
	if n < 0 {
		r.fail(field, "String length %d cannot be negative", n)
		return ""
	}
	if int(n) > len(r.b) {
		r.fail(field, "Error reading string of length %d, only %d bytes available", n, len(r.b))
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

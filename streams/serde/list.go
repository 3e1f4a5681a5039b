package serde

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Kafka's ListSerde strategies, by their ordinal (the flag byte).
const (
	listConstantSize = 0 // entries of a fixed-size serde, written without lengths
	listVariableSize = 1 // each entry after its 4-byte length (-1: null)
	listNullEntry    = -1
)

// List is Kafka's ListSerde over inner: a strategy byte, then for the
// fixed-size serdes (Int16, Int32, Int64, Float32, Float64, UUID) the
// list of null entries' indexes (a 4-byte count, then 4-byte indexes),
// the 4-byte entry count and the entries back to back; for the others
// the count and each entry after its 4-byte length. All big-endian.
// A Go []T holds no nulls: null entries are refused when read, and never
// written. Bytes after the last entry are refused too (Kafka ignores
// them; no Kafka serializer writes them).
func List[T any](inner Serde[T]) Serde[[]T] {
	return listSerde[T]{inner: inner, fixed: fixedSize(inner)}
}

type listSerde[T any] struct {
	inner Serde[T]
	fixed int // the entries' size under the constant-size strategy; 0 for variable
}

// fixedSize is the entry size Kafka's ListSerializer and
// ListDeserializer know for the serde's class; 0 for the others.
func fixedSize(s any) int {
	switch s.(type) {
	case int16Serde:
		return 2
	case int32Serde, float32Serde:
		return 4
	case int64Serde, float64Serde:
		return 8
	case uuidSerde:
		return uuidTextLen
	}
	return 0
}

func (s listSerde[T]) Serialize(topic string, v []T) ([]byte, error) {
	if len(v) > math.MaxInt32 {
		return nil, fmt.Errorf("serde: List of %d entries is more than Kafka's format counts", len(v))
	}
	var out []byte
	if s.fixed > 0 {
		out = append(out, listConstantSize)
		out = binary.BigEndian.AppendUint32(out, 0) // no null entries
	} else {
		out = append(out, listVariableSize)
	}
	out = binary.BigEndian.AppendUint32(out, uint32(len(v)))
	for i, e := range v {
		b, err := s.inner.Serialize(topic, e)
		if err != nil {
			return nil, fmt.Errorf("serde: List entry %d: %w", i, err)
		}
		if s.fixed == 0 {
			out = binary.BigEndian.AppendUint32(out, uint32(len(b)))
		}
		out = append(out, b...)
	}
	return out, nil
}

func (s listSerde[T]) Deserialize(topic string, data []byte) ([]T, error) {
	r := listReader{data: data}
	flag := r.byte()
	switch {
	case r.err != nil:
		return nil, r.err
	case flag == listConstantSize && s.fixed == 0:
		return nil, invalid("List: the constant-size strategy needs a fixed-size inner serde (Int16, Int32, Int64, Float32, Float64, UUID)")
	case flag == listConstantSize:
		if nulls := r.int32(); r.err == nil && nulls != 0 {
			return nil, invalid("List: %d null entries, which a Go slice cannot hold", nulls)
		}
	case flag != listVariableSize:
		return nil, invalid("List: invalid serialization strategy flag %d", flag)
	}
	n := r.int32()
	if r.err == nil && n < 0 {
		return nil, invalid("List: negative entry count %d", n)
	}
	out := make([]T, 0, min(int(max(n, 0)), len(data))) // a count is not trusted with an allocation
	for i := 0; r.err == nil && i < int(n); i++ {
		size := s.fixed
		if flag == listVariableSize {
			if size = int(r.int32()); r.err == nil && size == listNullEntry {
				return nil, invalid("List: entry %d is null, which a Go slice cannot hold", i)
			}
		}
		b := r.bytes(size)
		if r.err != nil {
			break
		}
		e, err := s.inner.Deserialize(topic, b)
		if err != nil {
			return nil, fmt.Errorf("serde: List entry %d: %w", i, err)
		}
		out = append(out, e)
	}
	if r.err == nil && len(r.data) > 0 {
		return nil, invalid("List: %d bytes after the last entry", len(r.data))
	}
	return out, r.err
}

// listReader reads big-endian fields with a sticky error.
type listReader struct {
	data []byte
	err  error
}

func (r *listReader) bytes(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.data) {
		r.err = invalid("List: %d bytes wanted, %d left", n, len(r.data))
		return nil
	}
	b := r.data[:n]
	r.data = r.data[n:]
	return b
}

func (r *listReader) byte() byte {
	if b := r.bytes(1); b != nil {
		return b[0]
	}
	return 0
}

func (r *listReader) int32() int32 {
	if b := r.bytes(4); b != nil {
		return int32(binary.BigEndian.Uint32(b))
	}
	return 0
}

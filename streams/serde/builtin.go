package serde

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"

	"github.com/google/uuid"
)

// String is Kafka's StringSerde with its default encoding, UTF-8. A Go
// string is bytes, so both ways are copies: invalid UTF-8 read from a
// topic comes back unchanged, where Java would replace it with U+FFFD.
func String() Serde[string] { return stringSerde{} }

type stringSerde struct{}

func (stringSerde) Serialize(_ string, v string) ([]byte, error)      { return []byte(v), nil }
func (stringSerde) Deserialize(_ string, data []byte) (string, error) { return string(data), nil }

// Bytes is Kafka's ByteArraySerde (and BytesSerde): the bytes as they
// are. Deserialize copies, since the caller may reuse data (a store's
// iterator does); Serialize returns v itself, so the caller must not
// change v until the bytes are written.
func Bytes() Serde[[]byte] { return bytesSerde{} }

type bytesSerde struct{}

func (bytesSerde) Serialize(_ string, v []byte) ([]byte, error) { return v, nil }
func (bytesSerde) Deserialize(_ string, data []byte) ([]byte, error) {
	return append(make([]byte, 0, len(data)), data...), nil
}

// Int16 is Kafka's ShortSerde: two bytes, big-endian.
func Int16() Serde[int16] { return int16Serde{} }

type int16Serde struct{}

func (int16Serde) Serialize(_ string, v int16) ([]byte, error) {
	return binary.BigEndian.AppendUint16(nil, uint16(v)), nil
}

func (int16Serde) Deserialize(_ string, data []byte) (int16, error) {
	if len(data) != 2 {
		return 0, sizeErr("Int16 (Kafka's Short)", 2, data)
	}
	return int16(binary.BigEndian.Uint16(data)), nil
}

// Int32 is Kafka's IntegerSerde: four bytes, big-endian.
func Int32() Serde[int32] { return int32Serde{} }

type int32Serde struct{}

func (int32Serde) Serialize(_ string, v int32) ([]byte, error) {
	return binary.BigEndian.AppendUint32(nil, uint32(v)), nil
}

func (int32Serde) Deserialize(_ string, data []byte) (int32, error) {
	if len(data) != 4 {
		return 0, sizeErr("Int32 (Kafka's Integer)", 4, data)
	}
	return int32(binary.BigEndian.Uint32(data)), nil
}

// Int64 is Kafka's LongSerde: eight bytes, big-endian.
func Int64() Serde[int64] { return int64Serde{} }

type int64Serde struct{}

func (int64Serde) Serialize(_ string, v int64) ([]byte, error) {
	return binary.BigEndian.AppendUint64(nil, uint64(v)), nil
}

func (int64Serde) Deserialize(_ string, data []byte) (int64, error) {
	if len(data) != 8 {
		return 0, sizeErr("Int64 (Kafka's Long)", 8, data)
	}
	return int64(binary.BigEndian.Uint64(data)), nil
}

// Float32 is Kafka's FloatSerde: the IEEE 754 bits, big-endian, written
// raw (Java's floatToRawIntBits keeps a NaN's payload).
func Float32() Serde[float32] { return float32Serde{} }

type float32Serde struct{}

func (float32Serde) Serialize(_ string, v float32) ([]byte, error) {
	return binary.BigEndian.AppendUint32(nil, math.Float32bits(v)), nil
}

func (float32Serde) Deserialize(_ string, data []byte) (float32, error) {
	if len(data) != 4 {
		return 0, sizeErr("Float32 (Kafka's Float)", 4, data)
	}
	return math.Float32frombits(binary.BigEndian.Uint32(data)), nil
}

// canonicalNaN is the bits Java's doubleToLongBits writes for every NaN.
const canonicalNaN = 0x7ff8000000000000

// Float64 is Kafka's DoubleSerde: the IEEE 754 bits, big-endian. Java's
// DoubleSerializer uses doubleToLongBits, which writes every NaN as the
// canonical 7ff8000000000000; so does this one.
func Float64() Serde[float64] { return float64Serde{} }

type float64Serde struct{}

func (float64Serde) Serialize(_ string, v float64) ([]byte, error) {
	bits := math.Float64bits(v)
	if math.IsNaN(v) {
		bits = canonicalNaN
	}
	return binary.BigEndian.AppendUint64(nil, bits), nil
}

func (float64Serde) Deserialize(_ string, data []byte) (float64, error) {
	if len(data) != 8 {
		return 0, sizeErr("Float64 (Kafka's Double)", 8, data)
	}
	return math.Float64frombits(binary.BigEndian.Uint64(data)), nil
}

// Bool is Kafka's BooleanSerde: one byte, 1 for true and 0 for false;
// any other byte is refused, as Kafka's BooleanDeserializer refuses it.
func Bool() Serde[bool] { return boolSerde{} }

type boolSerde struct{}

func (boolSerde) Serialize(_ string, v bool) ([]byte, error) {
	if v {
		return []byte{1}, nil
	}
	return []byte{0}, nil
}

func (boolSerde) Deserialize(_ string, data []byte) (bool, error) {
	if len(data) != 1 {
		return false, sizeErr("Bool (Kafka's Boolean)", 1, data)
	}
	switch data[0] {
	case 0:
		return false, nil
	case 1:
		return true, nil
	}
	return false, invalid("Bool (Kafka's Boolean) reads byte 0 or 1, not %d", data[0])
}

// uuidTextLen is the length of a UUID's canonical text form.
const uuidTextLen = 36

// UUID is Kafka's UUIDSerde: the UUID's canonical text form in UTF-8
// (36 characters, lower-case hex, as Java's UUID.toString writes it).
// Deserialize reads the canonical form in either case; Java's
// UUID.fromString also takes groups with fewer digits ("1-2-3-4-5"),
// which no Kafka serializer writes and this one refuses.
func UUID() Serde[uuid.UUID] { return uuidSerde{} }

type uuidSerde struct{}

func (uuidSerde) Serialize(_ string, v uuid.UUID) ([]byte, error) { return []byte(v.String()), nil }

func (uuidSerde) Deserialize(_ string, data []byte) (uuid.UUID, error) {
	if len(data) != uuidTextLen {
		return uuid.UUID{}, invalid("UUID reads the 36-character text form, not %d bytes %q", len(data), clip(data))
	}
	u, err := uuid.ParseBytes(data)
	if err != nil {
		return uuid.UUID{}, invalid("UUID %q: %v", data, err)
	}
	return u, nil
}

// Void is Kafka's VoidSerde, for keys or values that are always null.
// Its Go type is struct{}: Serialize writes nil, that is a null on the
// wire (so a Stream[struct{}, V] writes null keys, as Kafka's
// Serdes.Void() does). The runtime never passes a null to Deserialize,
// and Kafka's VoidDeserializer refuses every non-null payload, the empty
// one included; so Deserialize refuses any data that is not nil.
func Void() Serde[struct{}] { return voidSerde{} }

type voidSerde struct{}

func (voidSerde) Serialize(string, struct{}) ([]byte, error) { return nil, nil }

func (voidSerde) Deserialize(_ string, data []byte) (struct{}, error) {
	if data != nil {
		return struct{}{}, invalid("Void reads only null, not %d bytes", len(data))
	}
	return struct{}{}, nil
}

// JSON serializes T with encoding/json (its rules for field names, tags
// and omitempty apply). Deserialize refuses what is not one JSON value of
// T's shape, the empty payload included.
func JSON[T any]() Serde[T] { return jsonSerde[T]{} }

type jsonSerde[T any] struct{}

func (jsonSerde[T]) Serialize(topic string, v T) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("serde: JSON of %T (topic %q): %w", v, topic, err)
	}
	return b, nil
}

func (jsonSerde[T]) Deserialize(topic string, data []byte) (T, error) {
	var v T
	if err := json.Unmarshal(data, &v); err != nil {
		return v, invalid("JSON into %T (topic %q): %v", v, topic, err)
	}
	return v, nil
}

func sizeErr(what string, want int, data []byte) error {
	return invalid("%s reads %d bytes, not %d", what, want, len(data))
}

// clip keeps an error message short when the data is large.
func clip(data []byte) []byte {
	if len(data) > 64 {
		return data[:64]
	}
	return data
}

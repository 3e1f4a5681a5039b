package serde

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Temporary: the lead's stand-ins until the serde helper's branch lands.

type funcSerde[T any] struct {
	ser func(T) []byte
	de  func([]byte) (T, error)
}

func (f funcSerde[T]) Serialize(_ string, v T) ([]byte, error)   { return f.ser(v), nil }
func (f funcSerde[T]) Deserialize(_ string, b []byte) (T, error) { return f.de(b) }

func String() Serde[string] {
	return funcSerde[string]{func(s string) []byte { return []byte(s) }, func(b []byte) (string, error) { return string(b), nil }}
}
func Bytes() Serde[[]byte] {
	return funcSerde[[]byte]{func(s []byte) []byte { return s }, func(b []byte) ([]byte, error) { return b, nil }}
}
func Int64() Serde[int64] {
	return funcSerde[int64]{func(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }, func(b []byte) (int64, error) {
		if len(b) != 8 {
			return 0, fmt.Errorf("long needs 8 bytes")
		}
		return int64(binary.BigEndian.Uint64(b)), nil
	}}
}
func Int32() Serde[int32] {
	return funcSerde[int32]{func(v int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(v)) }, func(b []byte) (int32, error) {
		if len(b) != 4 {
			return 0, fmt.Errorf("int needs 4 bytes")
		}
		return int32(binary.BigEndian.Uint32(b)), nil
	}}
}
func Int16() Serde[int16] {
	return funcSerde[int16]{func(v int16) []byte { return binary.BigEndian.AppendUint16(nil, uint16(v)) }, func(b []byte) (int16, error) {
		return int16(binary.BigEndian.Uint16(b)), nil
	}}
}
func Float64() Serde[float64] {
	return funcSerde[float64]{func(v float64) []byte { return binary.BigEndian.AppendUint64(nil, math.Float64bits(v)) }, func(b []byte) (float64, error) {
		return math.Float64frombits(binary.BigEndian.Uint64(b)), nil
	}}
}
func Float32() Serde[float32] {
	return funcSerde[float32]{func(v float32) []byte { return binary.BigEndian.AppendUint32(nil, math.Float32bits(v)) }, func(b []byte) (float32, error) {
		return math.Float32frombits(binary.BigEndian.Uint32(b)), nil
	}}
}
func Bool() Serde[bool] {
	return funcSerde[bool]{func(v bool) []byte {
		if v {
			return []byte{1}
		}
		return []byte{0}
	}, func(b []byte) (bool, error) { return b[0] == 1, nil }}
}

package serde

import (
	"encoding/hex"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/google/uuid"
	"pgregory.net/rapid"
)

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// byteCase is a value and the bytes Kafka's serializer writes for it,
// worked out from Kafka's formats (big-endian two's complement, IEEE 754
// bits, UTF-8), not from this package's output.
type byteCase struct {
	name string
	ser  func() ([]byte, error)
	de   func([]byte) (any, error)
	v    any
	hex  string
}

func caseOf[T any](name string, s Serde[T], v T, hexBytes string) byteCase {
	return byteCase{
		name: name,
		ser:  func() ([]byte, error) { return s.Serialize("t", v) },
		de:   func(b []byte) (any, error) { return s.Deserialize("t", b) },
		v:    v, hex: hexBytes,
	}
}

func TestKafkaBytes(t *testing.T) {
	u := uuid.MustParse("123e4567-e89b-12d3-a456-426614174000")
	cases := []byteCase{
		caseOf("String", String(), "héllo", "68 c3a9 6c 6c 6f"),
		caseOf("String empty", String(), "", ""),
		caseOf("Bytes", Bytes(), []byte{0, 0xff, 7}, "00 ff 07"),
		caseOf("Short 1", Int16(), int16(1), "00 01"),
		caseOf("Short -2", Int16(), int16(-2), "ff fe"),
		caseOf("Integer 1", Int32(), int32(1), "00 00 00 01"),
		caseOf("Integer 0x01020304", Int32(), int32(0x01020304), "01 02 03 04"),
		caseOf("Integer min", Int32(), int32(math.MinInt32), "80 00 00 00"),
		caseOf("Long 1", Int64(), int64(1), "00 00 00 00 00 00 00 01"),
		caseOf("Long -1", Int64(), int64(-1), "ff ff ff ff ff ff ff ff"),
		caseOf("Long 258", Int64(), int64(258), "00 00 00 00 00 00 01 02"),
		caseOf("Float 1.5", Float32(), float32(1.5), "3f c0 00 00"),
		caseOf("Float -2", Float32(), float32(-2), "c0 00 00 00"),
		caseOf("Double 1.5", Float64(), 1.5, "3f f8 00 00 00 00 00 00"),
		caseOf("Double -0.0", Float64(), math.Copysign(0, -1), "80 00 00 00 00 00 00 00"),
		caseOf("Boolean true", Bool(), true, "01"),
		caseOf("Boolean false", Bool(), false, "00"),
		caseOf("UUID", UUID(), u, hex.EncodeToString([]byte("123e4567-e89b-12d3-a456-426614174000"))),
		caseOf("JSON", JSON[map[string]int](), map[string]int{"b": 2, "a": 1}, hex.EncodeToString([]byte(`{"a":1,"b":2}`))),
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := mustHex(t, c.hex)
			got, err := c.ser()
			if err != nil || hex.EncodeToString(got) != hex.EncodeToString(want) {
				t.Fatalf("serialized % x, %v; Kafka writes % x", got, err, want)
			}
			back, err := c.de(want)
			if err != nil {
				t.Fatal(err)
			}
			if !equalValues(back, c.v) {
				t.Errorf("deserialized %v, want %v", back, c.v)
			}
		})
	}
}

func equalValues(a, b any) bool {
	switch x := a.(type) {
	case []byte:
		return string(x) == string(b.([]byte))
	case float64:
		return math.Float64bits(x) == math.Float64bits(b.(float64))
	case map[string]int:
		y := b.(map[string]int)
		if len(x) != len(y) {
			return false
		}
		for k, v := range x {
			if y[k] != v {
				return false
			}
		}
		return true
	}
	return a == b
}

func TestWrongLengths(t *testing.T) {
	cases := []struct {
		name string
		de   func([]byte) error
		bad  []int
	}{
		{"Int16", deOf(Int16()), []int{0, 1, 3, 8}},
		{"Int32", deOf(Int32()), []int{0, 2, 3, 5, 8}},
		{"Int64", deOf(Int64()), []int{0, 4, 7, 9}},
		{"Float32", deOf(Float32()), []int{0, 3, 8}},
		{"Float64", deOf(Float64()), []int{0, 4, 9}},
		{"Bool", deOf(Bool()), []int{0, 2}},
		{"UUID", deOf(UUID()), []int{0, 16, 32, 35, 37}},
	}
	for _, c := range cases {
		for _, n := range c.bad {
			err := c.de(make([]byte, n))
			if !errors.Is(err, ErrInvalidData) {
				t.Errorf("%s of %d bytes: %v, want ErrInvalidData", c.name, n, err)
			}
		}
	}
}

func deOf[T any](s Serde[T]) func([]byte) error {
	return func(b []byte) error { _, err := s.Deserialize("t", b); return err }
}

func TestBoolRefusesOtherBytes(t *testing.T) {
	for _, b := range []byte{2, 0x7f, 0xff} {
		_, err := Bool().Deserialize("t", []byte{b})
		if !errors.Is(err, ErrInvalidData) || !strings.Contains(err.Error(), "0 or 1") {
			t.Errorf("byte %d: %v", b, err)
		}
	}
}

func TestFloatNaN(t *testing.T) {
	// Java's doubleToLongBits writes every NaN as 7ff8000000000000.
	got, _ := Float64().Serialize("t", math.Float64frombits(0x7ff0000000000001))
	if hex.EncodeToString(got) != "7ff8000000000000" {
		t.Errorf("Double NaN written as % x", got)
	}
	// floatToRawIntBits keeps the payload.
	got, _ = Float32().Serialize("t", math.Float32frombits(0x7f800001))
	if hex.EncodeToString(got) != "7f800001" {
		t.Errorf("Float NaN written as % x", got)
	}
}

func TestUUIDText(t *testing.T) {
	upper := []byte("123E4567-E89B-12D3-A456-426614174000")
	u, err := UUID().Deserialize("t", upper)
	if err != nil || u.String() != "123e4567-e89b-12d3-a456-426614174000" {
		t.Errorf("upper case: %v %v", u, err)
	}
	for _, bad := range []string{
		"123e4567-e89b-12d3-a456-42661417400g",
		"123e4567e89b12d3a456426614174000",
		"{123e4567-e89b-12d3-a456-426614174000}",
		"urn:uuid:123e4567-e89b-12d3-a456-426614174000",
	} {
		if _, err := UUID().Deserialize("t", []byte(bad)); !errors.Is(err, ErrInvalidData) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func TestVoid(t *testing.T) {
	b, err := Void().Serialize("t", struct{}{})
	if b != nil || err != nil {
		t.Errorf("Void serializes to % x (nil: %v), %v; want null", b, b == nil, err)
	}
	if _, err := Void().Deserialize("t", nil); err != nil {
		t.Errorf("Void of null: %v", err)
	}
	for _, data := range [][]byte{{}, {0}} {
		if _, err := Void().Deserialize("t", data); !errors.Is(err, ErrInvalidData) {
			t.Errorf("Void of % x: %v", data, err)
		}
	}
}

func TestJSONErrors(t *testing.T) {
	type rec struct{ N int }
	for _, bad := range []string{"", "{", `{"N":"x"}`, "[1]"} {
		if _, err := JSON[rec]().Deserialize("t", []byte(bad)); !errors.Is(err, ErrInvalidData) {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if _, err := JSON[func()]().Serialize("t", func() {}); err == nil {
		t.Error("a func serialized to JSON")
	}
}

func TestFunc(t *testing.T) {
	s := Func(func(_ string, v int) ([]byte, error) { return []byte{byte(v)}, nil },
		func(_ string, b []byte) (int, error) { return int(b[0]), nil })
	b, err := s.Serialize("t", 7)
	if err != nil || len(b) != 1 || b[0] != 7 {
		t.Fatalf("% x %v", b, err)
	}
	if v, err := s.Deserialize("t", b); err != nil || v != 7 {
		t.Errorf("%v %v", v, err)
	}
	half := Func[int](nil, nil)
	if _, err := half.Serialize("t", 1); err == nil {
		t.Error("nil serializer gave no error")
	}
	if _, err := half.Deserialize("t", []byte{1}); err == nil {
		t.Error("nil deserializer gave no error")
	}
}

func TestBytesCopies(t *testing.T) {
	data := []byte{1, 2, 3}
	got, _ := Bytes().Deserialize("t", data)
	data[0] = 9
	if got[0] != 1 {
		t.Error("Bytes().Deserialize aliases the caller's buffer")
	}
	if got, _ := Bytes().Deserialize("t", []byte{}); got == nil {
		t.Error("an empty value read as nil (a null)")
	}
}

func roundTrip[T comparable](t *rapid.T, s Serde[T], v T) {
	b, err := s.Serialize("t", v)
	if err != nil {
		t.Fatal(err)
	}
	back, err := s.Deserialize("t", b)
	if err != nil {
		t.Fatal(err)
	}
	if back != v {
		t.Fatalf("%v came back as %v (% x)", v, back, b)
	}
}

func TestRoundTrips(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		roundTrip(t, String(), rapid.String().Draw(t, "string"))
		roundTrip(t, Int16(), rapid.Int16().Draw(t, "int16"))
		roundTrip(t, Int32(), rapid.Int32().Draw(t, "int32"))
		roundTrip(t, Int64(), rapid.Int64().Draw(t, "int64"))
		roundTrip(t, Bool(), rapid.Bool().Draw(t, "bool"))
		if f := rapid.Float64().Draw(t, "float64"); !math.IsNaN(f) {
			roundTrip(t, Float64(), f)
		}
		if f := rapid.Float32().Draw(t, "float32"); !math.IsNaN(float64(f)) {
			roundTrip(t, Float32(), f)
		}
		var u uuid.UUID
		copy(u[:], rapid.SliceOfN(rapid.Byte(), 16, 16).Draw(t, "uuid"))
		roundTrip(t, UUID(), u)
		type rec struct {
			S string
			N int64
		}
		roundTrip(t, JSON[rec](), rec{S: rapid.String().Draw(t, "js"), N: rapid.Int64().Draw(t, "jn")})
		b := rapid.SliceOf(rapid.Byte()).Draw(t, "bytes")
		ser, _ := Bytes().Serialize("t", b)
		back, _ := Bytes().Deserialize("t", ser)
		if string(back) != string(b) {
			t.Fatalf("bytes % x came back as % x", b, back)
		}
	})
}

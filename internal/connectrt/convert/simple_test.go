package convert

import (
	"bytes"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/samsa-io/samsa/connect"
)

func TestStringConverter(t *testing.T) {
	c := &StringConverter{}
	if err := c.Configure(nil, false); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		v    any
		want string
	}{{"héllo", "héllo"}, {int32(42), "42"}, {1.0, "1.0"}, {true, "true"}, {[]any{"a", int8(1)}, `["a",1]`}} {
		b, err := c.FromConnectData("t", nil, nil, tc.v)
		if err != nil || string(b) != tc.want {
			t.Errorf("%v: %q %v, want %q", tc.v, b, err, tc.want)
		}
	}
	s, v, err := c.ToConnectData("t", nil, []byte("héllo"))
	if err != nil || !s.Equal(connect.OptionalString) || v != "héllo" {
		t.Fatalf("read: %v %v %v", s, v, err)
	}
	if b, _ := c.FromConnectData("t", nil, connect.OptionalString, nil); b != nil {
		t.Fatal("null should stay null")
	}
	if _, v, _ := c.ToConnectData("t", nil, nil); v != nil {
		t.Fatal("null should read as null")
	}

	latin := &StringConverter{}
	if err := latin.Configure(map[string]string{"converter.encoding": "ISO-8859-1"}, false); err != nil {
		t.Fatal(err)
	}
	if b, _ := latin.FromConnectData("t", nil, nil, "é€"); !bytes.Equal(b, []byte{0xe9, '?'}) {
		t.Fatalf("latin1 encode: %x", b)
	}
	if _, v, _ := latin.ToConnectData("t", nil, []byte{0xe9}); v != "é" {
		t.Fatalf("latin1 decode: %q", v)
	}
	err = (&StringConverter{}).Configure(map[string]string{"converter.encoding": "EBCDIC"}, false)
	if err == nil || !strings.Contains(err.Error(), "unsupported character set") {
		t.Fatalf("EBCDIC: %v", err)
	}
}

func TestByteArrayConverter(t *testing.T) {
	var c ByteArrayConverter
	b, err := c.FromConnectData("t", nil, connect.BytesSchema, []byte{1, 2})
	if err != nil || !bytes.Equal(b, []byte{1, 2}) {
		t.Fatal(b, err)
	}
	if _, err := c.FromConnectData("t", nil, connect.StringSchema, "x"); err == nil || !strings.Contains(err.Error(), "Invalid schema type for ByteArrayConverter: STRING") {
		t.Fatal(err)
	}
	if _, err := c.FromConnectData("t", nil, nil, "x"); err == nil || !strings.Contains(err.Error(), "not compatible with objects of type string") {
		t.Fatal(err)
	}
	s, v, _ := c.ToConnectData("t", nil, []byte{3})
	if !s.Equal(connect.OptionalBytes) || !bytes.Equal(v.([]byte), []byte{3}) {
		t.Fatal(s, v)
	}
}

func TestNumberConverters(t *testing.T) {
	cases := []struct {
		class string
		v     any
		wire  []byte
	}{
		{IntegerConverterClass, int32(-2), []byte{0xff, 0xff, 0xff, 0xfe}},
		{LongConverterClass, int64(258), []byte{0, 0, 0, 0, 0, 0, 1, 2}},
		{ShortConverterClass, int16(1), []byte{0, 1}},
		{FloatConverterClass, float32(1), []byte{0x3f, 0x80, 0, 0}},
		{DoubleConverterClass, 2.0, []byte{0x40, 0, 0, 0, 0, 0, 0, 0}},
		{BooleanConverterClass, true, []byte{1}},
	}
	for _, tc := range cases {
		nc := numberConverters[tc.class]
		c := &nc
		if err := c.Configure(nil, true); err != nil {
			t.Fatal(err)
		}
		b, err := c.FromConnectData("t", nil, nil, tc.v)
		if err != nil || !bytes.Equal(b, tc.wire) {
			t.Errorf("%s: %x %v, want %x", tc.class, b, err, tc.wire)
		}
		s, v, err := c.ToConnectData("t", nil, tc.wire)
		if err != nil || v != tc.v || !s.Optional {
			t.Errorf("%s: read %v %v %v", tc.class, s, v, err)
		}
		if _, _, err := c.ToConnectData("t", nil, append(tc.wire, 0)); err == nil {
			t.Errorf("%s: a wrong size was read", tc.class)
		}
		if _, err := c.FromConnectData("t", nil, nil, "x"); err == nil || !strings.Contains(err.Error(), "Failed to serialize to") {
			t.Errorf("%s: %v", tc.class, err)
		}
	}
}

func TestSimpleHeaderConverterWrites(t *testing.T) {
	var c SimpleHeaderConverter
	st := connect.NewStruct("s").Field("a", connect.StringSchema).Field("b", connect.OptionalInt32).MustBuild()
	cases := []struct {
		v    any
		want string
	}{
		{"plain \"text\"", `plain "text"`},
		{int64(-5), "-5"},
		{float32(0.5), "0.5"},
		{false, "false"},
		{[]byte("hi"), "aGk="},
		{time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC), "2024-01-02"},
		{time.Date(2024, 1, 2, 3, 4, 5, 6e6, time.UTC), "2024-01-02T03:04:05.006Z"},
		{time.UnixMilli(3723004).UTC(), "01:02:03.004Z"},
		{connect.Decimal{Unscaled: big.NewInt(1234), Scale: 2}, "12.34"},
		{[]any{"a\"b", int32(1), nil}, `["a\"b",1,null]`},
		{map[string]any{"b": int8(2), "a": int8(1)}, `{"a":1,"b":2}`},
		{connect.NewStructValue(st).MustPut("a", "x"), `{"a":"x","b":null}`},
	}
	for _, tc := range cases {
		b, err := c.FromConnectHeader("t", "k", nil, tc.v)
		if err != nil || string(b) != tc.want {
			t.Errorf("%v: %q %v, want %q", tc.v, b, err, tc.want)
		}
	}
}

func TestSimpleHeaderConverterInfers(t *testing.T) {
	var c SimpleHeaderConverter
	cases := []struct {
		in     string
		schema *connect.Schema
		value  any
	}{
		{"", connect.StringSchema, ""},
		{"null", nil, nil},
		{"true", connect.BooleanSchema, true},
		{"12", connect.Int8Schema, int8(12)},
		{"-300", connect.Int16Schema, int16(-300)},
		{"70000", connect.Int32Schema, int32(70000)},
		{"5000000000", connect.Int64Schema, int64(5000000000)},
		{"1.0", connect.Int8Schema, int8(1)},
		{"2.5", connect.Float32Schema, float32(2.5)},
		{"1e39", connect.Float64Schema, 1e39}, // too big for FLOAT32, scale -39: FLOAT64 as Kafka
		{"1.5e39", connect.Float64Schema, 1.5e39},
		{"99999999999999999999", connect.DecimalSchema(0), nil},
		{"2024-01-02", connect.DateSchema(), time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC)},
		{"2024-01-02T03:04:05.006Z", connect.TimestampSchema(), time.Date(2024, 1, 2, 3, 4, 5, 6e6, time.UTC)},
		{"01:02:03.004Z", connect.TimeSchema(), time.UnixMilli(3723004).UTC()},
		{"12 monkeys", connect.StringSchema, "12 monkeys"},
		{"-", connect.StringSchema, "-"},
		{"hello", connect.StringSchema, "hello"},
		{"[1,2]", connect.StringSchema, "[1,2]"},
	}
	for _, tc := range cases {
		s, v, err := c.ToConnectHeader("t", "k", []byte(tc.in))
		if err != nil || !s.Equal(tc.schema) {
			t.Errorf("%q: schema %v (%v), want %v", tc.in, s, err, tc.schema)
			continue
		}
		if tc.value != nil && !connect.ValuesEqual(v, tc.value) {
			t.Errorf("%q: value %#v, want %#v", tc.in, v, tc.value)
		}
	}
	if s, v, _ := c.ToConnectHeader("t", "k", nil); s != nil || v != nil {
		t.Fatal("nil header")
	}
	_, v, _ := c.ToConnectHeader("t", "k", []byte("99999999999999999999"))
	if d, ok := v.(connect.Decimal); !ok || d.String() != "99999999999999999999" {
		t.Fatalf("beyond INT64 = %#v", v)
	}
}

package convert

import (
	"errors"
	"math"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/samsa-io/samsa/connect"
)

func newJSON(t testing.TB, props map[string]string) *JSONConverter {
	t.Helper()
	c := &JSONConverter{}
	if err := c.Configure(props, false); err != nil {
		t.Fatal(err)
	}
	return c
}

func v32(v int32) *int32 { return &v }

// orderSchema is a struct with every kind of field, for the golden tests.
func orderSchema() *connect.Schema {
	return connect.NewStruct("com.acme.Order").Version(3).Doc("an order").
		Field("id", connect.Int64Schema).
		Field("qty", &connect.Schema{Type: connect.Int16, Default: int16(1)}).
		Field("note", connect.OptionalString).
		Field("tags", connect.ArrayOf(connect.StringSchema)).
		Field("attrs", connect.MapOf(connect.StringSchema, connect.Int32Schema)).
		Field("price", connect.DecimalSchema(2)).
		Field("at", connect.TimestampSchema()).
		MustBuild()
}

func orderValue(s *connect.Schema) *connect.Struct {
	return connect.NewStructValue(s).
		MustPut("id", int64(42)).
		MustPut("tags", []any{"a", "b"}).
		MustPut("attrs", map[any]any{"y": int32(2), "x": int32(1)}).
		MustPut("price", connect.Decimal{Unscaled: big.NewInt(-1234), Scale: 2}).
		MustPut("at", time.UnixMilli(1700000000123).UTC())
}

// TestJSONGolden pins the bytes JsonConverter writes: the envelope's
// schema members in Kafka's order (type, nested, optional, name, version,
// doc, parameters, default; a struct field's "field" last), Java's number
// forms, base64 bytes and decimals.
func TestJSONGolden(t *testing.T) {
	order := orderSchema()
	cases := []struct {
		name   string
		props  map[string]string
		schema *connect.Schema
		value  any
		want   string
	}{
		{"int32", nil, connect.Int32Schema, int32(-7), `{"schema":{"type":"int32","optional":false},"payload":-7}`},
		{"optional null", nil, connect.OptionalString, nil, `{"schema":{"type":"string","optional":true},"payload":null}`},
		{"default replaces null", nil, &connect.Schema{Type: connect.Boolean, Default: true}, nil,
			`{"schema":{"type":"boolean","optional":false,"default":true},"payload":true}`},
		{"default kept null (KIP-1086)", map[string]string{"replace.null.with.default": "false"}, &connect.Schema{Type: connect.Int8, Optional: true, Default: int8(5)}, nil,
			`{"schema":{"type":"int8","optional":true,"default":5},"payload":null}`},
		{"float", nil, connect.Float32Schema, float32(12.34), `{"schema":{"type":"float","optional":false},"payload":12.34}`},
		{"double whole", nil, connect.Float64Schema, 1.0, `{"schema":{"type":"double","optional":false},"payload":1.0}`},
		{"double large", nil, connect.Float64Schema, 1.5e10, `{"schema":{"type":"double","optional":false},"payload":1.5E10}`},
		{"double small", nil, connect.Float64Schema, 0.0001, `{"schema":{"type":"double","optional":false},"payload":1.0E-4}`},
		{"double NaN", nil, connect.Float64Schema, math.NaN(), `{"schema":{"type":"double","optional":false},"payload":"NaN"}`},
		{"bytes", nil, connect.BytesSchema, []byte("hi!?"), `{"schema":{"type":"bytes","optional":false},"payload":"aGkhPw=="}`},
		{"string escapes", nil, connect.StringSchema, "a\"b\\c\n\x01é/<", `{"schema":{"type":"string","optional":false},"payload":"a\"b\\c\n\u0001é/<"}`},
		{"map int keys", nil, connect.MapOf(connect.Int32Schema, connect.StringSchema), map[any]any{int32(2): "b", int32(1): "a"},
			`{"schema":{"type":"map","keys":{"type":"int32","optional":false},"values":{"type":"string","optional":false},"optional":false},"payload":[[1,"a"],[2,"b"]]}`},
		{"date", nil, connect.DateSchema(), time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC),
			`{"schema":{"type":"int32","optional":false,"name":"org.apache.kafka.connect.data.Date","version":1},"payload":19782}`},
		{"time", nil, connect.TimeSchema(), time.UnixMilli(3723004).UTC(),
			`{"schema":{"type":"int32","optional":false,"name":"org.apache.kafka.connect.data.Time","version":1},"payload":3723004}`},
		{"decimal numeric", map[string]string{"decimal.format": "numeric"}, connect.DecimalSchema(3), connect.Decimal{Unscaled: big.NewInt(5), Scale: 3},
			`{"schema":{"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"3"}},"payload":0.005}`},
		{"schemaless", map[string]string{"schemas.enable": "false"}, nil, map[string]any{"b": []any{int64(1), 2.5, nil}, "a": true}, `{"a":true,"b":[1,2.5,null]}`},
		{"schemaless null in envelope", nil, nil, "x", `{"schema":null,"payload":"x"}`},
		{"struct", nil, order, orderValue(order),
			`{"schema":{"type":"struct","fields":[` +
				`{"type":"int64","optional":false,"field":"id"},` +
				`{"type":"int16","optional":false,"default":1,"field":"qty"},` +
				`{"type":"string","optional":true,"field":"note"},` +
				`{"type":"array","items":{"type":"string","optional":false},"optional":false,"field":"tags"},` +
				`{"type":"map","keys":{"type":"string","optional":false},"values":{"type":"int32","optional":false},"optional":false,"field":"attrs"},` +
				`{"type":"bytes","optional":false,"name":"org.apache.kafka.connect.data.Decimal","version":1,"parameters":{"scale":"2"},"field":"price"},` +
				`{"type":"int64","optional":false,"name":"org.apache.kafka.connect.data.Timestamp","version":1,"field":"at"}],` +
				`"optional":false,"name":"com.acme.Order","version":3,"doc":"an order"},` +
				`"payload":{"id":42,"qty":1,"note":null,"tags":["a","b"],"attrs":{"x":1,"y":2},"price":"+y4=","at":1700000000123}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newJSON(t, tc.props)
			got, err := c.FromConnectData("t", nil, tc.schema, tc.value)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Fatalf("FromConnectData:\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

// TestJSONRoundTrip reads back what FromConnectData wrote and gets the
// same schema and value.
func TestJSONRoundTrip(t *testing.T) {
	order := orderSchema()
	nested := connect.NewStruct("outer").Field("inner", connect.NewStruct("inner").Field("x", connect.Int8Schema).Optional().MustBuild()).
		Field("m", connect.MapOf(connect.Int64Schema, connect.ArrayOf(connect.OptionalFloat32))).MustBuild()
	nv := connect.NewStructValue(nested).
		MustPut("inner", connect.NewStructValue(nested.Fields[0].Schema).MustPut("x", int8(-3))).
		MustPut("m", map[any]any{int64(7): []any{float32(1.5), nil}})
	cases := []struct {
		schema *connect.Schema
		value  any
	}{
		// qty is set: a null read back takes the default (replace.null.with.default).
		{order, orderValue(order).MustPut("qty", int16(9))},
		{nested, nv},
		{connect.DecimalSchema(2), connect.Decimal{Unscaled: big.NewInt(-129), Scale: 2}},
		{connect.BytesSchema, []byte{0, 255, 1}},
		{connect.Float64Schema, math.Inf(-1)},
		{connect.Int64Schema, int64(math.MinInt64)},
		{connect.OptionalInt32, nil},
	}
	for _, props := range []map[string]string{nil, {"decimal.format": "NUMERIC"}} {
		c := newJSON(t, props)
		for _, tc := range cases {
			b, err := c.FromConnectData("t", nil, tc.schema, tc.value)
			if err != nil {
				t.Fatal(err)
			}
			s, v, err := c.ToConnectData("t", nil, b)
			if err != nil {
				t.Fatalf("%s: %v", b, err)
			}
			if !s.Equal(tc.schema) {
				t.Fatalf("%s: schema %v, want %v", b, s, tc.schema)
			}
			if !connect.ValuesEqual(v, tc.value) {
				t.Fatalf("%s: value %v, want %v", b, v, tc.value)
			}
		}
	}
}

func TestJSONSchemaless(t *testing.T) {
	c := newJSON(t, map[string]string{"schemas.enable": "false"})
	s, v, err := c.ToConnectData("t", nil, []byte(` {"n": 12, "f": 12.5, "e": 1e2, "s": "x", "l": [true, null], "o": {"k": -1}} `))
	if err != nil || s != nil {
		t.Fatal(s, err)
	}
	want := map[string]any{"n": int64(12), "f": 12.5, "e": 100.0, "s": "x", "l": []any{true, nil}, "o": map[string]any{"k": int64(-1)}}
	if !connect.ValuesEqual(v, want) {
		t.Fatalf("got %#v", v)
	}
	for _, tomb := range [][]byte{nil, {}, []byte("  ")} {
		if s, v, err := c.ToConnectData("t", nil, tomb); s != nil || v != nil || err != nil {
			t.Fatalf("%q: %v %v %v", tomb, s, v, err)
		}
	}
	if b, err := c.FromConnectData("t", nil, nil, nil); b != nil || err != nil {
		t.Fatalf("tombstone: %q %v", b, err)
	}
}

// TestJSONReadsKafkaText reads envelopes as Kafka writes them (with
// spaces, members in any order) and the numbers Kafka accepts.
func TestJSONReadsKafkaText(t *testing.T) {
	c := newJSON(t, nil)
	cases := []struct {
		in     string
		schema *connect.Schema
		value  any
	}{
		{`{ "payload": 12, "schema": { "type": "int64" } }`, connect.Int64Schema, int64(12)},
		{`{"schema":{"type":"boolean","default":true},"payload":null}`, &connect.Schema{Type: connect.Boolean, Default: true}, true},
		{`{"schema":{"type":"boolean","optional":false,"name":"bool","version":2,"doc":"d","parameters":{"foo":"bar"}},"payload":true}`,
			&connect.Schema{Type: connect.Boolean, Name: "bool", Version: v32(2), Doc: "d", Parameters: map[string]string{"foo": "bar"}}, true},
		{`{"schema":{"type":"int32"},"payload":1.0E2}`, connect.Int32Schema, int32(100)},
		{`{"schema":{"type":"int32"},"payload":000012345}`, connect.Int32Schema, int32(12345)}, // Kafka allows leading zeros
		{`{"schema":{"type":"array","items":{"type":"double"}},"payload":[-007.5,0,00,0.25]}`, nil, nil},
		{`{"schema":{"type":"bytes","name":"org.apache.kafka.connect.data.Decimal","parameters":{"scale":"2"}},"payload":1.5}`,
			&connect.Schema{Type: connect.Bytes, Name: connect.DecimalName, Parameters: map[string]string{"scale": "2"}}, connect.Decimal{Unscaled: big.NewInt(15), Scale: 1}},
		{`{"schema":{"type":"struct","fields":[{"field":"a","type":"string","optional":true},{"field":"b","type":"string"}]},"payload":{"b":"x","extra":1}}`, nil, nil},
	}
	for _, tc := range cases {
		s, v, err := c.ToConnectData("t", nil, []byte(tc.in))
		if err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		if arr, ok := v.([]any); ok {
			if len(arr) != 4 || arr[0] != -7.5 || arr[1] != 0.0 || arr[2] != 0.0 || arr[3] != 0.25 {
				t.Fatalf("%s: %v", tc.in, arr)
			}
			continue
		}
		if tc.schema == nil {
			st := v.(*connect.Struct)
			if a, _ := st.Get("a"); a != nil {
				t.Fatalf("a = %v", a)
			}
			if b, _ := st.Get("b"); b != "x" {
				t.Fatalf("b = %v", b)
			}
			continue
		}
		if !s.Equal(tc.schema) || !connect.ValuesEqual(v, tc.value) {
			t.Fatalf("%s: got %v %#v", tc.in, s, v)
		}
	}
}

func TestJSONReplaceNullWithDefaultOnRead(t *testing.T) {
	in := []byte(`{"schema":{"type":"int32","optional":true,"default":7},"payload":null}`)
	_, v, err := newJSON(t, nil).ToConnectData("t", nil, in)
	if err != nil || v != int32(7) {
		t.Fatalf("default on: %v %v", v, err)
	}
	_, v, err = newJSON(t, map[string]string{"replace.null.with.default": "false"}).ToConnectData("t", nil, in)
	if err != nil || v != nil {
		t.Fatalf("default off: %v %v", v, err)
	}
}

// TestJSONBadInput checks each kind of bad record gets Kafka's message
// (or a clear one where Kafka would read garbage), wrapped as a data error.
func TestJSONBadInput(t *testing.T) {
	c := newJSON(t, nil)
	cases := []struct{ in, want string }{
		{`{"a":1}`, `JsonConverter with schemas.enable requires "schema" and "payload" fields and may not contain additional fields. If you are trying to deserialize plain JSON data, set schemas.enable=false in your converter configuration.`},
		{`[1]`, `requires "schema" and "payload"`},
		{`{"schema":null,"payload":1,"x":2}`, `may not contain additional fields`},
		{`{"schema":`, `Converting byte[] to Kafka Connect data failed due to serialization error`},
		{`{"schema":{},"payload":1}`, `Schema must contain 'type' field`},
		{`{"schema":{"type":"int128"},"payload":1}`, `Unknown schema type: int128`},
		{`{"schema":{"type":"array"},"payload":[]}`, `Array schema did not specify the element type`},
		{`{"schema":{"type":"map","values":{"type":"int8"}},"payload":{}}`, `Map schema did not specify the key type`},
		{`{"schema":{"type":"struct","fields":{}},"payload":{}}`, `Struct schema's "fields" argument is not an array.`},
		{`{"schema":{"type":"struct","fields":[{"type":"int8"}]},"payload":{}}`, `Struct schema's field name not specified properly`},
		{`{"schema":{"type":"int8","parameters":{"a":1}},"payload":1}`, `Schema parameters must have string values.`},
		{`{"schema":{"type":"int8"},"payload":null}`, `Invalid null value for required INT8 field`},
		{`{"schema":{"type":"int8"},"payload":300}`, `Invalid value 300 for INT8`},
		{`{"schema":{"type":"int32"},"payload":"12"}`, `Invalid JSON for INT32: found STRING`},
		{`{"schema":{"type":"int32"},"payload":1.5}`, `Invalid value 1.5 for INT32`},
		{`{"schema":{"type":"map","keys":{"type":"string"},"values":{"type":"int8"}},"payload":[]}`, `Maps with string fields should be encoded as JSON objects, but found ARRAY`},
		{`{"schema":{"type":"map","keys":{"type":"int8"},"values":{"type":"int8"}},"payload":[[1]]}`, `Found invalid map entry, expected length 2 but found :1`},
		{`{"schema":{"type":"struct","fields":[]},"payload":[]}`, `Structs should be encoded as JSON objects, but found ARRAY`},
		{`{"schema":{"type":"int32","name":"org.apache.kafka.connect.data.Date"},"payload":"x"}`, `Invalid type for Date, underlying representation should be integer but was STRING`},
		{`{"schema":{"type":"bytes"},"payload":"!!"}`, `Invalid bytes field`},
		{`{"schema":null,"payload":1} x`, `serialization error`},
	}
	for _, tc := range cases {
		_, _, err := c.ToConnectData("t", nil, []byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.in, err, tc.want)
			continue
		}
		if !errors.Is(err, connect.ErrData) {
			t.Errorf("%s: %v is not a data error", tc.in, err)
		}
	}
}

func TestJSONFromConnectErrors(t *testing.T) {
	c := newJSON(t, nil)
	other := connect.NewStruct("other").Field("a", connect.Int8Schema).MustBuild()
	cases := []struct {
		schema *connect.Schema
		value  any
		want   string
	}{
		{connect.Int32Schema, nil, "Conversion error: null value for field that is required and has no default value"},
		{connect.Int32Schema, int64(1), "Invalid type for INT32: int64"},
		{orderSchema(), connect.NewStructValue(other).MustPut("a", int8(1)), "Mismatching schema."},
		{nil, struct{}{}, "does not have corresponding schema type"},
		{connect.DecimalSchema(2), connect.Decimal{Unscaled: big.NewInt(1), Scale: 3}, "BigDecimal has mismatching scale value for given Decimal schema"},
		{connect.DateSchema(), time.UnixMilli(1), "Kafka Connect Date type should not have any time fields set to non-zero values."},
	}
	for _, tc := range cases {
		_, err := c.FromConnectData("t", nil, tc.schema, tc.value)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v %v: error %v, want %q", tc.schema, tc.value, err, tc.want)
		}
	}
}

func TestJSONConfig(t *testing.T) {
	for _, tc := range []struct {
		props map[string]string
		want  string
	}{
		{map[string]string{"schemas.enable": "yes"}, "Invalid value yes for configuration schemas.enable: Expected value to be either true or false"},
		{map[string]string{"decimal.format": "HEX"}, "Invalid value HEX for configuration decimal.format"},
		{map[string]string{"schemas.cache.size": "-1"}, "Invalid value -1 for configuration schemas.cache.size"},
		{map[string]string{"schema.enable": "false"}, "does not know the configuration(s) schema.enable"},
	} {
		err := (&JSONConverter{}).Configure(tc.props, false)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrConfig) {
			t.Errorf("%v: %v, want %q", tc.props, err, tc.want)
		}
	}
	if err := (&JSONConverter{}).Configure(map[string]string{"converter.type": "key"}, true); err != nil {
		t.Fatal(err)
	}
}

// TestJSONSchemaCache checks schemas.cache.size bounds both caches.
func TestJSONSchemaCache(t *testing.T) {
	c := newJSON(t, map[string]string{"schemas.cache.size": "2"})
	for i := range 5 {
		s := connect.NewStruct("s").Version(int32(i)).Field("a", connect.Int8Schema).MustBuild()
		b, err := c.FromConnectData("t", nil, s, connect.NewStructValue(s).MustPut("a", int8(i)))
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := c.ToConnectData("t", nil, b); err != nil {
			t.Fatal(err)
		}
	}
	if n, m := c.fromConnectJSON.len(), c.toConnectSchema.len(); n != 2 || m != 2 {
		t.Fatalf("cache sizes %d %d, want 2 2", n, m)
	}
	c0 := newJSON(t, map[string]string{"schemas.cache.size": "0"})
	if _, err := c0.FromConnectData("t", nil, connect.Int8Schema, int8(1)); err != nil || c0.fromConnectJSON.len() != 0 {
		t.Fatalf("size 0 cached: %v", err)
	}
}

func TestJavaNumberForms(t *testing.T) {
	doubles := map[float64]string{
		0: "0.0", 1: "1.0", -2.5: "-2.5", 100: "100.0", 1234567: "1234567.0", 1e7: "1.0E7", 12345678.9: "1.23456789E7",
		0.001: "0.001", 0.0009: "9.0E-4", 1e-300: "1.0E-300", math.MaxFloat64: "1.7976931348623157E308", 0.1: "0.1",
	}
	for f, want := range doubles {
		if got := javaFloatingString(f, 64); got != want {
			t.Errorf("Double.toString(%v) = %s, want %s", f, got, want)
		}
	}
	if got := javaFloatingString(float64(float32(0.1)), 32); got != "0.1" {
		t.Errorf("Float.toString(0.1f) = %s", got)
	}
	decimals := []struct {
		u     int64
		scale int
		want  string
	}{{123, 0, "123"}, {123, 2, "1.23"}, {-5, 3, "-0.005"}, {1, 7, "1E-7"}, {12, 8, "1.2E-7"}, {123, -2, "1.23E+4"}, {1, 6, "0.000001"}}
	for _, d := range decimals {
		if got := bigDecimalString(big.NewInt(d.u), d.scale); got != d.want {
			t.Errorf("BigDecimal(%d, %d) = %s, want %s", d.u, d.scale, got, d.want)
		}
	}
}

func TestTwosComplement(t *testing.T) {
	for _, n := range []int64{0, 1, 127, 128, 255, 256, -1, -128, -129, -256, -257, math.MinInt64, math.MaxInt64} {
		b := twosComplement(big.NewInt(n))
		if got := fromTwosComplement(b); got.Int64() != n {
			t.Errorf("%d -> %x -> %d", n, b, got)
		}
	}
	if b := twosComplement(big.NewInt(-1234)); string(b) != "\xfb\x2e" {
		t.Errorf("-1234 = %x, want fb2e", b)
	}
}

func TestStripLeadingZeros(t *testing.T) {
	for in, want := range map[string]string{
		`[0012,-007.5,0,00,-0,100,1e05]`: `[12,-7.5,0,0,-0,100,1e05]`,
		`{"a":"0012","b":007}`:           `{"a":"0012","b":7}`,
		`{"a\"0":"x","b":[00.5]}`:        `{"a\"0":"x","b":[0.5]}`,
	} {
		got, _ := stripLeadingZeros([]byte(in))
		if string(got) != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
}

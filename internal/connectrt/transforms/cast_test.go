package transforms

import (
	"math"
	"math/big"
	"testing"
	"time"

	"github.com/samsa-io/samsa/connect"
)

func TestCastWholeValue(t *testing.T) {
	cases := []struct {
		spec string
		in   any
		want any
	}{
		{"int8", int32(300), int8(44)}, // Java's (byte) keeps the low bits
		{"int16", int64(70000), int16(4464)},
		{"int32", 3.99, int32(3)},
		{"int32", 1e20, int32(math.MaxInt32)}, // a double saturates
		{"int8", 1e20, int8(-1)},              // through (int), then (byte)
		{"int64", math.NaN(), int64(0)},
		{"float32", int64(3), float32(3)},
		{"float64", float32(1.5), 1.5},
		{"boolean", int32(0), false},
		{"boolean", 0.5, false}, // longValue() is 0
		{"boolean", "TRUE", true},
		{"boolean", "yes", false},
		{"int32", true, int32(1)},
		{"float64", false, 0.0},
		{"int16", "-42", int16(-42)},
		{"int64", "+7", int64(7)},
		{"float64", " 2.5d ", 2.5},
		{"string", int8(-3), "-3"},
		{"string", 1.0, "1.0"},
		{"string", 1e10, "1.0E10"},
		{"string", float32(0.1), "0.1"},
		{"string", 1.5e-5, "1.5E-5"},
		{"string", true, "true"},
		{"string", []byte("hi"), "aGk="},
	}
	for _, c := range cases {
		tr := newTransform(t, "Cast$Value", map[string]string{"spec": c.spec})
		out, _, err := tr.Apply(valueRecord(nil, c.in))
		if err != nil {
			t.Fatalf("cast %v (%T) to %s: %v", c.in, c.in, c.spec, err)
		}
		if !connect.ValuesEqual(out.Value, c.want) {
			t.Fatalf("cast %v (%T) to %s = %#v, want %#v", c.in, c.in, c.spec, out.Value, c.want)
		}
	}
}

func TestCastErrors(t *testing.T) {
	tr := newTransform(t, "Cast$Value", map[string]string{"spec": "int8"})
	_, _, err := tr.Apply(valueRecord(nil, "300"))
	wantErr(t, err, "Value (300) was out of range for requested data type")
	_, _, err = tr.Apply(valueRecord(nil, "abc"))
	wantErr(t, err, "Value (abc) was out of range for requested data type")
	_, _, err = tr.Apply(valueRecord(nil, []byte{1}))
	wantErr(t, err, "Unexpected type in Cast transformation: class [B")
	_, _, err = tr.Apply(valueRecord(nil, []any{1}))
	wantErr(t, err, "Cast transformation does not support casting from ARRAY; supported types are [INT8, INT16, INT32, INT64, FLOAT32, FLOAT64, BOOLEAN, STRING, BYTES]")
	_, _, err = tr.Apply(valueRecord(nil, time.Now()))
	wantErr(t, err, "Cast transformation was passed a value of type time.Time which is not supported by Connect's data API")

	for spec, msg := range map[string]string{
		"bytes":         "Cast transformation does not support casting to BYTES; supported types are [INT8, INT16, INT32, INT64, FLOAT32, FLOAT64, BOOLEAN, STRING]",
		"a:int9":        "Invalid type found in casting spec: int9",
		"int8,a:string": "Cast transformations that specify a type to cast the entire value to may only specify a single cast in their spec",
		"a:b:c":         "Invalid rename mapping: a:b:c",
		"":              "Must specify at least one field to cast.",
	} {
		_, err := configure("Cast$Value", map[string]string{"spec": spec})
		wantErr(t, err, msg)
	}
}

func TestCastFields(t *testing.T) {
	tr := newTransform(t, "Cast$Value", map[string]string{"spec": "a:int64, b:string,missing:int8"})
	out := apply(t, tr, valueRecord(nil, map[string]any{"a": int8(1), "b": 2.5, "c": "x"}))
	wantValue(t, out.Value, map[string]any{"a": int64(1), "b": "2.5", "c": "x", "missing": nil})

	in := build("rec", "a", &connect.Schema{Type: connect.Int32, Optional: true, Default: int32(7)}, "b", connect.Float64Schema, "c", connect.StringSchema)
	out = apply(t, tr, valueRecord(in, structOf(in, "b", 2.5, "c", "x")))
	want := build("rec", "a", &connect.Schema{Type: connect.Int64, Optional: true, Default: int64(7)}, "b", connect.StringSchema, "c", connect.StringSchema)
	wantSchema(t, out.ValueSchema, want)
	wantValue(t, out.Value, structOf(want, "a", int64(7), "b", "2.5", "c", "x"))

	noDefault := newTransform(t, "Cast$Value", map[string]string{"spec": "a:int64", "replace.null.with.default": "false"})
	out = apply(t, noDefault, valueRecord(in, structOf(in, "b", 2.5, "c", "x")))
	if v, _ := out.Value.(*connect.Struct).GetWithoutDefault("a"); v != nil {
		t.Fatalf("null replaced by default: %v", v)
	}
}

func TestCastWithSchema(t *testing.T) {
	tr := newTransform(t, "Cast$Key", map[string]string{"spec": "int32"})
	out := apply(t, tr, keyRecord(&connect.Schema{Type: connect.Int64, Optional: true, Default: int64(5), Doc: "id"}, int64(12)))
	wantSchema(t, out.KeySchema, &connect.Schema{Type: connect.Int32, Optional: true, Default: int32(5), Doc: "id"})
	wantValue(t, out.Key, int32(12))

	// Logical types: Timestamp to its millis, Date to its days, Decimal
	// as a number; to string in ISO-8601 or plain decimal notation.
	day := time.Date(2024, 3, 5, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		schema *connect.Schema
		in     any
		spec   string
		want   any
	}{
		{connect.TimestampSchema(), ts, "int64", ts.UnixMilli()},
		{connect.DateSchema(), day, "int32", int32(19787)},
		{connect.TimeSchema(), time.UnixMilli(3_600_000).UTC(), "int32", int32(3_600_000)},
		{connect.TimestampSchema(), ts, "string", "2024-03-05T14:07:09.123Z"},
		{connect.DateSchema(), day, "string", "2024-03-05"},
		{connect.TimeSchema(), time.UnixMilli(3_600_000).UTC(), "string", "01:00:00.000Z"},
		{connect.DecimalSchema(2), connect.Decimal{Unscaled: big.NewInt(-12345), Scale: 2}, "int32", int32(-123)},
		{connect.DecimalSchema(2), connect.Decimal{Unscaled: big.NewInt(-12345), Scale: 2}, "float64", -123.45},
		{connect.DecimalSchema(2), connect.Decimal{Unscaled: big.NewInt(-12345), Scale: 2}, "string", "-123.45"},
		{connect.DecimalSchema(9), connect.Decimal{Unscaled: big.NewInt(5), Scale: 9}, "string", "5E-9"},
	}
	for _, c := range cases {
		tr := newTransform(t, "Cast$Value", map[string]string{"spec": c.spec})
		out, _, err := tr.Apply(valueRecord(c.schema, c.in))
		if err != nil {
			t.Fatalf("%s to %s: %v", c.schema, c.spec, err)
		}
		wantValue(t, out.Value, c.want)
		if out.ValueSchema.Name != "" {
			t.Fatalf("%s to %s kept the logical name: %s", c.schema, c.spec, out.ValueSchema)
		}
	}
	st := build("", "x", build("", "y", connect.Int8Schema))
	_, _, err := newTransform(t, "Cast$Value", map[string]string{"spec": "x:int8"}).
		Apply(valueRecord(st, structOf(st, "x", structOf(st.Fields[0].Schema, "y", int8(1)))))
	wantErr(t, err, "Cast transformation does not support casting from STRUCT")
}

func TestJavaDouble(t *testing.T) {
	for f, want := range map[float64]string{
		100: "100.0", 1234567: "1234567.0", 1e7: "1.0E7", 0.001: "0.001", 0.0001: "1.0E-4",
		-2.5: "-2.5", 123456789.125: "1.23456789125E8", math.Inf(-1): "-Infinity",
	} {
		if got := javaDouble(f, 64); got != want {
			t.Fatalf("javaDouble(%v) = %s, want %s", f, got, want)
		}
	}
	if got := decimalString(big.NewInt(12), -3); got != "1.2E+4" {
		t.Fatalf("decimalString(12, -3) = %s", got)
	}
	if got := decimalString(big.NewInt(5), 3); got != "0.005" {
		t.Fatalf("decimalString(5, 3) = %s", got)
	}
}

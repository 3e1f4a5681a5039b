package connect

import (
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"
)

func TestParseType(t *testing.T) {
	for _, typ := range Types {
		for _, s := range []string{string(typ), strings.ToLower(string(typ))} {
			got, err := ParseType(s)
			if err != nil || got != typ {
				t.Errorf("ParseType(%q) = %q, %v; want %q", s, got, err, typ)
			}
		}
	}
	if _, err := ParseType("UINT8"); err == nil || err.Error() != `unknown schema type "UINT8"` {
		t.Errorf("ParseType(UINT8) error = %v", err)
	}
	for typ, want := range map[Type]bool{Int8: true, String: true, Bytes: true, Array: false, Map: false, Struct_: false} {
		if typ.IsPrimitive() != want {
			t.Errorf("%s.IsPrimitive() = %v", typ, !want)
		}
	}
}

func person() *Schema {
	return NewStruct("com.example.Person").
		Field("name", StringSchema).
		Field("age", OptionalInt32).
		Field("tags", ArrayOf(StringSchema)).
		Field("attrs", MapOf(StringSchema, OptionalInt64)).
		MustBuild()
}

func TestStructBuilder(t *testing.T) {
	s := NewStruct("p").Field("a", Int8Schema).Field("b", StringSchema).Optional().Doc("d").Version(3).MustBuild()
	if s.Type != Struct_ || !s.Optional || s.Doc != "d" || *s.Version != 3 || s.Name != "p" {
		t.Fatalf("built %+v", s)
	}
	for i, name := range []string{"a", "b"} {
		f, ok := s.Field(name)
		if !ok || f.Index != i || f.Name != name {
			t.Errorf("Field(%q) = %+v, %v", name, f, ok)
		}
	}
	if _, ok := s.Field("c"); ok {
		t.Error("Field(c) found")
	}
	_, err := NewStruct("p").Field("a", Int8Schema).Field("a", StringSchema).Build()
	if err == nil || err.Error() != "cannot create field because of field name duplication a" {
		t.Errorf("duplicate field: %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("MustBuild of a duplicate did not panic")
		}
	}()
	NewStruct("p").Field("a", Int8Schema).Field("a", Int8Schema).MustBuild()
}

func TestSchemaEqual(t *testing.T) {
	v1, v2 := int32(1), int32(2)
	base := func() *Schema {
		return &Schema{Type: Int32, Name: "n", Version: &v1, Doc: "d", Parameters: map[string]string{"k": "v"}, Default: int32(5)}
	}
	cases := []struct {
		name string
		edit func(*Schema)
		want bool
	}{
		{"same", func(*Schema) {}, true},
		{"type", func(s *Schema) { s.Type = Int64 }, false},
		{"optional", func(s *Schema) { s.Optional = true }, false},
		{"name", func(s *Schema) { s.Name = "m" }, false},
		{"version", func(s *Schema) { s.Version = &v2 }, false},
		{"version nil", func(s *Schema) { s.Version = nil }, false},
		{"doc", func(s *Schema) { s.Doc = "" }, false},
		{"parameter value", func(s *Schema) { s.Parameters = map[string]string{"k": "w"} }, false},
		{"parameter key", func(s *Schema) { s.Parameters = map[string]string{"j": "v"} }, false},
		{"parameters nil", func(s *Schema) { s.Parameters = nil }, false},
		{"default", func(s *Schema) { s.Default = int32(6) }, false},
		{"default type", func(s *Schema) { s.Default = int64(5) }, false},
		{"default nil", func(s *Schema) { s.Default = nil }, false},
	}
	for _, tc := range cases {
		b := base()
		tc.edit(b)
		if got := base().Equal(b); got != tc.want {
			t.Errorf("%s: Equal = %v, want %v", tc.name, got, tc.want)
		}
		if got := b.Equal(base()); got != tc.want {
			t.Errorf("%s: Equal (reversed) = %v, want %v", tc.name, got, tc.want)
		}
	}
	var nilSchema *Schema
	if !nilSchema.Equal(nil) || nilSchema.Equal(Int8Schema) || Int8Schema.Equal(nil) {
		t.Error("nil schemas")
	}
	if !person().Equal(person()) {
		t.Error("two builds of one struct differ")
	}
	nested := []struct {
		name string
		a, b *Schema
	}{
		{"field name", NewStruct("").Field("a", Int8Schema).MustBuild(), NewStruct("").Field("b", Int8Schema).MustBuild()},
		{"field schema", NewStruct("").Field("a", Int8Schema).MustBuild(), NewStruct("").Field("a", OptionalInt8).MustBuild()},
		{"field count", NewStruct("").Field("a", Int8Schema).MustBuild(), NewStruct("").MustBuild()},
		{"array element", ArrayOf(Int8Schema), ArrayOf(Int16Schema)},
		{"map key", MapOf(StringSchema, Int8Schema), MapOf(BytesSchema, Int8Schema)},
		{"map value", MapOf(StringSchema, Int8Schema), MapOf(StringSchema, OptionalInt8)},
		{"decimal scale", DecimalSchema(2), DecimalSchema(3)},
		{"logical vs primitive", DateSchema(), Int32Schema},
	}
	for _, tc := range nested {
		if tc.a.Equal(tc.b) || tc.b.Equal(tc.a) {
			t.Errorf("%s: equal", tc.name)
		}
	}
	if !DecimalSchema(2).Equal(DecimalSchema(2)) || !TimestampSchema().Equal(TimestampSchema()) {
		t.Error("logical schemas built twice differ")
	}
}

func TestLogicalSchemas(t *testing.T) {
	cases := []struct {
		s    *Schema
		typ  Type
		name string
	}{
		{DecimalSchema(4), Bytes, DecimalName},
		{DateSchema(), Int32, DateName},
		{TimeSchema(), Int32, TimeName},
		{TimestampSchema(), Int64, TimestampName},
	}
	for _, tc := range cases {
		if tc.s.Type != tc.typ || tc.s.Name != tc.name || tc.s.Version == nil || *tc.s.Version != 1 {
			t.Errorf("%s: %+v", tc.name, tc.s)
		}
	}
	if DecimalSchema(4).Parameters[DecimalScale] != "4" {
		t.Errorf("decimal parameters %v", DecimalSchema(4).Parameters)
	}
	if got := DecimalSchema(4).String(); got != "Schema{org.apache.kafka.connect.data.Decimal:BYTES}" {
		t.Errorf("String() = %q", got)
	}
	if got := Int8Schema.String(); got != "Schema{INT8}" {
		t.Errorf("String() = %q", got)
	}
	var nilSchema *Schema
	if nilSchema.String() != "null" {
		t.Error("nil schema String")
	}
}

func TestPrimitiveSchemas(t *testing.T) {
	required := []*Schema{Int8Schema, Int16Schema, Int32Schema, Int64Schema, Float32Schema, Float64Schema, BooleanSchema, StringSchema, BytesSchema}
	optional := []*Schema{OptionalInt8, OptionalInt16, OptionalInt32, OptionalInt64, OptionalFloat32, OptionalFloat64, OptionalBoolean, OptionalString, OptionalBytes}
	for i, r := range required {
		if r.Optional || !optional[i].Optional || r.Type != optional[i].Type || r.Type != Types[i] {
			t.Errorf("%d: %+v %+v", i, r, optional[i])
		}
		if !PrimitiveSchema(r.Type, false).Equal(r) || !PrimitiveSchema(r.Type, true).Equal(optional[i]) {
			t.Errorf("PrimitiveSchema(%s)", r.Type)
		}
	}
}

func dec(unscaled int64, scale int) Decimal {
	return Decimal{Unscaled: big.NewInt(unscaled), Scale: scale}
}

func TestSchemaValidate(t *testing.T) {
	now := time.Unix(1700000000, 0)
	p := person()
	good := NewStructValue(p).MustPut("name", "ann").MustPut("tags", []any{"a"}).MustPut("attrs", map[any]any{"k": int64(1), "n": nil})
	other := NewStructValue(NewStruct("other").Field("name", StringSchema).MustBuild()).MustPut("name", "x")
	incomplete := NewStructValue(p).MustPut("name", "ann") // tags and attrs unset

	cases := []struct {
		name   string
		schema *Schema
		value  any
		want   string // "" valid; else the error's text
	}{
		{"int8", Int8Schema, int8(1), ""},
		{"int16", Int16Schema, int16(1), ""},
		{"int32", Int32Schema, int32(1), ""},
		{"int64", Int64Schema, int64(1), ""},
		{"float32", Float32Schema, float32(1), ""},
		{"float64", Float64Schema, float64(1), ""},
		{"boolean", BooleanSchema, true, ""},
		{"string", StringSchema, "s", ""},
		{"bytes", BytesSchema, []byte("b"), ""},
		{"int is not int32", Int32Schema, 1, "data error: invalid Java object for schema Schema{INT32} with type INT32: int"},
		{"int64 is not int32", Int32Schema, int64(1), "data error: invalid Java object for schema Schema{INT32} with type INT32: int64"},
		{"string is not bytes", BytesSchema, "b", "data error: invalid Java object for schema Schema{BYTES} with type BYTES: string"},
		{"float64 is not float32", Float32Schema, 1.0, "data error: invalid Java object for schema Schema{FLOAT32} with type FLOAT32: float64"},
		{"null required", StringSchema, nil, `data error: invalid value: null used for required field: "", schema type: STRING`},
		{"null optional", OptionalString, nil, ""},
		{"null with a default", &Schema{Type: String, Default: "d"}, nil, ""},
		{"no schema", nil, struct{}{}, ""},
		{"decimal", DecimalSchema(2), dec(123, 2), ""},
		{"decimal as bytes", DecimalSchema(2), []byte{1}, "data error: invalid Java object for schema Schema{org.apache.kafka.connect.data.Decimal:BYTES} with type BYTES: []uint8"},
		{"date", DateSchema(), now, ""},
		{"date as int32", DateSchema(), int32(3), "data error: invalid Java object for schema Schema{org.apache.kafka.connect.data.Date:INT32} with type INT32: int32"},
		{"time", TimeSchema(), now, ""},
		{"timestamp", TimestampSchema(), now, ""},
		{"timestamp as int64", TimestampSchema(), int64(3), "data error: invalid Java object for schema Schema{org.apache.kafka.connect.data.Timestamp:INT64} with type INT64: int64"},
		{"optional timestamp null", &Schema{Type: Int64, Name: TimestampName, Optional: true}, nil, ""},
		{"array", ArrayOf(Int8Schema), []any{int8(1), int8(2)}, ""},
		{"array empty", ArrayOf(Int8Schema), []any{}, ""},
		{"array of the wrong go type", ArrayOf(Int8Schema), []int8{1}, "data error: invalid Java object for schema Schema{ARRAY} with type ARRAY: []int8"},
		{"array element", ArrayOf(Int8Schema), []any{int8(1), "x"}, "data error: invalid Java object for schema Schema{INT8} with type INT8: string"},
		{"array null element", ArrayOf(Int8Schema), []any{nil}, `data error: invalid value: null used for required field: "", schema type: INT8`},
		{"array optional element", ArrayOf(OptionalInt8), []any{nil}, ""},
		{"map", MapOf(StringSchema, Int8Schema), map[any]any{"a": int8(1)}, ""},
		{"schemaless map with a schema", MapOf(StringSchema, Int8Schema), map[string]any{"a": int8(1)}, "data error: invalid Java object for schema Schema{MAP} with type MAP: map[string]interface {}"},
		{"map key", MapOf(StringSchema, Int8Schema), map[any]any{int8(1): int8(1)}, "data error: invalid Java object for schema Schema{STRING} with type STRING: int8"},
		{"map value", MapOf(StringSchema, Int8Schema), map[any]any{"a": "b"}, "data error: invalid Java object for schema Schema{INT8} with type INT8: string"},
		{"struct", p, good, ""},
		{"struct of another schema", p, other, "data error: struct schemas do not match"},
		{"struct missing required fields", p, incomplete, `data error: invalid value: null used for required field: "tags", schema type: ARRAY`},
		{"map as struct", p, map[string]any{"name": "x"}, "data error: invalid Java object for schema Schema{com.example.Person:STRUCT} with type STRUCT: map[string]interface {}"},
		{"nested struct", NewStruct("outer").Field("p", p).MustBuild(), NewStructValue(NewStruct("outer").Field("p", p).MustBuild()).MustPut("p", good), ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := Validate(tc.schema, tc.value)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Validate = %v", err)
				}
				return
			}
			if err == nil || err.Error() != tc.want {
				t.Fatalf("Validate = %v\nwant %s", err, tc.want)
			}
			if !errors.Is(err, ErrData) {
				t.Fatalf("%v does not wrap ErrData", err)
			}
		})
	}
}

func TestValuesEqual(t *testing.T) {
	now := time.Unix(1700000000, 0)
	p := person()
	s1 := NewStructValue(p).MustPut("name", "a").MustPut("tags", []any{"x"})
	s2 := NewStructValue(p).MustPut("name", "a").MustPut("tags", []any{"x"})
	s3 := NewStructValue(p).MustPut("name", "b").MustPut("tags", []any{"x"})
	cases := []struct {
		name string
		a, b any
		want bool
	}{
		{"nil", nil, nil, true},
		{"nil and zero", nil, int8(0), false},
		{"ints", int32(1), int32(1), true},
		{"int sizes differ", int32(1), int64(1), false},
		{"bytes", []byte("ab"), []byte("ab"), true},
		{"bytes differ", []byte("ab"), []byte("ac"), false},
		{"bytes and string", []byte("ab"), "ab", false},
		{"arrays", []any{int8(1), []byte("x")}, []any{int8(1), []byte("x")}, true},
		{"array lengths", []any{int8(1)}, []any{int8(1), int8(2)}, false},
		{"maps", map[any]any{"a": []byte("x")}, map[any]any{"a": []byte("x")}, true},
		{"map values", map[any]any{"a": int8(1)}, map[any]any{"a": int8(2)}, false},
		{"map keys", map[any]any{"a": int8(1)}, map[any]any{"b": int8(1)}, false},
		{"schemaless maps", map[string]any{"a": []any{"x"}}, map[string]any{"a": []any{"x"}}, true},
		{"schemaless map values", map[string]any{"a": "x"}, map[string]any{"a": "y"}, false},
		{"structs", s1, s2, true},
		{"structs differ", s1, s3, false},
		{"decimals", dec(100, 2), dec(100, 2), true},
		{"decimal scale", dec(100, 2), dec(100, 3), false},
		{"decimal without big.Int is zero", Decimal{Scale: 1}, dec(0, 1), true},
		{"times in two zones", now, now.UTC(), true},
		{"times", now, now.Add(time.Millisecond), false},
		// Outside the data model: not equal, and no panic.
		{"string slices", []string{"a"}, []string{"a"}, false},
		{"funcs", func() {}, func() {}, false},
	}
	for _, tc := range cases {
		if got := ValuesEqual(tc.a, tc.b); got != tc.want {
			t.Errorf("%s: ValuesEqual = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestDecimalString(t *testing.T) {
	for _, tc := range []struct {
		d    Decimal
		want string
	}{
		{dec(12345, 2), "123.45"},
		{dec(-5, 3), "-0.005"},
		{dec(7, 0), "7"},
		{Decimal{}, "0"},
	} {
		if got := tc.d.String(); got != tc.want {
			t.Errorf("%v: String() = %q, want %q", tc.d.Unscaled, got, tc.want)
		}
	}
}

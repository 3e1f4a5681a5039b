package transforms

import (
	"math/big"
	"testing"
	"time"

	"github.com/samsa-io/samsa/connect"
)

func TestReplaceField(t *testing.T) {
	cases := []struct {
		name  string
		props map[string]string
		want  map[string]any
	}{
		{"include", map[string]string{"include": "a,c"}, map[string]any{"a": 1, "c": 3}},
		{"exclude wins over include", map[string]string{"include": "a,c", "exclude": "c"}, map[string]any{"a": 1}},
		{"renames", map[string]string{"renames": "a:alpha,b:beta"}, map[string]any{"alpha": 1, "beta": 2, "c": 3}},
		{"deprecated whitelist", map[string]string{"whitelist": "b"}, map[string]any{"b": 2}},
		{"deprecated blacklist", map[string]string{"blacklist": "b"}, map[string]any{"a": 1, "c": 3}},
		{"include beats whitelist", map[string]string{"include": "a", "whitelist": "b"}, map[string]any{"a": 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr := newTransform(t, "ReplaceField$Value", c.props)
			out := apply(t, tr, valueRecord(nil, map[string]any{"a": 1, "b": 2, "c": 3}))
			wantValue(t, out.Value, c.want)
		})
	}
}

func TestReplaceFieldWithSchema(t *testing.T) {
	in := build("rec", "a", connect.Int32Schema, "b", connect.StringSchema, "c", connect.OptionalBoolean)
	tr := newTransform(t, "ReplaceField$Key", map[string]string{"exclude": "c", "renames": "a:id"})
	out := apply(t, tr, keyRecord(in, structOf(in, "a", int32(5), "b", "x", "c", true)))
	want := build("rec", "id", connect.Int32Schema, "b", connect.StringSchema)
	wantSchema(t, out.KeySchema, want)
	wantValue(t, out.Key, structOf(want, "id", int32(5), "b", "x"))
}

func TestReplaceFieldBadRenames(t *testing.T) {
	for _, bad := range []string{"a", "a:b:c", "a:"} {
		_, err := configure("ReplaceField$Value", map[string]string{"renames": bad})
		wantErr(t, err, "Invalid value ["+bad+"] for configuration renames: Invalid rename mapping: "+bad)
	}
	// Java's split keeps a leading empty part: ":b" renames "" to b.
	if _, err := configure("ReplaceField$Value", map[string]string{"renames": ":b"}); err != nil {
		t.Fatal(err)
	}
}

func TestMaskField(t *testing.T) {
	now := time.Now()
	in := map[string]any{
		"i8": int8(5), "i16": int16(5), "i32": int32(5), "i64": int64(5), "f32": float32(1.5), "f64": 2.5,
		"b": true, "s": "secret", "t": now, "arr": []any{1}, "m": map[string]any{"x": 1}, "keep": "k", "nil": nil,
	}
	tr := newTransform(t, "MaskField$Value", map[string]string{"fields": "i8,i16,i32,i64,f32,f64,b,s,t,arr,m,nil,absent"})
	out := apply(t, tr, valueRecord(nil, in))
	wantValue(t, out.Value, map[string]any{
		"i8": int8(0), "i16": int16(0), "i32": int32(0), "i64": int64(0), "f32": float32(0), "f64": float64(0),
		"b": false, "s": "", "t": time.UnixMilli(0), "arr": []any{}, "m": map[string]any{}, "keep": "k", "nil": nil, "absent": nil,
	})
	// The input is not changed in place.
	wantValue(t, in["s"], "secret")

	repl := newTransform(t, "MaskField$Value", map[string]string{"fields": "i32,f64,s,d", "replacement": "42"})
	out = apply(t, repl, valueRecord(nil, map[string]any{"i32": int32(1), "f64": 1.0, "s": "x", "d": connect.Decimal{Unscaled: big.NewInt(5), Scale: 1}}))
	wantValue(t, out.Value, map[string]any{"i32": int32(42), "f64": 42.0, "s": "42", "d": connect.Decimal{Unscaled: big.NewInt(42)}})

	bad := newTransform(t, "MaskField$Value", map[string]string{"fields": "i", "replacement": "abc"})
	_, _, err := bad.Apply(valueRecord(nil, map[string]any{"i": int32(1)}))
	wantErr(t, err, "Unable to convert abc (class java.lang.String) to number")
	_, _, err = repl.Apply(valueRecord(nil, map[string]any{"s": true}))
	wantErr(t, err, "Cannot mask value of type class java.lang.Boolean with custom replacement.")
	_, _, err = tr.Apply(valueRecord(nil, map[string]any{"s": []byte("x")}))
	wantErr(t, err, "Cannot mask value of type: class [B")

	_, err = configure("MaskField$Value", map[string]string{"fields": ""})
	wantErr(t, err, "Invalid value [] for configuration fields: Empty list")
	_, err = configure("MaskField$Value", map[string]string{"fields": "a", "replacement": ""})
	wantErr(t, err, "String must be non-empty")
}

func TestMaskFieldWithSchema(t *testing.T) {
	in := build("", "ssn", connect.StringSchema, "age", connect.Int32Schema, "name", connect.OptionalString)
	tr := newTransform(t, "MaskField$Key", map[string]string{"fields": "ssn,age,name"})
	out := apply(t, tr, keyRecord(in, structOf(in, "ssn", "123-45", "age", int32(40))))
	if out.KeySchema != in {
		t.Fatalf("schema changed")
	}
	wantValue(t, out.Key, structOf(in, "ssn", "", "age", int32(0)))
}

func TestValueToKey(t *testing.T) {
	tr := newTransform(t, "ValueToKey", map[string]string{"fields": "id,region"})
	out := apply(t, tr, valueRecord(nil, map[string]any{"id": 1, "region": "eu", "x": 2}))
	wantValue(t, out.Key, map[string]any{"id": 1, "region": "eu"})
	if out.KeySchema != nil {
		t.Fatal("schemaless key got a schema")
	}

	in := build("v", "id", connect.Int64Schema, "region", connect.OptionalString, "x", connect.BooleanSchema)
	out = apply(t, tr, valueRecord(in, structOf(in, "id", int64(9), "region", "us", "x", true)))
	wantKey := build("", "id", connect.Int64Schema, "region", connect.OptionalString)
	wantSchema(t, out.KeySchema, wantKey)
	wantValue(t, out.Key, structOf(wantKey, "id", int64(9), "region", "us"))

	missing := newTransform(t, "ValueToKey", map[string]string{"fields": "nope"})
	_, _, err := missing.Apply(valueRecord(in, structOf(in, "id", int64(9), "x", true)))
	wantErr(t, err, "Field does not exist: nope")
}

func TestExtractField(t *testing.T) {
	tr := newTransform(t, "ExtractField$Value", map[string]string{"field": "id"})
	wantValue(t, apply(t, tr, valueRecord(nil, map[string]any{"id": 3})).Value, 3)
	wantValue(t, apply(t, tr, valueRecord(nil, map[string]any{"x": 3})).Value, nil)
	if out := apply(t, tr, valueRecord(nil, nil)); out.Value != nil {
		t.Fatalf("null value extracted to %v", out.Value)
	}

	in := build("", "id", connect.Int32Schema, "after", build("", "name", connect.OptionalString, "a.b", connect.Int8Schema))
	rec := valueRecord(in, structOf(in, "id", int32(1), "after", structOf(in.Fields[1].Schema, "name", "ann", "a.b", int8(2))))
	out := apply(t, tr, rec)
	wantSchema(t, out.ValueSchema, connect.Int32Schema)
	wantValue(t, out.Value, int32(1))

	nested := newTransform(t, "ExtractField$Value", map[string]string{"field": "after.name", "field.syntax.version": "v2"})
	out = apply(t, nested, rec)
	wantSchema(t, out.ValueSchema, connect.OptionalString)
	wantValue(t, out.Value, "ann")
	backticks := newTransform(t, "ExtractField$Value", map[string]string{"field": "after.`a.b`", "field.syntax.version": "V2"})
	wantValue(t, apply(t, backticks, rec).Value, int8(2))
	nestedMap := apply(t, nested, valueRecord(nil, map[string]any{"after": map[string]any{"name": "bo"}}))
	wantValue(t, nestedMap.Value, "bo")

	// V1 reads the dotted name as one field.
	v1 := newTransform(t, "ExtractField$Value", map[string]string{"field": "after.name"})
	_, _, err := v1.Apply(rec)
	wantErr(t, err, "Unknown field: after.name")
	wantValue(t, apply(t, v1, valueRecord(nil, map[string]any{"after.name": 5})).Value, 5)

	_, err = configure("ExtractField$Value", map[string]string{"field": "`a.b", "field.syntax.version": "V2"})
	wantErr(t, err, "Incomplete backtick pair in path: [`a.b], consider adding a backslash before backtick at position 0 to escape it")
	_, err = configure("ExtractField$Value", map[string]string{"field": "a", "field.syntax.version": "V3"})
	wantErr(t, err, "Invalid value V3 for configuration field.syntax.version: String must be one of (case insensitive): V1, V2")
}

func TestFieldPathV2(t *testing.T) {
	cases := map[string][]string{
		"a":          {"a"},
		"a.b.c":      {"a", "b", "c"},
		"`a.b`.c":    {"a.b", "c"},
		"a.":         {"a", ""},
		"`a`b`.c":    {"a`b", "c"},
		"`a\\`.b`.c": {"a`.b", "c"},
		"":           {""},
		"`x.y`":      {"x.y"},
	}
	for in, want := range cases {
		got, err := parseFieldPathV2(in)
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if len(got) != len(want) {
			t.Fatalf("%q: steps %q, want %q", in, got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%q: steps %q, want %q", in, got, want)
			}
		}
	}
	for _, bad := range []string{"`a", "a.`b", "`a\\`"} {
		if _, err := parseFieldPathV2(bad); err == nil {
			t.Fatalf("%q parsed", bad)
		}
	}
}

func TestHoistField(t *testing.T) {
	tr := newTransform(t, "HoistField$Value", map[string]string{"field": "line"})
	wantValue(t, apply(t, tr, valueRecord(nil, "hello")).Value, map[string]any{"line": "hello"})
	out := apply(t, tr, valueRecord(connect.StringSchema, "hello"))
	want := build("", "line", connect.StringSchema)
	wantSchema(t, out.ValueSchema, want)
	wantValue(t, out.Value, structOf(want, "line", "hello"))
	_, _, err := tr.Apply(valueRecord(connect.StringSchema, nil))
	wantErr(t, err, "line")

	key := newTransform(t, "HoistField$Key", map[string]string{"field": "k"})
	wantValue(t, apply(t, key, keyRecord(nil, int64(1))).Key, map[string]any{"k": int64(1)})
	_, err = configure("HoistField$Value", map[string]string{})
	wantErr(t, err, `Missing required configuration "field" which has no default value.`)
}

func TestSetSchemaMetadata(t *testing.T) {
	in := build("old", "a", connect.Int32Schema)
	tr := newTransform(t, "SetSchemaMetadata$Value", map[string]string{"schema.name": "com.example.Order", "schema.version": "3"})
	out := apply(t, tr, valueRecord(in, structOf(in, "a", int32(1))))
	if out.ValueSchema.Name != "com.example.Order" || *out.ValueSchema.Version != 3 || in.Name != "old" {
		t.Fatalf("schema %+v (input %+v)", out.ValueSchema, in)
	}
	if got := out.Value.(*connect.Struct).Schema(); got != out.ValueSchema {
		t.Fatalf("struct keeps the old schema %v", got)
	}
	wantValue(t, get(t, out.Value, "a"), int32(1))

	// A primitive key keeps its value.
	key := newTransform(t, "SetSchemaMetadata$Key", map[string]string{"schema.version": "2"})
	out = apply(t, key, keyRecord(connect.StringSchema, "k"))
	if *out.KeySchema.Version != 2 || out.Key != "k" || connect.StringSchema.Version != nil {
		t.Fatalf("key schema %+v", out.KeySchema)
	}
	_, _, err := tr.Apply(valueRecord(nil, map[string]any{}))
	wantErr(t, err, "Schema required for [updating schema metadata]")
	_, err = configure("SetSchemaMetadata$Value", map[string]string{})
	wantErr(t, err, "Neither schema name nor version configured")
	_, err = configure("SetSchemaMetadata$Value", map[string]string{"schema.version": "x"})
	wantErr(t, err, "Invalid value x for configuration schema.version: Not a number of type INT")
}

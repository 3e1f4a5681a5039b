package transforms

import (
	"testing"
	"time"

	"github.com/samsa-io/samsa/connect"
)

// TestNullsPassThrough: tombstones and null keys go through the
// transforms that Kafka lets them through, unchanged.
func TestNullsPassThrough(t *testing.T) {
	structSchema := optional(build("", "a", connect.Int64Schema))
	cases := []struct {
		alias  string
		props  map[string]string
		schema *connect.Schema
	}{
		{"InsertField$Value", map[string]string{"topic.field": "t"}, structSchema},
		{"ReplaceField$Value", map[string]string{"exclude": "a"}, structSchema},
		{"Cast$Value", map[string]string{"spec": "int8"}, structSchema},
		{"Flatten$Value", map[string]string{}, structSchema},
		{"ExtractField$Value", map[string]string{"field": "a"}, structSchema},
		// The whole value's schema must be a timestamp's, null or not.
		{"TimestampConverter$Value", map[string]string{"target.type": "unix"}, optional(connect.TimestampSchema())},
	}
	for _, c := range cases {
		tr := newTransform(t, c.alias, c.props)
		for _, schema := range []*connect.Schema{nil, c.schema} {
			out := apply(t, tr, valueRecord(schema, nil))
			if out.Value != nil {
				t.Fatalf("%s turned a tombstone into %v", c.alias, out.Value)
			}
		}
	}
	// Cast keeps the input schema for a null, as Kafka returns the record.
	in := &connect.Schema{Type: connect.Int64, Optional: true}
	if out := apply(t, newTransform(t, "Cast$Value", map[string]string{"spec": "int8"}), valueRecord(in, nil)); out.ValueSchema != in {
		t.Fatalf("schema of a null cast changed to %v", out.ValueSchema)
	}
	// SetSchemaMetadata renames the schema of a null value.
	out := apply(t, newTransform(t, "SetSchemaMetadata$Value", map[string]string{"schema.name": "n"}), valueRecord(in, nil))
	if out.ValueSchema.Name != "n" || out.Value != nil {
		t.Fatalf("null with schema: %+v", out)
	}
	// MaskField refuses a tombstone, as Kafka does.
	_, _, err := newTransform(t, "MaskField$Value", map[string]string{"fields": "a"}).Apply(valueRecord(nil, nil))
	wantErr(t, err, "Only Map objects supported in absence of schema for [mask fields], found: null")
}

func TestTimestampConverterNullsAndDefaults(t *testing.T) {
	def := time.UnixMilli(86_400_000 + 5).UTC()
	inner := &connect.Schema{Type: connect.Int64, Name: connect.TimestampName, Version: ptr(int32(1)), Optional: true, Default: def}
	in := build("ev", "at", inner, "x", connect.OptionalInt8)
	withDefault := *in
	withDefault.Default = structOf(in, "at", time.UnixMilli(0).UTC())
	withDefault.Optional = true

	tr := newTransform(t, "TimestampConverter$Value", map[string]string{"field": "at", "target.type": "unix"})
	out := apply(t, tr, valueRecord(&withDefault, structOf(in, "x", int8(1))))
	// The unset field takes its default, converted.
	wantValue(t, get(t, out.Value, "at"), def.UnixMilli())
	if !out.ValueSchema.Optional {
		t.Fatal("optional struct schema became required")
	}
	wantValue(t, out.ValueSchema.Default, structOf(out.ValueSchema, "at", int64(0)))

	noDefault := newTransform(t, "TimestampConverter$Value", map[string]string{"field": "at", "target.type": "unix", "replace.null.with.default": "false"})
	out = apply(t, noDefault, valueRecord(in, structOf(in, "x", int8(1))))
	if v, _ := out.Value.(*connect.Struct).GetWithoutDefault("at"); v != nil {
		t.Fatalf("null field converted to %v", v)
	}
	// A null struct keeps the updated schema.
	out = apply(t, tr, valueRecord(&withDefault, nil))
	if out.Value != nil || out.ValueSchema.Fields[0].Schema.Type != connect.Int64 || out.ValueSchema.Fields[0].Schema.Name != "" {
		t.Fatalf("null struct: %+v", out)
	}
}

func TestFlattenNullNestedStruct(t *testing.T) {
	inner := optional(build("", "a", connect.Int8Schema))
	in := build("", "n", inner, "b", connect.BooleanSchema)
	out := apply(t, newTransform(t, "Flatten$Value", map[string]string{}), valueRecord(in, structOf(in, "b", true)))
	wantSchema(t, out.ValueSchema, build("", "n.a", connect.OptionalInt8, "b", connect.BooleanSchema))
	wantValue(t, get(t, out.Value, "n.a"), nil)
	wantValue(t, get(t, out.Value, "b"), true)
}

// TestMismatchedStructSchema: a record schema that is not its struct's
// schema is a data error for every transform that rebuilds the struct
// from the record schema, never a read of the wrong field.
func TestMismatchedStructSchema(t *testing.T) {
	valueSchema := build("real", "a", connect.OptionalInt32)
	claimed := build("claimed", "b", connect.OptionalInt32, "a", connect.OptionalInt32)
	r := valueRecord(claimed, structOf(valueSchema, "a", int32(1)))
	for alias, props := range map[string]map[string]string{
		"Cast$Value":               {"spec": "b:string"},
		"SetSchemaMetadata$Value":  {"schema.name": "x"},
		"HeaderFrom$Value":         {"fields": "a", "headers": "h", "operation": "move"},
		"TimestampConverter$Value": {"field": "b", "target.type": "unix"},
	} {
		_, _, err := newTransform(t, alias, props).Apply(r)
		wantErr(t, err, "b is not a valid field name")
	}
}

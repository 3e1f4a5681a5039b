package transforms

import (
	"errors"
	"testing"
	"time"

	"github.com/samsa-io/samsa/connect"
)

func TestInsertFieldSchemaless(t *testing.T) {
	tr := newTransform(t, "InsertField$Value", map[string]string{
		"topic.field": "t", "partition.field": "p!", "timestamp.field": "ts?", "static.field": "src", "static.value": "pg",
	})
	out := apply(t, tr, valueRecord(nil, map[string]any{"id": int32(7)}))
	wantValue(t, out.Value, map[string]any{"id": int32(7), "t": "orders", "p": int32(3), "ts": ts.UnixMilli(), "src": "pg"})
	if out.ValueSchema != nil {
		t.Fatalf("schemaless record got schema %s", out.ValueSchema)
	}
	// No partition and no timestamp: those fields are left out.
	r := valueRecord(nil, map[string]any{})
	r.Partition, r.Timestamp = nil, time.Time{}
	out = apply(t, tr, r)
	wantValue(t, out.Value, map[string]any{"t": "orders", "src": "pg"})
}

func TestInsertFieldWithSchema(t *testing.T) {
	in := build("order", "id", connect.Int32Schema, "note", &connect.Schema{Type: connect.String, Optional: true, Default: "none"})
	in.Version = ptr(int32(4))
	tr := newTransform(t, "org.apache.kafka.connect.transforms.InsertField$Value", map[string]string{
		"topic.field": "topic!", "partition.field": "part", "offset.field": "off", "timestamp.field": "ts",
	})
	off := int64(99)
	r := valueRecord(in, structOf(in, "id", int32(1)))
	r.KafkaOffset = &off
	out := apply(t, tr, r)

	want := &connect.Schema{Type: connect.Struct_, Name: "order", Version: ptr(int32(4))}
	for i, f := range []connect.Field{
		{Name: "id", Schema: connect.Int32Schema},
		{Name: "note", Schema: in.Fields[1].Schema},
		{Name: "topic", Schema: connect.StringSchema},
		{Name: "part", Schema: connect.OptionalInt32},
		{Name: "off", Schema: connect.OptionalInt64},
		{Name: "ts", Schema: optional(connect.TimestampSchema())},
	} {
		f.Index = i
		want.Fields = append(want.Fields, f)
	}
	wantSchema(t, out.ValueSchema, want)
	wantValue(t, get(t, out.Value, "topic"), "orders")
	wantValue(t, get(t, out.Value, "part"), int32(3))
	wantValue(t, get(t, out.Value, "off"), int64(99))
	wantValue(t, get(t, out.Value, "ts"), ts)
	wantValue(t, get(t, out.Value, "note"), "none")

	// The same input schema builds the output schema once.
	again := apply(t, tr, r)
	if again.ValueSchema != out.ValueSchema {
		t.Fatalf("schema rebuilt for the same input schema")
	}
	// An equal schema decoded afresh hits the cache too.
	in2 := build("order", "id", connect.Int32Schema, "note", &connect.Schema{Type: connect.String, Optional: true, Default: "none"})
	in2.Version = ptr(int32(4))
	r2 := valueRecord(in2, structOf(in2, "id", int32(2)))
	r2.KafkaOffset = &off
	if apply(t, tr, r2).ValueSchema != out.ValueSchema {
		t.Fatalf("equal schema missed the cache")
	}
}

func TestInsertFieldReplaceNullWithDefault(t *testing.T) {
	in := build("", "note", &connect.Schema{Type: connect.String, Optional: true, Default: "none"})
	tr := newTransform(t, "InsertField$Value", map[string]string{"topic.field": "t", "replace.null.with.default": "false"})
	out := apply(t, tr, valueRecord(in, structOf(in)))
	v, _ := out.Value.(*connect.Struct).GetWithoutDefault("note")
	if v != nil {
		t.Fatalf("null replaced by default with replace.null.with.default=false: %v", v)
	}
}

func TestInsertFieldKeyAndErrors(t *testing.T) {
	tr := newTransform(t, "InsertField$Key", map[string]string{"static.field": "k", "static.value": "x"})
	out := apply(t, tr, keyRecord(nil, map[string]any{"a": "b"}))
	wantValue(t, out.Key, map[string]any{"a": "b", "k": "x"})
	wantValue(t, out.Value, "v")

	// A null key passes through.
	out = apply(t, tr, keyRecord(nil, nil))
	if out.Key != nil {
		t.Fatalf("null key changed: %v", out.Key)
	}
	_, _, err := tr.Apply(keyRecord(nil, "flat"))
	wantErr(t, err, "Only Map objects supported in absence of schema for [field insertion], found: java.lang.String")
	if !errors.Is(err, connect.ErrData) {
		t.Fatalf("error %v is not connect.ErrData", err)
	}

	// offset.field needs a sink record.
	off := newTransform(t, "InsertField$Value", map[string]string{"offset.field": "o"})
	_, _, err = off.Apply(valueRecord(nil, map[string]any{}))
	wantErr(t, err, "Only SinkRecord supported for [field insertion]")

	_, err = configure("InsertField$Value", map[string]string{})
	wantErr(t, err, "No field insertion configured")
	_, err = configure("InsertField$Value", map[string]string{"static.field": "s"})
	wantErr(t, err, "No value specified for static field: s")
}

func ptr[T any](v T) *T { return &v }

func optional(s *connect.Schema) *connect.Schema { s.Optional = true; return s }

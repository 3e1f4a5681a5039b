package transforms

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/samsa-io/samsa/connect"
)

// newTransform makes and configures a transform by alias, failing the
// test on a config error.
func newTransform(t *testing.T, alias string, props map[string]string) connect.Transformation {
	t.Helper()
	tr, err := configure(alias, props)
	if err != nil {
		t.Fatalf("%s %v: %v", alias, props, err)
	}
	return tr
}

func configure(alias string, props map[string]string) (connect.Transformation, error) {
	p, ok := LookupTransform(alias)
	if !ok {
		return nil, errors.New("no transform " + alias)
	}
	tr := p.New()
	return tr, tr.Configure(props)
}

// apply runs one record through tr and fails the test on an error.
func apply(t *testing.T, tr connect.Transformation, r connect.Record) connect.Record {
	t.Helper()
	out, keep, err := tr.Apply(r)
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	if !keep {
		t.Fatalf("apply dropped the record")
	}
	return out
}

// wantErr checks an error contains the text.
func wantErr(t *testing.T, err error, text string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one containing %q", text)
	}
	if !strings.Contains(err.Error(), text) {
		t.Fatalf("error %q, want it to contain %q", err, text)
	}
}

func wantValue(t *testing.T, got, want any) {
	t.Helper()
	if !connect.ValuesEqual(got, want) {
		t.Fatalf("value %#v, want %#v", got, want)
	}
}

func wantSchema(t *testing.T, got, want *connect.Schema) {
	t.Helper()
	if !got.Equal(want) {
		t.Fatalf("schema %s %+v, want %s %+v", got, fieldsOf(got), want, fieldsOf(want))
	}
}

func fieldsOf(s *connect.Schema) []string {
	if s == nil {
		return nil
	}
	var out []string
	for _, f := range s.Fields {
		out = append(out, f.Name+":"+string(f.Schema.Type)+map[bool]string{true: "?", false: ""}[f.Schema.Optional])
	}
	return out
}

// build makes a struct schema from name/schema pairs.
func build(name string, fields ...any) *connect.Schema {
	b := connect.NewStruct(name)
	for i := 0; i < len(fields); i += 2 {
		b.Field(fields[i].(string), fields[i+1].(*connect.Schema))
	}
	return b.MustBuild()
}

// structOf fills a struct of s from name/value pairs.
func structOf(s *connect.Schema, kv ...any) *connect.Struct {
	st := connect.NewStructValue(s)
	for i := 0; i < len(kv); i += 2 {
		st.MustPut(kv[i].(string), kv[i+1])
	}
	return st
}

func get(t *testing.T, st any, name string) any {
	t.Helper()
	s, ok := st.(*connect.Struct)
	if !ok {
		t.Fatalf("%#v is not a struct", st)
	}
	v, err := s.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

var ts = time.Date(2024, 3, 5, 14, 7, 9, 123_000_000, time.UTC)

func valueRecord(schema *connect.Schema, v any) connect.Record {
	return connect.Record{Topic: "orders", Partition: connect.PartitionOf(3), ValueSchema: schema, Value: v, Timestamp: ts}
}

func keyRecord(schema *connect.Schema, k any) connect.Record {
	return connect.Record{Topic: "orders", Partition: connect.PartitionOf(3), KeySchema: schema, Key: k, Value: "v", Timestamp: ts}
}

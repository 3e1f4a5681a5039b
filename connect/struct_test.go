package connect

import (
	"errors"
	"fmt"
	"testing"
)

func TestStructPutGet(t *testing.T) {
	s := NewStruct("s").
		Field("req", StringSchema).
		Field("opt", OptionalInt32).
		Field("def", &Schema{Type: Int64, Default: int64(7)}).
		MustBuild()
	st := NewStructValue(s)
	if st.Schema() != s {
		t.Fatal("Schema()")
	}
	if err := st.Put("req", "x"); err != nil {
		t.Fatal(err)
	}
	if err := st.Put("nope", "x"); err == nil || err.Error() != "data error: nope is not a valid field name" || !errors.Is(err, ErrData) {
		t.Errorf("Put(nope) = %v", err)
	}
	if err := st.Put("opt", int64(1)); err == nil || !errors.Is(err, ErrData) ||
		err.Error() != `data error: invalid Java object for schema Schema{INT32} with type INT32: int64 for field: "opt"` {
		t.Errorf("Put(opt, int64) = %v", err)
	}
	if v, _ := st.GetWithoutDefault("opt"); v != nil {
		t.Errorf("a refused Put stored %v", v)
	}
	for _, tc := range []struct {
		field       string
		get, stored any
	}{
		{"req", "x", "x"},
		{"opt", nil, nil},
		{"def", int64(7), nil}, // the default, though nothing is stored
	} {
		got, err := st.Get(tc.field)
		if err != nil || got != tc.get {
			t.Errorf("Get(%s) = %v, %v; want %v", tc.field, got, err, tc.get)
		}
		stored, err := st.GetWithoutDefault(tc.field)
		if err != nil || stored != tc.stored {
			t.Errorf("GetWithoutDefault(%s) = %v, %v; want %v", tc.field, stored, err, tc.stored)
		}
	}
	if _, err := st.Get("nope"); !errors.Is(err, ErrData) {
		t.Errorf("Get(nope) = %v", err)
	}
	if _, err := st.GetWithoutDefault("nope"); !errors.Is(err, ErrData) {
		t.Errorf("GetWithoutDefault(nope) = %v", err)
	}
	// Put nil clears a field back to its default.
	st.MustPut("def", int64(9))
	if v, _ := st.Get("def"); v != int64(9) {
		t.Errorf("Get(def) = %v", v)
	}
	st.MustPut("def", nil)
	if v, _ := st.Get("def"); v != int64(7) {
		t.Errorf("Get(def) after Put nil = %v", v)
	}
	if err := st.Put("req", nil); err == nil {
		t.Error("Put(req, nil) accepted")
	}
}

func TestStructValidate(t *testing.T) {
	s := NewStruct("s").Field("req", StringSchema).Field("def", &Schema{Type: Int64, Default: int64(7)}).Field("opt", OptionalBytes).MustBuild()
	st := NewStructValue(s)
	err := st.Validate()
	if err == nil || err.Error() != `data error: invalid value: null used for required field: "req", schema type: STRING` || !errors.Is(err, ErrData) {
		t.Fatalf("Validate of an empty struct = %v", err)
	}
	st.MustPut("req", "x")
	if err := st.Validate(); err != nil {
		t.Fatalf("Validate with the required field set = %v (a field with a default may stay unset)", err)
	}
}

func TestStructEqualAndString(t *testing.T) {
	s := NewStruct("s").Field("a", StringSchema).Field("b", OptionalInt8).Field("c", OptionalBytes).MustBuild()
	a := NewStructValue(s).MustPut("a", "x").MustPut("c", []byte("z"))
	b := NewStructValue(s).MustPut("a", "x").MustPut("c", []byte("z"))
	if !a.Equal(b) {
		t.Error("equal structs differ")
	}
	b.MustPut("b", int8(1))
	if a.Equal(b) {
		t.Error("different values equal")
	}
	other := NewStructValue(NewStruct("t").Field("a", StringSchema).Field("b", OptionalInt8).Field("c", OptionalBytes).MustBuild()).MustPut("a", "x").MustPut("c", []byte("z"))
	if a.Equal(other) {
		t.Error("structs of different schemas equal")
	}
	var nilStruct *Struct
	if !nilStruct.Equal(nil) || a.Equal(nil) || nilStruct.Equal(a) {
		t.Error("nil structs")
	}
	if got := b.String(); got != "Struct{a=x,b=1,c=[122]}" {
		t.Errorf("String() = %q", got)
	}
	if got := NewStructValue(s).String(); got != "Struct{}" {
		t.Errorf("String() = %q", got)
	}
	if got := fmt.Sprint(NewStructValue(s).MustPut("b", int8(2))); got != "Struct{b=2}" {
		t.Errorf("Sprint = %q", got)
	}
}

func TestNewStructValuePanics(t *testing.T) {
	for _, s := range []*Schema{nil, Int8Schema, ArrayOf(Int8Schema)} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("NewStructValue(%v) did not panic", s)
				}
			}()
			NewStructValue(s)
		}()
	}
	defer func() {
		if recover() == nil {
			t.Error("MustPut of a bad value did not panic")
		}
	}()
	NewStructValue(NewStruct("").Field("a", Int8Schema).MustBuild()).MustPut("a", "x")
}

func TestHeaders(t *testing.T) {
	h := Headers{{Key: "a", Value: "1"}, {Key: "b", Value: "2"}, {Key: "a", Value: "3", Schema: StringSchema}}
	last, ok := h.Last("a")
	if !ok || last.Value != "3" || last.Schema != StringSchema {
		t.Errorf("Last(a) = %+v, %v", last, ok)
	}
	if _, ok := h.Last("z"); ok {
		t.Error("Last(z) found")
	}
	if _, ok := Headers(nil).Last("a"); ok {
		t.Error("Last on nil headers found")
	}
	w := h.Without("a")
	if len(w) != 1 || w[0].Key != "b" || len(h) != 3 {
		t.Errorf("Without(a) = %v (original %v)", w, h)
	}
	if w := h.Without("a", "b"); len(w) != 0 || w == nil {
		t.Errorf("Without(a, b) = %#v", w)
	}
	if w := h.Without(); len(w) != 3 {
		t.Errorf("Without() = %v", w)
	}
	c := h.Clone()
	c[0].Value = "changed"
	if h[0].Value != "1" {
		t.Error("Clone shares the slice")
	}
	if Headers(nil).Clone() != nil {
		t.Error("Clone of nil is not nil")
	}
}

func TestSinkRecordOffset(t *testing.T) {
	var r SinkRecord
	if r.Offset() != -1 {
		t.Errorf("Offset() without KafkaOffset = %d", r.Offset())
	}
	off := int64(42)
	r.KafkaOffset = &off
	if r.Offset() != 42 {
		t.Errorf("Offset() = %d", r.Offset())
	}
	if p := PartitionOf(3); *p != 3 {
		t.Errorf("PartitionOf = %d", *p)
	}
}

func TestRetriable(t *testing.T) {
	base := errors.New("broker down")
	err := Retriable(base)
	if !IsRetriable(err) || !errors.Is(err, base) || err.Error() != "retriable: broker down" {
		t.Errorf("Retriable = %v", err)
	}
	wrapped := fmt.Errorf("put: %w", err)
	if !IsRetriable(wrapped) {
		t.Error("a wrapped retriable error is not retriable")
	}
	if IsRetriable(base) || IsRetriable(nil) {
		t.Error("plain errors are retriable")
	}
	if Retriable(nil) != nil {
		t.Error("Retriable(nil) is not nil")
	}
	if got := (&RetriableError{}).Error(); got != "retriable" {
		t.Errorf("RetriableError{}.Error() = %q", got)
	}
}

func TestPluginNames(t *testing.T) {
	p := Plugin{Class: "com.example.X", Aliases: []string{"X"}}
	names := p.Names()
	if fmt.Sprint(names) != "[com.example.X X]" {
		t.Errorf("Names() = %v", names)
	}
	names[0] = "changed"
	if p.Class != "com.example.X" || p.Names()[0] != "com.example.X" {
		t.Error("Names shares state with the plugin")
	}
}

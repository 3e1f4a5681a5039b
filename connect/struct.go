package connect

import (
	"fmt"
	"strings"
)

// Struct is a value of a STRUCT schema: one value per field, in the
// schema's field order.
type Struct struct {
	schema *Schema
	values []any
}

// NewStructValue makes an empty struct of schema s (a STRUCT schema).
func NewStructValue(s *Schema) *Struct {
	if s == nil || s.Type != Struct_ {
		panic(fmt.Sprintf("connect: NewStructValue needs a STRUCT schema, got %v", s))
	}
	return &Struct{schema: s, values: make([]any, len(s.Fields))}
}

// Schema is the struct's schema.
func (st *Struct) Schema() *Schema { return st.schema }

// Put sets a field's value after checking it against the field's schema.
func (st *Struct) Put(name string, v any) error {
	f, ok := st.schema.Field(name)
	if !ok {
		return fmt.Errorf("%w: %s is not a valid field name", ErrData, name)
	}
	if err := validate(name, f.Schema, v); err != nil {
		return err
	}
	st.values[f.Index] = v
	return nil
}

// MustPut is Put for values known to match (panics otherwise).
func (st *Struct) MustPut(name string, v any) *Struct {
	if err := st.Put(name, v); err != nil {
		panic(err)
	}
	return st
}

// Get is a field's value, or the field's default when unset.
func (st *Struct) Get(name string) (any, error) {
	f, ok := st.schema.Field(name)
	if !ok {
		return nil, fmt.Errorf("%w: %s is not a valid field name", ErrData, name)
	}
	return st.GetField(f), nil
}

// GetField is a field's value, or its default when unset.
func (st *Struct) GetField(f Field) any {
	v := st.values[f.Index]
	if v == nil {
		return f.Schema.Default
	}
	return v
}

// GetWithoutDefault is a field's value as set (nil when unset).
func (st *Struct) GetWithoutDefault(name string) (any, error) {
	f, ok := st.schema.Field(name)
	if !ok {
		return nil, fmt.Errorf("%w: %s is not a valid field name", ErrData, name)
	}
	return st.values[f.Index], nil
}

// Validate checks every field against its schema (required fields set).
func (st *Struct) Validate() error {
	for _, f := range st.schema.Fields {
		if err := validate(f.Name, f.Schema, st.values[f.Index]); err != nil {
			return err
		}
	}
	return nil
}

// Equal compares schema and values.
func (st *Struct) Equal(o *Struct) bool {
	if st == nil || o == nil {
		return st == o
	}
	if !st.schema.Equal(o.schema) {
		return false
	}
	for i := range st.values {
		if !valuesEqual(st.values[i], o.values[i]) {
			return false
		}
	}
	return true
}

// String renders the struct as Kafka's Struct.toString does.
func (st *Struct) String() string {
	var b strings.Builder
	b.WriteString("Struct{")
	first := true
	for _, f := range st.schema.Fields {
		v := st.values[f.Index]
		if v == nil {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		fmt.Fprintf(&b, "%s=%v", f.Name, v)
	}
	b.WriteByte('}')
	return b.String()
}

package connect

import (
	"errors"
	"fmt"
	"math/big"
	"reflect"
	"sort"
	"strings"
	"time"
)

// Type is a schema's type, with Kafka Connect's names.
type Type string

const (
	Int8    Type = "INT8"
	Int16   Type = "INT16"
	Int32   Type = "INT32"
	Int64   Type = "INT64"
	Float32 Type = "FLOAT32"
	Float64 Type = "FLOAT64"
	Boolean Type = "BOOLEAN"
	String  Type = "STRING"
	Bytes   Type = "BYTES"
	Array   Type = "ARRAY"
	Map     Type = "MAP"
	Struct_ Type = "STRUCT"
)

// IsPrimitive reports whether t has no nested schemas.
func (t Type) IsPrimitive() bool {
	switch t {
	case Array, Map, Struct_:
		return false
	}
	return true
}

// Types lists every type, for validation and docs.
var Types = []Type{Int8, Int16, Int32, Int64, Float32, Float64, Boolean, String, Bytes, Array, Map, Struct_}

// ParseType reads a type by Kafka's name, case-insensitive.
func ParseType(s string) (Type, error) {
	u := Type(strings.ToUpper(s))
	for _, t := range Types {
		if t == u {
			return t, nil
		}
	}
	return "", fmt.Errorf("unknown schema type %q", s)
}

// Schema describes a value, as Kafka Connect's Schema does. Schemas are
// values to build and then share: nothing changes one after it is used.
type Schema struct {
	Type       Type
	Optional   bool
	Default    any // a value of this schema, or nil
	Name       string
	Version    *int32
	Doc        string
	Parameters map[string]string

	Fields      []Field // STRUCT
	KeySchema   *Schema // MAP
	ValueSchema *Schema // ARRAY and MAP
}

// Field is a named, ordered member of a struct schema.
type Field struct {
	Name   string
	Index  int
	Schema *Schema
}

// Field finds a struct schema's field by name.
func (s *Schema) Field(name string) (Field, bool) {
	for _, f := range s.Fields {
		if f.Name == name {
			return f, true
		}
	}
	return Field{}, false
}

// The logical types Kafka Connect defines: a name over a primitive type.
const (
	DecimalName   = "org.apache.kafka.connect.data.Decimal"
	DecimalScale  = "scale"
	DateName      = "org.apache.kafka.connect.data.Date"
	TimeName      = "org.apache.kafka.connect.data.Time"
	TimestampName = "org.apache.kafka.connect.data.Timestamp"
)

// The primitive schemas, required and optional, as Kafka's Schema constants.
var (
	Int8Schema      = &Schema{Type: Int8}
	Int16Schema     = &Schema{Type: Int16}
	Int32Schema     = &Schema{Type: Int32}
	Int64Schema     = &Schema{Type: Int64}
	Float32Schema   = &Schema{Type: Float32}
	Float64Schema   = &Schema{Type: Float64}
	BooleanSchema   = &Schema{Type: Boolean}
	StringSchema    = &Schema{Type: String}
	BytesSchema     = &Schema{Type: Bytes}
	OptionalInt8    = &Schema{Type: Int8, Optional: true}
	OptionalInt16   = &Schema{Type: Int16, Optional: true}
	OptionalInt32   = &Schema{Type: Int32, Optional: true}
	OptionalInt64   = &Schema{Type: Int64, Optional: true}
	OptionalFloat32 = &Schema{Type: Float32, Optional: true}
	OptionalFloat64 = &Schema{Type: Float64, Optional: true}
	OptionalBoolean = &Schema{Type: Boolean, Optional: true}
	OptionalString  = &Schema{Type: String, Optional: true}
	OptionalBytes   = &Schema{Type: Bytes, Optional: true}
)

// PrimitiveSchema is the shared required or optional schema of a primitive type.
func PrimitiveSchema(t Type, optional bool) *Schema {
	return &Schema{Type: t, Optional: optional}
}

// DecimalSchema is Kafka's Decimal logical type: BYTES holding a
// two's-complement big-endian unscaled value, with its scale.
func DecimalSchema(scale int) *Schema {
	return &Schema{Type: Bytes, Name: DecimalName, Version: ptr32(1), Parameters: map[string]string{DecimalScale: fmt.Sprint(scale)}}
}

// DateSchema is Kafka's Date: INT32 days since the epoch; the value is a time.Time.
func DateSchema() *Schema { return &Schema{Type: Int32, Name: DateName, Version: ptr32(1)} }

// TimeSchema is Kafka's Time: INT32 milliseconds of the day; the value is a time.Time.
func TimeSchema() *Schema { return &Schema{Type: Int32, Name: TimeName, Version: ptr32(1)} }

// TimestampSchema is Kafka's Timestamp: INT64 milliseconds since the epoch; the value is a time.Time.
func TimestampSchema() *Schema { return &Schema{Type: Int64, Name: TimestampName, Version: ptr32(1)} }

func ptr32(v int32) *int32 { return &v }

// ArrayOf is an ARRAY schema.
func ArrayOf(elem *Schema) *Schema { return &Schema{Type: Array, ValueSchema: elem} }

// MapOf is a MAP schema.
func MapOf(key, value *Schema) *Schema { return &Schema{Type: Map, KeySchema: key, ValueSchema: value} }

// StructBuilder builds a STRUCT schema field by field.
type StructBuilder struct {
	s   Schema
	err error
}

// NewStruct starts a struct schema with a name (may be empty).
func NewStruct(name string) *StructBuilder {
	return &StructBuilder{s: Schema{Type: Struct_, Name: name}}
}

// Field adds a field; a duplicate name is an error reported by Build.
func (b *StructBuilder) Field(name string, s *Schema) *StructBuilder {
	if _, dup := b.s.Field(name); dup && b.err == nil {
		b.err = fmt.Errorf("cannot create field because of field name duplication %s", name)
	}
	b.s.Fields = append(b.s.Fields, Field{Name: name, Index: len(b.s.Fields), Schema: s})
	return b
}

// Optional makes the struct schema optional.
func (b *StructBuilder) Optional() *StructBuilder { b.s.Optional = true; return b }

// Doc sets the schema's documentation.
func (b *StructBuilder) Doc(doc string) *StructBuilder { b.s.Doc = doc; return b }

// Version sets the schema's version.
func (b *StructBuilder) Version(v int32) *StructBuilder { b.s.Version = &v; return b }

// Build returns the schema, or the first error.
func (b *StructBuilder) Build() (*Schema, error) {
	if b.err != nil {
		return nil, b.err
	}
	s := b.s
	return &s, nil
}

// MustBuild is Build for schemas fixed in code.
func (b *StructBuilder) MustBuild() *Schema {
	s, err := b.Build()
	if err != nil {
		panic(err)
	}
	return s
}

// Equal reports whether two schemas are the same, as Kafka's ConnectSchema.equals.
func (s *Schema) Equal(o *Schema) bool {
	if s == o {
		return true
	}
	if s == nil || o == nil {
		return false
	}
	if s.Type != o.Type || s.Optional != o.Optional || s.Name != o.Name || s.Doc != o.Doc ||
		!equalVersion(s.Version, o.Version) || !equalParams(s.Parameters, o.Parameters) ||
		!valuesEqual(s.Default, o.Default) || len(s.Fields) != len(o.Fields) {
		return false
	}
	for i := range s.Fields {
		if s.Fields[i].Name != o.Fields[i].Name || !s.Fields[i].Schema.Equal(o.Fields[i].Schema) {
			return false
		}
	}
	return s.KeySchema.Equal(o.KeySchema) && s.ValueSchema.Equal(o.ValueSchema)
}

func equalVersion(a, b *int32) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func equalParams(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// String is a short description for errors and logs.
func (s *Schema) String() string {
	if s == nil {
		return "null"
	}
	if s.Name != "" {
		return fmt.Sprintf("Schema{%s:%s}", s.Name, s.Type)
	}
	return fmt.Sprintf("Schema{%s}", s.Type)
}

// ErrData marks a value that does not match its schema (Kafka's DataException).
var ErrData = errors.New("data error")

// Validate checks that v is a value of schema s, as ConnectSchema.validateValue.
func Validate(s *Schema, v any) error {
	return validate("", s, v)
}

func validate(field string, s *Schema, v any) error {
	if s == nil {
		return nil
	}
	if v == nil {
		if s.Optional || s.Default != nil {
			return nil
		}
		return dataErr(field, "invalid value: null used for required field: %q, schema type: %s", field, s.Type)
	}
	if err := checkLogical(field, s, v); err != nil || isLogical(s) {
		return err
	}
	switch s.Type {
	case Array:
		items, ok := v.([]any)
		if !ok {
			return typeErr(field, s, v)
		}
		for _, item := range items {
			if err := validate(field, s.ValueSchema, item); err != nil {
				return err
			}
		}
		return nil
	case Map:
		m, ok := v.(map[any]any)
		if !ok {
			return typeErr(field, s, v)
		}
		for k, item := range m {
			if err := validate(field, s.KeySchema, k); err != nil {
				return err
			}
			if err := validate(field, s.ValueSchema, item); err != nil {
				return err
			}
		}
		return nil
	case Struct_:
		st, ok := v.(*Struct)
		if !ok {
			return typeErr(field, s, v)
		}
		if !st.Schema().Equal(s) {
			return dataErr(field, "struct schemas do not match")
		}
		return st.Validate()
	}
	if !primitiveMatches(s.Type, v) {
		return typeErr(field, s, v)
	}
	return nil
}

func isLogical(s *Schema) bool {
	switch s.Name {
	case DecimalName, DateName, TimeName, TimestampName:
		return true
	}
	return false
}

func checkLogical(field string, s *Schema, v any) error {
	switch s.Name {
	case DecimalName:
		if _, ok := v.(Decimal); ok {
			return nil
		}
		return typeErr(field, s, v)
	case DateName, TimeName, TimestampName:
		if _, ok := v.(time.Time); ok {
			return nil
		}
		return typeErr(field, s, v)
	}
	return nil
}

func primitiveMatches(t Type, v any) bool {
	switch v.(type) {
	case int8:
		return t == Int8
	case int16:
		return t == Int16
	case int32:
		return t == Int32
	case int64:
		return t == Int64
	case float32:
		return t == Float32
	case float64:
		return t == Float64
	case bool:
		return t == Boolean
	case string:
		return t == String
	case []byte:
		return t == Bytes
	}
	return false
}

func typeErr(field string, s *Schema, v any) error {
	where := ""
	if field != "" {
		where = fmt.Sprintf(" for field: %q", field)
	}
	return fmt.Errorf("%w: invalid Java object for schema %s with type %s: %T%s", ErrData, s, s.Type, v, where)
}

func dataErr(field, format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrData}, args...)...)
}

// Decimal is a value of the Decimal logical type: an unscaled integer and a scale.
type Decimal struct {
	Unscaled *big.Int
	Scale    int
}

// String renders the decimal in plain notation.
func (d Decimal) String() string {
	if d.Unscaled == nil {
		return "0"
	}
	r := new(big.Rat).SetFrac(d.Unscaled, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(d.Scale)), nil))
	return r.FloatString(max(d.Scale, 0))
}

// valuesEqual compares two Connect values deeply.
func valuesEqual(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case []byte:
		y, ok := b.([]byte)
		return ok && string(x) == string(y)
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !valuesEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[any]any:
		y, ok := b.(map[any]any)
		return ok && mapsEqual(x, y)
	case map[string]any:
		y, ok := b.(map[string]any)
		return ok && mapsEqual(x, y)
	case *Struct:
		y, ok := b.(*Struct)
		return ok && x.Equal(y)
	case Decimal:
		y, ok := b.(Decimal)
		return ok && x.Scale == y.Scale && unscaled(x).Cmp(unscaled(y)) == 0
	case time.Time:
		y, ok := b.(time.Time)
		return ok && x.Equal(y)
	}
	// Values outside the data model (a []string, a struct holding a map)
	// are not comparable with ==, which would panic; they are not equal.
	ta, tb := reflect.TypeOf(a), reflect.TypeOf(b)
	if ta != tb || !ta.Comparable() {
		return false
	}
	return a == b
}

// unscaled reads a Decimal built without its big.Int as zero, as String does.
func unscaled(d Decimal) *big.Int {
	if d.Unscaled == nil {
		return new(big.Int)
	}
	return d.Unscaled
}

// ValuesEqual compares two Connect values deeply (structs, maps, arrays, bytes).
func ValuesEqual(a, b any) bool { return valuesEqual(a, b) }

// sortedKeys is for stable output of maps with string keys.
func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// mapsEqual compares two maps' values deeply.
func mapsEqual[K comparable](x, y map[K]any) bool {
	if len(x) != len(y) {
		return false
	}
	for k, v := range x {
		w, ok := y[k]
		if !ok || !valuesEqual(v, w) {
			return false
		}
	}
	return true
}

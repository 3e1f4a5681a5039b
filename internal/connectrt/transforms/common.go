package transforms

import (
	"errors"
	"fmt"
	"sync"

	"github.com/samsa-io/samsa/connect"
)

// dataError is Kafka's DataException: the record does not fit what the
// transform needs. It matches connect.ErrData with errors.Is while its
// text stays Kafka's message alone.
type dataError struct{ msg string }

func (e *dataError) Error() string        { return e.msg }
func (e *dataError) Is(target error) bool { return target == connect.ErrData }

func dataErrorf(format string, args ...any) error {
	return &dataError{msg: fmt.Sprintf(format, args...)}
}

// side is the half of a record a Key or Value variant works on.
type side int

const (
	keySide side = iota
	valueSide
)

func (s side) schema(r connect.Record) *connect.Schema {
	if s == keySide {
		return r.KeySchema
	}
	return r.ValueSchema
}

func (s side) value(r connect.Record) any {
	if s == keySide {
		return r.Key
	}
	return r.Value
}

// with is r with this side replaced, as Kafka's newRecord.
func (s side) with(r connect.Record, schema *connect.Schema, value any) connect.Record {
	if s == keySide {
		r.KeySchema, r.Key = schema, value
	} else {
		r.ValueSchema, r.Value = schema, value
	}
	return r
}

// className is the Java class name of a Go value's type, for messages
// that name "found" types as Kafka does.
func className(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any, map[any]any:
		return "java.util.HashMap"
	case *connect.Struct:
		return "org.apache.kafka.connect.data.Struct"
	case []any:
		return "java.util.ArrayList"
	case string:
		return "java.lang.String"
	case int8:
		return "java.lang.Byte"
	case int16:
		return "java.lang.Short"
	case int32:
		return "java.lang.Integer"
	case int64:
		return "java.lang.Long"
	case float32:
		return "java.lang.Float"
	case float64:
		return "java.lang.Double"
	case bool:
		return "java.lang.Boolean"
	case []byte:
		return "[B"
	}
	return fmt.Sprintf("%T", v)
}

func requireMap(v any, purpose string) (map[string]any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, dataErrorf("Only Map objects supported in absence of schema for [%s], found: %s", purpose, className(v))
	}
	return m, nil
}

func requireMapOrNil(v any, purpose string) (map[string]any, error) {
	if v == nil {
		return nil, nil
	}
	return requireMap(v, purpose)
}

func requireStruct(v any, purpose string) (*connect.Struct, error) {
	st, ok := v.(*connect.Struct)
	if !ok || st == nil {
		return nil, dataErrorf("Only Struct objects supported for [%s], found: %s", purpose, className(v))
	}
	return st, nil
}

func requireStructOrNil(v any, purpose string) (*connect.Struct, error) {
	if v == nil {
		return nil, nil
	}
	return requireStruct(v, purpose)
}

func requireSchema(s *connect.Schema, purpose string) error {
	if s == nil {
		return dataErrorf("Schema required for [%s]", purpose)
	}
	return nil
}

// copyMap is a shallow copy, as Kafka's new HashMap<>(value).
func copyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}

// structBasics starts a STRUCT schema with the source's name, version,
// doc and parameters, as Kafka's SchemaUtil.copySchemaBasics (which does
// not copy optionality or the default).
func structBasics(src *connect.Schema) *schemaBuilder {
	return &schemaBuilder{s: connect.Schema{
		Type: connect.Struct_, Name: src.Name, Version: src.Version, Doc: src.Doc, Parameters: src.Parameters,
	}}
}

// basics copies a schema of any type the same way; an ARRAY keeps its
// element schema.
func basics(src *connect.Schema) connect.Schema {
	out := connect.Schema{Type: src.Type, Name: src.Name, Version: src.Version, Doc: src.Doc, Parameters: src.Parameters}
	if src.Type == connect.Array {
		out.ValueSchema = src.ValueSchema
	}
	return out
}

// schemaBuilder adds fields to a struct schema, failing on a duplicate
// name as Kafka's SchemaBuilder.field.
type schemaBuilder struct {
	s   connect.Schema
	err error
}

func (b *schemaBuilder) field(name string, s *connect.Schema) {
	if b.err != nil {
		return
	}
	if _, dup := b.s.Field(name); dup {
		b.err = &dataError{msg: "Cannot create field because of field name duplication " + name}
		return
	}
	b.s.Fields = append(b.s.Fields, connect.Field{Name: name, Index: len(b.s.Fields), Schema: s})
}

func (b *schemaBuilder) build() (*connect.Schema, error) {
	if b.err != nil {
		return nil, b.err
	}
	s := b.s
	return &s, nil
}

// schemaCache maps an input schema to the schema a transform built from
// it, as Kafka's SynchronizedCache(LRUCache(16)): schemas are compared as
// Kafka's equals does, so converters that decode a fresh *Schema per
// record still hit, and the bound keeps a stream of ever-new schemas
// from growing it.
type schemaCache struct {
	mu      sync.Mutex
	entries []cacheEntry // most recently used first
}

type cacheEntry struct{ in, out *connect.Schema }

const schemaCacheSize = 16

func (c *schemaCache) get(in *connect.Schema) *connect.Schema {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, e := range c.entries {
		if e.in == in || e.in.Equal(in) {
			copy(c.entries[1:i+1], c.entries[:i])
			c.entries[0] = e
			return e.out
		}
	}
	return nil
}

func (c *schemaCache) put(in, out *connect.Schema) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) < schemaCacheSize {
		c.entries = append(c.entries, cacheEntry{})
	}
	copy(c.entries[1:], c.entries[:len(c.entries)-1])
	c.entries[0] = cacheEntry{in: in, out: out}
}

// getOrBuild returns the cached schema for in, building it on a miss.
func (c *schemaCache) getOrBuild(in *connect.Schema, build func(*connect.Schema) (*connect.Schema, error)) (*connect.Schema, error) {
	if out := c.get(in); out != nil {
		return out, nil
	}
	out, err := build(in)
	if err != nil {
		return nil, err
	}
	c.put(in, out)
	return out, nil
}

// fieldValue is a struct field's value honouring
// replace.null.with.default, as every Kafka transform's getFieldValue.
func fieldValue(st *connect.Struct, f connect.Field, withDefault bool) any {
	if withDefault {
		return st.GetField(f)
	}
	v, _ := st.GetWithoutDefault(f.Name)
	return v
}

// fieldOf finds a struct's field by name: a record whose struct does not
// have the fields its record schema names fails here, as Kafka's
// Struct.get does, rather than reading another field.
func fieldOf(st *connect.Struct, name string) (connect.Field, error) {
	f, ok := st.Schema().Field(name)
	if !ok {
		return connect.Field{}, dataErrorf("%s is not a valid field name", name)
	}
	return f, nil
}

// newStruct fills a new struct of schema out, field by field, from get.
func newStruct(out *connect.Schema, get func(f connect.Field) (any, error)) (*connect.Struct, error) {
	st := connect.NewStructValue(out)
	for _, f := range out.Fields {
		v, err := get(f)
		if err != nil {
			return nil, err
		}
		if err := st.Put(f.Name, v); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// The replace.null.with.default config many transforms share (KIP-1040).
const replaceNullWithDefaultConfig = "replace.null.with.default"

var replaceNullWithDefaultKey = connect.ConfigKey{
	Name: replaceNullWithDefaultConfig, Type: connect.TypeBoolean, Default: true, Importance: connect.Medium,
	Documentation: "Whether to replace fields that have a default value and that are null to the default value. When set to true, the default value is used, otherwise null is used.",
}

// nonEmptyList is Kafka's NonEmptyListValidator.
type nonEmptyList struct{}

func (nonEmptyList) Validate(name string, v any) error {
	if l, _ := v.([]string); len(l) == 0 {
		return errors.New("Empty list")
	}
	return nil
}

// parseConfig reads a transform's props by its definition.
func parseConfig(def *connect.ConfigDef, props map[string]string) (connect.Config, error) {
	return def.Parse(props)
}

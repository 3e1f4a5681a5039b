package convert

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/samsa-io/samsa/connect"
)

// FromConnectData writes value (of schema, or schemaless when schema is
// nil) as JSON; nil with no schema is nil (a tombstone stays a tombstone).
func (c *JSONConverter) FromConnectData(_ string, _ connect.Headers, schema *connect.Schema, value any) ([]byte, error) {
	if schema == nil && value == nil {
		return nil, nil
	}
	var b []byte
	var err error
	if c.schemasEnable {
		b = append(b, `{"schema":`...)
		if b, err = c.appendSchema(b, schema); err != nil {
			return nil, err
		}
		b = append(b, `,"payload":`...)
	}
	if b, err = c.appendValue(b, schema, value); err != nil {
		return nil, err
	}
	if c.schemasEnable {
		b = append(b, '}')
	}
	return b, nil
}

// jsonTypeNames are JsonSchema's type names.
var jsonTypeNames = map[connect.Type]string{
	connect.Boolean: "boolean", connect.Int8: "int8", connect.Int16: "int16", connect.Int32: "int32",
	connect.Int64: "int64", connect.Float32: "float", connect.Float64: "double", connect.Bytes: "bytes",
	connect.String: "string", connect.Array: "array", connect.Map: "map", connect.Struct_: "struct",
}

// appendSchema writes a schema as Kafka's JsonConverter.asJsonSchema: the
// type and what it nests, then optional, name, version, doc, parameters
// and default, in that order.
func (c *JSONConverter) appendSchema(b []byte, s *connect.Schema) ([]byte, error) {
	if s == nil {
		return append(b, "null"...), nil
	}
	if cached, ok := c.fromConnectJSON.get(s); ok {
		return append(b, cached...), nil
	}
	start := len(b)
	b, err := c.appendSchemaObject(b, s, "")
	if err != nil {
		return nil, err
	}
	c.fromConnectJSON.put(s, bytes.Clone(b[start:]))
	return b, nil
}

// appendSchemaObject writes s; field, when not "", is a struct field's
// name, written last as Kafka appends it to the field's schema.
func (c *JSONConverter) appendSchemaObject(b []byte, s *connect.Schema, field string) ([]byte, error) {
	name, ok := jsonTypeNames[s.Type]
	if !ok {
		return nil, dataErrorf("Couldn't translate unsupported schema type %s.", s)
	}
	b = append(b, `{"type":`...)
	b = appendJSONString(b, name)
	var err error
	switch s.Type {
	case connect.Array:
		b = append(b, `,"items":`...)
		if b, err = c.appendNested(b, s.ValueSchema); err != nil {
			return nil, err
		}
	case connect.Map:
		b = append(b, `,"keys":`...)
		if b, err = c.appendNested(b, s.KeySchema); err != nil {
			return nil, err
		}
		b = append(b, `,"values":`...)
		if b, err = c.appendNested(b, s.ValueSchema); err != nil {
			return nil, err
		}
	case connect.Struct_:
		b = append(b, `,"fields":[`...)
		for i, f := range s.Fields {
			if i > 0 {
				b = append(b, ',')
			}
			if f.Schema == nil {
				return nil, dataErrorf("field %q has no schema", f.Name)
			}
			if b, err = c.appendSchemaObject(b, f.Schema, f.Name); err != nil {
				return nil, err
			}
		}
		b = append(b, ']')
	}
	b = append(b, `,"optional":`...)
	b = strconv.AppendBool(b, s.Optional)
	if b, err = c.appendSchemaMeta(b, s); err != nil {
		return nil, err
	}
	if field != "" {
		b = append(b, `,"field":`...)
		b = appendJSONString(b, field)
	}
	return append(b, '}'), nil
}

func (c *JSONConverter) appendNested(b []byte, s *connect.Schema) ([]byte, error) {
	if s == nil {
		return append(b, "null"...), nil
	}
	return c.appendSchemaObject(b, s, "")
}

// appendSchemaMeta writes name, version, doc, parameters (sorted by key:
// Go maps have no order) and default.
func (c *JSONConverter) appendSchemaMeta(b []byte, s *connect.Schema) ([]byte, error) {
	if s.Name != "" {
		b = append(b, `,"name":`...)
		b = appendJSONString(b, s.Name)
	}
	if s.Version != nil {
		b = append(b, `,"version":`...)
		b = strconv.AppendInt(b, int64(*s.Version), 10)
	}
	if s.Doc != "" {
		b = append(b, `,"doc":`...)
		b = appendJSONString(b, s.Doc)
	}
	if s.Parameters != nil {
		b = append(b, `,"parameters":{`...)
		for i, k := range sortedStrings(s.Parameters) {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, k)
			b = append(b, ':')
			b = appendJSONString(b, s.Parameters[k])
		}
		b = append(b, '}')
	}
	if s.Default != nil {
		b = append(b, `,"default":`...)
		var err error
		if b, err = c.appendValue(b, s, s.Default); err != nil {
			return nil, err
		}
	}
	return b, nil
}

func sortedStrings[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// appendValue writes a value as Kafka's JsonConverter.convertToJson.
func (c *JSONConverter) appendValue(b []byte, s *connect.Schema, v any) ([]byte, error) {
	if v == nil {
		switch {
		case s == nil:
			return append(b, "null"...), nil
		case s.Default != nil && c.replaceNull:
			return c.appendValue(b, s, s.Default)
		case s.Optional:
			return append(b, "null"...), nil
		}
		return nil, dataErrorf("Conversion error: null value for field that is required and has no default value")
	}
	if name := logicalName(s); name != "" {
		return c.appendLogical(b, s, name, v)
	}
	t, err := typeOf(s, v)
	if err != nil {
		return nil, err
	}
	switch t {
	case connect.Array:
		return c.appendArray(b, s, v)
	case connect.Map:
		return c.appendMap(b, s, v)
	case connect.Struct_:
		return c.appendStruct(b, s, v)
	}
	return appendPrimitive(b, s, t, v)
}

// typeOf is the schema's type, or for a schemaless value the type its Go
// type stands for (Kafka's ConnectSchema.schemaType).
func typeOf(s *connect.Schema, v any) (connect.Type, error) {
	if s != nil {
		return s.Type, nil
	}
	switch v.(type) {
	case int8:
		return connect.Int8, nil
	case int16:
		return connect.Int16, nil
	case int32:
		return connect.Int32, nil
	case int64:
		return connect.Int64, nil
	case float32:
		return connect.Float32, nil
	case float64:
		return connect.Float64, nil
	case bool:
		return connect.Boolean, nil
	case string:
		return connect.String, nil
	case []byte:
		return connect.Bytes, nil
	case []any:
		return connect.Array, nil
	case map[string]any, map[any]any:
		return connect.Map, nil
	case *connect.Struct:
		return connect.Struct_, nil
	}
	return "", dataErrorf("Go type %T does not have corresponding schema type.", v)
}

func invalidType(s *connect.Schema, v any) error {
	what := "unknown schema"
	if s != nil {
		what = string(s.Type)
	}
	return dataErrorf("Invalid type for %s: %T", what, v)
}

func appendPrimitive(b []byte, s *connect.Schema, t connect.Type, v any) ([]byte, error) {
	ok := true
	switch t {
	case connect.Int8:
		var x int8
		x, ok = v.(int8)
		b = strconv.AppendInt(b, int64(x), 10)
	case connect.Int16:
		var x int16
		x, ok = v.(int16)
		b = strconv.AppendInt(b, int64(x), 10)
	case connect.Int32:
		var x int32
		x, ok = v.(int32)
		b = strconv.AppendInt(b, int64(x), 10)
	case connect.Int64:
		var x int64
		x, ok = v.(int64)
		b = strconv.AppendInt(b, x, 10)
	case connect.Float32:
		var x float32
		x, ok = v.(float32)
		b = appendJavaFloat(b, x)
	case connect.Float64:
		var x float64
		x, ok = v.(float64)
		b = appendJavaDouble(b, x)
	case connect.Boolean:
		var x bool
		x, ok = v.(bool)
		b = strconv.AppendBool(b, x)
	case connect.String:
		var x string
		x, ok = v.(string)
		b = appendJSONString(b, x)
	case connect.Bytes:
		var x []byte
		x, ok = v.([]byte)
		b = appendBase64(b, x)
	default:
		return nil, dataErrorf("Couldn't convert %v to JSON.", v)
	}
	if !ok {
		return nil, invalidType(s, v)
	}
	return b, nil
}

func (c *JSONConverter) appendLogical(b []byte, s *connect.Schema, name string, v any) ([]byte, error) {
	if name == connect.DecimalName {
		d, ok := v.(connect.Decimal)
		if !ok {
			return nil, dataErrorf("Invalid type for Decimal, expected connect.Decimal but was %T", v)
		}
		if c.decimalNumeric {
			return append(b, bigDecimalString(d.Unscaled, d.Scale)...), nil
		}
		raw, err := decimalToBytes(s, d)
		if err != nil {
			return nil, err
		}
		return appendBase64(b, raw), nil
	}
	t, ok := v.(time.Time)
	if !ok {
		return nil, dataErrorf("Invalid type for %s, expected time.Time but was %T", shortLogical(name), v)
	}
	switch name {
	case connect.DateName:
		days, err := dateToDays(t)
		if err != nil {
			return nil, err
		}
		return strconv.AppendInt(b, int64(days), 10), nil
	case connect.TimeName:
		ms, err := timeToMillis(t)
		if err != nil {
			return nil, err
		}
		return strconv.AppendInt(b, int64(ms), 10), nil
	}
	return strconv.AppendInt(b, t.UnixMilli(), 10), nil
}

func shortLogical(name string) string { return name[len("org.apache.kafka.connect.data."):] }

func (c *JSONConverter) appendArray(b []byte, s *connect.Schema, v any) ([]byte, error) {
	items, ok := v.([]any)
	if !ok {
		return nil, invalidType(s, v)
	}
	var elem *connect.Schema
	if s != nil {
		elem = s.ValueSchema
	}
	b = append(b, '[')
	for i, item := range items {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = c.appendValue(b, elem, item); err != nil {
			return nil, err
		}
	}
	return append(b, ']'), nil
}

// mapEntry is one map entry written out, for sorting: Go maps have no
// order, and the same record must be the same bytes every time.
type mapEntry struct{ key, value []byte }

// appendMap writes a map as an object when its keys are strings, else as
// an array of [key, value] pairs, as Kafka does.
func (c *JSONConverter) appendMap(b []byte, s *connect.Schema, v any) ([]byte, error) {
	var keySchema, valueSchema *connect.Schema
	if s != nil {
		keySchema, valueSchema = s.KeySchema, s.ValueSchema
	}
	var entries []mapEntry
	objectMode := true
	add := func(k, val any) error {
		kb, err := c.appendValue(nil, keySchema, k)
		if err != nil {
			return err
		}
		vb, err := c.appendValue(nil, valueSchema, val)
		if err != nil {
			return err
		}
		entries = append(entries, mapEntry{key: kb, value: vb})
		return nil
	}
	switch m := v.(type) {
	case map[string]any:
		for k, val := range m {
			if err := add(k, val); err != nil {
				return nil, err
			}
		}
	case map[any]any:
		for k, val := range m {
			if _, isString := k.(string); !isString {
				objectMode = false
			}
			if err := add(k, val); err != nil {
				return nil, err
			}
		}
	default:
		return nil, invalidType(s, v)
	}
	if s != nil {
		objectMode = keySchema != nil && keySchema.Type == connect.String
	}
	sort.Slice(entries, func(i, j int) bool { return bytes.Compare(entries[i].key, entries[j].key) < 0 })
	if objectMode {
		return appendMapObject(b, entries), nil
	}
	b = append(b, '[')
	for i, e := range entries {
		if i > 0 {
			b = append(b, ',')
		}
		if c.mapEntriesAsObjects {
			b = append(append(append(append(b, `{"key":`...), e.key...), `,"value":`...), e.value...)
			b = append(b, '}')
			continue
		}
		b = append(b, '[')
		b = append(append(append(b, e.key...), ','), e.value...)
		b = append(b, ']')
	}
	return append(b, ']'), nil
}

// appendMapObject writes entries whose keys are JSON strings (or null,
// which Kafka's asText turns into "null") as an object.
func appendMapObject(b []byte, entries []mapEntry) []byte {
	b = append(b, '{')
	for i, e := range entries {
		if i > 0 {
			b = append(b, ',')
		}
		if len(e.key) > 0 && e.key[0] == '"' {
			b = append(b, e.key...)
		} else {
			b = appendJSONString(b, string(e.key))
		}
		b = append(append(b, ':'), e.value...)
	}
	return append(b, '}')
}

func (c *JSONConverter) appendStruct(b []byte, s *connect.Schema, v any) ([]byte, error) {
	st, ok := v.(*connect.Struct)
	if !ok {
		return nil, invalidType(s, v)
	}
	if !st.Schema().Equal(s) {
		return nil, dataErrorf("Mismatching schema.")
	}
	b = append(b, '{')
	for i, f := range s.Fields {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, f.Name)
		b = append(b, ':')
		fv, _ := st.GetWithoutDefault(f.Name)
		var err error
		if b, err = c.appendValue(b, f.Schema, fv); err != nil {
			return nil, fmt.Errorf("field %q: %w", f.Name, err)
		}
	}
	return append(b, '}'), nil
}

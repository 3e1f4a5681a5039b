package convert

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"

	"github.com/samsa-io/samsa/connect"
	"github.com/samsa-io/samsa/pkg/serde"
)

// jsonSchemaFormat maps Connect schemas to JSON Schema (draft 7) as
// Confluent's JsonSchemaData does for the common cases: integers and
// numbers annotated with connect.type (int8..int64, float32, float64),
// bytes as base64 strings (connect.type bytes), a map with string keys as
// an object with additionalProperties, other maps as an array of
// {"key","value"} objects (connect.type map), a struct as an object whose
// properties carry connect.index, an optional schema as oneOf null and
// it; name as title, doc as description, connect.version,
// connect.parameters, default. Values are written as JsonConverter writes
// payloads (without the envelope), and validated by the serializer.
type jsonSchemaFormat struct {
	decoded decodedCache[*connect.Schema]
	payload *JSONConverter
}

func newJSONSchemaFormat() *jsonSchemaFormat {
	return &jsonSchemaFormat{
		decoded: newDecodedCache[*connect.Schema](),
		payload: &JSONConverter{replaceNull: true, mapEntriesAsObjects: true,
			fromConnectJSON: newLRU[*connect.Schema, []byte](0), toConnectSchema: newLRU[string, *connect.Schema](0)},
	}
}

func (*jsonSchemaFormat) class() string                { return JSONSchemaConverterClass }
func (*jsonSchemaFormat) schemaType() serde.SchemaType { return serde.JSON }

func (f *jsonSchemaFormat) fromConnectSchema(s *connect.Schema) (string, string, error) {
	doc, err := f.schema(s, -1)
	if err != nil {
		return "", "", err
	}
	if o, ok := doc.(obj); ok {
		doc = append(obj{{"$schema", "http://json-schema.org/draft-07/schema#"}}, o...)
	}
	text, err := orderedText(doc)
	return text, "", err
}

var jsonSchemaConnectTypes = map[connect.Type][2]string{
	connect.Int8: {"integer", "int8"}, connect.Int16: {"integer", "int16"}, connect.Int32: {"integer", "int32"},
	connect.Int64: {"integer", "int64"}, connect.Float32: {"number", "float32"}, connect.Float64: {"number", "float64"},
	connect.Boolean: {"boolean", ""}, connect.String: {"string", ""}, connect.Bytes: {"string", "bytes"},
}

// schema is s as JSON Schema; index, when not negative, is a struct
// field's connect.index.
func (f *jsonSchemaFormat) schema(s *connect.Schema, index int) (any, error) {
	o, err := f.base(s)
	if err != nil {
		return nil, err
	}
	if s.Name != "" {
		o = o.with("title", s.Name)
	}
	if s.Doc != "" {
		o = o.with("description", s.Doc)
	}
	if s.Version != nil {
		o = o.with("connect.version", *s.Version)
	}
	if len(s.Parameters) > 0 {
		o = o.with("connect.parameters", s.Parameters)
	}
	if s.Default != nil {
		d, err := f.payload.appendValue(nil, s, s.Default)
		if err != nil {
			return nil, err
		}
		o = o.with("default", json.RawMessage(d))
	}
	if !s.Optional {
		if index >= 0 {
			o = o.with("connect.index", index)
		}
		return o, nil
	}
	u := obj{{"oneOf", []any{obj{{"type", "null"}}, o}}}
	if index >= 0 {
		u = u.with("connect.index", index)
	}
	return u, nil
}

func (f *jsonSchemaFormat) base(s *connect.Schema) (obj, error) {
	if t, ok := jsonSchemaConnectTypes[s.Type]; ok {
		o := obj{{"type", t[0]}}
		if t[1] != "" {
			o = o.with("connect.type", t[1])
		}
		return o, nil
	}
	switch s.Type {
	case connect.Array:
		items, err := f.schema(s.ValueSchema, -1)
		return obj{{"type", "array"}, {"items", items}}, err
	case connect.Map:
		if s.KeySchema.Type == connect.String && !s.KeySchema.Optional {
			values, err := f.schema(s.ValueSchema, -1)
			return obj{{"type", "object"}, {"additionalProperties", values}, {"connect.type", "map"}}, err
		}
		key, err := f.schema(s.KeySchema, 0)
		if err != nil {
			return nil, err
		}
		value, err := f.schema(s.ValueSchema, 1)
		if err != nil {
			return nil, err
		}
		entry := obj{{"type", "object"}, {"properties", obj{{"key", key}, {"value", value}}}}
		return obj{{"type", "array"}, {"items", entry}, {"connect.type", "map"}}, nil
	case connect.Struct_:
		props := obj{}
		for i, fld := range s.Fields {
			fs, err := f.schema(fld.Schema, i)
			if err != nil {
				return nil, fmt.Errorf("field %q: %w", fld.Name, err)
			}
			props = props.with(fld.Name, fs)
		}
		return obj{{"type", "object"}, {"properties", props}}, nil
	}
	return nil, dataErrorf("Unknown schema type: %s", s.Type)
}

func (f *jsonSchemaFormat) encode(enc *serde.Encoder, s *connect.Schema, v any) ([]byte, error) {
	body, err := f.payload.appendValue(nil, s, v)
	if err != nil {
		return nil, err
	}
	return enc.EncodeJSON(body)
}

func (f *jsonSchemaFormat) decode(ctx context.Context, sd *serde.Serde, payload []byte) (*connect.Schema, any, error) {
	body, sch, err := sd.DecodeJSON(ctx, payload)
	if err != nil {
		return nil, nil, err
	}
	cs, ok := f.decoded.get(sch.ID)
	if !ok {
		doc, err := parseJSON([]byte(sch.Text))
		if err != nil {
			return nil, nil, err
		}
		if cs, err = jsonSchemaToConnect(doc, false); err != nil {
			return nil, nil, err
		}
		f.decoded.put(sch.ID, cs)
	}
	node, err := parseJSON(body)
	if err != nil {
		return nil, nil, err
	}
	v, err := f.payload.toConnect(cs, node)
	if err != nil {
		return nil, nil, err
	}
	return cs, v, nil
}

// jsonSchemaToConnect is the Connect schema of a JSON Schema in the subset
// jsonSchemaFormat writes (and plain schemas of the same shapes: an
// integer without connect.type is INT64, a number FLOAT64, an object with
// properties a STRUCT whose fields without connect.index come after the
// others in name order). $ref, allOf, anyOf and oneOf other than with
// null, and "type" lists other than with null are refused.
func jsonSchemaToConnect(node any, optional bool) (*connect.Schema, error) {
	o, ok := node.(map[string]any)
	if !ok {
		return nil, dataErrorf("a JSON Schema here must be an object, not %s", nodeType(node))
	}
	if one, ok := o["oneOf"].([]any); ok {
		return jsonSchemaUnion(one)
	}
	for _, k := range []string{"$ref", "allOf", "anyOf", "oneOf", "not", "if"} {
		if _, ok := o[k]; ok {
			return nil, dataErrorf("JSON Schema keyword %s is not mapped to Connect", k)
		}
	}
	typ, optional, err := jsonSchemaType(o["type"], optional)
	if err != nil {
		return nil, err
	}
	s, err := jsonSchemaBase(o, typ)
	if err != nil {
		return nil, err
	}
	s.Optional = optional
	if err := jsonSchemaMeta(s, o); err != nil {
		return nil, err
	}
	return s, nil
}

func jsonSchemaUnion(one []any) (*connect.Schema, error) {
	var other []any
	for _, sub := range one {
		if m, ok := sub.(map[string]any); ok && m["type"] == "null" && len(m) == 1 {
			continue
		}
		other = append(other, sub)
	}
	if len(other) != 1 || len(one) != 2 {
		return nil, dataErrorf("JSON Schema oneOf is mapped to Connect only as oneOf null and one schema")
	}
	return jsonSchemaToConnect(other[0], true)
}

// jsonSchemaType reads "type": a name, or a list of a name and "null".
func jsonSchemaType(t any, optional bool) (string, bool, error) {
	switch x := t.(type) {
	case string:
		return x, optional, nil
	case []any:
		var name string
		for _, item := range x {
			s, _ := item.(string)
			switch {
			case s == "null":
				optional = true
			case name == "":
				name = s
			default:
				return "", false, dataErrorf("JSON Schema type list %v is not mapped to Connect", x)
			}
		}
		if name != "" {
			return name, optional, nil
		}
	}
	return "", false, dataErrorf("JSON Schema without a type is not mapped to Connect")
}

func jsonSchemaBase(o map[string]any, typ string) (*connect.Schema, error) {
	connectType, _ := o["connect.type"].(string)
	switch typ {
	case "integer":
		switch connectType {
		case "int8":
			return &connect.Schema{Type: connect.Int8}, nil
		case "int16":
			return &connect.Schema{Type: connect.Int16}, nil
		case "int32":
			return &connect.Schema{Type: connect.Int32}, nil
		}
		return &connect.Schema{Type: connect.Int64}, nil
	case "number":
		if connectType == "float32" {
			return &connect.Schema{Type: connect.Float32}, nil
		}
		return &connect.Schema{Type: connect.Float64}, nil
	case "boolean":
		return &connect.Schema{Type: connect.Boolean}, nil
	case "string":
		if connectType == "bytes" {
			return &connect.Schema{Type: connect.Bytes}, nil
		}
		return &connect.Schema{Type: connect.String}, nil
	case "array":
		return jsonSchemaArray(o, connectType)
	case "object":
		return jsonSchemaObject(o, connectType)
	}
	return nil, dataErrorf("JSON Schema type %q is not mapped to Connect", typ)
}

func jsonSchemaArray(o map[string]any, connectType string) (*connect.Schema, error) {
	items, ok := o["items"].(map[string]any)
	if !ok {
		return nil, dataErrorf("a JSON Schema array needs an items schema")
	}
	if connectType == "map" {
		props, _ := items["properties"].(map[string]any)
		if props["key"] == nil || props["value"] == nil {
			return nil, dataErrorf("a JSON Schema map array needs items with key and value properties")
		}
		k, err := jsonSchemaToConnect(props["key"], false)
		if err != nil {
			return nil, err
		}
		v, err := jsonSchemaToConnect(props["value"], false)
		if err != nil {
			return nil, err
		}
		return connect.MapOf(k, v), nil
	}
	elem, err := jsonSchemaToConnect(items, false)
	if err != nil {
		return nil, err
	}
	return connect.ArrayOf(elem), nil
}

func jsonSchemaObject(o map[string]any, connectType string) (*connect.Schema, error) {
	if connectType == "map" {
		values, err := jsonSchemaToConnect(o["additionalProperties"], false)
		if err != nil {
			return nil, err
		}
		return connect.MapOf(connect.StringSchema, values), nil
	}
	props, _ := o["properties"].(map[string]any)
	names := make([]string, 0, len(props))
	for name := range props {
		names = append(names, name)
	}
	sort.SliceStable(names, func(i, j int) bool {
		a, b := connectIndex(props[names[i]]), connectIndex(props[names[j]])
		if a != b {
			return a < b
		}
		return names[i] < names[j]
	})
	b := connect.NewStruct("")
	for _, name := range names {
		fs, err := jsonSchemaToConnect(props[name], false)
		if err != nil {
			return nil, fmt.Errorf("property %q: %w", name, err)
		}
		b.Field(name, fs)
	}
	return b.Build()
}

// connectIndex is a property's connect.index, or a large number for one
// without, to order it after the others.
func connectIndex(node any) int64 {
	m, _ := node.(map[string]any)
	if n, ok := m["connect.index"].(json.Number); ok {
		if i, err := strconv.ParseInt(string(n), 10, 32); err == nil {
			return i
		}
	}
	return 1 << 40
}

// jsonSchemaMeta reads title, description, connect.version,
// connect.parameters and default.
func jsonSchemaMeta(s *connect.Schema, o map[string]any) error {
	s.Name, _ = o["title"].(string)
	s.Doc, _ = o["description"].(string)
	if n, ok := o["connect.version"].(json.Number); ok {
		if v, err := strconv.ParseInt(string(n), 10, 32); err == nil {
			v32 := int32(v)
			s.Version = &v32
		}
	}
	if params, ok := o["connect.parameters"].(map[string]any); ok {
		s.Parameters = map[string]string{}
		for k, v := range params {
			str, ok := v.(string)
			if !ok {
				return dataErrorf("connect.parameters values must be strings")
			}
			s.Parameters[k] = str
		}
	}
	if def, ok := o["default"]; ok && def != nil {
		conv := &JSONConverter{replaceNull: true, mapEntriesAsObjects: true}
		v, err := conv.toConnect(s, def)
		if err != nil {
			return fmt.Errorf("default: %w", err)
		}
		s.Default = v
	}
	return nil
}

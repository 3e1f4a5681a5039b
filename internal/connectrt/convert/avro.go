package convert

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hamba/avro/v2"

	"github.com/samsa-io/samsa/connect"
	"github.com/samsa-io/samsa/pkg/serde"
)

// Confluent's AvroData names and properties.
const (
	avroNamespace          = "io.confluent.connect.avro"
	avroDefaultName        = "ConnectDefault"
	avroMapEntry           = "MapEntry"
	avroDecimalPrecision   = 64
	avroPrecisionParameter = "connect.decimal.precision"
)

// avroFormat maps Connect schemas and values to Avro as Confluent's
// AvroData does (connect.meta.data on, enhanced schema support off).
type avroFormat struct {
	decoded decodedCache[*connect.Schema]
}

func newAvroFormat() *avroFormat { return &avroFormat{decoded: newDecodedCache[*connect.Schema]()} }

func (*avroFormat) class() string                { return AvroConverterClass }
func (*avroFormat) schemaType() serde.SchemaType { return serde.Avro }

func (*avroFormat) fromConnectSchema(s *connect.Schema) (string, string, error) {
	w := &avroSchemaWriter{defined: map[string]*connect.Schema{}}
	v, err := w.schema(s, false)
	if err != nil {
		return "", "", err
	}
	text, err := orderedText(v)
	return text, "", err
}

// avroSchemaWriter turns one Connect schema into an Avro schema; a named
// type is defined once and named after that.
type avroSchemaWriter struct {
	defined      map[string]*connect.Schema
	defaultIndex int
}

func (w *avroSchemaWriter) schema(s *connect.Schema, ignoreOptional bool) (any, error) {
	base, connectType, err := w.base(s)
	if err != nil {
		return nil, err
	}
	if name, isName := base.(avroName); isName {
		base = string(name) // a named type defined before: its props are there
	} else if base, err = w.withProps(base, s, connectType); err != nil {
		return nil, err
	}
	if !s.Optional || ignoreOptional {
		return base, nil
	}
	if s.Default != nil {
		return []any{base, "null"}, nil
	}
	return []any{"null", base}, nil
}

// avroName is a reference to a named type already defined.
type avroName string

// withProps adds Confluent's connect.* properties and the logical type.
func (w *avroSchemaWriter) withProps(base any, s *connect.Schema, connectType string) (any, error) {
	var props obj
	if s.Doc != "" {
		props = props.with("connect.doc", s.Doc)
	}
	if s.Version != nil {
		props = props.with("connect.version", *s.Version)
	}
	if len(s.Parameters) > 0 {
		props = props.with("connect.parameters", s.Parameters)
	}
	if s.Default != nil {
		d, err := avroDefault(s, s.Default)
		if err != nil {
			return nil, err
		}
		props = props.with("connect.default", d)
	}
	if s.Name != "" {
		props = props.with("connect.name", s.Name)
	}
	if connectType != "" {
		props = props.with("connect.type", connectType)
	}
	switch logicalName(s) {
	case connect.DecimalName:
		props = props.with("logicalType", "decimal")
	case connect.DateName:
		props = props.with("logicalType", "date")
	case connect.TimeName:
		props = props.with("logicalType", "time-millis")
	case connect.TimestampName:
		props = props.with("logicalType", "timestamp-millis")
	}
	if len(props) == 0 {
		return base, nil
	}
	o, isObj := base.(obj)
	if !isObj {
		o = obj{{"type", base}}
	}
	return append(o, props...), nil
}

var avroPrimitive = map[connect.Type]string{
	connect.Int8: "int", connect.Int16: "int", connect.Int32: "int", connect.Int64: "long", connect.Float32: "float",
	connect.Float64: "double", connect.Boolean: "boolean", connect.String: "string", connect.Bytes: "bytes",
}

// base is the Avro schema of s's type, and the connect.type annotation
// for the types Avro has no width for.
func (w *avroSchemaWriter) base(s *connect.Schema) (any, string, error) {
	switch s.Type {
	case connect.Int8:
		return "int", "int8", nil
	case connect.Int16:
		return "int", "int16", nil
	case connect.Bytes:
		if s.Name == connect.DecimalName {
			return w.decimal(s)
		}
	case connect.Array:
		items, err := w.schema(s.ValueSchema, false)
		return obj{{"type", "array"}, {"items", items}}, "", err
	case connect.Map:
		return w.mapSchema(s)
	case connect.Struct_:
		return w.record(s)
	}
	if p, ok := avroPrimitive[s.Type]; ok {
		return p, "", nil
	}
	return nil, "", dataErrorf("Unknown schema type: %s", s.Type)
}

func (w *avroSchemaWriter) decimal(s *connect.Schema) (any, string, error) {
	scale, err := decimalScale(s)
	if err != nil {
		return nil, "", err
	}
	precision := avroDecimalPrecision
	if p, ok := s.Parameters[avroPrecisionParameter]; ok {
		if precision, err = strconv.Atoi(p); err != nil {
			return nil, "", dataErrorf("invalid %s %q", avroPrecisionParameter, p)
		}
	}
	return obj{{"type", "bytes"}, {"scale", scale}, {"precision", precision}}, "", nil
}

func (w *avroSchemaWriter) mapSchema(s *connect.Schema) (any, string, error) {
	if s.KeySchema.Type == connect.String && !s.KeySchema.Optional {
		values, err := w.schema(s.ValueSchema, false)
		return obj{{"type", "map"}, {"values", values}}, "", err
	}
	full := avroNamespace + "." + avroMapEntry
	entry := any(avroName(full))
	if prior, ok := w.defined[full]; !ok {
		w.defined[full] = s
		key, err := w.field("key", s.KeySchema)
		if err != nil {
			return nil, "", err
		}
		value, err := w.field("value", s.ValueSchema)
		if err != nil {
			return nil, "", err
		}
		entry = obj{{"type", "record"}, {"name", avroMapEntry}, {"namespace", avroNamespace}, {"fields", []any{key, value}}}
	} else if !sameIgnoringOptional(prior, s) {
		return nil, "", dataErrorf("maps of different key and value schemas with non-string keys in one schema: Avro cannot define %s twice", full)
	}
	return obj{{"type", "array"}, {"items", entry}}, "", nil
}

func (w *avroSchemaWriter) record(s *connect.Schema) (any, string, error) {
	namespace, name := splitAvroName(s.Name)
	if s.Name == "" {
		w.defaultIndex++
		namespace, name = avroNamespace, avroDefaultName
		if w.defaultIndex > 1 {
			name += strconv.Itoa(w.defaultIndex)
		}
	}
	full := name
	if namespace != "" {
		full = namespace + "." + name
	}
	if prior, ok := w.defined[full]; ok {
		if !sameIgnoringOptional(prior, s) {
			return nil, "", dataErrorf("two different struct schemas are named %s: Avro cannot define a name twice", full)
		}
		return avroName(full), "", nil
	}
	w.defined[full] = s
	fields := make([]any, 0, len(s.Fields))
	for _, f := range s.Fields {
		fo, err := w.field(f.Name, f.Schema)
		if err != nil {
			return nil, "", err
		}
		fields = append(fields, fo)
	}
	rec := obj{{"type", "record"}, {"name", name}}
	if namespace != "" {
		rec = rec.with("namespace", namespace)
	}
	return rec.with("fields", fields), "", nil
}

// field is a record field: optional fields default to null, a field with
// a default has it (its union then lists the type first).
func (w *avroSchemaWriter) field(name string, s *connect.Schema) (obj, error) {
	t, err := w.schema(s, false)
	if err != nil {
		return nil, err
	}
	f := obj{{"name", name}, {"type", t}}
	switch {
	case s.Default != nil:
		d, err := avroDefault(s, s.Default)
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", name, err)
		}
		f = f.with("default", d)
	case s.Optional:
		f = f.with("default", nil)
	}
	return f, nil
}

func splitAvroName(full string) (namespace, name string) {
	if i := strings.LastIndexByte(full, '.'); i >= 0 {
		return full[:i], full[i+1:]
	}
	return "", full
}

func sameIgnoringOptional(a, b *connect.Schema) bool {
	x, y := *a, *b
	x.Optional, y.Optional = false, false
	return x.Equal(&y)
}

// avroDefault is a default value in Avro's JSON form (for the first type
// of a union): primitives and logical types; a default of an array, map or
// struct is refused.
func avroDefault(s *connect.Schema, v any) (any, error) {
	if name := logicalName(s); name != "" {
		return avroLogicalJSON(s, name, v)
	}
	switch x := v.(type) {
	case int8:
		return int64(x), nil
	case int16:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case int64, bool, string:
		return x, nil
	case float32:
		return json.Number(javaNumberString(float64(x), 32)), nil
	case float64:
		return json.Number(javaNumberString(x, 64)), nil
	case []byte:
		return latin1(x), nil
	}
	return nil, dataErrorf("a default of schema %s is not mapped to Avro (only primitive and logical types are)", s)
}

// avroLogicalJSON is a logical value as Avro's JSON encoding has it.
func avroLogicalJSON(s *connect.Schema, name string, v any) (any, error) {
	if name == connect.DecimalName {
		d, ok := v.(connect.Decimal)
		if !ok {
			return nil, dataErrorf("Invalid type for Decimal, expected connect.Decimal but was %T", v)
		}
		b, err := decimalToBytes(s, d)
		if err != nil {
			return nil, err
		}
		return latin1(b), nil
	}
	t, ok := v.(time.Time)
	if !ok {
		return nil, dataErrorf("Invalid type for %s, expected time.Time but was %T", shortLogical(name), v)
	}
	switch name {
	case connect.DateName:
		d, err := dateToDays(t)
		return int64(d), err
	case connect.TimeName:
		ms, err := timeToMillis(t)
		return int64(ms), err
	}
	return t.UnixMilli(), nil
}

// latin1 is bytes as Avro's JSON encoding writes them: a string whose
// code points 0 to 255 are the bytes.
func latin1(b []byte) string {
	r := make([]rune, len(b))
	for i, c := range b {
		r[i] = rune(c)
	}
	return string(r)
}

func fromLatin1(s string) ([]byte, error) {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		if r > 0xff {
			return nil, fmt.Errorf("byte string holds code point %U above 255", r)
		}
		out = append(out, byte(r))
	}
	return out, nil
}

// encode writes v under the encoder's Avro schema (the registered one, or
// with use.latest.version the subject's latest), matching record fields by
// name.
func (*avroFormat) encode(enc *serde.Encoder, s *connect.Schema, v any) ([]byte, error) {
	hs := enc.Schema().AvroSchema()
	node, err := avroValue(hs, s, v)
	if err != nil {
		return nil, err
	}
	text, err := appendOrdered(nil, node)
	if err != nil {
		return nil, err
	}
	return enc.EncodeJSON(text)
}

func deref(hs avro.Schema) avro.Schema {
	if r, ok := hs.(*avro.RefSchema); ok {
		return r.Schema()
	}
	return hs
}

// avroValue is a Connect value in Avro's JSON encoding under hs.
func avroValue(hs avro.Schema, cs *connect.Schema, v any) (any, error) {
	hs = deref(hs)
	if u, ok := hs.(*avro.UnionSchema); ok {
		return avroUnionValue(u, cs, v)
	}
	if v == nil && cs != nil && cs.Default != nil {
		v = cs.Default
	}
	if v == nil {
		if hs.Type() == avro.Null {
			return nil, nil
		}
		return nil, dataErrorf("null value for a required field (Avro type %s)", hs.Type())
	}
	if name := logicalName(cs); name != "" {
		return avroLogicalJSON(cs, name, v)
	}
	switch x := hs.(type) {
	case *avro.RecordSchema:
		return avroRecordValue(x, v)
	case *avro.ArraySchema:
		return avroArrayValue(x, cs, v)
	case *avro.MapSchema:
		return avroMapValue(x, cs, v)
	case *avro.EnumSchema:
		return v, nil
	}
	return avroPrimitiveValue(hs, v)
}

func avroPrimitiveValue(hs avro.Schema, v any) (any, error) {
	switch x := v.(type) {
	case int8, int16, int32, int64:
		return toInt64(x), nil
	case float32:
		return json.RawMessage(appendJavaFloating(nil, float64(x), 32)), nil
	case float64:
		return json.RawMessage(appendJavaDouble(nil, x)), nil
	case bool, string:
		return x, nil
	case []byte:
		return latin1(x), nil
	}
	return nil, dataErrorf("Invalid type for Avro %s: %T", hs.Type(), v)
}

// avroUnionValue writes a union's null as null and any other branch as
// {"<branch name>": value}; the branch is the one non-null type, or the
// first whose Avro type takes the value's Go type.
func avroUnionValue(u *avro.UnionSchema, cs *connect.Schema, v any) (any, error) {
	if v == nil && cs != nil && cs.Default != nil {
		v = cs.Default
	}
	if v == nil {
		if !u.Nullable() {
			return nil, dataErrorf("null value for a union without null")
		}
		return nil, nil
	}
	branch := avroBranchFor(u, v)
	if branch == nil {
		return nil, dataErrorf("no branch of union %s takes a %T", u, v)
	}
	inner, err := avroValue(branch, cs, v)
	if err != nil {
		return nil, err
	}
	return obj{{avroBranchName(branch), inner}}, nil
}

// avroBranchFor is the first non-null branch whose type takes v, or the
// only non-null branch.
func avroBranchFor(u *avro.UnionSchema, v any) avro.Schema {
	var nonNull []avro.Schema
	for _, t := range u.Types() {
		if t.Type() == avro.Null {
			continue
		}
		if avroTakes(deref(t), v) {
			return t
		}
		nonNull = append(nonNull, t)
	}
	if len(nonNull) == 1 {
		return nonNull[0]
	}
	return nil
}

func avroTakes(hs avro.Schema, v any) bool {
	switch v.(type) {
	case int8, int16, int32:
		return hs.Type() == avro.Int
	case int64:
		return hs.Type() == avro.Long
	case float32:
		return hs.Type() == avro.Float
	case float64:
		return hs.Type() == avro.Double
	case bool:
		return hs.Type() == avro.Boolean
	case string:
		return hs.Type() == avro.String || hs.Type() == avro.Enum
	case []byte, connect.Decimal:
		return hs.Type() == avro.Bytes || hs.Type() == avro.Fixed
	case *connect.Struct:
		return hs.Type() == avro.Record
	case []any:
		return hs.Type() == avro.Array
	case map[any]any, map[string]any:
		return hs.Type() == avro.Map || hs.Type() == avro.Array
	case time.Time:
		return hs.Type() == avro.Int || hs.Type() == avro.Long
	}
	return false
}

func avroBranchName(hs avro.Schema) string {
	if n, ok := deref(hs).(avro.NamedSchema); ok {
		return n.FullName()
	}
	return string(hs.Type())
}

func avroRecordValue(rs *avro.RecordSchema, v any) (any, error) {
	st, ok := v.(*connect.Struct)
	if !ok {
		return nil, dataErrorf("Avro record %s needs a struct, not %T", rs.FullName(), v)
	}
	out := obj{}
	for _, f := range rs.Fields() {
		cf, ok := st.Schema().Field(f.Name())
		if !ok {
			if f.HasDefault() {
				continue // the serializer writes the field's default
			}
			return nil, dataErrorf("the struct has no field %q, which Avro record %s requires", f.Name(), rs.FullName())
		}
		fv, err := avroValue(f.Type(), cf.Schema, st.GetField(cf))
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", f.Name(), err)
		}
		out = out.with(f.Name(), fv)
	}
	return out, nil
}

// isMapEntry says whether an array's items are the key/value records of
// a map with non-string keys.
func isMapEntry(items avro.Schema) (*avro.RecordSchema, bool) {
	rs, ok := deref(items).(*avro.RecordSchema)
	if !ok || len(rs.Fields()) != 2 || rs.Fields()[0].Name() != "key" || rs.Fields()[1].Name() != "value" {
		return nil, false
	}
	return rs, rs.Name() == avroMapEntry || rs.Prop("connect.internal.type") == avroMapEntry
}

func avroArrayValue(as *avro.ArraySchema, cs *connect.Schema, v any) (any, error) {
	if entry, ok := isMapEntry(as.Items()); ok {
		if m, isMap := v.(map[any]any); isMap {
			return avroMapEntries(entry, cs, m)
		}
	}
	items, ok := v.([]any)
	if !ok {
		return nil, dataErrorf("Avro array needs a []any, not %T", v)
	}
	var elem *connect.Schema
	if cs != nil {
		elem = cs.ValueSchema
	}
	out := make([]any, len(items))
	for i, item := range items {
		var err error
		if out[i], err = avroValue(as.Items(), elem, item); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func avroMapEntries(entry *avro.RecordSchema, cs *connect.Schema, m map[any]any) (any, error) {
	var ks, vs *connect.Schema
	if cs != nil {
		ks, vs = cs.KeySchema, cs.ValueSchema
	}
	type pair struct {
		sortKey string
		node    any
	}
	pairs := make([]pair, 0, len(m))
	for k, val := range m {
		kn, err := avroValue(entry.Fields()[0].Type(), ks, k)
		if err != nil {
			return nil, err
		}
		vn, err := avroValue(entry.Fields()[1].Type(), vs, val)
		if err != nil {
			return nil, err
		}
		text, _ := valuesString(k, true)
		pairs = append(pairs, pair{text, obj{{"key", kn}, {"value", vn}}})
	}
	sortKV(pairs, func(a, b pair) bool { return a.sortKey < b.sortKey })
	out := make([]any, len(pairs))
	for i, p := range pairs {
		out[i] = p.node
	}
	return out, nil
}

func avroMapValue(ms *avro.MapSchema, cs *connect.Schema, v any) (any, error) {
	var vs *connect.Schema
	if cs != nil {
		vs = cs.ValueSchema
	}
	entries := map[string]any{}
	switch m := v.(type) {
	case map[any]any:
		for k, val := range m {
			ks, ok := k.(string)
			if !ok {
				return nil, dataErrorf("Avro map keys are strings, not %T", k)
			}
			entries[ks] = val
		}
	case map[string]any:
		entries = m
	default:
		return nil, dataErrorf("Avro map needs a map, not %T", v)
	}
	out := obj{}
	for _, k := range sortedStrings(entries) {
		vn, err := avroValue(ms.Values(), vs, entries[k])
		if err != nil {
			return nil, err
		}
		out = out.with(k, vn)
	}
	return out, nil
}

// decode reads a record: its Avro schema becomes a Connect schema (once
// per ID), its Avro JSON a Connect value.
func (f *avroFormat) decode(ctx context.Context, sd *serde.Serde, payload []byte) (*connect.Schema, any, error) {
	text, sch, err := sd.DecodeJSON(ctx, payload)
	if err != nil {
		return nil, nil, err
	}
	cs, ok := f.decoded.get(sch.ID)
	if !ok {
		if cs, err = avroToConnectSchema(sch.AvroSchema(), false, map[string]bool{}); err != nil {
			return nil, nil, err
		}
		f.decoded.put(sch.ID, cs)
	}
	node, err := parseJSON(text)
	if err != nil {
		return nil, nil, err
	}
	v, err := connectFromAvro(sch.AvroSchema(), cs, node)
	if err != nil {
		return nil, nil, err
	}
	return cs, v, nil
}

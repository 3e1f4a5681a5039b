package convert

import (
	"context"
	"fmt"
	"strings"
	"unicode"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/samsa-io/samsa/connect"
	"github.com/samsa-io/samsa/internal/schemaregistry/msgindex"
	"github.com/samsa-io/samsa/pkg/serde"
)

// protobufFormat maps Connect schemas to proto3 for the common subset: a
// STRUCT is a message (its name's namespace the package); INT8, INT16 and
// INT32 are int32, INT64 int64, FLOAT32 float, FLOAT64 double, BOOLEAN
// bool, STRING string, BYTES bytes; an optional primitive field is a
// proto3 optional field; an ARRAY is a repeated field; a MAP with
// string, integer or boolean keys a map field; a nested STRUCT a nested
// message. Logical types, arrays of arrays or maps, map values that are
// arrays or maps, and a top-level schema that is not a STRUCT are refused.
// Reading, every message field is an optional STRUCT, enums are STRINGs
// and uint32/uint64 are INT64, as Confluent's ProtobufData reads them.
type protobufFormat struct {
	decoded *lru[string, *connect.Schema] // by schema ID and message name
}

func newProtobufFormat() *protobufFormat {
	return &protobufFormat{decoded: newLRU[string, *connect.Schema](registryCacheSize)}
}

func (*protobufFormat) class() string                { return ProtobufConverterClass }
func (*protobufFormat) schemaType() serde.SchemaType { return serde.Protobuf }

func (*protobufFormat) fromConnectSchema(s *connect.Schema) (string, string, error) {
	if s.Type != connect.Struct_ {
		return "", "", dataErrorf("ProtobufConverter writes STRUCT values only, not %s", s.Type)
	}
	pkg, name := splitAvroName(s.Name)
	if name == "" {
		name = avroDefaultName
	}
	var b strings.Builder
	b.WriteString("syntax = \"proto3\";\n")
	if pkg != "" {
		fmt.Fprintf(&b, "package %s;\n", pkg)
	}
	b.WriteString("\n")
	if err := writeProtoMessage(&b, s, name, ""); err != nil {
		return "", "", err
	}
	full := name
	if pkg != "" {
		full = pkg + "." + name
	}
	return b.String(), full, nil
}

func writeProtoMessage(b *strings.Builder, s *connect.Schema, name, indent string) error {
	fmt.Fprintf(b, "%smessage %s {\n", indent, name)
	nested := map[string]bool{}
	for i, f := range s.Fields {
		t, label, err := protoFieldType(f, nested)
		if err != nil {
			return fmt.Errorf("field %q: %w", f.Name, err)
		}
		fmt.Fprintf(b, "%s  %s%s %s = %d;\n", indent, label, t, f.Name, i+1)
	}
	for _, f := range s.Fields {
		if st := protoStructOf(f.Schema); st != nil {
			if err := writeProtoMessage(b, st, protoMessageName(f), indent+"  "); err != nil {
				return err
			}
		}
	}
	fmt.Fprintf(b, "%s}\n", indent)
	return nil
}

// protoStructOf is the struct a field declares a nested message for (the
// field's own, or its array's or map's values).
func protoStructOf(s *connect.Schema) *connect.Schema {
	switch s.Type {
	case connect.Struct_:
		return s
	case connect.Array, connect.Map:
		if s.ValueSchema.Type == connect.Struct_ {
			return s.ValueSchema
		}
	}
	return nil
}

// protoMessageName names a field's nested message after the field, in
// upper camel case, so that two fields never share one.
func protoMessageName(f connect.Field) string {
	var b strings.Builder
	up := true
	for _, r := range f.Name {
		if r == '_' {
			up = true
			continue
		}
		if up {
			r = unicode.ToUpper(r)
			up = false
		}
		b.WriteRune(r)
	}
	return b.String() + "Entry"
}

var protoScalar = map[connect.Type]string{
	connect.Int8: "int32", connect.Int16: "int32", connect.Int32: "int32", connect.Int64: "int64",
	connect.Float32: "float", connect.Float64: "double", connect.Boolean: "bool", connect.String: "string", connect.Bytes: "bytes",
}

func protoFieldType(f connect.Field, nested map[string]bool) (string, string, error) {
	s := f.Schema
	if logicalName(s) != "" {
		return "", "", dataErrorf("logical type %s is not mapped to Protobuf", s.Name)
	}
	if s.Default != nil {
		return "", "", dataErrorf("proto3 has no field defaults")
	}
	switch s.Type {
	case connect.Struct_:
		return protoMessageName(f), "", nil
	case connect.Array:
		elem, err := protoElemType(f, s.ValueSchema)
		return elem, "repeated ", err
	case connect.Map:
		key, ok := protoScalar[s.KeySchema.Type]
		if !ok || s.KeySchema.Type == connect.Float32 || s.KeySchema.Type == connect.Float64 || s.KeySchema.Type == connect.Bytes || logicalName(s.KeySchema) != "" {
			return "", "", dataErrorf("Protobuf map keys are strings, integers or booleans, not %s", s.KeySchema)
		}
		value, err := protoElemType(f, s.ValueSchema)
		return fmt.Sprintf("map<%s, %s>", key, value), "", err
	}
	t, ok := protoScalar[s.Type]
	if !ok {
		return "", "", dataErrorf("Unknown schema type: %s", s.Type)
	}
	if s.Optional {
		return t, "optional ", nil
	}
	return t, "", nil
}

func protoElemType(f connect.Field, elem *connect.Schema) (string, error) {
	switch {
	case logicalName(elem) != "":
		return "", dataErrorf("logical type %s is not mapped to Protobuf", elem.Name)
	case elem.Type == connect.Struct_:
		return protoMessageName(f), nil
	case elem.Type == connect.Array || elem.Type == connect.Map:
		return "", dataErrorf("Protobuf has no repeated field of %s", elem.Type)
	}
	return protoScalar[elem.Type], nil
}

// encode builds a message of the encoder's schema from the struct,
// matching fields by name.
func (*protobufFormat) encode(enc *serde.Encoder, s *connect.Schema, v any) ([]byte, error) {
	st, ok := v.(*connect.Struct)
	if !ok {
		return nil, dataErrorf("ProtobufConverter writes *connect.Struct values, not %T", v)
	}
	md, err := encoderMessage(enc, s)
	if err != nil {
		return nil, err
	}
	m := dynamicpb.NewMessage(md)
	if err := fillMessage(m, st); err != nil {
		return nil, err
	}
	return enc.Encode(m)
}

// encoderMessage is the message of the encoder's schema that the Connect
// schema's name names (the schema the encoder holds is the registered
// one, or with use.latest.version the subject's latest).
func encoderMessage(enc *serde.Encoder, s *connect.Schema) (protoreflect.MessageDescriptor, error) {
	full := s.Name
	if full == "" {
		full = avroDefaultName
	}
	file := enc.Schema().FileDescriptor()
	if md := findProtoMessage(file.Messages(), protoreflect.FullName(full)); md != nil {
		return md, nil
	}
	return nil, dataErrorf("the registry's schema (package %q) has no message %s", file.Package(), full)
}

func findProtoMessage(ms protoreflect.MessageDescriptors, full protoreflect.FullName) protoreflect.MessageDescriptor {
	for i := range ms.Len() {
		md := ms.Get(i)
		if md.FullName() == full {
			return md
		}
		if found := findProtoMessage(md.Messages(), full); found != nil {
			return found
		}
	}
	return nil
}

func fillMessage(m protoreflect.Message, st *connect.Struct) error {
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		cf, ok := st.Schema().Field(string(fd.Name()))
		if !ok {
			continue
		}
		v := st.GetField(cf)
		if v == nil {
			continue
		}
		if err := setProtoField(m, fd, v); err != nil {
			return fmt.Errorf("field %q: %w", fd.Name(), err)
		}
	}
	return nil
}

func setProtoField(m protoreflect.Message, fd protoreflect.FieldDescriptor, v any) error {
	switch {
	case fd.IsMap():
		return setProtoMap(m.Mutable(fd).Map(), fd, v)
	case fd.IsList():
		items, ok := v.([]any)
		if !ok {
			return dataErrorf("a repeated field needs a []any, not %T", v)
		}
		list := m.Mutable(fd).List()
		for _, item := range items {
			pv, err := protoValue(list.NewElement, fd, item)
			if err != nil {
				return err
			}
			list.Append(pv)
		}
		return nil
	}
	pv, err := protoValue(func() protoreflect.Value { return m.NewField(fd) }, fd, v)
	if err != nil {
		return err
	}
	m.Set(fd, pv)
	return nil
}

func setProtoMap(pm protoreflect.Map, fd protoreflect.FieldDescriptor, v any) error {
	m, ok := v.(map[any]any)
	if !ok {
		return dataErrorf("a map field needs a map[any]any, not %T", v)
	}
	for k, item := range m {
		kv, err := protoValue(nil, fd.MapKey(), k)
		if err != nil {
			return err
		}
		vv, err := protoValue(pm.NewValue, fd.MapValue(), item)
		if err != nil {
			return err
		}
		pm.Set(kv.MapKey(), vv)
	}
	return nil
}

// protoValue converts one scalar or message value; newMessage makes an
// empty message value for message fields.
func protoValue(newMessage func() protoreflect.Value, fd protoreflect.FieldDescriptor, v any) (protoreflect.Value, error) {
	if v == nil {
		return protoreflect.Value{}, dataErrorf("Protobuf cannot hold a null in a repeated or map field")
	}
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		st, ok := v.(*connect.Struct)
		if !ok {
			return protoreflect.Value{}, dataErrorf("a message field needs a *connect.Struct, not %T", v)
		}
		mv := newMessage()
		return mv, fillMessage(mv.Message(), st)
	case protoreflect.EnumKind:
		s, ok := v.(string)
		if !ok {
			return protoreflect.Value{}, dataErrorf("an enum field needs a string, not %T", v)
		}
		ev := fd.Enum().Values().ByName(protoreflect.Name(s))
		if ev == nil {
			return protoreflect.Value{}, dataErrorf("enum %s has no value %q", fd.Enum().FullName(), s)
		}
		return protoreflect.ValueOfEnum(ev.Number()), nil
	}
	return protoScalarValue(fd.Kind(), v)
}

func protoScalarValue(kind protoreflect.Kind, v any) (protoreflect.Value, error) {
	wrong := func() (protoreflect.Value, error) {
		return protoreflect.Value{}, dataErrorf("a Protobuf %s field cannot hold a %T", kind, v)
	}
	switch kind {
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		switch x := v.(type) {
		case int8, int16, int32:
			return protoreflect.ValueOfInt32(int32(toInt64(x))), nil
		}
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		switch x := v.(type) {
		case int8, int16, int32, int64:
			return protoreflect.ValueOfInt64(toInt64(x)), nil
		}
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		switch x := v.(type) {
		case int8, int16, int32, int64:
			if n := toInt64(x); n >= 0 && n <= 1<<32-1 {
				return protoreflect.ValueOfUint32(uint32(n)), nil
			}
		}
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		switch x := v.(type) {
		case int8, int16, int32, int64:
			if n := toInt64(x); n >= 0 {
				return protoreflect.ValueOfUint64(uint64(n)), nil
			}
		}
	case protoreflect.FloatKind:
		if x, ok := v.(float32); ok {
			return protoreflect.ValueOfFloat32(x), nil
		}
	case protoreflect.DoubleKind:
		switch x := v.(type) {
		case float64:
			return protoreflect.ValueOfFloat64(x), nil
		case float32:
			return protoreflect.ValueOfFloat64(float64(x)), nil
		}
	case protoreflect.BoolKind:
		if x, ok := v.(bool); ok {
			return protoreflect.ValueOfBool(x), nil
		}
	case protoreflect.StringKind:
		if x, ok := v.(string); ok {
			return protoreflect.ValueOfString(x), nil
		}
	case protoreflect.BytesKind:
		if x, ok := v.([]byte); ok {
			return protoreflect.ValueOfBytes(x), nil
		}
	}
	return wrong()
}

// decode reads the message the record's indexes name.
func (f *protobufFormat) decode(ctx context.Context, sd *serde.Serde, payload []byte) (*connect.Schema, any, error) {
	id, body, err := serde.ParseHeader(payload)
	if err != nil {
		return nil, nil, err
	}
	sch, err := sd.SchemaByID(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	indexes, rest, err := serde.ParseMessageIndexes(body)
	if err != nil {
		return nil, nil, err
	}
	md, err := msgindex.Message(sch.FileDescriptor(), indexes)
	if err != nil {
		return nil, nil, dataErrorf("%v", err)
	}
	m := dynamicpb.NewMessage(md)
	if err := proto.Unmarshal(rest, m); err != nil {
		return nil, nil, dataErrorf("message %s: %v", md.FullName(), err)
	}
	cs, err := f.connectSchema(id, md)
	if err != nil {
		return nil, nil, err
	}
	v, err := connectFromMessage(cs, m)
	return cs, v, err
}

// connectSchema is the message's Connect schema, once per schema ID and
// message.
func (f *protobufFormat) connectSchema(id int, md protoreflect.MessageDescriptor) (*connect.Schema, error) {
	key := fmt.Sprintf("%d/%s", id, md.FullName())
	if s, ok := f.decoded.get(key); ok {
		return s, nil
	}
	s, err := messageToConnect(md, false, map[protoreflect.FullName]bool{})
	if err != nil {
		return nil, err
	}
	f.decoded.put(key, s)
	return s, nil
}

// messageToConnect is a message's Connect schema: a STRUCT named by the
// message's full name, fields in declaration order.
func messageToConnect(md protoreflect.MessageDescriptor, optional bool, inProgress map[protoreflect.FullName]bool) (*connect.Schema, error) {
	if inProgress[md.FullName()] {
		return nil, dataErrorf("recursive Protobuf message %s is not mapped to Connect", md.FullName())
	}
	inProgress[md.FullName()] = true
	defer delete(inProgress, md.FullName())
	b := connect.NewStruct(string(md.FullName()))
	if optional {
		b.Optional()
	}
	fields := md.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		fs, err := protoFieldToConnect(fd, inProgress)
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", fd.Name(), err)
		}
		b.Field(string(fd.Name()), fs)
	}
	return b.Build()
}

func protoFieldToConnect(fd protoreflect.FieldDescriptor, inProgress map[protoreflect.FullName]bool) (*connect.Schema, error) {
	switch {
	case fd.IsMap():
		k, err := protoKindToConnect(fd.MapKey(), false, inProgress)
		if err != nil {
			return nil, err
		}
		v, err := protoKindToConnect(fd.MapValue(), false, inProgress)
		if err != nil {
			return nil, err
		}
		return connect.MapOf(k, v), nil
	case fd.IsList():
		elem, err := protoKindToConnect(fd, false, inProgress)
		if err != nil {
			return nil, err
		}
		return connect.ArrayOf(elem), nil
	}
	return protoKindToConnect(fd, fd.HasPresence(), inProgress)
}

func protoKindToConnect(fd protoreflect.FieldDescriptor, optional bool, inProgress map[protoreflect.FullName]bool) (*connect.Schema, error) {
	var t connect.Type
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return messageToConnect(fd.Message(), true, inProgress)
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		t = connect.Int32
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind, protoreflect.Uint32Kind,
		protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		t = connect.Int64
	case protoreflect.FloatKind:
		t = connect.Float32
	case protoreflect.DoubleKind:
		t = connect.Float64
	case protoreflect.BoolKind:
		t = connect.Boolean
	case protoreflect.StringKind, protoreflect.EnumKind:
		t = connect.String
	case protoreflect.BytesKind:
		t = connect.Bytes
	default:
		return nil, dataErrorf("Protobuf kind %s is not mapped to Connect", fd.Kind())
	}
	return &connect.Schema{Type: t, Optional: optional}, nil
}

// connectFromMessage reads a message as a struct of cs.
func connectFromMessage(cs *connect.Schema, m protoreflect.Message) (*connect.Struct, error) {
	st := connect.NewStructValue(cs)
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fd.HasPresence() && !m.Has(fd) {
			continue
		}
		v, err := connectFromProtoField(cs.Fields[i].Schema, fd, m.Get(fd))
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", fd.Name(), err)
		}
		if err := st.Put(string(fd.Name()), v); err != nil {
			return nil, err
		}
	}
	return st, nil
}

func connectFromProtoField(cs *connect.Schema, fd protoreflect.FieldDescriptor, pv protoreflect.Value) (any, error) {
	switch {
	case fd.IsMap():
		out := map[any]any{}
		var err error
		pv.Map().Range(func(k protoreflect.MapKey, v protoreflect.Value) bool {
			var key, val any
			if key, err = connectFromProtoValue(cs.KeySchema, fd.MapKey(), k.Value()); err != nil {
				return false
			}
			if val, err = connectFromProtoValue(cs.ValueSchema, fd.MapValue(), v); err != nil {
				return false
			}
			out[key] = val
			return true
		})
		return out, err
	case fd.IsList():
		list := pv.List()
		out := make([]any, list.Len())
		for i := range list.Len() {
			var err error
			if out[i], err = connectFromProtoValue(cs.ValueSchema, fd, list.Get(i)); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return connectFromProtoValue(cs, fd, pv)
}

func connectFromProtoValue(cs *connect.Schema, fd protoreflect.FieldDescriptor, pv protoreflect.Value) (any, error) {
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return connectFromMessage(cs, pv.Message())
	case protoreflect.EnumKind:
		if ev := fd.Enum().Values().ByNumber(pv.Enum()); ev != nil {
			return string(ev.Name()), nil
		}
		return fmt.Sprint(int32(pv.Enum())), nil
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return int32(pv.Int()), nil
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return pv.Int(), nil
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return int64(pv.Uint()), nil
	case protoreflect.FloatKind:
		return float32(pv.Float()), nil
	case protoreflect.DoubleKind:
		return pv.Float(), nil
	case protoreflect.BoolKind:
		return pv.Bool(), nil
	case protoreflect.StringKind:
		return pv.String(), nil
	case protoreflect.BytesKind:
		return append([]byte{}, pv.Bytes()...), nil
	}
	return nil, dataErrorf("Protobuf kind %s is not mapped to Connect", fd.Kind())
}

package schema

// The custom options of a schema given as a serialized descriptor, as
// Confluent's toProtoFile reads them: after the standard options, the
// element's Confluent meta option (confluent.file_meta, message_meta,
// field_meta, enum_meta, enum_value_meta) written as an aggregate of doc,
// params, tags and rules, then every other custom option, in field-number
// order, one option per value of a repeated one. A descriptor carries its
// custom options as extension fields its options messages do not know;
// they are decoded here with extension types built from the linked file
// and its imports.

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/dynamicpb"
)

// pbOptionDecoder decodes options messages with the extensions a file and
// its imports declare.
type pbOptionDecoder struct {
	types *protoregistry.Types
}

func newOptionDecoder(fd protoreflect.FileDescriptor) *pbOptionDecoder {
	d := &pbOptionDecoder{types: new(protoregistry.Types)}
	seen := map[string]bool{}
	var add func(f protoreflect.FileDescriptor)
	add = func(f protoreflect.FileDescriptor) {
		if seen[f.Path()] {
			return
		}
		seen[f.Path()] = true
		d.addExtensions(f.Extensions(), f.Messages())
		for i := 0; i < f.Imports().Len(); i++ {
			add(f.Imports().Get(i).FileDescriptor)
		}
	}
	add(fd)
	return d
}

func (d *pbOptionDecoder) addExtensions(xs protoreflect.ExtensionDescriptors, ms protoreflect.MessageDescriptors) {
	for i := 0; i < xs.Len(); i++ {
		// A name registered twice (two files declaring one extension)
		// keeps the first; the compiler has refused real conflicts.
		_ = d.types.RegisterExtension(dynamicpb.NewExtensionType(xs.Get(i)))
	}
	for i := 0; i < ms.Len(); i++ {
		d.addExtensions(ms.Get(i).Extensions(), ms.Get(i).Messages())
	}
}

// custom lists opts' extension options: metaName's as Confluent's meta
// aggregate first, then the others not under confluent., by number.
func (d *pbOptionDecoder) custom(opts proto.Message, metaName string) []*pbOption {
	if opts == nil || !opts.ProtoReflect().IsValid() {
		return nil
	}
	raw, err := proto.Marshal(opts)
	if err != nil || len(raw) == 0 {
		return nil
	}
	msg := dynamicpb.NewMessage(opts.ProtoReflect().Descriptor())
	if err := (proto.UnmarshalOptions{Resolver: d.types}).Unmarshal(raw, msg); err != nil {
		return nil
	}
	var exts []protoreflect.FieldDescriptor
	msg.Range(func(fd protoreflect.FieldDescriptor, _ protoreflect.Value) bool {
		if fd.IsExtension() {
			exts = append(exts, fd)
		}
		return true
	})
	slices.SortFunc(exts, func(a, b protoreflect.FieldDescriptor) int { return int(a.Number() - b.Number()) })
	var meta, out []*pbOption
	for _, fd := range exts {
		name := string(fd.FullName())
		v := msg.Get(fd)
		if strings.HasPrefix(name, "confluent.") {
			if name == metaName && fd.Message() != nil {
				if o := metaOption(name, v.Message()); o != nil {
					meta = append(meta, o)
				}
			}
			continue
		}
		if fd.IsList() {
			for i := 0; i < v.List().Len(); i++ {
				if o := customOption(name, fd, v.List().Get(i)); o != nil {
					out = append(out, o)
				}
			}
		} else if o := customOption(name, fd, v); o != nil {
			out = append(out, o)
		}
	}
	return append(meta, out...)
}

// customOption is one value of a custom option; a bytes value, which
// Confluent cannot print either, is left out.
func customOption(name string, fd protoreflect.FieldDescriptor, v protoreflect.Value) *pbOption {
	o := &pbOption{name: name, paren: true}
	switch fd.Kind() {
	case protoreflect.StringKind:
		o.kind, o.value = pbString, v.String()
	case protoreflect.BoolKind:
		o.kind, o.value = pbBool, strconv.FormatBool(v.Bool())
	case protoreflect.EnumKind:
		o.kind, o.value = pbEnumKind, enumValueName(fd, v)
	case protoreflect.MessageKind, protoreflect.GroupKind:
		o.kind, o.value = pbMap, optionMap(v.Message())
	case protoreflect.BytesKind:
		return nil
	default:
		o.kind, o.value = pbNumber, javaNumberText(fd.Kind(), v)
	}
	return o
}

func enumValueName(fd protoreflect.FieldDescriptor, v protoreflect.Value) string {
	if ev := fd.Enum().Values().ByNumber(v.Enum()); ev != nil {
		return string(ev.Name())
	}
	return strconv.Itoa(int(v.Enum()))
}

// optionMap is a message value as an aggregate, its fields in number
// order (Java's getAllFields), extensions keyed [full.name].
func optionMap(m protoreflect.Message) *pbMapValue {
	out := &pbMapValue{vals: map[string]any{}}
	var fields []protoreflect.FieldDescriptor
	m.Range(func(fd protoreflect.FieldDescriptor, _ protoreflect.Value) bool {
		fields = append(fields, fd)
		return true
	})
	slices.SortFunc(fields, func(a, b protoreflect.FieldDescriptor) int { return int(a.Number() - b.Number()) })
	for _, fd := range fields {
		key := string(fd.Name())
		if fd.IsExtension() {
			key = "[" + string(fd.FullName()) + "]"
		}
		v := m.Get(fd)
		switch {
		case fd.IsMap():
			out.put(key, mapEntries(fd, v.Map()))
		case fd.IsList():
			items := []any{}
			for i := 0; i < v.List().Len(); i++ {
				items = append(items, optionMapValue(fd, v.List().Get(i)))
			}
			out.put(key, items)
		default:
			out.put(key, optionMapValue(fd, v))
		}
	}
	return out
}

// mapEntries is a map field as Java lists it: entries {key, value}, here
// by key.
func mapEntries(fd protoreflect.FieldDescriptor, m protoreflect.Map) []any {
	type entry struct {
		k protoreflect.MapKey
		v protoreflect.Value
	}
	var es []entry
	m.Range(func(k protoreflect.MapKey, v protoreflect.Value) bool {
		es = append(es, entry{k, v})
		return true
	})
	slices.SortFunc(es, func(a, b entry) int { return strings.Compare(a.k.String(), b.k.String()) })
	out := []any{}
	for _, e := range es {
		entry := &pbMapValue{vals: map[string]any{}}
		entry.put("key", optionMapValue(fd.MapKey(), e.k.Value()))
		entry.put("value", optionMapValue(fd.MapValue(), e.v))
		out = append(out, entry)
	}
	return out
}

func optionMapValue(fd protoreflect.FieldDescriptor, v protoreflect.Value) any {
	switch fd.Kind() {
	case protoreflect.StringKind:
		return v.String()
	case protoreflect.BytesKind:
		return string(v.Bytes())
	case protoreflect.BoolKind:
		return pbPrim{kind: pbBool, text: strconv.FormatBool(v.Bool())}
	case protoreflect.EnumKind:
		return pbPrim{kind: pbEnumKind, text: enumValueName(fd, v)}
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return optionMap(v.Message())
	}
	return pbPrim{kind: pbNumber, text: javaNumberText(fd.Kind(), v)}
}

// javaNumberText is a number as Java's toString writes it.
func javaNumberText(k protoreflect.Kind, v protoreflect.Value) string {
	switch k {
	case protoreflect.FloatKind:
		return javaFloating(v.Float(), 32)
	case protoreflect.DoubleKind:
		return javaFloating(v.Float(), 64)
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return strconv.FormatUint(v.Uint(), 10)
	}
	return strconv.FormatInt(v.Int(), 10)
}

// javaFloating is Java's Float.toString (bits 32) or Double.toString:
// the shortest digits of the value at that width, plain between 10^-3
// and 10^7, else d.dddE±n.
func javaFloating(f float64, bits int) string {
	if bits == 64 || f == 0 || math.IsInf(f, 0) || math.IsNaN(f) {
		return javaDouble(f)
	}
	if a := math.Abs(f); a >= 1e-3 && a < 1e7 {
		s := strconv.FormatFloat(f, 'f', -1, 32)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	mant, exp, _ := strings.Cut(strconv.FormatFloat(f, 'e', -1, 32), "e")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	e, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(e)
}

// metaOption is Confluent's meta aggregate: doc, params (as key/value
// pairs; precision and scale with the value first, as Confluent writes
// them), tags and rules, each when set.
func metaOption(name string, m protoreflect.Message) *pbOption {
	md := m.Descriptor()
	get := func(field string) (protoreflect.FieldDescriptor, bool) {
		fd := md.Fields().ByName(protoreflect.Name(field))
		return fd, fd != nil && m.Has(fd)
	}
	out := &pbMapValue{vals: map[string]any{}}
	if fd, ok := get("doc"); ok && m.Get(fd).String() != "" {
		out.put("doc", m.Get(fd).String())
	}
	if fd, ok := get("params"); ok && fd.IsMap() {
		var params []any
		for _, e := range mapEntries(fd, m.Get(fd).Map()) {
			kv := e.(*pbMapValue)
			key := kv.vals["key"]
			p := &pbMapValue{vals: map[string]any{}}
			if key == "precision" || key == "scale" {
				p.put("value", kv.vals["value"])
				p.put("key", key)
			} else {
				p.put("key", key)
				p.put("value", kv.vals["value"])
			}
			params = append(params, p)
		}
		out.put("params", params)
	}
	if fd, ok := get("tags"); ok {
		var tags []any
		for i := 0; i < m.Get(fd).List().Len(); i++ {
			tags = append(tags, m.Get(fd).List().Get(i).String())
		}
		out.put("tags", tags)
	}
	if fd, ok := get("rules"); ok && fd.Message() != nil {
		var rules []any
		for i := 0; i < m.Get(fd).List().Len(); i++ {
			r := m.Get(fd).List().Get(i).Message()
			entry := &pbMapValue{vals: map[string]any{}}
			for _, f := range []string{"name", "doc", "expr", "sql"} {
				if rf := r.Descriptor().Fields().ByName(protoreflect.Name(f)); rf != nil && r.Get(rf).String() != "" {
					entry.put(f, r.Get(rf).String())
				}
			}
			if len(entry.keys) > 0 {
				rules = append(rules, entry)
			}
		}
		if len(rules) > 0 {
			out.put("rules", rules)
		}
	}
	if len(out.keys) == 0 {
		return nil
	}
	return &pbOption{name: name, paren: true, kind: pbMap, value: out}
}

// addDescriptorOptions adds to f, the element tree of fd's descriptor,
// the custom and meta options of each element.
func addDescriptorOptions(f *pbFile, fd protoreflect.FileDescriptor) {
	d := newOptionDecoder(fd)
	f.options = append(f.options, d.custom(fd.Options(), "confluent.file_meta")...)
	d.typeOptions(f.types, fd.Messages(), fd.Enums())
	for _, s := range f.services {
		sd := fd.Services().ByName(protoreflect.Name(s.name))
		if sd == nil {
			continue
		}
		s.options = append(s.options, d.custom(sd.Options(), "")...)
		for _, r := range s.rpcs {
			if md := sd.Methods().ByName(protoreflect.Name(r.name)); md != nil {
				r.options = append(r.options, d.custom(md.Options(), "")...)
			}
		}
	}
}

func (d *pbOptionDecoder) typeOptions(types []pbType, ms protoreflect.MessageDescriptors, es protoreflect.EnumDescriptors) {
	for _, t := range types {
		switch t := t.(type) {
		case *pbMessage:
			md := ms.ByName(protoreflect.Name(t.name))
			if md == nil {
				continue
			}
			t.options = append(t.options, d.custom(md.Options(), "confluent.message_meta")...)
			fields := slices.Clone(t.fields)
			for _, o := range t.oneofs {
				fields = append(fields, o.fields...)
			}
			for _, f := range fields {
				if fdesc := md.Fields().ByNumber(protoreflect.FieldNumber(f.tag)); fdesc != nil {
					f.options = append(f.options, d.custom(fdesc.Options(), "confluent.field_meta")...)
				}
			}
			d.typeOptions(t.nested, md.Messages(), md.Enums())
		case *pbEnum:
			ed := es.ByName(protoreflect.Name(t.name))
			if ed == nil {
				continue
			}
			t.options = append(t.options, d.custom(ed.Options(), "confluent.enum_meta")...)
			for _, c := range t.constants {
				if vd := ed.Values().ByName(protoreflect.Name(c.name)); vd != nil {
					c.options = append(c.options, d.custom(vd.Options(), "confluent.enum_value_meta")...)
				}
			}
		}
	}
}

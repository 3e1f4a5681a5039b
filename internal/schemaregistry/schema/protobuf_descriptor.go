package schema

// The element tree of a schema given as a serialized FileDescriptorProto,
// read as Confluent's ProtobufSchema.toProtoFile reads one: type names as
// the descriptor has them (.pkg.Foo), map fields as the repeated entry
// messages the descriptor holds, the standard options it sets, each
// reserved and extension range its own statement. Custom options and
// Confluent's meta options, which Confluent decodes with the options'
// own message types, are left out here (see the design doc).

import (
	"strconv"
	"strings"

	"google.golang.org/protobuf/types/descriptorpb"
)

func pbFileFromDescriptor(fdp *descriptorpb.FileDescriptorProto) *pbFile {
	f := &pbFile{pkg: fdp.GetPackage()}
	// Confluent names the syntax only when the descriptor does.
	switch fdp.GetSyntax() {
	case "proto2", "proto3":
		f.syntax = fdp.GetSyntax()
	}
	public := map[int32]bool{}
	for _, i := range fdp.GetPublicDependency() {
		public[i] = true
	}
	for i, dep := range fdp.GetDependency() {
		if public[int32(i)] {
			f.publicImports = append(f.publicImports, dep)
		} else {
			f.imports = append(f.imports, dep)
		}
	}
	f.options = fileOptions(fdp.GetOptions())
	proto3 := fdp.GetSyntax() == "proto3"
	for _, m := range fdp.GetMessageType() {
		f.types = append(f.types, messageFromDescriptor(m, proto3))
	}
	for _, e := range fdp.GetEnumType() {
		f.types = append(f.types, enumFromDescriptor(e))
	}
	f.extends = extendsFromDescriptor(fdp.GetExtension(), proto3)
	for _, s := range fdp.GetService() {
		f.services = append(f.services, serviceFromDescriptor(s))
	}
	return f
}

func boolOption(name string, v bool) *pbOption {
	return &pbOption{name: name, kind: pbBool, value: strconv.FormatBool(v)}
}

func stringOption(name, v string) *pbOption {
	return &pbOption{name: name, kind: pbString, value: v}
}

func enumOption(name, v string) *pbOption {
	return &pbOption{name: name, kind: pbEnumKind, value: v}
}

// fileOptions lists the standard file options set, in Confluent's order.
func fileOptions(o *descriptorpb.FileOptions) []*pbOption {
	if o == nil {
		return nil
	}
	var out []*pbOption
	add := func(set bool, opt func() *pbOption) {
		if set {
			out = append(out, opt())
		}
	}
	add(o.JavaPackage != nil, func() *pbOption { return stringOption("java_package", o.GetJavaPackage()) })
	add(o.JavaOuterClassname != nil, func() *pbOption { return stringOption("java_outer_classname", o.GetJavaOuterClassname()) })
	add(o.JavaMultipleFiles != nil, func() *pbOption { return boolOption("java_multiple_files", o.GetJavaMultipleFiles()) })
	add(o.JavaGenerateEqualsAndHash != nil, func() *pbOption {
		return boolOption("java_generate_equals_and_hash", o.GetJavaGenerateEqualsAndHash()) //nolint:staticcheck // Confluent prints it
	})
	add(o.JavaStringCheckUtf8 != nil, func() *pbOption { return boolOption("java_string_check_utf8", o.GetJavaStringCheckUtf8()) })
	add(o.OptimizeFor != nil, func() *pbOption { return enumOption("optimize_for", o.GetOptimizeFor().String()) })
	add(o.GoPackage != nil, func() *pbOption { return stringOption("go_package", o.GetGoPackage()) })
	add(o.CcGenericServices != nil, func() *pbOption { return boolOption("cc_generic_services", o.GetCcGenericServices()) })
	add(o.JavaGenericServices != nil, func() *pbOption { return boolOption("java_generic_services", o.GetJavaGenericServices()) })
	add(o.PyGenericServices != nil, func() *pbOption { return boolOption("py_generic_services", o.GetPyGenericServices()) })
	add(o.Deprecated != nil, func() *pbOption { return boolOption("deprecated", o.GetDeprecated()) })
	add(o.CcEnableArenas != nil, func() *pbOption { return boolOption("cc_enable_arenas", o.GetCcEnableArenas()) })
	add(o.ObjcClassPrefix != nil, func() *pbOption { return stringOption("objc_class_prefix", o.GetObjcClassPrefix()) })
	add(o.CsharpNamespace != nil, func() *pbOption { return stringOption("csharp_namespace", o.GetCsharpNamespace()) })
	add(o.SwiftPrefix != nil, func() *pbOption { return stringOption("swift_prefix", o.GetSwiftPrefix()) })
	add(o.PhpClassPrefix != nil, func() *pbOption { return stringOption("php_class_prefix", o.GetPhpClassPrefix()) })
	add(o.PhpNamespace != nil, func() *pbOption { return stringOption("php_namespace", o.GetPhpNamespace()) })
	add(o.PhpMetadataNamespace != nil, func() *pbOption { return stringOption("php_metadata_namespace", o.GetPhpMetadataNamespace()) })
	add(o.RubyPackage != nil, func() *pbOption { return stringOption("ruby_package", o.GetRubyPackage()) })
	return out
}

func messageFromDescriptor(d *descriptorpb.DescriptorProto, proto3 bool) *pbMessage {
	m := &pbMessage{name: d.GetName()}
	oneofs := make([]*pbOneof, len(d.GetOneofDecl()))
	for i, o := range d.GetOneofDecl() {
		oneofs[i] = &pbOneof{name: o.GetName()}
	}
	for _, fd := range d.GetField() {
		if fd.OneofIndex != nil && !fd.GetProto3Optional() && int(fd.GetOneofIndex()) < len(oneofs) {
			o := oneofs[fd.GetOneofIndex()]
			o.fields = append(o.fields, fieldFromDescriptor(fd, proto3, true))
			continue
		}
		m.fields = append(m.fields, fieldFromDescriptor(fd, proto3, false))
	}
	for _, o := range oneofs {
		if len(o.fields) > 0 {
			m.oneofs = append(m.oneofs, o)
		}
	}
	for _, n := range d.GetNestedType() {
		m.nested = append(m.nested, messageFromDescriptor(n, proto3))
	}
	for _, e := range d.GetEnumType() {
		m.nested = append(m.nested, enumFromDescriptor(e))
	}
	for _, r := range d.GetReservedRange() {
		m.reserveds = append(m.reserveds, exclusiveRange(r.GetStart(), r.GetEnd()))
	}
	for _, name := range d.GetReservedName() {
		m.reserveds = append(m.reserveds, &pbRanges{values: []pbRange{{name: name}}})
	}
	for _, r := range d.GetExtensionRange() {
		m.extensions = append(m.extensions, exclusiveRange(r.GetStart(), r.GetEnd()))
	}
	if o := d.GetOptions(); o != nil {
		if o.NoStandardDescriptorAccessor != nil {
			m.options = append(m.options, boolOption("no_standard_descriptor_accessor", o.GetNoStandardDescriptorAccessor()))
		}
		if o.Deprecated != nil {
			m.options = append(m.options, boolOption("deprecated", o.GetDeprecated()))
		}
		if o.MapEntry != nil {
			m.options = append(m.options, boolOption("map_entry", o.GetMapEntry()))
		}
	}
	m.extends = extendsFromDescriptor(d.GetExtension(), proto3)
	return m
}

// exclusiveRange is a descriptor's [start, end) range as Wire's inclusive
// one.
func exclusiveRange(start, end int32) *pbRanges {
	v := pbRange{start: int64(start), end: int64(end) - 1}
	v.single = v.start == v.end
	return &pbRanges{values: []pbRange{v}}
}

func fieldFromDescriptor(fd *descriptorpb.FieldDescriptorProto, proto3, inOneof bool) *pbField {
	f := &pbField{name: fd.GetName(), tag: int64(fd.GetNumber()), typ: fd.GetTypeName()}
	if f.typ == "" {
		f.typ = strings.ToLower(strings.TrimPrefix(fd.GetType().String(), "TYPE_"))
	}
	if !inOneof {
		f.label = descriptorLabel(fd, proto3)
	}
	if o := fd.GetOptions(); o != nil {
		if o.Ctype != nil {
			f.options = append(f.options, enumOption("ctype", o.GetCtype().String()))
		}
		if o.Packed != nil {
			f.options = append(f.options, boolOption("packed", o.GetPacked()))
		}
		if o.Jstype != nil {
			f.options = append(f.options, enumOption("jstype", o.GetJstype().String()))
		}
		if o.Deprecated != nil {
			f.options = append(f.options, boolOption("deprecated", o.GetDeprecated()))
		}
	}
	if fd.JsonName != nil {
		v := fd.GetJsonName()
		f.jsonName = &v
	}
	if fd.DefaultValue != nil && !proto3 {
		v := fd.GetDefaultValue()
		f.defValue = &v
	}
	return f
}

// descriptorLabel is Confluent's label(): proto3 drops optional and
// required, keeps repeated and an explicit optional.
func descriptorLabel(fd *descriptorpb.FieldDescriptorProto, proto3 bool) string {
	if fd.GetProto3Optional() {
		return "optional"
	}
	switch fd.GetLabel() {
	case descriptorpb.FieldDescriptorProto_LABEL_REPEATED:
		return "repeated"
	case descriptorpb.FieldDescriptorProto_LABEL_REQUIRED:
		if !proto3 {
			return "required"
		}
	default:
		if !proto3 {
			return "optional"
		}
	}
	return ""
}

func enumFromDescriptor(d *descriptorpb.EnumDescriptorProto) *pbEnum {
	e := &pbEnum{name: d.GetName()}
	for _, v := range d.GetValue() {
		c := &pbEnumConstant{name: v.GetName(), tag: int64(v.GetNumber())}
		if v.GetOptions() != nil && v.GetOptions().Deprecated != nil {
			c.options = append(c.options, boolOption("deprecated", v.GetOptions().GetDeprecated()))
		}
		e.constants = append(e.constants, c)
	}
	for _, r := range d.GetReservedRange() {
		v := pbRange{start: int64(r.GetStart()), end: int64(r.GetEnd())} // inclusive, both ends
		v.single = v.start == v.end
		e.reserveds = append(e.reserveds, &pbRanges{values: []pbRange{v}})
	}
	for _, name := range d.GetReservedName() {
		e.reserveds = append(e.reserveds, &pbRanges{values: []pbRange{{name: name}}})
	}
	if o := d.GetOptions(); o != nil {
		if o.AllowAlias != nil {
			e.options = append(e.options, boolOption("allow_alias", o.GetAllowAlias()))
		}
		if o.Deprecated != nil {
			e.options = append(e.options, boolOption("deprecated", o.GetDeprecated()))
		}
	}
	return e
}

// extendsFromDescriptor groups extension fields by extendee, in order of
// first appearance.
func extendsFromDescriptor(fields []*descriptorpb.FieldDescriptorProto, proto3 bool) []*pbExtend {
	var out []*pbExtend
	byName := map[string]*pbExtend{}
	for _, fd := range fields {
		e, ok := byName[fd.GetExtendee()]
		if !ok {
			e = &pbExtend{name: fd.GetExtendee()}
			byName[fd.GetExtendee()] = e
			out = append(out, e)
		}
		e.fields = append(e.fields, fieldFromDescriptor(fd, proto3, false))
	}
	return out
}

func serviceFromDescriptor(d *descriptorpb.ServiceDescriptorProto) *pbService {
	s := &pbService{name: d.GetName()}
	if d.GetOptions() != nil && d.GetOptions().Deprecated != nil {
		s.options = append(s.options, boolOption("deprecated", d.GetOptions().GetDeprecated()))
	}
	for _, m := range d.GetMethod() {
		r := &pbRPC{
			name: m.GetName(), request: m.GetInputType(), response: m.GetOutputType(),
			reqStream: m.GetClientStreaming(), resStream: m.GetServerStreaming(),
		}
		if o := m.GetOptions(); o != nil {
			if o.Deprecated != nil {
				r.options = append(r.options, boolOption("deprecated", o.GetDeprecated()))
			}
			if o.IdempotencyLevel != nil {
				r.options = append(r.options, enumOption("idempotency_level", o.GetIdempotencyLevel().String()))
			}
		}
		s.rpcs = append(s.rpcs, r)
	}
	return s
}

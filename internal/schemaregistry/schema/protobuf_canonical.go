package schema

// The canonical text of a Protobuf schema, as Confluent's registry stores
// it: ProtobufSchema.canonicalString re-prints the file parsed by Square
// Wire's ProtoParser in a fixed layout (ProtobufSchemaUtils.toString):
//
//	syntax = "proto3";
//	package x;
//
//	import "a.proto";
//
//	option java_package = "y";
//
//	message M {
//	  string a = 1;
//	}
//
// Comments and blank lines go; names and types stay as written (Foo, not
// .x.Foo); within a message the reserved ranges come first, then options,
// fields, oneofs, groups, extension ranges, extends and nested types
// (messages before enums), each block after a blank line. Field options
// are listed with default and json_name last, as Wire keeps those two
// apart from the others. The printer below reads a small element tree
// (pbFile ...) built from protocompile's AST, or, for a schema given as a
// serialized descriptor, from the FileDescriptorProto as Confluent's
// toProtoFile reads one.

import (
	"strconv"
	"strings"

	"github.com/bufbuild/protocompile/ast"
)

// pbFile and the types below mirror Wire's element model: what the
// canonical text is printed from.
type pbFile struct {
	syntax        string
	pkg           string
	imports       []string
	publicImports []string
	options       []*pbOption
	types         []pbType
	extends       []*pbExtend
	services      []*pbService
}

// pbType is a *pbMessage or a *pbEnum.
type pbType interface{ typeName() string }

type pbMessage struct {
	name       string
	reserveds  []*pbRanges
	options    []*pbOption
	fields     []*pbField
	oneofs     []*pbOneof
	groups     []*pbGroup
	extensions []*pbRanges
	extends    []*pbExtend
	nested     []pbType
}

func (m *pbMessage) typeName() string { return m.name }

type pbEnum struct {
	name      string
	reserveds []*pbRanges
	options   []*pbOption
	constants []*pbEnumConstant
}

func (e *pbEnum) typeName() string { return e.name }

type pbEnumConstant struct {
	name    string
	tag     int64
	options []*pbOption
}

type pbField struct {
	label    string // "", optional, required, repeated
	typ      string // as written: int32, Foo, .x.Foo, map<string, Foo>
	mapKey   string // a map's key and value types as written; "" if no map
	mapValue string
	name     string
	tag      int64
	options  []*pbOption
	defValue *string // Wire's defaultValue: the default option, apart
	jsonName *string
}

type pbOneof struct {
	name    string
	options []*pbOption
	fields  []*pbField
	groups  []*pbGroup
}

type pbGroup struct {
	label  string
	name   string
	tag    int64
	fields []*pbField
}

type pbExtend struct {
	name   string
	fields []*pbField
}

type pbService struct {
	name    string
	options []*pbOption
	rpcs    []*pbRPC
}

type pbRPC struct {
	name                 string
	request, response    string
	reqStream, resStream bool
	options              []*pbOption
}

// pbRanges is a reserved or extensions statement: its values are names
// (reserved only), single numbers and ranges.
type pbRanges struct {
	values  []pbRange
	options []*pbOption
}

type pbRange struct {
	name       string // a reserved name, when set
	start, end int64
	single     bool // written as one number, not "a to b"
	max        bool // "to max"
}

// pbOptionKind is Wire's OptionElement.Kind.
type pbOptionKind int

const (
	pbString pbOptionKind = iota
	pbBool
	pbNumber
	pbEnumKind
	pbMap
	pbList
	pbNested // Wire's OPTION: (a).b = 1 is option a holding option b
)

// pbOption is an option. value is a string for the scalar kinds (the
// text as written for numbers and identifiers, the decoded string for
// strings), *pbOption for pbNested, *pbMapValue for pbMap and []any for
// pbList.
type pbOption struct {
	name  string
	paren bool
	kind  pbOptionKind
	value any
}

// pbMapValue is an aggregate (text format) value, its keys in the order
// written; a key given twice holds a list, as Wire's reader merges them.
type pbMapValue struct {
	keys []string
	vals map[string]any
}

// pbPrim is a scalar inside an aggregate value that is not a string
// (Wire's OptionPrimitive): printed bare.
type pbPrim struct {
	kind pbOptionKind
	text string
}

func (m *pbMapValue) put(k string, v any) {
	old, ok := m.vals[k]
	if !ok {
		m.keys = append(m.keys, k)
		m.vals[k] = v
		return
	}
	l, isList := old.([]any)
	if !isList {
		l = []any{old}
	}
	if vl, ok := v.([]any); ok {
		l = append(l, vl...)
	} else {
		l = append(l, v)
	}
	m.vals[k] = l
}

// pbMaxTag is the largest field number: a range ending at or past it
// prints "to max", as in Confluent's printer.
const pbMaxTag = 536_870_911

// printProtobuf writes f in Confluent's layout. normalized only changes
// how a proto2 file's syntax line is written (left out, as Confluent's
// normalized form does); the reordering is normalizeProtobuf's.
func printProtobuf(f *pbFile, normalized bool) string {
	var b strings.Builder
	if f.syntax != "" && (!normalized || f.syntax == "proto3") {
		b.WriteString("syntax = \"" + f.syntax + "\";\n")
	}
	if f.pkg != "" {
		b.WriteString("package " + f.pkg + ";\n")
	}
	if len(f.imports) > 0 || len(f.publicImports) > 0 {
		b.WriteByte('\n')
		for _, i := range f.imports {
			b.WriteString("import \"" + i + "\";\n")
		}
		for _, i := range f.publicImports {
			b.WriteString("import public \"" + i + "\";\n")
		}
	}
	if len(f.options) > 0 {
		b.WriteByte('\n')
		for _, o := range f.options {
			b.WriteString(optionStatement(o))
		}
	}
	if len(f.types) > 0 {
		b.WriteByte('\n')
		writeTypes(&b, f.types, false)
	}
	if len(f.extends) > 0 {
		b.WriteByte('\n')
		for _, e := range f.extends {
			b.WriteString(printExtend(e))
		}
	}
	if len(f.services) > 0 {
		b.WriteByte('\n')
		for _, s := range f.services {
			b.WriteString(printService(s))
		}
	}
	return b.String()
}

// writeTypes writes messages first, then enums, each in its order.
func writeTypes(b *strings.Builder, types []pbType, indent bool) {
	emit := func(s string) {
		if indent {
			appendIndented(b, s)
		} else {
			b.WriteString(s)
		}
	}
	for _, t := range types {
		if m, ok := t.(*pbMessage); ok {
			emit(printMessage(m))
		}
	}
	for _, t := range types {
		if e, ok := t.(*pbEnum); ok {
			emit(printEnum(e))
		}
	}
}

func printMessage(m *pbMessage) string {
	var b strings.Builder
	b.WriteString("message " + m.name + " {")
	if len(m.reserveds) > 0 {
		b.WriteByte('\n')
		for _, r := range m.reserveds {
			appendIndented(&b, printRanges("reserved", r))
		}
	}
	if len(m.options) > 0 {
		b.WriteByte('\n')
		for _, o := range m.options {
			appendIndented(&b, optionStatement(o))
		}
	}
	if len(m.fields) > 0 {
		b.WriteByte('\n')
		for _, f := range m.fields {
			appendIndented(&b, printField(f))
		}
	}
	if len(m.oneofs) > 0 {
		b.WriteByte('\n')
		for _, o := range m.oneofs {
			appendIndented(&b, printOneof(o))
		}
	}
	if len(m.groups) > 0 {
		b.WriteByte('\n')
		for _, g := range m.groups {
			appendIndented(&b, printGroup(g))
		}
	}
	if len(m.extensions) > 0 {
		b.WriteByte('\n')
		for _, e := range m.extensions {
			appendIndented(&b, printRanges("extensions", e))
		}
	}
	if len(m.extends) > 0 {
		b.WriteByte('\n')
		for _, e := range m.extends {
			appendIndented(&b, printExtend(e))
		}
	}
	if len(m.nested) > 0 {
		b.WriteByte('\n')
		writeTypes(&b, m.nested, true)
	}
	b.WriteString("}\n")
	return b.String()
}

func printEnum(e *pbEnum) string {
	var b strings.Builder
	b.WriteString("enum " + e.name + " {")
	if len(e.reserveds) > 0 {
		b.WriteByte('\n')
		for _, r := range e.reserveds {
			appendIndented(&b, printRanges("reserved", r))
		}
	} else if len(e.options) > 0 || len(e.constants) > 0 {
		// Confluent's printer puts no blank line between the reserved
		// block and the rest of an enum.
		b.WriteByte('\n')
	}
	for _, o := range e.options {
		appendIndented(&b, optionStatement(o))
	}
	for _, c := range e.constants {
		s := c.name + " = " + strconv.FormatInt(c.tag, 10)
		if len(c.options) > 0 {
			s += " " + optionList(c.options)
		}
		appendIndented(&b, s+";\n")
	}
	b.WriteString("}\n")
	return b.String()
}

func printRanges(keyword string, r *pbRanges) string {
	var b strings.Builder
	b.WriteString(keyword + " ")
	for i, v := range r.values {
		if i > 0 {
			b.WriteString(", ")
		}
		switch {
		case v.name != "":
			b.WriteString("\"" + v.name + "\"")
		case v.single:
			b.WriteString(strconv.FormatInt(v.start, 10))
		default:
			b.WriteString(strconv.FormatInt(v.start, 10) + " to ")
			if v.max || v.end >= pbMaxTag {
				b.WriteString("max")
			} else {
				b.WriteString(strconv.FormatInt(v.end, 10))
			}
		}
	}
	if len(r.options) > 0 {
		b.WriteString(" " + optionList(r.options))
	}
	b.WriteString(";\n")
	return b.String()
}

func printField(f *pbField) string {
	var b strings.Builder
	if f.label != "" {
		b.WriteString(f.label + " ")
	}
	b.WriteString(f.typ + " " + f.name + " = " + strconv.FormatInt(f.tag, 10))
	opts := f.options
	if f.defValue != nil {
		opts = append(opts[:len(opts):len(opts)], &pbOption{name: "default", kind: defaultKind(f.typ), value: *f.defValue})
	}
	if f.jsonName != nil {
		opts = append(opts[:len(opts):len(opts)], &pbOption{name: "json_name", kind: pbString, value: *f.jsonName})
	}
	if len(opts) > 0 {
		b.WriteString(" " + optionList(opts))
	}
	b.WriteString(";\n")
	return b.String()
}

// defaultKind is how Confluent prints a default value by the field's
// type: quoted for strings only (bytes too print bare, as Confluent's
// toKind has it), bare for the rest.
func defaultKind(typ string) pbOptionKind {
	switch typ[strings.LastIndexByte(typ, '.')+1:] {
	case "string":
		return pbString
	case "bool":
		return pbBool
	}
	return pbNumber
}

func printOneof(o *pbOneof) string {
	var b strings.Builder
	b.WriteString("oneof " + o.name + " {")
	if len(o.options) > 0 {
		b.WriteByte('\n')
		for _, opt := range o.options {
			appendIndented(&b, optionStatement(opt))
		}
	}
	if len(o.fields) > 0 {
		b.WriteByte('\n')
		for _, f := range o.fields {
			appendIndented(&b, printField(f))
		}
	}
	if len(o.groups) > 0 {
		b.WriteByte('\n')
		for _, g := range o.groups {
			appendIndented(&b, printGroup(g))
		}
	}
	b.WriteString("}\n")
	return b.String()
}

func printGroup(g *pbGroup) string {
	var b strings.Builder
	if g.label != "" {
		b.WriteString(g.label + " ")
	}
	b.WriteString("group " + g.name + " = " + strconv.FormatInt(g.tag, 10) + " {")
	if len(g.fields) > 0 {
		b.WriteByte('\n')
		for _, f := range g.fields {
			appendIndented(&b, printField(f))
		}
	}
	b.WriteString("}\n")
	return b.String()
}

func printExtend(e *pbExtend) string {
	var b strings.Builder
	b.WriteString("extend " + e.name + " {")
	if len(e.fields) > 0 {
		b.WriteByte('\n')
		for _, f := range e.fields {
			appendIndented(&b, printField(f))
		}
	}
	b.WriteString("}\n")
	return b.String()
}

func printService(s *pbService) string {
	var b strings.Builder
	b.WriteString("service " + s.name + " {")
	if len(s.options) > 0 {
		b.WriteByte('\n')
		for _, o := range s.options {
			appendIndented(&b, optionStatement(o))
		}
	}
	if len(s.rpcs) > 0 {
		b.WriteByte('\n')
		for _, r := range s.rpcs {
			appendIndented(&b, printRPC(r))
		}
	}
	b.WriteString("}\n")
	return b.String()
}

func printRPC(r *pbRPC) string {
	var b strings.Builder
	b.WriteString("rpc " + r.name + " (")
	if r.reqStream {
		b.WriteString("stream ")
	}
	b.WriteString(r.request + ") returns (")
	if r.resStream {
		b.WriteString("stream ")
	}
	b.WriteString(r.response + ")")
	if len(r.options) > 0 {
		b.WriteString(" {\n")
		for _, o := range r.options {
			appendIndented(&b, optionStatement(o))
		}
		b.WriteByte('}')
	}
	b.WriteString(";\n")
	return b.String()
}

func optionStatement(o *pbOption) string {
	return "option " + printOption(o) + ";\n"
}

// printOption is one option's name and value: name = value, or
// (a).b = value for a nested one.
func printOption(o *pbOption) string {
	name := o.name
	if o.paren {
		name = "(" + name + ")"
	}
	switch o.kind {
	case pbString:
		return name + " = \"" + escapeProtobufString(o.value.(string)) + "\""
	case pbBool, pbEnumKind, pbNumber:
		return name + " = " + o.value.(string)
	case pbNested:
		return name + "." + printOption(o.value.(*pbOption))
	case pbMap:
		var b strings.Builder
		b.WriteString(name + " = {\n")
		writeOptionMap(&b, o.value.(*pbMapValue))
		b.WriteByte('}')
		return b.String()
	case pbList:
		return name + " = " + valueList(o.value.([]any))
	}
	return name
}

// optionList is a bracketed list of options, or of aggregate values: on
// one line when it has one item, else one item a line.
func optionList(opts []*pbOption) string {
	items := make([]any, len(opts))
	for i, o := range opts {
		items[i] = o
	}
	return valueList(items)
}

func valueList(items []any) string {
	if len(items) == 1 {
		return "[" + formatOptionValue(items[0]) + "]"
	}
	var b strings.Builder
	b.WriteString("[\n")
	for i, it := range items {
		s := formatOptionValue(it)
		if i < len(items)-1 {
			s += ","
		}
		appendIndented(&b, s)
	}
	b.WriteByte(']')
	return b.String()
}

func writeOptionMap(b *strings.Builder, m *pbMapValue) {
	for i, k := range m.keys {
		s := k + ": " + formatOptionValue(m.vals[k])
		if i < len(m.keys)-1 {
			s += ","
		}
		appendIndented(b, s)
	}
}

// formatOptionValue is a value inside an aggregate or a list.
func formatOptionValue(v any) string {
	switch v := v.(type) {
	case string:
		return "\"" + escapeProtobufString(v) + "\""
	case pbPrim:
		return v.text
	case *pbMapValue:
		var b strings.Builder
		b.WriteString("{\n")
		writeOptionMap(&b, v)
		b.WriteByte('}')
		return b.String()
	case []any:
		var b strings.Builder
		b.WriteString("[\n")
		for i, it := range v {
			s := formatOptionValue(it)
			if i < len(v)-1 {
				s += ","
			}
			appendIndented(&b, s)
		}
		b.WriteByte(']')
		return b.String()
	case *pbOption:
		return printOption(v)
	}
	return ""
}

// appendIndented indents each line of s by two spaces. Like Java's
// String.split, it drops trailing empty lines but keeps inner ones, which
// thus become lines of two spaces, as in Confluent's text.
func appendIndented(b *strings.Builder, s string) {
	lines := strings.Split(s, "\n")
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	for _, l := range lines {
		b.WriteString("  " + l + "\n")
	}
}

// escapeProtobufString escapes as Confluent's escapeChars does: the C
// escapes and quotes; everything else as is.
func escapeProtobufString(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '\a':
			b.WriteString(`\a`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\v':
			b.WriteString(`\v`)
		case '\\':
			b.WriteString(`\\`)
		case '\'':
			b.WriteString(`\'`)
		case '"':
			b.WriteString(`\"`)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// pbFileFromAST builds the element tree of a parsed .proto file.
func pbFileFromAST(n *ast.FileNode) *pbFile {
	f := &pbFile{}
	if n.Syntax != nil {
		f.syntax = n.Syntax.Syntax.AsString()
	}
	seen := map[string]bool{}
	for _, d := range n.Decls {
		switch d := d.(type) {
		case *ast.PackageNode:
			f.pkg = string(d.Name.AsIdentifier())
		case *ast.ImportNode:
			name := d.Name.AsString()
			if seen[name] {
				continue
			}
			seen[name] = true
			if d.Public != nil {
				f.publicImports = append(f.publicImports, name)
			} else {
				f.imports = append(f.imports, name)
			}
		case *ast.OptionNode:
			f.options = append(f.options, optionFromAST(n, d))
		case *ast.MessageNode:
			f.types = append(f.types, messageFromAST(n, d))
		case *ast.EnumNode:
			f.types = append(f.types, enumFromAST(n, d))
		case *ast.ExtendNode:
			f.extends = append(f.extends, extendFromAST(n, d))
		case *ast.ServiceNode:
			f.services = append(f.services, serviceFromAST(n, d))
		}
	}
	return f
}

func messageFromAST(file *ast.FileNode, n *ast.MessageNode) *pbMessage {
	m := &pbMessage{name: n.Name.Val}
	fillMessageBody(file, m, n.Decls)
	return m
}

func fillMessageBody(file *ast.FileNode, m *pbMessage, decls []ast.MessageElement) {
	for _, d := range decls {
		switch d := d.(type) {
		case *ast.OptionNode:
			m.options = append(m.options, optionFromAST(file, d))
		case *ast.FieldNode:
			m.fields = append(m.fields, fieldFromAST(file, d))
		case *ast.MapFieldNode:
			m.fields = append(m.fields, mapFieldFromAST(file, d))
		case *ast.OneofNode:
			m.oneofs = append(m.oneofs, oneofFromAST(file, d))
		case *ast.GroupNode:
			m.groups = append(m.groups, groupFromAST(file, d))
		case *ast.MessageNode:
			m.nested = append(m.nested, messageFromAST(file, d))
		case *ast.EnumNode:
			m.nested = append(m.nested, enumFromAST(file, d))
		case *ast.ExtendNode:
			m.extends = append(m.extends, extendFromAST(file, d))
		case *ast.ExtensionRangeNode:
			r := &pbRanges{values: rangesFromAST(d.Ranges)}
			r.options = compactOptions(file, d.Options)
			m.extensions = append(m.extensions, r)
		case *ast.ReservedNode:
			m.reserveds = append(m.reserveds, reservedFromAST(d))
		}
	}
}

func enumFromAST(file *ast.FileNode, n *ast.EnumNode) *pbEnum {
	e := &pbEnum{name: n.Name.Val}
	for _, d := range n.Decls {
		switch d := d.(type) {
		case *ast.OptionNode:
			e.options = append(e.options, optionFromAST(file, d))
		case *ast.EnumValueNode:
			c := &pbEnumConstant{name: d.Name.Val, options: compactOptions(file, d.Options)}
			if v, ok := d.Number.AsInt64(); ok {
				c.tag = v
			}
			e.constants = append(e.constants, c)
		case *ast.ReservedNode:
			e.reserveds = append(e.reserveds, reservedFromAST(d))
		}
	}
	return e
}

func reservedFromAST(n *ast.ReservedNode) *pbRanges {
	r := &pbRanges{values: rangesFromAST(n.Ranges)}
	for _, name := range n.Names {
		r.values = append(r.values, pbRange{name: name.AsString()})
	}
	for _, id := range n.Identifiers {
		r.values = append(r.values, pbRange{name: id.Val})
	}
	return r
}

func rangesFromAST(ranges []*ast.RangeNode) []pbRange {
	var out []pbRange
	for _, rn := range ranges {
		start, _ := rn.StartVal.AsInt64()
		v := pbRange{start: start, end: start, single: rn.To == nil}
		switch {
		case rn.Max != nil:
			v.max = true
		case rn.EndVal != nil:
			v.end, _ = rn.EndVal.AsInt64()
		}
		out = append(out, v)
	}
	return out
}

func fieldFromAST(file *ast.FileNode, n *ast.FieldNode) *pbField {
	f := &pbField{typ: string(n.FldType.AsIdentifier()), name: n.Name.Val, tag: int64(n.Tag.Val)}
	if n.Label.KeywordNode != nil {
		f.label = n.Label.Val
	}
	setFieldOptions(file, f, n.Options)
	return f
}

func mapFieldFromAST(file *ast.FileNode, n *ast.MapFieldNode) *pbField {
	f := &pbField{
		mapKey:   n.MapType.KeyType.Val,
		mapValue: string(n.MapType.ValueType.AsIdentifier()),
		name:     n.Name.Val,
		tag:      int64(n.Tag.Val),
	}
	f.typ = "map<" + f.mapKey + ", " + f.mapValue + ">"
	setFieldOptions(file, f, n.Options)
	return f
}

// setFieldOptions keeps default and json_name apart, as Wire does.
func setFieldOptions(file *ast.FileNode, f *pbField, opts *ast.CompactOptionsNode) {
	for _, o := range compactOptions(file, opts) {
		switch {
		case !o.paren && o.name == "default" && isScalarOption(o):
			v := o.value.(string)
			f.defValue = &v
		case !o.paren && o.name == "json_name" && o.kind == pbString:
			v := o.value.(string)
			f.jsonName = &v
		default:
			f.options = append(f.options, o)
		}
	}
}

func isScalarOption(o *pbOption) bool {
	switch o.kind {
	case pbString, pbBool, pbNumber, pbEnumKind:
		return true
	}
	return false
}

func oneofFromAST(file *ast.FileNode, n *ast.OneofNode) *pbOneof {
	o := &pbOneof{name: n.Name.Val}
	for _, d := range n.Decls {
		switch d := d.(type) {
		case *ast.OptionNode:
			o.options = append(o.options, optionFromAST(file, d))
		case *ast.FieldNode:
			o.fields = append(o.fields, fieldFromAST(file, d))
		case *ast.GroupNode:
			o.groups = append(o.groups, groupFromAST(file, d))
		}
	}
	return o
}

func groupFromAST(file *ast.FileNode, n *ast.GroupNode) *pbGroup {
	g := &pbGroup{name: n.Name.Val, tag: int64(n.Tag.Val)}
	if n.Label.KeywordNode != nil {
		g.label = n.Label.Val
	}
	for _, d := range n.Decls {
		if fn, ok := d.(*ast.FieldNode); ok {
			g.fields = append(g.fields, fieldFromAST(file, fn))
		}
	}
	return g
}

func extendFromAST(file *ast.FileNode, n *ast.ExtendNode) *pbExtend {
	e := &pbExtend{name: string(n.Extendee.AsIdentifier())}
	for _, d := range n.Decls {
		if fn, ok := d.(*ast.FieldNode); ok {
			e.fields = append(e.fields, fieldFromAST(file, fn))
		}
	}
	return e
}

func serviceFromAST(file *ast.FileNode, n *ast.ServiceNode) *pbService {
	s := &pbService{name: n.Name.Val}
	for _, d := range n.Decls {
		switch d := d.(type) {
		case *ast.OptionNode:
			s.options = append(s.options, optionFromAST(file, d))
		case *ast.RPCNode:
			r := &pbRPC{
				name:      d.Name.Val,
				request:   string(d.Input.MessageType.AsIdentifier()),
				response:  string(d.Output.MessageType.AsIdentifier()),
				reqStream: d.Input.Stream != nil,
				resStream: d.Output.Stream != nil,
			}
			for _, rd := range d.Decls {
				if on, ok := rd.(*ast.OptionNode); ok {
					r.options = append(r.options, optionFromAST(file, on))
				}
			}
			s.rpcs = append(s.rpcs, r)
		}
	}
	return s
}

func compactOptions(file *ast.FileNode, n *ast.CompactOptionsNode) []*pbOption {
	if n == nil {
		return nil
	}
	var out []*pbOption
	for _, o := range n.Options {
		out = append(out, optionFromAST(file, o))
	}
	return out
}

// optionFromAST reads name = value; a dotted name becomes options nested
// in one another, as Wire's OPTION kind.
func optionFromAST(file *ast.FileNode, n *ast.OptionNode) *pbOption {
	parts := n.Name.Parts
	leaf := optionValueFromAST(file, n.Val)
	leaf.name, leaf.paren = fieldRefName(parts[len(parts)-1])
	for i := len(parts) - 2; i >= 0; i-- {
		name, paren := fieldRefName(parts[i])
		leaf = &pbOption{name: name, paren: paren, kind: pbNested, value: leaf}
	}
	// Wire prints the parts after the first without parentheses.
	return leaf
}

func fieldRefName(r *ast.FieldReferenceNode) (string, bool) {
	name := string(r.Name.AsIdentifier())
	if r.IsExtension() {
		return name, true
	}
	return name, false
}

// optionValueFromAST is an option without its name.
func optionValueFromAST(file *ast.FileNode, v ast.ValueNode) *pbOption {
	switch v := v.(type) {
	case ast.StringValueNode:
		return &pbOption{kind: pbString, value: v.AsString()}
	case ast.IdentValueNode:
		id := string(v.AsIdentifier())
		if id == "true" || id == "false" {
			return &pbOption{kind: pbBool, value: id}
		}
		return &pbOption{kind: pbEnumKind, value: id}
	case *ast.MessageLiteralNode:
		return &pbOption{kind: pbMap, value: mapFromAST(file, v)}
	case *ast.ArrayLiteralNode:
		return &pbOption{kind: pbList, value: listFromAST(file, v)}
	}
	return &pbOption{kind: pbNumber, value: rawText(file, v)}
}

func mapFromAST(file *ast.FileNode, n *ast.MessageLiteralNode) *pbMapValue {
	m := &pbMapValue{vals: map[string]any{}}
	for _, el := range n.Elements {
		key := string(el.Name.Name.AsIdentifier())
		if el.Name.IsExtension() || el.Name.IsAnyTypeReference() {
			if el.Name.IsAnyTypeReference() {
				key = string(el.Name.URLPrefix.AsIdentifier()) + "/" + key
			}
			key = "[" + key + "]"
		}
		m.put(key, aggregateValue(file, el.Val))
	}
	return m
}

func listFromAST(file *ast.FileNode, n *ast.ArrayLiteralNode) []any {
	out := []any{}
	for _, el := range n.Elements {
		out = append(out, aggregateValue(file, el))
	}
	return out
}

// aggregateValue is a value inside a message or list literal.
func aggregateValue(file *ast.FileNode, v ast.ValueNode) any {
	switch v := v.(type) {
	case ast.StringValueNode:
		return v.AsString()
	case ast.IdentValueNode:
		id := string(v.AsIdentifier())
		if id == "true" || id == "false" {
			return pbPrim{kind: pbBool, text: id}
		}
		return pbPrim{kind: pbEnumKind, text: id}
	case *ast.MessageLiteralNode:
		return mapFromAST(file, v)
	case *ast.ArrayLiteralNode:
		return listFromAST(file, v)
	}
	return pbPrim{kind: pbNumber, text: rawText(file, v)}
}

// rawText is a number as written (0x10 stays 0x10), its sign included.
func rawText(file *ast.FileNode, v ast.ValueNode) string {
	switch v := v.(type) {
	case *ast.NegativeIntLiteralNode:
		return "-" + file.NodeInfo(v.Uint).RawText()
	case *ast.SignedFloatLiteralNode:
		return string(v.Sign.Rune) + rawText(file, v.Float)
	}
	if t, ok := v.(ast.TerminalNode); ok {
		return file.NodeInfo(t).RawText()
	}
	return ""
}

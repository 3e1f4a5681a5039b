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
// toProtoFile reads one (protobuf_ast.go, protobuf_descriptor.go).

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
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
	appendSection(&b, m.options, optionStatement)
	appendSection(&b, m.fields, printField)
	appendSection(&b, m.oneofs, printOneof)
	appendSection(&b, m.groups, printGroup)
	if len(m.extensions) > 0 {
		b.WriteByte('\n')
		for _, e := range m.extensions {
			appendIndented(&b, printRanges("extensions", e))
		}
	}
	appendSection(&b, m.extends, printExtend)
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
// type: quoted for strings, bare for the rest. Confluent prints a bytes
// default bare too, which no protobuf parser reads back; Samsa quotes it,
// since a stored text must parse.
func defaultKind(typ string) pbOptionKind {
	switch typ[strings.LastIndexByte(typ, '.')+1:] {
	case "string", "bytes":
		return pbString
	case "bool":
		return pbBool
	}
	return pbNumber
}

func printOneof(o *pbOneof) string {
	var b strings.Builder
	b.WriteString("oneof " + o.name + " {")
	appendSection(&b, o.options, optionStatement)
	appendSection(&b, o.fields, printField)
	appendSection(&b, o.groups, printGroup)
	b.WriteString("}\n")
	return b.String()
}

func printGroup(g *pbGroup) string {
	var b strings.Builder
	if g.label != "" {
		b.WriteString(g.label + " ")
	}
	b.WriteString("group " + g.name + " = " + strconv.FormatInt(g.tag, 10) + " {")
	appendSection(&b, g.fields, printField)
	b.WriteString("}\n")
	return b.String()
}

func printExtend(e *pbExtend) string {
	var b strings.Builder
	b.WriteString("extend " + e.name + " {")
	appendSection(&b, e.fields, printField)
	b.WriteString("}\n")
	return b.String()
}

func printService(s *pbService) string {
	var b strings.Builder
	b.WriteString("service " + s.name + " {")
	appendSection(&b, s.options, optionStatement)
	appendSection(&b, s.rpcs, printRPC)
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
// appendSection writes a block's section: a blank line, then each item
// printed and indented; nothing for no items.
func appendSection[T any](b *strings.Builder, items []T, print func(T) string) {
	if len(items) == 0 {
		return
	}
	b.WriteByte('\n')
	for _, it := range items {
		appendIndented(b, print(it))
	}
}

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
// escapes and quotes; everything else as is, except what Confluent would
// write raw and no parser reads back (other control characters, bytes
// that are not UTF-8), which is written as an octal escape.
func escapeProtobufString(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || (r < 0x20 && !strings.ContainsRune("\a\b\f\n\r\t\v", r)) || r == 0x7f {
			fmt.Fprintf(&b, "\\%03o", s[i])
			i++
			continue
		}
		i += size
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

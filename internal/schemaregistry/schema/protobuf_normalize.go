package schema

// The normalized form of a Protobuf schema, as Confluent's
// ProtobufSchema.normalize makes it (ProtobufSchemaUtils'
// toNormalizedString, then the text parsed and printed again):
//
//   - imports sorted, each once; proto2's syntax line left out;
//   - fields, oneof fields, groups and enum constants in number order,
//     oneofs by their first field's number, empty oneofs dropped;
//   - reserved and extension ranges one a statement, by number, names
//     last;
//   - type names fully qualified with a leading dot (.pkg.Foo), in
//     fields, map values, extends and rpcs; map-entry messages written as
//     map<K, V> fields;
//   - options sorted by name; custom option names fully qualified, a
//     dotted (a).b = v written as (a) = { b: v }, and the settings of one
//     non-repeated custom option merged into one aggregate; aggregate keys
//     sorted, empty lists dropped, one-item lists unwrapped; numbers
//     rewritten in decimal (0x10 as 16, 1.0 as 1).
//
// Messages, enums and services keep their order: a record's message
// indexes count messages in the schema's order.

import (
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/bufbuild/protocompile/parser"
	"github.com/bufbuild/protocompile/reporter"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// pbNormalizer resolves names as Confluent's Context does: relative to
// the package and the enclosing types, innermost first.
type pbNormalizer struct {
	pkg   string
	scope []string
	types map[string]protoreflect.Descriptor
	exts  map[string]protoreflect.FieldDescriptor
}

// normalizeProtobuf is the normalized element tree of f, whose linked
// file is fd; the text printed from it is printed once more after a
// fresh parse, as Confluent re-reads its normalized text.
func normalizeProtobuf(f *pbFile, fd protoreflect.FileDescriptor) string {
	n := &pbNormalizer{pkg: string(fd.Package()), types: map[string]protoreflect.Descriptor{}, exts: map[string]protoreflect.FieldDescriptor{}}
	n.index(fd, map[string]bool{})
	text := printProtobuf(n.file(f), true)
	node, err := parser.Parse(protobufMainFile, strings.NewReader(text), reporter.NewHandler(nil))
	if err != nil {
		return text
	}
	return printProtobuf(pbFileFromAST(node), true)
}

// index records every type and extension fd and its imports declare.
func (n *pbNormalizer) index(fd protoreflect.FileDescriptor, seen map[string]bool) {
	if seen[fd.Path()] {
		return
	}
	seen[fd.Path()] = true
	n.indexScope(fd.Messages(), fd.Enums(), fd.Extensions())
	for i := 0; i < fd.Imports().Len(); i++ {
		n.index(fd.Imports().Get(i).FileDescriptor, seen)
	}
}

func (n *pbNormalizer) indexScope(ms protoreflect.MessageDescriptors, es protoreflect.EnumDescriptors, xs protoreflect.ExtensionDescriptors) {
	for i := 0; i < ms.Len(); i++ {
		m := ms.Get(i)
		n.types[string(m.FullName())] = m
		n.indexScope(m.Messages(), m.Enums(), m.Extensions())
	}
	for i := 0; i < es.Len(); i++ {
		n.types[string(es.Get(i).FullName())] = es.Get(i)
	}
	for i := 0; i < xs.Len(); i++ {
		n.exts[string(xs.Get(i).FullName())] = xs.Get(i)
	}
}

// resolve finds name's full name (no leading dot) by exists, or "".
func (n *pbNormalizer) resolve(name string, exists func(string) bool) string {
	if strings.HasPrefix(name, ".") {
		if exists(name[1:]) {
			return name[1:]
		}
		return ""
	}
	var prefix []string
	if n.pkg != "" {
		prefix = strings.Split(n.pkg, ".")
	}
	prefix = append(prefix, n.scope...)
	for ; len(prefix) > 0; prefix = prefix[:len(prefix)-1] {
		if full := strings.Join(prefix, ".") + "." + name; exists(full) {
			return full
		}
	}
	if exists(name) {
		return name
	}
	return ""
}

func (n *pbNormalizer) typeExists(s string) bool { _, ok := n.types[s]; return ok }
func (n *pbNormalizer) extExists(s string) bool  { _, ok := n.exts[s]; return ok }

// qualify is a type name resolved and written with a leading dot, or as
// written when it does not resolve.
func (n *pbNormalizer) qualify(name string) string {
	if full := n.resolve(name, n.typeExists); full != "" {
		return "." + full
	}
	return name
}

func (n *pbNormalizer) enter(name string) func() {
	n.scope = append(n.scope, name)
	return func() { n.scope = n.scope[:len(n.scope)-1] }
}

func (n *pbNormalizer) file(f *pbFile) *pbFile {
	out := &pbFile{syntax: f.syntax, pkg: f.pkg}
	out.imports = sortedDistinct(f.imports)
	out.publicImports = sortedDistinct(f.publicImports)
	out.options = n.options(f.options)
	out.types = n.typeList(f.types)
	out.extends = n.extends(f.extends)
	for _, s := range f.services {
		out.services = append(out.services, n.service(s))
	}
	return out
}

func sortedDistinct(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return slices.Compact(out)
}

// types_ normalizes a scope's types, dropping map-entry messages, which
// the fields using them now write as map<K, V>.
func (n *pbNormalizer) typeList(ts []pbType) []pbType {
	var out []pbType
	for _, t := range ts {
		switch t := t.(type) {
		case *pbMessage:
			if isMapEntryElement(t) {
				continue
			}
			done := n.enter(t.name)
			out = append(out, n.message(t))
			done()
		case *pbEnum:
			done := n.enter(t.name)
			out = append(out, n.enum(t))
			done()
		}
	}
	return out
}

func isMapEntryElement(m *pbMessage) bool {
	for _, o := range m.options {
		if !o.paren && o.name == "map_entry" && o.kind == pbBool && o.value == "true" {
			return true
		}
	}
	return false
}

func (n *pbNormalizer) message(m *pbMessage) *pbMessage {
	out := &pbMessage{name: m.name}
	out.reserveds = splitRanges(m.reserveds, true)
	out.options = n.options(m.options)
	out.fields = n.fields(m.fields)
	for _, o := range m.oneofs {
		if len(o.fields) == 0 {
			continue
		}
		no := &pbOneof{name: o.name, options: n.options(o.options), fields: n.fields(o.fields), groups: n.groups(o.groups)}
		out.oneofs = append(out.oneofs, no)
	}
	slices.SortStableFunc(out.oneofs, func(a, b *pbOneof) int { return int(a.fields[0].tag - b.fields[0].tag) })
	out.groups = n.groups(m.groups)
	out.extensions = splitRanges(m.extensions, false)
	out.extends = n.extends(m.extends)
	out.nested = n.typeList(m.nested)
	return out
}

func (n *pbNormalizer) fields(fs []*pbField) []*pbField {
	out := make([]*pbField, 0, len(fs))
	for _, f := range fs {
		out = append(out, n.field(f))
	}
	slices.SortStableFunc(out, func(a, b *pbField) int { return cmpInt64(a.tag, b.tag) })
	return out
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

var pbScalarTypes = map[string]bool{
	"double": true, "float": true, "int32": true, "int64": true, "uint32": true, "uint64": true,
	"sint32": true, "sint64": true, "fixed32": true, "fixed64": true, "sfixed32": true, "sfixed64": true,
	"bool": true, "string": true, "bytes": true,
}

// field qualifies the field's type and folds default and json_name into
// its options, which are then sorted with the rest, as Confluent does.
func (n *pbNormalizer) field(f *pbField) *pbField {
	out := &pbField{label: f.label, typ: f.typ, name: f.name, tag: f.tag, mapKey: f.mapKey, mapValue: f.mapValue}
	if f.mapKey == "" && !pbScalarTypes[f.typ] {
		full := n.resolve(f.typ, n.typeExists)
		if entry, ok := n.types[full].(protoreflect.MessageDescriptor); ok && entry.IsMapEntry() {
			out.mapKey = scalarOrQualified(entry.Fields().ByNumber(1))
			out.mapValue = scalarOrQualified(entry.Fields().ByNumber(2))
		} else if full != "" {
			out.typ = "." + full
		}
	}
	if out.mapKey != "" {
		if !pbScalarTypes[out.mapValue] {
			out.mapValue = n.qualify(out.mapValue)
		}
		out.typ = "map<" + out.mapKey + ", " + out.mapValue + ">"
		out.label = ""
	}
	opts := slices.Clone(f.options)
	if f.defValue != nil {
		opts = append(opts, &pbOption{name: "default", kind: defaultKind(f.typ), value: *f.defValue})
	}
	if f.jsonName != nil {
		opts = append(opts, &pbOption{name: "json_name", kind: pbString, value: *f.jsonName})
	}
	out.options = n.options(opts)
	return out
}

// scalarOrQualified is a map entry's key or value type.
func scalarOrQualified(f protoreflect.FieldDescriptor) string {
	switch {
	case f == nil:
		return ""
	case f.Message() != nil:
		return "." + string(f.Message().FullName())
	case f.Enum() != nil:
		return "." + string(f.Enum().FullName())
	}
	return f.Kind().String()
}

func (n *pbNormalizer) groups(gs []*pbGroup) []*pbGroup {
	var out []*pbGroup
	for _, g := range gs {
		out = append(out, &pbGroup{label: g.label, name: g.name, tag: g.tag, fields: n.fields(g.fields)})
	}
	slices.SortStableFunc(out, func(a, b *pbGroup) int { return cmpInt64(a.tag, b.tag) })
	return out
}

// extends groups the extends of a scope by their qualified extendee.
func (n *pbNormalizer) extends(es []*pbExtend) []*pbExtend {
	var out []*pbExtend
	byName := map[string]*pbExtend{}
	for _, e := range es {
		name := n.qualify(e.name)
		g, ok := byName[name]
		if !ok {
			g = &pbExtend{name: name}
			byName[name] = g
			out = append(out, g)
		}
		for _, f := range e.fields {
			g.fields = append(g.fields, n.field(f))
		}
	}
	for _, g := range out {
		slices.SortStableFunc(g.fields, func(a, b *pbField) int { return cmpInt64(a.tag, b.tag) })
	}
	return out
}

func (n *pbNormalizer) enum(e *pbEnum) *pbEnum {
	out := &pbEnum{name: e.name, reserveds: splitRanges(e.reserveds, true), options: n.options(e.options)}
	for _, c := range e.constants {
		out.constants = append(out.constants, &pbEnumConstant{name: c.name, tag: c.tag, options: n.options(c.options)})
	}
	slices.SortStableFunc(out.constants, func(a, b *pbEnumConstant) int {
		if c := cmpInt64(a.tag, b.tag); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
	return out
}

func (n *pbNormalizer) service(s *pbService) *pbService {
	out := &pbService{name: s.name, options: n.options(s.options)}
	for _, r := range s.rpcs {
		out.rpcs = append(out.rpcs, &pbRPC{
			name: r.name, request: n.qualify(r.request), response: n.qualify(r.response),
			reqStream: r.reqStream, resStream: r.resStream, options: n.options(r.options),
		})
	}
	return out
}

// splitRanges writes each reserved or extension value as its own
// statement, sorted by number (names last, by name when byName).
func splitRanges(rs []*pbRanges, byName bool) []*pbRanges {
	var out []*pbRanges
	for _, r := range rs {
		for _, v := range r.values {
			if v.name == "" && !v.max && v.start == v.end {
				v.single = true
			}
			out = append(out, &pbRanges{values: []pbRange{v}, options: r.options})
		}
	}
	key := func(v pbRange) int64 {
		if v.name != "" {
			return 1<<31 - 1
		}
		return v.start
	}
	slices.SortStableFunc(out, func(a, b *pbRanges) int {
		if c := cmpInt64(key(a.values[0]), key(b.values[0])); c != 0 || !byName {
			return c
		}
		return strings.Compare(rangeString(a.values[0]), rangeString(b.values[0]))
	})
	return out
}

// rangeString is how Java prints a reserved value, the tie-break of
// Confluent's sort.
func rangeString(v pbRange) string {
	switch {
	case v.name != "":
		return v.name
	case v.single:
		return strconv.FormatInt(v.start, 10)
	}
	return strconv.FormatInt(v.start, 10) + ".." + strconv.FormatInt(v.end, 10)
}

// options is Confluent's FormatContext.filterOptions with normalize on.
func (n *pbNormalizer) options(opts []*pbOption) []*pbOption {
	if len(opts) == 0 {
		return nil
	}
	var out []*pbOption
	for _, o := range opts {
		if o.paren {
			if full := n.resolve(o.name, n.extExists); full != "" {
				c := *o
				c.name = full
				o = transformOption(&c)
			}
		}
		out = append(out, o)
	}
	slices.SortStableFunc(out, func(a, b *pbOption) int { return strings.Compare(a.name, b.name) })
	var merged []*pbOption
	for i := 0; i < len(out); {
		j := i
		for j < len(out) && out[j].name == out[i].name {
			j++
		}
		group := out[i:j]
		if ext, ok := n.exts[out[i].name]; ok && !ext.IsList() {
			m := group[0]
			for _, r := range group[1:] {
				m = mergeOption(ext, m, r)
			}
			merged = append(merged, m)
		} else {
			merged = append(merged, group...)
		}
		i = j
	}
	for i, o := range merged {
		merged[i] = n.normalizeOption(o)
	}
	return merged
}

// transformOption writes (a).b.c = v as (a) = { b: { c: v } }.
func transformOption(o *pbOption) *pbOption {
	if o.kind != pbNested {
		return o
	}
	return &pbOption{name: o.name, paren: o.paren, kind: pbMap, value: nestedToMap(o)}
}

func nestedToMap(o *pbOption) *pbMapValue {
	inner := o.value.(*pbOption)
	var v any
	switch inner.kind {
	case pbBool, pbEnumKind, pbNumber:
		v = pbPrim{kind: inner.kind, text: inner.value.(string)}
	case pbNested:
		v = nestedToMap(inner)
	default:
		v = inner.value
	}
	return &pbMapValue{keys: []string{inner.name}, vals: map[string]any{inner.name: v}}
}

// normalizeOption rewrites an option's numbers and aggregate values.
func (n *pbNormalizer) normalizeOption(o *pbOption) *pbOption {
	c := *o
	switch o.kind {
	case pbNumber:
		c.value = normalizeNumber(o.value.(string))
	case pbMap:
		c.value = n.normalizeMap(o.value.(*pbMapValue))
	case pbList:
		var items []any
		for _, it := range o.value.([]any) {
			items = append(items, n.normalizeValue(it))
		}
		c.value = items
	case pbNested:
		c.value = n.normalizeOption(o.value.(*pbOption))
	}
	return &c
}

// normalizeMap sorts the keys, qualifies extension keys and drops empty
// lists.
func (n *pbNormalizer) normalizeMap(m *pbMapValue) *pbMapValue {
	out := &pbMapValue{vals: map[string]any{}}
	for _, k := range m.keys {
		v := m.vals[k]
		if l, ok := v.([]any); ok && len(l) == 0 {
			continue
		}
		if strings.HasPrefix(k, "[") && strings.HasSuffix(k, "]") {
			if full := n.resolve(k[1:len(k)-1], n.extExists); full != "" {
				k = "[" + full + "]"
			}
		}
		if _, dup := out.vals[k]; dup {
			continue // Java's TreeMap keeps the first
		}
		out.keys = append(out.keys, k)
		out.vals[k] = n.normalizeValue(v)
	}
	slices.Sort(out.keys)
	return out
}

// normalizeValue is a value in an aggregate or list: a one-item list
// becomes its item.
func (n *pbNormalizer) normalizeValue(v any) any {
	switch v := v.(type) {
	case pbPrim:
		if v.kind == pbNumber {
			v.text = normalizeNumber(v.text)
		}
		return v
	case *pbMapValue:
		return n.normalizeMap(v)
	case []any:
		if len(v) == 1 {
			return n.normalizeValue(v[0])
		}
		out := make([]any, len(v))
		for i, it := range v {
			out[i] = n.normalizeValue(it)
		}
		return out
	}
	return v
}

// mergeOption merges two settings of one non-repeated custom option.
func mergeOption(ext protoreflect.FieldDescriptor, existing, replacement *pbOption) *pbOption {
	replacement = transformOption(replacement)
	em, ok1 := existing.value.(*pbMapValue)
	rm, ok2 := replacement.value.(*pbMapValue)
	if existing.kind != pbMap || replacement.kind != pbMap || !ok1 || !ok2 {
		return replacement
	}
	return &pbOption{name: replacement.name, paren: replacement.paren, kind: pbMap, value: mergeOptionMaps(ext, em, rm)}
}

func mergeOptionMaps(container protoreflect.FieldDescriptor, a, b *pbMapValue) *pbMapValue {
	out := &pbMapValue{keys: slices.Clone(a.keys), vals: map[string]any{}}
	for k, v := range a.vals {
		out.vals[k] = v
	}
	for _, k := range b.keys {
		var nested protoreflect.FieldDescriptor
		if container != nil && container.Message() != nil {
			nested = container.Message().Fields().ByName(protoreflect.Name(k))
		}
		old, ok := out.vals[k]
		if !ok {
			out.keys = append(out.keys, k)
			out.vals[k] = b.vals[k]
			continue
		}
		out.vals[k] = mergeOptionValues(nested, old, b.vals[k])
	}
	return out
}

// mergeOptionValues merges a field set twice: nested messages deep, a
// singular scalar by the last setting, a repeated field into one list
// without repeats.
func mergeOptionValues(f protoreflect.FieldDescriptor, v1, v2 any) any {
	singular := f != nil && !f.IsList() && !f.IsMap()
	m1, ok1 := v1.(*pbMapValue)
	m2, ok2 := v2.(*pbMapValue)
	if singular && ok1 && ok2 && f.Message() != nil {
		return mergeOptionMaps(f, m1, m2)
	}
	if singular {
		return v2
	}
	var out []any
	seen := map[string]bool{}
	for _, v := range []any{v1, v2} {
		items, ok := v.([]any)
		if !ok {
			items = []any{v}
		}
		for _, it := range items {
			if k := formatOptionValue(it); !seen[k] {
				seen[k] = true
				out = append(out, it)
			}
		}
	}
	return out
}

// normalizeNumber writes a number as Confluent's normalizer does (Apache
// Commons' createNumber, then a DecimalFormat without grouping, which
// keeps at most three decimals): integers in decimal, floats rounded.
// Text that is no number (inf, nan) stays.
func normalizeNumber(s string) string {
	neg := strings.HasPrefix(s, "-")
	digits := strings.TrimPrefix(strings.TrimPrefix(s, "-"), "+")
	if i, ok := parseProtobufInt(digits); ok {
		if neg {
			i.Neg(i)
		}
		return i.String()
	}
	f, err := strconv.ParseFloat(digits, 32)
	if err != nil {
		return s
	}
	r := new(big.Float).SetFloat64(f).Text('f', 3)
	r = strings.TrimRight(strings.TrimRight(r, "0"), ".")
	if neg && r != "0" {
		r = "-" + r
	}
	return r
}

// parseProtobufInt reads a decimal, 0x hex or 0 octal integer.
func parseProtobufInt(s string) (*big.Int, bool) {
	base := 10
	switch {
	case strings.HasPrefix(s, "0x"), strings.HasPrefix(s, "0X"):
		base, s = 16, s[2:]
	case len(s) > 1 && s[0] == '0':
		base, s = 8, s[1:]
	}
	return new(big.Int).SetString(s, base)
}

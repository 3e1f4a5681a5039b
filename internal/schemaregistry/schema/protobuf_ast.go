package schema

// The element tree of a .proto file from protocompile's AST: names,
// types and option values as written, in Wire's grouping (fields, oneofs,
// nested types and the rest apart), which the canonical printer reads.

import "github.com/bufbuild/protocompile/ast"

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
	return leaf
}

// fieldRefName is an option name part: its name, and whether it is an
// extension, written in parentheses.
func fieldRefName(r *ast.FieldReferenceNode) (string, bool) {
	return string(r.Name.AsIdentifier()), r.IsExtension()
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

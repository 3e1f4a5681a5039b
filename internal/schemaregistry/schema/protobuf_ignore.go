package schema

// Confluent's ignore_extensions format of a Protobuf schema
// (ProtobufSchemaUtils with ignoreExtensions set): the schema's text
// without its custom options (Confluent's own confluent.* options
// stay), extend blocks and extension ranges, for clients whose
// generated code does not know the extensions.

import "strings"

// ProtobufWithoutExtensions is s's text in the ignore_extensions format;
// ok is false when s is not a Protobuf schema.
func ProtobufWithoutExtensions(s Schema) (text string, ok bool) {
	ps, ok := s.(*protobufSchema)
	if !ok {
		return "", false
	}
	return printProtobuf(withoutExtensions(ps.elems), false), true
}

// keepOptions drops the custom options but Confluent's.
func keepOptions(opts []*pbOption) []*pbOption {
	var out []*pbOption
	for _, o := range opts {
		if !o.paren || strings.HasPrefix(o.name, "confluent.") {
			out = append(out, o)
		}
	}
	return out
}

func withoutExtensions(f *pbFile) *pbFile {
	out := *f
	out.options = keepOptions(f.options)
	out.types = typesWithoutExtensions(f.types)
	out.extends = nil
	out.services = nil
	for _, s := range f.services {
		ns := &pbService{name: s.name, options: keepOptions(s.options)}
		for _, r := range s.rpcs {
			nr := *r
			nr.options = keepOptions(r.options)
			ns.rpcs = append(ns.rpcs, &nr)
		}
		out.services = append(out.services, ns)
	}
	return &out
}

func typesWithoutExtensions(ts []pbType) []pbType {
	var out []pbType
	for _, t := range ts {
		switch t := t.(type) {
		case *pbMessage:
			m := *t
			m.options = keepOptions(t.options)
			m.fields = fieldsWithoutExtensions(t.fields)
			m.oneofs = nil
			for _, o := range t.oneofs {
				no := *o
				no.options = keepOptions(o.options)
				no.fields = fieldsWithoutExtensions(o.fields)
				m.oneofs = append(m.oneofs, &no)
			}
			m.extensions, m.extends = nil, nil
			m.nested = typesWithoutExtensions(t.nested)
			out = append(out, &m)
		case *pbEnum:
			e := *t
			e.options = keepOptions(t.options)
			e.constants = nil
			for _, c := range t.constants {
				nc := *c
				nc.options = keepOptions(c.options)
				e.constants = append(e.constants, &nc)
			}
			out = append(out, &e)
		}
	}
	return out
}

func fieldsWithoutExtensions(fs []*pbField) []*pbField {
	out := make([]*pbField, 0, len(fs))
	for _, f := range fs {
		nf := *f
		nf.options = keepOptions(f.options)
		out = append(out, &nf)
	}
	return out
}

package transforms

import "github.com/samsa-io/samsa/connect"

// Flatten (Key and Value) lifts nested structs (or maps) into one level,
// joining names with the delimiter; arrays stay as they are. A flattened
// field is optional when any ancestor was, and takes its default from the
// nearest ancestor struct default that has one.
type flatten struct {
	side      side
	delimiter string
	cache     schemaCache
}

func flattenConfig() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "delimiter", Type: connect.TypeString, Default: ".", Importance: connect.Medium,
			Documentation: "Delimiter to insert between field names from the input record when generating field names for the output record"})
}

func (t *flatten) Config() *connect.ConfigDef { return flattenConfig() }

func (t *flatten) Configure(props map[string]string) error {
	c, err := parseConfig(flattenConfig(), props)
	if err != nil {
		return err
	}
	t.delimiter = c.String("delimiter")
	return nil
}

const flattenPurpose = "flattening"

func (t *flatten) name(prefix, field string) string {
	if prefix == "" {
		return field
	}
	return prefix + t.delimiter + field
}

func (t *flatten) Apply(r connect.Record) (connect.Record, bool, error) {
	v := t.side.value(r)
	if v == nil {
		return r, true, nil
	}
	if t.side.schema(r) == nil {
		m, err := requireMap(v, flattenPurpose)
		if err != nil {
			return r, false, err
		}
		out := map[string]any{}
		if err := t.flattenMap(m, "", out); err != nil {
			return r, false, err
		}
		return t.side.with(r, nil, out), true, nil
	}
	st, err := requireStruct(v, flattenPurpose)
	if err != nil {
		return r, false, err
	}
	schema, err := t.cache.getOrBuild(t.side.schema(r), t.updatedSchema)
	if err != nil {
		return r, false, err
	}
	out := connect.NewStructValue(schema)
	if err := t.flattenStruct(st, "", out); err != nil {
		return r, false, err
	}
	return t.side.with(r, schema, out), true, nil
}

func (t *flatten) flattenMap(m map[string]any, prefix string, out map[string]any) error {
	for k, v := range m {
		name := t.name(prefix, k)
		if v == nil {
			out[name] = nil
			continue
		}
		switch schemaTypeOf(v) {
		case "":
			return dataErrorf("Flatten transformation was passed a value of type %s which is not supported by Connect's data API", className(v))
		case connect.Map:
			nested, err := requireMap(v, flattenPurpose)
			if err != nil {
				return err
			}
			if err := t.flattenMap(nested, name, out); err != nil {
				return err
			}
		case connect.Struct_:
			return dataErrorf("Flatten transformation does not support class %s for record without schemas (for field %s).", className(v), name)
		default:
			out[name] = v
		}
	}
	return nil
}

func (t *flatten) updatedSchema(in *connect.Schema) (*connect.Schema, error) {
	if in.Type != connect.Struct_ {
		return nil, dataErrorf("Only Struct objects supported for [%s], found schema: %s", flattenPurpose, in)
	}
	b := structBasics(in)
	def, _ := in.Default.(*connect.Struct)
	if err := t.flattenSchema(in, "", b, in.Optional, def); err != nil {
		return nil, err
	}
	return b.build()
}

func (t *flatten) flattenSchema(s *connect.Schema, prefix string, b *schemaBuilder, optional bool, parentDefault *connect.Struct) error {
	for _, f := range s.Fields {
		name := t.name(prefix, f.Name)
		fieldOptional := optional || f.Schema.Optional
		def := f.Schema.Default
		if def == nil && parentDefault != nil {
			def = parentDefault.GetField(f)
		}
		switch f.Schema.Type {
		case connect.Struct_:
			d, _ := def.(*connect.Struct)
			if err := t.flattenSchema(f.Schema, name, b, fieldOptional, d); err != nil {
				return err
			}
		case connect.Map:
			return dataErrorf("Flatten transformation does not support %s for record with schemas (for field %s).", f.Schema.Type, name)
		default:
			fs := basics(f.Schema)
			fs.Optional = fieldOptional
			fs.Default = def
			b.field(name, &fs)
		}
	}
	return nil
}

func (t *flatten) flattenStruct(st *connect.Struct, prefix string, out *connect.Struct) error {
	if st == nil {
		return nil
	}
	for _, f := range st.Schema().Fields {
		name := t.name(prefix, f.Name)
		switch f.Schema.Type {
		case connect.Struct_:
			nested, err := requireStructOrNil(st.GetField(f), flattenPurpose)
			if err != nil {
				return err
			}
			if err := t.flattenStruct(nested, name, out); err != nil {
				return err
			}
		case connect.Map:
			return dataErrorf("Flatten transformation does not support %s for record with schemas (for field %s).", f.Schema.Type, name)
		default:
			if err := out.Put(name, st.GetField(f)); err != nil {
				return err
			}
		}
	}
	return nil
}

func (t *flatten) Close() error { return nil }

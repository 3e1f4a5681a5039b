package transforms

import "github.com/samsa-io/samsa/connect"

// HoistField (Key and Value) wraps the key or value in a struct (or map)
// with one field.
type hoistField struct {
	side  side
	field string
	cache schemaCache
}

func hoistFieldConfig() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "field", Type: connect.TypeString, Default: connect.NoDefault, Importance: connect.Medium,
			Documentation: "Field name for the single field that will be created in the resulting Struct or Map."})
}

func (t *hoistField) Config() *connect.ConfigDef { return hoistFieldConfig() }

func (t *hoistField) Configure(props map[string]string) error {
	c, err := parseConfig(hoistFieldConfig(), props)
	if err != nil {
		return err
	}
	t.field = c.String("field")
	return nil
}

func (t *hoistField) Apply(r connect.Record) (connect.Record, bool, error) {
	schema, v := t.side.schema(r), t.side.value(r)
	if schema == nil {
		return t.side.with(r, nil, map[string]any{t.field: v}), true, nil
	}
	out, err := t.cache.getOrBuild(schema, func(in *connect.Schema) (*connect.Schema, error) {
		b := &schemaBuilder{s: connect.Schema{Type: connect.Struct_}}
		b.field(t.field, in)
		return b.build()
	})
	if err != nil {
		return r, false, err
	}
	st := connect.NewStructValue(out)
	if err := st.Put(t.field, v); err != nil {
		return r, false, err
	}
	return t.side.with(r, out, st), true, nil
}

func (t *hoistField) Close() error { return nil }

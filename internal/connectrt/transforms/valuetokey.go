package transforms

import "github.com/samsa-io/samsa/connect"

// ValueToKey replaces the key with a struct (or map) of the listed value
// fields.
type valueToKey struct {
	fields                 []string
	replaceNullWithDefault bool
	cache                  schemaCache
}

func valueToKeyConfig() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "fields", Type: connect.TypeList, Default: connect.NoDefault, Validator: nonEmptyList{},
			Importance: connect.High, Documentation: "Field names on the record value to extract as the record key."}).
		Define(replaceNullWithDefaultKey)
}

func (t *valueToKey) Config() *connect.ConfigDef { return valueToKeyConfig() }

func (t *valueToKey) Configure(props map[string]string) error {
	c, err := parseConfig(valueToKeyConfig(), props)
	if err != nil {
		return err
	}
	t.fields = c.List("fields")
	t.replaceNullWithDefault = c.Bool(replaceNullWithDefaultConfig)
	return nil
}

const valueToKeyPurpose = "copying fields from value to key"

func (t *valueToKey) Apply(r connect.Record) (connect.Record, bool, error) {
	if r.ValueSchema == nil {
		m, err := requireMap(r.Value, valueToKeyPurpose)
		if err != nil {
			return r, false, err
		}
		key := make(map[string]any, len(t.fields))
		for _, f := range t.fields {
			key[f] = m[f]
		}
		r.KeySchema, r.Key = nil, key
		return r, true, nil
	}
	st, err := requireStruct(r.Value, valueToKeyPurpose)
	if err != nil {
		return r, false, err
	}
	keySchema, err := t.cache.getOrBuild(st.Schema(), t.keySchema)
	if err != nil {
		return r, false, err
	}
	key, err := newStruct(keySchema, func(f connect.Field) (any, error) {
		vf, err := fieldOf(st, f.Name)
		if err != nil {
			return nil, err
		}
		return fieldValue(st, vf, t.replaceNullWithDefault), nil
	})
	if err != nil {
		return r, false, err
	}
	r.KeySchema, r.Key = keySchema, key
	return r, true, nil
}

func (t *valueToKey) keySchema(value *connect.Schema) (*connect.Schema, error) {
	b := &schemaBuilder{s: connect.Schema{Type: connect.Struct_}}
	for _, name := range t.fields {
		f, ok := value.Field(name)
		if !ok {
			return nil, dataErrorf("Field does not exist: %s", name)
		}
		b.field(name, f.Schema)
	}
	return b.build()
}

func (t *valueToKey) Close() error { return nil }

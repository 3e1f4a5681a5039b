package transforms

import (
	"errors"

	"github.com/samsa-io/samsa/connect"
)

// SetSchemaMetadata (Key and Value) sets the key or value schema's name,
// version or both; a struct value is rebuilt on the renamed schema.
type setSchemaMetadata struct {
	side                   side
	name                   *string
	version                *int32
	replaceNullWithDefault bool
}

func setSchemaMetadataConfig() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "schema.name", Type: connect.TypeString, Default: nil, Importance: connect.High, Documentation: "Schema name to set."}).
		Define(connect.ConfigKey{Name: "schema.version", Type: connect.TypeInt, Default: nil, Importance: connect.High, Documentation: "Schema version to set."}).
		Define(replaceNullWithDefaultKey)
}

func (t *setSchemaMetadata) Config() *connect.ConfigDef { return setSchemaMetadataConfig() }

func (t *setSchemaMetadata) Configure(props map[string]string) error {
	c, err := parseConfig(setSchemaMetadataConfig(), props)
	if err != nil {
		return err
	}
	t.name = optString(c, "schema.name")
	if v, ok := c.Get("schema.version").(int32); ok {
		t.version = &v
	}
	t.replaceNullWithDefault = c.Bool(replaceNullWithDefaultConfig)
	if t.name == nil && t.version == nil {
		return errors.New("Neither schema name nor version configured")
	}
	return nil
}

func (t *setSchemaMetadata) Apply(r connect.Record) (connect.Record, bool, error) {
	schema, v := t.side.schema(r), t.side.value(r)
	if schema == nil && v == nil {
		return r, true, nil
	}
	if err := requireSchema(schema, "updating schema metadata"); err != nil {
		return r, false, err
	}
	updated := *schema
	if t.name != nil {
		updated.Name = *t.name
	}
	if t.version != nil {
		updated.Version = t.version
	}
	if st, ok := v.(*connect.Struct); ok {
		out, err := newStruct(&updated, func(f connect.Field) (any, error) {
			orig, err := fieldOf(st, f.Name)
			if err != nil {
				return nil, err
			}
			return fieldValue(st, orig, t.replaceNullWithDefault), nil
		})
		if err != nil {
			return r, false, err
		}
		return t.side.with(r, &updated, out), true, nil
	}
	return t.side.with(r, &updated, v), true, nil
}

func (t *setSchemaMetadata) Close() error { return nil }

package transforms

import (
	"errors"

	"github.com/samsa-io/samsa/connect"
)

// ExtractField (Key and Value) replaces the key or value with one of its
// fields (a nested one with field.syntax.version=V2); null passes through.
type extractField struct {
	side                   side
	original               string
	path                   fieldPath
	replaceNullWithDefault bool
}

func extractFieldConfig() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "field", Type: connect.TypeString, Default: connect.NoDefault, Importance: connect.Medium,
			Documentation: "Field name to extract."}).
		Define(replaceNullWithDefaultKey).
		Define(fieldSyntaxVersionKey)
}

func (t *extractField) Config() *connect.ConfigDef { return extractFieldConfig() }

func (t *extractField) Configure(props map[string]string) error {
	c, err := parseConfig(extractFieldConfig(), props)
	if err != nil {
		return err
	}
	t.original = c.String("field")
	t.path, err = newFieldPath(t.original, c.String(fieldSyntaxVersionConfig))
	if err != nil {
		return err
	}
	t.replaceNullWithDefault = c.Bool(replaceNullWithDefaultConfig)
	return nil
}

const extractPurpose = "field extraction"

func (t *extractField) Apply(r connect.Record) (connect.Record, bool, error) {
	schema := t.side.schema(r)
	if schema == nil {
		m, err := requireMapOrNil(t.side.value(r), extractPurpose)
		if err != nil {
			return r, false, err
		}
		var v any
		if m != nil {
			if v, err = t.path.valueFromMap(m); err != nil {
				return r, false, err
			}
		}
		return t.side.with(r, nil, v), true, nil
	}
	st, err := requireStructOrNil(t.side.value(r), extractPurpose)
	if err != nil {
		return r, false, err
	}
	f, ok := t.path.fieldFrom(schema)
	if !ok {
		return r, false, errors.New("Unknown field: " + t.original)
	}
	var v any
	if st != nil {
		if v, err = t.path.valueFromStruct(st, t.replaceNullWithDefault); err != nil {
			return r, false, err
		}
	}
	return t.side.with(r, f.Schema, v), true, nil
}

func (t *extractField) Close() error { return nil }

package transforms

import (
	"errors"

	"github.com/samsa-io/samsa/connect"
)

// HeaderFrom (Key and Value) moves or copies fields into headers, the
// i-th field to the i-th header name.
type headerFrom struct {
	side                   side
	fields, headers        []string
	move                   bool
	replaceNullWithDefault bool
	cache                  schemaCache
}

func headerFromConfig() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "fields", Type: connect.TypeList, Default: connect.NoDefault, Validator: nonEmptyList{},
			Importance: connect.High, Documentation: "Field names in the record whose values are to be copied or moved to headers."}).
		Define(connect.ConfigKey{Name: "headers", Type: connect.TypeList, Default: connect.NoDefault, Validator: nonEmptyList{},
			Importance: connect.High, Documentation: "Header names, in the same order as the field names listed in the fields configuration property."}).
		Define(connect.ConfigKey{Name: "operation", Type: connect.TypeString, Default: connect.NoDefault,
			Validator:  connect.OneOf{Values: []string{"move", "copy"}},
			Importance: connect.High,
			Documentation: "Either <code>move</code> if the fields are to be moved to the headers (removed from the key/value), " +
				"or <code>copy</code> if the fields are to be copied to the headers (retained in the key/value)."}).
		Define(replaceNullWithDefaultKey)
}

func (t *headerFrom) Config() *connect.ConfigDef { return headerFromConfig() }

func (t *headerFrom) Configure(props map[string]string) error {
	c, err := parseConfig(headerFromConfig(), props)
	if err != nil {
		return err
	}
	t.fields, t.headers = c.List("fields"), c.List("headers")
	if len(t.fields) != len(t.headers) {
		return errors.New("'fields' config must have the same number of elements as 'headers' config.")
	}
	t.move = c.String("operation") == "move"
	t.replaceNullWithDefault = c.Bool(replaceNullWithDefaultConfig)
	return nil
}

func (t *headerFrom) purpose() string {
	if t.move {
		return "header move"
	}
	return "header copy"
}

func (t *headerFrom) Apply(r connect.Record) (connect.Record, bool, error) {
	schema, v := t.side.schema(r), t.side.value(r)
	headers := r.Headers.Clone()
	if schema == nil {
		m, err := requireMap(v, t.purpose())
		if err != nil {
			return r, false, err
		}
		out := copyMap(m)
		for i, f := range t.fields {
			if t.move {
				delete(out, f)
			}
			headers = append(headers, connect.Header{Key: t.headers[i], Value: m[f]})
		}
		r.Headers = headers
		return t.side.with(r, nil, out), true, nil
	}
	st, err := requireStruct(v, t.purpose())
	if err != nil {
		return r, false, err
	}
	outSchema, out := schema, st
	if t.move {
		if outSchema, err = t.cache.getOrBuild(schema, t.moveSchema); err != nil {
			return r, false, err
		}
		if out, err = newStruct(outSchema, func(f connect.Field) (any, error) {
			orig, err := fieldOf(st, f.Name)
			if err != nil {
				return nil, err
			}
			return fieldValue(st, orig, t.replaceNullWithDefault), nil
		}); err != nil {
			return r, false, err
		}
	}
	for i, name := range t.fields {
		f, ok := st.Schema().Field(name)
		if !ok {
			return r, false, dataErrorf("%s is not a valid field name", name)
		}
		headers = append(headers, connect.Header{Key: t.headers[i], Schema: f.Schema, Value: fieldValue(st, f, t.replaceNullWithDefault)})
	}
	r.Headers = headers
	return t.side.with(r, outSchema, out), true, nil
}

func (t *headerFrom) moveSchema(in *connect.Schema) (*connect.Schema, error) {
	moved := setOf(t.fields)
	b := structBasics(in)
	for _, f := range in.Fields {
		if !moved[f.Name] {
			b.field(f.Name, f.Schema)
		}
	}
	return b.build()
}

func (t *headerFrom) Close() error { return nil }

// InsertHeader adds a header whose value is value.literal parsed as
// Kafka's Values.parseString does (so "42" is an INT8, "true" a BOOLEAN).
type insertHeader struct {
	header string
	value  connect.Header
}

func insertHeaderConfig() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "header", Type: connect.TypeString, Default: connect.NoDefault,
			Importance: connect.High, Documentation: "The name of the header."}).
		Define(connect.ConfigKey{Name: "value.literal", Type: connect.TypeString, Default: connect.NoDefault,
			Importance: connect.High, Documentation: "The literal value that is to be set as the header value on all records."})
}

func (t *insertHeader) Config() *connect.ConfigDef { return insertHeaderConfig() }

func (t *insertHeader) Configure(props map[string]string) error {
	c, err := parseConfig(insertHeaderConfig(), props)
	if err != nil {
		return err
	}
	t.header = c.String("header")
	schema, v := parseLiteral(c.String("value.literal"))
	t.value = connect.Header{Key: t.header, Schema: schema, Value: v}
	return nil
}

func (t *insertHeader) Apply(r connect.Record) (connect.Record, bool, error) {
	r.Headers = append(r.Headers.Clone(), t.value)
	return r, true, nil
}

func (t *insertHeader) Close() error { return nil }

// DropHeaders removes every header with one of the names.
type dropHeaders struct{ headers []string }

func dropHeadersConfig() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "headers", Type: connect.TypeList, Default: connect.NoDefault, Validator: nonEmptyList{},
			Importance: connect.High, Documentation: "The name of the headers to be removed."})
}

func (t *dropHeaders) Config() *connect.ConfigDef { return dropHeadersConfig() }

func (t *dropHeaders) Configure(props map[string]string) error {
	c, err := parseConfig(dropHeadersConfig(), props)
	if err != nil {
		return err
	}
	t.headers = c.List("headers")
	return nil
}

func (t *dropHeaders) Apply(r connect.Record) (connect.Record, bool, error) {
	r.Headers = r.Headers.Without(t.headers...)
	return r, true, nil
}

func (t *dropHeaders) Close() error { return nil }

// Filter drops every record; with a predicate it drops those that match
// (or, negated, those that do not).
type filter struct{}

func (filter) Config() *connect.ConfigDef        { return connect.NewConfigDef() }
func (filter) Configure(map[string]string) error { return nil }
func (filter) Apply(r connect.Record) (connect.Record, bool, error) {
	return connect.Record{}, false, nil
}
func (filter) Close() error { return nil }

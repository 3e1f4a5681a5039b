package transforms

import (
	"errors"
	"strings"

	"github.com/samsa-io/samsa/connect"
)

// InsertField (Key and Value) adds the record's topic, partition, offset
// (sink records), timestamp, or a static string as fields. A field name
// ending in "!" makes the inserted field required in the new schema, "?"
// (the default) optional.
type insertField struct {
	side                   side
	topic, partition       *insertionSpec
	offset, timestamp      *insertionSpec
	static                 *insertionSpec
	staticValue            string
	replaceNullWithDefault bool
	cache                  schemaCache
}

type insertionSpec struct {
	name     string
	optional bool
}

func parseInsertionSpec(spec *string) *insertionSpec {
	if spec == nil {
		return nil
	}
	s := *spec
	switch {
	case strings.HasSuffix(s, "?"):
		return &insertionSpec{name: s[:len(s)-1], optional: true}
	case strings.HasSuffix(s, "!"):
		return &insertionSpec{name: s[:len(s)-1], optional: false}
	}
	return &insertionSpec{name: s, optional: true}
}

const optionalityDoc = "Suffix with <code>!</code> to make this a required field, or <code>?</code> to keep it optional (the default)."

func insertFieldConfig() *connect.ConfigDef {
	str := func(name, doc string) connect.ConfigKey {
		return connect.ConfigKey{Name: name, Type: connect.TypeString, Default: nil, Importance: connect.Medium, Documentation: doc}
	}
	return connect.NewConfigDef().
		Define(str("topic.field", "Field name for Kafka topic. "+optionalityDoc)).
		Define(str("partition.field", "Field name for Kafka partition. "+optionalityDoc)).
		Define(str("offset.field", "Field name for Kafka offset - only applicable to sink connectors.<br/>"+optionalityDoc)).
		Define(str("timestamp.field", "Field name for record timestamp. "+optionalityDoc)).
		Define(str("static.field", "Field name for static data field. "+optionalityDoc)).
		Define(str("static.value", "Static field value, if field name configured.")).
		Define(replaceNullWithDefaultKey)
}

func (t *insertField) Config() *connect.ConfigDef { return insertFieldConfig() }

// optString is a STRING config that may be null (unset).
func optString(c connect.Config, name string) *string {
	if s, ok := c.Get(name).(string); ok {
		return &s
	}
	return nil
}

func (t *insertField) Configure(props map[string]string) error {
	c, err := parseConfig(insertFieldConfig(), props)
	if err != nil {
		return err
	}
	t.topic = parseInsertionSpec(optString(c, "topic.field"))
	t.partition = parseInsertionSpec(optString(c, "partition.field"))
	t.offset = parseInsertionSpec(optString(c, "offset.field"))
	t.timestamp = parseInsertionSpec(optString(c, "timestamp.field"))
	t.static = parseInsertionSpec(optString(c, "static.field"))
	t.replaceNullWithDefault = c.Bool(replaceNullWithDefaultConfig)
	if t.topic == nil && t.partition == nil && t.offset == nil && t.timestamp == nil && t.static == nil {
		return errors.New("No field insertion configured")
	}
	sv := optString(c, "static.value")
	if t.static != nil && sv == nil {
		return errors.New("Invalid value null for configuration static.value: No value specified for static field: " + t.static.name)
	}
	if sv != nil {
		t.staticValue = *sv
	}
	return nil
}

const insertPurpose = "field insertion"

func (t *insertField) Apply(r connect.Record) (connect.Record, bool, error) {
	v := t.side.value(r)
	if v == nil {
		return r, true, nil
	}
	if t.side.schema(r) == nil {
		out, err := t.applySchemaless(r, v)
		return out, err == nil, err
	}
	out, err := t.applyWithSchema(r, v)
	return out, err == nil, err
}

// inserted lists the (name, value) pairs to add; timestampValue is the
// timestamp as schemaless data (epoch millis) or with a schema (a time).
func (t *insertField) inserted(r connect.Record, withSchema bool) ([]insertion, error) {
	var out []insertion
	if t.topic != nil {
		out = append(out, insertion{t.topic.name, r.Topic})
	}
	if t.partition != nil && r.Partition != nil {
		out = append(out, insertion{t.partition.name, *r.Partition})
	}
	if t.offset != nil {
		if r.KafkaOffset == nil {
			return nil, dataErrorf("Only SinkRecord supported for [%s], found: org.apache.kafka.connect.source.SourceRecord", insertPurpose)
		}
		out = append(out, insertion{t.offset.name, *r.KafkaOffset})
	}
	if t.timestamp != nil && !r.Timestamp.IsZero() {
		if withSchema {
			out = append(out, insertion{t.timestamp.name, r.Timestamp})
		} else {
			out = append(out, insertion{t.timestamp.name, r.Timestamp.UnixMilli()})
		}
	}
	if t.static != nil {
		out = append(out, insertion{t.static.name, t.staticValue})
	}
	return out, nil
}

type insertion struct {
	name  string
	value any
}

func (t *insertField) applySchemaless(r connect.Record, v any) (connect.Record, error) {
	m, err := requireMap(v, insertPurpose)
	if err != nil {
		return r, err
	}
	ins, err := t.inserted(r, false)
	if err != nil {
		return r, err
	}
	out := copyMap(m)
	for _, in := range ins {
		out[in.name] = in.value
	}
	return t.side.with(r, nil, out), nil
}

func (t *insertField) applyWithSchema(r connect.Record, v any) (connect.Record, error) {
	st, err := requireStruct(v, insertPurpose)
	if err != nil {
		return r, err
	}
	schema, err := t.cache.getOrBuild(st.Schema(), t.updatedSchema)
	if err != nil {
		return r, err
	}
	ins, err := t.inserted(r, true)
	if err != nil {
		return r, err
	}
	out := connect.NewStructValue(schema)
	for _, f := range st.Schema().Fields {
		if err := out.Put(f.Name, fieldValue(st, f, t.replaceNullWithDefault)); err != nil {
			return r, err
		}
	}
	for _, in := range ins {
		if err := out.Put(in.name, in.value); err != nil {
			return r, err
		}
	}
	return t.side.with(r, schema, out), nil
}

func (t *insertField) updatedSchema(in *connect.Schema) (*connect.Schema, error) {
	if in.Type != connect.Struct_ {
		return nil, dataErrorf("Only Struct objects supported for [%s], found schema: %s", insertPurpose, in)
	}
	b := structBasics(in)
	for _, f := range in.Fields {
		b.field(f.Name, f.Schema)
	}
	add := func(spec *insertionSpec, t connect.Type, logical func() *connect.Schema) {
		if spec == nil {
			return
		}
		var s *connect.Schema
		if logical != nil {
			s = logical()
			s.Optional = spec.optional
		} else {
			s = connect.PrimitiveSchema(t, spec.optional)
		}
		b.field(spec.name, s)
	}
	add(t.topic, connect.String, nil)
	add(t.partition, connect.Int32, nil)
	add(t.offset, connect.Int64, nil)
	add(t.timestamp, connect.Int64, connect.TimestampSchema)
	add(t.static, connect.String, nil)
	return b.build()
}

func (t *insertField) Close() error { return nil }

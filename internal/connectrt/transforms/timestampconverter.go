package transforms

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/samsa-io/samsa/connect"
)

// TimestampConverter (Key and Value) converts a timestamp field, or the
// whole key or value, between a formatted string, Unix time (an int64 in
// unix.precision units), and Connect's Date, Time and Timestamp. As in
// Kafka, the instant passes through milliseconds, so finer precision is
// lost.
type timestampConverter struct {
	side                   side
	field                  string
	target                 string
	format                 *simpleDateFormat
	unixPrecision          string
	replaceNullWithDefault bool
	cache                  schemaCache
}

const (
	tsString    = "string"
	tsUnix      = "unix"
	tsDate      = "Date"
	tsTime      = "Time"
	tsTimestamp = "Timestamp"
)

func timestampConverterConfig() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "field", Type: connect.TypeString, Default: "", Importance: connect.High,
			Documentation: "The field containing the timestamp, or empty if the entire value is a timestamp"}).
		Define(connect.ConfigKey{Name: "target.type", Type: connect.TypeString, Default: connect.NoDefault,
			Validator:  connect.OneOf{Values: []string{tsString, tsUnix, tsDate, tsTime, tsTimestamp}},
			Importance: connect.High, Documentation: "The desired timestamp representation: string, unix, Date, Time, or Timestamp"}).
		Define(connect.ConfigKey{Name: "format", Type: connect.TypeString, Default: "", Importance: connect.Medium,
			Documentation: "A SimpleDateFormat-compatible format for the timestamp. Used to generate the output when type=string or used to parse the input if the input is a string."}).
		Define(connect.ConfigKey{Name: "unix.precision", Type: connect.TypeString, Default: "milliseconds",
			Validator:  connect.OneOf{Values: []string{"nanoseconds", "microseconds", "milliseconds", "seconds"}},
			Importance: connect.Low,
			Documentation: "The desired Unix precision for the timestamp: seconds, milliseconds, microseconds, or nanoseconds. " +
				"Used to generate the output when type=unix or used to parse the input if the input is a Long." +
				"Note: This SMT will cause precision loss during conversions from, and to, values with sub-millisecond components."}).
		Define(replaceNullWithDefaultKey)
}

func (t *timestampConverter) Config() *connect.ConfigDef { return timestampConverterConfig() }

func (t *timestampConverter) Configure(props map[string]string) error {
	c, err := parseConfig(timestampConverterConfig(), props)
	if err != nil {
		return err
	}
	t.field, t.target = c.String("field"), c.String("target.type")
	t.unixPrecision = c.String("unix.precision")
	t.replaceNullWithDefault = c.Bool(replaceNullWithDefaultConfig)
	pattern := c.String("format")
	if t.target == tsString && strings.TrimSpace(pattern) == "" {
		return errors.New("TimestampConverter requires format option to be specified when using string timestamps")
	}
	if strings.TrimSpace(pattern) != "" {
		if t.format, err = newSimpleDateFormat(pattern); err != nil {
			return fmt.Errorf("TimestampConverter requires a SimpleDateFormat-compatible pattern for string timestamps: %s (%v)", pattern, err)
		}
	}
	return nil
}

const timestampPurpose = "converting timestamp formats"

func (t *timestampConverter) Apply(r connect.Record) (connect.Record, bool, error) {
	var out connect.Record
	var err error
	if t.side.schema(r) == nil {
		out, err = t.applySchemaless(r)
	} else {
		out, err = t.applyWithSchema(r)
	}
	return out, err == nil, err
}

func (t *timestampConverter) applySchemaless(r connect.Record) (connect.Record, error) {
	v := t.side.value(r)
	if v == nil || t.field == "" {
		cv, err := t.convert(v, "")
		return t.side.with(r, nil, cv), err
	}
	m, err := requireMap(v, timestampPurpose)
	if err != nil {
		return r, err
	}
	out := copyMap(m)
	if out[t.field], err = t.convert(m[t.field], ""); err != nil {
		return r, err
	}
	return t.side.with(r, nil, out), nil
}

func (t *timestampConverter) applyWithSchema(r connect.Record) (connect.Record, error) {
	schema := t.side.schema(r)
	if t.field == "" {
		from, err := timestampTypeOf(schema)
		if err != nil {
			return r, err
		}
		cv, err := t.convert(t.side.value(r), from)
		return t.side.with(r, targetSchema(t.target, schema.Optional), cv), err
	}
	st, err := requireStructOrNil(t.side.value(r), timestampPurpose)
	if err != nil {
		return r, err
	}
	updated, err := t.cache.getOrBuild(schema, t.updatedSchema)
	if err != nil {
		return r, err
	}
	out, err := t.convertStruct(st, updated)
	if err != nil {
		return r, err
	}
	if out == nil {
		return t.side.with(r, updated, nil), nil
	}
	return t.side.with(r, updated, out), nil
}

func (t *timestampConverter) updatedSchema(in *connect.Schema) (*connect.Schema, error) {
	if in.Type != connect.Struct_ {
		return nil, dataErrorf("Only Struct objects supported for [%s], found schema: %s", timestampPurpose, in)
	}
	b := structBasics(in)
	for _, f := range in.Fields {
		if f.Name == t.field {
			b.field(f.Name, targetSchema(t.target, f.Schema.Optional))
		} else {
			b.field(f.Name, f.Schema)
		}
	}
	out, err := b.build()
	if err != nil {
		return nil, err
	}
	out.Optional = in.Optional
	if d, ok := in.Default.(*connect.Struct); ok {
		dv, err := t.convertStruct(d, out)
		if err != nil {
			return nil, err
		}
		out.Default = dv
	}
	return out, nil
}

// convertStruct copies st into a struct of schema out, converting the
// configured field.
func (t *timestampConverter) convertStruct(st *connect.Struct, out *connect.Schema) (*connect.Struct, error) {
	if st == nil {
		return nil, nil
	}
	return newStruct(out, func(f connect.Field) (any, error) {
		orig, err := fieldOf(st, f.Name)
		if err != nil {
			return nil, err
		}
		v := fieldValue(st, orig, t.replaceNullWithDefault)
		if f.Name != t.field {
			return v, nil
		}
		from, err := timestampTypeOf(orig.Schema)
		if err != nil {
			return nil, err
		}
		return t.convert(v, from)
	})
}

func targetSchema(target string, optional bool) *connect.Schema {
	var s *connect.Schema
	switch target {
	case tsString:
		s = &connect.Schema{Type: connect.String}
	case tsUnix:
		s = &connect.Schema{Type: connect.Int64}
	case tsDate:
		s = connect.DateSchema()
	case tsTime:
		s = connect.TimeSchema()
	default:
		s = connect.TimestampSchema()
	}
	s.Optional = optional
	return s
}

// timestampTypeOf reads the timestamp's representation from its schema.
func timestampTypeOf(s *connect.Schema) (string, error) {
	switch {
	case s.Name == connect.TimestampName:
		return tsTimestamp, nil
	case s.Name == connect.DateName:
		return tsDate, nil
	case s.Name == connect.TimeName:
		return tsTime, nil
	case s.Type == connect.String:
		return tsString, nil
	case s.Type == connect.Int64:
		return tsUnix, nil
	}
	return "", fmt.Errorf("Schema %s does not correspond to a known timestamp type format", s)
}

// inferTimestampType reads a schemaless value's representation.
func inferTimestampType(v any) (string, error) {
	switch v.(type) {
	case time.Time:
		return tsTimestamp, nil
	case int64:
		return tsUnix, nil
	case string:
		return tsString, nil
	}
	return "", dataErrorf("TimestampConverter does not support class %s objects as timestamps", className(v))
}

func (t *timestampConverter) convert(v any, from string) (any, error) {
	if v == nil {
		return nil, nil
	}
	var err error
	if from == "" {
		if from, err = inferTimestampType(v); err != nil {
			return nil, err
		}
	}
	raw, err := t.toRaw(v, from)
	if err != nil {
		return nil, err
	}
	return t.toType(raw), nil
}

// toRaw reads the instant, at millisecond precision as Kafka's Date.
func (t *timestampConverter) toRaw(v any, from string) (time.Time, error) {
	switch from {
	case tsString:
		s, ok := v.(string)
		if !ok {
			return time.Time{}, dataErrorf("Expected string timestamp to be a String, but found class %s", className(v))
		}
		if t.format == nil {
			return time.Time{}, dataErrorf("TimestampConverter requires format option to be specified when using string timestamps")
		}
		tm, err := t.format.parse(s)
		if err != nil {
			return time.Time{}, dataErrorf("Could not parse timestamp: value (%s) does not match pattern (%s)", s, t.format.pattern)
		}
		return tm, nil
	case tsUnix:
		n, ok := v.(int64)
		if !ok {
			return time.Time{}, dataErrorf("Expected Unix timestamp to be a Long, but found class %s", className(v))
		}
		return time.UnixMilli(unixToMillis(n, t.unixPrecision)).UTC(), nil
	}
	tm, ok := v.(time.Time)
	if !ok {
		return time.Time{}, dataErrorf("Expected %s to be a java.util.Date, but found class %s", from, className(v))
	}
	return time.UnixMilli(tm.UnixMilli()).UTC(), nil
}

func unixToMillis(n int64, precision string) int64 {
	switch precision {
	case "seconds":
		return saturatingMul(n, 1000)
	case "microseconds":
		return n / 1000
	case "nanoseconds":
		return n / 1_000_000
	}
	return n
}

// saturatingMul is Java's TimeUnit conversion, which clamps on overflow.
func saturatingMul(n, by int64) int64 {
	switch {
	case n > math.MaxInt64/by:
		return math.MaxInt64
	case n < math.MinInt64/by:
		return math.MinInt64
	}
	return n * by
}

func (t *timestampConverter) toType(raw time.Time) any {
	switch t.target {
	case tsString:
		return t.format.format(raw)
	case tsUnix:
		ms := raw.UnixMilli()
		switch t.unixPrecision {
		case "seconds":
			return ms / 1000
		case "microseconds":
			return saturatingMul(ms, 1000)
		case "nanoseconds":
			return saturatingMul(ms, 1_000_000)
		}
		return ms
	case tsDate:
		y, m, d := raw.Date()
		return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	case tsTime:
		return time.UnixMilli(0).UTC().Add(time.Duration(raw.Hour())*time.Hour +
			time.Duration(raw.Minute())*time.Minute + time.Duration(raw.Second())*time.Second +
			time.Duration(raw.Nanosecond()))
	}
	return raw
}

func (t *timestampConverter) Close() error { return nil }

package transforms

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/samsa-io/samsa/connect"
)

// Cast (Key and Value) casts the whole key or value (spec=int32), or
// fields of a struct or map (spec=a:int32,b:string), to a primitive
// type, with Java's conversions: numbers narrow and widen as Java's
// casts do, booleans are 1 or 0, strings parse, anything casts to string
// (bytes as base64, dates in ISO-8601), and a string casts to boolean as
// Boolean.parseBoolean (true only for "true", any case).
type cast struct {
	side                   side
	casts                  map[string]connect.Type
	whole                  connect.Type // "" unless the spec casts the whole value
	replaceNullWithDefault bool
	cache                  schemaCache
}

var (
	castInputTypes  = []connect.Type{connect.Int8, connect.Int16, connect.Int32, connect.Int64, connect.Float32, connect.Float64, connect.Boolean, connect.String, connect.Bytes}
	castOutputTypes = castInputTypes[:8]
)

func castConfig() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "spec", Type: connect.TypeList, Default: connect.NoDefault,
			Validator: connect.ValidatorFunc(func(_ string, v any) error {
				l, _ := v.([]string)
				if len(l) == 0 {
					return errors.New("Must specify at least one field to cast.")
				}
				_, _, err := parseCastSpec(l)
				return err
			}),
			Importance: connect.High,
			Documentation: "List of fields and the type to cast them to of the form field1:type,field2:type to cast fields of " +
				"Maps or Structs. A single type to cast the entire value. Valid types are int8, int16, int32, " +
				"int64, float32, float64, boolean, and string. Note that binary fields can only be cast to string."}).
		Define(replaceNullWithDefaultKey)
}

func typeList(ts []connect.Type) string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = string(t)
	}
	return "[" + strings.Join(s, ", ") + "]"
}

func castOutputType(s string) (connect.Type, error) {
	t := connect.Type(strings.ToUpper(strings.TrimSpace(s)))
	known := false
	for _, k := range connect.Types {
		known = known || k == t
	}
	if !known {
		return "", errors.New("Invalid type found in casting spec: " + strings.TrimSpace(s))
	}
	for _, o := range castOutputTypes {
		if o == t {
			return t, nil
		}
	}
	return "", fmt.Errorf("Cast transformation does not support casting to %s; supported types are %s", t, typeList(castOutputTypes))
}

// parseCastSpec reads field:type pairs, or one bare type for the whole
// value.
func parseCastSpec(mappings []string) (map[string]connect.Type, connect.Type, error) {
	casts := map[string]connect.Type{}
	var whole connect.Type
	for _, m := range mappings {
		parts := javaSplit(m, ":")
		switch {
		case len(parts) > 2:
			return nil, "", errors.New("Invalid rename mapping: " + m)
		case len(parts) <= 1:
			spec := ""
			if len(parts) == 1 {
				spec = parts[0]
			}
			t, err := castOutputType(spec)
			if err != nil {
				return nil, "", err
			}
			whole = t
		default:
			t, err := castOutputType(parts[1])
			if err != nil {
				return nil, "", err
			}
			casts[strings.TrimSpace(parts[0])] = t
		}
	}
	if whole != "" && len(mappings) > 1 {
		return nil, "", errors.New("Cast transformations that specify a type to cast the entire value to may only specify a single cast in their spec")
	}
	return casts, whole, nil
}

func (t *cast) Config() *connect.ConfigDef { return castConfig() }

func (t *cast) Configure(props map[string]string) error {
	c, err := parseConfig(castConfig(), props)
	if err != nil {
		return err
	}
	t.casts, t.whole, err = parseCastSpec(c.List("spec"))
	t.replaceNullWithDefault = c.Bool(replaceNullWithDefaultConfig)
	return err
}

const castPurpose = "cast types"

func (t *cast) Apply(r connect.Record) (connect.Record, bool, error) {
	v := t.side.value(r)
	if v == nil {
		return r, true, nil
	}
	var out connect.Record
	var err error
	if t.side.schema(r) == nil {
		out, err = t.applySchemaless(r, v)
	} else {
		out, err = t.applyWithSchema(r, v)
	}
	return out, err == nil, err
}

func (t *cast) applySchemaless(r connect.Record, v any) (connect.Record, error) {
	if t.whole != "" {
		cv, err := castValue(nil, v, t.whole)
		return t.side.with(r, nil, cv), err
	}
	m, err := requireMap(v, castPurpose)
	if err != nil {
		return r, err
	}
	out := copyMap(m)
	for field, typ := range t.casts {
		cv, err := castValue(nil, m[field], typ)
		if err != nil {
			return r, err
		}
		out[field] = cv
	}
	return t.side.with(r, nil, out), nil
}

func (t *cast) applyWithSchema(r connect.Record, v any) (connect.Record, error) {
	schema := t.side.schema(r)
	updated, err := t.cache.getOrBuild(schema, t.updatedSchema)
	if err != nil {
		return r, err
	}
	if t.whole != "" {
		cv, err := castValue(schema, v, t.whole)
		return t.side.with(r, updated, cv), err
	}
	st, err := requireStruct(v, castPurpose)
	if err != nil {
		return r, err
	}
	out, err := newStruct(updated, func(f connect.Field) (any, error) {
		orig, err := fieldOf(st, f.Name)
		if err != nil {
			return nil, err
		}
		fv := fieldValue(st, orig, t.replaceNullWithDefault)
		if typ, ok := t.casts[f.Name]; ok {
			return castValue(orig.Schema, fv, typ)
		}
		return fv, nil
	})
	if err != nil {
		return r, err
	}
	return t.side.with(r, updated, out), nil
}

func (t *cast) updatedSchema(in *connect.Schema) (*connect.Schema, error) {
	var out connect.Schema
	if t.whole != "" {
		out = connect.Schema{Type: t.whole, Version: in.Version, Doc: in.Doc, Parameters: in.Parameters}
		if !isLogicalName(in.Name) {
			// A logical type's name would claim a representation the
			// cast value no longer has.
			out.Name = in.Name
		}
	} else {
		if in.Type != connect.Struct_ {
			return nil, dataErrorf("Only Struct objects supported for [%s], found schema: %s", castPurpose, in)
		}
		b := structBasics(in)
		for _, f := range in.Fields {
			typ, ok := t.casts[f.Name]
			if !ok {
				b.field(f.Name, f.Schema)
				continue
			}
			fs := &connect.Schema{Type: typ, Optional: f.Schema.Optional}
			if f.Schema.Default != nil {
				d, err := castValue(f.Schema, f.Schema.Default, typ)
				if err != nil {
					return nil, err
				}
				fs.Default = d
			}
			b.field(f.Name, fs)
		}
		built, err := b.build()
		if err != nil {
			return nil, err
		}
		out = *built
	}
	out.Optional = in.Optional
	if in.Default != nil {
		d, err := castValue(in, in.Default, out.Type)
		if err != nil {
			return nil, err
		}
		out.Default = d
	}
	return &out, nil
}

func isLogicalName(n string) bool {
	switch n {
	case connect.DecimalName, connect.DateName, connect.TimeName, connect.TimestampName:
		return true
	}
	return false
}

// schemaTypeOf is Kafka's ConnectSchema.schemaType: the type a
// schemaless value has, or "" for a Go type Connect does not know.
func schemaTypeOf(v any) connect.Type {
	switch v.(type) {
	case int8:
		return connect.Int8
	case int16:
		return connect.Int16
	case int32:
		return connect.Int32
	case int64:
		return connect.Int64
	case float32:
		return connect.Float32
	case float64:
		return connect.Float64
	case bool:
		return connect.Boolean
	case string:
		return connect.String
	case []byte:
		return connect.Bytes
	case []any:
		return connect.Array
	case map[string]any, map[any]any:
		return connect.Map
	case *connect.Struct:
		return connect.Struct_
	}
	return ""
}

func castValue(schema *connect.Schema, v any, target connect.Type) (any, error) {
	if v == nil {
		return nil, nil
	}
	from := schemaTypeOf(v)
	if schema != nil {
		from = schema.Type
	}
	if from == "" {
		return nil, dataErrorf("Cast transformation was passed a value of type %s which is not supported by Connect's data API", className(v))
	}
	supported := false
	for _, t := range castInputTypes {
		supported = supported || t == from
	}
	if !supported {
		return nil, dataErrorf("Cast transformation does not support casting from %s; supported types are %s", from, typeList(castInputTypes))
	}
	if schema != nil && schema.Name != "" && target != connect.String {
		v = encodeLogical(schema, v)
	}
	out, err := castTo(v, target)
	if errors.Is(err, strconv.ErrSyntax) || errors.Is(err, strconv.ErrRange) {
		return nil, dataErrorf("Value (%v) was out of range for requested data type", v)
	}
	return out, err
}

// encodeLogical turns Date, Time and Timestamp values into their
// integers (days, millis of day, epoch millis) before a numeric cast.
func encodeLogical(schema *connect.Schema, v any) any {
	tm, ok := v.(time.Time)
	if !ok {
		return v
	}
	switch schema.Name {
	case connect.DateName:
		return int32(tm.UnixMilli() / 86_400_000)
	case connect.TimeName:
		return int32(tm.UnixMilli() % 86_400_000)
	case connect.TimestampName:
		return tm.UnixMilli()
	}
	return v
}

// number reads v as Java's Number (long and double views), or false.
func number(v any) (asLong func(bits int) int64, asDouble float64, ok bool) {
	integer := func(n int64) (func(int) int64, float64, bool) {
		return func(int) int64 { return n }, float64(n), true
	}
	switch x := v.(type) {
	case int8:
		return integer(int64(x))
	case int16:
		return integer(int64(x))
	case int32:
		return integer(int64(x))
	case int64:
		return integer(x)
	case float32:
		return floatNumber(float64(x))
	case float64:
		return floatNumber(x)
	case connect.Decimal:
		n := decimalLong(x.Unscaled, x.Scale)
		return func(int) int64 { return n }, decimalFloat(x.Unscaled, x.Scale), true
	}
	return nil, 0, false
}

// floatNumber narrows as Java does: to byte, short and int through a
// saturating (int), to long through a saturating (long).
func floatNumber(f float64) (func(int) int64, float64, bool) {
	return func(bits int) int64 {
		if bits == 64 {
			return doubleToLong(f)
		}
		return int64(doubleToInt(f))
	}, f, true
}

func castTo(v any, target connect.Type) (any, error) {
	if target == connect.String {
		return castToString(v), nil
	}
	if asLong, asDouble, ok := number(v); ok {
		switch target {
		case connect.Int8:
			return int8(asLong(8)), nil
		case connect.Int16:
			return int16(asLong(16)), nil
		case connect.Int32:
			return int32(asLong(32)), nil
		case connect.Int64:
			return asLong(64), nil
		case connect.Float32:
			return float32(asDouble), nil
		case connect.Float64:
			return asDouble, nil
		case connect.Boolean:
			return asLong(64) != 0, nil
		}
	}
	switch x := v.(type) {
	case bool:
		return castBool(x, target), nil
	case string:
		return castString(x, target)
	}
	return nil, dataErrorf("Unexpected type in Cast transformation: class %s", className(v))
}

func castBool(b bool, target connect.Type) any {
	n := int64(0)
	if b {
		n = 1
	}
	switch target {
	case connect.Int8:
		return int8(n)
	case connect.Int16:
		return int16(n)
	case connect.Int32:
		return int32(n)
	case connect.Int64:
		return n
	case connect.Float32:
		return float32(n)
	case connect.Float64:
		return float64(n)
	}
	return b
}

// castString parses as Java's Byte.parseByte ... Double.parseDouble and
// Boolean.parseBoolean.
func castString(s string, target connect.Type) (any, error) {
	switch target {
	case connect.Int8, connect.Int16, connect.Int32, connect.Int64:
		bits := map[connect.Type]int{connect.Int8: 8, connect.Int16: 16, connect.Int32: 32, connect.Int64: 64}[target]
		n, err := strconv.ParseInt(s, 10, bits)
		if err != nil {
			return nil, err
		}
		switch target {
		case connect.Int8:
			return int8(n), nil
		case connect.Int16:
			return int16(n), nil
		case connect.Int32:
			return int32(n), nil
		}
		return n, nil
	case connect.Float32, connect.Float64:
		bits := 64
		if target == connect.Float32 {
			bits = 32
		}
		f, err := strconv.ParseFloat(javaFloatText(s), bits)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return nil, err
		}
		if bits == 32 {
			return float32(f), nil
		}
		return f, nil
	case connect.Boolean:
		return strings.EqualFold(s, "true"), nil
	}
	return nil, dataErrorf("%s is not supported in the Cast transformation.", target)
}

// javaFloatText trims what Java's Double.parseDouble ignores: surrounding
// whitespace and a trailing f, F, d or D.
func javaFloatText(s string) string {
	s = strings.TrimSpace(s)
	if n := len(s); n > 1 && strings.ContainsRune("fFdD", rune(s[n-1])) && !strings.HasSuffix(strings.ToLower(s), "infinity") {
		s = s[:n-1]
	}
	return s
}

func castToString(v any) string {
	switch x := v.(type) {
	case time.Time:
		return isoFormat(x)
	case []byte:
		return base64.StdEncoding.EncodeToString(x)
	case float32:
		return javaDouble(float64(x), 32)
	case float64:
		return javaDouble(x, 64)
	case connect.Decimal:
		return decimalString(x.Unscaled, x.Scale)
	case bool:
		return strconv.FormatBool(x)
	}
	return fmt.Sprint(v)
}

// isoFormat is Kafka's Values.dateFormatFor: a time of day before the
// first day's end, a date at midnight, else a full timestamp; in UTC.
func isoFormat(t time.Time) string {
	ms := t.UnixMilli()
	t = t.UTC()
	switch {
	case ms < 86_400_000:
		return t.Format("15:04:05.000Z")
	case ms%86_400_000 == 0:
		return t.Format("2006-01-02")
	}
	return t.Format("2006-01-02T15:04:05.000Z")
}

func (t *cast) Close() error { return nil }

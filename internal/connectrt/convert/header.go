package convert

import (
	"encoding/base64"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/samsa-io/samsa/connect"
)

// SimpleHeaderConverterClass is Kafka's SimpleHeaderConverter, the
// runtime's default header.converter.
const SimpleHeaderConverterClass = "org.apache.kafka.connect.storage.SimpleHeaderConverter"

// SimpleHeaderConverter is Kafka's SimpleHeaderConverter: a header value is
// written as its string form in UTF-8 (Kafka's Values.convertToString) and
// read back with a schema inferred from the text as Kafka's
// Values.parseString does for scalars: null, booleans, integers (the
// narrowest of INT8..INT64), floating-point numbers (FLOAT32 when it
// holds the value's range, as Kafka), decimals too large for those, ISO
// 8601 dates, times and timestamps, and otherwise a STRING. Text that
// looks like an array or a map ("[1,2]", "{a:1}") is read as a STRING:
// Kafka's parser for those is left out.
type SimpleHeaderConverter struct{}

var _ connect.HeaderConverter = SimpleHeaderConverter{}

// Configure takes no configs.
func (SimpleHeaderConverter) Configure(props map[string]string) error {
	_, err := parseConfig(SimpleHeaderConverterClass, emptyConfigDef(), props)
	return err
}

// FromConnectHeader writes the value's string form; nil stays nil.
func (SimpleHeaderConverter) FromConnectHeader(_, key string, _ *connect.Schema, value any) ([]byte, error) {
	if value == nil {
		return nil, nil
	}
	s, err := valuesString(value, false)
	if err != nil {
		return nil, err
	}
	return []byte(s), nil
}

// ToConnectHeader infers the schema from the text.
func (SimpleHeaderConverter) ToConnectHeader(_, _ string, data []byte) (*connect.Schema, any, error) {
	if data == nil {
		return nil, nil, nil
	}
	s, v := parseHeaderString(strings.ToValidUTF8(string(data), "\uFFFD"))
	return s, v, nil
}

// Kafka's Values formats for java.util.Date values (in UTC).
const (
	isoDate      = "2006-01-02"
	isoTime      = "15:04:05.000Z"
	isoTimestamp = "2006-01-02T15:04:05.000Z"
)

// valuesString is Kafka's Values.convertToString: embedded values (inside
// an array, map or struct) have their strings quoted.
func valuesString(v any, embedded bool) (string, error) {
	var b strings.Builder
	if err := appendValuesString(&b, v, embedded); err != nil {
		return "", err
	}
	return b.String(), nil
}

func appendValuesString(b *strings.Builder, v any, embedded bool) error {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case int8, int16, int32, int64:
		b.WriteString(strconv.FormatInt(toInt64(x), 10))
	case float32:
		b.WriteString(javaNumberString(float64(x), 32))
	case float64:
		b.WriteString(javaNumberString(x, 64))
	case connect.Decimal:
		b.WriteString(bigDecimalString(x.Unscaled, x.Scale))
	case string:
		writeMaybeQuoted(b, x, embedded, true)
	case []byte:
		writeMaybeQuoted(b, base64.StdEncoding.EncodeToString(x), embedded, false)
	case time.Time:
		b.WriteString(formatDate(x))
	case []any:
		return appendValuesList(b, x)
	case map[string]any:
		return appendValuesMap(b, len(x), func(yield func(k, v any) bool) {
			for _, k := range sortedStrings(x) {
				if !yield(k, x[k]) {
					return
				}
			}
		})
	case map[any]any:
		return appendValuesMap(b, len(x), sortedAnyMap(x))
	case *connect.Struct:
		return appendValuesStruct(b, x)
	default:
		return dataErrorf("Failed to serialize unexpected value type %T: %v", v, v)
	}
	return nil
}

// toInt64 widens the integer types.
func toInt64(v any) int64 {
	switch x := v.(type) {
	case int8:
		return int64(x)
	case int16:
		return int64(x)
	case int32:
		return int64(x)
	case int64:
		return x
	}
	return 0
}

// javaNumberString is Java's Float/Double.toString, NaN and Infinity
// included.
func javaNumberString(f float64, bits int) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return javaFloatingString(f, bits)
}

func writeMaybeQuoted(b *strings.Builder, s string, embedded, escape bool) {
	if !embedded {
		b.WriteString(s)
		return
	}
	if escape {
		s = strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), `"`, `\"`)
	}
	b.WriteByte('"')
	b.WriteString(s)
	b.WriteByte('"')
}

// formatDate picks Kafka's Values.dateFormatFor: a time within the epoch's
// first day as a time, midnight as a date, else a timestamp.
func formatDate(t time.Time) string {
	ms := t.UnixMilli()
	t = t.UTC()
	switch {
	case ms < millisPerDay:
		return t.Format(isoTime)
	case ms%millisPerDay == 0:
		return t.Format(isoDate)
	}
	return t.Format(isoTimestamp)
}

func appendValuesList(b *strings.Builder, items []any) error {
	b.WriteByte('[')
	for i, item := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := appendValuesString(b, item, true); err != nil {
			return err
		}
	}
	b.WriteByte(']')
	return nil
}

func appendValuesMap(b *strings.Builder, _ int, entries func(yield func(k, v any) bool)) error {
	b.WriteByte('{')
	first := true
	var err error
	entries(func(k, v any) bool {
		if !first {
			b.WriteByte(',')
		}
		first = false
		if err = appendValuesString(b, k, true); err != nil {
			return false
		}
		b.WriteByte(':')
		err = appendValuesString(b, v, true)
		return err == nil
	})
	if err != nil {
		return err
	}
	b.WriteByte('}')
	return nil
}

// sortedAnyMap ranges a map by its keys' string forms, for stable output.
func sortedAnyMap(m map[any]any) func(yield func(k, v any) bool) {
	return func(yield func(k, v any) bool) {
		type kv struct {
			text string
			k, v any
		}
		entries := make([]kv, 0, len(m))
		for k, v := range m {
			text, _ := valuesString(k, true)
			entries = append(entries, kv{text, k, v})
		}
		sortKV(entries, func(a, b kv) bool { return a.text < b.text })
		for _, e := range entries {
			if !yield(e.k, e.v) {
				return
			}
		}
	}
}

func appendValuesStruct(b *strings.Builder, st *connect.Struct) error {
	b.WriteByte('{')
	for i, f := range st.Schema().Fields {
		if i > 0 {
			b.WriteByte(',')
		}
		writeMaybeQuoted(b, f.Name, true, true)
		b.WriteByte(':')
		if err := appendValuesString(b, st.GetField(f), true); err != nil {
			return err
		}
	}
	b.WriteByte('}')
	return nil
}

// parseHeaderString is Kafka's Values.parseString for scalars.
func parseHeaderString(s string) (*connect.Schema, any) {
	switch s {
	case "":
		return connect.StringSchema, ""
	case "null":
		return nil, nil
	case "true":
		return connect.BooleanSchema, true
	case "false":
		return connect.BooleanSchema, false
	}
	token := strings.TrimSpace(s)
	if token == "" {
		return connect.StringSchema, s
	}
	first := token[0]
	if first >= '0' && first <= '9' {
		if sch, v, ok := parseTemporal(token); ok {
			return sch, v
		}
	}
	if (first >= '0' && first <= '9') || first == '+' || first == '-' {
		if sch, v, ok := parseNumber(token); ok {
			return sch, v
		}
	}
	return connect.StringSchema, s
}

func parseTemporal(token string) (*connect.Schema, any, bool) {
	for _, f := range []struct {
		layout string
		schema func() *connect.Schema
	}{{isoTimestamp, connect.TimestampSchema}, {isoDate, connect.DateSchema}, {isoTime, connect.TimeSchema}} {
		if len(token) != len(f.layout) {
			continue
		}
		t, err := time.Parse(f.layout, token)
		if err != nil {
			continue
		}
		if f.layout == isoTime {
			t = time.UnixMilli(int64(t.Hour()*3600000 + t.Minute()*60000 + t.Second()*1000 + t.Nanosecond()/1e6)).UTC()
		}
		return f.schema(), t, true
	}
	return nil, nil, false
}

// parseNumber is Kafka's parseAsNumber: an integral value as the narrowest
// integer type that holds it, else FLOAT32, else FLOAT64, else a Decimal.
func parseNumber(token string) (*connect.Schema, any, bool) {
	u, scale, ok := parseBigDecimal(strings.TrimPrefix(token, "+"))
	if !ok || !validNumberText(token) || scale > maxParsedScale || scale < -maxParsedScale {
		return nil, nil, false
	}
	r := new(big.Rat).SetFrac(u, big.NewInt(1))
	if scale > 0 {
		r.SetFrac(u, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil))
	} else if scale < 0 {
		r.SetInt(new(big.Int).Mul(u, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-scale)), nil)))
	}
	if r.IsInt() && r.Num().IsInt64() {
		n := r.Num().Int64()
		switch {
		case n == int64(int8(n)):
			return connect.Int8Schema, int8(n), true
		case n == int64(int16(n)):
			return connect.Int16Schema, int16(n), true
		case n == int64(int32(n)):
			return connect.Int32Schema, int32(n), true
		}
		return connect.Int64Schema, n, true
	}
	if scale != 0 {
		f64, _ := r.Float64()
		if f32, _ := r.Float32(); !math.IsInf(float64(f32), 0) {
			return connect.Float32Schema, f32, true
		}
		if !math.IsInf(f64, 0) {
			return connect.Float64Schema, f64, true
		}
	}
	return connect.DecimalSchema(scale), connect.Decimal{Unscaled: u, Scale: scale}, true
}

// maxParsedScale bounds the exponent of a number read from a header: 10^n
// is computed, and a header must not make that cost unbounded.
const maxParsedScale = 1000

// validNumberText accepts what Java's BigDecimal(String) does: a sign,
// digits with at most one point (at least one digit), an optional
// exponent.
func validNumberText(s string) bool {
	s = strings.TrimLeft(s, "+-")
	mant, exp, hasExp := strings.Cut(strings.ToLower(s), "e")
	if hasExp {
		exp = strings.TrimLeft(exp, "+-")
		if exp == "" || strings.Trim(exp, "0123456789") != "" {
			return false
		}
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	return intPart+frac != "" && strings.Trim(intPart+frac, "0123456789") == ""
}

package transforms

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/samsa-io/samsa/connect"
)

// MaskField (Key and Value) replaces fields' values with their type's
// "null" (0, false, "", the epoch, an empty array or map), or with the
// replacement string converted to the field's numeric or string type.
type maskField struct {
	side                   side
	fields                 map[string]bool
	fieldOrder             []string
	replacement            *string
	replaceNullWithDefault bool
}

func maskFieldConfig() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "fields", Type: connect.TypeList, Default: connect.NoDefault, Validator: nonEmptyList{},
			Importance: connect.High, Documentation: "Names of fields to mask."}).
		Define(connect.ConfigKey{Name: "replacement", Type: connect.TypeString, Default: nil, Validator: connect.NonEmptyString{},
			Importance: connect.Low, Documentation: "Custom value replacement, that will be applied to all 'fields' values (numeric or non-empty string values only)."}).
		Define(replaceNullWithDefaultKey)
}

func (t *maskField) Config() *connect.ConfigDef { return maskFieldConfig() }

func (t *maskField) Configure(props map[string]string) error {
	c, err := parseConfig(maskFieldConfig(), props)
	if err != nil {
		return err
	}
	t.fieldOrder = c.List("fields")
	t.fields = setOf(t.fieldOrder)
	t.replacement = optString(c, "replacement")
	t.replaceNullWithDefault = c.Bool(replaceNullWithDefaultConfig)
	return nil
}

const maskPurpose = "mask fields"

func (t *maskField) Apply(r connect.Record) (connect.Record, bool, error) {
	v := t.side.value(r)
	if t.side.schema(r) == nil {
		m, err := requireMap(v, maskPurpose)
		if err != nil {
			return r, false, err
		}
		out := copyMap(m)
		for _, f := range t.fieldOrder {
			mv, err := t.masked(m[f])
			if err != nil {
				return r, false, err
			}
			out[f] = mv
		}
		return t.side.with(r, nil, out), true, nil
	}
	st, err := requireStruct(v, maskPurpose)
	if err != nil {
		return r, false, err
	}
	out, err := newStruct(st.Schema(), func(f connect.Field) (any, error) {
		fv := fieldValue(st, f, t.replaceNullWithDefault)
		if !t.fields[f.Name] {
			return fv, nil
		}
		return t.masked(fv)
	})
	if err != nil {
		return r, false, err
	}
	return t.side.with(r, t.side.schema(r), out), true, nil
}

func (t *maskField) masked(v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	if t.replacement != nil {
		return maskWithReplacement(v, *t.replacement)
	}
	return maskWithNull(v)
}

func maskWithNull(v any) (any, error) {
	switch v.(type) {
	case bool:
		return false, nil
	case int8:
		return int8(0), nil
	case int16:
		return int16(0), nil
	case int32:
		return int32(0), nil
	case int64:
		return int64(0), nil
	case float32:
		return float32(0), nil
	case float64:
		return float64(0), nil
	case string:
		return "", nil
	case connect.Decimal:
		return connect.Decimal{Unscaled: new(big.Int)}, nil
	case time.Time:
		return time.UnixMilli(0).UTC(), nil
	case []any:
		return []any{}, nil
	case map[string]any:
		return map[string]any{}, nil
	case map[any]any:
		return map[any]any{}, nil
	}
	return nil, dataErrorf("Cannot mask value of type: class %s", className(v))
}

func maskWithReplacement(v any, repl string) (any, error) {
	switch v.(type) {
	case string:
		return repl, nil
	case int8, int16, int32, int64, float32, float64:
	case connect.Decimal:
		d, err := parseDecimal(repl)
		if err != nil {
			return nil, dataErrorf("Unable to convert %s (class java.lang.String) to number", repl)
		}
		return d, nil
	default:
		return nil, dataErrorf("Cannot mask value of type class %s with custom replacement.", className(v))
	}
	n, err := parseJavaNumber(repl)
	if err != nil {
		return nil, dataErrorf("Unable to convert %s (class java.lang.String) to number", repl)
	}
	switch v.(type) {
	case int8:
		return int8(n.asLong()), nil
	case int16:
		return int16(n.asLong()), nil
	case int32:
		return int32(n.asLong()), nil
	case int64:
		return n.asLong(), nil
	case float32:
		return float32(n.asDouble()), nil
	}
	return n.asDouble(), nil
}

// javaNumber is a number read from text as Kafka's Values does: an
// integer when it has no fraction, else a double.
type javaNumber struct {
	isInt bool
	i     int64
	f     float64
}

func (n javaNumber) asLong() int64 {
	if n.isInt {
		return n.i
	}
	return doubleToLong(n.f)
}

func (n javaNumber) asDouble() float64 {
	if n.isInt {
		return float64(n.i)
	}
	return n.f
}

func parseJavaNumber(s string) (javaNumber, error) {
	s = strings.TrimSpace(s)
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return javaNumber{isInt: true, i: i}, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return javaNumber{}, err
	}
	return javaNumber{f: f}, nil
}

// parseDecimal reads plain decimal notation (BigDecimal's constructor for
// the common form) into a Decimal keeping the written scale.
func parseDecimal(s string) (connect.Decimal, error) {
	s = strings.TrimSpace(s)
	intPart, frac, _ := strings.Cut(s, ".")
	digits := intPart + frac
	n, ok := new(big.Int).SetString(digits, 10)
	if !ok || digits == "" || strings.ContainsAny(frac, "+-") {
		return connect.Decimal{}, fmt.Errorf("not a decimal: %q", s)
	}
	return connect.Decimal{Unscaled: n, Scale: len(frac)}, nil
}

func (t *maskField) Close() error { return nil }

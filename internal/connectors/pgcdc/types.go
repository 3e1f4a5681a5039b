package pgcdc

import (
	"encoding/hex"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/samsa-io/samsa/connect"
)

// PostgreSQL type OIDs (pg_type.dat), the ones mapped.
const (
	oidBool        = 16
	oidBytea       = 17
	oidName        = 19
	oidInt8        = 20
	oidInt2        = 21
	oidInt4        = 23
	oidText        = 25
	oidOID         = 26
	oidJSON        = 114
	oidXML         = 142
	oidFloat4      = 700
	oidFloat8      = 701
	oidBPChar      = 1042
	oidVarchar     = 1043
	oidDate        = 1082
	oidTime        = 1083
	oidTimestamp   = 1114
	oidTimestamptz = 1184
	oidTimetz      = 1266
	oidNumeric     = 1700
	oidUUID        = 2950
	oidJSONB       = 3802
)

// Debezium's logical type names.
const (
	dbzDate           = "io.debezium.time.Date"
	dbzTime           = "io.debezium.time.Time"
	dbzMicroTime      = "io.debezium.time.MicroTime"
	dbzTimestamp      = "io.debezium.time.Timestamp"
	dbzMicroTimestamp = "io.debezium.time.MicroTimestamp"
	dbzZonedTimestamp = "io.debezium.time.ZonedTimestamp"
	dbzZonedTime      = "io.debezium.time.ZonedTime"
	dbzJSON           = "io.debezium.data.Json"
	dbzUUID           = "io.debezium.data.Uuid"
	dbzXML            = "io.debezium.data.Xml"
	dbzVarDecimal     = "io.debezium.data.VariableScaleDecimal"
	decimalPrecision  = "connect.decimal.precision"
)

// unavailable is Debezium's placeholder for an unchanged TOASTed value that
// pgoutput does not send (unavailable.value.placeholder's default).
const unavailable = "__debezium_unavailable_value"

// converter turns a column's text form (pgoutput's and the snapshot's; the
// sessions run with DateStyle ISO, TimeZone UTC, bytea_output hex) into the
// Connect value of its schema.
type converter func(text string) (any, error)

// mapping is a column type's schema (required form) and converter.
type mapping struct {
	schema *connect.Schema
	conv   converter
}

func v1(s *connect.Schema) *connect.Schema {
	one := int32(1)
	s.Version = &one
	return s
}

func named(t connect.Type, name string) *connect.Schema {
	return v1(&connect.Schema{Type: t, Name: name})
}

// mapType is a column type's mapping, or false for types not mapped (the
// column is left out of the events, as Debezium does without
// include.unknown.datatypes).
func mapType(oid uint32, typmod int32, s *settings) (mapping, bool) {
	switch oid {
	case oidBool:
		return mapping{connect.BooleanSchema, func(t string) (any, error) { return t == "t", nil }}, true
	case oidInt2:
		return mapping{connect.Int16Schema, intConv(16, func(n int64) any { return int16(n) })}, true
	case oidInt4:
		return mapping{connect.Int32Schema, intConv(32, func(n int64) any { return int32(n) })}, true
	case oidInt8, oidOID:
		return mapping{connect.Int64Schema, intConv(64, func(n int64) any { return n })}, true
	case oidFloat4:
		return mapping{connect.Float32Schema, func(t string) (any, error) {
			f, err := strconv.ParseFloat(t, 32)
			return float32(f), err
		}}, true
	case oidFloat8:
		return mapping{connect.Float64Schema, func(t string) (any, error) { return strconv.ParseFloat(t, 64) }}, true
	case oidText, oidVarchar, oidBPChar, oidName:
		return mapping{connect.StringSchema, textConv}, true
	case oidJSON, oidJSONB:
		return mapping{named(connect.String, dbzJSON), textConv}, true
	case oidUUID:
		return mapping{named(connect.String, dbzUUID), textConv}, true
	case oidXML:
		return mapping{named(connect.String, dbzXML), textConv}, true
	case oidBytea:
		return mapping{connect.BytesSchema, byteaConv}, true
	case oidNumeric:
		return numericMapping(typmod, s.decimalMode), true
	case oidDate, oidTime, oidTimestamp:
		return temporalMapping(oid, typmod, s.timePrecision), true
	case oidTimestamptz:
		return mapping{named(connect.String, dbzZonedTimestamp), timestamptzConv}, true
	case oidTimetz:
		return mapping{named(connect.String, dbzZonedTime), timetzConv}, true
	}
	return mapping{}, false
}

func textConv(t string) (any, error) { return t, nil }

func intConv(bits int, wrap func(int64) any) converter {
	return func(t string) (any, error) {
		n, err := strconv.ParseInt(t, 10, bits)
		if err != nil {
			return nil, err
		}
		return wrap(n), nil
	}
}

func byteaConv(t string) (any, error) {
	if !strings.HasPrefix(t, `\x`) {
		return nil, fmt.Errorf("bytea not in hex format: %.20q", t)
	}
	return hex.DecodeString(t[2:])
}

// numericTypmod splits a numeric column's typmod into precision and scale
// (PostgreSQL 15 allows a negative scale, kept in 11 signed bits); ok is
// false for an unconstrained numeric.
func numericTypmod(typmod int32) (precision, scale int, ok bool) {
	if typmod < 4 {
		return 0, 0, false
	}
	m := typmod - 4
	return int((m >> 16) & 0xffff), int(((m & 0x7ff) ^ 1024) - 1024), true
}

func numericMapping(typmod int32, mode string) mapping {
	switch mode {
	case "double":
		return mapping{connect.Float64Schema, func(t string) (any, error) { return strconv.ParseFloat(t, 64) }}
	case "string":
		return mapping{connect.StringSchema, textConv}
	}
	precision, scale, ok := numericTypmod(typmod)
	if !ok {
		return mapping{varDecimalSchema(false), varDecimalConv}
	}
	sch := v1(&connect.Schema{Type: connect.Bytes, Name: connect.DecimalName,
		Parameters: map[string]string{connect.DecimalScale: strconv.Itoa(scale), decimalPrecision: strconv.Itoa(precision)}})
	return mapping{sch, func(t string) (any, error) {
		d, err := parseDecimal(t)
		if err != nil || d == nil {
			return nil, err
		}
		return rescale(*d, scale), nil
	}}
}

// varDecimalSchema is Debezium's VariableScaleDecimal: a struct of the scale
// and the unscaled value's two's-complement bytes, for numeric columns
// without a declared scale.
func varDecimalSchema(optional bool) *connect.Schema {
	b := connect.NewStruct(dbzVarDecimal).Version(1).Doc("Variable scaled decimal").
		Field("scale", connect.Int32Schema).Field("value", connect.BytesSchema)
	if optional {
		b = b.Optional()
	}
	return b.MustBuild()
}

func varDecimalConv(t string) (any, error) {
	d, err := parseDecimal(t)
	if err != nil || d == nil {
		return nil, err
	}
	st := connect.NewStructValue(varDecimalSchema(false))
	st.MustPut("scale", int32(d.Scale)).MustPut("value", twosComplement(d.Unscaled))
	return st, nil
}

// parseDecimal reads numeric's text form; NaN and ±Infinity have no
// Decimal form and come back nil (the field is null, as Debezium's precise
// mode does).
func parseDecimal(t string) (*connect.Decimal, error) {
	switch t {
	case "NaN", "Infinity", "-Infinity":
		return nil, nil
	}
	intPart, frac, _ := strings.Cut(t, ".")
	u, ok := new(big.Int).SetString(intPart+frac, 10)
	if !ok {
		return nil, fmt.Errorf("not a numeric: %.40q", t)
	}
	return &connect.Decimal{Unscaled: u, Scale: len(frac)}, nil
}

// rescale brings d to the column's scale (the text form carries exactly the
// column's scale, so this only matters for negative scales).
func rescale(d connect.Decimal, scale int) connect.Decimal {
	if d.Scale == scale {
		return d
	}
	u := new(big.Int).Set(d.Unscaled)
	if scale > d.Scale {
		u.Mul(u, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale-d.Scale)), nil))
	} else {
		u.Quo(u, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(d.Scale-scale)), nil))
	}
	return connect.Decimal{Unscaled: u, Scale: scale}
}

// twosComplement is Java's BigInteger.toByteArray: big-endian, minimal,
// with a sign bit.
func twosComplement(n *big.Int) []byte {
	if n.Sign() >= 0 {
		b := n.Bytes()
		if len(b) == 0 || b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return b
	}
	// -n-1 inverted is n's two's complement.
	m := new(big.Int).Neg(n)
	m.Sub(m, big.NewInt(1))
	b := m.Bytes()
	for i := range b {
		b[i] = ^b[i]
	}
	if len(b) == 0 || b[0]&0x80 == 0 {
		b = append([]byte{0xff}, b...)
	}
	return b
}

// timePrecisionOf is a time or timestamp column's fractional digits
// (typmod -1 means the default, 6).
func timePrecisionOf(typmod int32) int {
	if typmod < 0 {
		return 6
	}
	return int(typmod)
}

func temporalMapping(oid uint32, typmod int32, mode string) mapping {
	micros := timePrecisionOf(typmod) > 3
	switch oid {
	case oidDate:
		if mode == "connect" {
			return mapping{connect.DateSchema(), timeConv(parseDate, func(t time.Time) any { return t })}
		}
		return mapping{named(connect.Int32, dbzDate), timeConv(parseDate, func(t time.Time) any { return int32(t.Unix() / 86400) })}
	case oidTime:
		if mode == "connect" {
			return mapping{connect.TimeSchema(), timeConv(parseTimeOfDay, func(t time.Time) any { return t })}
		}
		if micros {
			return mapping{named(connect.Int64, dbzMicroTime), timeConv(parseTimeOfDay, func(t time.Time) any { return t.UnixMicro() })}
		}
		return mapping{named(connect.Int32, dbzTime), timeConv(parseTimeOfDay, func(t time.Time) any { return int32(t.UnixMilli()) })}
	}
	if mode == "connect" {
		return mapping{connect.TimestampSchema(), timeConv(parseTimestamp, func(t time.Time) any { return t.Truncate(time.Millisecond) })}
	}
	if micros {
		return mapping{named(connect.Int64, dbzMicroTimestamp), timeConv(parseTimestamp, func(t time.Time) any { return t.UnixMicro() })}
	}
	return mapping{named(connect.Int64, dbzTimestamp), timeConv(parseTimestamp, func(t time.Time) any { return t.UnixMilli() })}
}

// timeConv parses then shapes; ±infinity has no value in any of these
// types and comes back nil (a null field).
func timeConv(parse func(string) (time.Time, error), shape func(time.Time) any) converter {
	return func(t string) (any, error) {
		if t == "infinity" || t == "-infinity" {
			return nil, nil
		}
		v, err := parse(t)
		if err != nil {
			return nil, err
		}
		return shape(v), nil
	}
}

// bc turns "... BC" into a negative year for Go's parser: year 1 BC is
// year 0 in ISO 8601.
func bc(t string) (string, bool) {
	if s, ok := strings.CutSuffix(t, " BC"); ok {
		return s, true
	}
	return t, false
}

func fixBC(v time.Time, isBC bool) time.Time {
	if !isBC {
		return v
	}
	return v.AddDate(1-2*v.Year(), 0, 0)
}

func parseDate(t string) (time.Time, error) {
	s, isBC := bc(t)
	v, err := time.Parse("2006-01-02", s)
	return fixBC(v, isBC), err
}

func parseTimeOfDay(t string) (time.Time, error) {
	if t == "24:00:00" {
		return time.Unix(86400, 0).UTC(), nil
	}
	v, err := time.Parse("15:04:05.999999999", t)
	if err != nil {
		return v, err
	}
	// Connect's Time and Debezium's time types count from midnight of the epoch.
	return time.Date(1970, 1, 1, v.Hour(), v.Minute(), v.Second(), v.Nanosecond(), time.UTC), nil
}

func parseTimestamp(t string) (time.Time, error) {
	s, isBC := bc(t)
	v, err := time.Parse("2006-01-02 15:04:05.999999999", s)
	return fixBC(v, isBC), err
}

// timestamptzConv renders the instant in UTC as ISO-8601 with the
// fraction in groups of three digits, as Java's ISO_OFFSET_DATE_TIME that
// Debezium's ZonedTimestamp uses ("2024-01-02T03:04:05.123Z").
func timestamptzConv(t string) (any, error) {
	if t == "infinity" || t == "-infinity" {
		return nil, nil
	}
	s, isBC := bc(t)
	v, err := time.Parse("2006-01-02 15:04:05.999999999Z07", s)
	if err != nil {
		if v, err = time.Parse("2006-01-02 15:04:05.999999999Z07:00", s); err != nil {
			return nil, err
		}
	}
	v = fixBC(v, isBC).UTC()
	return v.Format("2006-01-02T15:04:05") + javaFraction(v.Nanosecond()) + "Z", nil
}

func timetzConv(t string) (any, error) {
	for _, layout := range []string{"15:04:05.999999999Z07", "15:04:05.999999999Z07:00"} {
		if v, err := time.Parse(layout, t); err == nil {
			v = v.UTC()
			return v.Format("15:04:05") + javaFraction(v.Nanosecond()) + "Z", nil
		}
	}
	return nil, fmt.Errorf("not a time with time zone: %.40q", t)
}

func javaFraction(ns int) string {
	switch {
	case ns == 0:
		return ""
	case ns%1_000_000 == 0:
		return fmt.Sprintf(".%03d", ns/1_000_000)
	case ns%1_000 == 0:
		return fmt.Sprintf(".%06d", ns/1_000)
	}
	return fmt.Sprintf(".%09d", ns)
}

// zeroOf is the value Debezium puts in a required field that has no value
// (a non-key column of a delete's key-only old row): its type's zero.
func zeroOf(s *connect.Schema) any {
	switch s.Name {
	case connect.DecimalName:
		sc, _ := strconv.Atoi(s.Parameters[connect.DecimalScale])
		return connect.Decimal{Unscaled: big.NewInt(0), Scale: sc}
	case connect.DateName, connect.TimeName, connect.TimestampName:
		return time.Unix(0, 0).UTC()
	case dbzVarDecimal:
		return connect.NewStructValue(s).MustPut("scale", int32(0)).MustPut("value", []byte{0})
	}
	switch s.Type {
	case connect.Int8:
		return int8(0)
	case connect.Int16:
		return int16(0)
	case connect.Int32:
		return int32(0)
	case connect.Int64:
		return int64(0)
	case connect.Float32:
		return float32(0)
	case connect.Float64:
		return float64(0)
	case connect.Boolean:
		return false
	case connect.String:
		return ""
	case connect.Bytes:
		return []byte{}
	}
	return nil
}

// placeholderOf is the value for an unchanged TOASTed column pgoutput did
// not send: Debezium's placeholder for text and bytes, else the zero.
func placeholderOf(s *connect.Schema) any {
	switch {
	case s.Type == connect.String:
		return unavailable
	case s.Type == connect.Bytes && s.Name == "":
		return []byte(unavailable)
	}
	if s.Optional {
		return nil
	}
	return zeroOf(s)
}

package jdbc

import (
	"database/sql"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/samsa-io/samsa/connect"
)

// numeric.mapping values (Confluent's NumericMapping, the two Samsa has).
const (
	numericMappingNone    = "none"
	numericMappingBestFit = "best_fit"
)

// columnMapping is how one result column becomes a Connect struct field:
// its schema and the conversion of the driver's value.
type columnMapping struct {
	name   string
	schema *connect.Schema
	conv   func(v any) (any, error)
}

// resultColumn is what a query result says of a column, with the
// catalog's nullability when the table is known.
type resultColumn struct {
	name      string
	typeName  string // upper case
	precision int64  // -1 when unknown
	scale     int64
	nullable  bool
}

var declaredPrecision = regexp.MustCompile(`\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\)`)

// describeColumns reads a result's columns; nullable says, per column name,
// what the catalog knows (a column not in it is optional, as Confluent
// treats columns whose nullability the driver cannot tell).
func describeColumns(types []*sql.ColumnType, nullable map[string]bool) []resultColumn {
	out := make([]resultColumn, len(types))
	for i, ct := range types {
		c := resultColumn{name: ct.Name(), typeName: strings.ToUpper(ct.DatabaseTypeName()), precision: -1, nullable: true}
		if n, ok := nullable[c.name]; ok {
			c.nullable = n
		}
		if p, s, ok := ct.DecimalSize(); ok {
			c.precision, c.scale = p, s
		} else if m := declaredPrecision.FindStringSubmatch(c.typeName); m != nil {
			c.precision, _ = strconv.ParseInt(m[1], 10, 64)
			if m[2] != "" {
				c.scale, _ = strconv.ParseInt(m[2], 10, 64)
			}
		}
		out[i] = c
	}
	return out
}

// mapColumn chooses a column's Connect schema from its database type, as
// Confluent's GenericDatabaseDialect and PostgreSqlDatabaseDialect do; ok is
// false for types with no mapping (the column is left out, with a warning,
// as Confluent does). first is the column's value in the first row, which
// decides the type of SQLite columns declared with no type.
func (d *dialect) mapColumn(c resultColumn, numericMapping string, first any) (columnMapping, bool) {
	base := strings.TrimSpace(c.typeName)
	if i := strings.IndexByte(base, '('); i >= 0 {
		base = strings.TrimSpace(base[:i])
	}
	m := columnMapping{name: c.name}
	opt := c.nullable
	prim := func(t connect.Type, conv func(any) (any, error)) (columnMapping, bool) {
		m.schema, m.conv = connect.PrimitiveSchema(t, opt), conv
		return m, true
	}
	logical := func(s *connect.Schema, conv func(any) (any, error)) (columnMapping, bool) {
		s.Optional = opt
		m.schema, m.conv = s, conv
		return m, true
	}
	if d.kind == sqlite {
		base = sqliteBaseType(base, first)
	}
	switch base {
	case "BOOL", "BOOLEAN":
		return prim(connect.Boolean, toBool)
	case "TINYINT":
		return prim(connect.Int8, toInt8)
	case "INT2", "SMALLINT":
		return prim(connect.Int16, toInt16)
	case "INT4", "MEDIUMINT", "SERIAL":
		return prim(connect.Int32, toInt32)
	case "INT8", "BIGINT", "INTEGER", "INT", "BIGSERIAL":
		if d.kind == postgres && (base == "INTEGER" || base == "INT") {
			return prim(connect.Int32, toInt32)
		}
		// SQLite's integers are 64-bit whatever the declaration says.
		return prim(connect.Int64, toInt64)
	case "FLOAT4":
		return prim(connect.Float32, toFloat32)
	case "FLOAT8", "REAL", "DOUBLE", "DOUBLE PRECISION", "FLOAT":
		if d.kind == postgres && base == "REAL" {
			return prim(connect.Float32, toFloat32)
		}
		return prim(connect.Float64, toFloat64)
	case "NUMERIC", "DECIMAL":
		return d.mapNumeric(m, c, opt, numericMapping)
	case "TEXT", "VARCHAR", "BPCHAR", "CHAR", "CHARACTER", "NAME", "CLOB", "UUID", "JSON", "JSONB",
		"XML", "CITEXT", "CHARACTER VARYING", "NVARCHAR", "NCHAR", "VARYING CHARACTER", "NATIVE CHARACTER", "INET", "CIDR", "MACADDR":
		return prim(connect.String, toString)
	case "BYTEA", "BLOB":
		return prim(connect.Bytes, toBytes)
	case "DATE":
		return logical(connect.DateSchema(), d.toDate)
	case "TIME":
		return logical(connect.TimeSchema(), d.toTime)
	case "TIMESTAMP", "DATETIME":
		return logical(connect.TimestampSchema(), d.toZonelessTimestamp)
	case "TIMESTAMPTZ":
		return logical(connect.TimestampSchema(), toTimestamp)
	}
	return m, false
}

// sqliteBaseType reads a SQLite declared type by SQLite's affinity rules
// (a declaration is free text there), keeping the names that say more
// than the affinity (BOOLEAN, DATE, TIMESTAMP, NUMERIC(p,s), SMALLINT...).
func sqliteBaseType(base string, first any) string {
	switch base {
	case "BOOLEAN", "BOOL", "DATE", "TIME", "DATETIME", "TIMESTAMP", "TINYINT", "SMALLINT", "INT2",
		"MEDIUMINT", "NUMERIC", "DECIMAL", "REAL", "DOUBLE", "DOUBLE PRECISION", "FLOAT", "BLOB":
		return base
	case "":
		switch first.(type) {
		case int64:
			return "BIGINT"
		case float64:
			return "DOUBLE"
		case []byte:
			return "BLOB"
		}
		return "TEXT"
	}
	switch {
	case strings.Contains(base, "INT"):
		return "BIGINT"
	case strings.Contains(base, "CHAR"), strings.Contains(base, "CLOB"), strings.Contains(base, "TEXT"):
		return "TEXT"
	case strings.Contains(base, "BLOB"):
		return "BLOB"
	case strings.Contains(base, "REAL"), strings.Contains(base, "FLOA"), strings.Contains(base, "DOUB"):
		return "DOUBLE"
	}
	return "NUMERIC"
}

// mapNumeric is Confluent's numeric.mapping: none keeps NUMERIC as Decimal
// at the column's scale; best_fit turns precision < 19 into the smallest
// integer (scale 0) or FLOAT64 (scale > 0). A NUMERIC with no declared
// precision has no fixed scale, which a Decimal schema needs: it becomes
// FLOAT64 under best_fit and its exact text (STRING) otherwise.
func (d *dialect) mapNumeric(m columnMapping, c resultColumn, opt bool, mapping string) (columnMapping, bool) {
	set := func(s *connect.Schema, conv func(any) (any, error)) (columnMapping, bool) {
		m.schema, m.conv = s, conv
		return m, true
	}
	unconstrained := c.precision <= 0 || c.precision > 1000
	if mapping == numericMappingBestFit {
		switch {
		case unconstrained:
			return set(connect.PrimitiveSchema(connect.Float64, opt), toFloat64)
		case c.precision < 19 && c.scale <= 0:
			switch {
			case c.precision < 3:
				return set(connect.PrimitiveSchema(connect.Int8, opt), toInt8)
			case c.precision < 5:
				return set(connect.PrimitiveSchema(connect.Int16, opt), toInt16)
			case c.precision < 10:
				return set(connect.PrimitiveSchema(connect.Int32, opt), toInt32)
			}
			return set(connect.PrimitiveSchema(connect.Int64, opt), toInt64)
		case c.precision < 19:
			return set(connect.PrimitiveSchema(connect.Float64, opt), toFloat64)
		}
	}
	if unconstrained {
		return set(connect.PrimitiveSchema(connect.String, opt), toString)
	}
	s := connect.DecimalSchema(int(c.scale))
	s.Optional = opt
	scale := int(c.scale)
	return set(s, func(v any) (any, error) { return toDecimal(v, scale) })
}

func convErr(v any, to string) error {
	return fmt.Errorf("%w: cannot read %T value %v as %s", connect.ErrData, v, v, to)
}

func toInt64(v any) (any, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<63 {
			return int64(x), nil
		}
	case bool:
		if x {
			return int64(1), nil
		}
		return int64(0), nil
	case string:
		return parseIntText(x)
	case []byte:
		return parseIntText(string(x))
	}
	return nil, convErr(v, "INT64")
}

func parseIntText(s string) (any, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		// NUMERIC text with a zero fraction ("12.00").
		r, ok := new(big.Rat).SetString(strings.TrimSpace(s))
		if !ok || !r.IsInt() || !r.Num().IsInt64() {
			return nil, convErr(s, "an integer")
		}
		return r.Num().Int64(), nil
	}
	return n, nil
}

func toIntSized(v any, bits int, to string) (int64, error) {
	n, err := toInt64(v)
	if err != nil {
		return 0, err
	}
	i := n.(int64)
	lim := int64(1) << (bits - 1)
	if i < -lim || i >= lim {
		return 0, fmt.Errorf("%w: value %d is out of range for %s", connect.ErrData, i, to)
	}
	return i, nil
}

func toInt8(v any) (any, error) {
	i, err := toIntSized(v, 8, "INT8")
	return int8(i), err
}

func toInt16(v any) (any, error) {
	i, err := toIntSized(v, 16, "INT16")
	return int16(i), err
}

func toInt32(v any) (any, error) {
	i, err := toIntSized(v, 32, "INT32")
	return int32(i), err
}

func toFloat64(v any) (any, error) {
	switch x := v.(type) {
	case float64:
		return x, nil
	case float32:
		return float64(x), nil
	case int64:
		return float64(x), nil
	case string:
		return parseFloatText(x)
	case []byte:
		return parseFloatText(string(x))
	}
	return nil, convErr(v, "FLOAT64")
}

func parseFloatText(s string) (any, error) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return nil, convErr(s, "a floating point number")
	}
	return f, nil
}

func toFloat32(v any) (any, error) {
	f, err := toFloat64(v)
	if err != nil {
		return nil, err
	}
	return float32(f.(float64)), nil
}

func toBool(v any) (any, error) {
	switch x := v.(type) {
	case bool:
		return x, nil
	case int64:
		return x != 0, nil
	case float64:
		return x != 0, nil
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "t", "true", "1", "y", "yes":
			return true, nil
		case "f", "false", "0", "n", "no":
			return false, nil
		}
	case []byte:
		return toBool(string(x))
	}
	return nil, convErr(v, "BOOLEAN")
}

func toString(v any) (any, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case []byte:
		return string(x), nil
	case time.Time:
		return x.Format(time.RFC3339Nano), nil
	case [16]byte: // a UUID
		return fmt.Sprintf("%x-%x-%x-%x-%x", x[0:4], x[4:6], x[6:8], x[8:10], x[10:16]), nil
	case int64, float64, bool:
		return fmt.Sprint(x), nil
	}
	return nil, convErr(v, "STRING")
}

func toBytes(v any) (any, error) {
	switch x := v.(type) {
	case []byte:
		return append([]byte(nil), x...), nil
	case string:
		return []byte(x), nil
	}
	return nil, convErr(v, "BYTES")
}

// toDecimal reads a NUMERIC value (text from PostgreSQL, a number or text
// from SQLite) at the column's scale; a value with more fraction digits than
// the scale is refused rather than rounded.
func toDecimal(v any, scale int) (any, error) {
	var r *big.Rat
	switch x := v.(type) {
	case string:
		r, _ = new(big.Rat).SetString(strings.TrimSpace(x))
	case []byte:
		r, _ = new(big.Rat).SetString(strings.TrimSpace(string(x)))
	case int64:
		r = new(big.Rat).SetInt64(x)
	case float64:
		r, _ = new(big.Rat).SetString(strconv.FormatFloat(x, 'f', -1, 64))
	}
	if r == nil {
		return nil, convErr(v, "DECIMAL")
	}
	pow := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)
	r.Mul(r, new(big.Rat).SetInt(pow))
	if !r.IsInt() {
		return nil, fmt.Errorf("%w: value %v has more than %d fraction digits", connect.ErrData, v, scale)
	}
	return connect.Decimal{Unscaled: new(big.Int).Set(r.Num()), Scale: scale}, nil
}

var timestampLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999-07",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04",
	"2006-01-02T15:04",
	"2006-01-02",
}

// parseTimeText reads a timestamp written as text; one with no zone is in loc.
func parseTimeText(s string, loc *time.Location) (time.Time, bool) {
	s = strings.TrimSpace(s)
	for _, l := range timestampLayouts {
		if t, err := time.ParseInLocation(l, s, loc); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// inZone reinterprets a zoneless value's wall clock in db.timezone: the
// drivers hand back TIMESTAMP (without time zone) and SQLite text as UTC.
func inZone(t time.Time, loc *time.Location) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), loc)
}

func (d *dialect) toZonelessTimestamp(v any) (any, error) {
	switch x := v.(type) {
	case time.Time:
		return inZone(x, d.loc), nil
	case string:
		if t, ok := parseTimeText(x, d.loc); ok {
			return t, nil
		}
	case int64: // SQLite: milliseconds since the epoch, as Xerial's driver writes them
		return time.UnixMilli(x), nil
	}
	return nil, convErr(v, "a timestamp")
}

func toTimestamp(v any) (any, error) {
	if t, ok := v.(time.Time); ok {
		return t, nil
	}
	return nil, convErr(v, "a timestamp")
}

func (d *dialect) toDate(v any) (any, error) {
	var t time.Time
	switch x := v.(type) {
	case time.Time:
		t = x
	case string:
		p, ok := parseTimeText(x, time.UTC)
		if !ok {
			return nil, convErr(v, "a date")
		}
		t = p
	default:
		return nil, convErr(v, "a date")
	}
	// Connect's Date is midnight UTC of the day.
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC), nil
}

func (d *dialect) toTime(v any) (any, error) {
	var t time.Time
	switch x := v.(type) {
	case time.Time:
		t = x
	case string:
		s := strings.TrimSpace(x)
		var err error
		for _, l := range []string{"15:04:05.999999999", "15:04:05.999999999-07", "15:04:05.999999999Z07:00", "15:04"} {
			if t, err = time.Parse(l, s); err == nil {
				break
			}
		}
		if err != nil {
			if p, ok := parseTimeText(s, time.UTC); ok {
				t = p
			} else {
				return nil, convErr(v, "a time of day")
			}
		}
	default:
		return nil, convErr(v, "a time of day")
	}
	// Connect's Time is a time of day on 1970-01-01 UTC, in milliseconds.
	return time.Date(1970, 1, 1, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC).Truncate(time.Millisecond), nil
}

package transforms

import (
	"errors"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/samsa-io/samsa/connect"
)

// parseLiteral reads a config string into a typed value as Kafka's
// Values.parseString does for InsertHeader's value.literal: null, true
// and false; integers as the narrowest of INT8..INT64 (wider ones as a
// Decimal); other numbers as FLOAT32 (FLOAT64 past its range);
// ISO-8601 dates, times and timestamps; [arrays] and {maps} of those
// with quoted strings inside; anything else is the string itself.
func parseLiteral(s string) (*connect.Schema, any) {
	if s == "" {
		return connect.StringSchema, ""
	}
	switch s {
	case "null":
		return nil, nil
	case "true":
		return connect.BooleanSchema, true
	case "false":
		return connect.BooleanSchema, false
	}
	trimmed := strings.TrimSpace(s)
	if strings.HasPrefix(trimmed, "[") || strings.HasPrefix(trimmed, "{") {
		p := &literalParser{s: trimmed}
		if schema, v, err := p.value(); err == nil && p.atEnd() {
			return schema, v
		}
	}
	if schema, v, ok := scalarLiteral(trimmed); ok {
		return schema, v
	}
	return connect.StringSchema, s
}

// scalarLiteral reads a temporal or numeric token.
func scalarLiteral(tok string) (*connect.Schema, any, bool) {
	if tok == "" {
		return nil, nil, false
	}
	if isDigit(tok[0]) {
		if schema, v, ok := temporalLiteral(tok); ok {
			return schema, v, true
		}
	}
	if isDigit(tok[0]) || tok[0] == '+' || tok[0] == '-' {
		return numberLiteral(tok)
	}
	return nil, nil, false
}

func temporalLiteral(tok string) (*connect.Schema, any, bool) {
	tok = strings.ReplaceAll(tok, `\:`, ":")
	layouts := []struct {
		layout string
		schema func() *connect.Schema
	}{
		{"15:04:05.000Z", connect.TimeSchema},
		{"2006-01-02T15:04:05.000Z", connect.TimestampSchema},
		{"2006-01-02", connect.DateSchema},
	}
	for _, l := range layouts {
		if len(tok) != len(l.layout) {
			continue
		}
		if t, err := time.Parse(l.layout, tok); err == nil {
			if l.layout[0] == '1' {
				t = t.AddDate(1970, 0, 0) // Go's zero year is 0000; Java's time-only date is 1970-01-01
			}
			return l.schema(), t.UTC(), true
		}
	}
	return nil, nil, false
}

func numberLiteral(tok string) (*connect.Schema, any, bool) {
	r, ok := new(big.Rat).SetString(strings.TrimPrefix(tok, "+"))
	if !ok || strings.ContainsAny(tok, "/_xXpP") {
		return nil, nil, false
	}
	if r.IsInt() && r.Num().IsInt64() {
		return narrowestInt(r.Num().Int64())
	}
	if r.IsInt() && textScale(tok) == 0 {
		// Past a long, with no fraction or exponent: Kafka keeps a Decimal.
		return connect.DecimalSchema(0), connect.Decimal{Unscaled: r.Num(), Scale: 0}, true
	}
	if f, exact := r.Float32(); !isInf32(f) || exact {
		return connect.Float32Schema, f, true
	}
	f, _ := r.Float64()
	return connect.Float64Schema, f, true
}

// textScale is the scale Java's BigDecimal gives the text: fraction
// digits less the exponent.
func textScale(tok string) int {
	mant, exp, _ := strings.Cut(strings.ToLower(tok), "e")
	_, frac, _ := strings.Cut(mant, ".")
	e, _ := strconv.Atoi(strings.TrimPrefix(exp, "+"))
	return len(frac) - e
}

func isInf32(f float32) bool { return f > 3.4028235e38 || f < -3.4028235e38 }

func narrowestInt(n int64) (*connect.Schema, any, bool) {
	switch {
	case int64(int8(n)) == n:
		return connect.Int8Schema, int8(n), true
	case int64(int16(n)) == n:
		return connect.Int16Schema, int16(n), true
	case int64(int32(n)) == n:
		return connect.Int32Schema, int32(n), true
	}
	return connect.Int64Schema, n, true
}

// literalParser reads [ ... ] and { ... } with embedded values.
type literalParser struct {
	s   string
	pos int
}

var errLiteral = errors.New("not a literal")

func (p *literalParser) skipSpace() {
	for p.pos < len(p.s) && (p.s[p.pos] == ' ' || p.s[p.pos] == '\t') {
		p.pos++
	}
}

func (p *literalParser) atEnd() bool { p.skipSpace(); return p.pos == len(p.s) }

func (p *literalParser) consume(c byte) bool {
	p.skipSpace()
	if p.pos < len(p.s) && p.s[p.pos] == c {
		p.pos++
		return true
	}
	return false
}

func (p *literalParser) value() (*connect.Schema, any, error) {
	p.skipSpace()
	switch {
	case p.consume('['):
		return p.array()
	case p.consume('{'):
		return p.mapValue()
	case p.consume('"'):
		end := strings.IndexByte(p.s[p.pos:], '"')
		if end < 0 {
			return nil, nil, errLiteral
		}
		str := p.s[p.pos : p.pos+end]
		p.pos += end + 1
		if schema, v, ok := temporalLiteral(str); ok {
			return schema, v, nil
		}
		return connect.StringSchema, str, nil
	}
	end := p.pos
	for end < len(p.s) && !strings.ContainsRune(",:]}", rune(p.s[end])) {
		end++
	}
	tok := strings.TrimSpace(p.s[p.pos:end])
	p.pos = end
	switch tok {
	case "null":
		return nil, nil, nil
	case "true", "false":
		return connect.BooleanSchema, tok == "true", nil
	}
	if schema, v, ok := scalarLiteral(tok); ok {
		return schema, v, nil
	}
	return nil, nil, errLiteral
}

func (p *literalParser) array() (*connect.Schema, any, error) {
	var values []any
	var schemas []*connect.Schema
	for !p.consume(']') {
		if p.pos >= len(p.s) || (len(values) > 0 && !p.consume(',')) {
			return nil, nil, errLiteral
		}
		s, v, err := p.value()
		if err != nil {
			return nil, nil, err
		}
		values, schemas = append(values, v), append(schemas, s)
	}
	elem := commonSchema(schemas)
	if values == nil {
		values = []any{}
	}
	return connect.ArrayOf(elem), alignAll(values, elem), nil
}

func (p *literalParser) mapValue() (*connect.Schema, any, error) {
	out := map[any]any{}
	var keys, vals []*connect.Schema
	for !p.consume('}') {
		if p.pos >= len(p.s) || (len(keys) > 0 && !p.consume(',')) {
			return nil, nil, errLiteral
		}
		ks, k, err := p.value()
		if err != nil || k == nil || !p.consume(':') {
			return nil, nil, errLiteral
		}
		vs, v, err := p.value()
		if err != nil {
			return nil, nil, err
		}
		if _, hashable := k.(time.Time); !hashable && !comparableKey(k) {
			return nil, nil, errLiteral
		}
		out[k] = v
		keys, vals = append(keys, ks), append(vals, vs)
	}
	ks, vs := commonSchema(keys), commonSchema(vals)
	aligned := make(map[any]any, len(out))
	for k, v := range out {
		aligned[align(k, ks)] = align(v, vs)
	}
	return connect.MapOf(ks, vs), aligned, nil
}

func comparableKey(k any) bool {
	switch k.(type) {
	case []any, map[any]any, connect.Decimal:
		return false
	}
	return true
}

// commonSchema is the one schema every non-null element shares, widening
// integers and floats as Kafka's SchemaMerger does; nil when none.
func commonSchema(schemas []*connect.Schema) *connect.Schema {
	var common *connect.Schema
	for _, s := range schemas {
		switch {
		case s == nil:
		case common == nil:
			common = s
		case common.Equal(s):
		case isPlainNumeric(common) && isPlainNumeric(s):
			if numericRank(s.Type) > numericRank(common.Type) {
				common = s
			}
		default:
			return nil
		}
	}
	return common
}

func isPlainNumeric(s *connect.Schema) bool { return s.Name == "" && numericRank(s.Type) > 0 }

func numericRank(t connect.Type) int {
	return map[connect.Type]int{connect.Int8: 1, connect.Int16: 2, connect.Int32: 3, connect.Int64: 4, connect.Float32: 5, connect.Float64: 6}[t]
}

func alignAll(values []any, s *connect.Schema) []any {
	for i, v := range values {
		values[i] = align(v, s)
	}
	return values
}

// align widens a number to the common schema's type.
func align(v any, s *connect.Schema) any {
	if v == nil || s == nil || !isPlainNumeric(s) {
		return v
	}
	if out, err := castTo(v, s.Type); err == nil {
		return out
	}
	return v
}

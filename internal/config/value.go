package config

import (
	"math"
	"strconv"
	"strings"
)

// parseValue turns a raw string into the entry's Go type and runs the validator, following
// Kafka's ConfigDef.parseType: values are trimmed, booleans are case-insensitive, lists
// split on commas with surrounding blanks, an empty list is "".
func parseValue(e *Entry, name, raw string) (any, error) {
	v, reason := parseType(e.Type, strings.TrimSpace(raw))
	if reason != "" {
		return nil, invalidValue(e, name, raw, reason)
	}
	if e.Validator != nil {
		if err := e.Validator.Validate(v); err != nil {
			return nil, invalidValue(e, name, raw, err.Error())
		}
	}
	return v, nil
}

// parseType returns the typed value, or a reason it is not one.
func parseType(t Type, s string) (any, string) {
	switch t {
	case TypeBoolean:
		return parseBool(s)
	case TypeInt:
		return parseInt(s, 32, "INT")
	case TypeShort:
		return parseInt(s, 16, "SHORT")
	case TypeLong:
		return parseInt(s, 64, "LONG")
	case TypeDouble:
		return parseDouble(s)
	case TypeList:
		return parseList(s), ""
	}
	return s, "" // string, class and password keep their trimmed text
}

func parseBool(s string) (any, string) {
	switch {
	case strings.EqualFold(s, "true"):
		return true, ""
	case strings.EqualFold(s, "false"):
		return false, ""
	}
	return nil, "expected value to be either true or false"
}

// parseInt parses base-10 integers only: Java's parseInt/parseLong reject 0x and
// underscores, and so must we, or a file accepted here would be refused by Kafka.
func parseInt(s string, bits int, kafkaType string) (any, string) {
	n, err := strconv.ParseInt(s, 10, bits)
	if err != nil {
		return nil, "not a number of type " + kafkaType
	}
	switch bits {
	case 16:
		return int16(n), ""
	case 32:
		return int32(n), ""
	}
	return n, ""
}

// parseDouble refuses NaN: Kafka's range checks silently pass it, which would let a NaN
// min.cleanable.dirty.ratio through; no config means it.
func parseDouble(s string) (any, string) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) {
		return nil, "not a number of type DOUBLE"
	}
	return f, ""
}

// parseList keeps empty items ("a,,b" has three), as Kafka does, so validators see them.
func parseList(s string) []string {
	if s == "" {
		return []string{}
	}
	items := strings.Split(s, ",")
	for i, it := range items {
		items[i] = strings.TrimSpace(it)
	}
	return items
}

// formatValue is the inverse of parseValue, producing the text Kafka's
// ConfigDef.convertToString would: what DescribeConfigs shows as a value.
func formatValue(v any) string {
	switch x := v.(type) {
	case bool:
		return strconv.FormatBool(x)
	case int16:
		return strconv.FormatInt(int64(x), 10)
	case int32:
		return strconv.FormatInt(int64(x), 10)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return formatJavaDouble(x)
	case []string:
		return strings.Join(x, ",")
	case string:
		return x
	}
	return ""
}

// formatJavaDouble prints like Java's Double.toString, because admin tools and Kafka's
// documentation show doubles that way ("0.5", "1.0", "1.7976931348623157E308").
func formatJavaDouble(f float64) string {
	if math.IsInf(f, 0) {
		if f > 0 {
			return "Infinity"
		}
		return "-Infinity"
	}
	if a := math.Abs(f); a == 0 || (a >= 1e-3 && a < 1e7) {
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	mantissa, exp, _ := strings.Cut(strconv.FormatFloat(f, 'E', -1, 64), "E")
	if !strings.Contains(mantissa, ".") {
		mantissa += ".0"
	}
	e, _ := strconv.Atoi(exp)
	return mantissa + "E" + strconv.Itoa(e)
}

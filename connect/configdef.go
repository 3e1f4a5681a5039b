package connect

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// ConfigType is a config's type, with Kafka ConfigDef's names.
type ConfigType string

const (
	TypeBoolean  ConfigType = "BOOLEAN"
	TypeString   ConfigType = "STRING"
	TypeInt      ConfigType = "INT"
	TypeShort    ConfigType = "SHORT"
	TypeLong     ConfigType = "LONG"
	TypeDouble   ConfigType = "DOUBLE"
	TypeList     ConfigType = "LIST"
	TypeClass    ConfigType = "CLASS"
	TypePassword ConfigType = "PASSWORD"
)

// Importance and Width are shown to users by config/validate.
type Importance string
type Width string

const (
	High   Importance = "HIGH"
	Medium Importance = "MEDIUM"
	Low    Importance = "LOW"

	WidthNone   Width = "NONE"
	WidthShort  Width = "SHORT"
	WidthMedium Width = "MEDIUM"
	WidthLong   Width = "LONG"
)

// NoDefault marks a required config (Kafka's ConfigDef.NO_DEFAULT_VALUE).
var NoDefault = noDefault{}

type noDefault struct{}

// Validator checks a parsed value; the error's text follows "Invalid value
// X for configuration Y: " in the message users see.
type Validator interface {
	Validate(name string, value any) error
}

// ConfigKey declares one config.
type ConfigKey struct {
	Name          string
	Type          ConfigType
	Default       any // a parsed value, nil, or NoDefault
	Validator     Validator
	Importance    Importance
	Documentation string
	Group         string
	OrderInGroup  int
	Width         Width
	DisplayName   string
	Dependents    []string
	// Recommended lists the values to suggest (config/validate's
	// recommended_values); empty for none.
	Recommended []string
}

// Required reports whether the key has no default.
func (k ConfigKey) Required() bool { return k.Default == NoDefault }

// DefaultString is the default as Kafka shows it (nil when none or null).
func (k ConfigKey) DefaultString() *string {
	if k.Required() || k.Default == nil {
		return nil
	}
	s := FormatValue(k.Type, k.Default)
	return &s
}

// ConfigDef is a connector's declared configuration, in declaration order.
type ConfigDef struct {
	keys []ConfigKey
}

// NewConfigDef makes an empty definition.
func NewConfigDef() *ConfigDef { return &ConfigDef{} }

// Define adds a key; defining a name twice panics, as Kafka's does, since it
// is a mistake in code.
func (d *ConfigDef) Define(k ConfigKey) *ConfigDef {
	if _, dup := d.Key(k.Name); dup {
		panic(fmt.Sprintf("connect: config %s is defined twice", k.Name))
	}
	if k.Width == "" {
		k.Width = WidthNone
	}
	if k.DisplayName == "" {
		k.DisplayName = k.Name
	}
	if k.Importance == "" {
		k.Importance = Medium
	}
	if k.Default != NoDefault && k.Default != nil {
		v, err := normalizeDefault(k.Type, k.Default)
		if err != nil {
			panic(fmt.Sprintf("connect: invalid default for %s: Invalid value %v for configuration %s: %v", k.Name, k.Default, k.Name, err))
		}
		k.Default = v
		if err := checkDefault(k); err != nil {
			panic(err)
		}
	}
	d.keys = append(d.keys, k)
	return d
}

// normalizeDefault turns a default given in code into the parsed value of
// the key's type, as Kafka's ConfigKey does: a string is parsed, an int
// literal becomes the INT's int32 or the LONG's int64, any number a DOUBLE's
// float64. Without it, a DOUBLE default written as 1 would read as 0 through
// Config.Float, and a config's value would change type with whether it was
// given.
func normalizeDefault(t ConfigType, v any) (any, error) {
	if s, ok := v.(string); ok && t != TypeString && t != TypeClass {
		return ParseValue(t, s)
	}
	switch t {
	case TypeInt, TypeShort, TypeLong:
		return normalizeInteger(t, v)
	case TypeDouble:
		if f, ok := toFloat(v); ok {
			return f, nil
		}
		return nil, fmt.Errorf("Expected value to be a double, but it was a %T", v)
	case TypeBoolean:
		if _, ok := v.(bool); ok {
			return v, nil
		}
		return nil, fmt.Errorf("Expected value to be either true or false")
	case TypeString, TypeClass:
		if _, ok := v.(string); ok {
			return v, nil
		}
		return nil, fmt.Errorf("Expected value to be a string, but it was a %T", v)
	case TypePassword:
		if _, ok := v.(Password); ok {
			return v, nil
		}
		return nil, fmt.Errorf("Expected value to be a string, but it was a %T", v)
	case TypeList:
		if _, ok := v.([]string); ok {
			return v, nil
		}
		return nil, fmt.Errorf("Expected a comma separated list.")
	}
	return nil, fmt.Errorf("unknown config type %s", t)
}

func normalizeInteger(t ConfigType, v any) (any, error) {
	var n int64
	switch x := v.(type) {
	case int:
		n = int64(x)
	case int8:
		n = int64(x)
	case int16:
		n = int64(x)
	case int32:
		n = int64(x)
	case int64:
		n = x
	default:
		return nil, fmt.Errorf("Expected value to be a %s, but it was a %T", integerWords[t], v)
	}
	switch t {
	case TypeInt:
		if n < math.MinInt32 || n > math.MaxInt32 {
			return nil, fmt.Errorf("Not a number of type %s", t)
		}
		return int32(n), nil
	case TypeShort:
		if n < math.MinInt16 || n > math.MaxInt16 {
			return nil, fmt.Errorf("Not a number of type %s", t)
		}
		return int16(n), nil
	}
	return n, nil
}

var integerWords = map[ConfigType]string{TypeInt: "32-bit integer", TypeShort: "16-bit integer (short)", TypeLong: "64-bit integer (long)"}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case int:
		return float64(x), true
	case int8:
		return float64(x), true
	case int16:
		return float64(x), true
	case int32:
		return float64(x), true
	case int64:
		return float64(x), true
	}
	return 0, false
}

func checkDefault(k ConfigKey) error {
	if k.Validator == nil {
		return nil
	}
	if err := k.Validator.Validate(k.Name, k.Default); err != nil {
		return fmt.Errorf("connect: invalid default for %s: %w", k.Name, err)
	}
	return nil
}

// Keys are the definition's keys in order.
func (d *ConfigDef) Keys() []ConfigKey { return append([]ConfigKey(nil), d.keys...) }

// Key finds a key by name.
func (d *ConfigDef) Key(name string) (ConfigKey, bool) {
	for _, k := range d.keys {
		if k.Name == name {
			return k, true
		}
	}
	return ConfigKey{}, false
}

// Merge returns a definition with d's keys then o's (o's duplicates dropped).
func (d *ConfigDef) Merge(o *ConfigDef) *ConfigDef {
	out := &ConfigDef{keys: append([]ConfigKey(nil), d.keys...)}
	for _, k := range o.keys {
		if _, dup := out.Key(k.Name); !dup {
			out.keys = append(out.keys, k)
		}
	}
	return out
}

// ConfigValue is the outcome of validating one config (config/validate's
// "value" object).
type ConfigValue struct {
	Name              string
	Value             any
	RecommendedValues []string
	Errors            []string
	Visible           bool
}

// Parse reads props into typed values by the definition (defaults filled
// in), failing on the first missing, unparsable or invalid config.
// Properties the definition does not name pass through as strings.
func (d *ConfigDef) Parse(props map[string]string) (Config, error) {
	out := Config{values: map[string]any{}, raw: props}
	for _, k := range d.keys {
		v, err := k.parse(props)
		if err != nil {
			return Config{}, err
		}
		out.values[k.Name] = v
	}
	return out, nil
}

// Validate checks every key and reports each one's value and errors, in
// the definition's order (Kafka's ConfigDef.validate).
func (d *ConfigDef) Validate(props map[string]string) []ConfigValue {
	out := make([]ConfigValue, 0, len(d.keys))
	for _, k := range d.keys {
		cv := ConfigValue{Name: k.Name, Visible: true, RecommendedValues: k.Recommended}
		if raw, ok := props[k.Name]; ok {
			cv.Value = raw
		} else if s := k.DefaultString(); s != nil {
			cv.Value = *s
		}
		if s, ok := cv.Value.(string); ok && k.Type == TypePassword {
			// config/validate answers with the value: a password's shows
			// as [hidden], as in Kafka, never as given.
			cv.Value = Password(s)
		}
		if _, err := k.parse(props); err != nil {
			cv.Errors = append(cv.Errors, err.Error())
			// As Kafka's ConfigDef.validate: a value that does not parse
			// leaves null, which the validator then sees too.
			if raw, given := props[k.Name]; given && k.Validator != nil {
				if _, perr := ParseValue(k.Type, raw); perr != nil {
					if verr := k.Validator.Validate(k.Name, nil); verr != nil {
						cv.Errors = append(cv.Errors, fmt.Sprintf("Invalid value null for configuration %s: %s", k.Name, verr.Error()))
					}
				}
			}
		}
		out = append(out, cv)
	}
	return out
}

func (k ConfigKey) parse(props map[string]string) (any, error) {
	raw, ok := props[k.Name]
	if !ok {
		if k.Required() {
			return nil, fmt.Errorf("Missing required configuration \"%s\" which has no default value.", k.Name)
		}
		return k.Default, nil
	}
	v, err := ParseValue(k.Type, raw)
	if err != nil {
		return nil, fmt.Errorf("Invalid value %s for configuration %s: %s", raw, k.Name, err.Error())
	}
	if k.Validator != nil {
		if err := k.Validator.Validate(k.Name, v); err != nil {
			// The parsed value, as Kafka's ConfigException shows it: a
			// password stays [hidden] in the message users and logs see.
			return nil, fmt.Errorf("Invalid value %s for configuration %s: %s", javaString(v), k.Name, err.Error())
		}
	}
	return v, nil
}

// javaString renders a parsed value as Java's toString does in Kafka's
// messages: a list as [a, b], a password hidden, a double as Double.toString.
func javaString(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case []string:
		return "[" + strings.Join(x, ", ") + "]"
	case float64:
		return javaDouble(x)
	}
	return fmt.Sprint(v)
}

// javaDouble is Java's Double.toString: plain notation with at least one
// decimal between 10^-3 and 10^7, computerized scientific notation outside.
func javaDouble(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	if a := math.Abs(f); a == 0 || (a >= 1e-3 && a < 1e7) {
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		if f == 0 && math.Signbit(f) {
			return "-0.0"
		}
		return s
	}
	mant, exp, _ := strings.Cut(strconv.FormatFloat(f, 'e', -1, 64), "e")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	n, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(n)
}

// ParseValue reads a config string as a Kafka config type: BOOLEAN true or
// false, INT/SHORT/LONG decimal, DOUBLE, LIST comma-separated and trimmed,
// STRING/CLASS/PASSWORD trimmed text (passwords as given).
func ParseValue(t ConfigType, raw string) (any, error) {
	s := strings.TrimSpace(raw)
	switch t {
	case TypeBoolean:
		switch strings.ToLower(s) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
		return nil, fmt.Errorf("Expected value to be either true or false")
	case TypeInt, TypeShort, TypeLong:
		bits := map[ConfigType]int{TypeInt: 32, TypeShort: 16, TypeLong: 64}[t]
		n, err := strconv.ParseInt(s, 10, bits)
		if err != nil {
			return nil, fmt.Errorf("Not a number of type %s", t)
		}
		switch t {
		case TypeInt:
			return int32(n), nil
		case TypeShort:
			return int16(n), nil
		}
		return n, nil
	case TypeDouble:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(f) {
			return nil, fmt.Errorf("Not a number of type DOUBLE")
		}
		return f, nil
	case TypeList:
		if s == "" {
			return []string{}, nil
		}
		parts := strings.Split(s, ",")
		for i := range parts {
			parts[i] = strings.TrimSpace(parts[i])
		}
		return parts, nil
	case TypePassword:
		return Password(raw), nil
	case TypeString, TypeClass:
		return s, nil
	}
	return nil, fmt.Errorf("unknown config type %s", t)
}

// FormatValue renders a parsed value as Kafka's ConfigDef.convertToString.
func FormatValue(t ConfigType, v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case []string:
		return strings.Join(x, ",")
	case Password:
		return "[hidden]"
	case float64:
		if t == TypeDouble {
			return javaDouble(x)
		}
	}
	return fmt.Sprint(v)
}

// Password is a secret config value; it prints as [hidden].
type Password string

func (p Password) String() string { return "[hidden]" }

// Value is the secret itself.
func (p Password) Value() string { return string(p) }

// Config is a parsed configuration.
type Config struct {
	values map[string]any
	raw    map[string]string
}

// Raw is the config as given.
func (c Config) Raw() map[string]string { return c.raw }

// Get is a parsed value (nil when undefined).
func (c Config) Get(name string) any { return c.values[name] }

// String is a STRING or CLASS config ("" when null).
func (c Config) String(name string) string {
	s, _ := c.values[name].(string)
	return s
}

// Int is an INT, SHORT or LONG config.
func (c Config) Int(name string) int64 {
	switch x := c.values[name].(type) {
	case int32:
		return int64(x)
	case int16:
		return int64(x)
	case int64:
		return x
	case int:
		return int64(x)
	}
	return 0
}

// Bool is a BOOLEAN config.
func (c Config) Bool(name string) bool { b, _ := c.values[name].(bool); return b }

// Float is a DOUBLE config.
func (c Config) Float(name string) float64 { f, _ := c.values[name].(float64); return f }

// List is a LIST config.
func (c Config) List(name string) []string { l, _ := c.values[name].([]string); return l }

// Password is a PASSWORD config's secret.
func (c Config) Password(name string) string { p, _ := c.values[name].(Password); return string(p) }

// Range accepts numbers within [Min, Max]; nil bounds are open.
type Range struct{ Min, Max *float64 }

// AtLeast is Kafka's ConfigDef.Range.atLeast.
func AtLeast(min float64) Range { return Range{Min: &min} }

// Between is Kafka's ConfigDef.Range.between.
func Between(min, max float64) Range { return Range{Min: &min, Max: &max} }

func (r Range) Validate(name string, v any) error {
	if v == nil {
		return fmt.Errorf("Value must be non-null")
	}
	var n float64
	switch x := v.(type) {
	case int16:
		n = float64(x)
	case int32:
		n = float64(x)
	case int64:
		n = float64(x)
	case int:
		n = float64(x)
	case float64:
		n = x
	default:
		return fmt.Errorf("Value must be a number")
	}
	if r.Min != nil && n < *r.Min {
		return fmt.Errorf("Value must be at least %s", trimFloat(*r.Min))
	}
	if r.Max != nil && n > *r.Max {
		return fmt.Errorf("Value must be no more than %s", trimFloat(*r.Max))
	}
	return nil
}

func trimFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// OneOf accepts the listed strings (Kafka's ValidString; CaseInsensitive
// for ConfigDef.CaseInsensitiveValidString).
type OneOf struct {
	Values          []string
	CaseInsensitive bool
}

func (o OneOf) Validate(name string, v any) error {
	s, _ := v.(string)
	for _, x := range o.Values {
		if x == s || (o.CaseInsensitive && strings.EqualFold(x, s)) {
			return nil
		}
	}
	return fmt.Errorf("String must be one of: %s", strings.Join(o.Values, ", "))
}

// NonEmptyString refuses "" (Kafka's ConfigDef.NonEmptyString); null
// passes, as in Kafka, so an optional config may default to null.
type NonEmptyString struct{}

func (NonEmptyString) Validate(name string, v any) error {
	if s, ok := v.(string); ok && s == "" {
		return fmt.Errorf("String must be non-empty")
	}
	return nil
}

// MatchesRegexp accepts strings that are valid regular expressions.
type ValidRegexp struct{}

func (ValidRegexp) Validate(name string, v any) error {
	s, _ := v.(string)
	if _, err := regexp.Compile(s); err != nil {
		return fmt.Errorf("not a valid regular expression: %v", err)
	}
	return nil
}

// ValidatorFunc adapts a function.
type ValidatorFunc func(name string, v any) error

func (f ValidatorFunc) Validate(name string, v any) error { return f(name, v) }

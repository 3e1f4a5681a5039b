package convert

import (
	"encoding/binary"
	"fmt"
	"math"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/samsa-io/samsa/connect"
)

// Class names of the converters in this file, Kafka's.
const (
	StringConverterClass    = "org.apache.kafka.connect.storage.StringConverter"
	ByteArrayConverterClass = "org.apache.kafka.connect.converters.ByteArrayConverter"
	IntegerConverterClass   = "org.apache.kafka.connect.converters.IntegerConverter"
	LongConverterClass      = "org.apache.kafka.connect.converters.LongConverter"
	ShortConverterClass     = "org.apache.kafka.connect.converters.ShortConverter"
	FloatConverterClass     = "org.apache.kafka.connect.converters.FloatConverter"
	DoubleConverterClass    = "org.apache.kafka.connect.converters.DoubleConverter"
	BooleanConverterClass   = "org.apache.kafka.connect.converters.BooleanConverter"
)

// ConverterEncodingConfig is StringConverter's converter.encoding.
const ConverterEncodingConfig = "converter.encoding"

// StringConverterConfigDef is StringConverter's ConfigDef.
func StringConverterConfigDef() *connect.ConfigDef {
	return connect.NewConfigDef().Define(connect.ConfigKey{Name: ConverterEncodingConfig, Type: connect.TypeString, Default: "UTF-8",
		Importance: connect.High, Documentation: "The name of the Java character set to use for encoding strings as byte arrays.",
		Group: "Converter", OrderInGroup: 0, Width: connect.WidthMedium, DisplayName: "Character encoding"})
}

// emptyConfigDef is the ConfigDef of converters with no configs.
func emptyConfigDef() *connect.ConfigDef { return connect.NewConfigDef() }

// charset is one of the character sets StringConverter can use: Go's
// standard library has UTF-8, and ISO-8859-1 and US-ASCII are a byte per
// character; others are refused when configured.
type charset int

const (
	utf8Charset charset = iota
	latin1Charset
	asciiCharset
)

func parseCharset(name string) (charset, error) {
	switch strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(name), "_", "-")) {
	case "UTF-8", "UTF8":
		return utf8Charset, nil
	case "ISO-8859-1", "ISO8859-1", "LATIN1", "ISO-LATIN-1":
		return latin1Charset, nil
	case "US-ASCII", "ASCII":
		return asciiCharset, nil
	}
	return 0, fmt.Errorf("%w: Invalid value %s for configuration %s: unsupported character set (supported: UTF-8, ISO-8859-1, US-ASCII)",
		ErrConfig, name, ConverterEncodingConfig)
}

// encode writes s in the charset; a character it cannot hold becomes '?',
// as Java's String.getBytes does.
func (cs charset) encode(s string) []byte {
	if cs == utf8Charset {
		return []byte(s)
	}
	limit := rune(0xff)
	if cs == asciiCharset {
		limit = 0x7f
	}
	out := make([]byte, 0, len(s))
	for _, r := range s {
		if r > limit {
			r = '?'
		}
		out = append(out, byte(r))
	}
	return out
}

// decode reads bytes in the charset; malformed input becomes U+FFFD, as
// Java's new String(bytes, charset) does.
func (cs charset) decode(b []byte) string {
	switch cs {
	case latin1Charset:
		runes := make([]rune, len(b))
		for i, c := range b {
			runes[i] = rune(c)
		}
		return string(runes)
	case asciiCharset:
		runes := make([]rune, len(b))
		for i, c := range b {
			runes[i] = rune(c)
			if c > 0x7f {
				runes[i] = utf8.RuneError
			}
		}
		return string(runes)
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// StringConverter is Kafka's StringConverter: a value as its string form
// in converter.encoding; read back as an optional STRING. A non-string
// value is written as Kafka's Values.convertToString writes it (a Struct as
// Struct{...}, as Java's toString).
type StringConverter struct{ cs charset }

var (
	_ connect.Converter       = (*StringConverter)(nil)
	_ connect.HeaderConverter = (*StringHeaderConverter)(nil)
)

// Configure reads converter.encoding.
func (c *StringConverter) Configure(props map[string]string, _ bool) error {
	cfg, err := parseConfig(StringConverterClass, StringConverterConfigDef(), props)
	if err != nil {
		return err
	}
	c.cs, err = parseCharset(cfg.String(ConverterEncodingConfig))
	return err
}

// FromConnectData writes the value's string form.
func (c *StringConverter) FromConnectData(_ string, _ connect.Headers, schema *connect.Schema, value any) ([]byte, error) {
	if value == nil {
		return nil, nil
	}
	s, ok := value.(string)
	if !ok {
		var err error
		if st, isStruct := value.(*connect.Struct); isStruct {
			s = st.String()
		} else if s, err = valuesString(value, false); err != nil {
			return nil, dataErrorf("Failed to serialize to a string: %v", err)
		}
	}
	return c.cs.encode(s), nil
}

// ToConnectData reads an optional STRING (nil for nil data).
func (c *StringConverter) ToConnectData(_ string, _ connect.Headers, data []byte) (*connect.Schema, any, error) {
	if data == nil {
		return connect.OptionalString, nil, nil
	}
	return connect.OptionalString, c.cs.decode(data), nil
}

// StringHeaderConverter is StringConverter as a header converter.
type StringHeaderConverter struct{ StringConverter }

// Configure reads converter.encoding.
func (h *StringHeaderConverter) Configure(props map[string]string) error {
	return h.StringConverter.Configure(props, false)
}

// FromConnectHeader writes as FromConnectData.
func (h *StringHeaderConverter) FromConnectHeader(topic, _ string, schema *connect.Schema, value any) ([]byte, error) {
	return h.FromConnectData(topic, nil, schema, value)
}

// ToConnectHeader reads as ToConnectData.
func (h *StringHeaderConverter) ToConnectHeader(topic, _ string, data []byte) (*connect.Schema, any, error) {
	return h.ToConnectData(topic, nil, data)
}

// ByteArrayConverter is Kafka's ByteArrayConverter: the bytes as they are,
// read as an optional BYTES. It is a header converter too.
type ByteArrayConverter struct{}

var (
	_ connect.Converter       = ByteArrayConverter{}
	_ connect.HeaderConverter = ByteArrayHeaderConverter{}
)

// Configure takes no configs.
func (ByteArrayConverter) Configure(props map[string]string, _ bool) error {
	_, err := parseConfig(ByteArrayConverterClass, emptyConfigDef(), props)
	return err
}

// FromConnectData passes bytes through; a schema must be BYTES.
func (ByteArrayConverter) FromConnectData(_ string, _ connect.Headers, schema *connect.Schema, value any) ([]byte, error) {
	if schema != nil && schema.Type != connect.Bytes {
		return nil, dataErrorf("Invalid schema type for ByteArrayConverter: %s", schema.Type)
	}
	if value == nil {
		return nil, nil
	}
	b, ok := value.([]byte)
	if !ok {
		return nil, dataErrorf("ByteArrayConverter is not compatible with objects of type %T", value)
	}
	return b, nil
}

// ToConnectData answers the bytes as an optional BYTES.
func (ByteArrayConverter) ToConnectData(_ string, _ connect.Headers, data []byte) (*connect.Schema, any, error) {
	if data == nil {
		return connect.OptionalBytes, nil, nil
	}
	return connect.OptionalBytes, data, nil
}

// ByteArrayHeaderConverter is ByteArrayConverter as a header converter.
type ByteArrayHeaderConverter struct{ ByteArrayConverter }

// Configure takes no configs.
func (h ByteArrayHeaderConverter) Configure(props map[string]string) error {
	return h.ByteArrayConverter.Configure(props, false)
}

// FromConnectHeader writes as FromConnectData.
func (h ByteArrayHeaderConverter) FromConnectHeader(topic, _ string, schema *connect.Schema, value any) ([]byte, error) {
	return h.FromConnectData(topic, nil, schema, value)
}

// ToConnectHeader reads as ToConnectData.
func (h ByteArrayHeaderConverter) ToConnectHeader(topic, _ string, data []byte) (*connect.Schema, any, error) {
	return h.ToConnectData(topic, nil, data)
}

// NumberConverter is one of Kafka's number converters (IntegerConverter,
// LongConverter, ShortConverter, FloatConverter, DoubleConverter) and
// BooleanConverter: the value in Kafka's serializer's fixed-width
// big-endian form, read back with the optional schema of its type.
type NumberConverter struct {
	class    string
	typeName string // Kafka's name in its messages: "integer", "long", ...
	schema   *connect.Schema
	size     int
}

var numberConverters = map[string]NumberConverter{
	IntegerConverterClass: {IntegerConverterClass, "integer", connect.OptionalInt32, 4},
	LongConverterClass:    {LongConverterClass, "long", connect.OptionalInt64, 8},
	ShortConverterClass:   {ShortConverterClass, "short", connect.OptionalInt16, 2},
	FloatConverterClass:   {FloatConverterClass, "float", connect.OptionalFloat32, 4},
	DoubleConverterClass:  {DoubleConverterClass, "double", connect.OptionalFloat64, 8},
	BooleanConverterClass: {BooleanConverterClass, "boolean", connect.OptionalBoolean, 1},
}

var (
	_ connect.Converter       = (*NumberConverter)(nil)
	_ connect.HeaderConverter = (*NumberHeaderConverter)(nil)
)

// Configure takes no configs.
func (c *NumberConverter) Configure(props map[string]string, _ bool) error {
	_, err := parseConfig(c.class, emptyConfigDef(), props)
	return err
}

// FromConnectData writes the number; its Go type must be the converter's
// (int32 for IntegerConverter, ...).
func (c *NumberConverter) FromConnectData(_ string, _ connect.Headers, _ *connect.Schema, value any) ([]byte, error) {
	if value == nil {
		return nil, nil
	}
	b := make([]byte, c.size)
	ok := true
	switch c.schema.Type {
	case connect.Int32:
		var v int32
		v, ok = value.(int32)
		binary.BigEndian.PutUint32(b, uint32(v))
	case connect.Int64:
		var v int64
		v, ok = value.(int64)
		binary.BigEndian.PutUint64(b, uint64(v))
	case connect.Int16:
		var v int16
		v, ok = value.(int16)
		binary.BigEndian.PutUint16(b, uint16(v))
	case connect.Float32:
		var v float32
		v, ok = value.(float32)
		binary.BigEndian.PutUint32(b, math.Float32bits(v))
	case connect.Float64:
		var v float64
		v, ok = value.(float64)
		binary.BigEndian.PutUint64(b, math.Float64bits(v))
	case connect.Boolean:
		var v bool
		v, ok = value.(bool)
		if v {
			b[0] = 1
		}
	}
	if !ok {
		return nil, dataErrorf("Failed to serialize to %s (was %T)", c.typeName, value)
	}
	return b, nil
}

// ToConnectData reads the number; data of the wrong size is an error.
func (c *NumberConverter) ToConnectData(_ string, _ connect.Headers, data []byte) (*connect.Schema, any, error) {
	if data == nil {
		return c.schema, nil, nil
	}
	if len(data) != c.size {
		return nil, nil, dataErrorf("Failed to deserialize %s: Size of data received by the deserializer is not %d", c.typeName, c.size)
	}
	switch c.schema.Type {
	case connect.Int32:
		return c.schema, int32(binary.BigEndian.Uint32(data)), nil
	case connect.Int64:
		return c.schema, int64(binary.BigEndian.Uint64(data)), nil
	case connect.Int16:
		return c.schema, int16(binary.BigEndian.Uint16(data)), nil
	case connect.Float32:
		return c.schema, math.Float32frombits(binary.BigEndian.Uint32(data)), nil
	case connect.Float64:
		return c.schema, math.Float64frombits(binary.BigEndian.Uint64(data)), nil
	}
	return c.schema, data[0] != 0, nil
}

// NumberHeaderConverter is a NumberConverter as a header converter.
type NumberHeaderConverter struct{ NumberConverter }

// Configure takes no configs.
func (h *NumberHeaderConverter) Configure(props map[string]string) error {
	return h.NumberConverter.Configure(props, false)
}

// FromConnectHeader writes as FromConnectData.
func (h *NumberHeaderConverter) FromConnectHeader(topic, _ string, schema *connect.Schema, value any) ([]byte, error) {
	return h.FromConnectData(topic, nil, schema, value)
}

// ToConnectHeader reads as ToConnectData.
func (h *NumberHeaderConverter) ToConnectHeader(topic, _ string, data []byte) (*connect.Schema, any, error) {
	return h.ToConnectData(topic, nil, data)
}

func sortKV[T any](s []T, less func(a, b T) bool) {
	sort.Slice(s, func(i, j int) bool { return less(s[i], s[j]) })
}

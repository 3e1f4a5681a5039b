package convert

import (
	"strings"

	"github.com/samsa-io/samsa/connect"
)

// JSONConverterClass is Kafka's JsonConverter, a converter and a header
// converter.
const JSONConverterClass = "org.apache.kafka.connect.json.JsonConverter"

// JsonConverter's configs, with Kafka's names and defaults.
const (
	SchemasEnableConfig          = "schemas.enable"
	SchemasCacheSizeConfig       = "schemas.cache.size"
	DecimalFormatConfig          = "decimal.format"
	ReplaceNullWithDefaultConfig = "replace.null.with.default"
)

// Decimal formats (decimal.format).
const (
	DecimalFormatBase64  = "BASE64"
	DecimalFormatNumeric = "NUMERIC"
)

// JSONConverterConfigDef is JsonConverter's ConfigDef (Kafka's
// JsonConverterConfig), for /connector-plugins/{plugin}/config.
func JSONConverterConfigDef() *connect.ConfigDef {
	const group = "Schemas"
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: SchemasEnableConfig, Type: connect.TypeBoolean, Default: true, Importance: connect.High,
			Documentation: "Include schemas within each of the serialized values and keys.", Group: group, OrderInGroup: 0,
			Width: connect.WidthMedium, DisplayName: "Enable Schemas"}).
		Define(connect.ConfigKey{Name: SchemasCacheSizeConfig, Type: connect.TypeInt, Default: int32(1000), Importance: connect.High,
			Validator:     connect.AtLeast(0),
			Documentation: "The maximum number of schemas that can be cached in this converter instance.", Group: group, OrderInGroup: 1,
			Width: connect.WidthMedium, DisplayName: "Schema Cache Size"}).
		Define(connect.ConfigKey{Name: DecimalFormatConfig, Type: connect.TypeString, Default: DecimalFormatBase64, Importance: connect.Low,
			Validator:     caseInsensitiveOneOf{DecimalFormatBase64, DecimalFormatNumeric},
			Documentation: "Controls which format this converter will serialize decimals in. This value is case insensitive and can be either 'BASE64' (default) or 'NUMERIC'",
			Group:         group, OrderInGroup: 2, Width: connect.WidthMedium, DisplayName: "Decimal Format"}).
		Define(connect.ConfigKey{Name: ReplaceNullWithDefaultConfig, Type: connect.TypeBoolean, Default: true, Importance: connect.Low,
			Documentation: "Whether to replace fields that have a default value and that are null to the default value. When set to true, the default value is used, otherwise null is used.",
			Group:         group, OrderInGroup: 3, Width: connect.WidthMedium, DisplayName: "Replace null with default"})
}

// JSONConverter is Kafka's JsonConverter: Connect data as JSON, by default
// inside the envelope {"schema":...,"payload":...} that carries the
// schema with every record (schemas.enable), else plain JSON. It is both
// a Converter and a HeaderConverter; configure it before use. It is safe
// for concurrent use once configured.
type JSONConverter struct {
	schemasEnable  bool
	decimalNumeric bool
	replaceNull    bool
	cacheSize      int
	// mapEntriesAsObjects writes a map with non-string keys as an array
	// of {"key":k,"value":v} objects, as JsonSchemaConverter does, not of
	// [k,v] pairs.
	mapEntriesAsObjects bool
	fromConnectJSON     *lru[*connect.Schema, []byte] // schema -> its JSON
	toConnectSchema     *lru[string, *connect.Schema] // schema JSON text -> schema
}

var _ connect.Converter = (*JSONConverter)(nil)

// Configure reads JsonConverter's configs; isKey does not change how it
// converts.
func (c *JSONConverter) Configure(props map[string]string, _ bool) error {
	cfg, err := parseConfig(JSONConverterClass, JSONConverterConfigDef(), props)
	if err != nil {
		return err
	}
	c.schemasEnable = cfg.Bool(SchemasEnableConfig)
	c.decimalNumeric = strings.EqualFold(cfg.String(DecimalFormatConfig), DecimalFormatNumeric)
	c.replaceNull = cfg.Bool(ReplaceNullWithDefaultConfig)
	c.cacheSize = int(cfg.Int(SchemasCacheSizeConfig))
	c.fromConnectJSON = newLRU[*connect.Schema, []byte](c.cacheSize)
	c.toConnectSchema = newLRU[string, *connect.Schema](c.cacheSize)
	return nil
}

// JSONHeaderConverter is JsonConverter as a header converter: each header
// value is written and read as a record's value is.
type JSONHeaderConverter struct{ JSONConverter }

var _ connect.HeaderConverter = (*JSONHeaderConverter)(nil)

// Configure reads JsonConverter's configs.
func (h *JSONHeaderConverter) Configure(props map[string]string) error {
	return h.JSONConverter.Configure(props, false)
}

// FromConnectHeader writes a header value as FromConnectData writes a record's.
func (h *JSONHeaderConverter) FromConnectHeader(topic, _ string, schema *connect.Schema, value any) ([]byte, error) {
	return h.FromConnectData(topic, nil, schema, value)
}

// ToConnectHeader reads a header value as ToConnectData reads a record's.
func (h *JSONHeaderConverter) ToConnectHeader(topic, _ string, data []byte) (*connect.Schema, any, error) {
	return h.ToConnectData(topic, nil, data)
}

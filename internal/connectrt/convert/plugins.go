package convert

import (
	"fmt"
	"strings"

	"github.com/samsa-io/samsa/connect"
	"github.com/samsa-io/samsa/internal/version"
)

// Plugin is a converter or header converter the runtime can make, as
// /connector-plugins?connectorsOnly=false lists it (one entry per type:
// JsonConverter is listed as a converter and as a header converter, as
// Kafka lists it).
type Plugin struct {
	Class string
	// Aliases are the simple class name and the name without
	// "Converter" (or "HeaderConverter"), as Kafka accepts them.
	Aliases []string
	Type    connect.PluginType
	Version string
	// ConfigDef is the plugin's configuration, for
	// /connector-plugins/{plugin}/config.
	ConfigDef func() *connect.ConfigDef
}

// Names are the class and its aliases.
func (p Plugin) Names() []string { return append([]string{p.Class}, p.Aliases...) }

// converterFactories make each converter class.
var converterFactories = map[string]func() connect.Converter{
	JSONConverterClass:      func() connect.Converter { return &JSONConverter{} },
	StringConverterClass:    func() connect.Converter { return &StringConverter{} },
	ByteArrayConverterClass: func() connect.Converter { return ByteArrayConverter{} },
	AvroConverterClass:      func() connect.Converter { return newRegistryConverter(newAvroFormat()) },
	JSONSchemaConverterClass: func() connect.Converter {
		return newRegistryConverter(newJSONSchemaFormat())
	},
	ProtobufConverterClass: func() connect.Converter { return newRegistryConverter(newProtobufFormat()) },
}

var headerFactories = map[string]func() connect.HeaderConverter{
	SimpleHeaderConverterClass: func() connect.HeaderConverter { return SimpleHeaderConverter{} },
	JSONConverterClass:         func() connect.HeaderConverter { return &JSONHeaderConverter{} },
	StringConverterClass:       func() connect.HeaderConverter { return &StringHeaderConverter{} },
	ByteArrayConverterClass:    func() connect.HeaderConverter { return ByteArrayHeaderConverter{} },
}

func init() {
	for class, nc := range numberConverters {
		converterFactories[class] = func() connect.Converter { c := nc; return &c }
		headerFactories[class] = func() connect.HeaderConverter { return &NumberHeaderConverter{nc} }
	}
}

var configDefs = map[string]func() *connect.ConfigDef{
	JSONConverterClass:       JSONConverterConfigDef,
	StringConverterClass:     StringConverterConfigDef,
	AvroConverterClass:       RegistryConverterConfigDef,
	JSONSchemaConverterClass: RegistryConverterConfigDef,
	ProtobufConverterClass:   RegistryConverterConfigDef,
}

// Plugins lists every converter and header converter, by class name.
func Plugins() []Plugin {
	var out []Plugin
	for _, class := range sortedStrings(converterFactories) {
		out = append(out, newPlugin(class, connect.PluginConverter))
	}
	for _, class := range sortedStrings(headerFactories) {
		out = append(out, newPlugin(class, connect.PluginHeaderConverter))
	}
	return out
}

func newPlugin(class string, t connect.PluginType) Plugin {
	def := configDefs[class]
	if def == nil {
		def = emptyConfigDef
	}
	return Plugin{Class: class, Aliases: aliases(class, t), Type: t, Version: version.String(), ConfigDef: def}
}

// aliases are Kafka's PluginUtils simple and pruned names.
func aliases(class string, t connect.PluginType) []string {
	simple := class[strings.LastIndexByte(class, '.')+1:]
	suffix := "Converter"
	if t == connect.PluginHeaderConverter {
		suffix = "HeaderConverter"
	}
	out := []string{simple}
	if pruned, ok := strings.CutSuffix(simple, suffix); ok && pruned != "" {
		out = append(out, pruned)
	}
	return out
}

// resolve finds the class a name (class or alias) stands for.
func resolve[F any](name string, t connect.PluginType, factories map[string]F) (F, bool) {
	name = strings.TrimSpace(name)
	if f, ok := factories[name]; ok {
		return f, true
	}
	for class, f := range factories {
		for _, a := range aliases(class, t) {
			if a == name {
				return f, true
			}
		}
	}
	var zero F
	return zero, false
}

// New makes the converter a key.converter or value.converter names (class
// or alias), not yet configured.
func New(class string) (connect.Converter, error) {
	f, ok := resolve(class, connect.PluginConverter, converterFactories)
	if !ok {
		return nil, fmt.Errorf("%w: unknown converter class %q (known: %s)", ErrConfig, class, strings.Join(sortedStrings(converterFactories), ", "))
	}
	return f(), nil
}

// NewHeader makes the header converter a header.converter names.
func NewHeader(class string) (connect.HeaderConverter, error) {
	f, ok := resolve(class, connect.PluginHeaderConverter, headerFactories)
	if !ok {
		return nil, fmt.Errorf("%w: unknown header converter class %q (known: %s)", ErrConfig, class, strings.Join(sortedStrings(headerFactories), ", "))
	}
	return f(), nil
}

// ConfigDef is the configuration of a converter or header converter
// named by class or alias.
func ConfigDef(class string) (*connect.ConfigDef, error) {
	for _, p := range Plugins() {
		for _, n := range p.Names() {
			if n == strings.TrimSpace(class) {
				return p.ConfigDef(), nil
			}
		}
	}
	return nil, fmt.Errorf("%w: unknown converter class %q", ErrConfig, class)
}

package convert

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/samsa-io/samsa/connect"
)

// ErrConfig marks a converter configuration that is refused: a bad value,
// or a property the converter does not know (which Kafka would ignore; a
// config that silently does nothing is a config the user thinks is in
// force, so it is refused here with the list of what is known).
var ErrConfig = errors.New("convert: invalid converter configuration")

// ConverterTypeConfig is the property the worker adds to say which side a
// converter serves (Kafka's converter.type: key, value or header).
const ConverterTypeConfig = "converter.type"

// parseConfig parses props by def after refusing the properties def does
// not name; converter.type is known to every converter.
func parseConfig(class string, def *connect.ConfigDef, props map[string]string) (connect.Config, error) {
	var unknown []string
	for k := range props {
		if _, ok := def.Key(k); !ok && k != ConverterTypeConfig {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		known := []string{}
		for _, k := range def.Keys() {
			known = append(known, k.Name)
		}
		return connect.Config{}, fmt.Errorf("%w: %s does not know the configuration(s) %s (it knows %s)",
			ErrConfig, class, strings.Join(unknown, ", "), strings.Join(append(known, ConverterTypeConfig), ", "))
	}
	if t, ok := props[ConverterTypeConfig]; ok {
		switch strings.ToLower(strings.TrimSpace(t)) {
		case "key", "value", "header":
		default:
			return connect.Config{}, fmt.Errorf("%w: Invalid value %s for configuration %s: String must be one of: key, value, header", ErrConfig, t, ConverterTypeConfig)
		}
	}
	cfg, err := def.Parse(props)
	if err != nil {
		return connect.Config{}, fmt.Errorf("%w: %s: %w", ErrConfig, class, err)
	}
	return cfg, nil
}

// caseInsensitiveOneOf accepts one of the values in any case, as Kafka's
// ConfigDef.CaseInsensitiveValidString.
type caseInsensitiveOneOf []string

func (o caseInsensitiveOneOf) Validate(_ string, v any) error {
	s, _ := v.(string)
	for _, ok := range o {
		if strings.EqualFold(s, ok) {
			return nil
		}
	}
	return fmt.Errorf("String must be one of (case insensitive): %s", strings.Join(o, ", "))
}

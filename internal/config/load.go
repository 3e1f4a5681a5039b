package config

import (
	"fmt"
	"os"

	"github.com/magiconair/properties"
)

// LoadBrokerProperties reads a server.properties file, applies overrides (from command-line
// flags; they win over the file) and returns the validated broker values, all with source
// STATIC_BROKER_CONFIG. Every name must be a broker config and every value valid; the error
// names each bad one.
//
// The file is read as Java properties (key=value, key: value, # and ! comments, line
// continuations, \uXXXX escapes) in UTF-8. ${...} is left as written: Kafka does not expand
// variables in server.properties, and a JAAS config or password may contain "${".
func LoadBrokerProperties(path string, overrides map[string]string) (Values, error) {
	raw, err := readProperties(path)
	if err != nil {
		return Values{}, err
	}
	for k, v := range overrides {
		raw[k] = v
	}
	v, err := Parse(Broker, raw)
	if err != nil {
		return Values{}, fmt.Errorf("config: load %s: %w", path, err)
	}
	return v, nil
}

func readProperties(path string) (map[string]string, error) {
	buf, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: read %s: %w", path, err)
	}
	loader := properties.Loader{Encoding: properties.UTF8, DisableExpansion: true}
	p, err := loader.LoadBytes(buf)
	if err != nil {
		return nil, fmt.Errorf("config: parse %s: %w", path, err)
	}
	return p.Map(), nil
}

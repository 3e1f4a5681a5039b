package connectrt

import (
	"fmt"
	"slices"
	"strings"

	"github.com/samsa-io/samsa/connect"
	"github.com/samsa-io/samsa/internal/connectrt/api"
)

// Chain is a connector's transforms (transforms=..., predicates=...).
type Chain interface {
	Apply(r connect.Record) (connect.Record, bool, error)
	Close() error
}

// Plugins is what a worker can run: connectors, and the factories of
// converters and transform chains (internal/connectrt/convert and
// /transforms, wired by the caller so this package stays their user, not
// their owner).
type Plugins struct {
	Connectors []connect.Plugin
	// NewConverter and NewHeaderConverter make a converter by class name or alias.
	NewConverter       func(class string) (connect.Converter, error)
	NewHeaderConverter func(class string) (connect.HeaderConverter, error)
	// NewChain reads a connector config's transforms and predicates.
	NewChain func(props map[string]string) (Chain, error)
	// ChainConfig is the config/validate definition of a config's
	// transforms and predicates (Kafka's enriched ConnectorConfig).
	ChainConfig func(props map[string]string) (*connect.ConfigDef, error)
	// Others are the non-connector plugins for /connector-plugins?connectorsOnly=false.
	Others []api.PluginInfo
}

// connector finds a connector plugin by class or alias (Kafka matches the
// simple name and the name without "Connector" too).
func (p *Plugins) connector(class string) (connect.Plugin, error) {
	class = strings.TrimSpace(class)
	for _, pl := range p.Connectors {
		if slices.Contains(pl.Names(), class) {
			return pl, nil
		}
	}
	return connect.Plugin{}, fmt.Errorf("Failed to find any class that implements Connector and which name matches %s, available connectors are: %s",
		class, p.connectorList())
}

func (p *Plugins) connectorList() string {
	var names []string
	for _, pl := range p.Connectors {
		names = append(names, fmt.Sprintf("PluginDesc{klass=class %s, name='%s', version='%s', type=%s}", pl.Class, pl.Class, pl.Version, pl.Type))
	}
	return strings.Join(names, ", ")
}

// connectorType says source or sink for a config.
func (p *Plugins) connectorType(cfg map[string]string) api.ConnectorType {
	pl, err := p.connector(cfg["connector.class"])
	if err != nil {
		return api.TypeUnknown
	}
	if pl.Type == connect.PluginSink {
		return api.TypeSink
	}
	return api.TypeSource
}

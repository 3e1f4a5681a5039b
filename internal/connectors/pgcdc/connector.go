package pgcdc

import (
	"fmt"

	"github.com/samsa-io/samsa/connect"
	"github.com/samsa-io/samsa/internal/version"
)

// Class is Debezium's connector class, so Debezium configs run unchanged.
const Class = "io.debezium.connector.postgresql.PostgresConnector"

// Plugins are this package's connectors.
func Plugins() []connect.Plugin {
	return []connect.Plugin{{
		Class:   Class,
		Aliases: []string{"PostgresConnector", "Postgres"},
		Type:    connect.PluginSource,
		Version: version.String(),
		New:     func() connect.Connector { return &Connector{} },
	}}
}

// Connector is the PostgreSQL CDC source connector: one task, as
// Debezium's (one replication slot is read by one connection).
type Connector struct {
	props map[string]string
}

var (
	_ connect.SourceConnector            = (*Connector)(nil)
	_ connect.ConnectorValidator         = (*Connector)(nil)
	_ connect.ExactlyOnceSourceConnector = (*Connector)(nil)
)

func (c *Connector) Version() string            { return version.String() }
func (c *Connector) Config() *connect.ConfigDef { return configDef() }

// Validate adds what the ConfigDef cannot say: Debezium configs this
// connector does not implement, and include/exclude lists set together.
func (c *Connector) Validate(props map[string]string) []connect.ConfigValue { return checkProps(props) }

func (c *Connector) Start(_ connect.ConnectorContext, props map[string]string) error {
	if _, err := parseSettings(props); err != nil {
		return err
	}
	c.props = props
	return nil
}

// TaskConfigs is always one task.
func (c *Connector) TaskConfigs(maxTasks int) ([]map[string]string, error) {
	if maxTasks < 1 {
		return nil, fmt.Errorf("pgcdc: tasks.max must be at least 1")
	}
	cfg := make(map[string]string, len(c.props))
	for k, v := range c.props {
		cfg[k] = v
	}
	return []map[string]string{cfg}, nil
}

func (c *Connector) Stop() error { return nil }

func (c *Connector) NewTask() connect.SourceTask { return &Task{version: version.String()} }

// ExactlyOnceSupport: records may repeat after a crash (at least once).
func (c *Connector) ExactlyOnceSupport(map[string]string) connect.ExactlyOnceSupport {
	return connect.ExactlyOnceUnsupported
}

package jdbc

import (
	"github.com/samsa-io/samsa/connect"
	"github.com/samsa-io/samsa/internal/version"
)

// Plugins are the JDBC source and sink under Confluent's class names, so
// configs written for kafka-connect-jdbc name them unchanged.
func Plugins() []connect.Plugin {
	return []connect.Plugin{
		{
			Class:   "io.confluent.connect.jdbc.JdbcSourceConnector",
			Aliases: []string{"JdbcSourceConnector", "JdbcSource"},
			Type:    connect.PluginSource,
			Version: version.Version,
			New:     func() connect.Connector { return &SourceConnector{} },
		},
		{
			Class:   "io.confluent.connect.jdbc.JdbcSinkConnector",
			Aliases: []string{"JdbcSinkConnector", "JdbcSink"},
			Type:    connect.PluginSink,
			Version: version.Version,
			New:     func() connect.Connector { return &SinkConnector{} },
		},
	}
}

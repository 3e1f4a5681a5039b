package file

import (
	"github.com/samsa-io/samsa/connect"
	"github.com/samsa-io/samsa/internal/version"
)

// Kafka's class names, so that connector.class in a Kafka config works.
const (
	SourceClass = "org.apache.kafka.connect.file.FileStreamSourceConnector"
	SinkClass   = "org.apache.kafka.connect.file.FileStreamSinkConnector"
)

// Plugins are FileStreamSource and FileStreamSink.
func Plugins() []connect.Plugin {
	return []connect.Plugin{
		{
			Class:   SourceClass,
			Aliases: []string{"FileStreamSource", "FileStreamSourceConnector"},
			Type:    connect.PluginSource,
			Version: version.String(),
			New:     func() connect.Connector { return NewSourceConnector() },
		},
		{
			Class:   SinkClass,
			Aliases: []string{"FileStreamSink", "FileStreamSinkConnector"},
			Type:    connect.PluginSink,
			Version: version.String(),
			New:     func() connect.Connector { return NewSinkConnector() },
		},
	}
}

package connect

// PluginType is what a plugin is, with the names /connector-plugins shows.
type PluginType string

const (
	PluginSource          PluginType = "source"
	PluginSink            PluginType = "sink"
	PluginConverter       PluginType = "converter"
	PluginHeaderConverter PluginType = "header_converter"
	PluginTransformation  PluginType = "transformation"
	PluginPredicate       PluginType = "predicate"
)

// Plugin names a connector the runtime can run. Class is the name configs
// give in connector.class (Kafka's class name for connectors Kafka has, so
// its configs run unchanged); Aliases are the short names Kafka also
// accepts (the simple class name, and without "Connector").
type Plugin struct {
	Class   string
	Aliases []string
	Type    PluginType
	Version string
	// TaskClass is the task's class name as task.class shows it; empty:
	// Class with "Task" for its "Connector" suffix.
	TaskClass string
	// New makes a fresh connector; it returns a SourceConnector or a
	// SinkConnector as Type says.
	New func() Connector
}

// Names are the class and every alias.
func (p Plugin) Names() []string { return append([]string{p.Class}, p.Aliases...) }

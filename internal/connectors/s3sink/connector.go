package s3sink

import (
	"regexp"
	"strings"

	"github.com/samsa-io/samsa/connect"
)

// Version is the connector's version as /connector-plugins shows it.
const Version = "1.0.0"

// ConnectorClass is Confluent's class name, so its configs run unchanged.
const ConnectorClass = "io.confluent.connect.s3.S3SinkConnector"

// Plugins are the S3 sink connector.
func Plugins() []connect.Plugin {
	return []connect.Plugin{{
		Class:   ConnectorClass,
		Aliases: []string{"S3SinkConnector", "S3Sink"},
		Type:    connect.PluginSink,
		Version: Version,
		New:     func() connect.Connector { return &sinkConnector{} },
	}}
}

type sinkConnector struct {
	props map[string]string
}

func (c *sinkConnector) Version() string            { return Version }
func (c *sinkConnector) Config() *connect.ConfigDef { return configDef() }

// Start checks the whole config (cross-checks included) before any task
// runs with it.
func (c *sinkConnector) Start(_ connect.ConnectorContext, props map[string]string) error {
	if _, err := parseConfig(props); err != nil {
		return err
	}
	c.props = props
	return nil
}

// TaskConfigs gives every task the connector's config: the runtime's
// consumer group spreads the partitions over them.
func (c *sinkConnector) TaskConfigs(maxTasks int) ([]map[string]string, error) {
	out := make([]map[string]string, maxTasks)
	for i := range out {
		m := make(map[string]string, len(c.props))
		for k, v := range c.props {
			m[k] = v
		}
		out[i] = m
	}
	return out, nil
}

var configInMessage = regexp.MustCompile(`(?:for configuration|^configuration) ([^\s:]+)`)

func (c *sinkConnector) Stop() error { return nil }

func (c *sinkConnector) NewTask() connect.SinkTask { return newTask() }

// Validate reports the checks ConfigDef cannot make (configs that need
// each other, unsupported Confluent configs) on the config they concern.
func (c *sinkConnector) Validate(props map[string]string) []connect.ConfigValue {
	if _, err := configDef().Parse(props); err != nil {
		return nil // ConfigDef's own validation reports these
	}
	_, err := parseConfig(props)
	if err == nil {
		return nil
	}
	name := configNamed(err.Error())
	return []connect.ConfigValue{{Name: name, Value: props[name], Errors: []string{err.Error()}, Visible: true}}
}

// configNamed is the config a message is about: the one Kafka's form
// "... for configuration <name>: ..." names, else the longest config name
// the message mentions.
func configNamed(msg string) string {
	if m := configInMessage.FindStringSubmatch(msg); m != nil {
		return m[1]
	}
	best := cfgFormatClass
	names := []string{}
	for _, k := range configDef().Keys() {
		names = append(names, k.Name)
	}
	for k := range unsupportedConfigs {
		names = append(names, k)
	}
	bestLen := 0
	for _, n := range names {
		if strings.Contains(msg, n) && len(n) > bestLen {
			best, bestLen = n, len(n)
		}
	}
	return best
}

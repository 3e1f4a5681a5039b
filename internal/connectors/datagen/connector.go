package datagen

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/samsa-io/samsa/connect"
	"github.com/samsa-io/samsa/internal/version"
)

// Class is Confluent's class name, so that a datagen config runs unchanged.
const Class = "io.confluent.kafka.connect.datagen.DatagenConnector"

// The configs, with Confluent's names.
const (
	TopicConfig          = "kafka.topic"
	MaxIntervalConfig    = "max.interval"
	IterationsConfig     = "iterations"
	SchemaStringConfig   = "schema.string"
	SchemaFilenameConfig = "schema.filename"
	SchemaKeyfieldConfig = "schema.keyfield"
	QuickstartConfig     = "quickstart"
	RandomSeedConfig     = "random.seed"
	// TaskIDConfig is what the connector adds to each task's config.
	TaskIDConfig = "task.id"
)

// The source offset's keys, Confluent's, so stored offsets read back.
const (
	TaskGenerationField   = "task.generation"
	CurrentIterationField = "current.iteration"
	RandomSeedField       = "random.seed"
)

// Plugins is the datagen connector.
func Plugins() []connect.Plugin {
	return []connect.Plugin{{
		Class:   Class,
		Aliases: []string{"DatagenConnector", "Datagen"},
		Type:    connect.PluginSource,
		Version: version.String(),
		New:     func() connect.Connector { return NewConnector() },
	}}
}

func configDef() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: TopicConfig, Type: connect.TypeString, Default: connect.NoDefault,
			Validator: connect.NonEmptyString{}, Importance: connect.High, Documentation: "Topic to write to"}).
		Define(connect.ConfigKey{Name: MaxIntervalConfig, Type: connect.TypeLong, Default: int64(500),
			Validator: connect.AtLeast(0), Importance: connect.High,
			Documentation: "Max interval between messages (ms): each record waits a random time below it"}).
		Define(connect.ConfigKey{Name: IterationsConfig, Type: connect.TypeInt, Default: int32(-1),
			Importance: connect.High, Documentation: "Number of messages to send from each task, or less than 1 for unlimited"}).
		Define(connect.ConfigKey{Name: SchemaStringConfig, Type: connect.TypeString, Default: "",
			Validator: unsupportedSchemaSource{}, Importance: connect.High,
			Documentation: "The literal JSON-encoded Avro schema to use. Not supported by Samsa: use quickstart"}).
		Define(connect.ConfigKey{Name: SchemaFilenameConfig, Type: connect.TypeString, Default: "",
			Validator: unsupportedSchemaSource{}, Importance: connect.High,
			Documentation: "Filename of schema to use. Not supported by Samsa: use quickstart"}).
		Define(connect.ConfigKey{Name: SchemaKeyfieldConfig, Type: connect.TypeString, Default: "",
			Importance: connect.High, Documentation: "Name of field to use as the message key (by default the quickstart's)"}).
		Define(connect.ConfigKey{Name: QuickstartConfig, Type: connect.TypeString, Default: "",
			Validator: quickstartValidator{}, Importance: connect.High, Recommended: quickstartNames(),
			Documentation: "Name of quickstart to use: " + strings.Join(quickstartNames(), ", ")}).
		Define(connect.ConfigKey{Name: RandomSeedConfig, Type: connect.TypeLong, Default: nil,
			Importance: connect.Low, Documentation: "Numeric seed for generating random data. " +
				"Two connectors started with the same seed will deterministically produce the same data. " +
				"Each task will generate different data than the other tasks in the same connector."})
}

// unsupportedSchemaSource refuses an Avro schema with arg.properties:
// Samsa generates only the quickstarts.
type unsupportedSchemaSource struct{}

func (unsupportedSchemaSource) Validate(name string, v any) error {
	if s, _ := v.(string); s != "" {
		return fmt.Errorf("Samsa's datagen generates only its quickstarts (%s); %s is not supported",
			strings.Join(quickstartNames(), ", "), name)
	}
	return nil
}

// quickstartValidator accepts the generated quickstarts in any case, as
// Confluent's does, and says so when a Confluent quickstart is not one.
type quickstartValidator struct{}

func (quickstartValidator) Validate(name string, v any) error {
	raw, _ := v.(string)
	s := strings.ToLower(raw)
	if _, ok := quickstarts[s]; ok || s == "" {
		return nil
	}
	if slices.Contains(confluentOnly, s) {
		return fmt.Errorf("%s is one of Confluent's quickstarts that Samsa does not generate; %s must be one out of %s",
			s, name, strings.Join(quickstartNames(), ","))
	}
	return fmt.Errorf("%s must be one out of %s", name, strings.Join(quickstartNames(), ","))
}

// settings is a checked config.
type settings struct {
	topic       string
	maxInterval time.Duration
	iterations  int64 // < 1: unlimited
	quickstart  quickstart
	keyField    string
	seed        *int64
}

var schemaSources = []string{SchemaStringConfig, SchemaFilenameConfig, QuickstartConfig}

func errNoSchemaSource() error {
	return fmt.Errorf("Must set exactly one of %s", strings.Join(schemaSources, ", "))
}

func errKeyField() error {
	return fmt.Errorf("The schema does not contain the field provided in '%s'", SchemaKeyfieldConfig)
}

func parseSettings(props map[string]string) (settings, error) {
	cfg, err := configDef().Parse(props)
	if err != nil {
		return settings{}, err
	}
	qs, ok := quickstarts[strings.ToLower(cfg.String(QuickstartConfig))]
	if !ok {
		return settings{}, errNoSchemaSource()
	}
	s := settings{
		topic:       cfg.String(TopicConfig),
		maxInterval: time.Duration(cfg.Int(MaxIntervalConfig)) * time.Millisecond,
		iterations:  cfg.Int(IterationsConfig),
		quickstart:  qs,
		keyField:    cfg.String(SchemaKeyfieldConfig),
	}
	if s.keyField == "" {
		s.keyField = qs.keyField
	}
	if _, ok := qs.schema.Field(s.keyField); !ok {
		return settings{}, errKeyField()
	}
	if seed, ok := cfg.Get(RandomSeedConfig).(int64); ok {
		s.seed = &seed
	}
	return s, nil
}

// Connector is DatagenConnector: tasks.max tasks, each with its own
// task.id, source partition and random sequence.
type Connector struct {
	props map[string]string
}

// NewConnector makes a datagen connector.
func NewConnector() *Connector { return &Connector{} }

var (
	_ connect.SourceConnector    = (*Connector)(nil)
	_ connect.ConnectorValidator = (*Connector)(nil)
)

func (c *Connector) Version() string            { return version.String() }
func (c *Connector) Config() *connect.ConfigDef { return configDef() }

func (c *Connector) Start(ctx connect.ConnectorContext, props map[string]string) error {
	if _, err := parseSettings(props); err != nil {
		return fmt.Errorf("Datagen connector could not start because of an error in the configuration: %w", err)
	}
	c.props = maps.Clone(props)
	return nil
}

// TaskConfigs is maxTasks configs, each with its task.id.
func (c *Connector) TaskConfigs(maxTasks int) ([]map[string]string, error) {
	out := make([]map[string]string, maxTasks)
	for i := range out {
		out[i] = maps.Clone(c.props)
		out[i][TaskIDConfig] = strconv.Itoa(i)
	}
	return out, nil
}

func (c *Connector) Stop() error { return nil }

func (c *Connector) NewTask() connect.SourceTask { return NewTask() }

// Validate reports the checks across configs that Confluent's validate
// makes, against the configs concerned: one schema source, and a key field
// the schema has (the runtime merges them into the definition's answer).
// With a config already invalid on its own it adds nothing, as Confluent's.
func (c *Connector) Validate(props map[string]string) []connect.ConfigValue {
	for _, v := range configDef().Validate(props) {
		if len(v.Errors) > 0 {
			return nil
		}
	}
	_, err := parseSettings(props)
	var names []string
	switch {
	case err == nil:
		return nil
	case err.Error() == errNoSchemaSource().Error():
		names = schemaSources
	case err.Error() == errKeyField().Error():
		names = []string{SchemaKeyfieldConfig}
	}
	var out []connect.ConfigValue
	for _, name := range names {
		out = append(out, connect.ConfigValue{Name: name, Value: props[name], Errors: []string{err.Error()}, Visible: true})
	}
	return out
}

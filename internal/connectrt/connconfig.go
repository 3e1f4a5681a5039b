package connectrt

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"

	"github.com/samsa-io/samsa/connect"
)

// The connector configs the runtime reads, as Kafka's ConnectorConfig,
// SinkConnectorConfig and SourceConnectorConfig define them (names, types,
// defaults, groups and order; config/validate shows them).
const (
	commonGroup        = "Common"
	transformsGroup    = "Transforms"
	predicatesGroup    = "Predicates"
	errorGroup         = "Error Handling"
	topicCreationGroup = "Topic Creation"
	eosGroup           = "Exactly Once Support"
	offsetsGroup       = "offsets.topic"
)

// defContext is what config/validate shows beyond the fixed definitions:
// the plugin's version and the worker's converters (KIP-891's
// *.plugin.version keys default to the versions there are). Its zero value
// is enough to parse a config.
type defContext struct {
	version                      string
	keyConverter, valueConverter string
	headerConverter              string
	converters, headerConverters []string
	converterVersion             string
}

func baseConnectorDef(dc defContext) *connect.ConfigDef {
	d := connect.NewConfigDef()
	order := 0
	next := func() int { order++; return order }
	d.Define(connect.ConfigKey{Name: "name", Type: connect.TypeString, Default: connect.NoDefault, Validator: nameValidator{}, Importance: connect.High,
		Documentation: "Globally unique name to use for this connector.", Group: commonGroup, OrderInGroup: next(), Width: connect.WidthMedium, DisplayName: "Connector name"})
	d.Define(connect.ConfigKey{Name: "connector.class", Type: connect.TypeString, Default: connect.NoDefault, Importance: connect.High,
		Documentation: "Name or alias of the connector's class (Kafka's class name, or its short forms such as FileStreamSink).", Group: commonGroup, OrderInGroup: next(), Width: connect.WidthLong, DisplayName: "Connector class"})
	d.Define(versionKey("connector.plugin.version", dc.version, connect.Medium, connect.WidthMedium, next(), "Connector version", "The version of the connector plugin; Samsa has one version of each."))
	d.Define(connect.ConfigKey{Name: "tasks.max", Type: connect.TypeInt, Default: int32(1), Validator: connect.AtLeast(1), Importance: connect.High,
		Documentation: "Maximum number of tasks to use for this connector.", Group: commonGroup, OrderInGroup: next(), Width: connect.WidthShort, DisplayName: "Tasks max"})
	d.Define(connect.ConfigKey{Name: "tasks.max.enforce", Type: connect.TypeBoolean, Default: true, Importance: connect.Low,
		Documentation: "(Deprecated) Whether a connector that generates more tasks than tasks.max fails.", Group: commonGroup, OrderInGroup: next(), Width: connect.WidthShort, DisplayName: "Enforce tasks max"})
	converter := func(name, def, display, doc string, recommended []string) {
		var dv any
		if def != "" {
			dv = def
		}
		d.Define(connect.ConfigKey{Name: name, Type: connect.TypeClass, Default: dv, Importance: connect.Low, Documentation: doc,
			Group: commonGroup, OrderInGroup: next(), Width: connect.WidthShort, DisplayName: display, Recommended: recommended})
		d.Define(versionKey(name+".plugin.version", dc.converterVersion, connect.Low, connect.WidthShort, next(), display[:len(display)-len(" class")]+" version", "The version of the converter plugin."))
	}
	converter("key.converter", dc.keyConverter, "Key converter class", "Converter class for record keys; the worker's when unset.", dc.converters)
	converter("value.converter", dc.valueConverter, "Value converter class", "Converter class for record values; the worker's when unset.", dc.converters)
	converter("header.converter", dc.headerConverter, "Header converter class", "Header converter class; the worker's when unset.", dc.headerConverters)
	d.Define(connect.ConfigKey{Name: "transforms", Type: connect.TypeList, Default: []string{}, Validator: aliasValidator{"transformation"}, Importance: connect.Low,
		Documentation: "Aliases for the transformations to be applied to records.", Group: transformsGroup, OrderInGroup: next(), Width: connect.WidthLong, DisplayName: "Transforms"})
	d.Define(connect.ConfigKey{Name: "predicates", Type: connect.TypeList, Default: []string{}, Validator: aliasValidator{"predicate"}, Importance: connect.Low,
		Documentation: "Aliases for the predicates used by transformations.", Group: predicatesGroup, OrderInGroup: next(), Width: connect.WidthLong, DisplayName: "Predicates"})
	d.Define(connect.ConfigKey{Name: "config.action.reload", Type: connect.TypeString, Default: "restart", Validator: connect.OneOf{Values: []string{"none", "restart"}, CaseInsensitive: true}, Importance: connect.Low,
		Documentation: "What to do when configuration providers change the config: none or restart.", Group: commonGroup, OrderInGroup: next(), Width: connect.WidthMedium, DisplayName: "Reload Action"})
	order = 0
	d.Define(connect.ConfigKey{Name: "errors.retry.timeout", Type: connect.TypeLong, Default: int64(0), Importance: connect.Medium,
		Documentation: "How long, in milliseconds, a failed operation is retried; 0 never, -1 forever.", Group: errorGroup, OrderInGroup: next(), Width: connect.WidthMedium, DisplayName: "Retry Timeout for Errors"})
	d.Define(connect.ConfigKey{Name: "errors.retry.delay.max.ms", Type: connect.TypeLong, Default: int64(60000), Importance: connect.Medium,
		Documentation: "The longest wait between retries, in milliseconds.", Group: errorGroup, OrderInGroup: next(), Width: connect.WidthMedium, DisplayName: "Maximum Delay Between Retries for Errors"})
	d.Define(connect.ConfigKey{Name: "errors.tolerance", Type: connect.TypeString, Default: "none", Validator: connect.OneOf{Values: []string{"none", "all"}, CaseInsensitive: true}, Importance: connect.Medium,
		Documentation: "none: an error fails the task; all: problematic records are skipped.", Group: errorGroup, OrderInGroup: next(), Width: connect.WidthShort, DisplayName: "Error Tolerance"})
	d.Define(connect.ConfigKey{Name: "errors.log.enable", Type: connect.TypeBoolean, Default: false, Importance: connect.Medium,
		Documentation: "Log each error with the failed operation and record.", Group: errorGroup, OrderInGroup: next(), Width: connect.WidthShort, DisplayName: "Log Errors"})
	d.Define(connect.ConfigKey{Name: "errors.log.include.messages", Type: connect.TypeBoolean, Default: false, Importance: connect.Medium,
		Documentation: "Include the record's key, value and headers in error logs.", Group: errorGroup, OrderInGroup: next(), Width: connect.WidthShort, DisplayName: "Log Error Details"})
	return d
}

// versionKey is one of KIP-891's *.plugin.version keys: Samsa runs one
// version of each plugin, so the only value there is is accepted.
func versionKey(name, version string, imp connect.Importance, width connect.Width, order int, display, doc string) connect.ConfigKey {
	k := connect.ConfigKey{Name: name, Type: connect.TypeString, Importance: imp, Documentation: doc, Group: commonGroup,
		OrderInGroup: order, Width: width, DisplayName: display}
	if version != "" {
		k.Default = version
		k.Recommended = []string{version}
		k.Validator = connect.ValidatorFunc(func(_ string, v any) error {
			if s, _ := v.(string); s != version {
				return fmt.Errorf("Samsa has version %s of this plugin only", version)
			}
			return nil
		})
	}
	return k
}

func sinkConnectorDef(dc defContext) *connect.ConfigDef {
	d := baseConnectorDef(dc)
	d.Define(connect.ConfigKey{Name: "topics", Type: connect.TypeList, Default: []string{}, Importance: connect.High,
		Documentation: "Topics to consume, comma-separated.", Group: commonGroup, OrderInGroup: 4, Width: connect.WidthLong, DisplayName: "Topics"})
	d.Define(connect.ConfigKey{Name: "topics.regex", Type: connect.TypeString, Default: "", Validator: connect.ValidRegexp{}, Importance: connect.High,
		Documentation: "A regular expression for the topics to consume.", Group: commonGroup, OrderInGroup: 4, Width: connect.WidthLong, DisplayName: "Topics regex"})
	d.Define(connect.ConfigKey{Name: "errors.deadletterqueue.topic.name", Type: connect.TypeString, Default: "", Importance: connect.Medium,
		Documentation: "The dead letter queue topic for records that failed; empty for none.", Group: errorGroup, OrderInGroup: 6, Width: connect.WidthMedium, DisplayName: "Dead Letter Queue Topic Name"})
	d.Define(connect.ConfigKey{Name: "errors.deadletterqueue.topic.replication.factor", Type: connect.TypeShort, Default: int16(3), Importance: connect.Medium,
		Documentation: "Replication factor of the dead letter queue topic when it is created.", Group: errorGroup, OrderInGroup: 7, Width: connect.WidthMedium, DisplayName: "Dead Letter Queue Topic Replication Factor"})
	d.Define(connect.ConfigKey{Name: "errors.deadletterqueue.context.headers.enable", Type: connect.TypeBoolean, Default: false, Importance: connect.Medium,
		Documentation: "Add headers with the error's context to dead letter queue records.", Group: errorGroup, OrderInGroup: 8, Width: connect.WidthMedium, DisplayName: "Enable Error Context Headers"})
	return d
}

func sourceConnectorDef(dc defContext) *connect.ConfigDef {
	d := baseConnectorDef(dc)
	order := 0
	next := func() int { order++; return order }
	d.Define(connect.ConfigKey{Name: "topic.creation.groups", Type: connect.TypeList, Default: []string{}, Importance: connect.Low,
		Documentation: "Groups of settings for topics the connector's records create.", Group: topicCreationGroup, OrderInGroup: next(), Width: connect.WidthLong, DisplayName: "Topic Creation Groups"})
	d.Define(connect.ConfigKey{Name: "exactly.once.support", Type: connect.TypeString, Default: "requested", Validator: connect.OneOf{Values: []string{"requested", "required"}, CaseInsensitive: true}, Importance: connect.Medium,
		Documentation: "requested: run even if the connector cannot promise exactly-once; required: refuse to.", Group: eosGroup, OrderInGroup: next(), Width: connect.WidthShort, DisplayName: "Exactly once support"})
	d.Define(connect.ConfigKey{Name: "transaction.boundary", Type: connect.TypeString, Default: "poll", Validator: connect.OneOf{Values: []string{"poll", "interval"}, CaseInsensitive: true}, Importance: connect.Medium,
		Documentation: "When transactions commit with exactly-once sources: after each poll, or on an interval (Kafka's connector-defined boundaries need a transaction context Samsa's SDK does not offer).", Group: eosGroup, OrderInGroup: next(), Width: connect.WidthShort, DisplayName: "Transaction Boundary"})
	d.Define(connect.ConfigKey{Name: "transaction.boundary.interval.ms", Type: connect.TypeLong, Default: nil, Importance: connect.Low,
		Documentation: "The interval of transaction.boundary=interval; the worker's offset.flush.interval.ms when unset.", Group: eosGroup, OrderInGroup: next(), Width: connect.WidthShort, DisplayName: "Transaction boundary interval"})
	d.Define(connect.ConfigKey{Name: "offsets.storage.topic", Type: connect.TypeString, Default: nil, Importance: connect.Low,
		Documentation: "A topic of the connector's own for its offsets; the worker's offset topic when unset.", Group: offsetsGroup, OrderInGroup: 1, Width: connect.WidthLong, DisplayName: "Offsets topic"})
	return d
}

// nameValidator refuses empty names and control characters (Kafka's
// nonEmptyStringWithoutControlChars).
type nameValidator struct{}

func (nameValidator) Validate(name string, v any) error {
	s, _ := v.(string)
	if s == "" {
		return fmt.Errorf("String may not be empty")
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return fmt.Errorf("String may not contain control sequences but had the following ASCII chars: %d", r)
		}
	}
	return nil
}

// aliasValidator refuses duplicate aliases in transforms and predicates.
type aliasValidator struct{ kind string }

func (a aliasValidator) Validate(name string, v any) error {
	seen := map[string]bool{}
	for _, s := range v.([]string) {
		if seen[s] {
			return fmt.Errorf("Duplicate alias provided.")
		}
		seen[s] = true
	}
	return nil
}

// connectorConfig is a connector's parsed common config.
type connectorConfig struct {
	raw           map[string]string
	name          string
	class         string
	tasksMax      int
	enforceMax    bool
	tolerance     string
	retryTimeout  int64
	retryMaxDelay int64
	logErrors     bool
	logMessages   bool
	// sinks
	topics      []string
	topicsRegex *regexp.Regexp
	dlqTopic    string
	dlqRF       int16
	dlqHeaders  bool
	// sources
	exactlyOnce    string
	txBoundary     string
	txInterval     int64
	offsetsTopic   string
	creationGroups []string
	creation       *topicCreation
}

func parseConnectorConfig(raw map[string]string, sink bool) (connectorConfig, error) {
	def := sourceConnectorDef(defContext{})
	if sink {
		def = sinkConnectorDef(defContext{})
	}
	c, err := def.Parse(raw)
	if err != nil {
		return connectorConfig{}, err
	}
	cc := connectorConfig{
		raw: raw, name: c.String("name"), class: c.String("connector.class"), tasksMax: int(c.Int("tasks.max")),
		enforceMax: c.Bool("tasks.max.enforce"), tolerance: strings.ToLower(c.String("errors.tolerance")),
		retryTimeout: c.Int("errors.retry.timeout"), retryMaxDelay: c.Int("errors.retry.delay.max.ms"),
		logErrors: c.Bool("errors.log.enable"), logMessages: c.Bool("errors.log.include.messages"),
	}
	if sink {
		cc.topics = c.List("topics")
		if re := c.String("topics.regex"); re != "" {
			cc.topicsRegex = regexp.MustCompile("^(?:" + re + ")$")
		}
		switch {
		case len(cc.topics) > 0 && cc.topicsRegex != nil:
			return connectorConfig{}, fmt.Errorf("Must configure one of topics or topics.regex, not both")
		case len(cc.topics) == 0 && cc.topicsRegex == nil:
			return connectorConfig{}, fmt.Errorf("Must configure one of topics or topics.regex")
		}
		cc.dlqTopic = c.String("errors.deadletterqueue.topic.name")
		cc.dlqRF = int16(c.Int("errors.deadletterqueue.topic.replication.factor"))
		cc.dlqHeaders = c.Bool("errors.deadletterqueue.context.headers.enable")
		for _, t := range cc.topics {
			if t == cc.dlqTopic && t != "" {
				return connectorConfig{}, fmt.Errorf("The DLQ topic '%s' may not be included in the list of topics ('topics=%s') consumed by the connector", t, strings.Join(cc.topics, ","))
			}
		}
		return cc, nil
	}
	cc.exactlyOnce = strings.ToLower(c.String("exactly.once.support"))
	cc.txBoundary = strings.ToLower(c.String("transaction.boundary"))
	if v := c.Get("transaction.boundary.interval.ms"); v != nil {
		cc.txInterval = c.Int("transaction.boundary.interval.ms")
	}
	cc.offsetsTopic = c.String("offsets.storage.topic")
	if cc.offsetsTopic != "" {
		return connectorConfig{}, fmt.Errorf("offsets.storage.topic: a connector-specific offsets topic is not supported yet; the worker's offset topic holds every connector's offsets")
	}
	cc.creationGroups = c.List("topic.creation.groups")
	if cc.creation, err = parseTopicCreation(raw, cc.creationGroups); err != nil {
		return connectorConfig{}, err
	}
	return cc, nil
}

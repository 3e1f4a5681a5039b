package connectrt

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/samsa-io/samsa/connect"
)

// WorkerConfig is a worker's configuration, read from Kafka's worker
// property names (connect-distributed.properties, connect-standalone.properties).
type WorkerConfig struct {
	Distributed bool

	BootstrapServers []string
	GroupID          string

	ConfigTopic, OffsetTopic, StatusTopic                   string
	ConfigReplication, OffsetReplication, StatusReplication int16
	OffsetPartitions, StatusPartitions                      int32
	OffsetFile                                              string // standalone

	KeyConverter, ValueConverter, HeaderConverter string
	// ConverterProps are key.converter.*, value.converter.* and
	// header.converter.* (prefix kept), passed to connectors' converters
	// unless a connector overrides them.
	ConverterProps map[string]string

	Listeners                                           []string // http://host:port
	AdvertisedURL                                       string
	OffsetFlush                                         time.Duration
	OffsetFlushTimeout                                  time.Duration
	TaskShutdownTimeout                                 time.Duration
	ScheduledRebalanceMaxDelay                          time.Duration
	SessionTimeout, HeartbeatInterval, RebalanceTimeout time.Duration
	ConnectProtocol                                     string
	ExactlyOnceSource                                   bool
	TopicCreation                                       bool
	TopicTracking, TopicTrackingReset                   bool
	ClientID                                            string
	ConnectorOverridePolicy                             string

	// Producer, Consumer and Admin are producer.*, consumer.* and admin.*
	// overrides (prefix taken off), applied to the clients the worker makes.
	Producer, Consumer, Admin map[string]string
	// Security is security.protocol, ssl.* and sasl.*: the caller turns it
	// into client options (internal/cli reads Kafka's names).
	Security map[string]string
}

// workerDef declares the worker properties read, with Kafka's defaults.
func workerDef(distributed bool) *connect.ConfigDef {
	d := connect.NewConfigDef()
	str := func(name string, def any, doc string) {
		d.Define(connect.ConfigKey{Name: name, Type: connect.TypeString, Default: def, Documentation: doc})
	}
	num := func(name string, t connect.ConfigType, def any, min float64, doc string) {
		d.Define(connect.ConfigKey{Name: name, Type: t, Default: def, Validator: connect.AtLeast(min), Documentation: doc})
	}
	d.Define(connect.ConfigKey{Name: "bootstrap.servers", Type: connect.TypeList, Default: []string{"localhost:9092"}, Documentation: "the Kafka cluster"})
	str("key.converter", connect.NoDefault, "converter class for record keys")
	str("value.converter", connect.NoDefault, "converter class for record values")
	str("header.converter", "org.apache.kafka.connect.storage.SimpleHeaderConverter", "converter class for headers")
	// Kafka listens on every interface by default; Samsa's services listen
	// on loopback unless told otherwise.
	d.Define(connect.ConfigKey{Name: "listeners", Type: connect.TypeList, Default: []string{"http://127.0.0.1:8083"}, Documentation: "REST listeners"})
	d.Define(connect.ConfigKey{Name: "topic.tracking.enable", Type: connect.TypeBoolean, Default: true, Documentation: "record the topics connectors use (KIP-558)"})
	d.Define(connect.ConfigKey{Name: "topic.tracking.allow.reset", Type: connect.TypeBoolean, Default: true, Documentation: "allow resetting the recorded topics"})
	str("rest.advertised.host.name", nil, "host name other workers reach this one at")
	num("rest.advertised.port", connect.TypeInt, nil, 0, "port other workers reach this one at")
	d.Define(connect.ConfigKey{Name: "rest.advertised.listener", Type: connect.TypeString, Default: nil, Documentation: "the scheme other workers reach this one with: http (the only listener Samsa's workers have)",
		Validator: connect.OneOf{Values: []string{"http"}}})
	num("offset.flush.interval.ms", connect.TypeLong, int64(60000), 0, "how often source offsets are committed")
	num("offset.flush.timeout.ms", connect.TypeLong, int64(5000), 0, "how long a commit may wait for records")
	num("task.shutdown.graceful.timeout.ms", connect.TypeLong, int64(5000), 0, "how long tasks get to stop")
	str("client.id", "", "client id prefix")
	d.Define(connect.ConfigKey{Name: "topic.creation.enable", Type: connect.TypeBoolean, Default: true, Documentation: "whether source connectors may create their topics (KIP-158)"})
	str("connector.client.config.override.policy", "All", "which client overrides connectors may set")
	if distributed {
		str("group.id", connect.NoDefault, "the Connect cluster's group")
		str("config.storage.topic", connect.NoDefault, "connector configs")
		str("offset.storage.topic", connect.NoDefault, "source offsets")
		str("status.storage.topic", connect.NoDefault, "statuses")
		num("config.storage.replication.factor", connect.TypeShort, int16(3), -1, "")
		num("offset.storage.replication.factor", connect.TypeShort, int16(3), -1, "")
		num("status.storage.replication.factor", connect.TypeShort, int16(3), -1, "")
		num("offset.storage.partitions", connect.TypeInt, int32(25), -1, "")
		num("status.storage.partitions", connect.TypeInt, int32(5), -1, "")
		num("scheduled.rebalance.max.delay.ms", connect.TypeInt, int32(300000), 0, "how long lost work waits for its worker")
		num("session.timeout.ms", connect.TypeInt, int32(10000), 1, "")
		num("heartbeat.interval.ms", connect.TypeInt, int32(3000), 1, "")
		num("rebalance.timeout.ms", connect.TypeInt, int32(60000), 1, "")
		d.Define(connect.ConfigKey{Name: "connect.protocol", Type: connect.TypeString, Default: "sessioned",
			Validator: connect.OneOf{Values: []string{"eager", "compatible", "sessioned"}, CaseInsensitive: true}})
		d.Define(connect.ConfigKey{Name: "exactly.once.source.support", Type: connect.TypeString, Default: "disabled",
			Validator: connect.OneOf{Values: []string{"disabled", "enabled", "preparing"}, CaseInsensitive: true}})
	} else {
		str("offset.storage.file.filename", connect.NoDefault, "file for source offsets")
	}
	return d
}

// workerAccepted are worker properties read elsewhere or harmless to
// accept: the converters' own options, client overrides and security.
func workerAccepted(k string) bool {
	for _, p := range []string{"key.converter.", "value.converter.", "header.converter.", "producer.", "consumer.", "admin.",
		"ssl.", "sasl."} {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	switch k {
	case "security.protocol":
		return true
	}
	return false
}

// workerRefused are Kafka worker properties Samsa does not honour, with why.
var workerRefused = map[string]string{
	"plugin.path":                           "connectors are built into the samsa binary (or a binary built with the connect/worker package); there is nothing to load from a path",
	"plugin.discovery":                      "connectors are built in; there is no plugin scanning",
	"rest.extension.classes":                "REST extensions are Java classes; Samsa has none",
	"config.providers":                      "config providers are not supported yet; give the values in the config",
	"metric.reporters":                      "metrics are on the broker's /metrics; no reporter classes",
	"listeners.https.ssl.keystore.location": "HTTPS on the Connect REST listener is not supported yet",
}

// ParseWorkerConfig reads worker properties; distributed selects the mode.
// Unknown properties are refused with the name, as everything configured
// must take effect.
func ParseWorkerConfig(props map[string]string, distributed bool) (WorkerConfig, error) {
	def := workerDef(distributed)
	for _, k := range slices.Sorted(maps.Keys(props)) {
		if why, ok := workerRefused[k]; ok {
			if strings.TrimSpace(props[k]) == "" {
				continue
			}
			return WorkerConfig{}, fmt.Errorf("%s: %s", k, why)
		}
		if _, ok := def.Key(k); !ok && !workerAccepted(k) && !otherModeKey(k) {
			return WorkerConfig{}, fmt.Errorf("unknown worker property %s", k)
		}
	}
	c, err := def.Parse(props)
	if err != nil {
		return WorkerConfig{}, err
	}
	w := WorkerConfig{
		Distributed:             distributed,
		BootstrapServers:        c.List("bootstrap.servers"),
		KeyConverter:            c.String("key.converter"),
		ValueConverter:          c.String("value.converter"),
		HeaderConverter:         c.String("header.converter"),
		ConverterProps:          map[string]string{},
		Listeners:               c.List("listeners"),
		OffsetFlush:             ms(c.Int("offset.flush.interval.ms")),
		OffsetFlushTimeout:      ms(c.Int("offset.flush.timeout.ms")),
		TaskShutdownTimeout:     ms(c.Int("task.shutdown.graceful.timeout.ms")),
		ClientID:                c.String("client.id"),
		ConnectorOverridePolicy: c.String("connector.client.config.override.policy"),
		TopicCreation:           c.Bool("topic.creation.enable"),
		TopicTracking:           c.Bool("topic.tracking.enable"),
		TopicTrackingReset:      c.Bool("topic.tracking.allow.reset"),
		Producer:                prefixed(props, "producer."),
		Consumer:                prefixed(props, "consumer."),
		Admin:                   prefixed(props, "admin."),
		Security:                map[string]string{},
	}
	for k, v := range props {
		switch {
		case strings.HasPrefix(k, "key.converter."), strings.HasPrefix(k, "value.converter."), strings.HasPrefix(k, "header.converter."):
			w.ConverterProps[k] = v
		case k == "security.protocol", strings.HasPrefix(k, "ssl."), strings.HasPrefix(k, "sasl."):
			w.Security[k] = v
		}
	}
	// Client overrides are checked now, not when a task first needs them.
	for prefix, props := range map[string]map[string]string{"producer.": w.Producer, "consumer.": w.Consumer, "admin.": w.Admin} {
		if _, err := clientProps(props); err != nil {
			return WorkerConfig{}, fmt.Errorf("%s*: %w", prefix, err)
		}
	}
	switch p := c.String("connector.client.config.override.policy"); p {
	case "All", "None", "Principal":
	default:
		return WorkerConfig{}, fmt.Errorf("connector.client.config.override.policy %q: want All, None or Principal", p)
	}
	if err := w.listenerURL(c); err != nil {
		return WorkerConfig{}, err
	}
	if !distributed {
		w.OffsetFile = c.String("offset.storage.file.filename")
		return w, nil
	}
	w.GroupID = c.String("group.id")
	w.ConfigTopic, w.OffsetTopic, w.StatusTopic = c.String("config.storage.topic"), c.String("offset.storage.topic"), c.String("status.storage.topic")
	if w.ConfigTopic == w.OffsetTopic || w.ConfigTopic == w.StatusTopic || w.OffsetTopic == w.StatusTopic {
		return WorkerConfig{}, fmt.Errorf("config.storage.topic, offset.storage.topic and status.storage.topic must be three different topics")
	}
	w.ConfigReplication = int16(c.Int("config.storage.replication.factor"))
	w.OffsetReplication = int16(c.Int("offset.storage.replication.factor"))
	w.StatusReplication = int16(c.Int("status.storage.replication.factor"))
	w.OffsetPartitions = int32(c.Int("offset.storage.partitions"))
	w.StatusPartitions = int32(c.Int("status.storage.partitions"))
	w.ScheduledRebalanceMaxDelay = ms(c.Int("scheduled.rebalance.max.delay.ms"))
	w.SessionTimeout = ms(c.Int("session.timeout.ms"))
	w.HeartbeatInterval = ms(c.Int("heartbeat.interval.ms"))
	w.RebalanceTimeout = ms(c.Int("rebalance.timeout.ms"))
	w.ConnectProtocol = strings.ToLower(c.String("connect.protocol"))
	switch strings.ToLower(c.String("exactly.once.source.support")) {
	case "enabled":
		w.ExactlyOnceSource = true
	case "preparing":
		return WorkerConfig{}, fmt.Errorf("exactly.once.source.support=preparing: the rolling-upgrade step of KIP-618 is not needed by Samsa's workers; use enabled or disabled")
	}
	return w, nil
}

// otherModeKey accepts keys of the other mode's file that Kafka's own
// workers also ignore in this mode (a shared properties file).
func otherModeKey(k string) bool {
	return k == "offset.storage.file.filename"
}

func (w *WorkerConfig) listenerURL(c connect.Config) error {
	if len(w.Listeners) == 0 {
		return fmt.Errorf("listeners: at least one listener is needed")
	}
	for _, l := range w.Listeners {
		u, err := url.Parse(l)
		if err != nil || u.Host == "" && !strings.HasPrefix(l, "http://:") {
			return fmt.Errorf("listeners %q: want http://host:port", l)
		}
		if u.Scheme != "http" {
			return fmt.Errorf("listeners %q: only http listeners are supported yet", l)
		}
	}
	if host := c.String("rest.advertised.host.name"); host != "" || c.Get("rest.advertised.port") != nil {
		u, _ := url.Parse(w.Listeners[0])
		h, p := u.Hostname(), u.Port()
		if host != "" {
			h = host
		}
		if c.Get("rest.advertised.port") != nil {
			p = fmt.Sprint(c.Int("rest.advertised.port"))
		}
		w.AdvertisedURL = "http://" + h + ":" + p
	}
	return nil
}

// ListenAddr is host:port of the first listener.
func (w WorkerConfig) ListenAddr() string {
	u, _ := url.Parse(w.Listeners[0])
	return u.Host
}

func ms(n int64) time.Duration { return time.Duration(n) * time.Millisecond }

func prefixed(props map[string]string, prefix string) map[string]string {
	out := map[string]string{}
	for k, v := range props {
		if strings.HasPrefix(k, prefix) {
			out[strings.TrimPrefix(k, prefix)] = v
		}
	}
	return out
}

package mirrorconf

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// check validates one value; its error is appended to "<key> = <value>: ".
type check func(v string) error

// setting is a connector setting (MirrorSourceConfig, MirrorCheckpointConfig,
// MirrorHeartbeatConfig and their base MirrorConnectorConfig, Connect's ConnectorConfig,
// SourceConnectorConfig) that a flow reads.
type setting struct {
	name string
	// def is Kafka's default (the Java constant is named in the table below).
	def   string
	check check
	// flowOnly: Kafka passes the setting to its connectors only from A->B.<name>. At top
	// level MirrorMakerConfig.connectorBaseConfig keeps only the names its three connector
	// ConfigDefs define, so a top-level use.defaults.from, exactly.once.support or
	// transaction.boundary reaches no connector; Samsa refuses it rather than ignore it.
	flowOnly bool
}

// settings is every connector setting a flow honours. Defaults are Kafka 4's.
var settings = []setting{
	// MirrorConnectorConfig.ENABLED; MirrorMakerConfig.connectorBaseConfig puts "false" when absent.
	{name: "enabled", def: "false", check: isBool},
	{name: "topics", def: TopicsIncludeDefault, check: isAny},                                                   // DefaultTopicFilter.TOPICS_INCLUDE_DEFAULT
	{name: "topics.exclude", def: TopicsExcludeDefault, check: isAny},                                           // DefaultTopicFilter.TOPICS_EXCLUDE_DEFAULT
	{name: "groups", def: GroupsIncludeDefault, check: isAny},                                                   // DefaultGroupFilter.GROUPS_INCLUDE_DEFAULT
	{name: "groups.exclude", def: GroupsExcludeDefault, check: isAny},                                           // DefaultGroupFilter.GROUPS_EXCLUDE_DEFAULT
	{name: "config.properties.exclude", def: ConfigPropertiesExcludeDefault, check: isAny},                      // DefaultConfigPropertyFilter.CONFIG_PROPERTIES_EXCLUDE_DEFAULT
	{name: "use.defaults.from", def: UseDefaultsFromDefault, check: oneOf("source", "target"), flowOnly: true},  // DefaultConfigPropertyFilter.USE_DEFAULTS_FROM_DEFAULT
	{name: "replication.policy.class", def: DefaultReplicationPolicyClass, check: isAny},                        // MirrorClientConfig.REPLICATION_POLICY_CLASS_DEFAULT
	{name: "replication.policy.separator", def: DefaultSeparator, check: isAny},                                 // DefaultReplicationPolicy.SEPARATOR_DEFAULT
	{name: "replication.policy.internal.topic.separator.enabled", def: "true", check: isBool},                   // DefaultReplicationPolicy.INTERNAL_TOPIC_SEPARATOR_ENABLED_DEFAULT
	{name: "sync.topic.configs.enabled", def: "true", check: isBool},                                            // MirrorSourceConfig.SYNC_TOPIC_CONFIGS_ENABLED_DEFAULT
	{name: "sync.topic.configs.interval.seconds", def: "600", check: isInterval},                                // MirrorSourceConfig.SYNC_TOPIC_CONFIGS_INTERVAL_SECONDS_DEFAULT
	{name: "sync.topic.acls.enabled", def: "true", check: isBool},                                               // MirrorSourceConfig.SYNC_TOPIC_ACLS_ENABLED_DEFAULT
	{name: "sync.topic.acls.interval.seconds", def: "600", check: isInterval},                                   // MirrorSourceConfig.SYNC_TOPIC_ACLS_INTERVAL_SECONDS_DEFAULT
	{name: "sync.group.offsets.enabled", def: "false", check: isBool},                                           // MirrorCheckpointConfig.SYNC_GROUP_OFFSETS_ENABLED_DEFAULT
	{name: "sync.group.offsets.interval.seconds", def: "60", check: isInterval},                                 // MirrorCheckpointConfig.SYNC_GROUP_OFFSETS_INTERVAL_SECONDS_DEFAULT
	{name: "emit.checkpoints.enabled", def: "true", check: isBool},                                              // MirrorCheckpointConfig.EMIT_CHECKPOINTS_ENABLED_DEFAULT
	{name: "emit.checkpoints.interval.seconds", def: "60", check: isInterval},                                   // MirrorCheckpointConfig.EMIT_CHECKPOINTS_INTERVAL_SECONDS_DEFAULT
	{name: "emit.heartbeats.enabled", def: "true", check: isBool},                                               // MirrorHeartbeatConfig.EMIT_HEARTBEATS_ENABLED_DEFAULT
	{name: "emit.heartbeats.interval.seconds", def: "1", check: isInterval},                                     // MirrorHeartbeatConfig.EMIT_HEARTBEATS_INTERVAL_SECONDS_DEFAULT
	{name: "refresh.topics.enabled", def: "true", check: isBool},                                                // MirrorSourceConfig.REFRESH_TOPICS_ENABLED_DEFAULT
	{name: "refresh.topics.interval.seconds", def: "600", check: isInterval},                                    // MirrorSourceConfig.REFRESH_TOPICS_INTERVAL_SECONDS_DEFAULT
	{name: "refresh.groups.enabled", def: "true", check: isBool},                                                // MirrorCheckpointConfig.REFRESH_GROUPS_ENABLED_DEFAULT
	{name: "refresh.groups.interval.seconds", def: "600", check: isInterval},                                    // MirrorCheckpointConfig.REFRESH_GROUPS_INTERVAL_SECONDS_DEFAULT
	{name: "offset.lag.max", def: "100", check: isLong},                                                         // MirrorSourceConfig.OFFSET_LAG_MAX_DEFAULT
	{name: "replication.factor", def: "2", check: isReplicationFactor},                                          // MirrorSourceConfig.REPLICATION_FACTOR_DEFAULT
	{name: "offset-syncs.topic.replication.factor", def: "3", check: isReplicationFactor},                       // MirrorSourceConfig.OFFSET_SYNCS_TOPIC_REPLICATION_FACTOR_DEFAULT
	{name: "checkpoints.topic.replication.factor", def: "3", check: isReplicationFactor},                        // MirrorCheckpointConfig.CHECKPOINTS_TOPIC_REPLICATION_FACTOR_DEFAULT
	{name: "heartbeats.topic.replication.factor", def: "3", check: isReplicationFactor},                         // MirrorHeartbeatConfig.HEARTBEATS_TOPIC_REPLICATION_FACTOR_DEFAULT
	{name: "offset-syncs.topic.location", def: "source", check: oneOf("source", "target")},                      // MirrorConnectorConfig.OFFSET_SYNCS_TOPIC_LOCATION_DEFAULT
	{name: "emit.offset-syncs.enabled", def: "true", check: isBool},                                             // MirrorConnectorConfig.EMIT_OFFSET_SYNCS_ENABLED_DEFAULT
	{name: "heartbeats.replication.enabled", def: "true", check: isBool},                                        // MirrorSourceConfig.HEARTBEATS_REPLICATION_ENABLED_DEFAULT
	{name: "tasks.max", def: "1", check: atLeast(1, math.MaxInt32)},                                             // ConnectorConfig.TASKS_MAX_DEFAULT
	{name: "consumer.poll.timeout.ms", def: "1000", check: atLeast(0, math.MaxInt64)},                           // MirrorSourceConfig/MirrorCheckpointConfig.CONSUMER_POLL_TIMEOUT_MILLIS_DEFAULT
	{name: "admin.timeout.ms", def: "60000", check: atLeast(0, math.MaxInt64)},                                  // MirrorConnectorConfig.ADMIN_TASK_TIMEOUT_MILLIS_DEFAULT
	{name: "exactly.once.support", def: "requested", check: oneOfFold("requested", "required"), flowOnly: true}, // SourceConnectorConfig.EXACTLY_ONCE_SUPPORT_DEFAULT
	// SourceConnectorConfig.TRANSACTION_BOUNDARY_DEFAULT; MirrorSourceConnector defines no
	// boundaries of its own ("connector"), and Samsa commits a transaction per batch it copies,
	// which is "poll"; "interval" is refused.
	{name: "transaction.boundary", def: "poll", check: oneOfFold("poll"), flowOnly: true},
	// The pluggable classes: only Kafka's defaults, which these are.
	{name: "topic.filter.class", def: "org.apache.kafka.connect.mirror.DefaultTopicFilter", check: onlyClass("org.apache.kafka.connect.mirror.DefaultTopicFilter")},
	{name: "group.filter.class", def: "org.apache.kafka.connect.mirror.DefaultGroupFilter", check: onlyClass("org.apache.kafka.connect.mirror.DefaultGroupFilter")},
	{name: "config.property.filter.class", def: "org.apache.kafka.connect.mirror.DefaultConfigPropertyFilter", check: onlyClass("org.apache.kafka.connect.mirror.DefaultConfigPropertyFilter")},
	{name: "forwarding.admin.class", def: "org.apache.kafka.clients.admin.ForwardingAdmin", check: onlyClass("org.apache.kafka.clients.admin.ForwardingAdmin")},
	// Samsa's extension: replicate each partition at the same offsets (the remote topic must be
	// new or already hold exactly the copied prefix).
	{name: "samsa.offset.preserving.enabled", def: "false", check: isBool},
}

var settingByName = func() map[string]*setting {
	m := make(map[string]*setting, len(settings))
	for i := range settings {
		m[settings[i].name] = &settings[i]
	}
	return m
}()

// byteArrayConverter is the only converter MirrorMaker runs with (MirrorMakerConfig puts it
// as every herder's key, value and header converter); records are copied as bytes.
const byteArrayConverter = "org.apache.kafka.connect.converters.ByteArrayConverter"

// ignored are Connect worker settings that MirrorMaker 2's dedicated mode hands to the
// distributed workers it runs per flow, and that Samsa's mirror has no use for: it runs no
// Connect workers, so it has no config, status or offset storage topics, no worker group and
// no internal REST server. They are accepted so that a file written for Kafka needs no
// editing, and listed in Config.Ignored for the caller to log. Each accepts any value but the
// converters, which must be ByteArrayConverter (another converter would change the bytes).
var ignored = map[string]string{
	"offset.storage.topic":                "the progress topic is mm2-offsets.<source>.internal, as MirrorMaker's dedicated mode names it",
	"config.storage.topic":                "the configs topic is mm2-configs.<source>.internal, as MirrorMaker's dedicated mode names it",
	"status.storage.topic":                "the status topic is mm2-status.<source>.internal, as MirrorMaker's dedicated mode names it",
	"key.converter":                       "records are copied as bytes (ByteArrayConverter, MirrorMaker's own choice)",
	"value.converter":                     "records are copied as bytes (ByteArrayConverter, MirrorMaker's own choice)",
	"header.converter":                    "records are copied as bytes (ByteArrayConverter, MirrorMaker's own choice)",
	"dedicated.mode.enable.internal.rest": "Samsa's mirror is one process and needs no internal REST server between nodes",
	"listeners":                           "Samsa's mirror is one process and needs no internal REST server between nodes",
	"rest.advertised.host.name":           "Samsa's mirror is one process and needs no internal REST server between nodes",
	"rest.advertised.port":                "Samsa's mirror is one process and needs no internal REST server between nodes",
	"rest.advertised.listener":            "Samsa's mirror is one process and needs no internal REST server between nodes",
}

// workerSettings are the Connect worker settings of MirrorMaker's dedicated mode that Samsa's
// mirror honours, at top level or per target cluster (<alias>.X wins): the progress topic's
// flush interval, and the partitions and replication factors of the three worker topics it
// creates on the target as Kafka's does (mm2-offsets, mm2-configs and mm2-status
// .<source>.internal). Cluster.Worker holds them.
var workerSettings = map[string]check{
	"offset.flush.interval.ms":          atLeast(1, math.MaxInt64),
	"offset.storage.replication.factor": atLeast(-1, math.MaxInt16),
	"offset.storage.partitions":         atLeast(1, math.MaxInt32),
	"config.storage.replication.factor": atLeast(-1, math.MaxInt16),
	"status.storage.replication.factor": atLeast(-1, math.MaxInt16),
	"status.storage.partitions":         atLeast(1, math.MaxInt32),
}

// clusterIgnored are the ignored settings also accepted per cluster (A.group.id is the worker
// group of the flows into A); the REST ones are MirrorMakerConfig's, top level only.
func clusterIgnored(name string) bool {
	if name == "group.id" {
		return true
	}
	_, ok := ignored[name]
	return ok && !strings.HasPrefix(name, "rest.") && name != "listeners" && name != "dedicated.mode.enable.internal.rest"
}

func checkIgnored(name, v string) error {
	switch name {
	case "key.converter", "value.converter", "header.converter":
		if strings.TrimSpace(v) != byteArrayConverter {
			return fmt.Errorf("only %s: MirrorMaker copies records as bytes", byteArrayConverter)
		}
	}
	return nil
}

// refused are settings Kafka's MirrorMaker accepts that Samsa cannot honour, with why.
var refused = map[string]string{
	"config.providers":                 "Samsa runs no Kafka ConfigProviders, so ${provider:path:key} references could not be resolved; write the values in the file",
	"transforms":                       "MirrorMaker copies records as they are; Samsa runs no transforms in a mirror",
	"predicates":                       "MirrorMaker copies records as they are; Samsa runs no transforms in a mirror",
	"errors.tolerance":                 "a mirror that skipped records would not be a mirror; Samsa stops the flow on an error and retries",
	"errors.log.enable":                "Samsa logs a flow's errors itself",
	"errors.log.include.messages":      "Samsa logs a flow's errors itself",
	"errors.retry.timeout":             "Samsa retries a flow's errors until it stops",
	"errors.retry.delay.max.ms":        "Samsa retries a flow's errors until it stops",
	"metric.reporters":                 "Samsa's mirror exports its metrics on its own /metrics endpoint, not through Java reporters",
	"name":                             "MirrorMaker names its connectors itself; Samsa's mirror runs no connectors",
	"connector.class":                  "MirrorMaker names its connectors itself; Samsa's mirror runs no connectors",
	"source.cluster.alias":             "a flow's source alias is the A of A->B",
	"target.cluster.alias":             "a flow's target alias is the B of A->B",
	"tasks.max.enforce":                "Samsa's mirror runs no Connect tasks; tasks.max only bounds its parallelism",
	"config.action.reload":             "Samsa's mirror reads its file once at start; restart it to apply changes",
	"transaction.boundary.interval.ms": "Samsa's transactions are per copied batch (transaction.boundary=poll)",
	"offsets.storage.topic":            "Samsa's mirror runs no Connect worker and keeps no connector offsets topic",
	"exactly.once.source.support":      "Kafka reads it only per target cluster, as <target>.exactly.once.source.support (at top level or per flow it reaches no worker)",
	"bootstrap.servers":                "set it per cluster, as <alias>.bootstrap.servers",
	// Removed in Kafka 4.0 (docs/upgrade.html).
	"topics.blacklist":              "removed in Kafka 4.0: use topics.exclude",
	"groups.blacklist":              "removed in Kafka 4.0: use groups.exclude",
	"config.properties.blacklist":   "removed in Kafka 4.0: use config.properties.exclude",
	"use.incremental.alter.configs": "removed in Kafka 4.0: topic configs are always synced with IncrementalAlterConfigs",
	"add.source.alias.to.metrics":   "removed in Kafka 4.0: the metrics always carry the source alias",
}

// refusedPrefixes are families refused as a whole.
var refusedPrefixes = []struct{ prefix, reason string }{
	{"config.providers.", "Samsa runs no Kafka ConfigProviders"},
	{"transforms.", "MirrorMaker copies records as they are; Samsa runs no transforms in a mirror"},
	{"predicates.", "MirrorMaker copies records as they are; Samsa runs no transforms in a mirror"},
	{"topic.creation.", "MirrorMaker creates remote topics itself (replication.factor, and the source's partitions and configs)"},
	{"task.", "a Connect worker setting; Samsa's mirror runs no Connect worker"},
	{"worker.", "a Connect worker setting; Samsa's mirror runs no Connect worker"},
	{"rest.", "Samsa's mirror runs no REST server"},
	{"admin.listeners", "Samsa's mirror runs no REST server"},
}

// Value checks.

func isAny(string) error { return nil }

func isBool(v string) error {
	_, err := parseBool(v)
	return err
}

// parseBool accepts what Kafka's ConfigDef BOOLEAN does: true or false in any case.
func parseBool(v string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("want true or false")
}

func parseLong(v string) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("want a whole number")
	}
	return n, nil
}

func isLong(v string) error {
	_, err := parseLong(v)
	return err
}

func atLeast(lo, hi int64) check {
	return func(v string) error {
		n, err := parseLong(v)
		if err != nil {
			return err
		}
		if n < lo || n > hi {
			return fmt.Errorf("want a whole number from %d to %d", lo, hi)
		}
		return nil
	}
}

// maxIntervalSeconds keeps an interval within time.Duration.
const maxIntervalSeconds = math.MaxInt64 / int64(time.Second)

// isInterval: *.interval.seconds is a Kafka LONG of seconds. A negative interval disables
// the task (MirrorMaker's Scheduler skips it); zero is refused, as Kafka's
// ScheduledExecutorService refuses a zero period (and a zero heartbeat interval spins).
func isInterval(v string) error {
	n, err := parseLong(v)
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("want seconds: a positive number, or negative to disable")
	}
	if n > maxIntervalSeconds {
		return fmt.Errorf("want at most %d seconds", maxIntervalSeconds)
	}
	return nil
}

// isReplicationFactor: a topic's replication factor, or -1 for the target broker's
// default.replication.factor (KIP-464, as Kafka's NewTopic with -1).
func isReplicationFactor(v string) error {
	n, err := parseLong(v)
	if err != nil {
		return err
	}
	if n == -1 || n >= 1 && n <= math.MaxInt16 {
		return nil
	}
	return fmt.Errorf("want a replication factor from 1 to %d, or -1 for the target broker's default.replication.factor", math.MaxInt16)
}

func oneOf(vals ...string) check {
	return func(v string) error {
		for _, w := range vals {
			if strings.TrimSpace(v) == w {
				return nil
			}
		}
		return fmt.Errorf("want %s", strings.Join(vals, " or "))
	}
}

func oneOfFold(vals ...string) check {
	return func(v string) error {
		for _, w := range vals {
			if strings.EqualFold(strings.TrimSpace(v), w) {
				return nil
			}
		}
		return fmt.Errorf("want %s", strings.Join(vals, " or "))
	}
}

func onlyClass(class string) check {
	return func(v string) error {
		if strings.TrimSpace(v) != class {
			return fmt.Errorf("only %s is supported: Samsa cannot run Java classes", class)
		}
		return nil
	}
}

func isList(v string) error {
	for _, s := range splitList(v) {
		if s == "" {
			return fmt.Errorf("want a comma-separated list without empty entries")
		}
	}
	if len(splitList(v)) == 0 {
		return fmt.Errorf("want a comma-separated list")
	}
	return nil
}

package mirrorconf

import (
	"errors"
	"fmt"
	"strings"
)

// The three MirrorMaker 2 connectors as Kafka Connect runs them
// (MirrorSourceConnector, MirrorCheckpointConnector,
// MirrorHeartbeatConnector) read one flow's settings from their connector
// config, without the A->B prefixes of mm2.properties: the aliases from
// source.cluster.alias and target.cluster.alias, each cluster's bootstrap
// and security from source.cluster.X and target.cluster.X, client overrides
// from producer.X, consumer.X, admin.X (both clusters) and
// source.consumer.X, target.producer.X... (one cluster, winning), and the
// MirrorMaker settings (topics, groups, offset.lag.max...) by their plain
// names (MirrorConnectorConfig and its subclasses). ParseConnector turns
// such a config into the mm2.properties form and runs Parse on it, so both
// forms accept, default and refuse exactly the same settings.

// ConnectorKind is which of the three connectors a config is for.
type ConnectorKind int

const (
	SourceConnector ConnectorKind = iota
	CheckpointConnector
	HeartbeatConnector
)

// The connector-only settings (MirrorConnectorConfig).
const (
	SourceClusterAlias = "source.cluster.alias"
	TargetClusterAlias = "target.cluster.alias"
	// TargetClusterAliasDefault is MirrorConnectorConfig.TARGET_CLUSTER_ALIAS_DEFAULT;
	// source.cluster.alias has no default.
	TargetClusterAliasDefault = "target"
	sourceClusterPrefix       = "source.cluster."
	targetClusterPrefix       = "target.cluster."
)

// ConnectorConfig is a parsed connector config: one flow between two clusters.
type ConnectorConfig struct {
	// Config holds the two clusters and the flow, as Parse makes them from the translated
	// settings.
	Config         *Config
	Source, Target *Cluster
	// Flow is the flow source->target. For the heartbeat connector it is the pair's
	// heartbeat flow, nil when emit.heartbeats.enabled is false (no task runs).
	Flow *Flow
	// Enabled is the connector's "enabled" (MirrorConnectorConfig.ENABLED, default true):
	// false starts the connector with no tasks, as Kafka's connectors do.
	Enabled bool
}

// runtimeKey reports the settings Kafka Connect's runtime reads for every connector (its
// ConnectorConfig and SourceConnectorConfig): the runtime applies them, the mirror
// connectors read none of them.
func runtimeKey(k string) bool {
	switch k {
	case "name", "connector.class", "connector.plugin.version", "tasks.max.enforce", "transforms", "predicates",
		"key.converter", "value.converter", "header.converter", "exactly.once.support", "transaction.boundary",
		"transaction.boundary.interval.ms", "offsets.storage.topic", "config.action.reload",
		// What the runtime and the connectors add to a task's config (Kafka's task.class,
		// MirrorSourceTaskConfig's and MirrorCheckpointTaskConfig's assignments).
		"task.class", "task.assigned.partitions", "task.assigned.groups", "task.index":
		return true
	}
	for _, p := range []string{"key.converter.", "value.converter.", "header.converter.", "transforms.", "predicates.",
		"errors.", "topic.creation.", "producer.override.", "consumer.override.", "admin.override."} {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}

// connectorRefused are settings the Connect form refuses beyond what Parse refuses.
var connectorRefused = map[string]string{
	"samsa.offset.preserving.enabled": "offset-preserving mirroring appends the source's batches at their offsets, which the Connect runtime's producer cannot do: run it with samsa mirror",
	"exactly.once.source.support":     "a Connect worker setting: set it in the worker's properties (KIP-618)",
	"bootstrap.servers":               "set source.cluster.bootstrap.servers and target.cluster.bootstrap.servers",
}

// ParseConnector parses the config of one of MirrorMaker 2's connectors. Errors name the
// connector's keys; several are joined.
func ParseConnector(kind ConnectorKind, props map[string]string) (*ConnectorConfig, error) {
	src := strings.TrimSpace(props[SourceClusterAlias])
	if src == "" {
		return nil, &Error{Key: SourceClusterAlias, Msg: "required: the alias of the cluster to replicate from (the prefix of remote topic names)"}
	}
	tgt := TargetClusterAliasDefault
	if v, ok := props[TargetClusterAlias]; ok {
		tgt = strings.TrimSpace(v)
	}
	if tgt == "" || tgt == src {
		return nil, &Error{Key: TargetClusterAlias, Msg: fmt.Sprintf("%q: want an alias other than the source's (%s)", tgt, src)}
	}
	t := &translation{src: src, tgt: tgt, flow: src + "->" + tgt, mm: map[string]string{"clusters": src + "," + tgt}, back: map[string]string{}}
	enabled := true
	var errs []error
	for k, v := range props {
		if err := t.add(k, v, &enabled); err != nil {
			errs = append(errs, err)
		}
	}
	t.defaults(kind)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	c, err := Parse(t.mm)
	if err != nil {
		return nil, t.rename(err)
	}
	cc := &ConnectorConfig{Config: c, Source: c.Clusters[src], Target: c.Clusters[tgt], Enabled: enabled}
	flows := c.Flows
	if kind == HeartbeatConnector {
		flows = c.HeartbeatFlows
	}
	if len(flows) == 1 {
		cc.Flow = flows[0]
	}
	return cc, nil
}

// translation builds the mm2.properties form of a connector config, remembering which
// connector key each setting came from.
type translation struct {
	src, tgt, flow string
	mm             map[string]string
	back           map[string]string // mm2.properties key -> connector key
	specific       map[string]bool   // client overrides set for one cluster (win over both)
}

func (t *translation) put(mmKey, connKey, v string) {
	t.mm[mmKey] = v
	t.back[mmKey] = connKey
}

func (t *translation) add(k, v string, enabled *bool) error {
	switch {
	case runtimeKey(k):
		return nil
	case k == SourceClusterAlias || k == TargetClusterAlias:
		return nil
	case k == "clusters":
		// Kafka's documented connector configs carry it; the connectors read only the two
		// aliases, so it must at least name them.
		list := splitList(v)
		for _, a := range []string{t.src, t.tgt} {
			if !containsString(list, a) {
				return &Error{Key: k, Msg: fmt.Sprintf("%q does not name %s (source.cluster.alias and target.cluster.alias must be among clusters)", v, a)}
			}
		}
		return nil
	case k == "enabled":
		b, err := parseBool(v)
		if err != nil {
			return &Error{Key: k, Msg: fmt.Sprintf("%q: %v", v, err)}
		}
		*enabled = b
		return nil
	}
	if reason, ok := connectorRefused[k]; ok {
		return &Error{Key: k, Msg: "not supported: " + reason}
	}
	if _, ok := settingByName[k]; ok {
		t.put(t.flow+"."+k, k, v)
		return nil
	}
	for _, c := range []struct{ prefix, alias string }{{sourceClusterPrefix, t.src}, {targetClusterPrefix, t.tgt}} {
		if rest, ok := strings.CutPrefix(k, c.prefix); ok {
			if rest != "bootstrap.servers" && !isSecurity(rest) {
				side := strings.TrimSuffix(strings.TrimSuffix(c.prefix, "cluster."), ".")
				return &Error{Key: k, Msg: fmt.Sprintf("Kafka's mirror connectors read only bootstrap.servers, security.protocol, ssl.* and sasl.* from %s* (other settings there reach no client): set client settings as %s.consumer.X, %s.producer.X or %s.admin.X",
					c.prefix, side, side, side)}
			}
			t.put(c.alias+"."+rest, k, v)
			return nil
		}
	}
	for _, c := range []struct{ prefix, alias string }{{"source.", t.src}, {"target.", t.tgt}} {
		if rest, ok := strings.CutPrefix(k, c.prefix); ok && isClientRole(rest) {
			t.put(c.alias+"."+rest, k, v)
			t.markSpecific(c.alias + "." + rest)
			return nil
		}
	}
	if isClientRole(k) {
		// producer.X, consumer.X and admin.X reach the clients of both clusters, under the
		// cluster-specific ones (MirrorConnectorConfig.sourceConsumerConfig...).
		for _, a := range []string{t.src, t.tgt} {
			if !t.specific[a+"."+k] {
				t.put(a+"."+k, k, v)
			}
		}
		return nil
	}
	// Anything else goes through as a flow setting, for Parse to refuse with its reason.
	t.put(t.flow+"."+k, k, v)
	return nil
}

func (t *translation) markSpecific(mmKey string) {
	if t.specific == nil {
		t.specific = map[string]bool{}
	}
	t.specific[mmKey] = true
}

func isClientRole(k string) bool {
	for role := range clientSettings {
		if strings.HasPrefix(k, role+".") {
			return true
		}
	}
	return false
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// defaults completes the translated config for the connector kind.
func (t *translation) defaults(kind ConnectorKind) {
	// A connector is one direction: the reverse pair, which mm2.properties would give a
	// heartbeat connector of its own, runs nothing.
	t.mm[t.tgt+"->"+t.src+".emit.heartbeats.enabled"] = "false"
	if kind == HeartbeatConnector {
		// The heartbeat connector writes only to the target; as its own herder pair in
		// mm2.properties, it is a flow that does not replicate.
		t.mm[t.flow+".enabled"] = "false"
		if _, ok := t.mm[t.flow+".emit.heartbeats.enabled"]; !ok {
			t.mm[t.flow+".emit.heartbeats.enabled"] = "true"
		}
	} else {
		t.mm[t.flow+".enabled"] = "true"
	}
	// Samsa's connectors read committed records unless told otherwise: copying records of
	// aborted transactions is rarely what a mirror wants (Kafka's consumer default is
	// read_uncommitted; set source.consumer.isolation.level to have it).
	if _, ok := t.mm[t.src+".consumer.isolation.level"]; !ok {
		t.mm[t.src+".consumer.isolation.level"] = "read_committed"
	}
}

// rename gives Parse's errors the connector's keys.
func (t *translation) rename(err error) error {
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else {
		errs = []error{err}
	}
	out := make([]error, 0, len(errs))
	for _, e := range errs {
		var me *Error
		if !errors.As(e, &me) {
			out = append(out, e)
			continue
		}
		key := me.Key
		if k, ok := t.back[key]; ok {
			key = k
		} else if rest, ok := strings.CutPrefix(key, t.flow+"."); ok {
			key = rest
		} else if rest, ok := strings.CutPrefix(key, t.src+"."); ok {
			key = "source." + rest
		} else if rest, ok := strings.CutPrefix(key, t.tgt+"."); ok {
			key = "target." + rest
		}
		msg := strings.ReplaceAll(me.Msg, t.flow+".", "")
		out = append(out, &Error{Key: key, Msg: msg})
	}
	return errors.Join(out...)
}

// Setting is a MirrorMaker connector setting and Kafka's default, for a connector's
// ConfigDef.
type Setting struct{ Name, Default string }

// ConnectorSettings are the MirrorMaker settings a connector config may carry by their plain
// names (the same ones mm2.properties takes per flow), without the Connect runtime's and
// the refused ones.
func ConnectorSettings() []Setting {
	out := make([]Setting, 0, len(settings))
	for _, s := range settings {
		if runtimeKey(s.name) || connectorRefused[s.name] != "" {
			continue
		}
		out = append(out, Setting{Name: s.name, Default: s.def})
	}
	return out
}

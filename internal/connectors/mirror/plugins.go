package mirror

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/connect"
	mirrorrt "github.com/samsa-io/samsa/internal/mirror"
	"github.com/samsa-io/samsa/internal/mirror/mirrorconf"
	"github.com/samsa-io/samsa/internal/version"
)

// Kafka's class names, so that a MirrorMaker 2 connector config written
// for Kafka Connect runs unchanged.
const (
	SourceClass     = "org.apache.kafka.connect.mirror.MirrorSourceConnector"
	CheckpointClass = "org.apache.kafka.connect.mirror.MirrorCheckpointConnector"
	HeartbeatClass  = "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector"
)

// The task config keys the connectors add (Kafka's TASK_TOPIC_PARTITIONS
// and TASK_CONSUMER_GROUPS).
const (
	TaskAssignedPartitions = "task.assigned.partitions"
	TaskAssignedGroups     = "task.assigned.groups"
	// TaskIndex is the task's number among the connector's (Kafka's
	// MirrorConnectorConfig.TASK_INDEX, for its metrics).
	TaskIndex = "task.index"
)

// byteArrayConverter is the only converter the connectors run with: their
// records are bytes in MirrorMaker 2's formats (the source's own bytes, or
// offset syncs, checkpoints and heartbeats), which any other converter would
// change. Kafka's documentation asks for it; Samsa refuses the config
// without it, since the worker's default (JsonConverter, and for headers
// SimpleHeaderConverter, which writes bytes as base64) would write other
// bytes than the source's.
const byteArrayConverter = "org.apache.kafka.connect.converters.ByteArrayConverter"

// retryBackoff is the wait before the connector's background topic or
// group refresh runs again after a failure.
const retryBackoff = 5 * time.Second

// Plugins are the three connectors.
func Plugins() []connect.Plugin {
	return []connect.Plugin{
		{Class: SourceClass, Aliases: []string{"MirrorSourceConnector", "MirrorSource"}, Type: connect.PluginSource,
			Version: version.String(), New: func() connect.Connector { return &SourceConnector{} }},
		{Class: CheckpointClass, Aliases: []string{"MirrorCheckpointConnector", "MirrorCheckpoint"}, Type: connect.PluginSource,
			Version: version.String(), New: func() connect.Connector { return &CheckpointConnector{} }},
		{Class: HeartbeatClass, Aliases: []string{"MirrorHeartbeatConnector", "MirrorHeartbeat"}, Type: connect.PluginSource,
			Version: version.String(), New: func() connect.Connector { return &HeartbeatConnector{} }},
	}
}

// configDef declares the connector settings (every one MirrorMaker reads,
// with Kafka's defaults) for /connector-plugins and config/validate; the
// checks are mirrorconf's (validate).
func configDef() *connect.ConfigDef {
	d := connect.NewConfigDef()
	str := func(name string, def any, imp connect.Importance, doc string) {
		d.Define(connect.ConfigKey{Name: name, Type: connect.TypeString, Default: def, Importance: imp, Documentation: doc})
	}
	str(mirrorconf.SourceClusterAlias, connect.NoDefault, connect.High, "Alias of source cluster")
	str(mirrorconf.TargetClusterAlias, mirrorconf.TargetClusterAliasDefault, connect.High, "Alias of target cluster. Used in metrics reporting.")
	str("source.cluster.bootstrap.servers", nil, connect.High, "The source cluster's bootstrap servers")
	str("target.cluster.bootstrap.servers", nil, connect.High, "The target cluster's bootstrap servers (the worker's cluster)")
	for _, s := range mirrorconf.ConnectorSettings() {
		switch s.Name {
		case "tasks.max":
			continue // the runtime's
		case "enabled":
			s.Default = "true" // MirrorConnectorConfig's; mm2.properties defaults a flow to off
		}
		str(s.Name, s.Default, connect.Low, "MirrorMaker 2's "+s.Name+" (docs/mirror/config.md)")
	}
	return d
}

// validate reports what the worker would refuse at start, against the
// config's keys; errors on keys the definition does not have go on
// source.cluster.alias, naming their key, so config/validate and a create
// show them.
func validate(kind mirrorconf.ConnectorKind, props map[string]string) []connect.ConfigValue {
	_, err := parse(kind, props)
	if err == nil {
		return nil
	}
	def := configDef()
	byKey := map[string][]string{}
	for _, e := range flatten(err) {
		key, msg := mirrorconf.SourceClusterAlias, e.Error()
		var me *mirrorconf.Error
		if errors.As(e, &me) {
			if _, ok := def.Key(me.Key); ok {
				key, msg = me.Key, me.Msg
			}
		}
		byKey[key] = append(byKey[key], msg)
	}
	var out []connect.ConfigValue
	for k, msgs := range byKey {
		out = append(out, connect.ConfigValue{Name: k, Value: props[k], Errors: msgs, Visible: true})
	}
	return out
}

func flatten(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// parse checks a connector (or task) config: mirrorconf's rules, the
// converters, and the clusters' security.
func parse(kind mirrorconf.ConnectorKind, props map[string]string) (*mirrorconf.ConnectorConfig, error) {
	var errs []error
	for _, k := range []string{"key.converter", "value.converter", "header.converter"} {
		if v := strings.TrimSpace(props[k]); v != byteArrayConverter && v != "ByteArrayConverter" {
			errs = append(errs, &mirrorconf.Error{Key: k, Msg: fmt.Sprintf("%q: MirrorMaker's records are bytes: set key.converter, value.converter and header.converter to %s in the connector config", v, byteArrayConverter)})
		}
	}
	cc, err := mirrorconf.ParseConnector(kind, props)
	if err != nil {
		errs = append(errs, err)
	} else {
		for prefix, c := range map[string]*mirrorconf.Cluster{"source.cluster.": cc.Source, "target.cluster.": cc.Target} {
			if err := checkSecurity(c, prefix); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return cc, nil
}

// checkSecurity checks what securityOpts reads.
func checkSecurity(c *mirrorconf.Cluster, prefix string) error {
	_, err := securityOpts(c, prefix)
	return err
}

// clients makes the franz-go clients of a connector's two clusters: the
// cluster's bootstrap servers, then the options asked for, then the
// cluster's overrides for the role.
type clients struct {
	cfg *mirrorconf.ConnectorConfig
}

func (c clients) cluster(alias string) *mirrorconf.Cluster { return c.cfg.Config.Clusters[alias] }

// clientFunc is mirror.ClientFunc for TopicSync (which adds the overrides).
func (c clients) clientFunc(alias string, opts ...kgo.Opt) (*kgo.Client, error) {
	cl := c.cluster(alias)
	if cl == nil {
		return nil, fmt.Errorf("no cluster %s", alias)
	}
	prefix := "target.cluster."
	if alias == c.cfg.Source.Alias {
		prefix = "source.cluster."
	}
	sec, err := securityOpts(cl, prefix)
	if err != nil {
		return nil, err
	}
	base := append([]kgo.Opt{kgo.SeedBrokers(cl.Bootstrap...)}, sec...)
	return kgo.NewClient(append(base, opts...)...)
}

// client is a client of a cluster for a role ("producer", "consumer",
// "admin") with the role's overrides applied last.
func (c clients) client(alias, role string, opts ...kgo.Opt) (*kgo.Client, error) {
	cl := c.cluster(alias)
	var over map[string]string
	switch role {
	case "producer":
		over = cl.Producer
	case "consumer":
		over = cl.Consumer
	default:
		over = cl.Admin
	}
	more, err := mirrorrt.ClientOverrides(over, role)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", alias, err)
	}
	return c.clientFunc(alias, append(opts, more...)...)
}

// offsetSyncsCluster is where the flow's offset-syncs topic lives.
func offsetSyncsCluster(f *mirrorconf.Flow) string {
	if f.OffsetSyncsTopicLocation == "target" {
		return f.Target
	}
	return f.Source
}

// background runs fn until ctx ends, again after the backoff when it
// fails (a cluster down), logging the failure.
func background(ctx context.Context, log *slog.Logger, what string, fn func(context.Context) error) {
	for ctx.Err() == nil {
		err := fn(ctx)
		if ctx.Err() != nil || err == nil {
			return
		}
		log.Warn("mirror connector: "+what+" failed; trying again", "err", err, "backoff", retryBackoff)
		select {
		case <-ctx.Done():
		case <-time.After(retryBackoff):
		}
	}
}

// sleep waits d or until ctx ends; false when ctx ended.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

package mirrorconf

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// base is the smallest useful file: two clusters, one flow.
func base(extra ...string) map[string]string {
	m := map[string]string{
		"clusters":            "A, B",
		"A.bootstrap.servers": "a1:9092, a2:9092",
		"B.bootstrap.servers": "b1:9092",
		"A->B.enabled":        "true",
	}
	for i := 0; i+1 < len(extra); i += 2 {
		m[extra[i]] = extra[i+1]
	}
	return m
}

func mustParse(t *testing.T, props map[string]string) *Config {
	t.Helper()
	c, err := Parse(props)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return c
}

func flow(t *testing.T, c *Config, name string) *Flow {
	t.Helper()
	for _, f := range c.Flows {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("no enabled flow %s in %v", name, names(c.Flows))
	return nil
}

func names(fs []*Flow) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Name)
	}
	return out
}

// TestDefaults pins every default to Kafka 4's.
func TestDefaults(t *testing.T) {
	c := mustParse(t, base())
	if got := names(c.Flows); !slices.Equal(got, []string{"A->B"}) {
		t.Fatalf("Flows = %v", got)
	}
	// B->A is not enabled, but its herder runs the heartbeat connector
	// (MirrorMakerConfig.clusterPairs: emit.heartbeats.enabled defaults to true).
	if got := names(c.HeartbeatFlows); !slices.Equal(got, []string{"B->A"}) {
		t.Fatalf("HeartbeatFlows = %v", got)
	}
	f := c.Flows[0]
	if f.Source != "A" || f.Target != "B" {
		t.Errorf("source/target %s/%s", f.Source, f.Target)
	}
	for _, tc := range []struct {
		name      string
		on, want  bool
		every     time.Duration
		wantEvery time.Duration
	}{
		{"sync.topic.configs", f.SyncTopicConfigs, true, f.SyncTopicConfigsInterval, 600 * time.Second}, // SYNC_TOPIC_CONFIGS_*_DEFAULT
		{"sync.topic.acls", f.SyncTopicACLs, true, f.SyncTopicACLsInterval, 600 * time.Second},          // SYNC_TOPIC_ACLS_*_DEFAULT
		{"sync.group.offsets", f.SyncGroupOffsets, false, f.SyncGroupOffsetsInterval, 60 * time.Second}, // SYNC_GROUP_OFFSETS_*_DEFAULT
		{"emit.checkpoints", f.EmitCheckpoints, true, f.EmitCheckpointsInterval, 60 * time.Second},      // EMIT_CHECKPOINTS_*_DEFAULT
		{"emit.heartbeats", f.EmitHeartbeats, true, f.EmitHeartbeatsInterval, time.Second},              // EMIT_HEARTBEATS_*_DEFAULT
		{"refresh.topics", f.RefreshTopics, true, f.RefreshTopicsInterval, 600 * time.Second},           // REFRESH_TOPICS_*_DEFAULT
		{"refresh.groups", f.RefreshGroups, true, f.RefreshGroupsInterval, 600 * time.Second},           // REFRESH_GROUPS_*_DEFAULT
	} {
		if tc.on != tc.want || tc.every != tc.wantEvery {
			t.Errorf("%s: %v every %v, want %v every %v", tc.name, tc.on, tc.every, tc.want, tc.wantEvery)
		}
	}
	if f.OffsetLagMax != 100 { // OFFSET_LAG_MAX_DEFAULT
		t.Errorf("OffsetLagMax %d", f.OffsetLagMax)
	}
	if f.ReplicationFactor != 2 { // MirrorSourceConfig.REPLICATION_FACTOR_DEFAULT
		t.Errorf("ReplicationFactor %d", f.ReplicationFactor)
	}
	// OFFSET_SYNCS_TOPIC_, CHECKPOINTS_TOPIC_, HEARTBEATS_TOPIC_REPLICATION_FACTOR_DEFAULT
	if f.OffsetSyncsTopicReplicationFactor != 3 || f.CheckpointsTopicReplicationFactor != 3 || f.HeartbeatsTopicReplicationFactor != 3 {
		t.Errorf("internal topics' replication factors %d %d %d", f.OffsetSyncsTopicReplicationFactor,
			f.CheckpointsTopicReplicationFactor, f.HeartbeatsTopicReplicationFactor)
	}
	if f.OffsetSyncsTopicLocation != "source" { // OFFSET_SYNCS_TOPIC_LOCATION_DEFAULT
		t.Errorf("OffsetSyncsTopicLocation %q", f.OffsetSyncsTopicLocation)
	}
	if !f.EmitOffsetSyncs || !f.ReplicateHeartbeats { // EMIT_OFFSET_SYNCS_ENABLED_DEFAULT, HEARTBEATS_REPLICATION_ENABLED_DEFAULT
		t.Errorf("EmitOffsetSyncs %v ReplicateHeartbeats %v", f.EmitOffsetSyncs, f.ReplicateHeartbeats)
	}
	if f.ExactlyOnce || f.ExactlyOnceRequired || f.OffsetPreserving {
		t.Errorf("ExactlyOnce %v Required %v OffsetPreserving %v", f.ExactlyOnce, f.ExactlyOnceRequired, f.OffsetPreserving)
	}
	if f.TasksMax != 1 { // ConnectorConfig.TASKS_MAX_DEFAULT
		t.Errorf("TasksMax %d", f.TasksMax)
	}
	if f.ConsumerPollTimeout != time.Second || f.AdminTimeout != time.Minute { // CONSUMER_POLL_TIMEOUT_MILLIS_DEFAULT, ADMIN_TASK_TIMEOUT_MILLIS_DEFAULT
		t.Errorf("ConsumerPollTimeout %v AdminTimeout %v", f.ConsumerPollTimeout, f.AdminTimeout)
	}
	if _, ok := f.Policy.(*DefaultReplicationPolicy); !ok || f.RemoteTopic("t") != "A.t" {
		t.Errorf("Policy %T, remote topic %q", f.Policy, f.RemoteTopic("t"))
	}
	if got := f.OffsetSyncsTopic(); got != "mm2-offset-syncs.B.internal" {
		t.Errorf("OffsetSyncsTopic %q", got)
	}
	if got := f.CheckpointsTopic(); got != "A.checkpoints.internal" {
		t.Errorf("CheckpointsTopic %q", got)
	}
	// The default filters.
	if !f.Topics.ShouldReplicateTopic("orders") || f.Topics.ShouldReplicateTopic("__consumer_offsets") {
		t.Error("default topic filter")
	}
	if !f.Groups.ShouldReplicateGroup("app") || f.Groups.ShouldReplicateGroup("console-consumer-1") {
		t.Error("default group filter")
	}
	if f.ConfigFilter.ShouldReplicateConfigProperty("min.insync.replicas") || f.ConfigFilter.ShouldReplicateSourceDefault("retention.ms") {
		t.Error("default config property filter")
	}
	a := c.Clusters["A"]
	if !slices.Equal(a.Bootstrap, []string{"a1:9092", "a2:9092"}) || a.ExactlyOnceSourceSupport != "disabled" {
		t.Errorf("cluster A %+v", a)
	}
	if len(c.Ignored) != 0 {
		t.Errorf("Ignored %v", c.Ignored)
	}
}

func TestPrecedence(t *testing.T) {
	c := mustParse(t, base(
		"B->A.enabled", "true",
		"topics", "top-.*",
		"A->B.topics", "flow-.*",
		"replication.factor", "5",
		"B->A.replication.factor", "-1",
		"sync.group.offsets.enabled", "true",
		"A->B.sync.group.offsets.enabled", "false",
		"replication.policy.separator", "_",
		"B->A.replication.policy.class", "IdentityReplicationPolicy",
		"samsa.offset.preserving.enabled", "true",
		"A->B.samsa.offset.preserving.enabled", "false",
		"emit.heartbeats.interval.seconds", "5",
		"offset-syncs.topic.location", " target",
	))
	ab, ba := flow(t, c, "A->B"), flow(t, c, "B->A")
	if !ab.Topics.ShouldReplicateTopic("flow-x") || ab.Topics.ShouldReplicateTopic("top-x") {
		t.Error("A->B.topics does not override topics")
	}
	if !ba.Topics.ShouldReplicateTopic("top-x") || ba.Topics.ShouldReplicateTopic("flow-x") {
		t.Error("B->A does not take the top-level topics")
	}
	if ab.ReplicationFactor != 5 || ba.ReplicationFactor != -1 {
		t.Errorf("replication factors %d %d", ab.ReplicationFactor, ba.ReplicationFactor)
	}
	if ab.SyncGroupOffsets || !ba.SyncGroupOffsets {
		t.Errorf("sync.group.offsets %v %v", ab.SyncGroupOffsets, ba.SyncGroupOffsets)
	}
	if ab.RemoteTopic("t") != "A_t" {
		t.Errorf("A->B remote topic %q", ab.RemoteTopic("t"))
	}
	if ba.RemoteTopic("t") != "t" || ba.RemoteTopic("heartbeats") != "B_heartbeats" {
		t.Errorf("B->A (identity, separator _) remote topics %q %q", ba.RemoteTopic("t"), ba.RemoteTopic("heartbeats"))
	}
	if ab.OffsetPreserving || !ba.OffsetPreserving {
		t.Errorf("OffsetPreserving %v %v", ab.OffsetPreserving, ba.OffsetPreserving)
	}
	if ab.OffsetSyncsTopicLocation != "target" || ba.OffsetSyncsTopicLocation != "target" {
		t.Errorf("top-level offset-syncs.topic.location %q %q", ab.OffsetSyncsTopicLocation, ba.OffsetSyncsTopicLocation)
	}
	if ab.EmitHeartbeatsInterval != 5*time.Second {
		t.Errorf("EmitHeartbeatsInterval %v", ab.EmitHeartbeatsInterval)
	}
}

func TestPairs(t *testing.T) {
	three := func(extra ...string) map[string]string {
		m := base(extra...)
		m["clusters"] = "A, B, C"
		m["C.bootstrap.servers"] = "c:9092"
		return m
	}
	for _, tc := range []struct {
		name           string
		props          map[string]string
		flows, hbFlows []string
	}{
		{"one flow, heartbeats everywhere", three(), []string{"A->B"},
			[]string{"A->C", "B->A", "B->C", "C->A", "C->B"}},
		{"heartbeats off at top level", three("emit.heartbeats.enabled", "false"), []string{"A->B"}, nil},
		{"heartbeats off for one pair", three("C->A.emit.heartbeats.enabled", "false"), []string{"A->B"},
			[]string{"A->C", "B->A", "B->C", "C->B"}},
		// A top-level enabled=true reaches every connector of every herder (Kafka keeps
		// "enabled" from the top level in connectorBaseConfig).
		{"top-level enabled", three("enabled", "true"), []string{"A->B", "A->C", "B->A", "B->C", "C->A", "C->B"}, nil},
		{"top-level enabled without heartbeats", three("enabled", "true", "emit.heartbeats.enabled", "false"), []string{"A->B"}, nil},
		{"flow disabled explicitly", three("enabled", "true", "B->C.enabled", "false"),
			[]string{"A->B", "A->C", "B->A", "C->A", "C->B"}, []string{"B->C"}},
		{"duplicate alias", base("clusters", "A, B, A"), []string{"A->B"}, []string{"B->A"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := mustParse(t, tc.props)
			if got := names(c.Flows); !slices.Equal(got, tc.flows) {
				t.Errorf("Flows = %v, want %v", got, tc.flows)
			}
			if got := names(c.HeartbeatFlows); !slices.Equal(got, tc.hbFlows) {
				t.Errorf("HeartbeatFlows = %v, want %v", got, tc.hbFlows)
			}
		})
	}
}

// TestIdleFlowSettings: settings of pairs that do not replicate are accepted (Kafka takes
// them) and listed as ignored, but a heartbeat flow's heartbeat settings apply.
func TestIdleFlowSettings(t *testing.T) {
	c := mustParse(t, base(
		"clusters", "A, B, C",
		"C.bootstrap.servers", "c:9092",
		"B->A.enabled", "false",
		"B->A.topics", "x",
		"B->A.emit.heartbeats.interval.seconds", "7",
		"C->A.emit.heartbeats.enabled", "false",
		"C->A.sync.topic.acls.enabled", "false",
	))
	var got []string
	for _, ig := range c.Ignored {
		got = append(got, ig.Key+": "+ig.Reason)
	}
	want := []string{
		"B->A.topics: B->A is not enabled (B->A.enabled is not true): only its heartbeats run",
		"C->A.sync.topic.acls.enabled: C->A neither replicates (C->A.enabled is not true) nor emits heartbeats (emit.heartbeats.enabled is false)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("Ignored\n%v\nwant\n%v", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, f := range c.HeartbeatFlows {
		if f.Name == "B->A" && f.EmitHeartbeatsInterval != 7*time.Second {
			t.Errorf("B->A heartbeat interval %v", f.EmitHeartbeatsInterval)
		}
		if f.Name == "C->A" {
			t.Error("C->A emits heartbeats")
		}
	}
	// Only clusters and their addresses: nothing replicates, every pair emits heartbeats.
	c = mustParse(t, map[string]string{"clusters": "A, B", "A.bootstrap.servers": "a:1", "B.bootstrap.servers": "b:1"})
	if len(c.Flows) != 0 || !slices.Equal(names(c.HeartbeatFlows), []string{"A->B", "B->A"}) {
		t.Errorf("only clusters: flows %v, heartbeat flows %v", names(c.Flows), names(c.HeartbeatFlows))
	}
}

func TestIntervals(t *testing.T) {
	c := mustParse(t, base(
		"refresh.topics.interval.seconds", "-1",
		"sync.topic.acls.enabled", "false",
		"A->B.emit.checkpoints.interval.seconds", "15",
		"sync.group.offsets.enabled", "TRUE",
		"A->B.offset-syncs.topic.location", "target ",
		"A.consumer.isolation.level", " read_committed",
	))
	f := c.Flows[0]
	if f.RefreshTopics {
		t.Error("a negative interval does not disable refresh.topics")
	}
	if f.SyncTopicACLs || f.SyncTopicACLsInterval != 600*time.Second {
		t.Errorf("sync.topic.acls.enabled=false: %v %v", f.SyncTopicACLs, f.SyncTopicACLsInterval)
	}
	if !f.EmitCheckpoints || f.EmitCheckpointsInterval != 15*time.Second {
		t.Errorf("emit.checkpoints %v %v", f.EmitCheckpoints, f.EmitCheckpointsInterval)
	}
	if !f.SyncGroupOffsets {
		t.Error("TRUE not read as true")
	}
	// Values are trimmed, as Kafka's ConfigDef trims them.
	if f.OffsetSyncsTopicLocation != "target" || f.OffsetSyncsTopic() != "mm2-offset-syncs.A.internal" {
		t.Errorf("offset syncs topic %q on %q", f.OffsetSyncsTopic(), f.OffsetSyncsTopicLocation)
	}
	if got := c.Clusters["A"].Consumer["isolation.level"]; got != "read_committed" {
		t.Errorf("isolation.level %q", got)
	}
}

func TestClusters(t *testing.T) {
	c := mustParse(t, base(
		"security.protocol", "SSL",
		"ssl.truststore.location", "/ts.p12",
		"B.security.protocol", "SASL_SSL",
		"B.sasl.mechanism", "PLAIN",
		"A.consumer.isolation.level", "read_committed",
		"A.admin.bootstrap.servers", "a-admin:9092",
		"B.producer.compression.type", "zstd",
		"B.exactly.once.source.support", "Enabled",
		"B.config.storage.replication.factor", "1",
		"offset.storage.topic", "mm2-offsets",
		"key.converter", byteArrayConverter,
	))
	a, b := c.Clusters["A"], c.Clusters["B"]
	// A cluster inherits top-level ssl.* and sasl.* only when its protocol uses them.
	plain := mustParse(t, base("security.protocol", "SASL_SSL", "ssl.truststore.location", "/ts", "sasl.mechanism", "PLAIN",
		"A.security.protocol", "PLAINTEXT", "B.security.protocol", "SSL"))
	if got := plain.Clusters["A"].Security; !maps.Equal(got, map[string]string{"security.protocol": "PLAINTEXT"}) {
		t.Errorf("PLAINTEXT cluster inherits %v", got)
	}
	if got := plain.Clusters["B"].Security; !maps.Equal(got, map[string]string{"security.protocol": "SSL", "ssl.truststore.location": "/ts"}) {
		t.Errorf("SSL cluster inherits %v", got)
	}
	if !maps.Equal(a.Security, map[string]string{"security.protocol": "SSL", "ssl.truststore.location": "/ts.p12"}) {
		t.Errorf("A security %v", a.Security)
	}
	if !maps.Equal(b.Security, map[string]string{"security.protocol": "SASL_SSL", "ssl.truststore.location": "/ts.p12", "sasl.mechanism": "PLAIN"}) {
		t.Errorf("B security %v", b.Security)
	}
	if !maps.Equal(a.Consumer, map[string]string{"isolation.level": "read_committed"}) || !maps.Equal(a.Admin, map[string]string{"bootstrap.servers": "a-admin:9092"}) {
		t.Errorf("A clients %v %v", a.Consumer, a.Admin)
	}
	if !maps.Equal(b.Producer, map[string]string{"compression.type": "zstd"}) || len(b.Consumer) != 0 {
		t.Errorf("B clients %v %v", b.Producer, b.Consumer)
	}
	if b.ExactlyOnceSourceSupport != "enabled" || !c.Flows[0].ExactlyOnce {
		t.Errorf("exactly once %q %v", b.ExactlyOnceSourceSupport, c.Flows[0].ExactlyOnce)
	}
	var keys []string
	for _, ig := range c.Ignored {
		keys = append(keys, ig.Key)
		if ig.Reason == "" {
			t.Errorf("%s ignored without a reason", ig.Key)
		}
	}
	if !slices.Equal(keys, []string{"key.converter", "offset.storage.topic"}) {
		t.Errorf("Ignored %v", keys)
	}
	if b.Worker["config.storage.replication.factor"] == "" {
		t.Errorf("B worker settings %v: B.config.storage.replication.factor is wired", b.Worker)
	}
}

func TestExactlyOnce(t *testing.T) {
	c := mustParse(t, base("B.exactly.once.source.support", "preparing"))
	if c.Flows[0].ExactlyOnce {
		t.Error("preparing turned exactly-once on")
	}
	c = mustParse(t, base("B.exactly.once.source.support", "enabled", "A.consumer.isolation.level", "read_committed",
		"A->B.exactly.once.support", "required"))
	if f := c.Flows[0]; !f.ExactlyOnce || !f.ExactlyOnceRequired {
		t.Errorf("required: %v %v", f.ExactlyOnce, f.ExactlyOnceRequired)
	}
	// The heartbeat flow into A is not exactly-once: A's support is disabled.
	if c.HeartbeatFlows[0].ExactlyOnce {
		t.Error("B->A exactly once")
	}
}

func TestShouldReplicateTopic(t *testing.T) {
	c := mustParse(t, base("B->A.enabled", "true", "topics", "orders, heartbeats-not"))
	ab := flow(t, c, "A->B")
	for _, tc := range []struct {
		topic string
		want  bool
	}{
		{"orders", true},
		{"payments", false},
		{"heartbeats", true},    // heartbeats.replication.enabled, though the filter leaves it out
		{"C.heartbeats", true},  // a heartbeats topic from further upstream
		{"B.heartbeats", false}, // came from the target
		{"B.orders", false},     // cycle, even if the filter took it
		{"__consumer_offsets", false},
	} {
		if got := ab.ShouldReplicateTopic(tc.topic); got != tc.want {
			t.Errorf("ShouldReplicateTopic(%q) = %v, want %v", tc.topic, got, tc.want)
		}
	}
	c = mustParse(t, base("A->B.heartbeats.replication.enabled", "false", "topics", "orders"))
	if c.Flows[0].ShouldReplicateTopic("heartbeats") {
		t.Error("heartbeats.replication.enabled=false still replicates heartbeats outside the filter")
	}
	c = mustParse(t, base("topics", ".*", "topics.exclude", ""))
	if c.Flows[0].ShouldReplicateTopic("B.x") || !c.Flows[0].ShouldReplicateTopic("x") {
		t.Error("cycle not stopped with an empty exclude list")
	}
}

// TestRefusals: everything Samsa cannot honour is refused by name, with why.
func TestRefusals(t *testing.T) {
	for _, tc := range []struct {
		name  string
		props map[string]string
		want  string
	}{
		{"no clusters", map[string]string{"A.bootstrap.servers": "a:1"}, "clusters: required"},
		{"empty alias", map[string]string{"clusters": "A,,B"}, `clusters: "A,,B": an alias is empty`},
		{"no alias", map[string]string{"clusters": " "}, "clusters: no alias given"},
		{"alias prefixes a setting", map[string]string{"clusters": "topics, B"}, `clusters: alias "topics" would make the setting topics.exclude ambiguous`},
		{"arrow in alias", map[string]string{"clusters": "A->B"}, `alias "A->B" contains "->"`},
		{"missing bootstrap of source", base("A.bootstrap.servers", ""), `A.bootstrap.servers: "": want a comma-separated list`},
		{"missing bootstrap", func() map[string]string { m := base(); delete(m, "A.bootstrap.servers"); return m }(),
			"A.bootstrap.servers: required: A is the source of flow A->B"},
		{"missing bootstrap of heartbeat target", func() map[string]string {
			m := base()
			m["clusters"] = "A, B, C"
			return m
		}(), "C.bootstrap.servers: required: C is the target of flow A->C, which emits heartbeats into it (emit.heartbeats.enabled=false stops that)"},
		{"unknown top level", base("topic", "x"), "topic: unknown MirrorMaker setting (nearest known: topics)"},
		{"unknown flow", base("A->B.sync.topic.acl.enabled", "true"), "A->B.sync.topic.acl.enabled: unknown MirrorMaker setting (nearest known: A->B.sync.topic.acls.enabled)"},
		{"unknown cluster", base("A.bootstrap.server", "x"), "A.bootstrap.server: unknown MirrorMaker setting (nearest known: A.bootstrap.servers)"},
		{"unknown alias in flow", base("A->C.enabled", "true"), "A->C.enabled: want <source>-><target>.<setting> with both aliases in clusters (A, B)"},
		{"unknown source in flow", base("X->B.enabled", "true"), `X->B.enabled: "X" is not one of clusters (A, B)`},
		{"self flow", base("A->A.enabled", "true"), "A->A.enabled: a flow's source and target must differ"},
		{"custom policy", base("replication.policy.class", "com.acme.Policy"),
			"replication.policy.class: com.acme.Policy is not supported: Samsa implements only org.apache.kafka.connect.mirror.DefaultReplicationPolicy and org.apache.kafka.connect.mirror.IdentityReplicationPolicy"},
		{"empty separator", base("A->B.replication.policy.separator", ""), "A->B.replication.policy.separator: empty"},
		{"custom topic filter", base("topic.filter.class", "com.acme.Filter"),
			`topic.filter.class: "com.acme.Filter": only org.apache.kafka.connect.mirror.DefaultTopicFilter is supported`},
		{"custom group filter", base("A->B.group.filter.class", "com.acme.Filter"), "only org.apache.kafka.connect.mirror.DefaultGroupFilter"},
		{"custom config filter", base("config.property.filter.class", "x"), "only org.apache.kafka.connect.mirror.DefaultConfigPropertyFilter"},
		{"forwarding admin", base("forwarding.admin.class", "x"), "only org.apache.kafka.clients.admin.ForwardingAdmin"},
		{"java regex", base("topics", "(?!internal).*"), "topics: \"(?!internal).*\" is not a regular expression Samsa can match"},
		{"cluster-level connector setting", base("A.topics", "x"),
			"A.topics: Kafka's MirrorMaker reads connector settings only at top level or per flow, never per cluster (A.topics would reach no connector): set topics, or <source>-><target>.topics"},
		{"top-level use.defaults.from", base("use.defaults.from", "source"),
			"use.defaults.from: Kafka's MirrorMaker passes use.defaults.from to its connectors only per flow (at top level it reaches none): set <source>-><target>.use.defaults.from"},
		{"bad use.defaults.from", base("A->B.use.defaults.from", "Source"), `A->B.use.defaults.from: "Source": want source or target`},
		{"top-level exactly once", base("exactly.once.source.support", "enabled"),
			"exactly.once.source.support: not supported: Kafka reads it only per target cluster"},
		{"flow-level exactly once", base("A->B.exactly.once.source.support", "enabled"), "A->B.exactly.once.source.support: not supported: Kafka reads it only per target cluster"},
		{"bad exactly once", base("B.exactly.once.source.support", "on"), `B.exactly.once.source.support: "on": want enabled or preparing or disabled`},
		{"required without support", base("A->B.exactly.once.support", "required"),
			"A->B.exactly.once.support: required, but B.exactly.once.source.support is disabled, not enabled"},
		{"required without read_committed", base("A->B.exactly.once.support", "required", "B.exactly.once.source.support", "enabled"),
			"MirrorSourceConnector can only provide exactly-once guarantees when its source consumer is configured with isolation.level set to 'read_committed' (set A.consumer.isolation.level = read_committed)"},
		{"interval transaction boundary", base("A->B.transaction.boundary", "interval"), `A->B.transaction.boundary: "interval": want poll`},
		{"offset syncs off with checkpoints", base("A->B.emit.offset-syncs.enabled", "false"),
			"A->B.emit.offset-syncs.enabled: MirrorCheckpointConnector can't run without offset syncs"},
		{"offset syncs off with group sync", base("emit.offset-syncs.enabled", "false", "emit.checkpoints.enabled", "false", "sync.group.offsets.enabled", "true"),
			"emit.offset-syncs.enabled: group offsets cannot be synced without offset syncs"},
		{"offset syncs off with location", base("emit.offset-syncs.enabled", "false", "emit.checkpoints.enabled", "false", "A->B.offset-syncs.topic.location", "target"),
			"A->B.offset-syncs.topic.location: MirrorSourceConnector can't setup offset-syncs feature while emit.offset-syncs.enabled set to false"},
		{"zero interval", base("sync.topic.configs.interval.seconds", "0"), `sync.topic.configs.interval.seconds: "0": want seconds: a positive number, or negative to disable`},
		{"huge interval", base("refresh.groups.interval.seconds", "9223372036854775807"), "want at most 9223372036 seconds"},
		{"not a number", base("offset.lag.max", "lots"), `offset.lag.max: "lots": want a whole number`},
		{"bad bool", base("A->B.enabled", "yes"), `A->B.enabled: "yes": want true or false`},
		{"zero replication factor", base("replication.factor", "0"), "want a replication factor from 1 to 32767, or -1"},
		{"big replication factor", base("heartbeats.topic.replication.factor", "40000"), "want a replication factor from 1 to 32767"},
		{"bad location", base("offset-syncs.topic.location", "Target"), `"Target": want source or target`},
		{"tasks.max zero", base("tasks.max", "0"), `tasks.max: "0": want a whole number from 1 to 2147483647`},
		{"config providers", base("config.providers", "file"), "config.providers: not supported: Samsa runs no Kafka ConfigProviders"},
		{"config provider class", base("config.providers.file.class", "x"), "config.providers.file.class: not supported"},
		{"transforms", base("A->B.transforms", "x"), "A->B.transforms: not supported: MirrorMaker copies records as they are"},
		{"errors", base("errors.deadletterqueue.topic.name", "x"), "not supported: a mirror that skipped records"},
		{"metric reporters", base("metric.reporters", "x"), "metric.reporters: not supported"},
		{"source alias", base("A->B.source.cluster.alias", "x"), "A->B.source.cluster.alias: not supported: a flow's source alias is the A of A->B"},
		{"top-level client", base("producer.linger.ms", "5"), "producer.linger.ms: Kafka's MirrorMaker does not apply top-level client settings: set it per cluster, as <alias>.producer.linger.ms"},
		{"flow-level client", base("A->B.consumer.isolation.level", "read_committed"), "A->B.consumer.isolation.level: client settings are per cluster in Samsa"},
		{"flow-level source client", base("A->B.source.admin.client.id", "x"), "client settings are per cluster in Samsa"},
		{"flow-level security", base("A->B.security.protocol", "SSL"), "A->B.security.protocol: security is per cluster in Samsa: set A.security.protocol and B.security.protocol"},
		{"unsupported client setting", base("A.consumer.partition.assignment.strategy", "x"),
			"A.consumer.partition.assignment.strategy: consumer client setting partition.assignment.strategy is not supported by Samsa's mirror"},
		{"bad client value", base("B.producer.compression.type", "brotli"), `B.producer.compression.type: "brotli": want none or gzip or snappy or lz4 or zstd`},
		{"auto commit", base("A.consumer.enable.auto.commit", "true"), `A.consumer.enable.auto.commit: "true": want false`},
		{"converter", base("value.converter", "org.apache.kafka.connect.json.JsonConverter"), "value.converter: \"org.apache.kafka.connect.json.JsonConverter\": only org.apache.kafka.connect.converters.ByteArrayConverter"},
		{"worker setting", base("task.shutdown.graceful.timeout.ms", "5"), "task.shutdown.graceful.timeout.ms: not supported: a Connect worker setting"},
		{"top-level bootstrap", base("bootstrap.servers", "x:1"), "bootstrap.servers: not supported: set it per cluster"},
		{"rest at cluster level", base("A.listeners", "http://:8083"), "A.listeners: unknown MirrorMaker setting"},
		{"removed in 4.0", base("A->B.topics.blacklist", "x"), "A->B.topics.blacklist: not supported: removed in Kafka 4.0: use topics.exclude"},
		{"removed in 4.0 at top level", base("use.incremental.alter.configs", "requested"), "use.incremental.alter.configs: not supported: removed in Kafka 4.0"},
		{"topic creation", base("A->B.topic.creation.default.partitions", "3"), "not supported: MirrorMaker creates remote topics itself"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.props)
			wantErr(t, err, tc.want)
		})
	}
}

// TestAllErrorsReported: one pass names every bad setting.
func TestAllErrorsReported(t *testing.T) {
	_, err := Parse(base("topic", "x", "A->B.enabled", "maybe", "B.producer.acks", "2"))
	if err == nil {
		t.Fatal("no error")
	}
	var joined interface{ Unwrap() []error }
	if !errors.As(err, &joined) || len(joined.Unwrap()) != 3 {
		t.Fatalf("want 3 errors, got %v", err)
	}
}

func TestMissingBootstrapOnce(t *testing.T) {
	_, err := Parse(map[string]string{"clusters": "A, B, C", "A.bootstrap.servers": "a:1", "enabled": "true"})
	wantErr(t, err, "B.bootstrap.servers: required: B is the target of flow A->B")
	if n := strings.Count(err.Error(), "B.bootstrap.servers"); n != 1 {
		t.Errorf("B's missing address reported %d times:\n%v", n, err)
	}
}

func TestAliases(t *testing.T) {
	// With aliases "a" and "a.b", a key's alias is the longest that prefixes it.
	c := mustParse(t, map[string]string{
		"clusters":              "a, a.b",
		"a.bootstrap.servers":   "a:9092",
		"a.b.bootstrap.servers": "ab:9092",
		"a->a.b.enabled":        "true",
		"a->a.b.topics":         "x",
	})
	if got := c.Clusters["a.b"].Bootstrap; !slices.Equal(got, []string{"ab:9092"}) {
		t.Errorf("a.b bootstrap %v", got)
	}
	if got := c.Clusters["a"].Bootstrap; !slices.Equal(got, []string{"a:9092"}) {
		t.Errorf("a bootstrap %v", got)
	}
	f := flow(t, c, "a->a.b")
	if !f.Topics.ShouldReplicateTopic("x") || f.Topics.ShouldReplicateTopic("y") {
		t.Error("a->a.b.topics not applied")
	}
}

func TestExamples(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "..", "docs", "mirror", "examples")

	c, err := ParseFile(filepath.Join(dir, "active-passive.properties"))
	if err != nil {
		t.Fatal(err)
	}
	if got := names(c.Flows); !slices.Equal(got, []string{"primary->backup"}) {
		t.Errorf("active/passive flows %v", got)
	}
	if got := names(c.HeartbeatFlows); !slices.Equal(got, []string{"backup->primary"}) {
		t.Errorf("active/passive heartbeat flows %v", got)
	}
	f := c.Flows[0]
	if !f.ExactlyOnce || !f.ExactlyOnceRequired || !f.SyncGroupOffsets || f.SyncGroupOffsetsInterval != 30*time.Second || f.TasksMax != 4 {
		t.Errorf("active/passive flow %+v", f)
	}
	if !f.ShouldReplicateTopic("orders.eu") || f.ShouldReplicateTopic("inventory") {
		t.Error("active/passive topics")
	}
	if got := c.Clusters["backup"].Security["sasl.mechanism"]; got != "SCRAM-SHA-512" {
		t.Errorf("backup sasl.mechanism %q", got)
	}
	if got := c.Clusters["backup"].Security["sasl.jaas.config"]; !strings.Contains(got, `password="mirror-secret";`) {
		t.Errorf("backup sasl.jaas.config %q", got)
	}
	if got := c.Clusters["primary"].Security["security.protocol"]; got != "SSL" {
		t.Errorf("primary security.protocol %q", got)
	}
	if len(c.Ignored) != 0 {
		t.Errorf("active/passive ignored %v", c.Ignored)
	}
	if w := c.Clusters["backup"].Worker; w["offset.storage.replication.factor"] != "3" || w["status.storage.replication.factor"] != "3" {
		t.Errorf("backup worker settings %v", w)
	}

	c, err = ParseFile(filepath.Join(dir, "active-active.properties"))
	if err != nil {
		t.Fatal(err)
	}
	if got := names(c.Flows); !slices.Equal(got, []string{"us-east->us-west", "us-west->us-east"}) {
		t.Errorf("active/active flows %v", got)
	}
	if len(c.HeartbeatFlows) != 0 {
		t.Errorf("active/active heartbeat flows %v", names(c.HeartbeatFlows))
	}
	we, ew := flow(t, c, "us-west->us-east"), flow(t, c, "us-east->us-west")
	if we.ShouldReplicateTopic("staging-x") || !ew.ShouldReplicateTopic("staging-x") {
		t.Error("per-flow topics.exclude")
	}
	if we.ShouldReplicateTopic("us-east.orders") || !we.ShouldReplicateTopic("orders") {
		t.Error("active/active cycle")
	}
	if !we.SyncGroupOffsets || we.SyncTopicACLsInterval != 300*time.Second || we.TasksMax != 8 || we.ReplicationFactor != 3 {
		t.Errorf("active/active flow %+v", we)
	}
	if we.Groups.ShouldReplicateGroup("test-1") {
		t.Error("groups.exclude")
	}
}

func FuzzParse(f *testing.F) {
	f.Add("clusters", "A,B", "A->B.topics", ".*", "B.producer.acks", "all")
	f.Add("clusters", "a, a.b", "a->a.b.enabled", "true", "a.b.bootstrap.servers", "x")
	f.Add("clusters", "->", "", "", ".", ".")
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2, k3, v3 string) {
		props := base(k1, v1, k2, v2, k3, v3)
		c, err := Parse(props)
		if err != nil {
			return
		}
		// What parses is usable: every flow has its policy and filters, and its methods do
		// not panic on the fuzzed strings.
		for _, fl := range append(c.Flows, c.HeartbeatFlows...) {
			for _, s := range []string{k1, v1, k2, v2, k3, v3} {
				fl.ShouldReplicateTopic(s)
				fl.Groups.ShouldReplicateGroup(s)
				fl.ConfigFilter.ShouldReplicateConfigProperty(s)
				fl.Policy.OriginalTopic(s)
				IsCycle(fl.Policy, s, fl.Target)
				TargetACL(ACLBinding{ResourceName: s}, fl.Policy, fl.Source)
			}
		}
	})
}

// TestParseFileLines: ParseFile's errors name the line that sets each bad key, and a bad
// top-level value shared by several flows is reported once.
func TestParseFileLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mm2.properties")
	text := "# comment\n" +
		"clusters = A, B\n" +
		"A.bootstrap.servers = a:9092\n" +
		"B.bootstrap.servers = \\\n  b:9092\n" +
		"topic = x\n" +
		"enabled = true\n" +
		"topics = (?=x)\n" +
		"A\\u002d>B.offset.lag.max: many\n" +
		"A->B.tasks.max = \\\n    0\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ParseFile(path)
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	for _, want := range []string{
		path + ":6: topic: unknown MirrorMaker setting (nearest known: topics)",
		path + ":8: topics: \"(?=x)\" is not a regular expression",
		path + `:9: A->B.offset.lag.max: "many": want a whole number`,
		path + `:10: A->B.tasks.max: "0": want a whole number from 1`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error\n%s\ndoes not contain\n%s", msg, want)
		}
	}
	if n := strings.Count(msg, "is not a regular expression"); n != 1 {
		t.Errorf("the top-level topics error is reported %d times:\n%s", n, msg)
	}
	if _, err := ParseFile(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("no error for a missing file")
	}
}

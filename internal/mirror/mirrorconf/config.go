package mirrorconf

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/magiconair/properties"
)

// Config is a parsed mm2.properties.
type Config struct {
	Clusters map[string]*Cluster
	// Flows is every enabled A->B, sorted by name: each replicates topics (MirrorSourceConnector),
	// checkpoints groups (MirrorCheckpointConnector) and emits heartbeats
	// (MirrorHeartbeatConnector) when its EmitHeartbeats is on.
	Flows []*Flow
	// HeartbeatFlows are the pairs that are not enabled but still emit heartbeats into their
	// target, sorted: Kafka runs a herder, and its MirrorHeartbeatConnector, for every pair of
	// clusters unless emit.heartbeats.enabled=false (MirrorMakerConfig.clusterPairs), so that
	// the heartbeats of B->A are replicated back by A->B and show the flow is alive. Only the
	// heartbeat fields of these flows matter.
	HeartbeatFlows []*Flow
	// Ignored lists the settings of the file that were accepted but have no effect in Samsa,
	// sorted by key, for the caller to log.
	Ignored []Ignored
}

// Ignored is an accepted setting without effect, and why it has none.
type Ignored struct{ Key, Reason string }

// Cluster is one alias of clusters.
type Cluster struct {
	Alias     string
	Bootstrap []string
	// Security holds security.protocol, ssl.* and sasl.* for this cluster: the top-level ones
	// overridden by <alias>.X (MirrorMakerConfig.clusterProps). The caller turns them into
	// client options and refuses what it cannot honour.
	Security map[string]string
	// Producer, Consumer and Admin are <alias>.producer.X, .consumer.X and .admin.X, prefix
	// stripped: the clients writing to, reading from and administering this cluster. Only
	// the names in clientSettings are accepted, and the runtime must honour each of them.
	Producer, Consumer, Admin map[string]string
	// ExactlyOnceSourceSupport is <alias>.exactly.once.source.support (enabled, preparing or
	// disabled, Kafka's DistributedConfig default "disabled"): enabled makes the flows into
	// this cluster write with transactions.
	ExactlyOnceSourceSupport string
	// Worker holds the Connect worker settings the mirror honours for the flows into this
	// cluster (workerSettings: offset.flush.interval.ms and the worker topics' partitions and
	// replication factors), top level overridden by <alias>.X.
	Worker map[string]string
}

// Flow is one source->target replication with its settings resolved: flow-level
// (A->B.name) over top-level (name) over Kafka's default.
type Flow struct {
	Source, Target string
	Name           string // "A->B"

	// Topics is the topic filter alone: replication asks ShouldReplicateTopic (which adds
	// heartbeats, internal topics and cycles, as MirrorSourceConnector), checkpoints ask
	// Topics directly (MirrorCheckpointTask.shouldCheckpointTopic).
	Topics TopicFilter
	// Groups selects the consumer groups whose offsets are checkpointed and synced.
	Groups GroupFilter
	// ConfigFilter selects the topic configs copied to remote topics.
	ConfigFilter ConfigPropertyFilter
	// Policy names remote and internal topics; the identity policy knows this flow's source.
	Policy ReplicationPolicy

	// Each periodic task is on when its .enabled is true and its .interval.seconds is
	// positive (a negative interval disables it in Kafka); the interval is as configured.
	SyncTopicConfigs         bool
	SyncTopicConfigsInterval time.Duration
	SyncTopicACLs            bool
	SyncTopicACLsInterval    time.Duration
	SyncGroupOffsets         bool
	SyncGroupOffsetsInterval time.Duration
	EmitCheckpoints          bool
	EmitCheckpointsInterval  time.Duration
	EmitHeartbeats           bool
	EmitHeartbeatsInterval   time.Duration
	RefreshTopics            bool
	RefreshTopicsInterval    time.Duration
	RefreshGroups            bool
	RefreshGroupsInterval    time.Duration

	// OffsetLagMax is offset.lag.max: an offset sync is emitted when the target's offset has
	// drifted this far from the last one synced.
	OffsetLagMax int64
	// ReplicationFactor of the remote topics MirrorMaker creates; -1 is the target broker's
	// default.replication.factor.
	ReplicationFactor                 int16
	OffsetSyncsTopicReplicationFactor int16
	CheckpointsTopicReplicationFactor int16
	HeartbeatsTopicReplicationFactor  int16
	// OffsetSyncsTopicLocation is "source" (Kafka's default) or "target": the cluster that
	// holds the offset-syncs topic, named by OffsetSyncsTopic.
	OffsetSyncsTopicLocation string
	// EmitOffsetSyncs is emit.offset-syncs.enabled; false requires EmitCheckpoints and
	// SyncGroupOffsets off, as Kafka's MirrorCheckpointConfig.validate does.
	EmitOffsetSyncs bool
	// ReplicateHeartbeats is heartbeats.replication.enabled: heartbeats topics are replicated
	// even when the topic filter leaves them out.
	ReplicateHeartbeats bool

	// ExactlyOnce: the target's <target>.exactly.once.source.support is enabled, so records
	// and their source offsets are written in transactions (KIP-618). "preparing" is not
	// enabled. The source consumer should then read read_committed
	// (<source>.consumer.isolation.level), or aborted records are copied too.
	ExactlyOnce bool
	// ExactlyOnceRequired is A->B.exactly.once.support=required: Parse has checked that
	// ExactlyOnce is on and the source consumer reads read_committed.
	ExactlyOnceRequired bool
	// OffsetPreserving is Samsa's samsa.offset.preserving.enabled (default false).
	OffsetPreserving bool

	TasksMax            int
	ConsumerPollTimeout time.Duration // consumer.poll.timeout.ms
	AdminTimeout        time.Duration // admin.timeout.ms
}

// OffsetSyncsTopic is the flow's offset-syncs topic, on the cluster OffsetSyncsTopicLocation
// names: named after the other cluster (MirrorSourceConfig.offsetSyncsTopic).
func (f *Flow) OffsetSyncsTopic() string {
	if f.OffsetSyncsTopicLocation == "source" {
		return f.Policy.OffsetSyncsTopic(f.Target)
	}
	return f.Policy.OffsetSyncsTopic(f.Source)
}

// CheckpointsTopic is the flow's checkpoints topic on the target.
func (f *Flow) CheckpointsTopic() string { return f.Policy.CheckpointsTopic(f.Source) }

// RemoteTopic is the name on the target of a source topic.
func (f *Flow) RemoteTopic(topic string) string { return f.Policy.FormatRemoteTopic(f.Source, topic) }

// ShouldReplicateTopic is MirrorSourceConnector.shouldReplicateTopic: the filter takes it (or
// it is a heartbeats topic and ReplicateHeartbeats is on), it is not internal, and it did
// not come from the target.
func (f *Flow) ShouldReplicateTopic(topic string) bool {
	return (f.Topics.ShouldReplicateTopic(topic) || f.ReplicateHeartbeats && f.Policy.IsHeartbeatsTopic(topic)) &&
		!f.Policy.IsInternalTopic(topic) && !IsCycle(f.Policy, topic, f.Target)
}

// ParseFile reads an mm2.properties file (Java properties in UTF-8, ${...} left as written)
// and parses it.
func ParseFile(path string) (*Config, error) {
	buf, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("mirrorconf: %w", err)
	}
	loader := properties.Loader{Encoding: properties.UTF8, DisableExpansion: true}
	p, err := loader.LoadBytes(buf)
	if err != nil {
		return nil, fmt.Errorf("mirrorconf: read %s: %w", path, err)
	}
	c, err := Parse(p.Map())
	if err != nil {
		return nil, fmt.Errorf("mirrorconf: %w", withLines(err, path, keyLines(string(buf))))
	}
	return c, nil
}

// flowErr records an error building flow: the *Error's key becomes the key that set the
// value (A->B.name, or the top-level name, whose error all flows share and Parse reports
// once).
func (p *parser) flowErr(flow string, err error) {
	var me *Error
	if !errors.As(err, &me) {
		p.errs = append(p.errs, fmt.Errorf("%s: %w", flow, err))
		return
	}
	if _, ok := p.flow[flow][me.Key]; ok {
		me.Key = flow + "." + me.Key
	}
	for _, e := range p.errs {
		if e.Error() == me.Error() {
			return
		}
	}
	p.errs = append(p.errs, me)
}

// parser holds the file's settings sorted by where they apply.
type parser struct {
	aliases []string
	top     map[string]string            // connector settings and security at top level
	cluster map[string]map[string]string // alias -> name -> value
	flow    map[string]map[string]string // "A->B" -> name -> value
	errs    []error
	ignored []Ignored
}

func (p *parser) fail(key, format string, args ...any) {
	p.errs = append(p.errs, &Error{Key: key, Msg: fmt.Sprintf(format, args...)})
}

// Parse validates an mm2.properties' settings and resolves its flows. Every setting must be
// one Samsa honours, or one of the Connect worker settings it accepts without effect
// (Config.Ignored); anything else is refused, each refusal named in the joined error.
func Parse(props map[string]string) (*Config, error) {
	p := &parser{top: map[string]string{}, cluster: map[string]map[string]string{}, flow: map[string]map[string]string{}}
	raw, ok := props["clusters"]
	if !ok {
		return nil, &Error{Key: "clusters", Msg: "required: the comma-separated aliases of the clusters, e.g. clusters = primary, backup"}
	}
	if err := p.readAliases(raw); err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if k != "clusters" {
			p.classify(k, props[k])
		}
	}
	// Build even after refusals, so that one pass reports the flows' errors too (a refused
	// value was not kept: the flow is built with the rest).
	c := p.build()
	if len(p.errs) > 0 {
		return nil, errors.Join(p.errs...)
	}
	return c, nil
}

// readAliases reads clusters, a LIST: trimmed, comma-separated; duplicates collapse (Kafka
// keeps them in a set).
func (p *parser) readAliases(raw string) error {
	for _, a := range splitList(raw) {
		switch {
		case a == "":
			return &Error{Key: "clusters", Msg: fmt.Sprintf("%q: an alias is empty", raw)}
		case strings.Contains(a, "->"):
			return &Error{Key: "clusters", Msg: fmt.Sprintf("alias %q contains \"->\", which separates the aliases of a flow", a)}
		case strings.ContainsAny(a, " \t"):
			return &Error{Key: "clusters", Msg: fmt.Sprintf("alias %q contains a space", a)}
		}
		// An alias that is the first word of a top-level setting would make that setting
		// read as the alias's (topics.exclude as cluster "topics"'s "exclude").
		for _, name := range sorted(settingNames(true)) {
			if strings.HasPrefix(name, a+".") {
				return &Error{Key: "clusters", Msg: fmt.Sprintf("alias %q would make the setting %s ambiguous: choose another alias", a, name)}
			}
		}
		if !slices.Contains(p.aliases, a) {
			p.aliases = append(p.aliases, a)
		}
	}
	if len(p.aliases) == 0 {
		return &Error{Key: "clusters", Msg: "no alias given"}
	}
	// Longest first, so that with aliases "a" and "a.b" the key a.b.bootstrap.servers is b's.
	sort.Slice(p.aliases, func(i, j int) bool {
		if len(p.aliases[i]) != len(p.aliases[j]) {
			return len(p.aliases[i]) > len(p.aliases[j])
		}
		return p.aliases[i] < p.aliases[j]
	})
	return nil
}

// aliasPrefix returns the alias k starts with (followed by "."), and the rest.
func (p *parser) aliasPrefix(k string) (string, string, bool) {
	for _, a := range p.aliases {
		if strings.HasPrefix(k, a+".") {
			return a, k[len(a)+1:], true
		}
	}
	return "", "", false
}

func (p *parser) classify(k, v string) {
	if i := strings.Index(k, "->"); i >= 0 {
		p.classifyFlow(k, i, v)
		return
	}
	if alias, name, ok := p.aliasPrefix(k); ok {
		p.classifyCluster(k, alias, name, v)
		return
	}
	p.classifyTop(k, v)
}

func (p *parser) classifyFlow(k string, i int, v string) {
	src := k[:i]
	if !slices.Contains(p.aliases, src) {
		p.fail(k, "%q is not one of clusters (%s)", src, strings.Join(sorted(p.aliases), ", "))
		return
	}
	tgt, name, ok := p.aliasPrefix(k[i+2:])
	if !ok {
		p.fail(k, "want <source>-><target>.<setting> with both aliases in clusters (%s)", strings.Join(sorted(p.aliases), ", "))
		return
	}
	if tgt == src {
		p.fail(k, "a flow's source and target must differ")
		return
	}
	flow := src + "->" + tgt
	if s, ok := settingByName[name]; ok {
		if p.checkValue(k, v, s.check) {
			put(p.flow, flow, name, settingValue(name, v))
		}
		return
	}
	if _, ok := refused[name]; ok {
		p.refuseOrUnknown(k, name, flow+".", nil)
		return
	}
	switch {
	case isSecurity(name):
		p.fail(k, "security is per cluster in Samsa: set %s.%s and %s.%s", src, name, tgt, name)
	case strings.HasPrefix(name, "producer.") || strings.HasPrefix(name, "consumer.") || strings.HasPrefix(name, "admin.") ||
		strings.HasPrefix(name, "source.") || strings.HasPrefix(name, "target."):
		p.fail(k, "client settings are per cluster in Samsa: set <alias>.producer.X, <alias>.consumer.X or <alias>.admin.X")
	default:
		p.refuseOrUnknown(k, name, flow+".", settingNames(false))
	}
}

func (p *parser) classifyCluster(k, alias, name string, v string) {
	switch {
	case name == "bootstrap.servers":
		if p.checkValue(k, v, isList) {
			put(p.cluster, alias, name, v)
		}
		return
	case isSecurity(name):
		put(p.cluster, alias, name, v)
		return
	case name == "exactly.once.source.support":
		if p.checkValue(k, v, oneOfFold("enabled", "preparing", "disabled")) {
			put(p.cluster, alias, name, strings.ToLower(strings.TrimSpace(v)))
		}
		return
	case workerSettings[name] != nil:
		if p.checkValue(k, v, workerSettings[name]) {
			put(p.cluster, alias, name, strings.TrimSpace(v))
		}
		return
	case clusterIgnored(name):
		if p.checkValue(k, v, func(v string) error { return checkIgnored(name, v) }) {
			reason := ignored[name]
			if name == "group.id" {
				reason = "Samsa's mirror runs no Connect worker group"
			}
			p.ignored = append(p.ignored, Ignored{Key: k, Reason: reason})
		}
		return
	}
	if role, rest, ok := strings.Cut(name, "."); ok {
		if known, isRole := clientSettings[role]; isRole {
			chk, ok := known[rest]
			if !ok {
				names := make([]string, 0, len(known))
				for n := range known {
					names = append(names, role+"."+n)
				}
				p.fail(k, "%s client setting %s is not supported by Samsa's mirror (supported: %s)%s",
					role, rest, strings.Join(sorted(names), ", "), nearest(name, names, alias+"."))
				return
			}
			if p.checkValue(k, v, chk) {
				put(p.cluster, alias, name, strings.TrimSpace(v))
			}
			return
		}
	}
	if _, ok := settingByName[name]; ok {
		p.fail(k, "Kafka's MirrorMaker reads connector settings only at top level or per flow, never per cluster (%s would reach no connector): set %s, or <source>-><target>.%s",
			k, name, name)
		return
	}
	p.refuseOrUnknown(k, name, alias+".", clusterNames())
}

func (p *parser) classifyTop(k, v string) {
	if s, ok := settingByName[k]; ok {
		if s.flowOnly {
			p.fail(k, "Kafka's MirrorMaker passes %s to its connectors only per flow (at top level it reaches none): set <source>-><target>.%s", k, k)
			return
		}
		if p.checkValue(k, v, s.check) {
			p.top[k] = settingValue(k, v)
		}
		return
	}
	if isSecurity(k) {
		p.top[k] = v
		return
	}
	if chk, ok := workerSettings[k]; ok {
		if p.checkValue(k, v, chk) {
			p.top[k] = strings.TrimSpace(v)
		}
		return
	}
	if reason, ok := ignored[k]; ok {
		if p.checkValue(k, v, func(v string) error { return checkIgnored(k, v) }) {
			p.ignored = append(p.ignored, Ignored{Key: k, Reason: reason})
		}
		return
	}
	if strings.HasPrefix(k, "producer.") || strings.HasPrefix(k, "consumer.") || strings.HasPrefix(k, "admin.") {
		p.fail(k, "Kafka's MirrorMaker does not apply top-level client settings: set it per cluster, as <alias>.%s", k)
		return
	}
	p.refuseOrUnknown(k, k, "", settingNames(true))
}

// refuseOrUnknown refuses name with its reason, or as unknown with the nearest known name.
func (p *parser) refuseOrUnknown(k, name, prefix string, known []string) {
	if reason, ok := refused[name]; ok {
		p.fail(k, "not supported: %s", reason)
		return
	}
	if strings.HasPrefix(name, "errors.") {
		p.fail(k, "not supported: %s", refused["errors.tolerance"])
		return
	}
	for _, r := range refusedPrefixes {
		if strings.HasPrefix(name, r.prefix) {
			p.fail(k, "not supported: %s", r.reason)
			return
		}
	}
	p.fail(k, "unknown MirrorMaker setting%s", nearest(name, known, prefix))
}

func (p *parser) checkValue(k, v string, c check) bool {
	if err := c(v); err != nil {
		p.fail(k, "%q: %v", v, err)
		return false
	}
	return true
}

// settingValue is the value a connector setting is read with: trimmed, as Kafka's ConfigDef
// trims every typed value, except the separator, which DefaultReplicationPolicy.configure
// takes as written.
func settingValue(name, v string) string {
	if name == "replication.policy.separator" {
		return v
	}
	return strings.TrimSpace(v)
}

func put(m map[string]map[string]string, outer, name, v string) {
	if m[outer] == nil {
		m[outer] = map[string]string{}
	}
	m[outer][name] = v
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	sort.Strings(s)
	return s
}

// settingNames are the connector settings accepted at top level (or per flow).
func settingNames(top bool) []string {
	var names []string
	for _, s := range settings {
		if !top || !s.flowOnly {
			names = append(names, s.name)
		}
	}
	if top {
		names = append(names, "clusters", "security.protocol")
		for n := range ignored {
			names = append(names, n)
		}
	}
	return names
}

func clusterNames() []string {
	names := []string{"bootstrap.servers", "security.protocol", "exactly.once.source.support", "group.id"}
	for n := range workerSettings {
		names = append(names, n)
	}
	for role, known := range clientSettings {
		for n := range known {
			names = append(names, role+"."+n)
		}
	}
	for n := range ignored {
		if clusterIgnored(n) {
			names = append(names, n)
		}
	}
	return names
}

// nearest names the known setting closest to name, as " (did you mean X?)", or "".
func nearest(name string, known []string, prefix string) string {
	best, bestD := "", -1
	for _, n := range sorted(known) {
		if d := editDistance(name, n); bestD < 0 || d < bestD {
			best, bestD = n, d
		}
	}
	if best == "" || bestD > len(name)/2+2 {
		return ""
	}
	return fmt.Sprintf(" (nearest known: %s%s)", prefix, best)
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// value resolves a connector setting for a flow: A->B.name, else name, else Kafka's default.
func (p *parser) value(flow, name string) string {
	if v, ok := p.flow[flow][name]; ok {
		return v
	}
	if v, ok := p.top[name]; ok && !settingByName[name].flowOnly {
		return v
	}
	return settingByName[name].def
}

func (p *parser) build() *Config {
	c := &Config{Clusters: map[string]*Cluster{}, Ignored: p.ignored}
	for _, a := range p.aliases {
		c.Clusters[a] = p.buildCluster(a)
	}
	names := sorted(p.aliases)
	for _, src := range names {
		for _, tgt := range names {
			if src == tgt {
				continue
			}
			p.buildPair(c, src, tgt)
		}
	}
	p.ignoreIdleFlowSettings(c)
	sort.Slice(c.Ignored, func(i, j int) bool { return c.Ignored[i].Key < c.Ignored[j].Key })
	return c
}

// heartbeatSettings are the settings a heartbeat-only flow reads (MirrorHeartbeatConnector).
var heartbeatSettings = []string{"enabled", "emit.heartbeats.enabled", "emit.heartbeats.interval.seconds",
	"heartbeats.topic.replication.factor", "admin.timeout.ms", "replication.policy.class",
	"replication.policy.separator", "replication.policy.internal.topic.separator.enabled"}

// ignoreIdleFlowSettings lists in Config.Ignored the flow-level settings of pairs that do not
// replicate: Kafka accepts them and they reach nothing (a file may keep settings of a flow
// switched off with A->B.enabled = false). The heartbeat settings of a heartbeat flow count.
func (p *parser) ignoreIdleFlowSettings(c *Config) {
	runs := map[string]string{}
	for _, f := range c.Flows {
		runs[f.Name] = "replicates"
	}
	for _, f := range c.HeartbeatFlows {
		runs[f.Name] = "heartbeats"
	}
	for _, flow := range slices.Sorted(maps.Keys(p.flow)) {
		for _, name := range slices.Sorted(maps.Keys(p.flow[flow])) {
			var reason string
			switch runs[flow] {
			case "replicates":
				continue
			case "heartbeats":
				if slices.Contains(heartbeatSettings, name) {
					continue
				}
				reason = flow + " is not enabled (" + flow + ".enabled is not true): only its heartbeats run"
			default:
				if name == "enabled" || name == "emit.heartbeats.enabled" {
					continue // what switched the pair off
				}
				reason = flow + " neither replicates (" + flow + ".enabled is not true) nor emits heartbeats (emit.heartbeats.enabled is false)"
			}
			c.Ignored = append(c.Ignored, Ignored{Key: flow + "." + name, Reason: reason})
		}
	}
}

func (p *parser) buildCluster(a string) *Cluster {
	cl := &Cluster{Alias: a, Security: map[string]string{}, Producer: map[string]string{}, Consumer: map[string]string{},
		Admin: map[string]string{}, Worker: map[string]string{}, ExactlyOnceSourceSupport: "disabled"}
	// The top-level security settings are every cluster's defaults, but a cluster inherits
	// ssl.* only if its protocol uses TLS and sasl.* only if it uses SASL: Kafka's clients
	// ignore the others, and the caller refuses ssl.* or sasl.* beside a protocol without
	// them (a real mistake when set for the cluster itself).
	protocol := strings.ToUpper(strings.TrimSpace(p.top["security.protocol"]))
	if v, ok := p.cluster[a]["security.protocol"]; ok {
		protocol = strings.ToUpper(strings.TrimSpace(v))
	}
	for k, v := range p.top {
		if workerSettings[k] != nil {
			cl.Worker[k] = v
		}
	}
	for k, v := range p.top {
		switch {
		case strings.HasPrefix(k, "ssl.") && !strings.HasSuffix(protocol, "SSL"):
		case strings.HasPrefix(k, "sasl.") && !strings.HasPrefix(protocol, "SASL_"):
		case isSecurity(k):
			cl.Security[k] = v
		}
	}
	for k, v := range p.cluster[a] {
		switch {
		case k == "bootstrap.servers":
			cl.Bootstrap = splitList(v)
		case k == "exactly.once.source.support":
			cl.ExactlyOnceSourceSupport = v
		case workerSettings[k] != nil:
			cl.Worker[k] = v
		case isSecurity(k):
			cl.Security[k] = v
		case strings.HasPrefix(k, "producer."):
			cl.Producer[strings.TrimPrefix(k, "producer.")] = v
		case strings.HasPrefix(k, "consumer."):
			cl.Consumer[strings.TrimPrefix(k, "consumer.")] = v
		case strings.HasPrefix(k, "admin."):
			cl.Admin[strings.TrimPrefix(k, "admin.")] = v
		}
	}
	return cl
}

// buildPair decides what runs for src->tgt as MirrorMakerConfig.clusterPairs and the
// connectors do: a herder exists when A->B.enabled is true or heartbeats are on for the
// pair; its source and checkpoint connectors run when the resolved enabled is true (so a
// top-level enabled=true turns on every pair that has a herder), its heartbeat connector
// whenever the herder exists.
func (p *parser) buildPair(c *Config, src, tgt string) {
	name := src + "->" + tgt
	pairEnabled, _ := parseBool(p.flow[name]["enabled"])
	heartbeats, _ := parseBool(p.value(name, "emit.heartbeats.enabled"))
	if !pairEnabled && !heartbeats {
		return
	}
	f := p.buildFlow(src, tgt)
	if f == nil {
		return
	}
	enabled, _ := parseBool(p.value(name, "enabled"))
	need := []string{tgt}
	if enabled {
		need = append(need, src)
	}
	for _, a := range need {
		if len(c.Clusters[a].Bootstrap) == 0 {
			why := "the target of flow " + name
			if a == src {
				why = "the source of flow " + name
			}
			if !enabled {
				why += ", which emits heartbeats into it (emit.heartbeats.enabled=false stops that)"
			}
			if !slices.ContainsFunc(p.errs, func(e error) bool {
				var me *Error
				return errors.As(e, &me) && me.Key == a+".bootstrap.servers"
			}) {
				p.fail(a+".bootstrap.servers", "required: %s is %s", a, why) // once, for the first flow
			}
			return
		}
	}
	tc := c.Clusters[tgt]
	f.ExactlyOnce = tc.ExactlyOnceSourceSupport == "enabled"
	if enabled && f.ExactlyOnceRequired {
		if !f.ExactlyOnce {
			p.fail(name+".exactly.once.support", "required, but %s.exactly.once.source.support is %s, not enabled", tgt, tc.ExactlyOnceSourceSupport)
			return
		}
		if c.Clusters[src].Consumer["isolation.level"] != "read_committed" {
			p.fail(name+".exactly.once.support", "MirrorSourceConnector can only provide exactly-once guarantees when its source consumer is configured with isolation.level set to 'read_committed' (set %s.consumer.isolation.level = read_committed); otherwise, records from aborted and uncommitted transactions will be replicated from the source cluster to the target cluster", src)
			return
		}
	}
	if enabled {
		c.Flows = append(c.Flows, f)
	} else {
		c.HeartbeatFlows = append(c.HeartbeatFlows, f)
	}
}

func (p *parser) buildFlow(src, tgt string) *Flow {
	name := src + "->" + tgt
	v := func(s string) string { return p.value(name, s) }
	b := func(s string) bool { x, _ := parseBool(v(s)); return x }
	n := func(s string) int64 { x, _ := parseLong(v(s)); return x }
	nerr := len(p.errs)
	key := func(s string) string {
		if _, ok := p.flow[name][s]; ok {
			return name + "." + s
		}
		return s
	}
	f := &Flow{Source: src, Target: tgt, Name: name}
	var err error
	if f.Policy, err = newPolicy(strings.TrimSpace(v("replication.policy.class")), v("replication.policy.separator"),
		b("replication.policy.internal.topic.separator.enabled"), src); err != nil {
		p.flowErr(name, err)
	}
	if f.Topics, err = NewDefaultTopicFilter(v("topics"), v("topics.exclude")); err != nil {
		p.flowErr(name, err)
	}
	if f.Groups, err = NewDefaultGroupFilter(v("groups"), v("groups.exclude")); err != nil {
		p.flowErr(name, err)
	}
	if f.ConfigFilter, err = NewDefaultConfigPropertyFilter(v("config.properties.exclude"), v("use.defaults.from")); err != nil {
		p.flowErr(name, err)
	}
	periodic := func(prefix string, on *bool, every *time.Duration) {
		secs := n(prefix + ".interval.seconds")
		*every = time.Duration(secs) * time.Second
		*on = b(prefix+".enabled") && secs > 0
	}
	periodic("sync.topic.configs", &f.SyncTopicConfigs, &f.SyncTopicConfigsInterval)
	periodic("sync.topic.acls", &f.SyncTopicACLs, &f.SyncTopicACLsInterval)
	periodic("sync.group.offsets", &f.SyncGroupOffsets, &f.SyncGroupOffsetsInterval)
	periodic("emit.checkpoints", &f.EmitCheckpoints, &f.EmitCheckpointsInterval)
	periodic("emit.heartbeats", &f.EmitHeartbeats, &f.EmitHeartbeatsInterval)
	periodic("refresh.topics", &f.RefreshTopics, &f.RefreshTopicsInterval)
	periodic("refresh.groups", &f.RefreshGroups, &f.RefreshGroupsInterval)
	f.OffsetLagMax = n("offset.lag.max")
	f.ReplicationFactor = int16(n("replication.factor"))
	f.OffsetSyncsTopicReplicationFactor = int16(n("offset-syncs.topic.replication.factor"))
	f.CheckpointsTopicReplicationFactor = int16(n("checkpoints.topic.replication.factor"))
	f.HeartbeatsTopicReplicationFactor = int16(n("heartbeats.topic.replication.factor"))
	f.OffsetSyncsTopicLocation = v("offset-syncs.topic.location")
	f.EmitOffsetSyncs = b("emit.offset-syncs.enabled")
	f.ReplicateHeartbeats = b("heartbeats.replication.enabled")
	f.ExactlyOnceRequired = strings.EqualFold(strings.TrimSpace(v("exactly.once.support")), "required")
	f.OffsetPreserving = b("samsa.offset.preserving.enabled")
	f.TasksMax = int(n("tasks.max"))
	f.ConsumerPollTimeout = time.Duration(n("consumer.poll.timeout.ms")) * time.Millisecond
	f.AdminTimeout = time.Duration(n("admin.timeout.ms")) * time.Millisecond

	enabled := b("enabled")
	if enabled && !f.EmitOffsetSyncs {
		// MirrorCheckpointConfig.validate and MirrorSourceConnector.validateEmitOffsetSyncConfigs.
		if b("emit.checkpoints.enabled") {
			p.fail(key("emit.offset-syncs.enabled"), "MirrorCheckpointConnector can't run without offset syncs: set %s.emit.checkpoints.enabled = false too", name)
		} else if b("sync.group.offsets.enabled") {
			p.fail(key("emit.offset-syncs.enabled"), "group offsets cannot be synced without offset syncs: set %s.sync.group.offsets.enabled = false too", name)
		}
		for _, s := range []string{"offset-syncs.topic.location", "offset-syncs.topic.replication.factor"} {
			if _, set := p.flow[name][s]; set {
				p.fail(key(s), "MirrorSourceConnector can't setup offset-syncs feature while emit.offset-syncs.enabled set to false")
			} else if _, set := p.top[s]; set {
				p.fail(s, "MirrorSourceConnector can't setup offset-syncs feature while %s.emit.offset-syncs.enabled set to false", name)
			}
		}
	}
	if len(p.errs) > nerr {
		return nil
	}
	return f
}

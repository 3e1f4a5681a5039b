package mirrorconf

import (
	"fmt"
	"strings"
)

// ReplicationPolicy names remote topics and MirrorMaker 2's internal topics, as Kafka's
// org.apache.kafka.connect.mirror.ReplicationPolicy does. Where Kafka returns null, these
// methods return "".
type ReplicationPolicy interface {
	// FormatRemoteTopic is the name on the target of topic replicated from sourceAlias.
	FormatRemoteTopic(sourceAlias, topic string) string
	// TopicSource is the alias of the cluster topic was replicated from; "" when it is not a
	// remote topic.
	TopicSource(topic string) string
	// UpstreamTopic is topic's name on the cluster it was replicated from (itself possibly
	// remote); "" when it is not a remote topic.
	UpstreamTopic(topic string) string
	// OriginalTopic follows UpstreamTopic back to the first cluster; topic itself when it is
	// not remote.
	OriginalTopic(topic string) string
	HeartbeatsTopic() string
	OffsetSyncsTopic(clusterAlias string) string
	CheckpointsTopic(clusterAlias string) string
	// IsInternalTopic: Kafka's and Connect's internal topics and MirrorMaker 2's own, which
	// are never replicated.
	IsInternalTopic(topic string) bool
	IsCheckpointsTopic(topic string) bool
	IsHeartbeatsTopic(topic string) bool
	IsMM2InternalTopic(topic string) bool
}

// The class names replication.policy.class accepts (Kafka's, and the short names).
const (
	DefaultReplicationPolicyClass  = "org.apache.kafka.connect.mirror.DefaultReplicationPolicy"
	IdentityReplicationPolicyClass = "org.apache.kafka.connect.mirror.IdentityReplicationPolicy"
)

// DefaultSeparator is Kafka's DefaultReplicationPolicy.SEPARATOR_DEFAULT.
const DefaultSeparator = "."

// heartbeatsTopic is ReplicationPolicy.heartbeatsTopic()'s default, which neither Kafka
// policy overrides.
const heartbeatsTopic = "heartbeats"

// DefaultReplicationPolicy prefixes remote topics with their source alias and the separator
// ("us-west.orders"), as Kafka's DefaultReplicationPolicy.
type DefaultReplicationPolicy struct {
	// Separator is replication.policy.separator (never empty: Parse refuses "").
	Separator string
	// InternalTopicSeparatorEnabled is replication.policy.internal.topic.separator.enabled:
	// false names the offset-syncs and checkpoints topics with "." whatever the separator, as
	// MirrorMaker before 3.1 did.
	InternalTopicSeparatorEnabled bool
}

// NewDefaultReplicationPolicy is the policy with Kafka's defaults (separator ".").
func NewDefaultReplicationPolicy() *DefaultReplicationPolicy {
	return &DefaultReplicationPolicy{Separator: DefaultSeparator, InternalTopicSeparatorEnabled: true}
}

func (p *DefaultReplicationPolicy) FormatRemoteTopic(sourceAlias, topic string) string {
	return sourceAlias + p.Separator + topic
}

// splitJava splits s around sep as Java's Pattern.split(s) with a literal pattern does:
// trailing empty strings are dropped, and a string without sep is its own single part.
func splitJava(s, sep string) []string {
	parts := strings.Split(s, sep)
	if len(parts) == 1 {
		return parts
	}
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

// TopicSource is the text before the first separator, when the topic splits into at least
// two parts as Java splits it: "a.b" is from "a", "a." and "a" are not remote. A topic that
// starts with the separator (".b") has the empty source in Kafka; here that is "" too, so
// it reads as not remote (no alias is empty).
func (p *DefaultReplicationPolicy) TopicSource(topic string) string {
	parts := splitJava(topic, p.Separator)
	if len(parts) < 2 {
		return ""
	}
	return parts[0]
}

// UpstreamTopic is what follows the source and the separator. As in Kafka, ".b" has the
// upstream topic "b" though its source is empty.
func (p *DefaultReplicationPolicy) UpstreamTopic(topic string) string {
	parts := splitJava(topic, p.Separator)
	if len(parts) < 2 {
		return ""
	}
	return topic[len(parts[0])+len(p.Separator):]
}

func (p *DefaultReplicationPolicy) OriginalTopic(topic string) string {
	return originalTopic(p, topic)
}

// originalTopic is ReplicationPolicy.originalTopic's default: follow upstream until a topic
// is not remote (or is its own upstream, as under IdentityReplicationPolicy). Each step
// shortens the name, except the identity step that ends the loop, so this terminates.
func originalTopic(p ReplicationPolicy, topic string) string {
	for {
		up := p.UpstreamTopic(topic)
		if up == "" || up == topic {
			return topic
		}
		topic = up
	}
}

func (p *DefaultReplicationPolicy) HeartbeatsTopic() string { return heartbeatsTopic }

func (p *DefaultReplicationPolicy) internalSeparator() string {
	if p.InternalTopicSeparatorEnabled {
		return p.Separator
	}
	return "."
}

func (p *DefaultReplicationPolicy) internalSuffix() string { return p.internalSeparator() + "internal" }

func (p *DefaultReplicationPolicy) checkpointsSuffix() string {
	return p.internalSeparator() + "checkpoints" + p.internalSuffix()
}

// OffsetSyncsTopic: "mm2-offset-syncs.<alias>.internal" with the separator.
func (p *DefaultReplicationPolicy) OffsetSyncsTopic(clusterAlias string) string {
	return "mm2-offset-syncs" + p.internalSeparator() + clusterAlias + p.internalSuffix()
}

// CheckpointsTopic: "<alias>.checkpoints.internal" with the separator.
func (p *DefaultReplicationPolicy) CheckpointsTopic(clusterAlias string) string {
	return clusterAlias + p.checkpointsSuffix()
}

func (p *DefaultReplicationPolicy) IsCheckpointsTopic(topic string) bool {
	return strings.HasSuffix(topic, p.checkpointsSuffix())
}

func (p *DefaultReplicationPolicy) IsMM2InternalTopic(topic string) bool {
	return strings.HasSuffix(topic, p.internalSuffix())
}

func (p *DefaultReplicationPolicy) IsHeartbeatsTopic(topic string) bool {
	return isHeartbeatsTopic(p, topic)
}

func isHeartbeatsTopic(p ReplicationPolicy, topic string) bool {
	return p.OriginalTopic(topic) == p.HeartbeatsTopic()
}

func (p *DefaultReplicationPolicy) IsInternalTopic(topic string) bool {
	return isInternalTopic(p, topic)
}

// isInternalTopic is ReplicationPolicy.isInternalTopic's default: MirrorMaker's internal
// topics, Kafka's ("__consumer_offsets", and names starting with "."), and Connect's
// default internal topics ("-internal" or ".internal" endings, whatever the separator).
func isInternalTopic(p ReplicationPolicy, topic string) bool {
	return p.IsMM2InternalTopic(topic) ||
		strings.HasPrefix(topic, "__") || strings.HasPrefix(topic, ".") ||
		strings.HasSuffix(topic, "-internal") || strings.HasSuffix(topic, ".internal")
}

// IdentityReplicationPolicy keeps topic names on the target ("orders" stays "orders"), as
// Kafka's IdentityReplicationPolicy; heartbeats topics (any name ending in "heartbeats") are
// still prefixed as under DefaultReplicationPolicy, so heartbeats show the path they took.
// Without the prefix a remote topic's source cannot be read from its name: TopicSource is
// SourceAlias (Kafka's source.cluster.alias, the flow's source), and every topic is its own
// upstream. IsCycle therefore never stops a cycle under this policy: active/active with it
// needs topic filters that keep each side's topics apart.
type IdentityReplicationPolicy struct {
	DefaultReplicationPolicy
	// SourceAlias is the flow's source cluster alias ("" outside a flow).
	SourceAlias string
}

func looksLikeHeartbeat(topic string) bool { return strings.HasSuffix(topic, heartbeatsTopic) }

func (p *IdentityReplicationPolicy) FormatRemoteTopic(sourceAlias, topic string) string {
	if looksLikeHeartbeat(topic) {
		return p.DefaultReplicationPolicy.FormatRemoteTopic(sourceAlias, topic)
	}
	return topic
}

func (p *IdentityReplicationPolicy) TopicSource(topic string) string {
	if looksLikeHeartbeat(topic) {
		return p.DefaultReplicationPolicy.TopicSource(topic)
	}
	return p.SourceAlias
}

func (p *IdentityReplicationPolicy) UpstreamTopic(topic string) string {
	if looksLikeHeartbeat(topic) {
		return p.DefaultReplicationPolicy.UpstreamTopic(topic)
	}
	return topic
}

// The methods below must be redefined: the embedded DefaultReplicationPolicy's would call
// its own UpstreamTopic, not the identity one.

func (p *IdentityReplicationPolicy) OriginalTopic(topic string) string {
	return originalTopic(p, topic)
}

func (p *IdentityReplicationPolicy) IsHeartbeatsTopic(topic string) bool {
	return isHeartbeatsTopic(p, topic)
}

func (p *IdentityReplicationPolicy) IsInternalTopic(topic string) bool {
	return isInternalTopic(p, topic)
}

// newPolicy builds the policy replication.policy.class names for a flow from source.
func newPolicy(class, separator string, internalSeparator bool, source string) (ReplicationPolicy, error) {
	if separator == "" {
		return nil, &Error{Key: "replication.policy.separator", Msg: "empty: remote topic names could not be split into alias and topic"}
	}
	base := DefaultReplicationPolicy{Separator: separator, InternalTopicSeparatorEnabled: internalSeparator}
	switch class {
	case DefaultReplicationPolicyClass, "DefaultReplicationPolicy":
		return &base, nil
	case IdentityReplicationPolicyClass, "IdentityReplicationPolicy":
		return &IdentityReplicationPolicy{DefaultReplicationPolicy: base, SourceAlias: source}, nil
	}
	return nil, &Error{Key: "replication.policy.class", Msg: fmt.Sprintf("%s is not supported: Samsa implements only %s and %s (custom Java policies cannot run)",
		class, DefaultReplicationPolicyClass, IdentityReplicationPolicyClass)}
}

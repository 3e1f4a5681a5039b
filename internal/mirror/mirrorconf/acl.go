package mirrorconf

// ACLBinding is one ACL in Kafka's protocol codes (DescribeAcls/CreateAcls fields).
type ACLBinding struct {
	ResourceType, PatternType int8
	ResourceName, Principal   string
	Host                      string
	Operation, Permission     int8
}

// Kafka's protocol codes used by the ACL sync rules (org.apache.kafka.common.acl and
// .resource enums).
const (
	ResourceTypeTopic  int8 = 2 // ResourceType.TOPIC
	PatternTypeLiteral int8 = 3 // PatternType.LITERAL
	OperationAll       int8 = 2 // AclOperation.ALL
	OperationRead      int8 = 3 // AclOperation.READ
	OperationWrite     int8 = 4 // AclOperation.WRITE
	PermissionDeny     int8 = 2 // AclPermissionType.DENY
	PermissionAllow    int8 = 3 // AclPermissionType.ALLOW
)

// ShouldReplicateACL says whether a source ACL binding is copied to the target, by the rules
// of MirrorSourceConnector.syncTopicAcls and shouldReplicateAcl: only literal topic
// bindings (prefixed ones are not: their prefix would need renaming), and never ALLOW WRITE,
// so that only MirrorMaker writes to remote topics. The binding's topic must also pass the
// flow's Flow.ShouldReplicateTopic; the caller checks that.
func ShouldReplicateACL(b ACLBinding) bool {
	if b.ResourceType != ResourceTypeTopic || b.PatternType != PatternTypeLiteral {
		return false
	}
	return !(b.Permission == PermissionAllow && b.Operation == OperationWrite)
}

// TargetACL is the binding created on the target for a source binding, as
// MirrorSourceConnector.targetAclBinding: the remote topic's name, literal, and ALLOW ALL
// downgraded to ALLOW READ (remote topics are read-only to everyone but MirrorMaker).
// DENY ALL is kept as it is.
func TargetACL(b ACLBinding, policy ReplicationPolicy, sourceAlias string) ACLBinding {
	t := b
	t.ResourceType = ResourceTypeTopic
	t.PatternType = PatternTypeLiteral
	t.ResourceName = policy.FormatRemoteTopic(sourceAlias, b.ResourceName)
	if b.Permission == PermissionAllow && b.Operation == OperationAll {
		t.Operation = OperationRead
	}
	return t
}

// IsCycle says whether topic (on the source of a flow into targetAlias) came from
// targetAlias, directly or through other clusters, as MirrorSourceConnector.isCycle: such a
// topic must not be replicated back. A policy that cannot tell a topic's source (identity)
// stops the walk when a topic is its own upstream.
func IsCycle(policy ReplicationPolicy, topic, targetAlias string) bool {
	for {
		// A source of "" with an upstream topic is Kafka's empty (not null) source of a
		// name that starts with the separator: the walk goes on, as in Kafka.
		if source := policy.TopicSource(topic); source != "" && source == targetAlias {
			return true
		}
		up := policy.UpstreamTopic(topic)
		if up == "" || up == topic {
			return false
		}
		topic = up
	}
}

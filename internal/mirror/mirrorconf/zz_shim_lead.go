// Package mirrorconf SHIM: the lead's placeholder until helper mirrorconf's branch lands. DELETE ON MERGE.
package mirrorconf

import "time"

type Config struct {
	Clusters map[string]*Cluster
	Flows    []*Flow
}
type Cluster struct {
	Alias                     string
	Bootstrap                 []string
	Security                  map[string]string
	Producer, Consumer, Admin map[string]string
}
type Flow struct {
	Source, Target                                                                                         string
	Topics                                                                                                 TopicFilter
	Groups                                                                                                 GroupFilter
	ConfigFilter                                                                                           ConfigPropertyFilter
	Policy                                                                                                 ReplicationPolicy
	SyncTopicConfigs                                                                                       bool
	SyncTopicConfigsInterval                                                                               time.Duration
	SyncTopicACLs                                                                                          bool
	SyncTopicACLsInterval                                                                                  time.Duration
	SyncGroupOffsets                                                                                       bool
	SyncGroupOffsetsInterval                                                                               time.Duration
	EmitCheckpoints                                                                                        bool
	EmitCheckpointsInterval                                                                                time.Duration
	EmitHeartbeats                                                                                         bool
	EmitHeartbeatsInterval                                                                                 time.Duration
	RefreshTopics                                                                                          bool
	RefreshTopicsInterval                                                                                  time.Duration
	RefreshGroups                                                                                          bool
	RefreshGroupsInterval                                                                                  time.Duration
	OffsetLagMax                                                                                           int64
	ReplicationFactor                                                                                      int16
	OffsetSyncsTopicReplicationFactor, CheckpointsTopicReplicationFactor, HeartbeatsTopicReplicationFactor int16
	OffsetSyncsTopicLocation                                                                               string
	ExactlyOnce                                                                                            bool
	OffsetPreserving                                                                                       bool
	TasksMax                                                                                               int
	Name                                                                                                   string
}
type ReplicationPolicy interface {
	FormatRemoteTopic(sourceAlias, topic string) string
	TopicSource(topic string) string
	UpstreamTopic(topic string) string
	OriginalTopic(topic string) string
	HeartbeatsTopic() string
	OffsetSyncsTopic(clusterAlias string) string
	CheckpointsTopic(clusterAlias string) string
	IsInternalTopic(topic string) bool
	IsCheckpointsTopic(topic string) bool
	IsHeartbeatsTopic(topic string) bool
	IsMM2InternalTopic(topic string) bool
}
type TopicFilter interface{ ShouldReplicateTopic(topic string) bool }
type GroupFilter interface{ ShouldReplicateGroup(group string) bool }
type ConfigPropertyFilter interface {
	ShouldReplicateConfigProperty(name string) bool
	ShouldReplicateSourceDefault(name string) bool
}
type ACLBinding struct {
	ResourceType, PatternType     int8
	ResourceName, Principal, Host string
	Operation, Permission         int8
}

func ShouldReplicateACL(b ACLBinding) bool                                            { return false }
func TargetACL(b ACLBinding, policy ReplicationPolicy, sourceAlias string) ACLBinding { return b }
func IsCycle(policy ReplicationPolicy, topic, targetAlias string) bool                { return false }
func ParseFile(path string) (*Config, error)                                          { return nil, nil }
func Parse(props map[string]string) (*Config, error)                                  { return nil, nil }

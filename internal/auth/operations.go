package auth

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Requirement is one ACL check a Kafka API makes before it acts: the
// operation on a resource type, when the check applies, and what the
// client sees when it fails.
type Requirement struct {
	Operation kmsg.ACLOperation
	Resource  kmsg.ACLResourceType
	// AnyResource: the check is Authorizer.AuthorizeAny, on some resource
	// of the type, not on one the request names.
	AnyResource bool
	// When is the condition under which the check is made, "" for always,
	// and where Kafka's code departs from its documentation, both.
	When string
	// Denial is what a failed check does; Error the code under Refuse.
	Denial Denial
	Error  *kerr.Error
}

// Denial is what a client sees when a Requirement's check fails.
type Denial int8

const (
	// Refuse answers with Requirement.Error, for the resource checked (a
	// topic's partitions, one group of a batch) or, for a check that
	// guards the whole request, for all of it.
	Refuse Denial = iota
	// Omit leaves the resource out of the response without an error:
	// a listing shows only what the principal may see.
	Omit
	// FallBack is no answer yet: the Requirement that follows in the row
	// decides. A cluster-wide permission, missing, falls back to one per
	// resource.
	FallBack
)

// APIRequirements returns the ACL checks a Kafka API makes, as Kafka's
// security documentation lists them ("Operations and Resources on
// Protocols") and its KafkaApis and ControllerApis make them; ok is
// false for an API the table does not know. An API in the table with no
// requirement is authorized by no ACL: ApiVersions and the SASL
// handshake come before authentication, telemetry is open to every
// client, and a delegation token is renewed or expired by its owner or
// renewers only.
//
// Kafka never tells a principal whether a resource it may not describe
// exists: it checks authorization before existence, so a topic named in
// a request answers TOPIC_AUTHORIZATION_FAILED whether or not it exists
// (UNKNOWN_TOPIC_OR_PARTITION only once the check passed), and a listing
// of all topics, groups or transactions omits what the principal may not
// describe. Rows say which of the two each check does.
//
// The table covers every API of Kafka's documentation and code as of
// late 2024 (keys 0 to 87, 4.0 in development), and the streams-group
// APIs (88, 89, Kafka 4.1); the share-group-offset and
// UnregisterController APIs added after are not in it.
func APIRequirements(k kmsg.Key) (reqs []Requirement, ok bool) {
	reqs, ok = apiRequirements[k]
	return slices.Clone(reqs), ok
}

// apiRequirements is the table; APIRequirements documents it.
var apiRequirements = kafkaRequirements()

// kafkaRequirements writes the table out. Its shorthands stay local so
// they take no names from the package.
func kafkaRequirements() map[kmsg.Key][]Requirement {
	const (
		opAllTopics = "all topics requested (the topic list null)"

		rTopic   = kmsg.ACLResourceTypeTopic
		rGroup   = kmsg.ACLResourceTypeGroup
		rCluster = kmsg.ACLResourceTypeCluster
		rTxnID   = kmsg.ACLResourceTypeTransactionalId
		rToken   = kmsg.ACLResourceTypeDelegationToken
		rUser    = kmsg.ACLResourceTypeUser

		read            = kmsg.ACLOperationRead
		write           = kmsg.ACLOperationWrite
		create          = kmsg.ACLOperationCreate
		del             = kmsg.ACLOperationDelete
		alter           = kmsg.ACLOperationAlter
		describe        = kmsg.ACLOperationDescribe
		clusterAction   = kmsg.ACLOperationClusterAction
		describeConfigs = kmsg.ACLOperationDescribeConfigs
		alterConfigs    = kmsg.ACLOperationAlterConfigs
		idempotentWrite = kmsg.ACLOperationIdempotentWrite
		createTokens    = kmsg.ACLOperationCreateTokens
		describeTokens  = kmsg.ACLOperationDescribeTokens
	)

	var (
		topicDenied   = kerr.TopicAuthorizationFailed
		groupDenied   = kerr.GroupAuthorizationFailed
		clusterDenied = kerr.ClusterAuthorizationFailed
		txnIDDenied   = kerr.TransactionalIDAuthorizationFailed
		tokenDenied   = kerr.DelegationTokenAuthorizationFailed
	)

	refuse := func(op kmsg.ACLOperation, rt kmsg.ACLResourceType, err *kerr.Error, when string) Requirement {
		return Requirement{Operation: op, Resource: rt, When: when, Denial: Refuse, Error: err}
	}
	omit := func(op kmsg.ACLOperation, rt kmsg.ACLResourceType, when string) Requirement {
		return Requirement{Operation: op, Resource: rt, When: when, Denial: Omit}
	}
	fallBack := func(op kmsg.ACLOperation, rt kmsg.ACLResourceType, when string) Requirement {
		return Requirement{Operation: op, Resource: rt, When: when, Denial: FallBack}
	}
	// clusterOnly is the row of an API that needs one operation on the
	// cluster, refused with CLUSTER_AUTHORIZATION_FAILED.
	clusterOnly := func(op kmsg.ACLOperation) []Requirement {
		return []Requirement{refuse(op, rCluster, clusterDenied, "")}
	}

	return map[kmsg.Key][]Requirement{
		kmsg.Produce: {
			refuse(write, rTxnID, txnIDDenied, "transactional records: the request's transactional id; the whole request is refused"),
			refuse(write, rTopic, topicDenied, ""),
			// Documented, but checked at InitProducerId since KIP-679 (2.8).
			{Operation: idempotentWrite, Resource: rCluster, When: "documented for idempotent records; Kafka's broker checks it at InitProducerId instead (KIP-679) and Produce does not", Denial: Refuse, Error: clusterDenied},
		},
		kmsg.Fetch: {
			refuse(clusterAction, rCluster, topicDenied, "from a follower (replica id set): every partition is refused"),
			refuse(read, rTopic, topicDenied, "from a consumer"),
		},
		kmsg.ListOffsets: {refuse(describe, rTopic, topicDenied, "")},
		kmsg.Metadata: {
			refuse(describe, rTopic, topicDenied, "topics named in the request"),
			omit(describe, rTopic, opAllTopics),
			fallBack(create, rCluster, "a named topic is missing and auto-creation is on (allow_auto_topic_creation, auto.create.topics.enable)"),
			refuse(create, rTopic, topicDenied, "auto-creating a topic without CREATE on the cluster"),
			omit(describe, rCluster, "include_cluster_authorized_operations (v8-v10): without it the bitfield is 0"),
		},
		kmsg.LeaderAndISR:       clusterOnly(clusterAction),
		kmsg.StopReplica:        clusterOnly(clusterAction),
		kmsg.UpdateMetadata:     clusterOnly(clusterAction),
		kmsg.ControlledShutdown: clusterOnly(clusterAction),
		kmsg.OffsetCommit: {
			refuse(read, rGroup, groupDenied, "checked first; the whole request is refused"),
			refuse(read, rTopic, topicDenied, ""),
		},
		kmsg.OffsetFetch: {
			refuse(describe, rGroup, groupDenied, "checked first, per group"),
			refuse(describe, rTopic, topicDenied, "topics named in the request"),
			omit(describe, rTopic, "all of the group's topics requested (the topic list null)"),
		},
		kmsg.FindCoordinator: {
			refuse(describe, rGroup, groupDenied, "key type GROUP"),
			refuse(describe, rTxnID, txnIDDenied, "key type TRANSACTION"),
			refuse(clusterAction, rCluster, clusterDenied, "key type SHARE (v6+)"),
		},
		kmsg.JoinGroup:      {refuse(read, rGroup, groupDenied, "")},
		kmsg.Heartbeat:      {refuse(read, rGroup, groupDenied, "")},
		kmsg.LeaveGroup:     {refuse(read, rGroup, groupDenied, "")},
		kmsg.SyncGroup:      {refuse(read, rGroup, groupDenied, "")},
		kmsg.DescribeGroups: {refuse(describe, rGroup, groupDenied, "per group")},
		kmsg.ListGroups: {
			fallBack(describe, rCluster, "with it every group is listed; never CLUSTER_AUTHORIZATION_FAILED"),
			omit(describe, rGroup, ""),
		},
		kmsg.SASLHandshake: {},
		kmsg.ApiVersions:   {},
		kmsg.CreateTopics: {
			fallBack(create, rCluster, "with it every topic may be created; never CLUSTER_AUTHORIZATION_FAILED"),
			refuse(create, rTopic, topicDenied, ""),
			refuse(describeConfigs, rTopic, topicDenied, "v5+ returns the topic's configs: without it, topic_config_error_code is set and the topic is still created"),
		},
		kmsg.DeleteTopics: {
			fallBack(del, rCluster, "on the controller (KRaft): with it every topic may be deleted"),
			refuse(describe, rTopic, topicDenied, "without it a topic named by id is answered without its name, and one named by name without its id"),
			refuse(del, rTopic, topicDenied, ""),
		},
		kmsg.DeleteRecords: {refuse(del, rTopic, topicDenied, "")},
		kmsg.InitProducerID: {
			refuse(write, rTxnID, txnIDDenied, "a transactional id is set"),
			fallBack(idempotentWrite, rCluster, "no transactional id"),
			{Operation: write, Resource: rTopic, AnyResource: true, When: "no transactional id and no IDEMPOTENT_WRITE on the cluster: WRITE on any topic (KIP-679)", Denial: Refuse, Error: clusterDenied},
		},
		kmsg.OffsetForLeaderEpoch: {
			fallBack(clusterAction, rCluster, "with it every topic may be asked (followers)"),
			refuse(describe, rTopic, topicDenied, "consumers (KIP-320)"),
		},
		kmsg.AddPartitionsToTxn: {
			refuse(write, rTxnID, txnIDDenied, "v0-v3, from a producer; checked first"),
			refuse(write, rTopic, topicDenied, "v0-v3; the other partitions answer OPERATION_NOT_ATTEMPTED"),
			refuse(clusterAction, rCluster, clusterDenied, "v4+, a broker verifying a transaction (KIP-890)"),
		},
		kmsg.AddOffsetsToTxn: {
			refuse(write, rTxnID, txnIDDenied, "checked first"),
			refuse(read, rGroup, groupDenied, ""),
		},
		kmsg.EndTxn: {refuse(write, rTxnID, txnIDDenied, "")},
		kmsg.WriteTxnMarkers: {
			fallBack(alter, rCluster, "documented; Kafka accepts either this or CLUSTER_ACTION"),
			refuse(clusterAction, rCluster, clusterDenied, ""),
		},
		kmsg.TxnOffsetCommit: {
			refuse(write, rTxnID, txnIDDenied, "checked first; the whole request is refused"),
			refuse(read, rGroup, groupDenied, "checked second; the whole request is refused"),
			refuse(read, rTopic, topicDenied, ""),
		},
		kmsg.DescribeACLs: clusterOnly(describe),
		kmsg.CreateACLs:   clusterOnly(alter),
		kmsg.DeleteACLs:   clusterOnly(alter),
		kmsg.DescribeConfigs: {
			refuse(describeConfigs, rCluster, clusterDenied, "broker, broker logger and client metrics configs"),
			refuse(describeConfigs, rTopic, topicDenied, "topic configs"),
			refuse(describeConfigs, rGroup, groupDenied, "group configs"),
		},
		kmsg.AlterConfigs: {
			refuse(alterConfigs, rCluster, clusterDenied, "broker and broker logger configs"),
			refuse(alterConfigs, rTopic, topicDenied, "topic configs"),
			refuse(alterConfigs, rGroup, groupDenied, "group configs (on the controller)"),
		},
		kmsg.AlterReplicaLogDirs: {refuse(alter, rCluster, clusterDenied, "every partition is refused")},
		kmsg.DescribeLogDirs:     {refuse(describe, rCluster, clusterDenied, "the response holds no log dirs (documented as an empty response)")},
		kmsg.SASLAuthenticate:    {},
		kmsg.CreatePartitions:    {refuse(alter, rTopic, topicDenied, "")},
		kmsg.CreateDelegationToken: {
			refuse(createTokens, rUser, tokenDenied, "a token for another owner (KIP-373): the owner's principal is the resource name; one's own token needs no ACL"),
		},
		kmsg.RenewDelegationToken:  {},
		kmsg.ExpireDelegationToken: {},
		kmsg.DescribeDelegationToken: {
			omit(describe, rToken, "the token id is the resource name; a principal always sees its own tokens"),
			omit(describeTokens, rUser, "every token of an owner the principal may describe (KIP-373)"),
		},
		kmsg.DeleteGroups: {refuse(del, rGroup, groupDenied, "per group")},
		kmsg.ElectLeaders: {refuse(alter, rCluster, clusterDenied, "documented as CLUSTER_ACTION; Kafka checks ALTER")},
		kmsg.IncrementalAlterConfigs: {
			refuse(alterConfigs, rCluster, clusterDenied, "broker, broker logger and client metrics configs"),
			refuse(alterConfigs, rTopic, topicDenied, "topic configs"),
			refuse(alterConfigs, rGroup, groupDenied, "group configs"),
		},
		kmsg.AlterPartitionAssignments:    clusterOnly(alter),
		kmsg.ListPartitionReassignments:   clusterOnly(describe),
		kmsg.OffsetDelete:                 {refuse(del, rGroup, groupDenied, "checked first; the whole request is refused"), refuse(read, rTopic, topicDenied, "")},
		kmsg.DescribeClientQuotas:         clusterOnly(describeConfigs),
		kmsg.AlterClientQuotas:            clusterOnly(alterConfigs),
		kmsg.DescribeUserSCRAMCredentials: clusterOnly(describe),
		kmsg.AlterUserSCRAMCredentials:    clusterOnly(alter),
		kmsg.Vote:                         clusterOnly(clusterAction),
		kmsg.BeginQuorumEpoch:             clusterOnly(clusterAction),
		kmsg.EndQuorumEpoch:               clusterOnly(clusterAction),
		kmsg.DescribeQuorum:               clusterOnly(describe),
		kmsg.AlterPartition:               clusterOnly(clusterAction),
		kmsg.UpdateFeatures:               clusterOnly(alter),
		kmsg.Envelope:                     clusterOnly(clusterAction),
		kmsg.FetchSnapshot:                clusterOnly(clusterAction),
		kmsg.DescribeCluster: {
			omit(describe, rCluster, "documented; Kafka's broker answers regardless and uses it only for include_cluster_authorized_operations (without it the bitfield is 0)"),
			refuse(alter, rCluster, clusterDenied, "sent to a controller (endpoint type CONTROLLER, KIP-919)"),
		},
		kmsg.DescribeProducers:  {refuse(read, rTopic, topicDenied, "")},
		kmsg.BrokerRegistration: clusterOnly(clusterAction),
		kmsg.BrokerHeartbeat:    clusterOnly(clusterAction),
		kmsg.UnregisterBroker:   clusterOnly(alter),
		kmsg.DescribeTransactions: {
			refuse(describe, rTxnID, txnIDDenied, "per transactional id"),
			omit(describe, rTopic, "the transaction's partitions of topics the principal may not describe are left out"),
		},
		kmsg.ListTransactions:       {omit(describe, rTxnID, "")},
		kmsg.AllocateProducerIDs:    clusterOnly(clusterAction),
		kmsg.ConsumerGroupHeartbeat: {refuse(read, rGroup, groupDenied, "")},
		kmsg.ConsumerGroupDescribe:  {refuse(describe, rGroup, groupDenied, "per group; documented as READ, Kafka checks DESCRIBE")},
		kmsg.StreamsGroupHeartbeat: {
			refuse(read, rGroup, groupDenied, ""),
			fallBack(create, rCluster, "the topology's internal topics are missing: with it every one may be created"),
			omit(create, rTopic, "an internal topic without CREATE is not created; the answer's MISSING_INTERNAL_TOPICS status names it"),
		},
		kmsg.StreamsGroupDescribe:      {refuse(describe, rGroup, groupDenied, "per group")},
		kmsg.ControllerRegistration:    clusterOnly(clusterAction),
		kmsg.GetTelemetrySubscriptions: {},
		kmsg.PushTelemetry:             {},
		kmsg.AssignReplicasToDirs:      clusterOnly(clusterAction),
		kmsg.ListConfigResources:       clusterOnly(describeConfigs),
		kmsg.DescribeTopicPartitions: {
			refuse(describe, rTopic, topicDenied, "topics named in the request"),
			omit(describe, rTopic, opAllTopics),
		},
		kmsg.ShareGroupHeartbeat: {
			refuse(read, rGroup, groupDenied, "checked first"),
			refuse(describe, rTopic, topicDenied, "subscribed topics; the whole request is refused"),
		},
		kmsg.DescribeShareGroupOffsets: {
			refuse(describe, rGroup, groupDenied, "checked first, per group"),
			refuse(describe, rTopic, topicDenied, "topics named in the request"),
			omit(describe, rTopic, "all of the group's topics requested (the topic list null)"),
		},
		kmsg.AlterShareGroupOffsets: {
			refuse(read, rGroup, groupDenied, "checked first; the whole request is refused"),
			refuse(read, rTopic, topicDenied, ""),
		},
		kmsg.DeleteShareGroupOffsets: {
			refuse(del, rGroup, groupDenied, "checked first; the whole request is refused"),
			refuse(read, rTopic, topicDenied, ""),
		},
		kmsg.ShareGroupDescribe: {
			refuse(describe, rGroup, groupDenied, "per group"),
			refuse(describe, rTopic, topicDenied, "v1: the topics of the group's members; the group is refused"),
		},
		kmsg.ShareFetch:                 {refuse(read, rGroup, groupDenied, "checked first; the whole request is refused"), refuse(read, rTopic, topicDenied, "")},
		kmsg.ShareAcknowledge:           {refuse(read, rGroup, groupDenied, "checked first; the whole request is refused"), refuse(read, rTopic, topicDenied, "")},
		kmsg.AddRaftVoter:               clusterOnly(alter),
		kmsg.RemoveRaftVoter:            clusterOnly(alter),
		kmsg.UpdateRaftVoter:            clusterOnly(clusterAction),
		kmsg.InitializeShareGroupState:  clusterOnly(clusterAction),
		kmsg.ReadShareGroupState:        clusterOnly(clusterAction),
		kmsg.WriteShareGroupState:       clusterOnly(clusterAction),
		kmsg.DeleteShareGroupState:      clusterOnly(clusterAction),
		kmsg.ReadShareGroupStateSummary: clusterOnly(clusterAction),
	}
}

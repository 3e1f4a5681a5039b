package broker

// The request fuzzers' seeds: one valid request of every advertised API key
// at every advertised version, naming what fuzzHarness sets up (the topic,
// the groups, the transactional ID), so the fuzzer starts deep in each
// handler instead of at its first "not found".

import (
	"github.com/twmb/franz-go/pkg/kmsg"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	"google.golang.org/protobuf/proto"

	"github.com/samsa-io/samsa/internal/telemetry"
)

// What fuzzHarness creates before the first input, and the seeds name.
const (
	fuzzTopic         = "fuzz"         // 2 partitions, records in partition 0
	fuzzGroup         = "fuzz-group"   // a classic group with committed offsets
	fuzzInstance      = "fuzz-static"  // a static member of fuzzGroup
	fuzzConsumerGroup = "fuzz-cg"      // a KIP-848 group
	fuzzStreamsGroup  = "fuzz-sg"      // a KIP-1071 streams group
	fuzzMember        = "fuzz-member"  // fuzzConsumerGroup's member
	fuzzTxnID         = "fuzz-txn"     // a transactional ID with a transaction open
	fuzzProducerID    = int64(0)       // the first producer ID a fresh broker hands out
	fuzzCreatedTopic  = "fuzz-created" // what CreateTopics seeds create
	fuzzPrincipal     = "User:fuzz"    // an ACL on fuzzTopic allows it READ
	fuzzScramUser     = "fuzz-user"    // has a SCRAM-SHA-256 credential and client quotas
)

// fuzzClientInstance is the client instance of the PushTelemetry seed,
// whose subscription ID is the one of no subscription (the harness has
// none), so a seed's payload is decoded.
var fuzzClientInstance = telemetry.InstanceID([]byte("fuzz.instance.00"))

// fuzzTelemetry is an uncompressed OTLP payload of one gauge and one
// delta sum.
var fuzzTelemetry = func() []byte {
	value := func(v float64) []*metricspb.NumberDataPoint {
		return []*metricspb.NumberDataPoint{{Value: &metricspb.NumberDataPoint_AsDouble{AsDouble: v}}}
	}
	b, err := proto.Marshal(&metricspb.MetricsData{ResourceMetrics: []*metricspb.ResourceMetrics{{ScopeMetrics: []*metricspb.ScopeMetrics{{
		Metrics: []*metricspb.Metric{
			{Name: "org.apache.kafka.producer.io.ratio", Data: &metricspb.Metric_Gauge{Gauge: &metricspb.Gauge{DataPoints: value(0.5)}}},
			{Name: "org.apache.kafka.producer.record.send.total", Data: &metricspb.Metric_Sum{Sum: &metricspb.Sum{IsMonotonic: true,
				AggregationTemporality: metricspb.AggregationTemporality_AGGREGATION_TEMPORALITY_DELTA, DataPoints: value(3)}}},
		},
	}}}}})
	if err != nil {
		panic(err)
	}
	return b
}()

// fuzzTopicIDPlaceholder stands for fuzzTopic's ID in seeds and inputs:
// the ID is random per broker, so the harness writes the real one over
// every occurrence before sending. Any 16 bytes would do that a random ID
// never is.
var fuzzTopicIDPlaceholder = [16]byte([]byte("fuzz.topic.id.00"))

// fuzzSeedRequest is a valid request of key at version for the harness's
// broker.
func fuzzSeedRequest(key kmsg.Key, version int16) kmsg.Request {
	req := kmsg.RequestForKey(key.Int16())
	req.SetVersion(version)
	id := fuzzTopicIDPlaceholder
	switch r := req.(type) {
	case *kmsg.ProduceRequest:
		batch := rawBatch(rawBatchOptions{timestamp: 1}, rawRecord{Key: []byte("k"), Value: []byte("v")})
		r.Acks, r.TimeoutMillis = -1, 1000
		r.Topics = []kmsg.ProduceRequestTopic{{Topic: fuzzTopic, TopicID: id,
			Partitions: []kmsg.ProduceRequestTopicPartition{{Partition: 0, Records: batch}}}}
	case *kmsg.FetchRequest:
		*r = *rawFetchReq(version, fuzzTopic, id, 0, 0)
		r.MaxWaitMillis, r.MinBytes = 5, 1
		if version >= 7 {
			r.SessionEpoch = 0 // open a session, so incremental fetches have one to mutate
		}
	case *kmsg.ListOffsetsRequest:
		r.ReplicaID = -1
		r.Topics = []kmsg.ListOffsetsRequestTopic{{Topic: fuzzTopic, Partitions: []kmsg.ListOffsetsRequestTopicPartition{
			{Partition: 0, CurrentLeaderEpoch: -1, Timestamp: -1, MaxNumOffsets: 1},
			{Partition: 1, CurrentLeaderEpoch: -1, Timestamp: -3, MaxNumOffsets: 1},
		}}}
	case *kmsg.MetadataRequest:
		t := kmsg.MetadataRequestTopic{Topic: kmsg.StringPtr(fuzzTopic)}
		if version >= 10 {
			t.TopicID = id
		}
		r.Topics = []kmsg.MetadataRequestTopic{t}
	case *kmsg.OffsetCommitRequest:
		r.Group, r.Generation = fuzzGroup, -1
		r.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: fuzzTopic, TopicID: id,
			Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 1, LeaderEpoch: -1, Metadata: kmsg.StringPtr("m")}}}}
	case *kmsg.OffsetFetchRequest:
		r.Group = fuzzGroup
		r.Topics = []kmsg.OffsetFetchRequestTopic{{Topic: fuzzTopic, Partitions: []int32{0, 1}}}
		r.Groups = []kmsg.OffsetFetchRequestGroup{{Group: fuzzGroup, MemberEpoch: -1,
			Topics: []kmsg.OffsetFetchRequestGroupTopic{{Topic: fuzzTopic, TopicID: id, Partitions: []int32{0, 1}}}}}
	case *kmsg.FindCoordinatorRequest:
		r.CoordinatorKey = fuzzGroup
		r.CoordinatorKeys = []string{fuzzGroup, fuzzConsumerGroup}
	case *kmsg.JoinGroupRequest:
		r.Group, r.ProtocolType = fuzzGroup, "consumer"
		r.SessionTimeoutMillis, r.RebalanceTimeoutMillis = fuzzMaxWaitMillis, fuzzMaxWaitMillis
		r.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: []byte{0, 0, 0, 0, 0, 1, 0, 4, 'f', 'u', 'z', 'z', 0, 0, 0, 0}}}
	case *kmsg.HeartbeatRequest:
		r.Group, r.MemberID, r.InstanceID = fuzzGroup, "", kmsg.StringPtr(fuzzInstance)
	case *kmsg.LeaveGroupRequest:
		r.Group = fuzzGroup
		r.Members = []kmsg.LeaveGroupRequestMember{{InstanceID: kmsg.StringPtr("fuzz-nobody")}}
	case *kmsg.SyncGroupRequest:
		r.Group, r.Generation = fuzzGroup, 1
		r.ProtocolType, r.Protocol = kmsg.StringPtr("consumer"), kmsg.StringPtr("range")
		r.GroupAssignment = []kmsg.SyncGroupRequestGroupAssignment{{MemberID: "m", MemberAssignment: []byte{0, 0}}}
	case *kmsg.DescribeGroupsRequest:
		r.Groups = []string{fuzzGroup, fuzzConsumerGroup}
	case *kmsg.ListGroupsRequest:
		r.StatesFilter = []string{"Stable", "Empty"}
		r.TypesFilter = []string{"classic", "consumer"}
	case *kmsg.ApiVersionsRequest:
		r.ClientSoftwareName, r.ClientSoftwareVersion = "fuzz", "1"
	case *kmsg.CreateTopicsRequest:
		r.TimeoutMillis = 1000
		r.Topics = []kmsg.CreateTopicsRequestTopic{{Topic: fuzzCreatedTopic, NumPartitions: 1, ReplicationFactor: 1,
			Configs: []kmsg.CreateTopicsRequestTopicConfig{{Name: "cleanup.policy", Value: kmsg.StringPtr("compact")}}}}
	case *kmsg.DeleteTopicsRequest:
		r.TimeoutMillis = 1000
		r.TopicNames = []string{fuzzCreatedTopic}
		r.Topics = []kmsg.DeleteTopicsRequestTopic{{Topic: kmsg.StringPtr(fuzzCreatedTopic)}}
	case *kmsg.DeleteRecordsRequest:
		r.TimeoutMillis = 1000
		r.Topics = []kmsg.DeleteRecordsRequestTopic{{Topic: fuzzTopic, Partitions: []kmsg.DeleteRecordsRequestTopicPartition{{Partition: 1, Offset: 0}}}}
	case *kmsg.InitProducerIDRequest:
		r.TransactionalID, r.TransactionTimeoutMillis = kmsg.StringPtr(fuzzTxnID), 60000
		r.ProducerID, r.ProducerEpoch = -1, -1
	case *kmsg.OffsetForLeaderEpochRequest:
		r.ReplicaID = -1
		r.Topics = []kmsg.OffsetForLeaderEpochRequestTopic{{Topic: fuzzTopic,
			Partitions: []kmsg.OffsetForLeaderEpochRequestTopicPartition{{Partition: 0, CurrentLeaderEpoch: -1, LeaderEpoch: 0}}}}
	case *kmsg.AddPartitionsToTxnRequest:
		r.TransactionalID, r.ProducerID, r.ProducerEpoch = fuzzTxnID, fuzzProducerID, 0
		r.Topics = []kmsg.AddPartitionsToTxnRequestTopic{{Topic: fuzzTopic, Partitions: []int32{1}}}
		r.Transactions = []kmsg.AddPartitionsToTxnRequestTransaction{{TransactionalID: fuzzTxnID,
			ProducerID: fuzzProducerID, VerifyOnly: true,
			Topics: []kmsg.AddPartitionsToTxnRequestTransactionTopic{{Topic: fuzzTopic, Partitions: []int32{0}}}}}
	case *kmsg.AddOffsetsToTxnRequest:
		r.TransactionalID, r.ProducerID, r.Group = fuzzTxnID, fuzzProducerID, fuzzGroup
	case *kmsg.EndTxnRequest:
		r.TransactionalID, r.ProducerID, r.Commit = fuzzTxnID, fuzzProducerID, true
	case *kmsg.WriteTxnMarkersRequest:
		r.Markers = []kmsg.WriteTxnMarkersRequestMarker{{ProducerID: 99, Committed: true,
			Topics: []kmsg.WriteTxnMarkersRequestMarkerTopic{{Topic: fuzzTopic, Partitions: []int32{1}}}}}
	case *kmsg.TxnOffsetCommitRequest:
		r.TransactionalID, r.Group, r.ProducerID = fuzzTxnID, fuzzGroup, fuzzProducerID
		r.Generation = -1
		r.Topics = []kmsg.TxnOffsetCommitRequestTopic{{Topic: fuzzTopic,
			Partitions: []kmsg.TxnOffsetCommitRequestTopicPartition{{Partition: 0, Offset: 1, LeaderEpoch: -1}}}}
	case *kmsg.DescribeConfigsRequest:
		r.IncludeSynonyms, r.IncludeDocumentation = true, true
		r.Resources = []kmsg.DescribeConfigsRequestResource{
			{ResourceType: kmsg.ConfigResourceTypeTopic, ResourceName: fuzzTopic},
			{ResourceType: kmsg.ConfigResourceTypeBroker, ResourceName: "1", ConfigNames: []string{"log.retention.ms"}},
		}
	case *kmsg.AlterConfigsRequest:
		r.Resources = []kmsg.AlterConfigsRequestResource{{ResourceType: kmsg.ConfigResourceTypeTopic, ResourceName: fuzzTopic,
			Configs: []kmsg.AlterConfigsRequestResourceConfig{{Name: "retention.ms", Value: kmsg.StringPtr("-1")}}}}
	case *kmsg.DescribeLogDirsRequest:
		r.Topics = []kmsg.DescribeLogDirsRequestTopic{{Topic: fuzzTopic, Partitions: []int32{0, 1}}}
	case *kmsg.AlterReplicaLogDirsRequest:
		// A directory that is not the broker's (LOG_DIR_NOT_FOUND) and one
		// that is, for a partition it has not: the seed must not depend on
		// the test's temporary path, and must not start a move.
		r.Dirs = []kmsg.AlterReplicaLogDirsRequestDir{
			{Dir: "/not-a-log-dir", Topics: []kmsg.AlterReplicaLogDirsRequestDirTopic{{Topic: fuzzTopic, Partitions: []int32{0}}}},
			{Dir: "/not-a-log-dir-either", Topics: []kmsg.AlterReplicaLogDirsRequestDirTopic{{Topic: "fuzz-no-such-topic", Partitions: []int32{7}}}},
		}
	case *kmsg.AssignReplicasToDirsRequest:
		r.BrokerID, r.BrokerEpoch = 99, 1
		r.Directories = []kmsg.AssignReplicasToDirsRequestDirectory{{ID: [16]byte{1},
			Topics: []kmsg.AssignReplicasToDirsRequestDirectoryTopic{{TopicID: [16]byte{2},
				Partitions: []kmsg.AssignReplicasToDirsRequestDirectoryTopicPartition{{Partition: 0}}}}}}
	case *kmsg.CreatePartitionsRequest:
		r.TimeoutMillis, r.ValidateOnly = 1000, true
		r.Topics = []kmsg.CreatePartitionsRequestTopic{{Topic: fuzzTopic, Count: 3}}
	case *kmsg.DeleteGroupsRequest:
		r.Groups = []string{"fuzz-empty-group"}
	case *kmsg.ElectLeadersRequest:
		r.TimeoutMillis = 1000
		r.Topics = []kmsg.ElectLeadersRequestTopic{{Topic: fuzzTopic, Partitions: []int32{0, 1}}}
	case *kmsg.AlterPartitionAssignmentsRequest:
		// A move of partition 0 and a cancel of partition 1 (none in
		// progress: NO_REASSIGNMENT_IN_PROGRESS).
		r.TimeoutMillis = 1000
		r.Topics = []kmsg.AlterPartitionAssignmentsRequestTopic{{Topic: fuzzTopic, Partitions: []kmsg.AlterPartitionAssignmentsRequestTopicPartition{
			{Partition: 0, Replicas: []int32{1}}, {Partition: 1},
		}}}
	case *kmsg.ListPartitionReassignmentsRequest:
		r.TimeoutMillis = 1000
		r.Topics = []kmsg.ListPartitionReassignmentsRequestTopic{{Topic: fuzzTopic, Partitions: []int32{0, 1}}}
	case *kmsg.IncrementalAlterConfigsRequest:
		r.Resources = []kmsg.IncrementalAlterConfigsRequestResource{{ResourceType: kmsg.ConfigResourceTypeTopic, ResourceName: fuzzTopic,
			Configs: []kmsg.IncrementalAlterConfigsRequestResourceConfig{
				{Name: "cleanup.policy", Op: kmsg.IncrementalAlterConfigOpAppend, Value: kmsg.StringPtr("compact")},
				{Name: "segment.ms", Op: kmsg.IncrementalAlterConfigOpDelete},
			}}}
	case *kmsg.OffsetDeleteRequest:
		r.Group = fuzzGroup
		r.Topics = []kmsg.OffsetDeleteRequestTopic{{Topic: fuzzTopic, Partitions: []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 1}}}}
	case *kmsg.DescribeACLsRequest:
		r.ResourceType, r.ResourceName = kmsg.ACLResourceTypeTopic, kmsg.StringPtr(fuzzTopic)
		r.Operation, r.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
		if version >= 1 {
			r.ResourcePatternType = kmsg.ACLResourcePatternTypeMatch
		}
	case *kmsg.CreateACLsRequest:
		c := kmsg.NewCreateACLsRequestCreation()
		c.ResourceType, c.ResourceName, c.Principal, c.Host = kmsg.ACLResourceTypeTopic, fuzzTopic, fuzzPrincipal, "*"
		c.Operation, c.PermissionType = kmsg.ACLOperationRead, kmsg.ACLPermissionTypeAllow
		r.Creations = append(r.Creations, c)
		if version >= 1 {
			c.ResourceName, c.ResourcePatternType = "fu", kmsg.ACLResourcePatternTypePrefixed
			c.Operation, c.PermissionType = kmsg.ACLOperationWrite, kmsg.ACLPermissionTypeDeny
			r.Creations = append(r.Creations, c)
		}
	case *kmsg.DeleteACLsRequest:
		f := kmsg.NewDeleteACLsRequestFilter()
		f.ResourceType, f.ResourceName, f.Principal = kmsg.ACLResourceTypeTopic, kmsg.StringPtr(fuzzTopic), kmsg.StringPtr(fuzzPrincipal)
		f.Operation, f.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
		r.Filters = append(r.Filters, f)
	case *kmsg.DescribeClientQuotasRequest:
		r.Components = []kmsg.DescribeClientQuotasRequestComponent{
			{EntityType: "user", MatchType: 0, Match: kmsg.StringPtr(fuzzScramUser)},
			{EntityType: "client-id", MatchType: 2},
		}
	case *kmsg.AlterClientQuotasRequest:
		r.Entries = []kmsg.AlterClientQuotasRequestEntry{
			{Entity: []kmsg.AlterClientQuotasRequestEntryEntity{{Type: "user", Name: kmsg.StringPtr(fuzzScramUser)}, {Type: "client-id"}},
				Ops: []kmsg.AlterClientQuotasRequestEntryOp{{Key: "producer_byte_rate", Value: 1024}, {Key: "consumer_byte_rate", Remove: true}}},
			// An address the harness does not connect from: a rate on
			// the default IP would throttle its own connection per input.
			{Entity: []kmsg.AlterClientQuotasRequestEntryEntity{{Type: "ip", Name: kmsg.StringPtr("192.0.2.1")}},
				Ops: []kmsg.AlterClientQuotasRequestEntryOp{{Key: "connection_creation_rate", Value: 10}}},
		}
	case *kmsg.DescribeUserSCRAMCredentialsRequest:
		r.Users = []kmsg.DescribeUserSCRAMCredentialsRequestUser{{Name: fuzzScramUser}, {Name: "fuzz-nobody"}}
	case *kmsg.AlterUserSCRAMCredentialsRequest:
		r.Deletions = []kmsg.AlterUserSCRAMCredentialsRequestDeletion{{Name: "fuzz-gone", Mechanism: 2}}
		r.Upsertions = []kmsg.AlterUserSCRAMCredentialsRequestUpsertion{{Name: fuzzScramUser, Mechanism: 1, Iterations: 4096,
			Salt: []byte("fuzz-salt"), SaltedPassword: []byte("fuzz-salted-password-of-32-bytes")}}
	case *kmsg.CreateDelegationTokenRequest:
		r.Renewers = []kmsg.CreateDelegationTokenRequestRenewer{{PrincipalType: "User", PrincipalName: "fuzz-renewer"}}
		r.MaxLifetimeMillis = -1
		if version >= 3 {
			r.OwnerPrincipalType, r.OwnerPrincipalName = kmsg.StringPtr("User"), kmsg.StringPtr("fuzz")
		}
	case *kmsg.RenewDelegationTokenRequest:
		r.HMAC, r.RenewTimeMillis = []byte("fuzz-hmac"), 1000
	case *kmsg.ExpireDelegationTokenRequest:
		r.HMAC, r.ExpiryPeriodMillis = []byte("fuzz-hmac"), -1
	case *kmsg.DescribeDelegationTokenRequest:
		r.Owners = []kmsg.DescribeDelegationTokenRequestOwner{{PrincipalType: "User", PrincipalName: "fuzz"}}
	case *kmsg.EnvelopeRequest:
		// A token for User:fuzz, forwarded as a broker would.
		p := kmsg.NewDefaultPrincipalData()
		p.Type, p.Name = "User", "fuzz"
		r.RequestData = appendRequestHeaderAndBody(nil, fuzzSeedRequest(kmsg.CreateDelegationToken, 3), 3, "fuzz-broker")
		r.RequestPrincipal, r.ClientHostAddress = p.AppendTo(nil), []byte{127, 0, 0, 1}
	case *kmsg.DescribeQuorumRequest:
		r.Topics = []kmsg.DescribeQuorumRequestTopic{{Topic: "__cluster_metadata",
			Partitions: []kmsg.DescribeQuorumRequestTopicPartition{{Partition: 0}}}}
	case *kmsg.AddRaftVoterRequest:
		// The harness's quorum is static: refused (UNSUPPORTED_VERSION)
		// after the request is read, so its voters stay as they are.
		r.VoterID, r.VoterDirectoryID, r.TimeoutMillis = 2, [16]byte{2}, 1000
		r.Listeners = []kmsg.AddRaftVoterRequestListener{{Name: "CONTROLLER", Host: "127.0.0.1", Port: 1}}
	case *kmsg.RemoveRaftVoterRequest:
		r.VoterID, r.VoterDirectoryID = 2, [16]byte{2}
	case *kmsg.UnregisterBrokerRequest:
		// No such broker: BROKER_ID_NOT_REGISTERED, the harness's single
		// node stays registered.
		r.BrokerID = 9
	case *kmsg.UpdateFeaturesRequest:
		// Dry runs, so the harness's levels stay as they are: one at the
		// level it has, one refused.
		r.ValidateOnly = true
		r.FeatureUpdates = []kmsg.UpdateFeaturesRequestFeatureUpdate{{Feature: "group.version", MaxVersionLevel: 1, UpgradeType: 1},
			{Feature: "metadata.version", MaxVersionLevel: 22, UpgradeType: 2, AllowDowngrade: true}}
	case *kmsg.DescribeClusterRequest:
		r.EndpointType = 1
	case *kmsg.DescribeProducersRequest:
		r.Topics = []kmsg.DescribeProducersRequestTopic{{Topic: fuzzTopic, Partitions: []int32{0, 1}}}
	case *kmsg.DescribeTransactionsRequest:
		r.TransactionalIDs = []string{fuzzTxnID, "fuzz-nobody"}
	case *kmsg.ListTransactionsRequest:
		r.StateFilters = []string{"Ongoing"}
		r.DurationFilterMillis = -1
		r.TransactionalIDPattern = kmsg.StringPtr("fuzz.*")
	case *kmsg.ConsumerGroupHeartbeatRequest:
		r.Group, r.MemberID, r.MemberEpoch = fuzzConsumerGroup, fuzzMember, 0
		r.RebalanceTimeoutMillis = fuzzMaxWaitMillis
		r.SubscribedTopicNames = []string{fuzzTopic}
		r.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
		if version >= 1 {
			r.SubscribedTopicRegex = kmsg.StringPtr("fu.*")
		}
	case *kmsg.ConsumerGroupDescribeRequest:
		r.Groups = []string{fuzzConsumerGroup, fuzzGroup}
	case *kmsg.StreamsGroupHeartbeatRequest:
		r.Group, r.MemberID, r.MemberEpoch = fuzzStreamsGroup, fuzzMember, 0
		r.RebalanceTimeoutMillis = fuzzMaxWaitMillis
		r.ProcessID = kmsg.StringPtr("fuzz-process")
		r.Topology = &kmsg.StreamsGroupHeartbeatRequestTopology{Subtopologies: []kmsg.StreamsGroupHeartbeatRequestTopologySubtopology{{
			SubtopologyID: "0", SourceTopics: []string{fuzzTopic}, RepartitionSinkTopics: []string{"fuzz-streams-repartition"},
		}, {
			SubtopologyID: "1", RepartitionSourceTopics: []kmsg.TopicInfo{{Topic: "fuzz-streams-repartition"}},
			StateChangelogTopics: []kmsg.TopicInfo{{Topic: "fuzz-streams-changelog", Configs: []kmsg.TopicInfoConfig{{Key: "cleanup.policy", Value: "compact"}}}},
		}}}
		r.ActiveTasks, r.StandbyTasks, r.WarmupTasks = []kmsg.TaskIDs{}, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
		r.UserEndpoint = &kmsg.StreamsGroupHeartbeatRequestUserEndpoint{Host: "localhost", Port: 7070}
	case *kmsg.StreamsGroupDescribeRequest:
		r.Groups = []string{fuzzStreamsGroup, fuzzGroup}
		if version >= 1 {
			r.IncludeTopologyDescription = true
		}
	case *kmsg.PushTelemetryRequest:
		r.ClientInstanceID = fuzzClientInstance
		r.SubscriptionID = telemetry.SubscriptionID(telemetry.Subscribed{IntervalMs: telemetry.DefaultIntervalMs}, fuzzClientInstance)
		r.Metrics = fuzzTelemetry
	case *kmsg.ListConfigResourcesRequest:
		if version >= 1 {
			r.ResourceTypes = []int8{int8(kmsg.ConfigResourceTypeClientMetrics), int8(kmsg.ConfigResourceTypeTopic)}
		}
	case *kmsg.DescribeTopicPartitionsRequest:
		r.ResponsePartitionLimit = 1
		r.Topics = []kmsg.DescribeTopicPartitionsRequestTopic{{Topic: fuzzTopic}}
		r.Cursor = &kmsg.DescribeTopicPartitionsRequestCursor{Topic: fuzzTopic, Partition: 1}
	}
	return req
}

package auth

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// brokerAPIs are the keys Samsa's broker registers (internal/broker,
// NN_name.go files calling registerAPI). The auth package cannot import
// the broker, so the list is copied here; the broker tests its own
// apiTable against APIRequirements.
var brokerAPIs = []kmsg.Key{
	kmsg.Produce, kmsg.Fetch, kmsg.ListOffsets, kmsg.Metadata,
	kmsg.OffsetCommit, kmsg.OffsetFetch, kmsg.FindCoordinator, kmsg.JoinGroup,
	kmsg.Heartbeat, kmsg.LeaveGroup, kmsg.SyncGroup, kmsg.DescribeGroups,
	kmsg.ListGroups, kmsg.ApiVersions, kmsg.CreateTopics, kmsg.DeleteTopics,
	kmsg.DeleteRecords, kmsg.InitProducerID, kmsg.OffsetForLeaderEpoch, kmsg.AddPartitionsToTxn,
	kmsg.AddOffsetsToTxn, kmsg.EndTxn, kmsg.WriteTxnMarkers, kmsg.TxnOffsetCommit,
	kmsg.DescribeConfigs, kmsg.AlterConfigs, kmsg.DescribeLogDirs, kmsg.CreatePartitions,
	kmsg.DeleteGroups, kmsg.ElectLeaders, kmsg.IncrementalAlterConfigs, kmsg.OffsetDelete,
	kmsg.DescribeQuorum, kmsg.AlterPartition, kmsg.DescribeCluster, kmsg.DescribeProducers,
	kmsg.BrokerRegistration, kmsg.BrokerHeartbeat, kmsg.DescribeTransactions, kmsg.ListTransactions,
	kmsg.AllocateProducerIDs, kmsg.ConsumerGroupHeartbeat, kmsg.ConsumerGroupDescribe, kmsg.DescribeTopicPartitions,
	kmsg.AlterPartitionAssignments, kmsg.ListPartitionReassignments, kmsg.UnregisterBroker,
	kmsg.ShareGroupHeartbeat, kmsg.ShareGroupDescribe, kmsg.DescribeShareGroupOffsets,
	kmsg.AlterShareGroupOffsets, kmsg.DeleteShareGroupOffsets,
}

func TestOperationTableCoversBrokerAPIs(t *testing.T) {
	for _, k := range brokerAPIs {
		if _, ok := APIRequirements(k); !ok {
			t.Errorf("no requirements for %s (%d), which the broker serves", k.Name(), k)
		}
	}
}

func TestOperationTableCoversKafkaAPIs(t *testing.T) {
	for k := kmsg.Key(0); k <= kmsg.ReadShareGroupStateSummary; k++ {
		if _, ok := APIRequirements(k); !ok {
			t.Errorf("no requirements for %s (%d)", k.Name(), k)
		}
	}
	if _, ok := APIRequirements(kmsg.Key(-1)); ok {
		t.Error("requirements for key -1")
	}
}

// TestOperationTableWellFormed: every check names an operation Kafka
// lists for its resource type, says what a failure does, and a FallBack
// has a requirement after it to fall back to.
func TestOperationTableWellFormed(t *testing.T) {
	for k, reqs := range apiRequirements {
		for i, r := range reqs {
			// KRaft's controller lets DELETE on the cluster delete any
			// topic, though KIP-430 does not list DELETE for the cluster.
			controllerDelete := k == kmsg.DeleteTopics && r.Operation == kmsg.ACLOperationDelete &&
				r.Resource == kmsg.ACLResourceTypeCluster
			if !controllerDelete && !slices.Contains(SupportedOperations(r.Resource), r.Operation) {
				t.Errorf("%s: %s on %s, an operation no ACL on it grants", k.Name(), r.Operation, r.Resource)
			}
			switch r.Denial {
			case Refuse:
				if r.Error == nil {
					t.Errorf("%s: %s %s refuses without an error", k.Name(), r.Operation, r.Resource)
				}
			case Omit, FallBack:
				if r.Error != nil {
					t.Errorf("%s: %s %s has an error it never answers", k.Name(), r.Operation, r.Resource)
				}
			default:
				t.Errorf("%s: %s %s has Denial %d", k.Name(), r.Operation, r.Resource, r.Denial)
			}
			if r.Denial == FallBack && i == len(reqs)-1 {
				t.Errorf("%s: %s %s falls back to nothing", k.Name(), r.Operation, r.Resource)
			}
		}
	}
}

// documentedPairs is Kafka's "Operations and Resources on Protocols" table
// (docs/security.html): each API's (operation, resource) pairs. Where
// Kafka's code checks another operation the entry is replaced and says so.
func documentedPairs() map[kmsg.Key][][2]int8 {
	const (
		read            = int8(kmsg.ACLOperationRead)
		write           = int8(kmsg.ACLOperationWrite)
		create          = int8(kmsg.ACLOperationCreate)
		del             = int8(kmsg.ACLOperationDelete)
		alter           = int8(kmsg.ACLOperationAlter)
		describe        = int8(kmsg.ACLOperationDescribe)
		clusterAction   = int8(kmsg.ACLOperationClusterAction)
		describeConfigs = int8(kmsg.ACLOperationDescribeConfigs)
		alterConfigs    = int8(kmsg.ACLOperationAlterConfigs)
		idempotentWrite = int8(kmsg.ACLOperationIdempotentWrite)
		createTokens    = int8(kmsg.ACLOperationCreateTokens)
		describeTokens  = int8(kmsg.ACLOperationDescribeTokens)

		top  = int8(kmsg.ACLResourceTypeTopic)
		grp  = int8(kmsg.ACLResourceTypeGroup)
		clus = int8(kmsg.ACLResourceTypeCluster)
		txn  = int8(kmsg.ACLResourceTypeTransactionalId)
		tok  = int8(kmsg.ACLResourceTypeDelegationToken)
		usr  = int8(kmsg.ACLResourceTypeUser)
	)

	return map[kmsg.Key][][2]int8{
		kmsg.Produce:              {{write, txn}, {idempotentWrite, clus}, {write, top}},
		kmsg.Fetch:                {{clusterAction, clus}, {read, top}},
		kmsg.ListOffsets:          {{describe, top}},
		kmsg.Metadata:             {{describe, top}, {create, clus}, {create, top}},
		kmsg.LeaderAndISR:         {{clusterAction, clus}},
		kmsg.StopReplica:          {{clusterAction, clus}},
		kmsg.UpdateMetadata:       {{clusterAction, clus}},
		kmsg.ControlledShutdown:   {{clusterAction, clus}},
		kmsg.OffsetCommit:         {{read, grp}, {read, top}},
		kmsg.OffsetFetch:          {{describe, grp}, {describe, top}},
		kmsg.FindCoordinator:      {{describe, grp}, {describe, txn}},
		kmsg.JoinGroup:            {{read, grp}},
		kmsg.Heartbeat:            {{read, grp}},
		kmsg.LeaveGroup:           {{read, grp}},
		kmsg.SyncGroup:            {{read, grp}},
		kmsg.DescribeGroups:       {{describe, grp}},
		kmsg.ListGroups:           {{describe, clus}, {describe, grp}},
		kmsg.SASLHandshake:        {},
		kmsg.ApiVersions:          {},
		kmsg.CreateTopics:         {{create, clus}, {create, top}},
		kmsg.DeleteTopics:         {{del, top}},
		kmsg.DeleteRecords:        {{del, top}},
		kmsg.InitProducerID:       {{write, txn}, {idempotentWrite, clus}},
		kmsg.OffsetForLeaderEpoch: {{clusterAction, clus}, {describe, top}},
		kmsg.AddPartitionsToTxn:   {{write, txn}, {write, top}},
		kmsg.AddOffsetsToTxn:      {{write, txn}, {read, grp}},
		kmsg.EndTxn:               {{write, txn}},
		kmsg.WriteTxnMarkers:      {{alter, clus}, {clusterAction, clus}},
		kmsg.TxnOffsetCommit:      {{write, txn}, {read, grp}, {read, top}},
		kmsg.DescribeACLs:         {{describe, clus}},
		kmsg.CreateACLs:           {{alter, clus}},
		kmsg.DeleteACLs:           {{alter, clus}},
		kmsg.DescribeConfigs:      {{describeConfigs, clus}, {describeConfigs, top}},
		kmsg.AlterConfigs:         {{alterConfigs, clus}, {alterConfigs, top}},
		kmsg.AlterReplicaLogDirs:  {{alter, clus}},
		kmsg.DescribeLogDirs:      {{describe, clus}},
		kmsg.SASLAuthenticate:     {},
		kmsg.CreatePartitions:     {{alter, top}},
		kmsg.CreateDelegationToken: {
			{createTokens, usr},
		},
		kmsg.RenewDelegationToken:    {},
		kmsg.ExpireDelegationToken:   {},
		kmsg.DescribeDelegationToken: {{describe, tok}, {describeTokens, usr}},
		kmsg.DeleteGroups:            {{del, grp}},
		// Documented as ClusterAction; KafkaApis and ControllerApis check Alter.
		kmsg.ElectLeaders:                 {{alter, clus}},
		kmsg.IncrementalAlterConfigs:      {{alterConfigs, clus}, {alterConfigs, top}},
		kmsg.AlterPartitionAssignments:    {{alter, clus}},
		kmsg.ListPartitionReassignments:   {{describe, clus}},
		kmsg.OffsetDelete:                 {{del, grp}, {read, top}},
		kmsg.DescribeClientQuotas:         {{describeConfigs, clus}},
		kmsg.AlterClientQuotas:            {{alterConfigs, clus}},
		kmsg.DescribeUserSCRAMCredentials: {{describe, clus}},
		kmsg.AlterUserSCRAMCredentials:    {{alter, clus}},
		kmsg.Vote:                         {{clusterAction, clus}},
		kmsg.BeginQuorumEpoch:             {{clusterAction, clus}},
		kmsg.EndQuorumEpoch:               {{clusterAction, clus}},
		kmsg.DescribeQuorum:               {{describe, clus}},
		kmsg.AlterPartition:               {{clusterAction, clus}},
		kmsg.UpdateFeatures:               {{alter, clus}},
		kmsg.Envelope:                     {{clusterAction, clus}},
		kmsg.FetchSnapshot:                {{clusterAction, clus}},
		kmsg.DescribeCluster:              {{describe, clus}},
		kmsg.DescribeProducers:            {{read, top}},
		kmsg.BrokerRegistration:           {{clusterAction, clus}},
		kmsg.BrokerHeartbeat:              {{clusterAction, clus}},
		kmsg.UnregisterBroker:             {{alter, clus}},
		kmsg.DescribeTransactions:         {{describe, txn}},
		kmsg.ListTransactions:             {{describe, txn}},
		kmsg.AllocateProducerIDs:          {{clusterAction, clus}},
		kmsg.ConsumerGroupHeartbeat:       {{read, grp}},
		// Documented as Read; KafkaApis checks Describe.
		kmsg.ConsumerGroupDescribe:     {{describe, grp}},
		kmsg.ControllerRegistration:    {{clusterAction, clus}},
		kmsg.GetTelemetrySubscriptions: {},
		kmsg.PushTelemetry:             {},
		kmsg.AssignReplicasToDirs:      {{clusterAction, clus}},
		kmsg.ListConfigResources:       {{describeConfigs, clus}},
		kmsg.DescribeTopicPartitions:   {{describe, top}},
		kmsg.ShareGroupHeartbeat:       {{read, grp}, {describe, top}},
		kmsg.DescribeShareGroupOffsets: {{describe, grp}, {describe, top}},
		kmsg.AlterShareGroupOffsets:    {{read, grp}, {read, top}},
		kmsg.DeleteShareGroupOffsets:   {{del, grp}, {read, top}},
		kmsg.ShareGroupDescribe:        {{describe, grp}, {describe, top}},
		// Kafka 4.1: CREATE for the topology's internal topics.
		kmsg.StreamsGroupHeartbeat:      {{read, grp}, {create, clus}, {create, top}},
		kmsg.StreamsGroupDescribe:       {{describe, grp}},
		kmsg.ShareFetch:                 {{read, grp}, {read, top}},
		kmsg.ShareAcknowledge:           {{read, grp}, {read, top}},
		kmsg.InitializeShareGroupState:  {{clusterAction, clus}},
		kmsg.ReadShareGroupState:        {{clusterAction, clus}},
		kmsg.WriteShareGroupState:       {{clusterAction, clus}},
		kmsg.DeleteShareGroupState:      {{clusterAction, clus}},
		kmsg.ReadShareGroupStateSummary: {{clusterAction, clus}},
		// Not in the documentation's table: ControllerApis.
		kmsg.AddRaftVoter:    {{alter, clus}},
		kmsg.RemoveRaftVoter: {{alter, clus}},
		kmsg.UpdateRaftVoter: {{clusterAction, clus}},
	}
}

// TestOperationTableFollowsKafkaDocs: each documented pair is in the
// row, and an API documented as unauthorized checks nothing. Rows may
// hold more than the documentation: checks Kafka's code makes under a
// condition (the When of each says which).
func TestOperationTableFollowsKafkaDocs(t *testing.T) {
	documented := documentedPairs()
	for k, pairs := range documented {
		reqs, ok := APIRequirements(k)
		if !ok {
			t.Errorf("%s: not in the table", k.Name())
			continue
		}
		have := map[[2]int8]bool{}
		for _, r := range reqs {
			have[[2]int8{int8(r.Operation), int8(r.Resource)}] = true
		}
		for _, p := range pairs {
			if !have[p] {
				t.Errorf("%s: documented %s on %s is missing", k.Name(), kmsg.ACLOperation(p[0]), kmsg.ACLResourceType(p[1]))
			}
		}
		if len(pairs) == 0 && len(reqs) != 0 {
			t.Errorf("%s: documented as unauthorized, the table checks %v", k.Name(), reqs)
		}
	}
	for k := range apiRequirements {
		if _, ok := documented[k]; !ok {
			t.Errorf("%s: in the table, not in the documented list", k.Name())
		}
	}
}

func TestOperationTableConditions(t *testing.T) {
	tests := []struct {
		key  kmsg.Key
		want Requirement // When ignored
	}{
		{kmsg.Produce, Requirement{Operation: kmsg.ACLOperationWrite, Resource: kmsg.ACLResourceTypeTransactionalId, Error: kerr.TransactionalIDAuthorizationFailed}},
		{kmsg.Produce, Requirement{Operation: kmsg.ACLOperationWrite, Resource: kmsg.ACLResourceTypeTopic, Error: kerr.TopicAuthorizationFailed}},
		{kmsg.Metadata, Requirement{Operation: kmsg.ACLOperationDescribe, Resource: kmsg.ACLResourceTypeTopic, Denial: Omit}},
		{kmsg.Metadata, Requirement{Operation: kmsg.ACLOperationCreate, Resource: kmsg.ACLResourceTypeCluster, Denial: FallBack}},
		{kmsg.InitProducerID, Requirement{Operation: kmsg.ACLOperationIdempotentWrite, Resource: kmsg.ACLResourceTypeCluster, Denial: FallBack}},
		{kmsg.InitProducerID, Requirement{Operation: kmsg.ACLOperationWrite, Resource: kmsg.ACLResourceTypeTopic, AnyResource: true, Error: kerr.ClusterAuthorizationFailed}},
		{kmsg.ListGroups, Requirement{Operation: kmsg.ACLOperationDescribe, Resource: kmsg.ACLResourceTypeGroup, Denial: Omit}},
		{kmsg.ListTransactions, Requirement{Operation: kmsg.ACLOperationDescribe, Resource: kmsg.ACLResourceTypeTransactionalId, Denial: Omit}},
		{kmsg.DescribeTopicPartitions, Requirement{Operation: kmsg.ACLOperationDescribe, Resource: kmsg.ACLResourceTypeTopic, Error: kerr.TopicAuthorizationFailed}},
		{kmsg.FindCoordinator, Requirement{Operation: kmsg.ACLOperationDescribe, Resource: kmsg.ACLResourceTypeTransactionalId, Error: kerr.TransactionalIDAuthorizationFailed}},
		{kmsg.Fetch, Requirement{Operation: kmsg.ACLOperationClusterAction, Resource: kmsg.ACLResourceTypeCluster, Error: kerr.TopicAuthorizationFailed}},
		{kmsg.DescribeCluster, Requirement{Operation: kmsg.ACLOperationAlter, Resource: kmsg.ACLResourceTypeCluster, Error: kerr.ClusterAuthorizationFailed}},
	}
	for _, tt := range tests {
		reqs, _ := APIRequirements(tt.key)
		found := slices.ContainsFunc(reqs, func(r Requirement) bool {
			r.When = ""
			return r == tt.want
		})
		if !found {
			t.Errorf("%s: no %+v in %+v", tt.key.Name(), tt.want, reqs)
		}
	}
}

func TestOperationTableIsCopied(t *testing.T) {
	reqs, _ := APIRequirements(kmsg.Produce)
	reqs[0].Operation = kmsg.ACLOperationAll
	again, _ := APIRequirements(kmsg.Produce)
	if again[0].Operation == kmsg.ACLOperationAll {
		t.Fatal("APIRequirements shares the table")
	}
}

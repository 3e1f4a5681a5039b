package broker

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/samsa-io/samsa/internal/auth"
	"github.com/samsa-io/samsa/internal/config"
	"github.com/samsa-io/samsa/internal/metadata"
	"github.com/samsa-io/samsa/internal/record"
)

// The authorization matrix: every API the broker serves to clients, sent
// by franz-go over SASL PLAIN as alice, in cells that give her the
// operations the API needs (auth.APIRequirements) in every way an ACL can
// name them, or all but one, or DENY one, and as a super user; then on a
// broker with allow.everyone.if.no.acl.found, with no ACLs and with ACLs
// that name someone else. Each row is one way an API is authorized (a
// topic's WRITE, or the cluster's CREATE where that suffices); each grant
// of a row is one check, with the error the client sees when it alone
// fails. One broker serves every cell of a kind; ACLs are replaced
// between cells through the admin (a super user), and CreateAcls answers
// once the broker's image holds them.

// authzJAAS is the SASL_PLAINTEXT listener's PLAIN users.
const authzJAAS = `org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-pw" user_bob="bob-pw";`

// omitted is what a probe of a listing reports when the resource is left
// out: how a listing denies.
const omitted int16 = -100

// grant is one ACL check of a row: alice needs op on the resource.
type grant struct {
	rt kmsg.ACLResourceType
	// name is the resource's; "%s" in it is replaced by a suffix unique
	// to the cell (a topic to auto-create).
	name string
	op   kmsg.ACLOperation
	// err is what the client sees when this check alone fails.
	err int16
}

// matrixRow is one way an API is authorized.
type matrixRow struct {
	api    kmsg.Key
	name   string
	grants []grant
	// topic, group, txn are the resources the probe names; setup creates
	// topic.
	topic, group, txn string
	// pins caps request versions of the client that sends the probe.
	pins map[kmsg.Key]int16
	// alternatives are the other ways the API may be allowed (a
	// cluster-wide permission instead of a topic's, or the reverse): with
	// allow.everyone.if.no.acl.found they too must have ACLs, else they
	// allow.
	alternatives []grant
	// setup runs once per broker, as the admin, after the topic exists.
	setup func(e *authzEnv)
	// ok lists the codes an allowed request may get; nil: any code that
	// is not an authorization error.
	ok    []int16
	probe func(p *probe) int16
}

func (r matrixRow) String() string {
	if r.name == "" {
		return r.api.Name()
	}
	return r.api.Name() + "/" + r.name
}

// Error codes, short.
var (
	// noPID is what an allowed transactional request with the probes'
	// made-up producer ID gets.
	noPID         = kerr.InvalidProducerIDMapping.Code
	topicDenied   = kerr.TopicAuthorizationFailed.Code
	groupDenied   = kerr.GroupAuthorizationFailed.Code
	clusterDenied = kerr.ClusterAuthorizationFailed.Code
	txnDenied     = kerr.TransactionalIDAuthorizationFailed.Code
)

func isAuthzError(code int16) bool {
	return code == topicDenied || code == groupDenied || code == clusterDenied || code == txnDenied ||
		code == kerr.DelegationTokenAuthorizationFailed.Code || code == omitted
}

func topicGrant(name string, op kmsg.ACLOperation) grant {
	return grant{kmsg.ACLResourceTypeTopic, name, op, topicDenied}
}

func groupGrant(name string, op kmsg.ACLOperation) grant {
	return grant{kmsg.ACLResourceTypeGroup, name, op, groupDenied}
}

func txnGrant(name string, op kmsg.ACLOperation) grant {
	return grant{kmsg.ACLResourceTypeTransactionalId, name, op, txnDenied}
}

func clusterGrant(op kmsg.ACLOperation, err int16) grant {
	return grant{kmsg.ACLResourceTypeCluster, auth.ClusterName, op, err}
}

// listed turns a listing's answer into a probe's code.
func listed(present bool) int16 {
	if present {
		return 0
	}
	return omitted
}

const (
	opRead            = kmsg.ACLOperationRead
	opWrite           = kmsg.ACLOperationWrite
	opCreate          = kmsg.ACLOperationCreate
	opDelete          = kmsg.ACLOperationDelete
	opAlter           = kmsg.ACLOperationAlter
	opDescribe        = kmsg.ACLOperationDescribe
	opClusterAction   = kmsg.ACLOperationClusterAction
	opDescribeConfigs = kmsg.ACLOperationDescribeConfigs
	opAlterConfigs    = kmsg.ACLOperationAlterConfigs
	opIdempotentWrite = kmsg.ACLOperationIdempotentWrite
)

// matrixRows is the matrix, one row per way each API is authorized.
func matrixRows() []matrixRow {
	return slices.Concat(topicRows(), groupRows(), txnRows(), adminRows(), tokenRows(), interNodeRows(), shareRows())
}

// interNodeRows are the APIs only controller listeners serve, which nodes
// send each other as ANONYMOUS over PLAINTEXT (so a cluster with an
// authorizer has User:ANONYMOUS in super.users, and no other principal
// ever reaches them): their handlers are called directly, with a
// connection of the cell's principal, on the matrix's broker.
func interNodeRows() []matrixRow {
	row := func(api kmsg.Key, ok int16, probe func(p *probe) int16) matrixRow {
		return matrixRow{api: api, name: "handler", grants: []grant{clusterGrant(opClusterAction, clusterDenied)}, ok: []int16{ok}, probe: probe}
	}
	return []matrixRow{
		row(kmsg.AlterPartition, kerr.StaleBrokerEpoch.Code, func(p *probe) int16 {
			req := kmsg.NewPtrAlterPartitionRequest()
			req.Version, req.BrokerID, req.BrokerEpoch = 3, 1, -1
			return handleAs(p, handleAlterPartition, req).(*kmsg.AlterPartitionResponse).ErrorCode
		}),
		row(kmsg.BrokerRegistration, kerr.InconsistentClusterID.Code, func(p *probe) int16 {
			req := kmsg.NewPtrBrokerRegistrationRequest()
			req.BrokerID, req.ClusterID = 99, "not-this-cluster"
			return handleAs(p, handleBrokerRegistration, req).(*kmsg.BrokerRegistrationResponse).ErrorCode
		}),
		row(kmsg.BrokerHeartbeat, kerr.StaleBrokerEpoch.Code, func(p *probe) int16 {
			req := kmsg.NewPtrBrokerHeartbeatRequest()
			req.BrokerID, req.BrokerEpoch = 99, 1
			return handleAs(p, handleBrokerHeartbeat, req).(*kmsg.BrokerHeartbeatResponse).ErrorCode
		}),
		row(kmsg.AssignReplicasToDirs, kerr.StaleBrokerEpoch.Code, func(p *probe) int16 {
			req := kmsg.NewPtrAssignReplicasToDirsRequest()
			req.BrokerID, req.BrokerEpoch = 99, 1
			return handleAs(p, handleAssignReplicasToDirs, req).(*kmsg.AssignReplicasToDirsResponse).ErrorCode
		}),
		row(kmsg.Envelope, kerr.DelegationTokenNotFound.Code, func(p *probe) int16 {
			// An expiry of a token no one has, forwarded for bob.
			expire := kmsg.NewPtrExpireDelegationTokenRequest()
			expire.Version, expire.HMAC, expire.ExpiryPeriodMillis = 2, []byte("no-such-token"), -1
			env := handleAs(p, handleEnvelope, envelopeOf(expire, auth.User("bob"), false)).(*kmsg.EnvelopeResponse)
			if env.ErrorCode != 0 {
				return env.ErrorCode
			}
			inner, err := decodeResponseHeaderAndBody(env.ResponseData, expire)
			if err != nil {
				p.t.Fatalf("the Envelope's response: %v", err)
			}
			return inner.(*kmsg.ExpireDelegationTokenResponse).ErrorCode
		}),
		row(kmsg.AllocateProducerIDs, 0, func(p *probe) int16 {
			req := kmsg.NewPtrAllocateProducerIDsRequest()
			req.BrokerID, req.BrokerEpoch = 1, -1
			return handleAs(p, handleAllocateProducerIDs, req).(*kmsg.AllocateProducerIDsResponse).ErrorCode
		}),
	}
}

// tokenDenied is what CreateDelegationToken answers a requester who may
// not create a token for its owner.
var tokenDenied = kerr.DelegationTokenAuthorizationFailed.Code

// tokenIDOf stands, in a grant's name, for the ID of the token setup
// created for owner: the controller picks it, per broker.
func tokenIDOf(owner string) string { return "<ID of the token of " + owner + ">" }

// tokenRows are the delegation token APIs with checks (KIP-48, KIP-373):
// a token for someone else, and the tokens another owns. The matrix's
// brokers have delegation.token.secret.key, and alice's SASL connection
// may use the token APIs. Renew and Expire check no ACL (the owner or a
// renewer may, as in Kafka).
func tokenRows() []matrixRow {
	describeRow := func(name, owner string, g grant, alt grant) matrixRow {
		return matrixRow{api: kmsg.DescribeDelegationToken, name: name, grants: []grant{g}, alternatives: []grant{alt}, ok: []int16{0},
			setup: func(e *authzEnv) { e.names[tokenIDOf(owner)] = e.mustCreateToken(owner) },
			probe: func(p *probe) int16 {
				resp := p.do(kmsg.NewPtrDescribeDelegationTokenRequest()).(*kmsg.DescribeDelegationTokenResponse)
				if resp.ErrorCode != 0 {
					return resp.ErrorCode
				}
				id := p.e.names[tokenIDOf(owner)]
				return listed(slices.ContainsFunc(resp.TokenDetails, func(d kmsg.DescribeDelegationTokenResponseTokenDetail) bool {
					return d.TokenID == id
				}))
			}}
	}
	const byID, byOwner = "User:mx-dt-by-id", "User:mx-dt-by-owner"
	return []matrixRow{
		{api: kmsg.CreateDelegationToken, name: "for another owner",
			grants: []grant{{kmsg.ACLResourceTypeUser, "User:mx-token-for", kmsg.ACLOperationCreateTokens, tokenDenied}}, ok: []int16{0},
			probe: func(p *probe) int16 {
				req := kmsg.NewPtrCreateDelegationTokenRequest()
				req.OwnerPrincipalType, req.OwnerPrincipalName = kmsg.StringPtr("User"), kmsg.StringPtr("mx-token-for")
				return p.do(req).(*kmsg.CreateDelegationTokenResponse).ErrorCode
			}},
		describeRow("token DESCRIBE", byID,
			grant{kmsg.ACLResourceTypeDelegationToken, tokenIDOf(byID), opDescribe, omitted},
			grant{kmsg.ACLResourceTypeUser, byID, kmsg.ACLOperationDescribeTokens, omitted}),
		describeRow("owner DESCRIBE_TOKENS", byOwner,
			grant{kmsg.ACLResourceTypeUser, byOwner, kmsg.ACLOperationDescribeTokens, omitted},
			grant{kmsg.ACLResourceTypeDelegationToken, tokenIDOf(byOwner), opDescribe, omitted}),
	}
}

// handle calls a handler as a connection of the probe's user from
// 127.0.0.1 would.
func handleAs[Req kmsg.Request](p *probe, fn func(*Broker, *conn, Req) (kmsg.Response, error), req Req) kmsg.Response {
	p.t.Helper()
	c := &conn{b: p.e.b, principal: auth.User(p.user), nc: addrConn{addr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1}},
		controllerListener: true, log: quiet}
	c.beginAudit(kmsg.Key(req.Key()))
	resp, err := fn(p.e.b, c, req)
	p.e.b.endAudit(c)
	if err != nil {
		p.t.Fatalf("%s: %v", kmsg.Key(req.Key()).Name(), err)
	}
	return resp
}

// addrConn is a connection that only has a remote address.
type addrConn struct {
	net.Conn
	addr net.Addr
}

func (a addrConn) RemoteAddr() net.Addr { return a.addr }

func topicRows() []matrixRow {
	return []matrixRow{
		{api: kmsg.Produce, topic: "mx-produce", grants: []grant{topicGrant("mx-produce", opWrite)}, ok: []int16{0},
			probe: func(p *probe) int16 { return p.produce("mx-produce", nil) }},
		{api: kmsg.Produce, name: "transactional", topic: "mx-produce-txn",
			grants: []grant{txnGrant("mx-produce-txn", opWrite), topicGrant("mx-produce-txn", opWrite)}, ok: []int16{noPID},
			probe: func(p *probe) int16 { return p.produce("mx-produce-txn", kmsg.StringPtr("mx-produce-txn")) }},
		{api: kmsg.Fetch, name: "consumer", topic: "mx-fetch", grants: []grant{topicGrant("mx-fetch", opRead)}, ok: []int16{0},
			probe: func(p *probe) int16 { return p.fetch("mx-fetch", -1) }},
		{api: kmsg.Fetch, name: "follower", topic: "mx-fetch-follower", grants: []grant{clusterGrant(opClusterAction, topicDenied)},
			ok: []int16{kerr.ReplicaNotAvailable.Code}, probe: func(p *probe) int16 { return p.fetch("mx-fetch-follower", 2) }},
		{api: kmsg.ListOffsets, topic: "mx-list-offsets", grants: []grant{topicGrant("mx-list-offsets", opDescribe)}, ok: []int16{0},
			probe: func(p *probe) int16 {
				req := kmsg.NewPtrListOffsetsRequest()
				req.ReplicaID = -1
				rt := kmsg.NewListOffsetsRequestTopic()
				rt.Topic = "mx-list-offsets"
				rp := kmsg.NewListOffsetsRequestTopicPartition()
				rp.Timestamp = -1
				rt.Partitions = append(rt.Partitions, rp)
				req.Topics = append(req.Topics, rt)
				return p.do(req).(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0].ErrorCode
			}},
		{api: kmsg.Metadata, name: "named", topic: "mx-metadata", grants: []grant{topicGrant("mx-metadata", opDescribe)}, ok: []int16{0},
			probe: func(p *probe) int16 { return p.metadataTopic("mx-metadata", false) }},
		{api: kmsg.Metadata, name: "all topics", topic: "mx-metadata-all", grants: []grant{{kmsg.ACLResourceTypeTopic, "mx-metadata-all", opDescribe, omitted}}, ok: []int16{0},
			probe: func(p *probe) int16 {
				for _, t := range p.do(kmsg.NewPtrMetadataRequest()).(*kmsg.MetadataResponse).Topics {
					if t.Topic != nil && *t.Topic == "mx-metadata-all" {
						return t.ErrorCode
					}
				}
				return omitted
			}},
		{api: kmsg.Metadata, name: "auto-create with topic CREATE",
			grants: []grant{topicGrant("mx-auto-%s", opDescribe), topicGrant("mx-auto-%s", opCreate)},
			ok:     []int16{0, kerr.LeaderNotAvailable.Code},
			probe:  func(p *probe) int16 { return p.metadataTopic(p.name("mx-auto-%s"), true) }},
		{api: kmsg.Metadata, name: "auto-create with cluster CREATE",
			grants: []grant{topicGrant("mx-auto-cluster-%s", opDescribe), clusterGrant(opCreate, topicDenied)},
			ok:     []int16{0, kerr.LeaderNotAvailable.Code},
			probe:  func(p *probe) int16 { return p.metadataTopic(p.name("mx-auto-cluster-%s"), true) }},
		{api: kmsg.CreateTopics, name: "topic CREATE", grants: []grant{topicGrant("mx-create-%s", opCreate)}, ok: []int16{0},
			alternatives: []grant{clusterGrant(opCreate, topicDenied)},
			probe:        func(p *probe) int16 { return p.createTopic(p.name("mx-create-%s")) }},
		{api: kmsg.CreateTopics, name: "cluster CREATE", grants: []grant{clusterGrant(opCreate, topicDenied)}, ok: []int16{0},
			alternatives: []grant{topicGrant("mx-create-cluster-%s", opCreate)},
			probe:        func(p *probe) int16 { return p.createTopic(p.name("mx-create-cluster-%s")) }},
		{api: kmsg.DeleteTopics, name: "topic DELETE", topic: "mx-delete-topic", grants: []grant{topicGrant("mx-delete-topic", opDelete)}, ok: []int16{0},
			alternatives: []grant{clusterGrant(opDelete, topicDenied)},
			probe:        func(p *probe) int16 { return p.deleteTopic("mx-delete-topic") }},
		{api: kmsg.DeleteTopics, name: "cluster DELETE", topic: "mx-delete-topic-cluster", grants: []grant{clusterGrant(opDelete, topicDenied)}, ok: []int16{0},
			alternatives: []grant{topicGrant("mx-delete-topic-cluster", opDelete)},
			probe:        func(p *probe) int16 { return p.deleteTopic("mx-delete-topic-cluster") }},
		{api: kmsg.DeleteRecords, topic: "mx-delete-records", grants: []grant{topicGrant("mx-delete-records", opDelete)}, ok: []int16{0},
			probe: func(p *probe) int16 {
				req := kmsg.NewPtrDeleteRecordsRequest()
				req.TimeoutMillis = 5000
				rt := kmsg.NewDeleteRecordsRequestTopic()
				rt.Topic = "mx-delete-records"
				rt.Partitions = []kmsg.DeleteRecordsRequestTopicPartition{{Partition: 0, Offset: 0}}
				req.Topics = append(req.Topics, rt)
				return p.do(req).(*kmsg.DeleteRecordsResponse).Topics[0].Partitions[0].ErrorCode
			}},
		{api: kmsg.OffsetForLeaderEpoch, name: "consumer", topic: "mx-epoch", grants: []grant{topicGrant("mx-epoch", opDescribe)}, ok: []int16{0},
			alternatives: []grant{clusterGrant(opClusterAction, topicDenied)},
			probe:        func(p *probe) int16 { return p.offsetForLeaderEpoch("mx-epoch") }},
		{api: kmsg.OffsetForLeaderEpoch, name: "follower", topic: "mx-epoch-follower", grants: []grant{clusterGrant(opClusterAction, topicDenied)}, ok: []int16{0},
			alternatives: []grant{topicGrant("mx-epoch-follower", opDescribe)},
			probe:        func(p *probe) int16 { return p.offsetForLeaderEpoch("mx-epoch-follower") }},
		{api: kmsg.CreatePartitions, topic: "mx-create-partitions", grants: []grant{topicGrant("mx-create-partitions", opAlter)}, ok: []int16{0},
			probe: func(p *probe) int16 {
				req := kmsg.NewPtrCreatePartitionsRequest()
				req.ValidateOnly, req.TimeoutMillis = true, 5000
				rt := kmsg.NewCreatePartitionsRequestTopic()
				rt.Topic, rt.Count = "mx-create-partitions", 2
				req.Topics = append(req.Topics, rt)
				return p.do(req).(*kmsg.CreatePartitionsResponse).Topics[0].ErrorCode
			}},
		{api: kmsg.DescribeProducers, topic: "mx-producers", grants: []grant{topicGrant("mx-producers", opRead)}, ok: []int16{0},
			probe: func(p *probe) int16 {
				req := kmsg.NewPtrDescribeProducersRequest()
				rt := kmsg.NewDescribeProducersRequestTopic()
				rt.Topic, rt.Partitions = "mx-producers", []int32{0}
				req.Topics = append(req.Topics, rt)
				return p.do(req).(*kmsg.DescribeProducersResponse).Topics[0].Partitions[0].ErrorCode
			}},
		{api: kmsg.DescribeTopicPartitions, name: "named", topic: "mx-dtp", grants: []grant{topicGrant("mx-dtp", opDescribe)}, ok: []int16{0},
			probe: func(p *probe) int16 {
				req := kmsg.NewPtrDescribeTopicPartitionsRequest()
				rt := kmsg.NewDescribeTopicPartitionsRequestTopic()
				rt.Topic = "mx-dtp"
				req.Topics = append(req.Topics, rt)
				req.ResponsePartitionLimit = 100
				return p.do(req).(*kmsg.DescribeTopicPartitionsResponse).Topics[0].ErrorCode
			}},
		{api: kmsg.DescribeTopicPartitions, name: "all topics", topic: "mx-dtp-all", grants: []grant{{kmsg.ACLResourceTypeTopic, "mx-dtp-all", opDescribe, omitted}}, ok: []int16{0},
			probe: func(p *probe) int16 {
				req := kmsg.NewPtrDescribeTopicPartitionsRequest()
				req.ResponsePartitionLimit = 2000
				for _, t := range p.do(req).(*kmsg.DescribeTopicPartitionsResponse).Topics {
					if t.Topic != nil && *t.Topic == "mx-dtp-all" {
						return t.ErrorCode
					}
				}
				return omitted
			}},
	}
}

func groupRows() []matrixRow {
	commitOffset := func(topic, group string) func(e *authzEnv) {
		return func(e *authzEnv) { e.mustCommit(topic, group) }
	}
	return []matrixRow{
		{api: kmsg.OffsetCommit, topic: "mx-commit", group: "mx-commit",
			grants: []grant{groupGrant("mx-commit", opRead), topicGrant("mx-commit", opRead)}, ok: []int16{0},
			probe: func(p *probe) int16 { return p.offsetCommit("mx-commit", "mx-commit") }},
		{api: kmsg.OffsetFetch, name: "named topic", topic: "mx-offset-fetch", group: "mx-offset-fetch",
			grants: []grant{groupGrant("mx-offset-fetch", opDescribe), topicGrant("mx-offset-fetch", opDescribe)}, ok: []int16{0},
			probe: func(p *probe) int16 { return p.offsetFetch("mx-offset-fetch", "mx-offset-fetch", false) }},
		{api: kmsg.OffsetFetch, name: "all topics", topic: "mx-offset-fetch-all", group: "mx-offset-fetch-all",
			setup:  commitOffset("mx-offset-fetch-all", "mx-offset-fetch-all"),
			grants: []grant{groupGrant("mx-offset-fetch-all", opDescribe), {kmsg.ACLResourceTypeTopic, "mx-offset-fetch-all", opDescribe, omitted}}, ok: []int16{0},
			probe: func(p *probe) int16 { return p.offsetFetch("mx-offset-fetch-all", "mx-offset-fetch-all", true) }},
		{api: kmsg.OffsetFetch, name: "v7", topic: "mx-offset-fetch-v7", group: "mx-offset-fetch-v7", pins: map[kmsg.Key]int16{kmsg.OffsetFetch: 7},
			grants: []grant{groupGrant("mx-offset-fetch-v7", opDescribe), topicGrant("mx-offset-fetch-v7", opDescribe)}, ok: []int16{0},
			probe: func(p *probe) int16 {
				req := kmsg.NewPtrOffsetFetchRequest()
				req.Group = "mx-offset-fetch-v7"
				req.Topics = []kmsg.OffsetFetchRequestTopic{{Topic: "mx-offset-fetch-v7", Partitions: []int32{0}}}
				resp := p.do(req).(*kmsg.OffsetFetchResponse)
				if resp.ErrorCode != 0 {
					return resp.ErrorCode
				}
				return resp.Topics[0].Partitions[0].ErrorCode
			}},
		{api: kmsg.FindCoordinator, name: "group", group: "mx-find-group", grants: []grant{groupGrant("mx-find-group", opDescribe)}, ok: []int16{0},
			probe: func(p *probe) int16 { return p.findCoordinator(0, "mx-find-group") }},
		// A group per cell: the member the probe leaves pending (MEMBER_ID_REQUIRED)
		// would hold up the next join until its session ends.
		{api: kmsg.JoinGroup, grants: []grant{groupGrant("mx-join-%s", opRead)}, ok: []int16{kerr.MemberIDRequired.Code},
			probe: func(p *probe) int16 {
				req := kmsg.NewPtrJoinGroupRequest()
				req.Group, req.SessionTimeoutMillis, req.RebalanceTimeoutMillis, req.ProtocolType = p.name("mx-join-%s"), 30000, 30000, "consumer"
				req.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: []byte{}}}
				return p.do(req).(*kmsg.JoinGroupResponse).ErrorCode
			}},
		{api: kmsg.Heartbeat, group: "mx-heartbeat", grants: []grant{groupGrant("mx-heartbeat", opRead)}, ok: []int16{kerr.UnknownMemberID.Code},
			probe: func(p *probe) int16 {
				req := kmsg.NewPtrHeartbeatRequest()
				req.Group, req.Generation, req.MemberID = "mx-heartbeat", 1, "nobody"
				return p.do(req).(*kmsg.HeartbeatResponse).ErrorCode
			}},
		{api: kmsg.LeaveGroup, group: "mx-leave", grants: []grant{groupGrant("mx-leave", opRead)}, ok: []int16{0},
			probe: func(p *probe) int16 {
				req := kmsg.NewPtrLeaveGroupRequest()
				req.Group, req.MemberID = "mx-leave", "nobody"
				req.Members = []kmsg.LeaveGroupRequestMember{{MemberID: "nobody"}}
				return p.do(req).(*kmsg.LeaveGroupResponse).ErrorCode
			}},
		{api: kmsg.SyncGroup, group: "mx-sync", grants: []grant{groupGrant("mx-sync", opRead)}, ok: []int16{kerr.UnknownMemberID.Code},
			probe: func(p *probe) int16 {
				req := kmsg.NewPtrSyncGroupRequest()
				req.Group, req.Generation, req.MemberID = "mx-sync", 1, "nobody"
				return p.do(req).(*kmsg.SyncGroupResponse).ErrorCode
			}},
		{api: kmsg.DescribeGroups, group: "mx-describe-group", grants: []grant{groupGrant("mx-describe-group", opDescribe)},
			ok: []int16{0, kerr.GroupIDNotFound.Code},
			probe: func(p *probe) int16 {
				req := kmsg.NewPtrDescribeGroupsRequest()
				req.Groups = []string{"mx-describe-group"}
				return p.do(req).(*kmsg.DescribeGroupsResponse).Groups[0].ErrorCode
			}},
		{api: kmsg.ListGroups, name: "cluster DESCRIBE", topic: "mx-list-groups", group: "mx-list-groups", setup: commitOffset("mx-list-groups", "mx-list-groups"),
			grants: []grant{clusterGrant(opDescribe, omitted)}, ok: []int16{0},
			alternatives: []grant{groupGrant("mx-list-groups", opDescribe)},
			probe:        func(p *probe) int16 { return p.listGroups("mx-list-groups") }},
		{api: kmsg.ListGroups, name: "group DESCRIBE", topic: "mx-list-groups-each", group: "mx-list-groups-each", setup: commitOffset("mx-list-groups-each", "mx-list-groups-each"),
			grants: []grant{{kmsg.ACLResourceTypeGroup, "mx-list-groups-each", opDescribe, omitted}}, ok: []int16{0},
			alternatives: []grant{clusterGrant(opDescribe, omitted)},
			probe:        func(p *probe) int16 { return p.listGroups("mx-list-groups-each") }},
		{api: kmsg.DeleteGroups, group: "mx-delete-group", grants: []grant{groupGrant("mx-delete-group", opDelete)},
			ok: []int16{0, kerr.GroupIDNotFound.Code},
			probe: func(p *probe) int16 {
				req := kmsg.NewPtrDeleteGroupsRequest()
				req.Groups = []string{"mx-delete-group"}
				return p.do(req).(*kmsg.DeleteGroupsResponse).Groups[0].ErrorCode
			}},
		{api: kmsg.OffsetDelete, topic: "mx-offset-delete", group: "mx-offset-delete", setup: commitOffset("mx-offset-delete", "mx-offset-delete"),
			grants: []grant{groupGrant("mx-offset-delete", opDelete), topicGrant("mx-offset-delete", opRead)}, ok: []int16{0},
			probe: func(p *probe) int16 {
				p.e.mustCommit("mx-offset-delete", "mx-offset-delete") // the last cell's may have gone, and its group with it
				req := kmsg.NewPtrOffsetDeleteRequest()
				req.Group = "mx-offset-delete"
				req.Topics = []kmsg.OffsetDeleteRequestTopic{{Topic: "mx-offset-delete", Partitions: []kmsg.OffsetDeleteRequestTopicPartition{{Partition: 0}}}}
				resp := p.do(req).(*kmsg.OffsetDeleteResponse)
				if resp.ErrorCode != 0 {
					return resp.ErrorCode
				}
				return resp.Topics[0].Partitions[0].ErrorCode
			}},
		{api: kmsg.ConsumerGroupHeartbeat, topic: "mx-cgh", group: "mx-cgh", grants: []grant{groupGrant("mx-cgh", opRead)}, ok: []int16{0},
			probe: func(p *probe) int16 {
				req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
				req.Group, req.MemberID, req.MemberEpoch, req.RebalanceTimeoutMillis = "mx-cgh", "member-"+p.suffix, 0, 30000
				req.SubscribedTopicNames = []string{"mx-cgh"}
				req.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
				return p.do(req).(*kmsg.ConsumerGroupHeartbeatResponse).ErrorCode
			}},
		{api: kmsg.ConsumerGroupDescribe, group: "mx-cgd", grants: []grant{groupGrant("mx-cgd", opDescribe)},
			ok: []int16{0, kerr.GroupIDNotFound.Code},
			probe: func(p *probe) int16 {
				req := kmsg.NewPtrConsumerGroupDescribeRequest()
				req.Groups = []string{"mx-cgd"}
				return p.do(req).(*kmsg.ConsumerGroupDescribeResponse).Groups[0].ErrorCode
			}},
		{api: kmsg.StreamsGroupHeartbeat, topic: "mx-sgh", group: "mx-sgh", grants: []grant{groupGrant("mx-sgh", opRead)}, ok: []int16{0},
			probe: func(p *probe) int16 {
				req := kmsg.NewPtrStreamsGroupHeartbeatRequest()
				req.Group, req.MemberID, req.MemberEpoch, req.RebalanceTimeoutMillis = "mx-sgh", "member-"+p.suffix, 0, 30000
				req.ProcessID = kmsg.StringPtr("process-" + p.suffix)
				topo := kmsg.NewStreamsGroupHeartbeatRequestTopology()
				topo.Subtopologies = []kmsg.StreamsGroupHeartbeatRequestTopologySubtopology{{SubtopologyID: "0", SourceTopics: []string{"mx-sgh"}}}
				req.Topology = &topo
				req.ActiveTasks, req.StandbyTasks, req.WarmupTasks = []kmsg.TaskIDs{}, []kmsg.TaskIDs{}, []kmsg.TaskIDs{}
				return p.do(req).(*kmsg.StreamsGroupHeartbeatResponse).ErrorCode
			}},
		{api: kmsg.StreamsGroupDescribe, group: "mx-sgd", grants: []grant{groupGrant("mx-sgd", opDescribe)},
			ok: []int16{0, kerr.GroupIDNotFound.Code},
			probe: func(p *probe) int16 {
				req := kmsg.NewPtrStreamsGroupDescribeRequest()
				req.Groups = []string{"mx-sgd"}
				return p.do(req).(*kmsg.StreamsGroupDescribeResponse).Groups[0].ErrorCode
			}},
	}
}

func txnRows() []matrixRow {
	const pid, epoch = 987654, 0
	return []matrixRow{
		{api: kmsg.FindCoordinator, name: "transaction", txn: "mx-find-txn", grants: []grant{txnGrant("mx-find-txn", opDescribe)}, ok: []int16{0},
			probe: func(p *probe) int16 { return p.findCoordinator(1, "mx-find-txn") }},
		{api: kmsg.InitProducerID, name: "transactional", txn: "mx-init-txn", grants: []grant{txnGrant("mx-init-txn", opWrite)}, ok: []int16{0},
			probe: func(p *probe) int16 { return p.initProducerID(kmsg.StringPtr("mx-init-txn")) }},
		{api: kmsg.InitProducerID, name: "idempotent with cluster IDEMPOTENT_WRITE", grants: []grant{clusterGrant(opIdempotentWrite, clusterDenied)}, ok: []int16{0},
			alternatives: []grant{topicGrant(auth.WildcardResource, opWrite)},
			probe:        func(p *probe) int16 { return p.initProducerID(nil) }},
		{api: kmsg.InitProducerID, name: "idempotent with WRITE on a topic", grants: []grant{{kmsg.ACLResourceTypeTopic, "mx-init-any", opWrite, clusterDenied}}, ok: []int16{0},
			alternatives: []grant{clusterGrant(opIdempotentWrite, clusterDenied), topicGrant(auth.WildcardResource, opWrite)},
			probe:        func(p *probe) int16 { return p.initProducerID(nil) }},
		{api: kmsg.AddPartitionsToTxn, name: "v3 producer", topic: "mx-apt", txn: "mx-apt", pins: map[kmsg.Key]int16{kmsg.AddPartitionsToTxn: 3},
			grants: []grant{txnGrant("mx-apt", opWrite), topicGrant("mx-apt", opWrite)}, ok: []int16{noPID},
			probe: func(p *probe) int16 {
				req := kmsg.NewPtrAddPartitionsToTxnRequest()
				req.TransactionalID, req.ProducerID, req.ProducerEpoch = "mx-apt", pid, epoch
				req.Topics = []kmsg.AddPartitionsToTxnRequestTopic{{Topic: "mx-apt", Partitions: []int32{0}}}
				return p.do(req).(*kmsg.AddPartitionsToTxnResponse).Topics[0].Partitions[0].ErrorCode
			}},
		{api: kmsg.AddPartitionsToTxn, name: "v4+ broker", topic: "mx-apt-broker", txn: "mx-apt-broker",
			grants: []grant{clusterGrant(opClusterAction, clusterDenied)}, ok: []int16{noPID},
			probe: func(p *probe) int16 {
				req := kmsg.NewPtrAddPartitionsToTxnRequest()
				tx := kmsg.NewAddPartitionsToTxnRequestTransaction()
				tx.TransactionalID, tx.ProducerID, tx.ProducerEpoch, tx.VerifyOnly = "mx-apt-broker", pid, epoch, true
				tx.Topics = []kmsg.AddPartitionsToTxnRequestTransactionTopic{{Topic: "mx-apt-broker", Partitions: []int32{0}}}
				req.Transactions = append(req.Transactions, tx)
				resp := p.do(req).(*kmsg.AddPartitionsToTxnResponse)
				if resp.ErrorCode != 0 {
					return resp.ErrorCode
				}
				return resp.Transactions[0].Topics[0].Partitions[0].ErrorCode
			}},
		{api: kmsg.AddOffsetsToTxn, topic: "mx-aot", txn: "mx-aot", group: "mx-aot", grants: []grant{txnGrant("mx-aot", opWrite), groupGrant("mx-aot", opRead)}, ok: []int16{noPID},
			probe: func(p *probe) int16 {
				req := kmsg.NewPtrAddOffsetsToTxnRequest()
				req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Group = "mx-aot", pid, epoch, "mx-aot"
				return p.do(req).(*kmsg.AddOffsetsToTxnResponse).ErrorCode
			}},
		{api: kmsg.EndTxn, txn: "mx-end", grants: []grant{txnGrant("mx-end", opWrite)}, ok: []int16{noPID},
			probe: func(p *probe) int16 {
				req := kmsg.NewPtrEndTxnRequest()
				req.TransactionalID, req.ProducerID, req.ProducerEpoch = "mx-end", pid, epoch
				return p.do(req).(*kmsg.EndTxnResponse).ErrorCode
			}},
		{api: kmsg.WriteTxnMarkers, name: "CLUSTER_ACTION", topic: "mx-markers", grants: []grant{clusterGrant(opClusterAction, clusterDenied)}, ok: []int16{0},
			alternatives: []grant{clusterGrant(opAlter, clusterDenied)},
			probe:        func(p *probe) int16 { return p.writeTxnMarker("mx-markers") }},
		{api: kmsg.WriteTxnMarkers, name: "ALTER", topic: "mx-markers-alter", grants: []grant{clusterGrant(opAlter, clusterDenied)}, ok: []int16{0},
			alternatives: []grant{clusterGrant(opClusterAction, clusterDenied)},
			probe:        func(p *probe) int16 { return p.writeTxnMarker("mx-markers-alter") }},
		{api: kmsg.TxnOffsetCommit, topic: "mx-toc", txn: "mx-toc", group: "mx-toc",
			grants: []grant{txnGrant("mx-toc", opWrite), groupGrant("mx-toc", opRead), topicGrant("mx-toc", opRead)}, ok: []int16{noPID},
			probe: func(p *probe) int16 {
				req := kmsg.NewPtrTxnOffsetCommitRequest()
				req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch = "mx-toc", "mx-toc", pid, epoch
				req.Generation = -1
				req.Topics = []kmsg.TxnOffsetCommitRequestTopic{{Topic: "mx-toc", Partitions: []kmsg.TxnOffsetCommitRequestTopicPartition{{Partition: 0, Offset: 1, LeaderEpoch: -1}}}}
				return p.do(req).(*kmsg.TxnOffsetCommitResponse).Topics[0].Partitions[0].ErrorCode
			}},
		{api: kmsg.DescribeTransactions, txn: "mx-describe-txn", grants: []grant{txnGrant("mx-describe-txn", opDescribe)},
			ok: []int16{0, kerr.TransactionalIDNotFound.Code},
			probe: func(p *probe) int16 {
				req := kmsg.NewPtrDescribeTransactionsRequest()
				req.TransactionalIDs = []string{"mx-describe-txn"}
				return p.do(req).(*kmsg.DescribeTransactionsResponse).TransactionStates[0].ErrorCode
			}},
		{api: kmsg.ListTransactions, txn: "mx-list-txn",
			setup:  func(e *authzEnv) { e.mustInitTxn("mx-list-txn") },
			grants: []grant{{kmsg.ACLResourceTypeTransactionalId, "mx-list-txn", opDescribe, omitted}}, ok: []int16{0},
			probe: func(p *probe) int16 {
				resp := p.do(kmsg.NewPtrListTransactionsRequest()).(*kmsg.ListTransactionsResponse)
				return listed(slices.ContainsFunc(resp.TransactionStates, func(s kmsg.ListTransactionsResponseTransactionState) bool {
					return s.TransactionalID == "mx-list-txn"
				}))
			}},
	}
}

func adminRows() []matrixRow {
	clusterRow := func(api kmsg.Key, op kmsg.ACLOperation, probe func(p *probe) int16) matrixRow {
		return matrixRow{api: api, grants: []grant{clusterGrant(op, clusterDenied)}, ok: []int16{0}, probe: probe}
	}
	return []matrixRow{
		clusterRow(kmsg.DescribeACLs, opDescribe, func(p *probe) int16 {
			req := kmsg.NewPtrDescribeACLsRequest()
			req.ResourceType, req.ResourcePatternType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny
			req.Operation, req.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
			return p.do(req).(*kmsg.DescribeACLsResponse).ErrorCode
		}),
		clusterRow(kmsg.CreateACLs, opAlter, func(p *probe) int16 {
			req := kmsg.NewPtrCreateACLsRequest()
			req.Creations = []kmsg.CreateACLsRequestCreation{{ResourceType: kmsg.ACLResourceTypeTopic, ResourceName: "mx-unrelated",
				ResourcePatternType: kmsg.ACLResourcePatternTypeLiteral, Principal: "User:nobody", Host: "*",
				Operation: opRead, PermissionType: kmsg.ACLPermissionTypeAllow}}
			return p.do(req).(*kmsg.CreateACLsResponse).Results[0].ErrorCode
		}),
		clusterRow(kmsg.DeleteACLs, opAlter, func(p *probe) int16 {
			req := kmsg.NewPtrDeleteACLsRequest()
			req.Filters = []kmsg.DeleteACLsRequestFilter{{ResourceType: kmsg.ACLResourceTypeAny, ResourcePatternType: kmsg.ACLResourcePatternTypeAny,
				Principal: kmsg.StringPtr("User:nobody"), Operation: kmsg.ACLOperationAny, PermissionType: kmsg.ACLPermissionTypeAny}}
			return p.do(req).(*kmsg.DeleteACLsResponse).Results[0].ErrorCode
		}),
		{api: kmsg.DescribeConfigs, name: "topic", topic: "mx-describe-configs", grants: []grant{topicGrant("mx-describe-configs", opDescribeConfigs)}, ok: []int16{0},
			probe: func(p *probe) int16 { return p.describeConfigs(kmsg.ConfigResourceTypeTopic, "mx-describe-configs") }},
		{api: kmsg.DescribeConfigs, name: "broker", grants: []grant{clusterGrant(opDescribeConfigs, clusterDenied)}, ok: []int16{0},
			probe: func(p *probe) int16 { return p.describeConfigs(kmsg.ConfigResourceTypeBroker, "1") }},
		{api: kmsg.DescribeConfigs, name: "broker logger", grants: []grant{clusterGrant(opDescribeConfigs, clusterDenied)}, ok: []int16{0},
			probe: func(p *probe) int16 { return p.describeConfigs(kmsg.ConfigResourceTypeBrokerLogger, "1") }},
		{api: kmsg.IncrementalAlterConfigs, name: "broker logger", grants: []grant{clusterGrant(opAlterConfigs, clusterDenied)}, ok: []int16{0},
			probe: func(p *probe) int16 {
				req := kmsg.NewPtrIncrementalAlterConfigsRequest()
				req.ValidateOnly = true
				r := kmsg.NewIncrementalAlterConfigsRequestResource()
				r.ResourceType, r.ResourceName = kmsg.ConfigResourceTypeBrokerLogger, "1"
				r.Configs = []kmsg.IncrementalAlterConfigsRequestResourceConfig{{Name: "root", Value: kmsg.StringPtr("INFO")}}
				req.Resources = append(req.Resources, r)
				return p.do(req).(*kmsg.IncrementalAlterConfigsResponse).Resources[0].ErrorCode
			}},
		{api: kmsg.AlterConfigs, name: "topic", topic: "mx-alter-configs", grants: []grant{topicGrant("mx-alter-configs", opAlterConfigs)}, ok: []int16{0},
			probe: func(p *probe) int16 {
				return p.alterConfigs(false, kmsg.ConfigResourceTypeTopic, "mx-alter-configs", "retention.ms")
			}},
		{api: kmsg.AlterConfigs, name: "broker", grants: []grant{clusterGrant(opAlterConfigs, clusterDenied)}, ok: []int16{0},
			probe: func(p *probe) int16 {
				return p.alterConfigs(false, kmsg.ConfigResourceTypeBroker, "", "log.retention.ms")
			}},
		{api: kmsg.IncrementalAlterConfigs, name: "topic", topic: "mx-iac", grants: []grant{topicGrant("mx-iac", opAlterConfigs)}, ok: []int16{0},
			probe: func(p *probe) int16 {
				return p.alterConfigs(true, kmsg.ConfigResourceTypeTopic, "mx-iac", "retention.ms")
			}},
		{api: kmsg.IncrementalAlterConfigs, name: "broker", grants: []grant{clusterGrant(opAlterConfigs, clusterDenied)}, ok: []int16{0},
			probe: func(p *probe) int16 {
				return p.alterConfigs(true, kmsg.ConfigResourceTypeBroker, "", "log.retention.ms")
			}},
		{api: kmsg.DescribeConfigs, name: "client-metrics", grants: []grant{clusterGrant(opDescribeConfigs, clusterDenied)}, ok: []int16{0},
			probe: func(p *probe) int16 {
				return p.describeConfigs(kmsg.ConfigResourceTypeClientMetrics, "mx-client-metrics")
			}},
		{api: kmsg.AlterConfigs, name: "client-metrics", grants: []grant{clusterGrant(opAlterConfigs, clusterDenied)}, ok: []int16{0},
			probe: func(p *probe) int16 {
				return p.alterConfigs(false, kmsg.ConfigResourceTypeClientMetrics, "mx-client-metrics", "interval.ms")
			}},
		{api: kmsg.IncrementalAlterConfigs, name: "client-metrics", grants: []grant{clusterGrant(opAlterConfigs, clusterDenied)}, ok: []int16{0},
			probe: func(p *probe) int16 {
				return p.alterConfigs(true, kmsg.ConfigResourceTypeClientMetrics, "mx-client-metrics", "interval.ms")
			}},
		clusterRow(kmsg.ListConfigResources, opDescribeConfigs, func(p *probe) int16 {
			return p.do(kmsg.NewPtrListConfigResourcesRequest()).(*kmsg.ListConfigResourcesResponse).ErrorCode
		}),
		clusterRow(kmsg.DescribeLogDirs, opDescribe, func(p *probe) int16 {
			return p.do(kmsg.NewPtrDescribeLogDirsRequest()).(*kmsg.DescribeLogDirsResponse).ErrorCode
		}),
		{api: kmsg.AlterReplicaLogDirs, grants: []grant{clusterGrant(opAlter, clusterDenied)}, ok: []int16{kerr.LogDirNotFound.Code},
			probe: func(p *probe) int16 {
				req := kmsg.NewPtrAlterReplicaLogDirsRequest()
				req.Dirs = []kmsg.AlterReplicaLogDirsRequestDir{{Dir: "/not-a-log-dir",
					Topics: []kmsg.AlterReplicaLogDirsRequestDirTopic{{Topic: "mx-alter-log-dirs", Partitions: []int32{0}}}}}
				return p.do(req).(*kmsg.AlterReplicaLogDirsResponse).Topics[0].Partitions[0].ErrorCode
			}},
		{api: kmsg.ElectLeaders, topic: "mx-elect", grants: []grant{clusterGrant(opAlter, clusterDenied)}, ok: []int16{kerr.ElectionNotNeeded.Code},
			probe: func(p *probe) int16 {
				req := kmsg.NewPtrElectLeadersRequest()
				req.TimeoutMillis = 5000
				req.Topics = []kmsg.ElectLeadersRequestTopic{{Topic: "mx-elect", Partitions: []int32{0}}}
				resp := p.do(req).(*kmsg.ElectLeadersResponse)
				if resp.ErrorCode != 0 {
					return resp.ErrorCode
				}
				return resp.Topics[0].Partitions[0].ErrorCode
			}},
		{api: kmsg.AlterPartitionAssignments, topic: "mx-reassign", grants: []grant{clusterGrant(opAlter, clusterDenied)}, ok: []int16{kerr.NoReassignmentInProgress.Code},
			probe: func(p *probe) int16 {
				req := kmsg.NewPtrAlterPartitionAssignmentsRequest()
				req.TimeoutMillis = 5000
				req.Topics = []kmsg.AlterPartitionAssignmentsRequestTopic{{Topic: "mx-reassign",
					Partitions: []kmsg.AlterPartitionAssignmentsRequestTopicPartition{{Partition: 0}}}} // a cancel, with none in progress
				resp := p.do(req).(*kmsg.AlterPartitionAssignmentsResponse)
				if resp.ErrorCode != 0 {
					return resp.ErrorCode
				}
				return resp.Topics[0].Partitions[0].ErrorCode
			}},
		clusterRow(kmsg.ListPartitionReassignments, opDescribe, func(p *probe) int16 {
			return p.do(kmsg.NewPtrListPartitionReassignmentsRequest()).(*kmsg.ListPartitionReassignmentsResponse).ErrorCode
		}),
		clusterRow(kmsg.DescribeClientQuotas, opDescribeConfigs, func(p *probe) int16 {
			return p.do(kmsg.NewPtrDescribeClientQuotasRequest()).(*kmsg.DescribeClientQuotasResponse).ErrorCode
		}),
		clusterRow(kmsg.AlterClientQuotas, opAlterConfigs, func(p *probe) int16 {
			req := kmsg.NewPtrAlterClientQuotasRequest()
			req.ValidateOnly = true
			req.Entries = []kmsg.AlterClientQuotasRequestEntry{{Entity: []kmsg.AlterClientQuotasRequestEntryEntity{{Type: "user", Name: kmsg.StringPtr("carol")}},
				Ops: []kmsg.AlterClientQuotasRequestEntryOp{{Key: "producer_byte_rate", Value: 1048576}}}}
			return p.do(req).(*kmsg.AlterClientQuotasResponse).Entries[0].ErrorCode
		}),
		clusterRow(kmsg.DescribeUserSCRAMCredentials, opDescribe, func(p *probe) int16 {
			return p.do(kmsg.NewPtrDescribeUserSCRAMCredentialsRequest()).(*kmsg.DescribeUserSCRAMCredentialsResponse).ErrorCode
		}),
		clusterRow(kmsg.AlterUserSCRAMCredentials, opAlter, func(p *probe) int16 {
			req := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
			req.Upsertions = []kmsg.AlterUserSCRAMCredentialsRequestUpsertion{{Name: "carol", Mechanism: 1, Iterations: 4096,
				Salt: []byte("salt-of-carol"), SaltedPassword: make([]byte, 32)}}
			return p.do(req).(*kmsg.AlterUserSCRAMCredentialsResponse).Results[0].ErrorCode
		}),
		clusterRow(kmsg.DescribeQuorum, opDescribe, func(p *probe) int16 {
			req := kmsg.NewPtrDescribeQuorumRequest()
			req.Topics = []kmsg.DescribeQuorumRequestTopic{{Topic: metadata.ClusterMetadataTopic, Partitions: []kmsg.DescribeQuorumRequestTopicPartition{{Partition: 0}}}}
			resp := p.do(req).(*kmsg.DescribeQuorumResponse)
			if resp.ErrorCode != 0 {
				return resp.ErrorCode
			}
			return resp.Topics[0].Partitions[0].ErrorCode
		}),
		clusterRow(kmsg.UpdateFeatures, opAlter, func(p *probe) int16 {
			// group.version at the level it has: a dry run that changes nothing.
			req := kmsg.NewPtrUpdateFeaturesRequest()
			req.ValidateOnly = true
			req.FeatureUpdates = []kmsg.UpdateFeaturesRequestFeatureUpdate{{Feature: "group.version", MaxVersionLevel: 1, UpgradeType: 1}}
			return p.do(req).(*kmsg.UpdateFeaturesResponse).ErrorCode
		}),
		// The matrix's single node has no quorum to change: allowed, both
		// answer UNSUPPORTED_VERSION, as Kafka's kraft.version 0 does.
		{api: kmsg.AddRaftVoter, grants: []grant{clusterGrant(opAlter, clusterDenied)}, ok: []int16{kerr.UnsupportedVersion.Code},
			probe: func(p *probe) int16 {
				req := kmsg.NewPtrAddRaftVoterRequest()
				req.VoterID, req.TimeoutMillis = 9, 1000
				req.Listeners = []kmsg.AddRaftVoterRequestListener{{Name: "CONTROLLER", Host: "127.0.0.1", Port: 1}}
				return p.do(req).(*kmsg.AddRaftVoterResponse).ErrorCode
			}},
		{api: kmsg.RemoveRaftVoter, grants: []grant{clusterGrant(opAlter, clusterDenied)}, ok: []int16{kerr.UnsupportedVersion.Code},
			probe: func(p *probe) int16 {
				req := kmsg.NewPtrRemoveRaftVoterRequest()
				req.VoterID = 9
				return p.do(req).(*kmsg.RemoveRaftVoterResponse).ErrorCode
			}},
		// No broker 9: BROKER_ID_NOT_REGISTERED once allowed, so the
		// matrix's single node stays registered.
		{api: kmsg.UnregisterBroker, grants: []grant{clusterGrant(opAlter, clusterDenied)}, ok: []int16{kerr.BrokerIDNotRegistered.Code},
			probe: func(p *probe) int16 {
				req := kmsg.NewPtrUnregisterBrokerRequest()
				req.BrokerID = 9
				return p.do(req).(*kmsg.UnregisterBrokerResponse).ErrorCode
			}},
		{api: kmsg.DescribeCluster, name: "authorized operations", grants: []grant{clusterGrant(opDescribe, omitted)}, ok: []int16{0},
			probe: func(p *probe) int16 {
				req := kmsg.NewPtrDescribeClusterRequest()
				req.IncludeClusterAuthorizedOperations = true
				resp := p.do(req).(*kmsg.DescribeClusterResponse)
				if resp.ErrorCode != 0 {
					return resp.ErrorCode
				}
				return listed(resp.ClusterAuthorizedOperations != 0)
			}},
	}
}

// authzEnv is one broker of the matrix, with its clients.
type authzEnv struct {
	// root owns the broker and the clients; t is the running cell's test.
	root  *testing.T
	t     *testing.T
	b     *Broker
	addr  string
	admin *kgo.Client
	// clients by user and version pins.
	clients map[string]*kgo.Client
	// hasACLs: the last cell left ACLs behind.
	hasACLs bool
	// names are the names of resources setup made that the rows could not
	// know (tokenIDOf), for the placeholders that stand for them.
	names map[string]string
	// agents check the cells again with other clients, by client
	// (checkClients).
	agents map[string]*javaAgent
}

func newAuthzEnv(t *testing.T, extra map[string]string) *authzEnv {
	t.Helper()
	return newAuthzEnvLogging(t, extra, quiet)
}

// newAuthzEnvLogging is newAuthzEnv with the broker's log going to
// logger.
func newAuthzEnvLogging(t *testing.T, extra map[string]string, logger *slog.Logger) *authzEnv {
	t.Helper()
	ov := map[string]string{
		"listener.name.sasl_plaintext.sasl.enabled.mechanisms": "PLAIN",
		"listener.name.sasl_plaintext.plain.sasl.jaas.config":  authzJAAS,
		"authorizer.class.name":                                config.StandardAuthorizer,
		"super.users":                                          "User:admin",
		"group.initial.rebalance.delay.ms":                     "0",
		"offsets.topic.num.partitions":                         "1",
		"transaction.state.log.num.partitions":                 "1",
		"delegation.token.secret.key":                          "matrix-token-secret",
	}
	for k, v := range extra {
		ov[k] = v
	}
	if _, ok := ov["listeners"]; !ok {
		ov["listeners"] = "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0"
	}
	ov["node.id"], ov["log.dirs"] = "1", t.TempDir()
	v, err := LoadConfig("", ov)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := testConfigFromValues(v)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Logger = logger
	b, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	e := &authzEnv{root: t, t: t, b: b, clients: map[string]*kgo.Client{}, names: map[string]string{}}
	e.addr = listenerAddr(t, e.b, "SASL_PLAINTEXT")
	e.admin = e.client("admin", nil)
	return e
}

var userPasswords = map[string]string{"admin": "admin-secret", "alice": "alice-pw", "bob": "bob-pw"}

// client is a franz-go client of user, whose requests go at most at the
// pinned versions.
func (e *authzEnv) client(user string, pins map[kmsg.Key]int16) *kgo.Client {
	key := user + fmt.Sprint(pins)
	if cl, ok := e.clients[key]; ok {
		return cl
	}
	opts := []kgo.Opt{kgo.RequestTimeoutOverhead(10 * time.Second)}
	if len(pins) > 0 {
		v := kversion.Stable()
		for k, max := range pins {
			v.SetMaxKeyVersion(int16(k), max)
		}
		opts = append(opts, kgo.MaxVersions(v))
	}
	cl := saslClient(e.root, e.addr, plain.Auth{User: user, Pass: userPasswords[user]}.AsMechanism(), opts...)
	e.clients[key] = cl
	return cl
}

// request sends req to the broker itself, not where franz-go would route
// it (a group's coordinator, the controller): the single node is all of
// them.
func request(t *testing.T, cl *kgo.Client, req kmsg.Request) kmsg.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	resp, err := cl.SeedBrokers()[0].Request(ctx, req)
	if err != nil {
		t.Fatalf("%s: %v", kmsg.Key(req.Key()).Name(), err)
	}
	return resp
}

// setACLs replaces every ACL with acls and returns once the broker's
// image holds them.
func (e *authzEnv) setACLs(acls []auth.ACL) {
	t := e.t
	t.Helper()
	if e.hasACLs {
		del := kmsg.NewPtrDeleteACLsRequest()
		del.Filters = []kmsg.DeleteACLsRequestFilter{{ResourceType: kmsg.ACLResourceTypeAny, ResourcePatternType: kmsg.ACLResourcePatternTypeAny,
			Operation: kmsg.ACLOperationAny, PermissionType: kmsg.ACLPermissionTypeAny}}
		if r := request(t, e.admin, del).(*kmsg.DeleteACLsResponse); r.Results[0].ErrorCode != 0 {
			t.Fatalf("delete ACLs: %v", kerr.ErrorForCode(r.Results[0].ErrorCode))
		}
	}
	e.hasACLs = len(acls) > 0
	if len(acls) == 0 {
		return
	}
	create := kmsg.NewPtrCreateACLsRequest()
	for _, a := range acls {
		create.Creations = append(create.Creations, kmsg.CreateACLsRequestCreation{ResourceType: a.ResourceType, ResourceName: a.ResourceName,
			ResourcePatternType: a.PatternType, Principal: a.Principal, Host: a.Host, Operation: a.Operation, PermissionType: a.Permission})
	}
	for i, r := range request(t, e.admin, create).(*kmsg.CreateACLsResponse).Results {
		if r.ErrorCode != 0 {
			t.Fatalf("create ACL %s: %v", acls[i], kerr.ErrorForCode(r.ErrorCode))
		}
	}
	for _, a := range acls {
		if !slices.Contains(e.b.authorizer().ACLs(), a) {
			t.Fatalf("the authorizer lacks %s after CreateAcls answered", a)
		}
	}
}

func (e *authzEnv) mustCreateTopic(name string) {
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 10000
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, 1, 1
	req.Topics = append(req.Topics, rt)
	code := request(e.t, e.admin, req).(*kmsg.CreateTopicsResponse).Topics[0].ErrorCode
	if code != 0 && code != kerr.TopicAlreadyExists.Code {
		e.t.Fatalf("create topic %s: %v", name, kerr.ErrorForCode(code))
	}
}

func (e *authzEnv) mustCommit(topic, group string) {
	p := &probe{t: e.t, e: e, cl: e.admin}
	if code := p.findCoordinator(0, group); code != 0 {
		e.t.Fatalf("find coordinator of %s: %v", group, kerr.ErrorForCode(code))
	}
	if code := p.offsetCommit(topic, group); code != 0 {
		e.t.Fatalf("commit %s for %s: %v", topic, group, kerr.ErrorForCode(code))
	}
}

func (e *authzEnv) mustInitTxn(id string) {
	p := &probe{t: e.t, e: e, cl: e.admin}
	if code := p.findCoordinator(1, id); code != 0 {
		e.t.Fatalf("find coordinator of %s: %v", id, kerr.ErrorForCode(code))
	}
	if code := p.initProducerID(kmsg.StringPtr(id)); code != 0 {
		e.t.Fatalf("init producer ID %s: %v", id, kerr.ErrorForCode(code))
	}
}

// mustCreateToken creates, as the admin, a token owned by owner and
// returns its ID.
func (e *authzEnv) mustCreateToken(owner string) string {
	p, err := auth.ParsePrincipal(owner)
	if err != nil {
		e.t.Fatal(err)
	}
	req := kmsg.NewPtrCreateDelegationTokenRequest()
	req.OwnerPrincipalType, req.OwnerPrincipalName = kmsg.StringPtr(p.Type), kmsg.StringPtr(p.Name)
	resp := request(e.t, e.admin, req).(*kmsg.CreateDelegationTokenResponse)
	if resp.ErrorCode != 0 {
		e.t.Fatalf("create a token for %s: %v", owner, kerr.ErrorForCode(resp.ErrorCode))
	}
	return resp.TokenID
}

// resolved is r with the placeholders of its grants' names replaced by
// the names setup made on this broker.
func (e *authzEnv) resolved(r matrixRow) matrixRow {
	resolve := func(gs []grant) []grant {
		gs = slices.Clone(gs)
		for i := range gs {
			if name, ok := e.names[gs[i].name]; ok {
				gs[i].name = name
			}
		}
		return gs
	}
	r.grants, r.alternatives = resolve(r.grants), resolve(r.alternatives)
	return r
}

// setUp creates what the rows' probes name.
func (e *authzEnv) setUp(rows []matrixRow) {
	for _, r := range rows {
		if r.topic != "" {
			e.mustCreateTopic(r.topic)
		}
	}
	for _, r := range rows {
		if r.setup != nil {
			r.setup(e)
		}
	}
}

// probe is one request of a cell.
type probe struct {
	t      *testing.T
	e      *authzEnv
	cl     *kgo.Client
	user   string
	suffix string
}

func (p *probe) name(s string) string { return strings.ReplaceAll(s, "%s", p.suffix) }

func (p *probe) do(req kmsg.Request) kmsg.Response { return request(p.t, p.cl, req) }

func (p *probe) topicID(name string) [16]byte {
	ts, ok := p.e.b.topics.byTopicName(name)
	if !ok {
		return [16]byte{}
	}
	return ts.id
}

func (p *probe) produce(topic string, txn *string) int16 {
	b := record.Batch{ProducerID: record.NoProducerID, ProducerEpoch: record.NoProducerEpoch, BaseSequence: record.NoSequence,
		Records: []record.Record{{Timestamp: time.Now().UnixMilli(), Value: []byte("v")}}}
	if txn != nil {
		b.Transactional, b.ProducerID, b.ProducerEpoch, b.BaseSequence = true, 987654, 0, 0
	}
	raw, err := b.AppendTo(nil)
	if err != nil {
		p.t.Fatal(err)
	}
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis, req.TransactionID = -1, 5000, txn
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic, rt.TopicID = topic, p.topicID(topic)
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = raw
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	return p.do(req).(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode
}

func (p *probe) fetch(topic string, replica int32) int16 {
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID, req.ReplicaState.ID, req.MaxBytes, req.SessionEpoch = replica, replica, 1<<20, -1
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic, rt.TopicID = topic, p.topicID(topic)
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.PartitionMaxBytes = 1 << 20
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp := p.do(req).(*kmsg.FetchResponse)
	if resp.ErrorCode != 0 {
		return resp.ErrorCode
	}
	return resp.Topics[0].Partitions[0].ErrorCode
}

func (p *probe) metadataTopic(topic string, autoCreate bool) int16 {
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics, req.AllowAutoTopicCreation = append(req.Topics, rt), autoCreate
	return p.do(req).(*kmsg.MetadataResponse).Topics[0].ErrorCode
}

func (p *probe) createTopic(topic string) int16 {
	req := kmsg.NewPtrCreateTopicsRequest()
	req.ValidateOnly, req.TimeoutMillis = true, 5000
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic, rt.NumPartitions, rt.ReplicationFactor = topic, 1, 1
	req.Topics = append(req.Topics, rt)
	return p.do(req).(*kmsg.CreateTopicsResponse).Topics[0].ErrorCode
}

// deleteTopic deletes a topic, created again first when a cell before
// deleted it.
func (p *probe) deleteTopic(topic string) int16 {
	p.e.mustCreateTopic(topic)
	req := kmsg.NewPtrDeleteTopicsRequest()
	req.TimeoutMillis = 5000
	rt := kmsg.NewDeleteTopicsRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics, req.TopicNames = append(req.Topics, rt), []string{topic}
	return p.do(req).(*kmsg.DeleteTopicsResponse).Topics[0].ErrorCode
}

func (p *probe) offsetForLeaderEpoch(topic string) int16 {
	req := kmsg.NewPtrOffsetForLeaderEpochRequest()
	req.ReplicaID = -1
	rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
	rt.Topic = topic
	rt.Partitions = []kmsg.OffsetForLeaderEpochRequestTopicPartition{{Partition: 0, CurrentLeaderEpoch: -1, LeaderEpoch: 0}}
	req.Topics = append(req.Topics, rt)
	return p.do(req).(*kmsg.OffsetForLeaderEpochResponse).Topics[0].Partitions[0].ErrorCode
}

func (p *probe) offsetCommit(topic, group string) int16 {
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Group, req.Generation = group, -1
	rt := kmsg.NewOffsetCommitRequestTopic()
	rt.Topic, rt.TopicID = topic, p.topicID(topic)
	rt.Partitions = []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 1, LeaderEpoch: -1}}
	req.Topics = append(req.Topics, rt)
	return p.do(req).(*kmsg.OffsetCommitResponse).Topics[0].Partitions[0].ErrorCode
}

// offsetFetch asks for the group's offset of topic, by name or (all) with
// every topic of the group.
func (p *probe) offsetFetch(topic, group string, all bool) int16 {
	req := kmsg.NewPtrOffsetFetchRequest()
	rg := kmsg.NewOffsetFetchRequestGroup()
	rg.Group = group
	id := p.topicID(topic)
	if !all {
		rg.Topics = []kmsg.OffsetFetchRequestGroupTopic{{Topic: topic, TopicID: id, Partitions: []int32{0}}}
	}
	req.Groups = append(req.Groups, rg)
	resp := p.do(req).(*kmsg.OffsetFetchResponse)
	g := resp.Groups[0]
	if g.ErrorCode != 0 {
		return g.ErrorCode
	}
	for _, t := range g.Topics {
		if t.Topic == topic || t.TopicID == id {
			return t.Partitions[0].ErrorCode
		}
	}
	return omitted
}

func (p *probe) findCoordinator(keyType int8, key string) int16 {
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.CoordinatorType, req.CoordinatorKey, req.CoordinatorKeys = keyType, key, []string{key}
	resp := p.do(req).(*kmsg.FindCoordinatorResponse)
	if len(resp.Coordinators) > 0 {
		return resp.Coordinators[0].ErrorCode
	}
	return resp.ErrorCode
}

func (p *probe) listGroups(group string) int16 {
	resp := p.do(kmsg.NewPtrListGroupsRequest()).(*kmsg.ListGroupsResponse)
	if resp.ErrorCode != 0 {
		return resp.ErrorCode
	}
	return listed(slices.ContainsFunc(resp.Groups, func(g kmsg.ListGroupsResponseGroup) bool { return g.Group == group }))
}

func (p *probe) initProducerID(txn *string) int16 {
	req := kmsg.NewPtrInitProducerIDRequest()
	req.TransactionalID, req.TransactionTimeoutMillis = txn, 60000
	return p.do(req).(*kmsg.InitProducerIDResponse).ErrorCode
}

func (p *probe) writeTxnMarker(topic string) int16 {
	req := kmsg.NewPtrWriteTxnMarkersRequest()
	m := kmsg.NewWriteTxnMarkersRequestMarker()
	m.ProducerID, m.ProducerEpoch = 555, 0
	m.Topics = []kmsg.WriteTxnMarkersRequestMarkerTopic{{Topic: topic, Partitions: []int32{0}}}
	req.Markers = append(req.Markers, m)
	return p.do(req).(*kmsg.WriteTxnMarkersResponse).Markers[0].Topics[0].Partitions[0].ErrorCode
}

func (p *probe) describeConfigs(t kmsg.ConfigResourceType, name string) int16 {
	req := kmsg.NewPtrDescribeConfigsRequest()
	r := kmsg.NewDescribeConfigsRequestResource()
	r.ResourceType, r.ResourceName = t, name
	req.Resources = append(req.Resources, r)
	return p.do(req).(*kmsg.DescribeConfigsResponse).Resources[0].ErrorCode
}

// alterConfigs validates a change of one config with AlterConfigs or
// IncrementalAlterConfigs.
func (p *probe) alterConfigs(incremental bool, t kmsg.ConfigResourceType, name, config string) int16 {
	if incremental {
		req := kmsg.NewPtrIncrementalAlterConfigsRequest()
		req.ValidateOnly = true
		r := kmsg.NewIncrementalAlterConfigsRequestResource()
		r.ResourceType, r.ResourceName = t, name
		r.Configs = []kmsg.IncrementalAlterConfigsRequestResourceConfig{{Name: config, Value: kmsg.StringPtr("3600000")}}
		req.Resources = append(req.Resources, r)
		return p.do(req).(*kmsg.IncrementalAlterConfigsResponse).Resources[0].ErrorCode
	}
	req := kmsg.NewPtrAlterConfigsRequest()
	req.ValidateOnly = true
	r := kmsg.NewAlterConfigsRequestResource()
	r.ResourceType, r.ResourceName = t, name
	r.Configs = []kmsg.AlterConfigsRequestResourceConfig{{Name: config, Value: kmsg.StringPtr("3600000")}}
	req.Resources = append(req.Resources, r)
	return p.do(req).(*kmsg.AlterConfigsResponse).Resources[0].ErrorCode
}

// matrixCell is one ACL setting and what alice (or the admin) gets.
type matrixCell struct {
	name string
	user string
	acls []auth.ACL
	want int16 // 0: allowed; else the error, or omitted
}

// aclFor is one ACL of a grant's resource type; "%s" in the name stands
// for the cell's suffix.
func aclFor(g grant, name string, pattern kmsg.ACLResourcePatternType, principal, host string, op kmsg.ACLOperation, perm kmsg.ACLPermissionType) auth.ACL {
	return auth.ACL{ResourceType: g.rt, ResourceName: name, PatternType: pattern,
		Principal: principal, Host: host, Operation: op, Permission: perm}
}

// prefixOf is a PREFIXED name that covers the grant's resource and not
// only it: the CLUSTER resource can only be named whole.
func prefixOf(g grant) string {
	if g.rt == kmsg.ACLResourceTypeCluster {
		return g.name
	}
	if i := strings.Index(g.name, "%s"); i >= 0 {
		return g.name[:i]
	}
	return g.name[:len(g.name)-2]
}

// otherOp is an operation on the same resource that does not imply op.
func otherOp(op kmsg.ACLOperation) kmsg.ACLOperation {
	switch op {
	case opDescribe:
		return opCreate
	case opAlterConfigs:
		return opDescribeConfigs
	}
	return opDescribe
}

const (
	literal  = kmsg.ACLResourcePatternTypeLiteral
	prefixed = kmsg.ACLResourcePatternTypePrefixed
	allow    = kmsg.ACLPermissionTypeAllow
	deny     = kmsg.ACLPermissionTypeDeny
)

// matrixCells are the cells of a row on the broker without
// allow.everyone.if.no.acl.found.
func matrixCells(r matrixRow) []matrixCell {
	alice := func(mod func(i int, g grant) []auth.ACL) []auth.ACL {
		var out []auth.ACL
		for i, g := range r.grants {
			out = append(out, mod(i, g)...)
		}
		return out
	}
	each := func(pattern kmsg.ACLResourcePatternType, nameOf func(grant) string, host string) []auth.ACL {
		return alice(func(_ int, g grant) []auth.ACL {
			return []auth.ACL{aclFor(g, nameOf(g), pattern, "User:alice", host, g.op, allow)}
		})
	}
	same := func(g grant) string { return g.name }
	wildcard := func(g grant) string {
		if g.rt == kmsg.ACLResourceTypeCluster {
			return g.name
		}
		return auth.WildcardResource
	}
	first := r.grants[0].err
	cells := []matrixCell{
		{name: "no ACLs", user: "alice", want: first},
		{name: "literal ALLOW", user: "alice", acls: each(literal, same, "*")},
		{name: "prefixed ALLOW", user: "alice", acls: each(prefixed, prefixOf, "*")},
		{name: "wildcard ALLOW", user: "alice", acls: each(literal, wildcard, "*")},
		{name: "ALLOW from the client's host", user: "alice", acls: each(literal, same, "127.0.0.1")},
		{name: "ALLOW from another host", user: "alice", acls: each(literal, same, "10.0.0.1"), want: first},
		{name: "ALLOW for User:*", user: "alice", acls: alice(func(_ int, g grant) []auth.ACL {
			return []auth.ACL{aclFor(g, g.name, literal, auth.WildcardPrincipal, "*", g.op, allow)}
		})},
		{name: "super user", user: "admin"},
	}
	for i, g := range r.grants {
		what := fmt.Sprintf("%s on %s", g.op, g.rt)
		cells = append(cells,
			matrixCell{name: "without " + what, user: "alice", want: g.err, acls: alice(func(j int, h grant) []auth.ACL {
				op := h.op
				if j == i {
					op = otherOp(h.op)
				}
				return []auth.ACL{aclFor(h, h.name, literal, "User:alice", "*", op, allow)}
			})},
			matrixCell{name: "only bob has " + what, user: "alice", want: g.err, acls: alice(func(j int, h grant) []auth.ACL {
				who := "User:alice"
				if j == i {
					who = "User:bob"
				}
				return []auth.ACL{aclFor(h, h.name, literal, who, "*", h.op, allow)}
			})},
			matrixCell{name: "prefixed DENY of " + what, user: "alice", want: g.err, acls: alice(func(j int, h grant) []auth.ACL {
				acls := []auth.ACL{aclFor(h, h.name, literal, "User:alice", "*", h.op, allow)}
				if j == i {
					acls = append(acls, aclFor(h, prefixOf(h), prefixed, "User:alice", "*", h.op, deny))
				}
				return acls
			})},
		)
	}
	return cells
}

// allowEveryoneCells are a row's cells on the broker with
// allow.everyone.if.no.acl.found.
func allowEveryoneCells(r matrixRow) []matrixCell {
	var bobs []auth.ACL
	for _, g := range slices.Concat(r.grants, r.alternatives) {
		bobs = append(bobs, aclFor(g, g.name, literal, "User:bob", "*", g.op, allow))
	}
	return []matrixCell{
		{name: "allow everyone, no ACLs", user: "alice"},
		{name: "allow everyone, bob's ACLs", user: "alice", acls: bobs, want: r.grants[0].err},
	}
}

// cellACLs are a cell's ACLs with "%s" in their names replaced by suffix.
func cellACLs(acls []auth.ACL, suffix string) []auth.ACL {
	acls = slices.Clone(acls)
	for i := range acls {
		acls[i].ResourceName = strings.ReplaceAll(acls[i].ResourceName, "%s", suffix)
	}
	return acls
}

// runMatrix runs every cell of every row on one broker, and returns how
// many it checked with franz-go and, by client, how many of them with the
// other clients too.
func runMatrix(t *testing.T, e *authzEnv, rows []matrixRow, cellsOf func(matrixRow) []matrixCell) (int, map[string]int) {
	var n atomic.Int64
	others := map[string]int{}
	for ri, r := range rows {
		if r.ok == nil {
			t.Fatalf("%s: the row names no code an allowed request gets", r)
		}
		t.Run(r.String(), func(t *testing.T) {
			for ci, c := range cellsOf(e.resolved(r)) {
				suffix := strconv.Itoa(ri) + "-" + strconv.Itoa(ci)
				e.t = t
				e.setACLs(cellACLs(c.acls, suffix))
				p := &probe{t: t, e: e, cl: e.client(c.user, r.pins), user: c.user, suffix: suffix}
				got := r.probe(p)
				n.Add(1)
				switch {
				case c.want != 0 && got != c.want:
					t.Errorf("%s: %s, want %s", c.name, cellCode(got), cellCode(c.want))
				case c.want == 0 && isAuthzError(got):
					t.Errorf("%s: %s, want it allowed", c.name, cellCode(got))
				case c.want == 0 && r.ok != nil && !slices.Contains(r.ok, got):
					t.Errorf("%s: allowed with %s, want one of %v", c.name, cellCode(got), codeNames(r.ok...))
				}
				for _, client := range e.checkClients(t, r, c, suffix) {
					others[client]++
				}
			}
		})
	}
	return int(n.Load()), others
}

// cellCode names a probe's answer.
func cellCode(code int16) string {
	if code == omitted {
		return "left out"
	}
	return codeName(code)
}

// TestAuthzMatrix runs the matrix: every row's cells on a broker without
// allow.everyone.if.no.acl.found, then on one with it.
func TestAuthzMatrix(t *testing.T) {
	rows := matrixRows()
	start := time.Now()
	e := newAuthzEnv(t, nil)
	e.setUp(rows)
	e.agents = startAgents(t, e.addr)
	n, others := runMatrix(t, e, rows, matrixCells)
	everyone := newAuthzEnv(t, map[string]string{"allow.everyone.if.no.acl.found": "true"})
	everyone.setUp(rows)
	everyone.agents = startAgents(t, everyone.addr)
	n2, others2 := runMatrix(t, everyone, rows, allowEveryoneCells)
	n += n2
	var counts []string
	for _, mc := range matrixClients {
		if e.agents[mc.name] == nil {
			t.Logf("the %s column did not run: %s is not set (make compat sets it)", mc.name, mc.env)
			continue
		}
		counts = append(counts, fmt.Sprintf("%d of them with %s too", others[mc.name]+others2[mc.name], mc.name))
	}
	t.Logf("%d rows, %d cells with franz-go%s, in %v", len(rows), n, strings.TrimSuffix(", "+strings.Join(counts, ", "), ", "), time.Since(start).Round(time.Millisecond))
}

// Every API the broker serves is in Kafka's table of operations, and each
// one the table gives a check has a row in the matrix.
func TestAuthzMatrixCoversEveryAPI(t *testing.T) {
	inMatrix := map[kmsg.Key]bool{}
	for _, r := range matrixRows() {
		inMatrix[r.api] = true
		reqs, _ := auth.APIRequirements(r.api)
		for _, g := range r.grants {
			if !slices.ContainsFunc(reqs, func(q auth.Requirement) bool { return q.Operation == g.op && q.Resource == g.rt }) {
				t.Errorf("%s: the row checks %s on %s, which Kafka's table does not list", r, g.op, g.rt)
			}
		}
	}
	for _, api := range sortedAPIs() {
		reqs, ok := auth.APIRequirements(api.key)
		switch {
		case !ok:
			t.Errorf("%s: not in Kafka's table of operations", api.key.Name())
		case len(reqs) > 0 && !inMatrix[api.key]:
			t.Errorf("%s: served, needs %d checks, and has no row in the matrix", api.key.Name(), len(reqs))
		}
	}
}

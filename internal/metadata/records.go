package metadata

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/samsa-io/samsa/internal/model"
)

// RecordType names a kind of record in the encoded envelope. The names are
// stable: they are on disk in every Raft log and snapshot.
type RecordType string

// Record types, one per record struct.
const (
	TypeCluster            RecordType = "cluster"
	TypeBrokerRegistration RecordType = "broker_registration"
	TypeTopic              RecordType = "topic"
	TypePartition          RecordType = "partition"
	TypePartitionChange    RecordType = "partition_change"
	TypeConfig             RecordType = "config"
	TypeRemoveTopic        RecordType = "remove_topic"
	TypeProducerIDs        RecordType = "producer_ids"
	TypeFeatureLevel       RecordType = "feature_level"
	TypeBrokerFence        RecordType = "broker_fence"
	// TypeBrokerUnregistration removes a broker's registration, as
	// Kafka's UnregisterBrokerRecord.
	TypeBrokerUnregistration RecordType = "broker_unregistration"
	// TypeBrokerRegistrationChange: Kafka's BrokerRegistrationChangeRecord,
	// for the broker's online log directories (KIP-858).
	TypeBrokerRegistrationChange RecordType = "broker_registration_change"
	// ACLs and SCRAM credentials, as Kafka's records of the same names.
	TypeAccessControlEntry        RecordType = "access_control_entry"
	TypeRemoveAccessControlEntry  RecordType = "remove_access_control_entry"
	TypeUserScramCredential       RecordType = "user_scram_credential"
	TypeRemoveUserScramCredential RecordType = "remove_user_scram_credential"
	// Delegation tokens (KIP-48), as Kafka's DelegationTokenRecord and
	// RemoveDelegationTokenRecord.
	TypeDelegationToken       RecordType = "delegation_token"
	TypeRemoveDelegationToken RecordType = "remove_delegation_token"
	// Client quotas, as Kafka's ClientQuotaRecord.
	TypeClientQuota RecordType = "client_quota"
)

// Record is one metadata change. The set is closed: only this package's record
// structs implement it, so a decoder can know every type.
type Record interface {
	Type() RecordType
	isRecord()
}

// NoLeader is the leader of a partition that has none (Kafka's -1).
const NoLeader model.NodeID = -1

// Feature names of the finalized features a cluster records (KIP-584), as
// Kafka's ApiVersions response reports them.
const (
	FeatureMetadataVersion    = "metadata.version"
	FeatureTransactionVersion = "transaction.version"
	FeatureGroupVersion       = "group.version"
)

// ClusterRecord sets the cluster ID. It is written once, by the first
// controller to be elected; applying a second one is an error.
type ClusterRecord struct {
	ClusterID string `json:"clusterId"`
}

// Endpoint is one listener a broker serves clients on.
type Endpoint struct {
	Name             string `json:"name"`
	Host             string `json:"host"`
	Port             int32  `json:"port"`
	SecurityProtocol string `json:"securityProtocol"`
}

// InterBrokerEndpoint is the endpoint brokers reach a broker on: the one
// of the inter.broker.listener.name listener, else the first.
func InterBrokerEndpoint(listener string, eps []Endpoint) (Endpoint, bool) {
	listener = strings.ToUpper(listener)
	for _, ep := range eps {
		if listener == "" || ep.Name == listener {
			return ep, true
		}
	}
	return Endpoint{}, false
}

// BrokerRegistration registers a broker, or replaces its registration when it
// restarts (a new Incarnation each process start, as in KIP-631).
//
// A broker registers fenced, as in KRaft: it leads nothing and clients are
// not told of it until the controller unfences it (BrokerFence). The single
// node registers itself unfenced. Its broker epoch is the offset of the
// batch that registered it, unless Epoch carries one (a snapshot's).
type BrokerRegistration struct {
	NodeID      model.NodeID `json:"brokerId"`
	Incarnation string       `json:"incarnationId"`
	Rack        string       `json:"rack,omitempty"`
	Endpoints   []Endpoint   `json:"endPoints"`
	Fenced      bool         `json:"fenced,omitempty"`
	Epoch       int64        `json:"brokerEpoch,omitempty"`
	// Features are the feature levels the broker supports (KIP-584): the
	// active controller refuses to finalize a level a registered broker
	// does not support. None from a broker older than the field.
	Features []FeatureRange `json:"features,omitempty"`
	// FencedAtMs is when a fenced registration went down, in Unix
	// milliseconds of the controller that wrote it (0: unknown, as in
	// records older than the field). A new registration of a broker that
	// is fenced already keeps the earlier time (BrokerImage.FencedAtMs).
	FencedAtMs int64 `json:"fencedAtMs,omitempty"`
	// LogDirs are the directory IDs of the broker's online log
	// directories (KIP-858), Kafka's base64 UUIDs.
	LogDirs []string `json:"logDirs,omitempty"`
}

// BrokerRegistrationChange changes a registered broker's online log
// directories (Kafka's BrokerRegistrationChangeRecord with LogDirs,
// KIP-858): a directory the broker reported offline leaves the list, and
// the replicas assigned to it are offline. Like BrokerFence it applies
// only to that broker epoch's registration.
type BrokerRegistrationChange struct {
	NodeID  model.NodeID `json:"brokerId"`
	Epoch   int64        `json:"brokerEpoch"`
	LogDirs []string     `json:"logDirs"`
}

// BrokerFence fences or unfences a registered broker (Kafka's
// FenceBrokerRecord and UnfenceBrokerRecord). It applies only to the
// registration of that broker epoch: a record about an earlier process
// start of the broker is stale and refused.
type BrokerFence struct {
	NodeID model.NodeID `json:"brokerId"`
	Epoch  int64        `json:"brokerEpoch"`
	Fenced bool         `json:"fenced"`
	// FencedAtMs is when a fencing happened, in Unix milliseconds of the
	// controller that wrote it; 0 when unknown, and on an unfencing. Kafka's
	// FenceBrokerRecord has no time: Samsa's balancer needs to know how long
	// a broker has been down, and a new active controller learns it here.
	FencedAtMs int64 `json:"fencedAtMs,omitempty"`
}

// BrokerUnregistration removes a broker's registration (Kafka's
// UnregisterBrokerRecord, what UnregisterBroker writes once a decommissioned
// broker is gone). Like BrokerFence it names the registration's epoch: a
// record about an earlier process start of the broker is refused, so an
// unregistration cannot remove a registration made after it was decided.
// The broker's replicas stay in the partitions' replica lists (draining
// them is the operator's part, before); the controller takes it out of
// every ISR in the same batch.
type BrokerUnregistration struct {
	NodeID model.NodeID `json:"brokerId"`
	Epoch  int64        `json:"brokerEpoch"`
}

// TopicRecord creates a topic. Its partitions follow as PartitionRecords,
// normally in the same batch.
type TopicRecord struct {
	Name    string        `json:"name"`
	TopicID model.TopicID `json:"topicId"`
}

// PartitionRecord sets the full state of one partition: it adds partition N
// to a topic that has N partitions, or replaces an existing one.
type PartitionRecord struct {
	TopicID        model.TopicID  `json:"topicId"`
	Partition      int32          `json:"partitionId"`
	Replicas       []model.NodeID `json:"replicas"`
	ISR            []model.NodeID `json:"isr"`
	Leader         model.NodeID   `json:"leader"`
	LeaderEpoch    int32          `json:"leaderEpoch"`
	PartitionEpoch int32          `json:"partitionEpoch"`
	// AddingReplicas and RemovingReplicas are those of a reassignment in
	// progress (KIP-455), both inside Replicas, which is their union with
	// the replicas kept; none when no reassignment is in progress.
	AddingReplicas   []model.NodeID `json:"addingReplicas,omitempty"`
	RemovingReplicas []model.NodeID `json:"removingReplicas,omitempty"`
	// Directories are the log directory of each replica, in Replicas'
	// order (KIP-858), Kafka's base64 directory IDs: "" for one the
	// broker has not assigned yet (Kafka's UNASSIGNED). Empty: none
	// assigned.
	Directories []string `json:"directories,omitempty"`
}

// PartitionChange changes some of a partition's state; nil fields are left as
// they are. As in KRaft's PartitionChangeRecord, the epochs are not in the
// record but derived when it is applied: every change bumps the partition
// epoch, and a change of leader also bumps the leader epoch, so the epochs
// cannot disagree between nodes that replay the same log.
type PartitionChange struct {
	TopicID   model.TopicID `json:"topicId"`
	Partition int32         `json:"partitionId"`
	// Leader is the new leader, NoLeader for none; nil keeps the leader.
	Leader *model.NodeID `json:"leader,omitempty"`
	// ISR is the new in-sync replica set; nil keeps it. An empty non-nil ISR
	// is a real value, so the field is never omitted.
	ISR []model.NodeID `json:"isr"`
	// Replicas is the new replica set; nil keeps it. A change that drops a
	// replica bumps the leader epoch even when the leader stays, as KRaft's
	// PartitionChangeBuilder does, so a removed replica is fenced.
	Replicas []model.NodeID `json:"replicas"`
	// AddingReplicas and RemovingReplicas set the reassignment in progress
	// (PartitionRecord's fields of the same names); nil keeps them, a
	// pointer to an empty list clears them.
	AddingReplicas   *[]model.NodeID `json:"addingReplicas,omitempty"`
	RemovingReplicas *[]model.NodeID `json:"removingReplicas,omitempty"`
	// Directories are the replicas' log directories in the order of the
	// new Replicas (or the kept ones); nil keeps each replica's, and a
	// replica a change of Replicas adds has none assigned yet.
	Directories []string `json:"directories,omitempty"`
}

// ResourceType is the kind of resource a config belongs to, numbered as
// Kafka's ConfigResource.Type on the wire.
type ResourceType int8

// Config resource types.
const (
	ResourceTopic  ResourceType = 2
	ResourceBroker ResourceType = 4
	// ResourceClientMetrics is a KIP-714 client metrics subscription,
	// named by the operator; its configs are the subscription.
	ResourceClientMetrics ResourceType = 16
	// ResourceGroup is a group's dynamic configs (KIP-848, KIP-932,
	// KIP-1071), named by the group ID, never empty.
	ResourceGroup ResourceType = 32
)

func (t ResourceType) String() string {
	switch t {
	case ResourceTopic:
		return "topic"
	case ResourceBroker:
		return "broker"
	case ResourceClientMetrics:
		return "client-metrics"
	case ResourceGroup:
		return "group"
	}
	return "resource(" + itoa(int64(t)) + ")"
}

// ConfigRecord sets or deletes one dynamic config: a topic's override, a
// broker's dynamic config, a client metrics subscription's config or a
// group's config. For brokers the resource name is the node ID in decimal,
// or "" for the cluster-wide default; for client metrics the subscription's
// name, for groups the group ID, never empty.
type ConfigRecord struct {
	ResourceType ResourceType `json:"resourceType"`
	ResourceName string       `json:"resourceName"`
	Name         string       `json:"name"`
	// Value is the new value; nil deletes the config.
	Value *string `json:"value"`
}

// RemoveTopic deletes a topic, its partitions and its config overrides.
type RemoveTopic struct {
	TopicID model.TopicID `json:"topicId"`
}

// ProducerIDsRecord records that a block of producer IDs was handed out: IDs
// below NextProducerID are taken and never given again, even after a restart.
type ProducerIDsRecord struct {
	NodeID         model.NodeID `json:"brokerId"`
	NextProducerID int64        `json:"nextProducerId"`
}

// FeatureLevel sets the finalized level of a feature; level 0 removes it
// (KIP-584).
type FeatureLevel struct {
	Name  string `json:"name"`
	Level int16  `json:"featureLevel"`
}

// ACLID identifies one ACL, as Kafka's AccessControlEntryRecord.Id: a
// random UUID drawn by the controller (NewUUID), written in Kafka's text
// form.
type ACLID [16]byte

func (id ACLID) String() string { return FormatUUID(model.TopicID(id)) }

func (id ACLID) MarshalText() ([]byte, error) { return []byte(id.String()), nil }

func (id *ACLID) UnmarshalText(b []byte) error {
	u, err := ParseUUID(string(b))
	*id = ACLID(u)
	return err
}

// ACL is one access control entry bound to a resource pattern: Kafka's
// AclBinding (StandardAcl), its enums as the numbers Kafka puts on the
// wire (resource type, pattern type, operation, permission type). The
// image keeps what the controller validated; it gives the numbers no
// meaning of its own.
type ACL struct {
	ResourceType   int8   `json:"resourceType"`
	ResourceName   string `json:"resourceName"`
	PatternType    int8   `json:"patternType"`
	Principal      string `json:"principal"`
	Host           string `json:"host"`
	Operation      int8   `json:"operation"`
	PermissionType int8   `json:"permissionType"`
}

// Compare orders ACLs by resource (type, name, pattern type), then
// principal, host, operation and permission, so the ACLs of one resource
// are adjacent, as DescribeAcls groups them.
func (a ACL) Compare(b ACL) int {
	return cmp.Or(cmp.Compare(a.ResourceType, b.ResourceType), strings.Compare(a.ResourceName, b.ResourceName),
		cmp.Compare(a.PatternType, b.PatternType), strings.Compare(a.Principal, b.Principal),
		strings.Compare(a.Host, b.Host), cmp.Compare(a.Operation, b.Operation), cmp.Compare(a.PermissionType, b.PermissionType))
}

// AccessControlEntryRecord adds an ACL under a new ID (Kafka's record of
// the same name).
type AccessControlEntryRecord struct {
	ID ACLID `json:"id"`
	ACL
}

// RemoveAccessControlEntryRecord removes the ACL with an ID.
type RemoveAccessControlEntryRecord struct {
	ID ACLID `json:"id"`
}

// SCRAM mechanisms as Kafka numbers them (ScramMechanism.type).
const (
	ScramSHA256 int8 = 1
	ScramSHA512 int8 = 2
)

// UserScramCredentialRecord sets a user's credential for one SCRAM
// mechanism (Kafka's record of the same name): the salt, RFC 5802's
// StoredKey and ServerKey, and the iteration count. Neither the password
// nor the salted password is ever in the log: the keys are what a broker
// needs to check a client's proof, and neither gives the password back.
type UserScramCredentialRecord struct {
	Name       string `json:"name"`
	Mechanism  int8   `json:"mechanism"`
	Salt       []byte `json:"salt"`
	StoredKey  []byte `json:"storedKey"`
	ServerKey  []byte `json:"serverKey"`
	Iterations int32  `json:"iterations"`
}

// String keeps the salt and keys out of logs and error messages, as
// Kafka's toString does.
func (r UserScramCredentialRecord) String() string {
	return fmt.Sprintf("UserScramCredentialRecord(name=%s, mechanism=%d, salt/keys hidden, iterations=%d)", r.Name, r.Mechanism, r.Iterations)
}

// RemoveUserScramCredentialRecord removes a user's credential for one
// mechanism.
type RemoveUserScramCredentialRecord struct {
	Name      string `json:"name"`
	Mechanism int8   `json:"mechanism"`
}

// DelegationTokenRecord adds a delegation token, or replaces it when a
// renewal or an expiry moves its ExpirationTimestamp (Kafka's record of the
// same name). Principals are written Type:Name, timestamps in Unix
// milliseconds. The token's HMAC is not in the record: every node derives
// it from delegation.token.secret.key and the token ID, so the log holds
// nothing a client could log in with.
type DelegationTokenRecord struct {
	TokenID             string   `json:"tokenId"`
	Owner               string   `json:"owner"`
	Requester           string   `json:"requester"`
	Renewers            []string `json:"renewers"`
	IssueTimestamp      int64    `json:"issueTimestamp"`
	MaxTimestamp        int64    `json:"maxTimestamp"`
	ExpirationTimestamp int64    `json:"expirationTimestamp"`
}

// RemoveDelegationTokenRecord removes an expired or expired-on-request
// token.
type RemoveDelegationTokenRecord struct {
	TokenID string `json:"tokenId"`
}

// QuotaEntityData is one part of a client quota entity as Kafka's
// ClientQuotaRecord writes it: an entity type (QuotaEntityUser,
// QuotaEntityClientID, QuotaEntityIP) and a name, nil for the type's
// default entity.
type QuotaEntityData struct {
	EntityType string  `json:"entityType"`
	EntityName *string `json:"entityName"`
}

// ClientQuotaRecord sets one quota value of a client quota entity, or
// removes it (Kafka's record of the same name). The entity is a list, as
// in Kafka, and must be one Kafka allows: a user, a client ID, both, or an
// IP alone. Value is ignored when Remove is set.
type ClientQuotaRecord struct {
	Entity []QuotaEntityData `json:"entity"`
	Key    string            `json:"key"`
	Value  float64           `json:"value"`
	Remove bool              `json:"remove"`
}

func (ClusterRecord) Type() RecordType      { return TypeCluster }
func (BrokerRegistration) Type() RecordType { return TypeBrokerRegistration }
func (TopicRecord) Type() RecordType        { return TypeTopic }
func (PartitionRecord) Type() RecordType    { return TypePartition }
func (PartitionChange) Type() RecordType    { return TypePartitionChange }
func (ConfigRecord) Type() RecordType       { return TypeConfig }
func (RemoveTopic) Type() RecordType        { return TypeRemoveTopic }
func (ProducerIDsRecord) Type() RecordType  { return TypeProducerIDs }
func (FeatureLevel) Type() RecordType       { return TypeFeatureLevel }
func (BrokerFence) Type() RecordType        { return TypeBrokerFence }
func (BrokerUnregistration) Type() RecordType {
	return TypeBrokerUnregistration
}
func (BrokerRegistrationChange) Type() RecordType { return TypeBrokerRegistrationChange }

func (AccessControlEntryRecord) Type() RecordType        { return TypeAccessControlEntry }
func (RemoveAccessControlEntryRecord) Type() RecordType  { return TypeRemoveAccessControlEntry }
func (UserScramCredentialRecord) Type() RecordType       { return TypeUserScramCredential }
func (RemoveUserScramCredentialRecord) Type() RecordType { return TypeRemoveUserScramCredential }
func (DelegationTokenRecord) Type() RecordType           { return TypeDelegationToken }
func (RemoveDelegationTokenRecord) Type() RecordType     { return TypeRemoveDelegationToken }
func (ClientQuotaRecord) Type() RecordType               { return TypeClientQuota }

func (ClusterRecord) isRecord()            {}
func (BrokerRegistration) isRecord()       {}
func (TopicRecord) isRecord()              {}
func (PartitionRecord) isRecord()          {}
func (PartitionChange) isRecord()          {}
func (ConfigRecord) isRecord()             {}
func (RemoveTopic) isRecord()              {}
func (ProducerIDsRecord) isRecord()        {}
func (FeatureLevel) isRecord()             {}
func (BrokerFence) isRecord()              {}
func (BrokerUnregistration) isRecord()     {}
func (BrokerRegistrationChange) isRecord() {}

func (AccessControlEntryRecord) isRecord()        {}
func (RemoveAccessControlEntryRecord) isRecord()  {}
func (UserScramCredentialRecord) isRecord()       {}
func (RemoveUserScramCredentialRecord) isRecord() {}
func (DelegationTokenRecord) isRecord()           {}
func (RemoveDelegationTokenRecord) isRecord()     {}
func (ClientQuotaRecord) isRecord()               {}

package metadata

import (
	"cmp"
	"maps"
	"slices"
	"strings"

	"github.com/samsa-io/samsa/internal/model"
)

// Image is the cluster metadata after applying every record up to Offset. It
// never changes once built, so it is safe for concurrent use and a reader
// can hold one for as long as it likes; Apply builds a new one.
type Image struct {
	offset        int64
	clusterID     string
	topics        map[string]*TopicImage
	topicsByID    map[model.TopicID]*TopicImage
	sortedTopics  []*TopicImage // by name; rebuilt only when topics change
	brokers       map[model.NodeID]BrokerImage
	topicConfigs  map[string]map[string]string // topic name -> overrides
	brokerConfigs map[string]map[string]string // node ID or "" -> dynamic configs
	// clientMetrics are the KIP-714 client metrics subscriptions, by
	// name: a subscription is its configs, and goes when they all do.
	clientMetrics  map[string]map[string]string
	features       map[string]int16
	nextProducerID int64
	acls           map[ACLID]ACL
	scram          map[ScramKey]ScramCredential
	tokens         map[string]DelegationToken // by token ID
	quotas         map[QuotaEntity]map[string]float64
	// groupConfigs are the groups' dynamic configs, by group ID; a group
	// has an entry only while it sets one. They do not depend on the group
	// existing: the group coordinator owns groups, the metadata their
	// configs.
	groupConfigs map[string]map[string]string
}

// TopicImage is one topic. It is shared between images until the topic
// changes; it must not be modified.
type TopicImage struct {
	Name string
	ID   model.TopicID
	// Partitions are indexed by partition number.
	Partitions []PartitionImage
}

// ReplicationFactor is the replica count of partition 0, which Kafka reports
// as the topic's replication factor; 0 for a topic without partitions.
func (t *TopicImage) ReplicationFactor() int {
	if len(t.Partitions) == 0 {
		return 0
	}
	return len(t.Partitions[0].Replicas)
}

// PartitionImage is one partition's replica state. Its slices are shared and
// must not be modified.
type PartitionImage struct {
	Partition int32
	// Leader is NoLeader when the partition has none.
	Leader model.NodeID
	// LeaderEpoch grows by one each time the leader changes; replicas use it
	// to fence a deposed leader and to truncate divergent logs (KIP-101, KIP-320).
	LeaderEpoch model.LeaderEpoch
	// PartitionEpoch grows by one on every change, so an AlterPartition based
	// on a stale view can be refused (KIP-497).
	PartitionEpoch int32
	Replicas       []model.NodeID
	ISR            []model.NodeID
	// AddingReplicas and RemovingReplicas are a reassignment in progress
	// (KIP-455): Replicas is the target replicas followed by those being
	// removed, AddingReplicas the targets not in the original set. Both
	// are empty when none is in progress.
	AddingReplicas   []model.NodeID
	RemovingReplicas []model.NodeID
	// Directories are each replica's log directory ID in Replicas' order
	// ("": not assigned yet), or empty when none is assigned (KIP-858).
	Directories []string
}

// Directory is the log directory ID the metadata assigns a replica to,
// "" when none is assigned (or the node is not a replica).
func (p PartitionImage) Directory(id model.NodeID) string {
	for i, r := range p.Replicas {
		if r == id && i < len(p.Directories) {
			return p.Directories[i]
		}
	}
	return ""
}

// Reassigning reports whether a reassignment of the partition is in
// progress.
func (p PartitionImage) Reassigning() bool {
	return len(p.AddingReplicas) > 0 || len(p.RemovingReplicas) > 0
}

// OriginalReplicas are the replicas before the reassignment in progress
// (Replicas less AddingReplicas), what a cancellation goes back to.
func (p PartitionImage) OriginalReplicas() []model.NodeID {
	out := make([]model.NodeID, 0, len(p.Replicas))
	for _, r := range p.Replicas {
		if !slices.Contains(p.AddingReplicas, r) {
			out = append(out, r)
		}
	}
	return out
}

// TargetReplicas are the replicas the reassignment in progress moves to
// (Replicas less RemovingReplicas); Replicas when none is in progress.
func (p PartitionImage) TargetReplicas() []model.NodeID {
	out := make([]model.NodeID, 0, len(p.Replicas))
	for _, r := range p.Replicas {
		if !slices.Contains(p.RemovingReplicas, r) {
			out = append(out, r)
		}
	}
	return out
}

// BrokerImage is a registered broker.
type BrokerImage struct {
	NodeID      model.NodeID
	Incarnation string
	Rack        string
	Endpoints   []Endpoint
	// Epoch is the broker epoch: the offset its registration was applied
	// at, new at each process start; heartbeats and AlterPartition carry it.
	Epoch int64
	// Fenced brokers lead nothing and are not listed to clients.
	Fenced bool
	// FencedAtMs is when a fenced broker went down (Unix milliseconds, as
	// recorded by the controller that fenced it; 0 when unknown or not
	// fenced). It survives re-registrations while the broker stays fenced,
	// so a broker that restarts again and again without catching up counts
	// as down since the first fencing.
	FencedAtMs int64
	// Features are the feature levels the broker supports.
	Features []FeatureRange
	// LogDirs are the IDs of its online log directories (KIP-858).
	LogDirs []string
}

// HasOnlineDir reports whether a replica assigned to directory dir on
// this broker can serve: none assigned (""), a broker that registered no
// directories (a single node, or one registered before it listed them:
// Kafka's DirectoryId.isOnline takes every directory of such a broker to
// be online, since a broker whose directories all failed stops), or one
// of its online log directories, as Kafka's BrokerRegistration.hasOnlineDir.
func (b BrokerImage) HasOnlineDir(dir string) bool {
	return dir == "" || len(b.LogDirs) == 0 || slices.Contains(b.LogDirs, dir)
}

// ReplicaOnline reports whether node id's replica of p is registered on
// an online log directory: false for an unregistered broker, or a
// replica whose directory the broker reported offline (KIP-858). Whether
// the broker is fenced is the caller's question.
func (img *Image) ReplicaOnline(p PartitionImage, id model.NodeID) bool {
	b, ok := img.brokers[id]
	return ok && b.HasOnlineDir(p.Directory(id))
}

// Supports returns the range of a feature the broker registered as
// supported; false when it registered none.
func (b BrokerImage) Supports(name string) (FeatureRange, bool) {
	for _, f := range b.Features {
		if f.Name == name {
			return f, true
		}
	}
	return FeatureRange{}, false
}

// Empty returns the image before any record.
func Empty() *Image { return &Image{} }

// Offset is the Raft index of the last applied batch; 0 for the empty image.
func (img *Image) Offset() int64 { return img.offset }

// ClusterID is the cluster's ID in Kafka's text form; "" before the first
// controller wrote it.
func (img *Image) ClusterID() string { return img.clusterID }

// Topic returns a topic by name.
func (img *Image) Topic(name string) (*TopicImage, bool) {
	t, ok := img.topics[name]
	return t, ok
}

// TopicByID returns a topic by ID.
func (img *Image) TopicByID(id model.TopicID) (*TopicImage, bool) {
	t, ok := img.topicsByID[id]
	return t, ok
}

// Topics returns every topic sorted by name. The slice is the caller's; the
// topics are shared.
func (img *Image) Topics() []*TopicImage { return slices.Clone(img.sortedTopics) }

// Partition returns one partition.
func (img *Image) Partition(tp model.TopicPartition) (PartitionImage, bool) {
	t, ok := img.topics[tp.Topic]
	if !ok || tp.Partition < 0 || int(tp.Partition) >= len(t.Partitions) {
		return PartitionImage{}, false
	}
	return t.Partitions[tp.Partition], true
}

// Brokers returns every registered broker sorted by node ID.
func (img *Image) Brokers() []BrokerImage {
	out := slices.Collect(maps.Values(img.brokers))
	slices.SortFunc(out, func(a, b BrokerImage) int { return cmp.Compare(a.NodeID, b.NodeID) })
	return out
}

// LeadsNothing reports whether no partition has the broker as leader: a
// controlled shutdown is done when this holds.
func (img *Image) LeadsNothing(id model.NodeID) bool {
	for _, t := range img.sortedTopics {
		for _, p := range t.Partitions {
			if p.Leader == id {
				return false
			}
		}
	}
	return true
}

// Broker returns one registered broker.
func (img *Image) Broker(id model.NodeID) (BrokerImage, bool) {
	b, ok := img.brokers[id]
	return b, ok
}

// TopicConfig returns a copy of a topic's config overrides (only what was
// set, not defaults); empty for an unknown topic.
func (img *Image) TopicConfig(name string) map[string]string {
	return cloneConfig(img.topicConfigs[name])
}

// BrokerConfig returns a copy of the dynamic configs of a broker resource:
// a node ID in decimal (DYNAMIC_BROKER_CONFIG) or "" for the cluster-wide
// default (DYNAMIC_DEFAULT_BROKER_CONFIG).
func (img *Image) BrokerConfig(resource string) map[string]string {
	return cloneConfig(img.brokerConfigs[resource])
}

// ClientMetricsConfig returns a copy of the configs of a client metrics
// subscription (KIP-714): what was set, not defaults; empty for a
// subscription that does not exist.
func (img *Image) ClientMetricsConfig(name string) map[string]string {
	return cloneConfig(img.clientMetrics[name])
}

// ClientMetricsSubscriptions returns the names of the client metrics
// subscriptions, sorted.
func (img *Image) ClientMetricsSubscriptions() []string {
	return slices.Sorted(maps.Keys(img.clientMetrics))
}

// GroupConfig returns a copy of a group's dynamic configs: what was set,
// not defaults; empty for a group that sets none.
func (img *Image) GroupConfig(group string) map[string]string {
	return cloneConfig(img.groupConfigs[group])
}

// GroupsWithConfigs returns the IDs of the groups that set a dynamic
// config, sorted.
func (img *Image) GroupsWithConfigs() []string {
	return slices.Sorted(maps.Keys(img.groupConfigs))
}

// GroupConfigsChanged reports whether any group's configs may differ
// between two images: false when img and other share them, as images do
// until a batch changes one. A cache of resolved group configs refreshes
// on it.
func (img *Image) GroupConfigsChanged(other *Image) bool {
	if len(img.groupConfigs) != len(other.groupConfigs) {
		return true
	}
	for group, c := range img.groupConfigs {
		if o, ok := other.groupConfigs[group]; !ok || !maps.Equal(c, o) {
			return true
		}
	}
	return false
}

// ClientMetricsChanged reports whether the client metrics subscriptions
// of two images may differ: false when img and other share them, as
// images do until a batch changes one.
func (img *Image) ClientMetricsChanged(other *Image) bool {
	if len(img.clientMetrics) != len(other.clientMetrics) {
		return true
	}
	for name, c := range img.clientMetrics {
		if o, ok := other.clientMetrics[name]; !ok || !maps.Equal(c, o) {
			return true
		}
	}
	return false
}

// Feature returns a finalized feature level; 0 when the feature is not set.
func (img *Image) Feature(name string) int16 { return img.features[name] }

// Features returns a copy of every finalized feature level.
func (img *Image) Features() map[string]int16 { return maps.Clone(img.features) }

// NextProducerID is the first producer ID not yet handed out in a block.
func (img *Image) NextProducerID() int64 { return img.nextProducerID }

// ACLWithID is an ACL and its ID.
type ACLWithID struct {
	ID ACLID
	ACL
}

// ACL returns the ACL with an ID.
func (img *Image) ACL(id ACLID) (ACL, bool) {
	a, ok := img.acls[id]
	return a, ok
}

// ACLs returns every ACL in ACL.Compare's order (the ACLs of a resource
// together), ties by ID. The slice is the caller's.
func (img *Image) ACLs() []ACLWithID {
	out := make([]ACLWithID, 0, len(img.acls))
	for id, a := range img.acls {
		out = append(out, ACLWithID{ID: id, ACL: a})
	}
	slices.SortFunc(out, func(x, y ACLWithID) int {
		return cmp.Or(x.ACL.Compare(y.ACL), slices.Compare(x.ID[:], y.ID[:]))
	})
	return out
}

// ScramKey names one SCRAM credential: a user and a mechanism
// (ScramSHA256, ScramSHA512).
type ScramKey struct {
	User      string
	Mechanism int8
}

// ScramCredential is what the image keeps of a SCRAM credential: the salt,
// RFC 5802's StoredKey and ServerKey, and the iteration count. Its slices
// are shared and must not be modified.
type ScramCredential struct {
	Salt       []byte
	StoredKey  []byte
	ServerKey  []byte
	Iterations int32
}

// String keeps the salt and keys out of logs.
func (c ScramCredential) String() string {
	return "ScramCredential(salt/keys hidden, iterations=" + itoa(int64(c.Iterations)) + ")"
}

// UserScramCredential is a credential and whose it is.
type UserScramCredential struct {
	ScramKey
	ScramCredential
}

// ScramCredential returns a user's credential for one mechanism.
func (img *Image) ScramCredential(user string, mechanism int8) (ScramCredential, bool) {
	c, ok := img.scram[ScramKey{User: user, Mechanism: mechanism}]
	return c, ok
}

// ScramCredentials returns every SCRAM credential sorted by user, then
// mechanism. The slice is the caller's; the credentials' bytes are shared.
func (img *Image) ScramCredentials() []UserScramCredential {
	out := make([]UserScramCredential, 0, len(img.scram))
	for k, c := range img.scram {
		out = append(out, UserScramCredential{ScramKey: k, ScramCredential: c})
	}
	slices.SortFunc(out, func(x, y UserScramCredential) int {
		return cmp.Or(strings.Compare(x.User, y.User), cmp.Compare(x.Mechanism, y.Mechanism))
	})
	return out
}

func cloneConfig(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	maps.Copy(out, m)
	return out
}

// TopicDelta is what changed between two images' topics.
type TopicDelta struct {
	// Created are topics whose ID is in the new image only. A topic deleted
	// and created again under the same name shows as deleted and created.
	Created []*TopicImage
	// Deleted are topics whose ID is in the old image only.
	Deleted []*TopicImage
	// Changed are topics in both whose partitions changed (new partitions,
	// leader, ISR ...), as the new image has them.
	Changed []*TopicImage
}

// DiffTopics compares the topics of two images, each list sorted by name. A
// nil prev is the empty image. Because images are copy-on-write, a topic a
// batch did not touch is the same pointer in both, so the comparison costs
// one map lookup per topic.
func DiffTopics(prev, next *Image) TopicDelta {
	if prev == nil {
		prev = Empty()
	}
	var d TopicDelta
	for _, t := range next.sortedTopics {
		old, ok := prev.topicsByID[t.ID]
		switch {
		case !ok:
			d.Created = append(d.Created, t)
		case old != t:
			d.Changed = append(d.Changed, t)
		}
	}
	for _, t := range prev.sortedTopics {
		if _, ok := next.topicsByID[t.ID]; !ok {
			d.Deleted = append(d.Deleted, t)
		}
	}
	return d
}

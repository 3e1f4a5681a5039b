package group

import (
	"sync"

	"github.com/samsa-io/samsa/internal/model"
)

// protocolKind is the rebalance protocol a group runs. Apache Kafka keeps
// the two apart the same way: a group is either a classic group
// (JoinGroup/SyncGroup) or a consumer group (KIP-848's
// ConsumerGroupHeartbeat), and converts between them only on request.
type protocolKind int8

const (
	// protocolClassic: JoinGroup/SyncGroup/Heartbeat/LeaveGroup. Groups that
	// only store offsets ("simple" groups) are classic groups without
	// members and without a protocol type, as in Kafka.
	protocolClassic protocolKind = iota
	// protocolConsumer: KIP-848, served by a later change in this package.
	protocolConsumer
)

func (k protocolKind) String() string {
	if k == protocolConsumer {
		return "consumer"
	}
	return "classic"
}

// group is one group ID's state: what every protocol shares (the committed
// offsets, the lock, the partition it lives in) and the membership state of
// the protocol it runs.
type group struct {
	id        string
	partition int32

	// mu is held for a whole turn on the group, including the appends the
	// turn makes; see the lock order in doc.go. Every field below is
	// guarded by it.
	mu sync.Mutex
	// removed is set once the group has left the Coordinator's table
	// (deleted, expired, unloaded): a request that found it before must
	// look it up again.
	removed bool
	kind    protocolKind
	classic classicGroup
	offsets map[model.TopicPartition]committedOffset
}

// committedOffset is one partition's committed offset, as
// OffsetCommitValue holds it.
type committedOffset struct {
	offset      int64
	leaderEpoch int32
	metadata    string
	// commitTimestamp and expireTimestamp are Unix milliseconds;
	// expireTimestamp is -1 unless the commit asked for its own retention
	// (OffsetCommit v2-v4) or was loaded from a v1 value.
	commitTimestamp int64
	expireTimestamp int64
}

func newGroup(id string, partition int32) *group {
	return &group{
		id:        id,
		partition: partition,
		classic:   newClassicGroup(id),
		offsets:   make(map[model.TopicPartition]committedOffset),
	}
}

// blank reports whether the group holds nothing worth keeping: no offsets
// and a classic state that was never persisted. Such a group is what a
// refused JoinGroup or an expired MEMBER_ID_REQUIRED round trip leaves
// behind; Kafka keeps it until the next offsets cleanup, Samsa drops it at
// once since nothing in the log refers to it.
func (g *group) blank() bool {
	return g.kind == protocolClassic && len(g.offsets) == 0 && g.classic.blank()
}

// isEmpty reports whether the group has no members: the state in which it
// may be deleted and in which anyone may commit offsets to it.
func (g *group) isEmpty() bool {
	return g.kind == protocolClassic && g.classic.state == stateEmpty
}

// stateName is the group's state as DescribeGroups and ListGroups name it.
func (g *group) stateName() string {
	return g.classic.state.String()
}

// protocolType is what ListGroups and DescribeGroups report as the group's
// protocol type ("consumer", "connect", or "" for a simple group).
func (g *group) protocolType() string {
	return g.classic.protocolType
}

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
	// protocolConsumer: KIP-848's ConsumerGroupHeartbeat, with server-side
	// assignment.
	protocolConsumer
	// protocolShare: KIP-932's ShareGroupHeartbeat (share.go).
	protocolShare
	// protocolStreams: KIP-1071's StreamsGroupHeartbeat (streams.go).
	protocolStreams
)

func (k protocolKind) String() string {
	switch k {
	case protocolConsumer:
		return "consumer"
	case protocolShare:
		return "share"
	case protocolStreams:
		return "streams"
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
	// classic is the state of a classic group, consumer that of a consumer
	// group; the other is left as new.
	classic  classicGroup
	consumer consumerGroup
	share    shareGroup
	streams  streamsGroup
	offsets  map[model.TopicPartition]committedOffset
	// pending holds the offsets of open transactions (TxnOffsetCommit), by
	// producer ID: invisible until CompleteTransaction commits them.
	pending map[int64]map[model.TopicPartition]pendingOffset
	// offsetSeq numbers the group's offset records in log order, so a
	// transaction's commit knows which of its offsets a later one beat.
	offsetSeq int64
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
		consumer:  newConsumerGroup(id),
		share:     newShareGroup(id),
		streams:   newStreamsGroup(id),
		offsets:   make(map[model.TopicPartition]committedOffset),
		pending:   make(map[int64]map[model.TopicPartition]pendingOffset),
	}
}

// blank reports whether the group holds nothing worth keeping: no offsets
// and a state that was never persisted. Such a group is what a refused
// JoinGroup or an expired MEMBER_ID_REQUIRED round trip leaves behind;
// Kafka keeps it until the next offsets cleanup, Samsa drops it at once
// since nothing in the log refers to it.
func (g *group) blank() bool {
	if len(g.offsets) > 0 || len(g.pending) > 0 {
		return false
	}
	if g.kind == protocolConsumer {
		return g.consumer.blank()
	}
	if g.kind == protocolShare {
		return g.share.blank()
	}
	if g.kind == protocolStreams {
		return g.streams.blank()
	}
	return g.classic.blank()
}

// dead reports whether the group was deleted: it leaves the table at the
// end of the turn.
func (g *group) dead() bool {
	if g.kind == protocolConsumer {
		return g.consumer.dead
	}
	if g.kind == protocolShare {
		return g.share.dead
	}
	if g.kind == protocolStreams {
		return g.streams.dead
	}
	return g.classic.state == stateDead
}

// markDead ends a group whose deletion is durable.
func (g *group) markDead(s *step) {
	if g.kind == protocolConsumer {
		g.consumer.dead = true
		return
	}
	if g.kind == protocolShare {
		g.share.dead = true
		return
	}
	if g.kind == protocolStreams {
		g.streams.dead = true
		return
	}
	g.classic.transition(s, stateDead)
}

// isEmpty reports whether the group has no members: the state in which it
// may be deleted and in which anyone may commit offsets to it.
func (g *group) isEmpty() bool {
	if g.kind == protocolConsumer {
		return g.consumer.empty() && !g.consumer.dead
	}
	if g.kind == protocolShare {
		return len(g.share.members) == 0 && !g.share.dead
	}
	if g.kind == protocolStreams {
		return g.streams.empty() && !g.streams.dead
	}
	return g.classic.state == stateEmpty
}

// tombstones delete the group's own records (not its offsets).
func (g *group) tombstones() []kv {
	if g.kind == protocolConsumer {
		return g.consumer.tombstones()
	}
	if g.kind == protocolShare {
		return g.share.tombstones()
	}
	if g.kind == protocolStreams {
		return g.streams.tombstones()
	}
	return []kv{{key: groupKey(g.id)}}
}

// stateName is the group's state as DescribeGroups and ListGroups name it.
func (g *group) stateName() string {
	if g.kind == protocolConsumer {
		return g.consumer.stateName()
	}
	if g.kind == protocolShare {
		return g.share.stateName()
	}
	if g.kind == protocolStreams {
		return g.streams.stateName()
	}
	return g.classic.state.String()
}

// protocolType is what ListGroups and DescribeGroups report as the group's
// protocol type ("consumer", "connect", or "" for a simple group).
func (g *group) protocolType() string {
	if g.kind == protocolConsumer {
		return "consumer"
	}
	if g.kind == protocolShare {
		return shareProtocolType
	}
	if g.kind == protocolStreams {
		return "streams"
	}
	return g.classic.protocolType
}

// convertible reports whether a classic group may become a consumer group:
// it has no members, as Kafka requires when online migration is not used.
func (g *classicGroup) convertible() bool {
	return g.state == stateEmpty && len(g.members) == 0
}

// persisted reports whether the classic group has a metadata record.
func (g *classicGroup) persisted() bool {
	return g.generation > 0 || g.protocolType != ""
}

// convertToConsumer turns an empty classic group into a consumer group,
// keeping its offsets, and returns the tombstone of its classic metadata
// to write with the consumer group's first records. The turn's undo turns
// it back.
func (g *group) convertToConsumer(s *step) []kv {
	old := g.classic
	g.kind, g.classic, g.consumer = protocolConsumer, newClassicGroup(g.id), newConsumerGroup(g.id)
	s.onUndo(func() { g.kind, g.classic = protocolClassic, old })
	if !old.persisted() {
		return nil
	}
	s.log.Info("converting empty classic group to a consumer group")
	return []kv{{key: groupKey(g.id)}}
}

// convertToClassic turns an empty consumer group into a classic group, for
// a JoinGroup, keeping its offsets, as Kafka does; its consumer group
// records get tombstones.
func (g *group) convertToClassic(s *step) {
	persisted, records := g.consumer.epoch > 0, g.consumer.tombstones()
	g.kind, g.consumer, g.classic = protocolClassic, newConsumerGroup(g.id), newClassicGroup(g.id)
	if persisted {
		s.log.Info("converting empty consumer group to a classic group")
		s.write(records, logStoreError(0))
	}
}

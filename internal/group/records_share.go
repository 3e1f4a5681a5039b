package group

import (
	"bytes"
	"slices"

	"github.com/twmb/franz-go/pkg/kbin"
)

// KIP-932's share group records in __consumer_offsets, in Apache Kafka
// 4.2's formats (its coordinator-key/value JSON schemas): keys as the
// consumer group ones (int16 type, group ID, member ID for per-member
// records), values version 0 with flexible fields.
const (
	// shareGroupPartitionMetadataKeyType held the subscribed topics'
	// metadata before Kafka 4.1 replaced it with MetadataHash; skipped on
	// load, never written.
	shareGroupPartitionMetadataKeyType      = 9
	shareGroupMemberMetadataKeyType         = 10 // a member's subscription
	shareGroupMetadataKeyType               = 11 // group epoch and metadata hash
	shareGroupTargetMetadataKeyType         = 12 // target assignment epoch
	shareGroupTargetMemberKeyType           = 13 // a member's target assignment
	shareGroupCurrentMemberKeyType          = 14 // a member's epochs and assignment
	shareGroupStatePartitionMetadataKeyType = 15 // the partitions whose share state is initialized
)

// shareMemberStateStable is the one member state share groups write
// (Kafka's MemberState.STABLE): nothing is revoked.
const shareMemberStateStable = 0

// shareGroupMetadataValue is ShareGroupMetadataValue v0: Epoch, then
// MetadataHash (a plain field, not tagged as in the consumer group record).
func shareGroupMetadataValue(epoch int32, hash int64) []byte {
	b := kbin.AppendInt16(nil, 0)
	b = kbin.AppendInt32(b, epoch)
	b = kbin.AppendInt64(b, hash)
	return kbin.AppendUvarint(b, 0)
}

func decodeShareGroupMetadataValue(value []byte) (epoch int32, hash int64, err error) {
	r, err := valueReader(value)
	if err != nil {
		return 0, 0, err
	}
	epoch, hash = r.Int32(), r.Int64()
	readTags(&r, nil)
	return epoch, hash, complete(&r)
}

// shareMemberValue is ShareGroupMemberMetadataValue v0.
type shareMemberValue struct {
	rackID           *string
	clientID         string
	clientHost       string
	subscribedTopics []string
}

func (v *shareMemberValue) encode() []byte {
	b := kbin.AppendInt16(nil, 0)
	b = kbin.AppendCompactNullableString(b, v.rackID)
	b = kbin.AppendCompactString(b, v.clientID)
	b = kbin.AppendCompactString(b, v.clientHost)
	b = kbin.AppendCompactArrayLen(b, len(v.subscribedTopics))
	for _, t := range v.subscribedTopics {
		b = kbin.AppendCompactString(b, t)
	}
	return kbin.AppendUvarint(b, 0)
}

func decodeShareMemberValue(value []byte) (*shareMemberValue, error) {
	r, err := valueReader(value)
	if err != nil {
		return nil, err
	}
	v := &shareMemberValue{rackID: r.CompactNullableString(), clientID: r.CompactString(), clientHost: r.CompactString()}
	if n := r.CompactArrayLen(); n > 0 {
		v.subscribedTopics = make([]string, 0, min(n, 1024))
		for i := int32(0); i < n && r.Ok(); i++ {
			v.subscribedTopics = append(v.subscribedTopics, r.CompactString())
		}
	}
	readTags(&r, nil)
	return v, complete(&r)
}

// shareCurrentValue is ShareGroupCurrentMemberAssignmentValue v0.
type shareCurrentValue struct {
	epoch, previousEpoch int32
	state                int8
	assigned             topicPartitions
}

func (v *shareCurrentValue) encode() []byte {
	b := kbin.AppendInt16(nil, 0)
	b = kbin.AppendInt32(b, v.epoch)
	b = kbin.AppendInt32(b, v.previousEpoch)
	b = kbin.AppendInt8(b, v.state)
	b = appendTopicPartitions(b, v.assigned)
	return kbin.AppendUvarint(b, 0)
}

func decodeShareCurrentValue(value []byte) (*shareCurrentValue, error) {
	r, err := valueReader(value)
	if err != nil {
		return nil, err
	}
	v := &shareCurrentValue{epoch: r.Int32(), previousEpoch: r.Int32(), state: r.Int8()}
	v.assigned = readTopicPartitions(&r)
	readTags(&r, nil)
	return v, complete(&r)
}

// shareStatePartitionValue is ShareGroupStatePartitionMetadataValue v0:
// InitializingTopics, InitializedTopics (TopicId, TopicName, Partitions,
// CreateTimestamp each) and DeletingTopics (TopicId, TopicName). Samsa
// initializes a partition in the same turn that records it (the share
// coordinator's state is created lazily), so it writes no initializing
// or deleting topics; those it reads are taken as initialized and as gone.
func shareStatePartitionValue(initialized map[[16]byte]initializedTopic) []byte {
	b := kbin.AppendInt16(nil, 0)
	b = kbin.AppendCompactArrayLen(b, 0) // InitializingTopics
	ids := make([][16]byte, 0, len(initialized))
	for id := range initialized {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b [16]byte) int { return bytes.Compare(a[:], b[:]) })
	b = kbin.AppendCompactArrayLen(b, len(ids))
	for _, id := range ids {
		t := initialized[id]
		b = kbin.AppendUuid(b, id)
		b = kbin.AppendCompactString(b, t.name)
		b = kbin.AppendCompactArrayLen(b, len(t.partitions))
		for _, p := range t.partitions {
			b = kbin.AppendInt32(b, p)
		}
		b = kbin.AppendInt64(b, t.createdMs)
		b = kbin.AppendUvarint(b, 0)
	}
	b = kbin.AppendCompactArrayLen(b, 0) // DeletingTopics
	return kbin.AppendUvarint(b, 0)
}

func decodeShareStatePartitionValue(value []byte) (map[[16]byte]initializedTopic, error) {
	r, err := valueReader(value)
	if err != nil {
		return nil, err
	}
	out := make(map[[16]byte]initializedTopic)
	readInfos := func() {
		n := r.CompactArrayLen()
		for i := int32(0); i < n && r.Ok(); i++ {
			id := r.Uuid()
			t := initializedTopic{name: r.CompactString()}
			np := r.CompactArrayLen()
			for j := int32(0); j < np && r.Ok(); j++ {
				t.partitions = append(t.partitions, r.Int32())
			}
			t.createdMs = r.Int64()
			readTags(&r, nil)
			if cur, ok := out[id]; ok {
				t.partitions = append(t.partitions, cur.partitions...)
			}
			slices.Sort(t.partitions)
			t.partitions = slices.Compact(t.partitions)
			out[id] = t
		}
	}
	readInfos() // InitializingTopics
	readInfos() // InitializedTopics
	n := r.CompactArrayLen()
	for i := int32(0); i < n && r.Ok(); i++ {
		delete(out, r.Uuid())
		r.CompactString()
		readTags(&r, nil)
	}
	readTags(&r, nil)
	return out, complete(&r)
}

// The records of a share group's changes.

func shareEpochRecord(groupID string, epoch int32, hash int64) kv {
	return kv{key: consumerKey(shareGroupMetadataKeyType, groupID), value: shareGroupMetadataValue(epoch, hash)}
}

func shareMemberRecord(groupID string, m *shareMember) kv {
	v := shareMemberValue{clientID: m.clientID, clientHost: m.clientHost, subscribedTopics: m.subscribedTopics}
	if m.rackID != "" {
		v.rackID = new(m.rackID)
	}
	return kv{key: consumerKey(shareGroupMemberMetadataKeyType, groupID, m.id), value: v.encode()}
}

func shareTargetMemberRecord(groupID, memberID string, target topicPartitions) kv {
	return kv{key: consumerKey(shareGroupTargetMemberKeyType, groupID, memberID), value: targetMemberValue(target)}
}

func shareTargetEpochRecord(groupID string, epoch int32) kv {
	return kv{key: consumerKey(shareGroupTargetMetadataKeyType, groupID), value: targetEpochValue(epoch)}
}

func shareCurrentRecord(groupID string, m *shareMember) kv {
	v := shareCurrentValue{epoch: m.epoch, previousEpoch: m.previousEpoch, state: shareMemberStateStable, assigned: m.assigned}
	return kv{key: consumerKey(shareGroupCurrentMemberKeyType, groupID, m.id), value: v.encode()}
}

func shareStatePartitionRecord(groupID string, initialized map[[16]byte]initializedTopic) kv {
	return kv{key: consumerKey(shareGroupStatePartitionMetadataKeyType, groupID), value: shareStatePartitionValue(initialized)}
}

// shareMemberTombstones delete a member's records, in the order Kafka
// writes them.
func shareMemberTombstones(groupID, memberID string) []kv {
	return []kv{
		{key: consumerKey(shareGroupCurrentMemberKeyType, groupID, memberID)},
		{key: consumerKey(shareGroupTargetMemberKeyType, groupID, memberID)},
		{key: consumerKey(shareGroupMemberMetadataKeyType, groupID, memberID)},
	}
}

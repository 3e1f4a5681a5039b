package group

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kbin"
)

// KIP-848's records in __consumer_offsets, in Apache Kafka's formats. kmsg
// has no types for them, so they are encoded here. A key is its int16 type
// (the "key version" older Kafka called it: 3 to 8 for consumer groups)
// then the group ID and, for per-member records, the member ID, as
// non-flexible strings. A value is an int16 version (0 for all of them)
// then flexible fields: compact strings and arrays, and a tagged-field
// section after each struct.
const (
	consumerGroupMetadataKeyType          = 3 // group epoch
	consumerGroupPartitionMetadataKeyType = 4 // subscribed topics' metadata; not written, see below
	consumerGroupMemberMetadataKeyType    = 5 // a member's subscription
	consumerGroupTargetMetadataKeyType    = 6 // target assignment epoch
	consumerGroupTargetMemberKeyType      = 7 // a member's target assignment
	consumerGroupCurrentMemberKeyType     = 8 // a member's epochs, state and current assignment
	// consumerGroupRegexKeyType is Kafka's record of a resolved regular
	// expression; not written (regexes are resolved again after a load)
	// and skipped on load.
	consumerGroupRegexKeyType = 16
)

// ConsumerGroupPartitionMetadata (key type 4) held the subscribed topics'
// partition counts in Kafka 3.7-4.0; Kafka 4.1 replaced it with
// ConsumerGroupMetadataValue.MetadataHash (KIP-1101), which is what this
// package keeps: a hash of the subscribed topics' IDs and partition counts
// whose change bumps the group epoch. Key 4 records are skipped on load and
// get a tombstone when a group is deleted, as Kafka writes them.

// errBadRecord marks a consumer group record that does not decode.
var errBadRecord = errors.New("group: undecodable consumer group record")

// consumerKey encodes a consumer group record key.
func consumerKey(keyType int16, groupID string, memberID ...string) []byte {
	b := kbin.AppendInt16(nil, keyType)
	b = kbin.AppendString(b, groupID)
	for _, id := range memberID {
		b = kbin.AppendString(b, id)
	}
	return b
}

// readConsumerKey decodes a key of keyType with withMember telling whether
// it names a member.
func readConsumerKey(key []byte, withMember bool) (groupID, memberID string, err error) {
	r := kbin.Reader{Src: key}
	r.Int16()
	groupID = r.String()
	if withMember {
		memberID = r.String()
	}
	if err := r.Complete(); err != nil || len(r.Src) != 0 {
		return "", "", fmt.Errorf("%w: key", errBadRecord)
	}
	return groupID, memberID, nil
}

// groupEpochValue is ConsumerGroupMetadataValue v0.
type groupEpochValue struct {
	epoch int32
	// metadataHash is the tagged MetadataHash (tag 0, Kafka 4.1+).
	metadataHash int64
}

func (v groupEpochValue) encode() []byte {
	b := kbin.AppendInt16(nil, 0)
	b = kbin.AppendInt32(b, v.epoch)
	if v.metadataHash == 0 {
		return kbin.AppendUvarint(b, 0)
	}
	b = kbin.AppendUvarint(b, 1) // one tagged field
	b = kbin.AppendUvarint(b, 0) // tag 0
	b = kbin.AppendUvarint(b, 8) // its size
	return kbin.AppendInt64(b, v.metadataHash)
}

func decodeGroupEpochValue(value []byte) (groupEpochValue, error) {
	var v groupEpochValue
	r, err := valueReader(value)
	if err != nil {
		return v, err
	}
	v.epoch = r.Int32()
	readTags(&r, func(tag uint32, data []byte) {
		if tag == 0 && len(data) == 8 {
			v.metadataHash = int64(binary.BigEndian.Uint64(data))
		}
	})
	return v, complete(&r)
}

// memberMetadataValue is ConsumerGroupMemberMetadataValue v0. The tagged
// ClassicMemberMetadata (members of a group converted from the classic
// protocol) is not written, and skipped when read.
type memberMetadataValue struct {
	instanceID       *string
	rackID           *string
	clientID         string
	clientHost       string
	subscribedTopics []string
	regex            *string
	rebalanceTimeout int32
	serverAssignor   *string
}

func (v *memberMetadataValue) encode() []byte {
	b := kbin.AppendInt16(nil, 0)
	b = kbin.AppendCompactNullableString(b, v.instanceID)
	b = kbin.AppendCompactNullableString(b, v.rackID)
	b = kbin.AppendCompactString(b, v.clientID)
	b = kbin.AppendCompactString(b, v.clientHost)
	b = kbin.AppendCompactArrayLen(b, len(v.subscribedTopics))
	for _, t := range v.subscribedTopics {
		b = kbin.AppendCompactString(b, t)
	}
	b = kbin.AppendCompactNullableString(b, v.regex)
	b = kbin.AppendInt32(b, v.rebalanceTimeout)
	b = kbin.AppendCompactNullableString(b, v.serverAssignor)
	return kbin.AppendUvarint(b, 0)
}

func decodeMemberMetadataValue(value []byte) (*memberMetadataValue, error) {
	r, err := valueReader(value)
	if err != nil {
		return nil, err
	}
	v := &memberMetadataValue{
		instanceID: r.CompactNullableString(),
		rackID:     r.CompactNullableString(),
		clientID:   r.CompactString(),
		clientHost: r.CompactString(),
	}
	if n := r.CompactArrayLen(); n > 0 {
		v.subscribedTopics = make([]string, 0, n)
		for range n {
			v.subscribedTopics = append(v.subscribedTopics, r.CompactString())
		}
	}
	v.regex = r.CompactNullableString()
	v.rebalanceTimeout = r.Int32()
	v.serverAssignor = r.CompactNullableString()
	readTags(&r, nil)
	return v, complete(&r)
}

// targetEpochValue is ConsumerGroupTargetAssignmentMetadataValue v0.
func targetEpochValue(epoch int32) []byte {
	b := kbin.AppendInt16(nil, 0)
	b = kbin.AppendInt32(b, epoch)
	return kbin.AppendUvarint(b, 0)
}

func decodeTargetEpochValue(value []byte) (int32, error) {
	r, err := valueReader(value)
	if err != nil {
		return 0, err
	}
	epoch := r.Int32()
	readTags(&r, nil)
	return epoch, complete(&r)
}

// targetMemberValue is ConsumerGroupTargetAssignmentMemberValue v0.
func targetMemberValue(target topicPartitions) []byte {
	b := kbin.AppendInt16(nil, 0)
	b = appendTopicPartitions(b, target)
	return kbin.AppendUvarint(b, 0)
}

func decodeTargetMemberValue(value []byte) (topicPartitions, error) {
	r, err := valueReader(value)
	if err != nil {
		return nil, err
	}
	target := readTopicPartitions(&r)
	readTags(&r, nil)
	return target, complete(&r)
}

// currentAssignmentValue is ConsumerGroupCurrentMemberAssignmentValue v0
// as Kafka 3.8+ writes it. Kafka 4.2's tagged AssignmentEpochs (KIP-1251)
// is not written and skipped when read.
type currentAssignmentValue struct {
	epoch, previousEpoch int32
	state                memberState
	assigned             topicPartitions
	pendingRevocation    topicPartitions
}

func (v *currentAssignmentValue) encode() []byte {
	b := kbin.AppendInt16(nil, 0)
	b = kbin.AppendInt32(b, v.epoch)
	b = kbin.AppendInt32(b, v.previousEpoch)
	b = kbin.AppendInt8(b, int8(v.state))
	b = appendTopicPartitions(b, v.assigned)
	b = appendTopicPartitions(b, v.pendingRevocation)
	return kbin.AppendUvarint(b, 0)
}

func decodeCurrentAssignmentValue(value []byte) (*currentAssignmentValue, error) {
	r, err := valueReader(value)
	if err != nil {
		return nil, err
	}
	v := &currentAssignmentValue{epoch: r.Int32(), previousEpoch: r.Int32(), state: memberState(r.Int8())}
	v.assigned = readTopicPartitions(&r)
	v.pendingRevocation = readTopicPartitions(&r)
	readTags(&r, nil)
	return v, complete(&r)
}

// appendTopicPartitions encodes a set as Kafka's []TopicPartitions: per
// topic, its ID, its partitions and an empty tagged-field section.
func appendTopicPartitions(b []byte, tps topicPartitions) []byte {
	b = kbin.AppendCompactArrayLen(b, len(tps))
	for _, t := range tps.topics() {
		b = kbin.AppendUuid(b, t)
		b = kbin.AppendCompactArrayLen(b, len(tps[t]))
		for _, p := range tps[t] {
			b = kbin.AppendInt32(b, p)
		}
		b = kbin.AppendUvarint(b, 0)
	}
	return b
}

func readTopicPartitions(r *kbin.Reader) topicPartitions {
	n := r.CompactArrayLen()
	m := make(map[[16]byte][]int32, max(n, 0))
	for i := int32(0); i < n && r.Ok(); i++ {
		t := r.Uuid()
		np := r.CompactArrayLen()
		for j := int32(0); j < np && r.Ok(); j++ {
			m[t] = append(m[t], r.Int32())
		}
		readTags(r, nil)
	}
	return newTopicPartitions(m)
}

// valueReader checks a value's version and returns a reader after it.
func valueReader(value []byte) (kbin.Reader, error) {
	r := kbin.Reader{Src: value}
	if version := r.Int16(); !r.Ok() || version != 0 {
		return r, fmt.Errorf("%w: value version", errBadRecord)
	}
	return r, nil
}

// readTags reads a tagged-field section, handing each field to fn (which
// may be nil). It stops at the first sign of a short buffer, so a length
// claiming billions of fields costs nothing.
func readTags(r *kbin.Reader, fn func(tag uint32, data []byte)) {
	n := r.Uvarint()
	for i := uint32(0); i < n && r.Ok(); i++ {
		tag := r.Uvarint()
		size := r.Uvarint()
		if !r.Ok() || int64(size) > int64(len(r.Src)) {
			r.Span(len(r.Src) + 1) // mark the reader bad
			return
		}
		data := r.Span(int(size))
		if fn != nil {
			fn(tag, data)
		}
	}
}

func complete(r *kbin.Reader) error {
	if err := r.Complete(); err != nil {
		return fmt.Errorf("%w: %v", errBadRecord, err)
	}
	if len(r.Src) != 0 {
		return fmt.Errorf("%w: %d trailing bytes", errBadRecord, len(r.Src))
	}
	return nil
}

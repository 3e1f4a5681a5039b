package group

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/samsa-io/samsa/internal/model"
	"github.com/samsa-io/samsa/internal/record"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Record versions of __consumer_offsets, as Apache Kafka writes them. A key
// starts with its int16 version, which also says what the record is:
// 0 and 1 are offset commits, 2 is classic group metadata, and 3 and up are
// KIP-848's consumer group records (not written by this package yet).
const (
	offsetCommitKeyVersion  = 1
	groupMetadataKeyVersion = 2
	// offsetCommitValueVersion is the KIP-320 value (with leader epoch).
	// A commit with its own retention (OffsetCommit v2-v4) is written as
	// v1, the one value with an expire timestamp, as Kafka does.
	offsetCommitValueVersion       = 3
	offsetCommitValueExpireVersion = 1
	// groupMetadataValueVersion is the KIP-345 value (with instance IDs).
	groupMetadataValueVersion = 3
)

func offsetKey(groupID string, tp model.TopicPartition) []byte {
	k := kmsg.OffsetCommitKey{Version: offsetCommitKeyVersion, Group: groupID, Topic: tp.Topic, Partition: tp.Partition}
	return k.AppendTo(nil)
}

func offsetValue(o committedOffset) []byte {
	v := kmsg.NewOffsetCommitValue()
	v.Version = offsetCommitValueVersion
	if o.expireTimestamp >= 0 {
		v.Version = offsetCommitValueExpireVersion
		v.ExpireTimestamp = o.expireTimestamp
	}
	v.Offset = o.offset
	v.LeaderEpoch = o.leaderEpoch
	v.Metadata = o.metadata
	v.CommitTimestamp = o.commitTimestamp
	return v.AppendTo(nil)
}

func groupKey(groupID string) []byte {
	k := kmsg.GroupMetadataKey{Version: groupMetadataKeyVersion, Group: groupID}
	return k.AppendTo(nil)
}

// metadataRecords is the group metadata record of the current generation,
// with assignments (by member ID) or, when nil, the members' current ones.
// Each member's subscription is its metadata for the chosen protocol, all
// that a reloaded group needs.
func (g *classicGroup) metadataRecords(assignments map[string][]byte) []kv {
	v := kmsg.NewGroupMetadataValue()
	v.Version = groupMetadataValueVersion
	v.ProtocolType = g.protocolType
	v.Generation = g.generation
	if g.protocolName != "" {
		v.Protocol = new(g.protocolName)
	}
	if g.leader != "" {
		v.Leader = new(g.leader)
	}
	v.CurrentStateTimestamp = g.stateTimestamp.UnixMilli()
	for _, m := range g.sortedMembers() {
		mv := kmsg.NewGroupMetadataValueMember()
		mv.MemberID = m.id
		if m.static() {
			mv.InstanceID = new(m.instanceID)
		}
		mv.ClientID = m.clientID
		mv.ClientHost = m.clientHost
		mv.RebalanceTimeoutMillis = int32(m.rebalanceTimeout.Milliseconds())
		mv.SessionTimeoutMillis = int32(m.sessionTimeout.Milliseconds())
		mv.Subscription = m.metadataFor(g.protocolName)
		mv.Assignment = m.assignment
		if assignments != nil {
			mv.Assignment = assignments[m.id]
		}
		if mv.Subscription == nil {
			mv.Subscription = []byte{}
		}
		if mv.Assignment == nil {
			mv.Assignment = []byte{}
		}
		v.Members = append(v.Members, mv)
	}
	return []kv{{key: groupKey(g.groupID), value: v.AppendTo(nil)}}
}

// buildBatch encodes records as one batch compressed with codec
// (offsets.topic.compression.codec). The offsets are
// 0..n-1 as a producer would send them: the log assigns the real ones. With
// a producer the batch is transactional, with the producer's ID and epoch
// and no base sequence: the log checks only the epoch of a coordinator's
// batches (producers must send a sequence, so the two cannot be confused).
func buildBatch(records []kv, producer *txnProducer, now time.Time, codec record.Codec) ([]byte, error) {
	b := record.Batch{
		Codec:         codec,
		ProducerID:    record.NoProducerID,
		ProducerEpoch: record.NoProducerEpoch,
		BaseSequence:  record.NoSequence,
		Records:       make([]record.Record, len(records)),
	}
	if producer != nil {
		b.Transactional = true
		b.ProducerID, b.ProducerEpoch = producer.id, producer.epoch
	}
	ts := now.UnixMilli()
	for i, r := range records {
		b.Records[i] = record.Record{Offset: int64(i), Timestamp: ts, Key: r.key, Value: r.value}
	}
	out, err := b.AppendTo(nil)
	if err != nil {
		return nil, fmt.Errorf("group: build batch: %w", err)
	}
	return out, nil
}

// keyVersion reads the version that starts every __consumer_offsets key.
func keyVersion(key []byte) (int16, bool) {
	if len(key) < 2 {
		return 0, false
	}
	return int16(binary.BigEndian.Uint16(key)), true
}

package group

import (
	"bytes"
	"context"
	"slices"
	"time"

	"github.com/samsa-io/samsa/internal/model"
	"github.com/samsa-io/samsa/internal/record"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// maxLoadBatchBytes bounds the decompressed size of one batch while
// loading; batches are compressed when offsets.topic.compression.codec is
// set, here or by the Kafka that wrote the topic.
const maxLoadBatchBytes = 64 << 20

// replay rebuilds the groups of a partition from its records. The last
// value of each key wins and a tombstone deletes it, so the result is the
// same whether or not the topic has been compacted. The offsets of a
// transactional batch stay pending until the producer's marker: a COMMIT
// makes them committed, an ABORT drops them, and without one they are
// still pending when the load ends, for the transaction coordinator to
// complete.
func (c *Coordinator) replay(ctx context.Context, partition int32) ([]*group, error) {
	r := newReplay()
	err := c.deps.Log.ReadAll(ctx, partition, func(batches []byte) error {
		return record.ForEachBatch(batches, func(batch []byte, h record.Header) error {
			return record.Iterate(batch, maxLoadBatchBytes, func(rec *record.Record) bool {
				switch {
				case h.IsControl() && h.IsTransactional():
					r.applyMarker(h.ProducerID, rec.Key, rec.Value)
				case h.IsControl():
					r.skipped++
				case h.IsTransactional():
					r.applyTxnOffset(h.ProducerID, rec.Key, rec.Value)
				default:
					r.apply(rec.Key, rec.Value)
				}
				return true
			})
		})
	})
	if err != nil {
		return nil, err
	}
	if r.skipped > 0 || r.bad > 0 {
		c.log.Warn("records of __consumer_offsets not loaded", "partition", partition,
			"other_kinds", r.skipped, "undecodable", r.bad)
	}
	return r.groups(partition, c.clock.Now(), &c.cfg), nil
}

// replayState accumulates the latest value of each key of a partition.
type replayState struct {
	offsets map[string]map[model.TopicPartition]committedOffset
	// pending holds the offsets of open transactions, by producer ID and
	// group; seq numbers their records like those of the committed ones.
	pending  map[int64]map[string]map[model.TopicPartition]pendingOffset
	metadata map[string]*kmsg.GroupMetadataValue
	consumer map[string]*consumerReplay
	share    map[string]*shareReplay
	streams  map[string]*streamsReplay
	// seq numbers the records applied; classicSeq is the number of each
	// group's last classic metadata record. A group ID with both classic
	// and consumer group records (converted from one protocol to the
	// other, and the tombstones of the old one lost) is the kind written
	// last.
	seq        int
	classicSeq map[string]int
	// skipped counts records of kinds this package does not read (share
	// and streams groups, transactional commits); bad counts records that
	// do not decode. Neither stops a load: one bad record must not make
	// every group of the partition unreachable.
	skipped, bad int
}

// consumerReplay is what a partition holds of a consumer group.
type consumerReplay struct {
	hasEpoch        bool
	epoch           int32
	metadataHash    int64
	assignmentEpoch int32
	members         map[string]*memberMetadataValue
	targets         map[string]topicPartitions
	current         map[string]*currentAssignmentValue
	// seq is the number of the group's last epoch record.
	seq int
}

func newReplay() *replayState {
	return &replayState{
		offsets:    make(map[string]map[model.TopicPartition]committedOffset),
		pending:    make(map[int64]map[string]map[model.TopicPartition]pendingOffset),
		metadata:   make(map[string]*kmsg.GroupMetadataValue),
		consumer:   make(map[string]*consumerReplay),
		share:      make(map[string]*shareReplay),
		classicSeq: make(map[string]int),
	}
}

// apply folds one record into the state. key and value are only valid
// during the call: everything kept is copied.
func (r *replayState) apply(key, value []byte) {
	r.seq++
	version, ok := keyVersion(key)
	switch {
	case !ok:
		r.bad++
	case version == 0 || version == 1:
		r.applyOffset(key, value)
	case version == groupMetadataKeyVersion:
		r.applyMetadata(key, value)
	case version == consumerGroupPartitionMetadataKeyType, version == consumerGroupRegexKeyType:
		// Kafka's records of what a load recomputes: the subscribed
		// topics' metadata and resolved regular expressions.
	case version >= consumerGroupMetadataKeyType && version <= consumerGroupCurrentMemberKeyType:
		if err := r.applyConsumer(version, key, value); err != nil {
			r.bad++
		}
	case version == shareGroupPartitionMetadataKeyType:
		// Kafka 4.0's share group topic metadata, replaced by MetadataHash.
	case version >= shareGroupMemberMetadataKeyType && version <= shareGroupStatePartitionMetadataKeyType:
		if err := r.applyShare(version, key, value); err != nil {
			r.bad++
		}
	case version == streamsGroupPartitionMetadataKeyType:
	case version >= streamsGroupMetadataKeyType && version <= streamsGroupTopologyKeyType:
		if err := r.applyStreams(version, key, value); err != nil {
			r.bad++
		}
	default:
		r.skipped++
	}
}

// applyConsumer folds a consumer group record into the state.
func (r *replayState) applyConsumer(keyType int16, key, value []byte) error {
	perMember := keyType == consumerGroupMemberMetadataKeyType || keyType == consumerGroupTargetMemberKeyType ||
		keyType == consumerGroupCurrentMemberKeyType
	groupID, memberID, err := readConsumerKey(key, perMember)
	if err != nil {
		return err
	}
	cr := r.consumer[groupID]
	if cr == nil {
		if value == nil {
			return nil
		}
		cr = &consumerReplay{
			members: make(map[string]*memberMetadataValue),
			targets: make(map[string]topicPartitions),
			current: make(map[string]*currentAssignmentValue),
		}
		r.consumer[groupID] = cr
	}
	switch keyType {
	case consumerGroupMetadataKeyType:
		if value == nil {
			delete(r.consumer, groupID)
			return nil
		}
		v, err := decodeGroupEpochValue(value)
		if err != nil {
			return err
		}
		cr.hasEpoch, cr.epoch, cr.metadataHash, cr.seq = true, v.epoch, v.metadataHash, r.seq
	case consumerGroupTargetMetadataKeyType:
		if value == nil {
			cr.assignmentEpoch = 0
			return nil
		}
		epoch, err := decodeTargetEpochValue(value)
		if err != nil {
			return err
		}
		cr.assignmentEpoch = epoch
	case consumerGroupMemberMetadataKeyType:
		if value == nil {
			delete(cr.members, memberID)
			return nil
		}
		v, err := decodeMemberMetadataValue(value)
		if err != nil {
			return err
		}
		cr.members[memberID] = v
	case consumerGroupTargetMemberKeyType:
		if value == nil {
			delete(cr.targets, memberID)
			return nil
		}
		v, err := decodeTargetMemberValue(value)
		if err != nil {
			return err
		}
		cr.targets[memberID] = v
	case consumerGroupCurrentMemberKeyType:
		if value == nil {
			delete(cr.current, memberID)
			return nil
		}
		v, err := decodeCurrentAssignmentValue(value)
		if err != nil {
			return err
		}
		cr.current[memberID] = v
	}
	return nil
}

func (r *replayState) applyOffset(key, value []byte) {
	groupID, tp, o, ok := r.readOffset(key, value)
	if !ok {
		return
	}
	if value == nil {
		delete(r.offsets[groupID], tp)
		r.beatPending(groupID, tp, -1)
		return
	}
	offsets := r.offsets[groupID]
	if offsets == nil {
		offsets = make(map[model.TopicPartition]committedOffset)
		r.offsets[groupID] = offsets
	}
	offsets[tp] = o
	r.beatPending(groupID, tp, r.seq)
}

// readOffset decodes an offset commit record, counting it bad if it does
// not decode; o is unset for a tombstone.
func (r *replayState) readOffset(key, value []byte) (groupID string, tp model.TopicPartition, o committedOffset, ok bool) {
	var k kmsg.OffsetCommitKey
	if err := k.ReadFrom(key); err != nil {
		r.bad++
		return "", tp, o, false
	}
	tp = model.TopicPartition{Topic: k.Topic, Partition: k.Partition}
	if value == nil {
		return k.Group, tp, o, true
	}
	var v kmsg.OffsetCommitValue
	if err := v.ReadFrom(value); err != nil {
		r.bad++
		return "", tp, o, false
	}
	o = committedOffset{
		offset:          v.Offset,
		leaderEpoch:     -1,
		metadata:        v.Metadata,
		commitTimestamp: v.CommitTimestamp,
		expireTimestamp: -1,
	}
	if v.Version >= 3 {
		o.leaderEpoch = v.LeaderEpoch
	}
	if v.Version == 1 {
		o.expireTimestamp = v.ExpireTimestamp
	}
	return k.Group, tp, o, true
}

// beatPending marks the pending offsets of a group's partition as beaten
// by a record committed later (seq), or, for a tombstone (seq -1), drops
// them, as Kafka does.
func (r *replayState) beatPending(groupID string, tp model.TopicPartition, seq int) {
	for producerID, groups := range r.pending {
		offsets := groups[groupID]
		po, ok := offsets[tp]
		switch {
		case !ok:
		case seq < 0:
			delete(offsets, tp)
			if len(offsets) == 0 {
				delete(groups, groupID)
			}
			if len(groups) == 0 {
				delete(r.pending, producerID)
			}
		case po.seq < int64(seq):
			po.beaten = true
			offsets[tp] = po
		}
	}
}

// applyTxnOffset folds in a record of a transactional batch: an offset
// commit pending for the producer. Kafka writes nothing else in a
// transaction; anything else is skipped.
func (r *replayState) applyTxnOffset(producerID int64, key, value []byte) {
	r.seq++
	if version, ok := keyVersion(key); !ok || version > 1 || value == nil {
		r.skipped++
		return
	}
	groupID, tp, o, ok := r.readOffset(key, value)
	if !ok {
		return
	}
	groups := r.pending[producerID]
	if groups == nil {
		groups = make(map[string]map[model.TopicPartition]pendingOffset)
		r.pending[producerID] = groups
	}
	offsets := groups[groupID]
	if offsets == nil {
		offsets = make(map[model.TopicPartition]pendingOffset)
		groups[groupID] = offsets
	}
	offsets[tp] = pendingOffset{committedOffset: o, seq: int64(r.seq)}
}

// applyMarker folds in a transaction marker: the producer's pending
// offsets are committed (those no later commit beat) or dropped.
func (r *replayState) applyMarker(producerID int64, key, value []byte) {
	commit, _, err := record.ParseEndTxnMarker(key, value)
	if err != nil {
		r.bad++
		return
	}
	groups := r.pending[producerID]
	delete(r.pending, producerID)
	if !commit {
		return
	}
	for groupID, offsets := range groups {
		for _, tp := range sortedPartitions(offsets) {
			po := offsets[tp]
			if po.beaten {
				continue
			}
			if r.offsets[groupID] == nil {
				r.offsets[groupID] = make(map[model.TopicPartition]committedOffset)
			}
			r.offsets[groupID][tp] = po.committedOffset
			r.beatPending(groupID, tp, int(po.seq))
		}
	}
}

func (r *replayState) applyMetadata(key, value []byte) {
	var k kmsg.GroupMetadataKey
	if err := k.ReadFrom(key); err != nil {
		r.bad++
		return
	}
	if value == nil {
		delete(r.metadata, k.Group)
		delete(r.classicSeq, k.Group)
		return
	}
	r.classicSeq[k.Group] = r.seq
	v := new(kmsg.GroupMetadataValue)
	if err := v.ReadFrom(value); err != nil {
		r.bad++
		return
	}
	for i := range v.Members {
		m := &v.Members[i]
		m.Subscription = bytes.Clone(m.Subscription)
		m.Assignment = bytes.Clone(m.Assignment)
	}
	r.metadata[k.Group] = v
}

// groups builds the loaded groups. Members of a loaded group have to
// heartbeat within their session timeout from now, as after a coordinator
// failover in Kafka.
func (r *replayState) groups(partition int32, now time.Time, cfg *Config) []*group {
	var out []*group
	built := make(map[string]bool)
	pending := make(map[string]map[int64]map[model.TopicPartition]pendingOffset)
	for producerID, groups := range r.pending {
		for id, offsets := range groups {
			if pending[id] == nil {
				pending[id] = make(map[int64]map[model.TopicPartition]pendingOffset)
			}
			pending[id][producerID] = offsets
		}
	}
	build := func(id string) *group {
		g := newGroup(id, partition)
		for tp, o := range r.offsets[id] {
			g.offsets[tp] = o
		}
		for producerID, offsets := range pending[id] {
			g.pending[producerID] = offsets
		}
		g.offsetSeq = int64(r.seq)
		built[id] = true
		out = append(out, g)
		return g
	}
	consumerWins := func(id string) bool {
		cr := r.consumer[id]
		return cr != nil && cr.hasEpoch && cr.seq > r.classicSeq[id]
	}
	for id, v := range r.metadata {
		if !consumerWins(id) && !r.streamsWins(id) {
			build(id).classic.load(v, now)
		}
	}
	for id, cr := range r.consumer {
		if consumerWins(id) {
			g := build(id)
			g.kind = protocolConsumer
			g.consumer.load(cr, now, cfg)
		}
	}
	r.buildShareGroups(built, build, now, cfg)
	for id, sr := range r.streams {
		if r.streamsWins(id) && !consumerWins(id) {
			g := build(id)
			g.kind = protocolStreams
			g.streams.load(sr, now, cfg)
		}
	}
	for id, offsets := range r.offsets {
		if !built[id] && len(offsets) > 0 {
			build(id)
		}
	}
	for id := range pending {
		if !built[id] {
			build(id)
		}
	}
	return out
}

// load restores a consumer group: its epochs, members, targets and the
// members' current assignments. A member whose current assignment record is
// missing starts from epoch 0 with nothing, and is reconciled at its next
// heartbeat.
func (g *consumerGroup) load(cr *consumerReplay, now time.Time, cfg *Config) {
	g.epoch, g.metadataHash, g.assignmentEpoch = cr.epoch, cr.metadataHash, cr.assignmentEpoch
	for _, id := range sortedKeys(cr.members) {
		mv := cr.members[id]
		m := &consumerMember{
			id:               id,
			clientID:         mv.clientID,
			clientHost:       mv.clientHost,
			subscribedTopics: slices.Compact(slices.Sorted(slices.Values(mv.subscribedTopics))),
			rebalanceTimeout: time.Duration(max(mv.rebalanceTimeout, 0)) * time.Millisecond,
			state:            memberStable,
			sessionDeadline:  now.Add(cfg.ConsumerSessionTimeout),
		}
		m.instanceID, m.rackID = stringOf(mv.instanceID), stringOf(mv.rackID)
		m.regex, m.serverAssignor = stringOf(mv.regex), stringOf(mv.serverAssignor)
		if cur := cr.current[id]; cur != nil {
			m.epoch, m.previousEpoch, m.state = cur.epoch, cur.previousEpoch, cur.state
			m.assigned, m.pendingRevocation = cur.assigned, cur.pendingRevocation
			switch m.state {
			case memberStable, memberUnreleased:
			case memberUnrevoked:
				m.revocationDeadline = now.Add(m.rebalanceTimeout)
			default:
				m.state = memberUnknown
			}
		}
		g.replaceMember(nil, m)
		if t, ok := cr.targets[id]; ok {
			g.target[id] = t
		}
	}
}

// load restores a classic group from its metadata record: Stable with its
// members and their assignments, or Empty.
func (g *classicGroup) load(v *kmsg.GroupMetadataValue, now time.Time) {
	g.protocolType = v.ProtocolType
	g.generation = v.Generation
	if v.Protocol != nil {
		g.protocolName = *v.Protocol
	}
	if v.CurrentStateTimestamp > 0 {
		g.stateTimestamp = time.UnixMilli(v.CurrentStateTimestamp)
	}
	for i := range v.Members {
		mv := &v.Members[i]
		rebalance := mv.RebalanceTimeoutMillis
		if rebalance < 0 {
			// A v0 value: members then had one timeout for both.
			rebalance = mv.SessionTimeoutMillis
		}
		m := &member{
			id:               mv.MemberID,
			clientID:         mv.ClientID,
			clientHost:       mv.ClientHost,
			sessionTimeout:   time.Duration(mv.SessionTimeoutMillis) * time.Millisecond,
			rebalanceTimeout: time.Duration(rebalance) * time.Millisecond,
			protocolType:     v.ProtocolType,
			protocols:        []protocol{{name: g.protocolName, metadata: mv.Subscription}},
			assignment:       mv.Assignment,
			lastHeartbeat:    now,
		}
		if mv.InstanceID != nil {
			m.instanceID = *mv.InstanceID
		}
		g.add(m)
	}
	if len(g.members) == 0 {
		g.state = stateEmpty
		g.protocolName = ""
		return
	}
	g.state = stateStable
	if v.Leader != nil && g.members[*v.Leader] != nil {
		g.leader = *v.Leader
	}
	g.subscribedTopics = g.computeSubscribedTopics()
}

// stringOf is a nullable string's value, "" for null.
func stringOf(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

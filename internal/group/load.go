package group

import (
	"bytes"
	"context"
	"time"

	"github.com/samsa-io/samsa/internal/model"
	"github.com/samsa-io/samsa/internal/record"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// maxLoadBatchBytes bounds the decompressed size of one batch while
// loading. This package writes uncompressed batches; a topic written by
// Kafka with offsets.topic.compression.codec set may hold compressed ones.
const maxLoadBatchBytes = 64 << 20

// replay rebuilds the groups of a partition from its records. The last
// value of each key wins and a tombstone deletes it, so the result is the
// same whether or not the topic has been compacted.
func (c *Coordinator) replay(ctx context.Context, partition int32) ([]*group, error) {
	r := newReplay()
	err := c.deps.Log.ReadAll(ctx, partition, func(batches []byte) error {
		return record.ForEachBatch(batches, func(batch []byte, h record.Header) error {
			if h.IsControl() {
				return nil
			}
			if h.IsTransactional() {
				// TxnOffsetCommit is not served yet, so no transactional
				// commit of ours can be here; one written by Kafka would
				// need the transaction's outcome, which is not tracked.
				r.skipped += int(h.NumRecords)
				return nil
			}
			return record.Iterate(batch, maxLoadBatchBytes, func(rec *record.Record) bool {
				r.apply(rec.Key, rec.Value)
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
	return r.groups(partition, c.clock.Now()), nil
}

// replayState accumulates the latest value of each key of a partition.
type replayState struct {
	offsets  map[string]map[model.TopicPartition]committedOffset
	metadata map[string]*kmsg.GroupMetadataValue
	// skipped counts records of kinds this package does not read yet
	// (KIP-848 consumer groups, share groups, transactional commits);
	// bad counts records that do not decode. Neither stops a load: one
	// bad record must not make every group of the partition unreachable.
	skipped, bad int
}

func newReplay() *replayState {
	return &replayState{
		offsets:  make(map[string]map[model.TopicPartition]committedOffset),
		metadata: make(map[string]*kmsg.GroupMetadataValue),
	}
}

// apply folds one record into the state. key and value are only valid
// during the call: everything kept is copied.
func (r *replayState) apply(key, value []byte) {
	version, ok := keyVersion(key)
	switch {
	case !ok:
		r.bad++
	case version == 0 || version == 1:
		r.applyOffset(key, value)
	case version == groupMetadataKeyVersion:
		r.applyMetadata(key, value)
	default:
		r.skipped++
	}
}

func (r *replayState) applyOffset(key, value []byte) {
	var k kmsg.OffsetCommitKey
	if err := k.ReadFrom(key); err != nil {
		r.bad++
		return
	}
	tp := model.TopicPartition{Topic: k.Topic, Partition: k.Partition}
	if value == nil {
		delete(r.offsets[k.Group], tp)
		return
	}
	var v kmsg.OffsetCommitValue
	if err := v.ReadFrom(value); err != nil {
		r.bad++
		return
	}
	o := committedOffset{
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
	offsets := r.offsets[k.Group]
	if offsets == nil {
		offsets = make(map[model.TopicPartition]committedOffset)
		r.offsets[k.Group] = offsets
	}
	offsets[tp] = o
}

func (r *replayState) applyMetadata(key, value []byte) {
	var k kmsg.GroupMetadataKey
	if err := k.ReadFrom(key); err != nil {
		r.bad++
		return
	}
	if value == nil {
		delete(r.metadata, k.Group)
		return
	}
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
func (r *replayState) groups(partition int32, now time.Time) []*group {
	var out []*group
	build := func(id string) *group {
		g := newGroup(id, partition)
		out = append(out, g)
		return g
	}
	for id, v := range r.metadata {
		g := build(id)
		g.classic.load(v, now)
		for tp, o := range r.offsets[id] {
			g.offsets[tp] = o
		}
	}
	for id, offsets := range r.offsets {
		if _, ok := r.metadata[id]; ok || len(offsets) == 0 {
			continue
		}
		g := build(id)
		for tp, o := range offsets {
			g.offsets[tp] = o
		}
	}
	return out
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

package group

import (
	"context"
	"strings"

	"github.com/samsa-io/samsa/internal/coordlog"
	"github.com/samsa-io/samsa/internal/model"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// txnProducer is the producer a transactional batch is written for.
type txnProducer struct {
	id    int64
	epoch int16
}

// pendingOffset is an offset a transaction committed and that waits for
// the transaction's outcome.
type pendingOffset struct {
	committedOffset
	// seq is the group's offsetSeq of the record: when the transaction
	// commits, the offset wins only over a committed one written before it,
	// as Kafka compares the records' log offsets.
	seq int64
	// beaten is set once an offset of the partition written later was
	// committed (a plain commit, or another transaction's): committing
	// this one then changes nothing.
	beaten bool
}

// txnKey names the transactions of a producer in one __consumer_offsets
// partition, what a transaction marker completes.
type txnKey struct {
	partition  int32
	producerID int64
}

// txnCompletion is a CompleteTransaction call kept for a loading partition.
type txnCompletion struct {
	producerID int64
	commit     bool
}

// TxnOffsetCommit handles TxnOffsetCommit v0-v5 (KIP-98): the offsets a
// transactional producer commits as part of its transaction. They are
// written to the group's __consumer_offsets partition as one transactional
// batch with the request's producer ID and epoch, and stay pending, not
// visible to OffsetFetch, until the broker reports the transaction's marker
// through CompleteTransaction. The answer comes once the batch is durable.
//
// The group is validated as for OffsetCommit (Kafka's
// validateTransactionalOffsetCommit): a request without generation (-1)
// creates a missing group; one with a generation for a group that does not
// exist is ILLEGAL_GENERATION. Classic groups: a request with no member ID,
// instance ID or generation (v0-v2, which have none) is accepted whatever
// the group's state, and REBALANCE_IN_PROGRESS is never answered. Consumer
// (KIP-848) groups: the generation is the member epoch; a wrong one answers
// ILLEGAL_GENERATION (the code transactional clients know), not
// STALE_MEMBER_EPOCH. Per partition: UNKNOWN_TOPIC_OR_PARTITION,
// OFFSET_METADATA_TOO_LARGE.
//
//   - v2: leader epoch (KIP-320).
//   - v3: generation, member ID and instance ID (KIP-447), checked as above.
//   - v4: flexible; v5 (KIP-890): the partition leader verifies the
//     transaction. Here the broker must: this package does not ask the
//     transaction coordinator whether the producer added the group.
func (c *Coordinator) TxnOffsetCommit(ctx context.Context, req *kmsg.TxnOffsetCommitRequest) *kmsg.TxnOffsetCommitResponse {
	resp := req.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewTxnOffsetCommitResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
			rp.Partition = p.Partition
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	if code := c.txnCommit(req, resp); code != 0 {
		for i := range resp.Topics {
			for j := range resp.Topics[i].Partitions {
				resp.Topics[i].Partitions[j].ErrorCode = code
			}
		}
	}
	return resp
}

// txnCommit fills in resp's per-partition codes, or returns the code for
// all.
func (c *Coordinator) txnCommit(req *kmsg.TxnOffsetCommitRequest, resp *kmsg.TxnOffsetCommitResponse) int16 {
	if req.Group == "" {
		return codeInvalidGroupID
	}
	generation, memberID, instanceID := int32(-1), "", ""
	if req.Version >= 3 {
		generation, memberID = req.Generation, req.MemberID
		if req.InstanceID != nil {
			instanceID = *req.InstanceID
		}
	}
	g, code := c.lockGroup(req.Group, generation < 0)
	if g == nil {
		if code == 0 {
			code = codeIllegalGeneration
		}
		return code
	}
	s := c.newStep(g)
	code = g.validateCommit(memberID, instanceID, generation, req.Version, true)
	if code == codeStaleMemberEpoch {
		code = codeIllegalGeneration
	}
	if code == 0 {
		c.txnCommitLocked(g, s, req, resp)
	}
	c.finishTurn(g, s)
	return code
}

// txnCommitLocked writes the offsets of a validated TxnOffsetCommit and,
// once they are durable, keeps them pending for the producer.
func (c *Coordinator) txnCommitLocked(g *group, s *step, req *kmsg.TxnOffsetCommitRequest, resp *kmsg.TxnOffsetCommitResponse) {
	type accepted struct {
		tp   model.TopicPartition
		o    committedOffset
		code *int16
	}
	var accepts []accepted
	var records []kv
	now := s.now.UnixMilli()
	for ti, t := range req.Topics {
		for pi, p := range t.Partitions {
			rp := &resp.Topics[ti].Partitions[pi]
			switch {
			case !c.topicExists(t.Topic, p.Partition):
				rp.ErrorCode = codeUnknownTopicOrPartition
			case p.Metadata != nil && len(*p.Metadata) > c.cfg.OffsetMetadataMaxBytes:
				rp.ErrorCode = codeOffsetMetadataTooLarge
			default:
				o := committedOffset{offset: p.Offset, leaderEpoch: -1, commitTimestamp: now, expireTimestamp: -1}
				if req.Version >= 2 {
					o.leaderEpoch = p.LeaderEpoch
				}
				if p.Metadata != nil {
					o.metadata = strings.Clone(*p.Metadata)
				}
				tp := model.TopicPartition{Topic: strings.Clone(t.Topic), Partition: p.Partition}
				accepts = append(accepts, accepted{tp: tp, o: o, code: &rp.ErrorCode})
				records = append(records, kv{key: offsetKey(g.id, tp), value: offsetValue(o)})
			}
		}
	}
	if len(records) == 0 {
		return
	}
	producer := txnProducer{id: req.ProducerID, epoch: req.ProducerEpoch}
	s.writeTxn(records, producer, func(s *step, err error) {
		if err != nil {
			code := commitErrorCode(err)
			s.log.Warn("storing transactional offsets failed", "producer_id", producer.id, "err", err)
			for _, a := range accepts {
				*a.code = code
			}
			return
		}
		for _, a := range accepts {
			g.addPending(producer.id, a.tp, a.o)
		}
		s.stats.offsetCommits.Add(int64(len(accepts)))
		c.indexTxn(g, producer.id)
	})
}

// CompleteTransaction applies a transaction's outcome to the offsets it
// committed in groups of a __consumer_offsets partition: on commit they
// become the committed offsets (unless a later commit of the partition
// already replaced them), on abort they are dropped. The broker calls it
// once the COMMIT or ABORT marker for producerID is durable in that
// partition, and before it reports the marker written to the transaction
// coordinator, so the producer's next transaction cannot start first. The
// producer epoch is not checked: a marker completes whatever the producer
// ID left open, as in Kafka. Calls for a partition not served are ignored;
// for a loading partition they are applied when the load ends.
func (c *Coordinator) CompleteTransaction(partition int32, producerID int64, producerEpoch int16, commit bool) {
	key := txnKey{partition: partition, producerID: producerID}
	c.mu.Lock()
	if st, ok := c.mu.partitions[partition]; ok && st == coordlog.Loading {
		c.mu.late[partition] = append(c.mu.late[partition], txnCompletion{producerID: producerID, commit: commit})
		c.mu.Unlock()
		return
	}
	groups := c.mu.txns[key]
	delete(c.mu.txns, key)
	c.mu.Unlock()
	for g := range groups {
		g.mu.Lock()
		if g.removed {
			g.mu.Unlock()
			continue
		}
		s := c.newStep(g)
		if n := g.completeTxn(producerID, commit); n > 0 {
			s.log.Debug("transaction completed", "producer_id", producerID, "producer_epoch", producerEpoch,
				"commit", commit, "offsets", n)
		}
		c.finishTurn(g, s)
	}
}

// indexTxn records that g has offsets pending for producerID.
func (c *Coordinator) indexTxn(g *group, producerID int64) {
	key := txnKey{partition: g.partition, producerID: producerID}
	c.mu.Lock()
	defer c.mu.Unlock()
	groups := c.mu.txns[key]
	if groups == nil {
		groups = make(map[*group]struct{})
		c.mu.txns[key] = groups
	}
	groups[g] = struct{}{}
}

// indexLoadedLocked finishes a partition's load: it applies the
// completions reported during the load to the loaded groups, which no one
// else can see yet, and indexes the transactions still open.
func (c *Coordinator) indexLoadedLocked(partition int32, groups []*group) {
	late := c.mu.late[partition]
	delete(c.mu.late, partition)
	for _, g := range groups {
		for _, tc := range late {
			g.completeTxn(tc.producerID, tc.commit)
		}
		for producerID := range g.pending {
			key := txnKey{partition: partition, producerID: producerID}
			if c.mu.txns[key] == nil {
				c.mu.txns[key] = make(map[*group]struct{})
			}
			c.mu.txns[key][g] = struct{}{}
		}
	}
}

// dropTxnsLocked forgets a partition's open transactions and late
// completions, when it is unloaded or loaded again.
func (c *Coordinator) dropTxnsLocked(partition int32) {
	for key := range c.mu.txns {
		if key.partition == partition {
			delete(c.mu.txns, key)
		}
	}
	delete(c.mu.late, partition)
}

// addPending keeps a transaction's offset, the newest record of its
// partition.
func (g *group) addPending(producerID int64, tp model.TopicPartition, o committedOffset) {
	g.offsetSeq++
	offsets := g.pending[producerID]
	if offsets == nil {
		offsets = make(map[model.TopicPartition]pendingOffset)
		g.pending[producerID] = offsets
	}
	offsets[tp] = pendingOffset{committedOffset: o, seq: g.offsetSeq}
}

// commitOffset makes o the committed offset of tp, the newest record of its
// partition: the pending offsets of tp, all written before, lose to it.
func (g *group) commitOffset(tp model.TopicPartition, o committedOffset) {
	g.offsetSeq++
	g.offsets[tp] = o
	g.beatPending(tp, g.offsetSeq)
}

// beatPending marks the pending offsets of tp written before seq as
// beaten.
func (g *group) beatPending(tp model.TopicPartition, seq int64) {
	for _, offsets := range g.pending {
		if po, ok := offsets[tp]; ok && po.seq < seq {
			po.beaten = true
			offsets[tp] = po
		}
	}
}

// dropPending forgets the pending offsets of tp, deleted by a tombstone.
func (g *group) dropPending(tp model.TopicPartition) {
	for producerID, offsets := range g.pending {
		delete(offsets, tp)
		if len(offsets) == 0 {
			delete(g.pending, producerID)
		}
	}
}

// completeTxn applies a transaction's outcome and returns how many pending
// offsets it had.
func (g *group) completeTxn(producerID int64, commit bool) int {
	offsets := g.pending[producerID]
	delete(g.pending, producerID)
	if !commit {
		return len(offsets)
	}
	for _, tp := range sortedPartitions(offsets) {
		po := offsets[tp]
		if po.beaten {
			continue
		}
		g.offsets[tp] = po.committedOffset
		g.beatPending(tp, po.seq)
	}
	return len(offsets)
}

// hasPending reports whether a transaction has an offset of tp pending.
func (g *group) hasPending(tp model.TopicPartition) bool {
	for _, offsets := range g.pending {
		if _, ok := offsets[tp]; ok {
			return true
		}
	}
	return false
}

// pendingPartitions lists the partitions with pending offsets.
func (g *group) pendingPartitions() []model.TopicPartition {
	set := make(map[model.TopicPartition]struct{})
	for _, offsets := range g.pending {
		for tp := range offsets {
			set[tp] = struct{}{}
		}
	}
	return sortedPartitions(set)
}

package group

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ShareStates is the share coordinator's persisted state of share groups'
// partitions (__share_group_state), as the group coordinator's admin APIs
// need it. The broker provides it; it may block on I/O, and is never called
// with a group's lock held except by AlterShareGroupOffsets and
// DeleteShareGroupOffsets, which hold it so no member joins meanwhile.
type ShareStates interface {
	// Summary reads the persisted start offset (-1 when none) and the
	// count of delivery-complete in-flight offsets of each partition.
	Summary(ctx context.Context, group string, topic [16]byte, partitions []int32) (map[int32]ShareSummary, error)
	// Initialize sets a partition's state to start at offset
	// (AlterShareGroupOffsets).
	Initialize(ctx context.Context, group string, topic [16]byte, partition int32, offset int64) error
	// Delete deletes the partitions' state (DeleteShareGroupOffsets).
	Delete(ctx context.Context, group string, topic [16]byte, partitions []int32) error
}

// ShareSummary is one partition's share state as Summary reads it; Err,
// when set, is answered for the partition (a kerr error as its code).
type ShareSummary struct {
	StartOffset      int64
	LeaderEpoch      int32
	DeliveryComplete int64
	Err              error
}

// errNoShareStates is answered per partition when the broker gave the
// coordinator no ShareStates.
const errNoShareStates = "share group state is not available on this broker"

// shareErrorCode maps a ShareStates error to the code it answers with: the
// kerr error's, else UNKNOWN_SERVER_ERROR.
func shareErrorCode(err error) (int16, *string) {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Code, nil
	}
	return codeUnknownServerError, new(err.Error())
}

// lockShareGroup is the group named id with its lock held, if it is a
// share group; else the code (and message) to answer.
func (c *Coordinator) lockShareGroup(id string) (*group, int16, *string) {
	g, code := c.lockGroup(id, false)
	switch {
	case g == nil && code != 0:
		return nil, code, nil
	case g == nil:
		return nil, codeGroupIDNotFound, new("group " + id + " not found")
	case g.kind != protocolShare || g.dead():
		g.mu.Unlock()
		return nil, codeGroupIDNotFound, new("group " + id + " is not a share group")
	}
	return g, 0, nil
}

// shareTopicLookup is a topic asked about: its ID and partition count,
// ok false when it does not exist.
func (c *Coordinator) shareTopic(name string) (id [16]byte, partitions int32, ok bool) {
	if c.deps.TopicPartitions == nil {
		return id, 0, false
	}
	id, partitions, ok = c.deps.TopicPartitions(name)
	return id, partitions, ok && partitions > 0
}

// DescribeShareGroupOffsets handles DescribeShareGroupOffsets v0-v1
// (KIP-932): each partition's share-partition start offset and leader
// epoch, as the share coordinator has them (ShareStates.Summary), for the
// topics asked about or, when Topics is null, every topic the group has
// initialized. A partition the group never initialized answers start offset
// -1. v1 (KIP-1226) adds the lag: the high watermark less the start offset
// and the delivery-complete records above it, -1 when either is unknown. A
// group that does not exist or is not a share group answers
// GROUP_ID_NOT_FOUND; a topic that does not exist UNKNOWN_TOPIC_OR_PARTITION
// on each partition.
func (c *Coordinator) DescribeShareGroupOffsets(ctx context.Context, req *kmsg.DescribeShareGroupOffsetsRequest) *kmsg.DescribeShareGroupOffsetsResponse {
	resp := req.ResponseKind().(*kmsg.DescribeShareGroupOffsetsResponse)
	for _, rg := range req.Groups {
		resp.Groups = append(resp.Groups, c.describeShareOffsets(ctx, req.Version, &rg))
	}
	return resp
}

// shareOffsetsTopic is one topic of a DescribeShareGroupOffsets answer in
// the making: the partitions to ask the share coordinator about.
type shareOffsetsTopic struct {
	name        string
	id          [16]byte
	exists      bool
	partitions  []int32
	initialized map[int32]bool
}

func (c *Coordinator) describeShareOffsets(ctx context.Context, version int16, rg *kmsg.DescribeShareGroupOffsetsRequestGroup) kmsg.DescribeShareGroupOffsetsResponseGroup {
	out := kmsg.NewDescribeShareGroupOffsetsResponseGroup()
	out.GroupID = rg.GroupID
	out.Topics = []kmsg.DescribeShareGroupOffsetsResponseGroupTopic{}
	g, code, msg := c.lockShareGroup(rg.GroupID)
	if g == nil {
		out.ErrorCode, out.ErrorMessage = code, msg
		return out
	}
	// Copy what is needed and let go of the group before any I/O.
	var topics []shareOffsetsTopic
	if rg.Topics == nil {
		for _, id := range topicPartitions(g.share.initializedPartitions()).topics() {
			it := g.share.initialized[id]
			name := it.name
			if c.deps.TopicName != nil {
				if n, ok := c.deps.TopicName(id); ok {
					name = n
				}
			}
			t := shareOffsetsTopic{name: name, id: id, exists: true, partitions: slices.Clone(it.partitions), initialized: map[int32]bool{}}
			for _, p := range it.partitions {
				t.initialized[p] = true
			}
			topics = append(topics, t)
		}
	} else {
		for _, rt := range rg.Topics {
			t := shareOffsetsTopic{name: strings.Clone(rt.Topic), partitions: slices.Clone(rt.Partitions), initialized: map[int32]bool{}}
			t.id, _, t.exists = c.shareTopic(rt.Topic)
			for _, p := range g.share.initialized[t.id].partitions {
				t.initialized[p] = t.exists
			}
			topics = append(topics, t)
		}
	}
	g.mu.Unlock()
	for _, t := range topics {
		out.Topics = append(out.Topics, c.describeShareTopic(ctx, version, rg.GroupID, t))
	}
	return out
}

func (c *Coordinator) describeShareTopic(ctx context.Context, version int16, group string, t shareOffsetsTopic) kmsg.DescribeShareGroupOffsetsResponseGroupTopic {
	ot := kmsg.NewDescribeShareGroupOffsetsResponseGroupTopic()
	ot.Topic, ot.TopicID = t.name, t.id
	var ask []int32
	for _, p := range t.partitions {
		if t.initialized[p] {
			ask = append(ask, p)
		}
	}
	var summaries map[int32]ShareSummary
	var askErr error
	switch {
	case len(ask) == 0:
	case c.deps.ShareStates == nil:
		askErr = errors.New(errNoShareStates)
	default:
		summaries, askErr = c.deps.ShareStates.Summary(ctx, group, t.id, ask)
	}
	for _, p := range t.partitions {
		op := kmsg.NewDescribeShareGroupOffsetsResponseGroupTopicPartition()
		op.Partition, op.StartOffset = p, -1
		sum, ok := summaries[p]
		switch {
		case !t.exists:
			op.ErrorCode = codeUnknownTopicOrPartition
			op.ErrorMessage = new("topic " + t.name + " does not exist")
		case !t.initialized[p]:
		case askErr != nil:
			op.ErrorCode, op.ErrorMessage = shareErrorCode(askErr)
		case !ok:
		case sum.Err != nil:
			op.ErrorCode, op.ErrorMessage = shareErrorCode(sum.Err)
		default:
			op.StartOffset, op.LeaderEpoch = sum.StartOffset, sum.LeaderEpoch
			if version >= 1 {
				op.Lag = c.shareLag(t.name, p, sum)
			}
		}
		ot.Partitions = append(ot.Partitions, op)
	}
	return ot
}

// shareLag is KIP-1226's lag: the records from the start offset to the high
// watermark not yet delivered for good.
func (c *Coordinator) shareLag(topic string, partition int32, sum ShareSummary) int64 {
	if sum.StartOffset < 0 || c.deps.HighWatermark == nil {
		return -1
	}
	hw, ok := c.deps.HighWatermark(topic, partition)
	if !ok {
		return -1
	}
	return max(hw-sum.StartOffset-sum.DeliveryComplete, 0)
}

// AlterShareGroupOffsets handles AlterShareGroupOffsets v0 (KIP-932): each
// partition's share state starts over at the given offset
// (ShareStates.Initialize), and the partition counts as initialized by the
// group. The group must exist, be a share group (GROUP_ID_NOT_FOUND) and be
// empty (NON_EMPTY_GROUP), as in Kafka; those errors are answered at the top
// and on every partition. A partition that does not exist answers
// UNKNOWN_TOPIC_OR_PARTITION.
func (c *Coordinator) AlterShareGroupOffsets(ctx context.Context, req *kmsg.AlterShareGroupOffsetsRequest) *kmsg.AlterShareGroupOffsetsResponse {
	resp := req.ResponseKind().(*kmsg.AlterShareGroupOffsetsResponse)
	resp.Topics = []kmsg.AlterShareGroupOffsetsResponseTopic{}
	for _, rt := range req.Topics {
		ot := kmsg.NewAlterShareGroupOffsetsResponseTopic()
		ot.Topic = rt.Topic
		ot.TopicID, _, _ = c.shareTopic(rt.Topic)
		for _, rp := range rt.Partitions {
			op := kmsg.NewAlterShareGroupOffsetsResponseTopicPartition()
			op.Partition = rp.Partition
			ot.Partitions = append(ot.Partitions, op)
		}
		resp.Topics = append(resp.Topics, ot)
	}
	g, code, msg := c.lockShareGroup(req.GroupID)
	if g == nil {
		setAlterShareError(resp, code, msg)
		return resp
	}
	if !g.isEmpty() {
		g.mu.Unlock()
		setAlterShareError(resp, codeNonEmptyGroup, new("the share group "+req.GroupID+" is not empty"))
		return resp
	}
	s := c.newStep(g)
	done := make(map[[16]byte][]int32)
	names := make(map[[16]byte]string)
	for ti, rt := range req.Topics {
		id, n, exists := c.shareTopic(rt.Topic)
		for pi, rp := range rt.Partitions {
			op := &resp.Topics[ti].Partitions[pi]
			switch {
			case !exists || rp.Partition < 0 || rp.Partition >= n:
				op.ErrorCode = codeUnknownTopicOrPartition
				op.ErrorMessage = new("partition " + rt.Topic + " does not exist")
			case c.deps.ShareStates == nil:
				op.ErrorCode, op.ErrorMessage = codeUnknownServerError, new(errNoShareStates)
			default:
				if err := c.deps.ShareStates.Initialize(ctx, req.GroupID, id, rp.Partition, rp.StartOffset); err != nil {
					op.ErrorCode, op.ErrorMessage = shareErrorCode(err)
					continue
				}
				done[id] = append(done[id], rp.Partition)
				names[id] = rt.Topic
			}
		}
	}
	name := func(id [16]byte) string { return names[id] }
	if init := g.share.withInitialized(newTopicPartitions(done), name, s.now.UnixMilli()); init != nil {
		g.share.setInitialized(s, init)
		s.write([]kv{shareStatePartitionRecord(g.id, init)}, func(s *step, err error) {
			if err != nil {
				// The share state was set; only the group's record of it
				// failed, which a later alter or assignment writes again.
				s.log.Warn("storing initialized share partitions failed", "err", err)
				s.rollback()
				setAlterShareError(resp, consumerStoreErrorCode(err), new("storing the group's records failed"))
			}
		})
	}
	c.finishTurn(g, s)
	return resp
}

func setAlterShareError(resp *kmsg.AlterShareGroupOffsetsResponse, code int16, msg *string) {
	resp.ErrorCode, resp.ErrorMessage = code, msg
	for ti := range resp.Topics {
		for pi := range resp.Topics[ti].Partitions {
			p := &resp.Topics[ti].Partitions[pi]
			p.ErrorCode, p.ErrorMessage = code, msg
		}
	}
}

// DeleteShareGroupOffsets handles DeleteShareGroupOffsets v0 (KIP-932): the
// share state of each topic's partitions the group initialized is deleted
// (ShareStates.Delete) and the topic no longer counts as initialized; a
// topic the group never initialized has nothing to delete and answers no
// error. The group must exist, be a share group (GROUP_ID_NOT_FOUND) and be
// empty (NON_EMPTY_GROUP), answered at the top as in Kafka. A topic that
// does not exist answers UNKNOWN_TOPIC_OR_PARTITION.
func (c *Coordinator) DeleteShareGroupOffsets(ctx context.Context, req *kmsg.DeleteShareGroupOffsetsRequest) *kmsg.DeleteShareGroupOffsetsResponse {
	resp := req.ResponseKind().(*kmsg.DeleteShareGroupOffsetsResponse)
	resp.Topics = []kmsg.DeleteShareGroupOffsetsResponseTopic{}
	g, code, msg := c.lockShareGroup(req.GroupID)
	if g == nil {
		resp.ErrorCode, resp.ErrorMessage = code, msg
		return resp
	}
	if !g.isEmpty() {
		g.mu.Unlock()
		resp.ErrorCode, resp.ErrorMessage = codeNonEmptyGroup, new("the share group "+req.GroupID+" is not empty")
		return resp
	}
	s := c.newStep(g)
	var deleted [][16]byte
	for _, rt := range req.Topics {
		ot := kmsg.NewDeleteShareGroupOffsetsResponseTopic()
		ot.Topic = rt.Topic
		id, _, exists := c.shareTopic(rt.Topic)
		ot.TopicID = id
		it, initialized := g.share.initialized[id]
		switch {
		case !exists:
			ot.ErrorCode, ot.ErrorMessage = codeUnknownTopicOrPartition, new("topic "+rt.Topic+" does not exist")
		case !initialized || slices.Contains(deleted, id):
		case c.deps.ShareStates == nil:
			ot.ErrorCode, ot.ErrorMessage = codeUnknownServerError, new(errNoShareStates)
		default:
			if err := c.deps.ShareStates.Delete(ctx, req.GroupID, id, slices.Clone(it.partitions)); err != nil {
				ot.ErrorCode, ot.ErrorMessage = shareErrorCode(err)
				break
			}
			deleted = append(deleted, id)
		}
		resp.Topics = append(resp.Topics, ot)
	}
	if len(deleted) > 0 {
		init := make(map[[16]byte]initializedTopic, len(g.share.initialized))
		for id, t := range g.share.initialized {
			if !slices.Contains(deleted, id) {
				init[id] = t
			}
		}
		g.share.setInitialized(s, init)
		s.write([]kv{shareStatePartitionRecord(g.id, init)}, func(s *step, err error) {
			if err != nil {
				s.log.Warn("storing deleted share partitions failed", "err", err)
				s.rollback()
				resp.ErrorCode, resp.ErrorMessage = consumerStoreErrorCode(err), new("storing the group's records failed")
			}
		})
	}
	c.finishTurn(g, s)
	return resp
}

// deleteShareState deletes the share state of the partitions a share group
// initialized, ahead of DeleteGroups' tombstones; g's lock is held. It
// returns the code to answer, 0 when done.
func (c *Coordinator) deleteShareState(g *group) int16 {
	if g.kind != protocolShare || len(g.share.initialized) == 0 || c.deps.DeleteShareState == nil {
		return 0
	}
	ctx, cancel := context.WithTimeout(c.tasks.Context(), c.cfg.CommitTimeout)
	defer cancel()
	if err := c.deps.DeleteShareState(ctx, g.id, g.share.initializedPartitions()); err != nil {
		c.log.Warn("deleting share group state failed", "group", g.id, "err", err)
		code, _ := shareErrorCode(err)
		return code
	}
	return 0
}

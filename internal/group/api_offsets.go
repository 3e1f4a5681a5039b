package group

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/samsa-io/samsa/internal/model"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// OffsetCommit handles OffsetCommit v0-v10 and returns once the accepted
// offsets are durable in __consumer_offsets.
//
// A commit with generation -1 and no member ID is a "simple" commit, from a
// consumer that assigns partitions itself or from an admin tool: accepted
// only while the group has no members, and it creates the group if needed.
// A member's commit must carry the current generation and member ID
// (ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID), and is
// refused with REBALANCE_IN_PROGRESS between join and sync. Each partition
// is checked on its own: UNKNOWN_TOPIC_OR_PARTITION, and
// OFFSET_METADATA_TOO_LARGE past offset.metadata.max.bytes.
//
//   - v1: generation and member ID; v1's per-partition timestamp is ignored.
//   - v2-v4: a retention time of the commit's own (KIP-211 then dropped it).
//   - v6: leader epoch (KIP-320). v7: instance ID (KIP-345).
//   - v9: GROUP_ID_NOT_FOUND instead of ILLEGAL_GENERATION for a member
//     commit to a group that does not exist (KIP-848). The generation of
//     a commit to a consumer (KIP-848) group is the member epoch, checked
//     against the member's (STALE_MEMBER_EPOCH); its members must use v9+
//     (UNSUPPORTED_VERSION).
//   - v10: topics by ID, translated with Deps.TopicName.
func (c *Coordinator) OffsetCommit(ctx context.Context, req *kmsg.OffsetCommitRequest) *kmsg.OffsetCommitResponse {
	resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewOffsetCommitResponseTopic()
		rt.Topic, rt.TopicID = t.Topic, t.TopicID
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetCommitResponseTopicPartition()
			rp.Partition = p.Partition
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	if code := c.commit(req, resp); code != 0 {
		// A group-level failure applies to the partitions that exist;
		// unknown ones answer UNKNOWN_TOPIC_OR_PARTITION, as Kafka's
		// request handler answers them before the coordinator.
		for i, t := range req.Topics {
			name, known := c.topicName(req.Version, t.Topic, t.TopicID)
			for j, p := range t.Partitions {
				rp := &resp.Topics[i].Partitions[j]
				if rp.ErrorCode != 0 {
					continue
				}
				rp.ErrorCode = code
				switch {
				case !known && req.Version >= 10:
					rp.ErrorCode = codeUnknownTopicID
				case !known || !c.topicExists(name, p.Partition):
					rp.ErrorCode = codeUnknownTopicOrPartition
				}
			}
		}
	}
	return resp
}

// commit fills in resp's per-partition codes, or returns the code for all.
// An empty group ID is a group like any other here, as in Kafka.
func (c *Coordinator) commit(req *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse) int16 {
	g, code := c.lockGroup(req.Group, req.Generation < 0)
	if g == nil {
		if code == 0 {
			code = codeIllegalGeneration
			if req.Version >= 9 {
				code = codeGroupIDNotFound
			}
		}
		return code
	}
	s := c.newStep(g)
	code = c.commitLocked(g, s, req, resp)
	c.finishTurn(g, s)
	return code
}

// commitLocked validates a commit and writes the offsets it accepts; the
// write's outcome lands in resp when finishTurn runs it.
func (c *Coordinator) commitLocked(g *group, s *step, req *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse) int16 {
	instanceID := ""
	if req.InstanceID != nil {
		instanceID = *req.InstanceID
	}
	if code := g.validateCommit(req.MemberID, instanceID, req.Generation, req.Version, false); code != 0 {
		return code
	}
	now := s.now.UnixMilli()
	expire := int64(-1)
	if req.Version >= 2 && req.Version <= 4 && req.RetentionTimeMillis >= 0 {
		expire = now + req.RetentionTimeMillis
	}
	type accepted struct {
		tp   model.TopicPartition
		o    committedOffset
		code *int16
	}
	var accepts []accepted
	var records []kv
	for ti, t := range req.Topics {
		rt := &resp.Topics[ti]
		name, ok := c.topicName(req.Version, t.Topic, t.TopicID)
		for pi, p := range t.Partitions {
			rp := &rt.Partitions[pi]
			switch {
			case !ok:
				rp.ErrorCode = codeUnknownTopicID
			case !c.topicExists(name, p.Partition):
				rp.ErrorCode = codeUnknownTopicOrPartition
			case p.Metadata != nil && len(*p.Metadata) > c.cfg.OffsetMetadataMaxBytes:
				rp.ErrorCode = codeOffsetMetadataTooLarge
			default:
				o := committedOffset{
					offset:          p.Offset,
					leaderEpoch:     leaderEpoch(req.Version, p.LeaderEpoch),
					commitTimestamp: now,
					expireTimestamp: expire,
				}
				if p.Metadata != nil {
					o.metadata = strings.Clone(*p.Metadata)
				}
				tp := model.TopicPartition{Topic: strings.Clone(name), Partition: p.Partition}
				accepts = append(accepts, accepted{tp: tp, o: o, code: &rp.ErrorCode})
				records = append(records, kv{key: offsetKey(g.id, tp), value: offsetValue(o)})
			}
		}
	}
	if len(records) == 0 {
		return 0
	}
	s.write(records, func(s *step, err error) {
		if err != nil {
			code := commitErrorCode(err)
			s.log.Warn("storing offsets failed", "err", err)
			for _, a := range accepts {
				*a.code = code
			}
			return
		}
		for _, a := range accepts {
			g.commitOffset(a.tp, a.o)
		}
		s.stats.offsetCommits.Add(int64(len(accepts)))
	})
	return 0
}

// leaderEpoch is a commit's leader epoch: -1 (unknown) before v6, which
// had none.
func leaderEpoch(version int16, epoch int32) int32 {
	if version < 6 {
		return -1
	}
	return epoch
}

// validateCommit applies the group protocol's rules to a commit, txn for
// a TxnOffsetCommit.
func (g *group) validateCommit(memberID, instanceID string, generation int32, version int16, txn bool) int16 {
	if g.kind == protocolConsumer {
		return g.consumer.validateCommit(memberID, generation, version, txn)
	}
	if g.kind == protocolShare {
		return codeGroupIDNotFound // share groups keep no committed offsets
	}
	if g.kind == protocolStreams {
		return g.streams.validateCommit(memberID, generation, version, txn)
	}
	return g.classic.validateCommit(memberID, instanceID, generation, txn)
}

// validateCommit is Kafka's rule for commits to a consumer group: a commit
// without a member epoch (-1, an admin tool or a consumer assigning
// partitions itself) only while the group has no members; else a current
// member, at its current member epoch (STALE_MEMBER_EPOCH), with
// OffsetCommit v9+ (the version that knows member epochs). A
// TxnOffsetCommit (txn) has no such version.
func (g *consumerGroup) validateCommit(memberID string, epoch int32, version int16, txn bool) int16 {
	if g.dead {
		return codeCoordinatorNotAvailable
	}
	if epoch < 0 && len(g.members) == 0 {
		return 0
	}
	m := g.members[memberID]
	switch {
	case m == nil:
		return codeUnknownMemberID
	case version < 9 && !txn:
		return codeUnsupportedVersion
	case epoch != m.epoch:
		return codeStaleMemberEpoch
	}
	return 0
}

// validateFetch is Kafka's rule for an OffsetFetch v9+ that names a member
// of a consumer group: a current member at its current epoch. A fetch
// without member ID and epoch (an admin tool) is always served; classic
// groups ignore both.
func (g *group) validateFetch(memberID *string, epoch int32) int16 {
	if g.kind == protocolStreams {
		return g.streams.validateFetch(memberID, epoch)
	}
	if g.kind != protocolConsumer || memberID == nil && epoch < 0 {
		return 0
	}
	var m *consumerMember
	if memberID != nil {
		m = g.consumer.members[*memberID]
	}
	switch {
	case m == nil:
		return codeUnknownMemberID
	case epoch != m.epoch:
		return codeStaleMemberEpoch
	}
	return 0
}

// validateCommit is Kafka's rule for commits to a classic group. A
// TxnOffsetCommit (txn) without member and generation (v0-v2, which have
// neither) is accepted from anyone, and is not refused between join and
// sync, as in Kafka.
func (g *classicGroup) validateCommit(memberID, instanceID string, generation int32, txn bool) int16 {
	if g.state == stateDead {
		return codeCoordinatorNotAvailable
	}
	if generation < 0 && g.state == stateEmpty {
		return 0 // a simple commit
	}
	if generation >= 0 || memberID != "" || instanceID != "" {
		if code := g.validateMember(memberID, instanceID); code != 0 {
			return code
		}
		if generation != g.generation {
			return codeIllegalGeneration
		}
	} else if !txn && g.state != stateEmpty {
		// A commit without member or generation would race the members.
		return codeUnknownMemberID
	}
	if !txn && g.state == stateCompletingRebalance {
		// The member knows the new generation but not yet its partitions:
		// it should sync first. (During PreparingRebalance the old
		// generation may still commit what it consumed, which is what
		// eager consumers do before rejoining.)
		return codeRebalanceInProgress
	}
	return 0
}

// topicName is the topic a request names: by name before v10, by ID from
// v10 (false if the ID is unknown).
func (c *Coordinator) topicName(version int16, name string, id [16]byte) (string, bool) {
	if version < 10 {
		return name, true
	}
	if c.deps.TopicName == nil {
		return "", false
	}
	return c.deps.TopicName(id)
}

func (c *Coordinator) topicExists(topic string, partition int32) bool {
	if c.deps.TopicExists == nil {
		return true
	}
	return c.deps.TopicExists(topic, partition)
}

// fetchTopic is one topic of an OffsetFetch, by name.
type fetchTopic struct {
	name       string
	id         [16]byte
	unknownID  bool
	partitions []int32
}

// fetchedPartition is one partition of an OffsetFetch answer.
type fetchedPartition struct {
	partition   int32
	offset      int64
	leaderEpoch int32
	metadata    string
	code        int16
}

type fetchedTopic struct {
	name       string
	id         [16]byte
	partitions []fetchedPartition
}

// OffsetFetch handles OffsetFetch v0-v10: one group up to v7, several from
// v8. A group that does not exist answers with no offsets and no error, as
// Apache Kafka does: each requested partition has offset -1, and a request
// for all topics (null topics, v2+) gets none. A partition without a commit
// is offset -1 too.
//
//   - v2: null topics for all; a group-level error code.
//   - v5: leader epoch. v7: requireStable (KIP-447): a partition with
//     transactional offsets pending answers UNSTABLE_OFFSET_COMMIT.
//   - v9: member ID and epoch, checked for KIP-848 groups (UNKNOWN_MEMBER_ID,
//     STALE_MEMBER_EPOCH); ignored for classic groups.
//   - v10: topics by ID.
func (c *Coordinator) OffsetFetch(ctx context.Context, req *kmsg.OffsetFetchRequest) *kmsg.OffsetFetchResponse {
	resp := req.ResponseKind().(*kmsg.OffsetFetchResponse)
	if req.Version >= 8 {
		for _, rg := range req.Groups {
			resp.Groups = append(resp.Groups, c.fetchGroup(req.Version, &rg, req.RequireStable))
		}
		return resp
	}
	var topics []fetchTopic
	if req.Topics != nil || req.Version < 2 {
		topics = make([]fetchTopic, 0, len(req.Topics))
		for _, t := range req.Topics {
			topics = append(topics, fetchTopic{name: t.Topic, partitions: t.Partitions})
		}
	}
	code, fetched := c.fetchOffsets(req.Group, topics, nil, -1, req.RequireStable)
	if code != 0 && req.Version >= 2 {
		resp.ErrorCode = code
		return resp
	}
	if code != 0 {
		// v0 and v1 have no group-level error: every partition carries it.
		fetched = missingOffsets(topics, code)
	}
	for _, ft := range fetched {
		rt := kmsg.NewOffsetFetchResponseTopic()
		rt.Topic = ft.name
		for _, fp := range ft.partitions {
			rp := kmsg.NewOffsetFetchResponseTopicPartition()
			rp.Partition, rp.Offset, rp.LeaderEpoch = fp.partition, fp.offset, fp.leaderEpoch
			rp.Metadata, rp.ErrorCode = new(fp.metadata), fp.code
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// fetchGroup answers one group of a v8+ OffsetFetch.
func (c *Coordinator) fetchGroup(version int16, rg *kmsg.OffsetFetchRequestGroup, requireStable bool) kmsg.OffsetFetchResponseGroup {
	var topics []fetchTopic
	if rg.Topics != nil {
		topics = make([]fetchTopic, 0, len(rg.Topics))
		for _, t := range rg.Topics {
			name, ok := c.topicName(version, t.Topic, t.TopicID)
			topics = append(topics, fetchTopic{name: name, id: t.TopicID, unknownID: !ok, partitions: t.Partitions})
		}
	}
	memberID, epoch := (*string)(nil), int32(-1)
	if version >= 9 {
		memberID, epoch = rg.MemberID, rg.MemberEpoch
	}
	code, fetched := c.fetchOffsets(rg.Group, topics, memberID, epoch, requireStable)
	gr := kmsg.NewOffsetFetchResponseGroup()
	gr.Group = rg.Group
	gr.ErrorCode = code
	for _, ft := range c.withTopicIDs(version, fetched) {
		gt := kmsg.NewOffsetFetchResponseGroupTopic()
		gt.Topic, gt.TopicID = ft.name, ft.id
		for _, fp := range ft.partitions {
			gp := kmsg.NewOffsetFetchResponseGroupTopicPartition()
			gp.Partition, gp.Offset, gp.LeaderEpoch = fp.partition, fp.offset, fp.leaderEpoch
			gp.Metadata, gp.ErrorCode = new(fp.metadata), fp.code
			gt.Partitions = append(gt.Partitions, gp)
		}
		gr.Topics = append(gr.Topics, gt)
	}
	return gr
}

// fetchOffsets reads a group's committed offsets for topics (nil: all),
// for the member of a consumer group memberID names (nil: anyone). With
// requireStable (KIP-447), a partition with transactional offsets pending
// answers UNSTABLE_OFFSET_COMMIT and no offset, as Kafka does: the
// consumer retries until the transaction is over.
func (c *Coordinator) fetchOffsets(groupID string, topics []fetchTopic, memberID *string, epoch int32, requireStable bool) (int16, []fetchedTopic) {
	g, code := c.lockGroup(groupID, false)
	if code != 0 {
		return code, nil
	}
	if g == nil {
		return 0, missingOffsets(topics, 0)
	}
	defer g.mu.Unlock()
	if code := g.validateFetch(memberID, epoch); code != 0 {
		return code, nil
	}
	if topics == nil {
		return 0, g.allOffsets(requireStable)
	}
	out := make([]fetchedTopic, 0, len(topics))
	for _, t := range topics {
		ft := fetchedTopic{name: t.name, id: t.id}
		for _, p := range t.partitions {
			fp := fetchedPartition{partition: p, offset: -1, leaderEpoch: -1}
			tp := model.TopicPartition{Topic: t.name, Partition: p}
			if t.unknownID {
				fp.code = codeUnknownTopicID
			} else if requireStable && g.hasPending(tp) {
				fp.code = codeUnstableOffsetCommit
			} else if o, ok := g.offsets[tp]; ok {
				fp.offset, fp.leaderEpoch, fp.metadata = o.offset, o.leaderEpoch, o.metadata
			}
			ft.partitions = append(ft.partitions, fp)
		}
		out = append(out, ft)
	}
	return 0, out
}

// missingOffsets answers every requested partition with no offset (-1) and
// code.
func missingOffsets(topics []fetchTopic, code int16) []fetchedTopic {
	out := make([]fetchedTopic, 0, len(topics))
	for _, t := range topics {
		ft := fetchedTopic{name: t.name, id: t.id}
		for _, p := range t.partitions {
			fp := fetchedPartition{partition: p, offset: -1, leaderEpoch: -1, code: code}
			if t.unknownID {
				fp.code = codeUnknownTopicID
			}
			ft.partitions = append(ft.partitions, fp)
		}
		out = append(out, ft)
	}
	return out
}

// allOffsets lists every committed offset, by topic and partition; with
// requireStable, those with transactional offsets pending answer
// UNSTABLE_OFFSET_COMMIT instead, as in Kafka.
func (g *group) allOffsets(requireStable bool) []fetchedTopic {
	offsets := g.offsets
	tps := sortedPartitions(offsets)
	var out []fetchedTopic
	for _, tp := range tps {
		if len(out) == 0 || out[len(out)-1].name != tp.Topic {
			out = append(out, fetchedTopic{name: tp.Topic})
		}
		o := offsets[tp]
		fp := fetchedPartition{partition: tp.Partition, offset: o.offset, leaderEpoch: o.leaderEpoch, metadata: o.metadata}
		if requireStable && g.hasPending(tp) {
			fp = fetchedPartition{partition: tp.Partition, offset: -1, leaderEpoch: -1, code: codeUnstableOffsetCommit}
		}
		ft := &out[len(out)-1]
		ft.partitions = append(ft.partitions, fp)
	}
	return out
}

// withTopicIDs fills in the topic IDs v10 answers carry, dropping topics
// listed by name (a fetch of all offsets) that no longer have an ID.
func (c *Coordinator) withTopicIDs(version int16, topics []fetchedTopic) []fetchedTopic {
	if version < 10 {
		return topics
	}
	out := topics[:0]
	for _, t := range topics {
		if t.id == ([16]byte{}) {
			if c.deps.TopicID == nil {
				continue
			}
			id, ok := c.deps.TopicID(t.name)
			if !ok {
				continue
			}
			t.id = id
		}
		out = append(out, t)
	}
	return out
}

func sortedPartitions[V any](m map[model.TopicPartition]V) []model.TopicPartition {
	tps := make([]model.TopicPartition, 0, len(m))
	for tp := range m {
		tps = append(tps, tp)
	}
	slices.SortFunc(tps, func(a, b model.TopicPartition) int {
		return cmp.Or(strings.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	return tps
}

// OffsetDelete handles OffsetDelete v0 (KIP-496): it deletes a group's
// committed offsets for some partitions. Allowed for any partition of an
// Empty group; for a "consumer" group with members (classic with that
// protocol type, or KIP-848), only for topics its members do not subscribe
// to (GROUP_SUBSCRIBED_TO_TOPIC); never for other groups with members
// (NON_EMPTY_GROUP).
func (c *Coordinator) OffsetDelete(ctx context.Context, req *kmsg.OffsetDeleteRequest) *kmsg.OffsetDeleteResponse {
	resp := req.ResponseKind().(*kmsg.OffsetDeleteResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewOffsetDeleteResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rt.Partitions = append(rt.Partitions, kmsg.OffsetDeleteResponseTopicPartition{Partition: p.Partition})
		}
		resp.Topics = append(resp.Topics, rt)
	}
	if code := c.deleteOffsets(req, resp); code != 0 {
		resp.ErrorCode = code
		resp.Topics = nil
	}
	return resp
}

func (c *Coordinator) deleteOffsets(req *kmsg.OffsetDeleteRequest, resp *kmsg.OffsetDeleteResponse) int16 {
	if req.Group == "" {
		return codeInvalidGroupID
	}
	g, code := c.lockGroup(req.Group, false)
	if g == nil {
		if code == 0 {
			code = codeGroupIDNotFound
		}
		return code
	}
	s := c.newStep(g)
	doomed, code := c.offsetsToDelete(g, s, req, resp)
	if code == 0 {
		g.deleteOffsets(s, doomed, func(err error) {
			if err != nil {
				code = commitErrorCode(err)
				return
			}
			s.stats.offsetDeletions.Add(int64(len(doomed)))
		})
	}
	c.finishTurn(g, s)
	return code
}

// offsetsToDelete checks an OffsetDelete against the group, filling in
// per-partition refusals, and returns the committed offsets to delete.
func (c *Coordinator) offsetsToDelete(g *group, s *step, req *kmsg.OffsetDeleteRequest, resp *kmsg.OffsetDeleteResponse) ([]model.TopicPartition, int16) {
	cg := &g.classic
	subscribes := cg.subscribes
	switch {
	case g.dead(), g.kind == protocolShare:
		return nil, codeGroupIDNotFound
	case g.kind == protocolConsumer:
		subscribes = func(topic string) bool { return g.consumer.subscribes(s, topic) }
	case g.kind == protocolStreams:
		subscribes = g.streams.subscribes
	case cg.state != stateEmpty && cg.protocolType != "consumer":
		return nil, codeNonEmptyGroup
	}
	var doomed []model.TopicPartition
	for ti, t := range req.Topics {
		for pi, p := range t.Partitions {
			rp := &resp.Topics[ti].Partitions[pi]
			tp := model.TopicPartition{Topic: t.Topic, Partition: p.Partition}
			switch {
			case !c.topicExists(t.Topic, p.Partition):
				rp.ErrorCode = codeUnknownTopicOrPartition
			case !g.isEmpty() && subscribes(t.Topic):
				rp.ErrorCode = codeGroupSubscribedToTopic
			default:
				// Kafka deletes a partition's pending transactional
				// offsets with it.
				if _, ok := g.offsets[tp]; (ok || g.hasPending(tp)) && !slices.Contains(doomed, tp) {
					doomed = append(doomed, tp)
				}
			}
		}
	}
	return doomed, 0
}

// subscribes reports whether the members subscribe to topic; false when
// the subscriptions are unknown, as in Kafka.
func (g *classicGroup) subscribes(topic string) bool {
	_, ok := g.subscribedTopics[topic]
	return ok
}

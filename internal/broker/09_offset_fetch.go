package broker

// OffsetFetch (key 9), versions 0-10.
//
// Returns committed offsets for one group (v0-7) or several (v8+, KIP-709),
// all partitions when the topic list is null. A group that does not exist
// answers offset -1 for each partition asked and no error, as Kafka does.
// v10 names topics by ID.
//
// require_stable (v7+, KIP-447): a partition with a transactional offset
// commit (TxnOffsetCommit) whose transaction has not ended yet answers
// UNSTABLE_OFFSET_COMMIT instead of an offset, so a consumer that starts
// in the middle of a transaction retries rather than resume from an offset
// that may yet be aborted (internal/group: api_offsets.go).
//
// Authorization (authz.go), per group: DESCRIBE on the group, else
// GROUP_AUTHORIZATION_FAILED (the group's error from v8, the response's
// from v2, each partition's before); DESCRIBE on each topic named, else
// its partitions are TOPIC_AUTHORIZATION_FAILED; all of a group's topics
// asked for leave out those the principal may not DESCRIBE.

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(apiEntry{key: kmsg.OffsetFetch, min: 0, max: 10, handle: typed(handleOffsetFetch)})
}

func handleOffsetFetch(b *Broker, c *conn, req *kmsg.OffsetFetchRequest) (kmsg.Response, error) {
	if b.authorizer() == nil {
		return b.groups.OffsetFetch(b.tasks.Context(), req), nil
	}
	if req.Version >= 8 {
		return b.offsetFetchGroups(c, req), nil
	}
	if !b.authorize(c, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeGroup, req.Group) {
		resp := req.ResponseKind().(*kmsg.OffsetFetchResponse)
		if req.Version >= 2 {
			resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
			return resp, nil
		}
		for _, t := range req.Topics {
			resp.Topics = append(resp.Topics, offsetFetchRefusedTopic(t.Topic, t.Partitions, kerr.GroupAuthorizationFailed.Code))
		}
		return resp, nil
	}
	if req.Topics == nil {
		resp := b.groups.OffsetFetch(b.tasks.Context(), req)
		resp.Topics = slices.DeleteFunc(resp.Topics, func(t kmsg.OffsetFetchResponseTopic) bool {
			return !b.permits(c, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeTopic, t.Topic)
		})
		return resp, nil
	}
	describe := b.authorizeEach(c, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeTopic)
	kept, denied := filterDenied(req.Topics, func(t kmsg.OffsetFetchRequestTopic) bool { return describe(t.Topic) })
	if denied == nil {
		return b.groups.OffsetFetch(b.tasks.Context(), req), nil
	}
	allowed := *req
	allowed.Topics = kept
	resp := b.groups.OffsetFetch(b.tasks.Context(), &allowed)
	if resp.ErrorCode != 0 {
		return resp, nil
	}
	resp.Topics = mergeDenied(len(req.Topics), func(i int) (kmsg.OffsetFetchResponseTopic, bool) {
		t := req.Topics[i]
		return offsetFetchRefusedTopic(t.Topic, t.Partitions, kerr.TopicAuthorizationFailed.Code), denied[i]
	}, resp.Topics)
	return resp, nil
}

// offsetFetchRefusedTopic answers each partition with code and no offset.
func offsetFetchRefusedTopic(topic string, partitions []int32, code int16) kmsg.OffsetFetchResponseTopic {
	rt := kmsg.NewOffsetFetchResponseTopic()
	rt.Topic = topic
	for _, p := range partitions {
		rp := kmsg.NewOffsetFetchResponseTopicPartition()
		rp.Partition, rp.Offset, rp.Metadata, rp.ErrorCode = p, -1, new(""), code
		rt.Partitions = append(rt.Partitions, rp)
	}
	return rt
}

// offsetFetchGroups is OffsetFetch v8+ (several groups, KIP-709) with an
// authorizer: the coordinator sees only the groups and topics allowed.
func (b *Broker) offsetFetchGroups(c *conn, req *kmsg.OffsetFetchRequest) *kmsg.OffsetFetchResponse {
	describeGroup := b.authorizeEach(c, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeGroup)
	describeTopic := b.authorizeEach(c, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeTopic)
	groupDenied := make([]bool, len(req.Groups))
	topicsDenied := make([][]bool, len(req.Groups))
	allowed := *req
	allowed.Groups = nil
	for i, rg := range req.Groups {
		if !describeGroup(rg.Group) {
			groupDenied[i] = true
			continue
		}
		if rg.Topics != nil {
			rg.Topics, topicsDenied[i] = filterDenied(rg.Topics, func(t kmsg.OffsetFetchRequestGroupTopic) bool {
				name, ok := b.offsetTopicName(req.Version >= 10, t.Topic, t.TopicID)
				return !ok || describeTopic(name)
			})
		}
		allowed.Groups = append(allowed.Groups, rg)
	}
	resp := req.ResponseKind().(*kmsg.OffsetFetchResponse)
	if len(allowed.Groups) > 0 {
		resp = b.groups.OffsetFetch(b.tasks.Context(), &allowed)
	}
	resp.Groups = mergeDenied(len(req.Groups), func(i int) (kmsg.OffsetFetchResponseGroup, bool) {
		g := kmsg.NewOffsetFetchResponseGroup()
		g.Group, g.ErrorCode = req.Groups[i].Group, kerr.GroupAuthorizationFailed.Code
		return g, groupDenied[i]
	}, resp.Groups)
	for i := range min(len(resp.Groups), len(req.Groups)) {
		gr, rg := &resp.Groups[i], req.Groups[i]
		switch {
		case groupDenied[i] || gr.ErrorCode != 0:
		case rg.Topics == nil:
			gr.Topics = slices.DeleteFunc(gr.Topics, func(t kmsg.OffsetFetchResponseGroupTopic) bool {
				name, ok := b.offsetTopicName(t.Topic == "", t.Topic, t.TopicID)
				return !ok || !b.permits(c, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeTopic, name)
			})
		case topicsDenied[i] != nil:
			gr.Topics = mergeDenied(len(rg.Topics), func(j int) (kmsg.OffsetFetchResponseGroupTopic, bool) {
				t := rg.Topics[j]
				gt := kmsg.NewOffsetFetchResponseGroupTopic()
				gt.Topic, gt.TopicID = t.Topic, t.TopicID
				for _, p := range t.Partitions {
					gp := kmsg.NewOffsetFetchResponseGroupTopicPartition()
					gp.Partition, gp.Offset, gp.Metadata, gp.ErrorCode = p, -1, new(""), kerr.TopicAuthorizationFailed.Code
					gt.Partitions = append(gt.Partitions, gp)
				}
				return gt, topicsDenied[i][j]
			}, gr.Topics)
		}
	}
	return resp
}

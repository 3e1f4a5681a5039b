package broker

// OffsetDelete (key 47), versions 0-0.
//
// Deletes a group's committed offsets for some partitions (KIP-496), unless
// the group is subscribed to the topic (GROUP_SUBSCRIBED_TO_TOPIC); an
// unknown group is GROUP_ID_NOT_FOUND.
//
// Authorization (authz.go): DELETE on the group, else the response's error
// is GROUP_AUTHORIZATION_FAILED; READ on each topic, else its partitions
// are TOPIC_AUTHORIZATION_FAILED and keep their offsets.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(apiEntry{key: kmsg.OffsetDelete, min: 0, max: 0, handle: typed(handleOffsetDelete)})
}

func handleOffsetDelete(b *Broker, c *conn, req *kmsg.OffsetDeleteRequest) (kmsg.Response, error) {
	if !b.authorize(c, kmsg.ACLOperationDelete, kmsg.ACLResourceTypeGroup, req.Group) {
		resp := req.ResponseKind().(*kmsg.OffsetDeleteResponse)
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
		return resp, nil
	}
	read := b.authorizeEach(c, kmsg.ACLOperationRead, kmsg.ACLResourceTypeTopic)
	kept, denied := filterDenied(req.Topics, func(t kmsg.OffsetDeleteRequestTopic) bool { return read(t.Topic) })
	if denied == nil {
		return b.groups.OffsetDelete(b.tasks.Context(), req), nil
	}
	allowed := *req
	allowed.Topics = kept
	resp := b.groups.OffsetDelete(b.tasks.Context(), &allowed)
	if resp.ErrorCode != 0 {
		return resp, nil
	}
	resp.Topics = mergeDenied(len(req.Topics), func(i int) (kmsg.OffsetDeleteResponseTopic, bool) {
		rt := kmsg.NewOffsetDeleteResponseTopic()
		rt.Topic = req.Topics[i].Topic
		for _, p := range req.Topics[i].Partitions {
			rt.Partitions = append(rt.Partitions, kmsg.OffsetDeleteResponseTopicPartition{Partition: p.Partition, ErrorCode: kerr.TopicAuthorizationFailed.Code})
		}
		return rt, denied[i]
	}, resp.Topics)
	return resp, nil
}

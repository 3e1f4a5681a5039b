package broker

// AlterShareGroupOffsets (key 91), version 0 (KIP-932).
//
// Sets where each partition's share state starts (the share coordinator
// initializes it at the given offset), for an empty share group: a group
// with members answers NON_EMPTY_GROUP, one that is not a share group
// GROUP_ID_NOT_FOUND. The logic is internal/group's; the share state is the
// broker's shareStates (errors on every partition while there is none).
// With share.version 0 the request is answered UNSUPPORTED_VERSION.
//
// Authorization (authz.go): READ on the group, else
// GROUP_AUTHORIZATION_FAILED; READ on each topic, else its partitions answer
// TOPIC_AUTHORIZATION_FAILED and are left alone, as Kafka.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(apiEntry{key: kmsg.AlterShareGroupOffsets, min: 0, max: 0, handle: typed(handleAlterShareGroupOffsets)})
}

func handleAlterShareGroupOffsets(b *Broker, c *conn, req *kmsg.AlterShareGroupOffsetsRequest) (kmsg.Response, error) {
	failAll := func(e *kerr.Error) *kmsg.AlterShareGroupOffsetsResponse {
		resp := req.ResponseKind().(*kmsg.AlterShareGroupOffsetsResponse)
		resp.ErrorCode = e.Code
		resp.Topics = []kmsg.AlterShareGroupOffsetsResponseTopic{}
		for _, rt := range req.Topics {
			resp.Topics = append(resp.Topics, deniedAlterShareTopic(rt, e))
		}
		return resp
	}
	if !b.shareGroupsEnabled() {
		return failAll(kerr.UnsupportedVersion), nil
	}
	if !b.authorize(c, kmsg.ACLOperationRead, kmsg.ACLResourceTypeGroup, req.GroupID) {
		return failAll(kerr.GroupAuthorizationFailed), nil
	}
	read := b.authorizeEach(c, kmsg.ACLOperationRead, kmsg.ACLResourceTypeTopic)
	kept, denied := filterDenied(req.Topics, func(t kmsg.AlterShareGroupOffsetsRequestTopic) bool { return read(t.Topic) })
	allowed := *req
	allowed.Topics = kept
	resp := b.groups.AlterShareGroupOffsets(b.tasks.Context(), &allowed)
	if denied != nil {
		resp.Topics = mergeDenied(len(req.Topics), func(i int) (kmsg.AlterShareGroupOffsetsResponseTopic, bool) {
			return deniedAlterShareTopic(req.Topics[i], kerr.TopicAuthorizationFailed), denied[i]
		}, resp.Topics)
	}
	return resp, nil
}

func deniedAlterShareTopic(rt kmsg.AlterShareGroupOffsetsRequestTopic, e *kerr.Error) kmsg.AlterShareGroupOffsetsResponseTopic {
	t := kmsg.NewAlterShareGroupOffsetsResponseTopic()
	t.Topic = rt.Topic
	for _, rp := range rt.Partitions {
		p := kmsg.NewAlterShareGroupOffsetsResponseTopicPartition()
		p.Partition, p.ErrorCode = rp.Partition, e.Code
		t.Partitions = append(t.Partitions, p)
	}
	return t
}

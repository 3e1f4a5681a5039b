package broker

// DeleteShareGroupOffsets (key 92), version 0 (KIP-932).
//
// Deletes the share state of the named topics' partitions an empty share
// group initialized, so its consumption of them starts over: a group with
// members answers NON_EMPTY_GROUP, one that is not a share group
// GROUP_ID_NOT_FOUND. The logic is internal/group's; the share state is the
// broker's shareStates. With share.version 0 the request is answered
// UNSUPPORTED_VERSION.
//
// Authorization (authz.go): DELETE on the group, else
// GROUP_AUTHORIZATION_FAILED; READ on each topic, else it answers
// TOPIC_AUTHORIZATION_FAILED and is left alone, as Kafka.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(apiEntry{key: kmsg.DeleteShareGroupOffsets, min: 0, max: 0, handle: typed(handleDeleteShareGroupOffsets)})
}

func handleDeleteShareGroupOffsets(b *Broker, c *conn, req *kmsg.DeleteShareGroupOffsetsRequest) (kmsg.Response, error) {
	fail := func(e *kerr.Error) (kmsg.Response, error) {
		resp := req.ResponseKind().(*kmsg.DeleteShareGroupOffsetsResponse)
		resp.ErrorCode = e.Code
		resp.Topics = []kmsg.DeleteShareGroupOffsetsResponseTopic{}
		return resp, nil
	}
	if !b.shareGroupsEnabled() {
		return fail(kerr.UnsupportedVersion)
	}
	if !b.authorize(c, kmsg.ACLOperationDelete, kmsg.ACLResourceTypeGroup, req.GroupID) {
		return fail(kerr.GroupAuthorizationFailed)
	}
	read := b.authorizeEach(c, kmsg.ACLOperationRead, kmsg.ACLResourceTypeTopic)
	kept, denied := filterDenied(req.Topics, func(t kmsg.DeleteShareGroupOffsetsRequestTopic) bool { return read(t.Topic) })
	allowed := *req
	allowed.Topics = kept
	resp := b.groups.DeleteShareGroupOffsets(b.tasks.Context(), &allowed)
	if denied != nil && resp.ErrorCode == 0 {
		resp.Topics = mergeDenied(len(req.Topics), func(i int) (kmsg.DeleteShareGroupOffsetsResponseTopic, bool) {
			t := kmsg.NewDeleteShareGroupOffsetsResponseTopic()
			t.Topic, t.ErrorCode = req.Topics[i].Topic, kerr.TopicAuthorizationFailed.Code
			return t, denied[i]
		}, resp.Topics)
	}
	return resp, nil
}

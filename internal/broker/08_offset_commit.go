package broker

// OffsetCommit (key 8), versions 0-10.
//
// Commits consumer positions for a group (internal/group): checked against the
// member and generation (classic groups) or member epoch (consumer groups,
// v9+), written to __consumer_offsets in Kafka's own record format and
// acknowledged only once appended. A commit with generation -1 and no
// member is a "simple consumer" commit, allowed for groups without members.
// Offsets for unknown topics get UNKNOWN_TOPIC_OR_PARTITION; metadata over
// offset.metadata.max.bytes gets OFFSET_METADATA_TOO_LARGE. v10 names
// topics by ID.
//
// Authorization (authz.go): READ on the group, else every partition is
// GROUP_AUTHORIZATION_FAILED; READ on each topic, else its partitions are
// TOPIC_AUTHORIZATION_FAILED and the coordinator never sees them.
//
// Not yet: per-commit retention (v2-4) is stored but offsets expire by
// offsets.retention.minutes only; commits do not count as heartbeats.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(apiEntry{key: kmsg.OffsetCommit, min: 0, max: 10, handle: typed(handleOffsetCommit)})
}

func handleOffsetCommit(b *Broker, c *conn, req *kmsg.OffsetCommitRequest) (kmsg.Response, error) {
	if !b.authorize(c, kmsg.ACLOperationRead, kmsg.ACLResourceTypeGroup, req.Group) {
		return offsetCommitRefused(req, req.Topics, kerr.GroupAuthorizationFailed.Code), nil
	}
	read := b.authorizeEach(c, kmsg.ACLOperationRead, kmsg.ACLResourceTypeTopic)
	kept, denied := filterDenied(req.Topics, func(t kmsg.OffsetCommitRequestTopic) bool {
		name, ok := b.offsetTopicName(req.Version >= 10, t.Topic, t.TopicID)
		return !ok || read(name)
	})
	if denied == nil {
		return b.groups.OffsetCommit(b.tasks.Context(), req), nil
	}
	resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
	if len(kept) > 0 {
		allowed := *req
		allowed.Topics = kept
		resp = b.groups.OffsetCommit(b.tasks.Context(), &allowed)
	}
	refused := offsetCommitRefused(req, req.Topics, kerr.TopicAuthorizationFailed.Code)
	resp.Topics = mergeDenied(len(req.Topics), func(i int) (kmsg.OffsetCommitResponseTopic, bool) {
		return refused.Topics[i], denied[i]
	}, resp.Topics)
	return resp, nil
}

// offsetCommitRefused answers every partition of topics with code.
func offsetCommitRefused(req *kmsg.OffsetCommitRequest, topics []kmsg.OffsetCommitRequestTopic, code int16) *kmsg.OffsetCommitResponse {
	resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
	for _, t := range topics {
		rt := kmsg.NewOffsetCommitResponseTopic()
		rt.Topic, rt.TopicID = t.Topic, t.TopicID
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetCommitResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, code
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

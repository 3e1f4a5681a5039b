package broker

// ShareAcknowledge (key 79), versions 1-2 (KIP-932).
//
// Acknowledgements without a fetch: accept, release, reject (and, v2's
// KIP-1222, renew) for records the member acquired, applied to the
// share-partitions and written to the share coordinator before the answer
// (share_partitions.go). The request moves the member's share session on
// like a share fetch (share_sessions.go): epoch 0 is
// INVALID_SHARE_SESSION_EPOCH (a session is opened by a fetch), -1 closes
// the session after the acknowledgements and releases what the member
// still holds. A partition not in the session may be acknowledged: Kafka
// checks only the epoch.
//
// Off (UNSUPPORTED_VERSION) while the finalized share.version is 0.
// Authorization: READ on the group, then READ on each topic.

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/model"
)

func init() {
	registerAPI(apiEntry{key: kmsg.ShareAcknowledge, min: 1, max: 2, handle: typed(handleShareAcknowledge)})
}

func handleShareAcknowledge(b *Broker, c *conn, req *kmsg.ShareAcknowledgeRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.ShareAcknowledgeResponse)
	group, member := deref(req.GroupID), deref(req.MemberID)
	fail := func(e *kerr.Error, msg string) (kmsg.Response, error) {
		resp.ErrorCode, resp.ErrorMessage = e.Code, kmsg.StringPtr(msg)
		return resp, nil
	}
	if e, msg := b.shareRequestRefusal(c, group, member); e != nil {
		return fail(e, msg)
	}
	if req.ShareSessionEpoch == 0 {
		return fail(kerr.InvalidShareSessionEpoch, "a share session is opened by a share fetch, not an acknowledgement")
	}
	if req.Version >= 2 {
		resp.AcquisitionLockTimeoutMillis = int32(b.shareSettings(group).lock / time.Millisecond)
	}
	now := b.cfg.Clock.Now()
	_, dropped, code := b.shareSessions.apply(shareSessionKey{group, member}, c.id, shareSessionUpdate{epoch: req.ShareSessionEpoch}, now)
	if code != 0 {
		e := kerr.ErrorForCode(code).(*kerr.Error)
		return fail(e, e.Description)
	}
	ctx, cancel := context.WithTimeout(b.tasks.Context(), 30*time.Second)
	defer cancel()
	hints := b.newLeaderHints(c)
	for _, t := range req.Topics {
		rt := kmsg.NewShareAcknowledgeResponseTopic()
		rt.TopicID = t.TopicID
		ts, ok := b.topics.byTopicID(model.TopicID(t.TopicID))
		topicCode := int16(0)
		switch {
		case !ok:
			topicCode = kerr.UnknownTopicID.Code
		case !b.authorize(c, kmsg.ACLOperationRead, kmsg.ACLResourceTypeTopic, ts.name):
			topicCode = kerr.TopicAuthorizationFailed.Code
		}
		for _, p := range t.Partitions {
			rp := kmsg.NewShareAcknowledgeResponseTopicPartition()
			rp.Partition = p.Partition
			rp.ErrorCode = topicCode
			if topicCode == 0 {
				k := sharePartKey{group: group, topic: model.TopicID(t.TopicID), partition: p.Partition}
				rp.ErrorCode = b.shareAckOne(ctx, k, member, ackRangesOf(p.AcknowledgementBatches))
			}
			if wantsHint(rp.ErrorCode) {
				if l, e, ok := hints.leader(true, "", t.TopicID, p.Partition); ok {
					rp.CurrentLeader.LeaderID, rp.CurrentLeader.LeaderEpoch = l, e
				}
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	if len(dropped) > 0 {
		b.releaseShareMember(ctx, group, member, dropped)
		b.dropIdleShareGroup(group)
	}
	for _, e := range hints.endpoints() {
		ne := kmsg.NewShareAcknowledgeResponseNodeEndpoint()
		ne.NodeID, ne.Host, ne.Port, ne.Rack = e.nodeID, e.host, e.port, e.rack
		resp.NodeEndpoints = append(resp.NodeEndpoints, ne)
	}
	return resp, nil
}

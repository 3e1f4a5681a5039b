package broker

// DescribeShareGroupOffsets (key 90), versions 0-1 (KIP-932).
//
// Each partition's share-partition start offset and leader epoch as the
// share coordinator has them, for the topics named or, with null topics,
// every topic the group initialized. v1 (KIP-1226, Kafka 4.2) adds the lag,
// from the partition's high watermark when this broker leads it, else -1.
// The logic is internal/group's; the share state comes from the broker's
// shareStates (errors on every partition while there is none). With
// share.version 0 every group is answered UNSUPPORTED_VERSION.
//
// Authorization (authz.go): DESCRIBE on each group, else
// GROUP_AUTHORIZATION_FAILED for it; DESCRIBE on each topic, else its
// partitions answer TOPIC_AUTHORIZATION_FAILED (with null topics, the
// topics the principal may not describe are left out), as Kafka.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(apiEntry{key: kmsg.DescribeShareGroupOffsets, min: 0, max: 1, handle: typed(handleDescribeShareGroupOffsets)})
}

func handleDescribeShareGroupOffsets(b *Broker, c *conn, req *kmsg.DescribeShareGroupOffsetsRequest) (kmsg.Response, error) {
	groupError := func(id string, e *kerr.Error) kmsg.DescribeShareGroupOffsetsResponseGroup {
		g := kmsg.NewDescribeShareGroupOffsetsResponseGroup()
		g.GroupID, g.ErrorCode = id, e.Code
		g.Topics = []kmsg.DescribeShareGroupOffsetsResponseGroupTopic{}
		return g
	}
	resp := req.ResponseKind().(*kmsg.DescribeShareGroupOffsetsResponse)
	if !b.shareGroupsEnabled() {
		for _, g := range req.Groups {
			resp.Groups = append(resp.Groups, groupError(g.GroupID, kerr.UnsupportedVersion))
		}
		return resp, nil
	}
	describeGroup := b.authorizeEach(c, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeGroup)
	kept, denied := filterDenied(req.Groups, func(g kmsg.DescribeShareGroupOffsetsRequestGroup) bool { return describeGroup(g.GroupID) })
	if len(kept) > 0 {
		allowed := *req
		allowed.Groups = kept
		resp = b.groups.DescribeShareGroupOffsets(b.tasks.Context(), &allowed)
		describeTopic := b.authorizeEach(c, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeTopic)
		for i := range resp.Groups {
			filterShareOffsetTopics(&resp.Groups[i], kept[i].Topics == nil, describeTopic)
		}
	}
	if denied != nil {
		resp.Groups = mergeDenied(len(req.Groups), func(i int) (kmsg.DescribeShareGroupOffsetsResponseGroup, bool) {
			return groupError(req.Groups[i].GroupID, kerr.GroupAuthorizationFailed), denied[i]
		}, resp.Groups)
	}
	return resp, nil
}

// filterShareOffsetTopics answers the topics the principal may not describe
// with TOPIC_AUTHORIZATION_FAILED, or leaves them out when the request did
// not name topics.
func filterShareOffsetTopics(g *kmsg.DescribeShareGroupOffsetsResponseGroup, all bool, describe func(string) bool) {
	topics := g.Topics[:0]
	for _, t := range g.Topics {
		if describe(t.Topic) {
			topics = append(topics, t)
			continue
		}
		if all {
			continue
		}
		t.TopicID = [16]byte{}
		for pi := range t.Partitions {
			p := &t.Partitions[pi]
			p.StartOffset, p.LeaderEpoch, p.Lag = -1, 0, -1
			p.ErrorCode, p.ErrorMessage = kerr.TopicAuthorizationFailed.Code, nil
		}
		topics = append(topics, t)
	}
	g.Topics = topics
}

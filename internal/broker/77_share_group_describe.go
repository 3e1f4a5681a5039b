package broker

// ShareGroupDescribe (key 77), version 1 (KIP-932).
//
// Describes share groups: state (Empty, Stable, Dead), group and
// assignment epochs, the assignor ("simple"), and each member's
// subscription and assignment. A group that is not a share group, or an
// unknown one, gets GROUP_ID_NOT_FOUND as in Kafka. With share.version 0
// every group is answered UNSUPPORTED_VERSION.
//
// Authorization (authz.go): DESCRIBE on each group, else it is answered
// GROUP_AUTHORIZATION_FAILED; then DESCRIBE on every topic its members
// subscribe to or are assigned, else the group is answered
// TOPIC_AUTHORIZATION_FAILED without its members, as Kafka does from v1.
// Its authorized operations (KIP-430) when asked for and it is answered
// without an error.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(apiEntry{key: kmsg.ShareGroupDescribe, min: 1, max: 1, handle: typed(handleShareGroupDescribe)})
}

func handleShareGroupDescribe(b *Broker, c *conn, req *kmsg.ShareGroupDescribeRequest) (kmsg.Response, error) {
	if !b.shareGroupsEnabled() {
		resp := req.ResponseKind().(*kmsg.ShareGroupDescribeResponse)
		for _, g := range req.GroupIDs {
			rg := kmsg.NewShareGroupDescribeResponseGroup()
			rg.GroupID, rg.ErrorCode = g, kerr.UnsupportedVersion.Code
			resp.Groups = append(resp.Groups, rg)
		}
		return resp, nil
	}
	describe := b.authorizeEach(c, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeGroup)
	kept, denied := filterDenied(req.GroupIDs, describe)
	resp := req.ResponseKind().(*kmsg.ShareGroupDescribeResponse)
	if len(kept) > 0 {
		allowed := *req
		allowed.GroupIDs = kept
		resp = b.groups.ShareGroupDescribe(b.tasks.Context(), &allowed)
	}
	describeTopic := b.authorizeEach(c, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeTopic)
	for i := range resp.Groups {
		if g := &resp.Groups[i]; g.ErrorCode == 0 && !shareGroupTopicsAllowed(g, describeTopic) {
			g.ErrorCode = kerr.TopicAuthorizationFailed.Code
			g.ErrorMessage = kmsg.StringPtr("The described group uses topics that the client is not authorized to describe.")
			g.Members = []kmsg.ShareGroupDescribeResponseGroupMember{}
		}
	}
	if req.IncludeAuthorizedOperations {
		for i := range resp.Groups {
			if g := &resp.Groups[i]; g.ErrorCode == 0 {
				g.AuthorizedOperations = b.authorizedOperations(c, kmsg.ACLResourceTypeGroup, g.GroupID)
			}
		}
	}
	if denied != nil {
		resp.Groups = mergeDenied(len(req.GroupIDs), func(i int) (kmsg.ShareGroupDescribeResponseGroup, bool) {
			g := kmsg.NewShareGroupDescribeResponseGroup()
			g.GroupID, g.ErrorCode = req.GroupIDs[i], kerr.GroupAuthorizationFailed.Code
			return g, denied[i]
		}, resp.Groups)
	}
	return resp, nil
}

// shareGroupTopicsAllowed reports whether the principal may describe every
// topic the group's members subscribe to or are assigned.
func shareGroupTopicsAllowed(g *kmsg.ShareGroupDescribeResponseGroup, describe func(string) bool) bool {
	for _, m := range g.Members {
		for _, t := range m.SubscribedTopicNames {
			if !describe(t) {
				return false
			}
		}
		for _, tp := range m.Assignment.TopicPartitions {
			if !describe(tp.Topic) {
				return false
			}
		}
	}
	return true
}

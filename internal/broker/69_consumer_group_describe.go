package broker

// ConsumerGroupDescribe (key 69), versions 0-1 (KIP-848).
//
// Describes consumer-protocol groups: state, group and assignment epochs,
// the assignor, and each member's subscription, current and target
// assignment. A classic group, or an unknown one, gets GROUP_ID_NOT_FOUND
// as in Kafka.
//
// With the consumer group protocol off (group.version 0), every group is
// answered UNSUPPORTED_VERSION, as Kafka's KafkaApis does; the Java Admin
// then falls back to DescribeGroups.
//
// Authorization (authz.go): DESCRIBE on each group (Kafka's documentation
// says READ; its code checks DESCRIBE), else it is answered
// GROUP_AUTHORIZATION_FAILED. Its authorized operations (KIP-430) when
// asked for and it is answered without an error, else -2147483648.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(apiEntry{key: kmsg.ConsumerGroupDescribe, min: 0, max: 1, handle: typed(handleConsumerGroupDescribe)})
}

func handleConsumerGroupDescribe(b *Broker, c *conn, req *kmsg.ConsumerGroupDescribeRequest) (kmsg.Response, error) {
	if !b.consumerProtocolEnabled() {
		resp := req.ResponseKind().(*kmsg.ConsumerGroupDescribeResponse)
		for _, g := range req.Groups {
			rg := kmsg.NewConsumerGroupDescribeResponseGroup()
			rg.Group, rg.ErrorCode = g, kerr.UnsupportedVersion.Code
			resp.Groups = append(resp.Groups, rg)
		}
		return resp, nil
	}
	describe := b.authorizeEach(c, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeGroup)
	kept, denied := filterDenied(req.Groups, describe)
	resp := req.ResponseKind().(*kmsg.ConsumerGroupDescribeResponse)
	if len(kept) > 0 {
		allowed := *req
		allowed.Groups = kept
		resp = b.groups.ConsumerGroupDescribe(b.tasks.Context(), &allowed)
	}
	if req.IncludeAuthorizedOperations {
		for i := range resp.Groups {
			if g := &resp.Groups[i]; g.ErrorCode == 0 {
				g.AuthorizedOperations = b.authorizedOperations(c, kmsg.ACLResourceTypeGroup, g.Group)
			}
		}
	}
	if denied != nil {
		resp.Groups = mergeDenied(len(req.Groups), func(i int) (kmsg.ConsumerGroupDescribeResponseGroup, bool) {
			g := kmsg.NewConsumerGroupDescribeResponseGroup()
			g.Group, g.ErrorCode = req.Groups[i], kerr.GroupAuthorizationFailed.Code
			return g, denied[i]
		}, resp.Groups)
	}
	return resp, nil
}

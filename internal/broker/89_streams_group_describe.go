package broker

// StreamsGroupDescribe (key 89), versions 0-1 (KIP-1071).
//
// Describes streams groups: state, group and assignment epochs, the
// topology with the partition counts of its internal topics, and each
// member's process, endpoint, changelog offsets, and current and target
// tasks. A group of another type, or an unknown one, gets
// GROUP_ID_NOT_FOUND as in Kafka.
//
//   - v1: AssignorName ("sticky"); a topology description asked for is
//     answered NOT_STORED (KIP-1331's descriptions are not stored).
//
// With the streams protocol off (streams.version 0), every group is
// answered UNSUPPORTED_VERSION, as Kafka's KafkaApis does.
//
// Authorization (authz.go): DESCRIBE on each group, else it is answered
// GROUP_AUTHORIZATION_FAILED. Its authorized operations (KIP-430) when
// asked for and it is answered without an error, else -2147483648.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(apiEntry{key: kmsg.StreamsGroupDescribe, min: 0, max: 1, handle: typed(handleStreamsGroupDescribe)})
}

func handleStreamsGroupDescribe(b *Broker, c *conn, req *kmsg.StreamsGroupDescribeRequest) (kmsg.Response, error) {
	if !b.streamsProtocolEnabled() {
		resp := req.ResponseKind().(*kmsg.StreamsGroupDescribeResponse)
		for _, g := range req.Groups {
			rg := kmsg.NewStreamsGroupDescribeResponseGroup()
			rg.Group, rg.ErrorCode = g, kerr.UnsupportedVersion.Code
			resp.Groups = append(resp.Groups, rg)
		}
		return resp, nil
	}
	describe := b.authorizeEach(c, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeGroup)
	kept, denied := filterDenied(req.Groups, describe)
	resp := req.ResponseKind().(*kmsg.StreamsGroupDescribeResponse)
	if len(kept) > 0 {
		allowed := *req
		allowed.Groups = kept
		resp = b.groups.StreamsGroupDescribe(b.tasks.Context(), &allowed)
	}
	if req.IncludeAuthorizedOperations {
		for i := range resp.Groups {
			if g := &resp.Groups[i]; g.ErrorCode == 0 {
				g.AuthorizedOperations = b.authorizedOperations(c, kmsg.ACLResourceTypeGroup, g.Group)
			}
		}
	}
	if denied != nil {
		resp.Groups = mergeDenied(len(req.Groups), func(i int) (kmsg.StreamsGroupDescribeResponseGroup, bool) {
			g := kmsg.NewStreamsGroupDescribeResponseGroup()
			g.Group, g.ErrorCode = req.Groups[i], kerr.GroupAuthorizationFailed.Code
			return g, denied[i]
		}, resp.Groups)
	}
	return resp, nil
}

package broker

// DescribeGroups (key 15), versions 0-6.
//
// Describes groups: state, protocol type and name, and members with their
// client ID, host, metadata and assignment (and instance ID from v4). An
// unknown group is reported in state Dead with no error, as Kafka does.
//
// Authorization (authz.go): DESCRIBE on each group, else it is answered
// GROUP_AUTHORIZATION_FAILED with no state, protocol or members. Its
// authorized operations (v3+, KIP-430) when asked for and it is answered
// without an error, else -2147483648.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(apiEntry{key: kmsg.DescribeGroups, min: 0, max: 6, handle: typed(handleDescribeGroups)})
}

func handleDescribeGroups(b *Broker, c *conn, req *kmsg.DescribeGroupsRequest) (kmsg.Response, error) {
	describe := b.authorizeEach(c, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeGroup)
	kept, denied := filterDenied(req.Groups, describe)
	resp := req.ResponseKind().(*kmsg.DescribeGroupsResponse)
	if len(kept) > 0 {
		allowed := *req
		allowed.Groups = kept
		resp = b.groups.DescribeGroups(b.tasks.Context(), &allowed)
	}
	if req.IncludeAuthorizedOperations {
		for i := range resp.Groups {
			if g := &resp.Groups[i]; g.ErrorCode == 0 {
				g.AuthorizedOperations = b.authorizedOperations(c, kmsg.ACLResourceTypeGroup, g.Group)
			}
		}
	}
	if denied != nil {
		resp.Groups = mergeDenied(len(req.Groups), func(i int) (kmsg.DescribeGroupsResponseGroup, bool) {
			g := kmsg.NewDescribeGroupsResponseGroup()
			g.Group, g.ErrorCode = req.Groups[i], kerr.GroupAuthorizationFailed.Code
			return g, denied[i]
		}, resp.Groups)
	}
	return resp, nil
}

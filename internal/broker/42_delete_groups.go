package broker

// DeleteGroups (key 42), versions 0-2.
//
// Deletes groups with no members and their committed offsets (tombstones in
// __consumer_offsets). A group with members gets NON_EMPTY_GROUP, an unknown
// one GROUP_ID_NOT_FOUND.
//
// Authorization (authz.go): DELETE on each group, else it is answered
// GROUP_AUTHORIZATION_FAILED and left alone.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(apiEntry{key: kmsg.DeleteGroups, min: 0, max: 2, handle: typed(handleDeleteGroups)})
}

func handleDeleteGroups(b *Broker, c *conn, req *kmsg.DeleteGroupsRequest) (kmsg.Response, error) {
	del := b.authorizeEach(c, kmsg.ACLOperationDelete, kmsg.ACLResourceTypeGroup)
	kept, denied := filterDenied(req.Groups, del)
	if denied == nil {
		return b.groups.DeleteGroups(b.tasks.Context(), req), nil
	}
	resp := req.ResponseKind().(*kmsg.DeleteGroupsResponse)
	if len(kept) > 0 {
		allowed := *req
		allowed.Groups = kept
		resp = b.groups.DeleteGroups(b.tasks.Context(), &allowed)
	}
	resp.Groups = mergeDenied(len(req.Groups), func(i int) (kmsg.DeleteGroupsResponseGroup, bool) {
		g := kmsg.NewDeleteGroupsResponseGroup()
		g.Group, g.ErrorCode = req.Groups[i], kerr.GroupAuthorizationFailed.Code
		return g, denied[i]
	}, resp.Groups)
	return resp, nil
}

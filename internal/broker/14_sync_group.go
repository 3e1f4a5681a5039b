package broker

// SyncGroup (key 14), versions 0-5.
//
// Completes a classic rebalance: the leader sends every member's
// assignment, which is stored in __consumer_offsets with the group, and each
// member gets its own. Followers wait for the leader's assignment, holding
// their connection. Protocol type and name (v5+) are checked against the
// group's (INCONSISTENT_GROUP_PROTOCOL). Assignments are opaque bytes: eager
// and cooperative (KIP-429) protocols pass through unchanged.
//
// Authorization (authz.go): READ on the group, else
// GROUP_AUTHORIZATION_FAILED.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(apiEntry{key: kmsg.SyncGroup, min: 0, max: 5, handle: typed(handleSyncGroup)})
}

func handleSyncGroup(b *Broker, c *conn, req *kmsg.SyncGroupRequest) (kmsg.Response, error) {
	if !b.authorize(c, kmsg.ACLOperationRead, kmsg.ACLResourceTypeGroup, req.Group) {
		resp := req.ResponseKind().(*kmsg.SyncGroupResponse)
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
		resp.MemberAssignment = []byte{}
		return resp, nil
	}
	return b.groups.SyncGroup(b.tasks.Context(), req), nil
}

package broker

// LeaveGroup (key 13), versions 0-5.
//
// Removes members from a classic group, one (v0-2) or a batch by member or
// instance ID (v3+, KIP-345), triggering a rebalance; per-member errors from
// v3.
//
// Authorization (authz.go): READ on the group, else
// GROUP_AUTHORIZATION_FAILED.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(apiEntry{key: kmsg.LeaveGroup, min: 0, max: 5, handle: typed(handleLeaveGroup)})
}

func handleLeaveGroup(b *Broker, c *conn, req *kmsg.LeaveGroupRequest) (kmsg.Response, error) {
	if !b.authorize(c, kmsg.ACLOperationRead, kmsg.ACLResourceTypeGroup, req.Group) {
		resp := req.ResponseKind().(*kmsg.LeaveGroupResponse)
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
		return resp, nil
	}
	return b.groups.LeaveGroup(b.tasks.Context(), req), nil
}

package broker

// Heartbeat (key 12), versions 0-4.
//
// Keeps a classic member's session alive; answers REBALANCE_IN_PROGRESS
// during a rebalance so the member rejoins, ILLEGAL_GENERATION or
// UNKNOWN_MEMBER_ID when it is stale, FENCED_INSTANCE_ID for a replaced
// static member (v3+).
//
// Authorization (authz.go): READ on the group, else
// GROUP_AUTHORIZATION_FAILED.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(apiEntry{key: kmsg.Heartbeat, min: 0, max: 4, handle: typed(handleHeartbeat)})
}

func handleHeartbeat(b *Broker, c *conn, req *kmsg.HeartbeatRequest) (kmsg.Response, error) {
	if !b.authorize(c, kmsg.ACLOperationRead, kmsg.ACLResourceTypeGroup, req.Group) {
		resp := req.ResponseKind().(*kmsg.HeartbeatResponse)
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
		return resp, nil
	}
	return b.groups.Heartbeat(b.tasks.Context(), req), nil
}

package broker

// ConsumerGroupHeartbeat (key 68), versions 0-1 (KIP-848).
//
// The consumer group protocol: members join (epoch 0), heartbeat with
// their subscription and owned partitions, and leave (-1, or -2 for a
// static member) through this one request; the coordinator computes the
// target assignment with a server-side assignor (uniform by default, or
// range) and hands each member partitions only once their previous owner
// has revoked them. The heartbeat interval and session timeout come from
// group.consumer.heartbeat.interval.ms and group.consumer.session.timeout.ms.
// Topics are assigned by ID. The logic is internal/group's; see
// docs/DESIGN-group.md for what it leaves out.
//
// Authorization (authz.go): READ on the group, else
// GROUP_AUTHORIZATION_FAILED.

import (
	"github.com/samsa-io/samsa/internal/group"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(apiEntry{key: kmsg.ConsumerGroupHeartbeat, min: 0, max: 1, handle: typed(handleConsumerGroupHeartbeat)})
}

func handleConsumerGroupHeartbeat(b *Broker, c *conn, req *kmsg.ConsumerGroupHeartbeatRequest) (kmsg.Response, error) {
	if !b.authorize(c, kmsg.ACLOperationRead, kmsg.ACLResourceTypeGroup, req.Group) {
		resp := req.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
		resp.ErrorMessage = kmsg.StringPtr(kerr.GroupAuthorizationFailed.Description)
		return resp, nil
	}
	ctx := group.WithClient(b.tasks.Context(), c.clientID, clientHost(c))
	return b.groups.ConsumerGroupHeartbeat(ctx, req), nil
}

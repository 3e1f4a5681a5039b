package broker

// JoinGroup (key 11), versions 0-9.
//
// Joins a classic group (internal/group): the member-id-required round trip
// (v4+, KIP-394), static membership (v5+, KIP-345), protocol selection,
// session and rebalance timeouts bounded by group.min/max.session.timeout.ms,
// group.initial.rebalance.delay.ms and group.max.size. The request waits
// until the join phase completes, holding its connection, as Kafka's join
// purgatory does; the broker shutting down answers NOT_COORDINATOR.
//
// The client host is reported as Kafka does ("/" + address).
//
// Authorization (authz.go): READ on the group, else
// GROUP_AUTHORIZATION_FAILED.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(apiEntry{key: kmsg.JoinGroup, min: 0, max: 9, handle: typed(handleJoinGroup)})
}

func handleJoinGroup(b *Broker, c *conn, req *kmsg.JoinGroupRequest) (kmsg.Response, error) {
	if !b.authorize(c, kmsg.ACLOperationRead, kmsg.ACLResourceTypeGroup, req.Group) {
		resp := req.ResponseKind().(*kmsg.JoinGroupResponse)
		resp.ErrorCode, resp.Generation = kerr.GroupAuthorizationFailed.Code, -1
		return resp, nil
	}
	return b.groups.JoinGroup(b.tasks.Context(), req, c.clientID, clientHost(c)), nil
}

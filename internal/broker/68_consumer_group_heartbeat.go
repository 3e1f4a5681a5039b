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
// The protocol is on while the finalized group.version is 1 or more
// (KIP-848, KIP-1022): at 0 every request is answered UNSUPPORTED_VERSION
// before anything else, as Kafka's KafkaApis does, and the consumers fall
// back to the classic protocol or fail.
//
// Authorization (authz.go): READ on the group, else
// GROUP_AUTHORIZATION_FAILED.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/group"
	"github.com/samsa-io/samsa/internal/metadata"
)

func init() {
	registerAPI(apiEntry{key: kmsg.ConsumerGroupHeartbeat, min: 0, max: 1, handle: typed(handleConsumerGroupHeartbeat)})
}

func handleConsumerGroupHeartbeat(b *Broker, c *conn, req *kmsg.ConsumerGroupHeartbeatRequest) (kmsg.Response, error) {
	if !b.consumerProtocolEnabled() {
		resp := req.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
		resp.ErrorCode = kerr.UnsupportedVersion.Code
		return resp, nil
	}
	if !b.authorize(c, kmsg.ACLOperationRead, kmsg.ACLResourceTypeGroup, req.Group) {
		resp := req.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
		resp.ErrorMessage = kmsg.StringPtr(kerr.GroupAuthorizationFailed.Description)
		return resp, nil
	}
	ctx := group.WithClient(b.tasks.Context(), c.clientID, clientHost(c))
	return b.groups.ConsumerGroupHeartbeat(ctx, req), nil
}

// consumerProtocolEnabled reports whether the finalized group.version turns
// the consumer group protocol (KIP-848) on, as Kafka's
// GroupVersion.isConsumerRebalanceProtocolSupported.
func (b *Broker) consumerProtocolEnabled() bool {
	img := b.meta.Load()
	return img != nil && img.Feature(metadata.FeatureGroupVersion) >= 1
}

package broker

// StreamsGroupHeartbeat (key 88), versions 0-1 (KIP-1071).
//
// The streams group protocol: Kafka Streams members (group.protocol=streams)
// join with their topology (epoch 0), heartbeat with their epoch, owned
// tasks and changelog offsets, and leave (-1, or -2 for a static member)
// through this one request; the coordinator derives tasks and internal
// topics from the topology, creates the missing repartition and changelog
// topics through the controller (group.Deps.CreateTopics, streamsgroups.go),
// and assigns active, standby and warm-up tasks. The logic is
// internal/group's; see the "Streams groups" section of
// docs/DESIGN-group.md.
//
//   - v1: AcceptableRecoveryLag in the answer; TopologyDescriptionRequired
//     is always false (topology descriptions, KIP-1331, are not stored).
//
// The protocol is on while the finalized streams.version is 1 or more (Kafka
// 4.2's default for a new cluster): at 0 every request is answered
// UNSUPPORTED_VERSION before anything else, as Kafka's KafkaApis does.
//
// Authorization (authz.go): READ on the group, else
// GROUP_AUTHORIZATION_FAILED. The internal topics are created only with
// CREATE on the cluster or on each topic, as Kafka checks; the others stay
// missing and the answer's MISSING_INTERNAL_TOPICS status says why.

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/group"
	"github.com/samsa-io/samsa/internal/metadata"
)

func init() {
	registerAPI(apiEntry{key: kmsg.StreamsGroupHeartbeat, min: 0, max: 1, handle: typed(handleStreamsGroupHeartbeat)})
}

func handleStreamsGroupHeartbeat(b *Broker, c *conn, req *kmsg.StreamsGroupHeartbeatRequest) (kmsg.Response, error) {
	if !b.streamsProtocolEnabled() {
		resp := req.ResponseKind().(*kmsg.StreamsGroupHeartbeatResponse)
		resp.ErrorCode = kerr.UnsupportedVersion.Code
		return resp, nil
	}
	if !b.authorize(c, kmsg.ACLOperationRead, kmsg.ACLResourceTypeGroup, req.Group) {
		resp := req.ResponseKind().(*kmsg.StreamsGroupHeartbeatResponse)
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
		resp.ErrorMessage = kmsg.StringPtr(kerr.GroupAuthorizationFailed.Description)
		return resp, nil
	}
	ctx := group.WithClient(b.tasks.Context(), c.clientID, clientHost(c))
	ctx = group.WithTopicCreation(ctx, func(topic string) bool {
		return b.authorizer() == nil || b.authorizeCluster(c, kmsg.ACLOperationCreate) ||
			b.authorize(c, kmsg.ACLOperationCreate, kmsg.ACLResourceTypeTopic, topic)
	})
	return b.groups.StreamsGroupHeartbeat(ctx, req), nil
}

// streamsProtocolEnabled reports whether the finalized streams.version turns
// the streams group protocol (KIP-1071) on, as Kafka's
// StreamsVersion.streamsGroupSupported.
func (b *Broker) streamsProtocolEnabled() bool {
	img := b.meta.Load()
	return img != nil && img.Feature(metadata.FeatureStreamsVersion) >= 1 &&
		slices.Contains(b.cfg.Values.List("group.coordinator.rebalance.protocols"), "streams")
}

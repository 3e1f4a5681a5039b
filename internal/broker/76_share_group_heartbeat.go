package broker

// ShareGroupHeartbeat (key 76), version 1 (KIP-932).
//
// The share group protocol: a member names itself, joins (epoch 0) with the
// topics it subscribes to, heartbeats, and leaves (-1) through this one
// request; the coordinator assigns partitions with the "simple" assignor,
// which may give one partition to several members, and hands each member
// its target at once (nothing is revoked). The heartbeat interval and
// session timeout are Kafka's defaults for group.share.heartbeat.interval.ms
// and group.share.session.timeout.ms (5s, 45s). Version 0 (Kafka 4.0's
// early access) is not served, as in Kafka 4.1+. The logic is
// internal/group's; see docs/DESIGN-group.md.
//
// Share groups are on while the finalized share.version is 1 or more
// (Kafka 4.2 starts new clusters there): at 0 every request is answered
// UNSUPPORTED_VERSION before anything else, as Kafka's KafkaApis does.
//
// Authorization (authz.go): READ on the group, else
// GROUP_AUTHORIZATION_FAILED; then DESCRIBE on every subscribed topic, else
// TOPIC_AUTHORIZATION_FAILED, as Kafka: a member may not learn of topics it
// may not describe.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/group"
	"github.com/samsa-io/samsa/internal/metadata"
)

func init() {
	registerAPI(apiEntry{key: kmsg.ShareGroupHeartbeat, min: 1, max: 1, handle: typed(handleShareGroupHeartbeat)})
}

func handleShareGroupHeartbeat(b *Broker, c *conn, req *kmsg.ShareGroupHeartbeatRequest) (kmsg.Response, error) {
	fail := func(e *kerr.Error) (kmsg.Response, error) {
		resp := req.ResponseKind().(*kmsg.ShareGroupHeartbeatResponse)
		resp.ErrorCode = e.Code
		if e != kerr.UnsupportedVersion {
			resp.ErrorMessage = kmsg.StringPtr(e.Description)
		}
		return resp, nil
	}
	if !b.shareGroupsEnabled() {
		return fail(kerr.UnsupportedVersion)
	}
	if !b.authorize(c, kmsg.ACLOperationRead, kmsg.ACLResourceTypeGroup, req.GroupID) {
		return fail(kerr.GroupAuthorizationFailed)
	}
	describe := b.authorizeEach(c, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeTopic)
	for _, t := range req.SubscribedTopicNames {
		if !describe(t) {
			return fail(kerr.TopicAuthorizationFailed)
		}
	}
	ctx := group.WithClient(b.tasks.Context(), c.clientID, clientHost(c))
	return b.groups.ShareGroupHeartbeat(ctx, req), nil
}

// shareGroupsEnabled reports whether the finalized share.version turns
// share groups (KIP-932) on, as Kafka's ShareVersion.supportsShareGroups.
func (b *Broker) shareGroupsEnabled() bool {
	img := b.meta.Load()
	return img != nil && img.Feature(metadata.FeatureShareVersion) >= 1
}

package broker

// UpdateFeatures (key 57), versions 0-2 (KIP-584; v1 adds validate_only and
// the upgrade type of KIP-778; v2 drops the per-feature results,
// KIP-1022). Every version is flexible.
//
// Changes finalized feature levels through the active controller
// (internal/controller's UpdateFeatures, Kafka's FeatureControlManager
// rules): all or nothing, the first refusal failing the request with
// INVALID_UPDATE_VERSION and Kafka's message. A level must be one every
// node supports: this version supports metadata.version 7-25 (3.3-IV3 to
// 4.0-IV3), transaction.version 0-2 and group.version 0-1, and refuses any
// other feature above 0: Samsa has no eligible leader replicas, share and
// streams groups are issue 21's, and kraft.version stays 0 for the reasons
// DESIGN-controller.md gives ("Dynamic quorum");
// every registered broker must support it too (BrokerRegistration carries
// the ranges). A lower level needs a downgrade type; metadata.version may
// only go down where no level in between changed the metadata records,
// and UNSAFE_DOWNGRADE is refused as Kafka 4 refuses it. The levels show
// in ApiVersions v3+ (DescribeFeatures is ApiVersions), with the metadata
// offset as their epoch, on every broker once its image has the change.
//
// Per version, as Kafka's controller answers: v0 and v1 list each feature
// of a successful request with no error, and a failed one only at the top
// level; v2 answers only at the top level. v0 has allow_downgrade instead
// of the upgrade type: true is SAFE_DOWNGRADE, false UPGRADE, as the
// field's definition says (Kafka's KRaft controller reads the v0 request's
// default upgrade type, UPGRADE, and so refuses every v0 downgrade).
// timeout_ms is not used: the controller answers once committed, as
// Kafka's does.
//
// In a quorum a broker that is not the active controller forwards the
// request and answers once its own image shows the new levels. ALTER on
// the cluster is needed, else CLUSTER_AUTHORIZATION_FAILED at the top
// level (Kafka's ControllerApis.handleUpdateFeatures).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/controller"
)

func init() {
	registerAPI(apiEntry{key: kmsg.UpdateFeatures, min: 0, max: 2, handle: typed(handleUpdateFeatures)})
}

func handleUpdateFeatures(b *Broker, c *conn, req *kmsg.UpdateFeaturesRequest) (kmsg.Response, error) {
	if !b.authorizeCluster(c, kmsg.ACLOperationAlter) {
		resp := req.ResponseKind().(*kmsg.UpdateFeaturesResponse)
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		return resp, nil
	}
	return b.forwardOr(c, req, func() kmsg.Response { return b.updateFeatures(req) })
}

func (b *Broker) updateFeatures(req *kmsg.UpdateFeaturesRequest) *kmsg.UpdateFeaturesResponse {
	resp := req.ResponseKind().(*kmsg.UpdateFeaturesResponse)
	updates := make([]controller.FeatureUpdate, len(req.FeatureUpdates))
	for i, u := range req.FeatureUpdates {
		updates[i] = controller.FeatureUpdate{Feature: u.Feature, Level: u.MaxVersionLevel, UpgradeType: u.UpgradeType}
		if req.Version == 0 {
			updates[i].UpgradeType = controller.UpgradeTypeUpgrade
			if u.AllowDowngrade {
				updates[i].UpgradeType = controller.UpgradeTypeSafeDowngrade
			}
		}
	}
	ctx, cancel := b.adminContext(0)
	defer cancel()
	code, msg := b.ctrl.UpdateFeatures(ctx, updates, req.ValidateOnly)
	b.catchUpMetadata()
	resp.ErrorCode, resp.ErrorMessage = code, optionalMessage(msg)
	if code == 0 && req.Version <= 1 {
		for _, u := range req.FeatureUpdates {
			r := kmsg.NewUpdateFeaturesResponseResult()
			r.Feature = u.Feature
			resp.Results = append(resp.Results, r)
		}
	}
	return resp
}

// awaitFeatures is awaitForwarded for UpdateFeatures: every level of a
// request the controller accepted, in the local image.
func (b *Broker) awaitFeatures(ctx context.Context, req *kmsg.UpdateFeaturesRequest, resp *kmsg.UpdateFeaturesResponse) {
	if req == nil || req.ValidateOnly || resp.ErrorCode != 0 {
		return
	}
	want := map[string]int16{} // a feature named twice: its last entry
	for _, u := range req.FeatureUpdates {
		want[u.Feature] = u.MaxVersionLevel
	}
	b.awaitImage(ctx, func() bool {
		img := b.ctrl.Image()
		for name, level := range want {
			if img.Feature(name) != level {
				return false
			}
		}
		return true
	})
}

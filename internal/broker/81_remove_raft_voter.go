package broker

// RemoveRaftVoter (key 81), version 0 (KIP-853), on every listener.
//
// Takes a controller out of the voters of the metadata quorum, what
// kafka-metadata-quorum.sh remove-controller sends. The active controller
// (controller.RemoveVoter) removes it from the Raft configuration and
// answers once that is committed; a removed leader steps down and the
// remaining voters elect one, as Kafka's removed leader resigns. The
// removed node keeps running outside the configuration, with no vote.
//
// Errors, as Kafka's leader answers them: INCONSISTENT_CLUSTER_ID,
// NOT_LEADER_OR_FOLLOWER, UNSUPPORTED_VERSION and REQUEST_TIMED_OUT as
// AddRaftVoter; VOTER_NOT_FOUND for a node that is not a voter, or the
// last one. VoterDirectoryId is not checked (Samsa keeps no directory
// IDs).
//
// A broker that is not the active controller forwards the request, as
// Kafka's KafkaApis does. Authorization (authz.go): ALTER on the cluster,
// else CLUSTER_AUTHORIZATION_FAILED (Kafka's
// ControllerApis.handleRemoveRaftVoter), checked before forwarding.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/model"
)

func init() {
	registerAPI(apiEntry{key: kmsg.RemoveRaftVoter, min: 0, max: 0, handle: typed(handleRemoveRaftVoter)})
}

func handleRemoveRaftVoter(b *Broker, c *conn, req *kmsg.RemoveRaftVoterRequest) (kmsg.Response, error) {
	if !b.authorizeCluster(c, kmsg.ACLOperationAlter) {
		return removeRaftVoterResponse(req, kerr.ClusterAuthorizationFailed, ""), nil
	}
	return b.forwardOr(c, req, func() kmsg.Response { return b.removeRaftVoter(req) })
}

func (b *Broker) removeRaftVoter(req *kmsg.RemoveRaftVoterRequest) *kmsg.RemoveRaftVoterResponse {
	if req.ClusterID != nil && *req.ClusterID != b.ctrl.Image().ClusterID() {
		return removeRaftVoterResponse(req, kerr.InconsistentClusterID, "")
	}
	ctx, cancel := b.adminContext(int32(controllerRequestTimeout.Milliseconds()))
	defer cancel()
	code, msg := b.ctrl.RemoveVoter(ctx, model.NodeID(req.VoterID))
	return removeRaftVoterResponse(req, quorumLeaderError(code), msg)
}

func removeRaftVoterResponse(req *kmsg.RemoveRaftVoterRequest, code *kerr.Error, msg string) *kmsg.RemoveRaftVoterResponse {
	resp := req.ResponseKind().(*kmsg.RemoveRaftVoterResponse)
	if code != nil {
		resp.ErrorCode = code.Code
		if msg == "" {
			msg = code.Description
		}
		resp.ErrorMessage = kmsg.StringPtr(msg)
	}
	return resp
}

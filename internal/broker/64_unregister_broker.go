package broker

// UnregisterBroker (key 64), version 0 (KIP-631; Kafka 3.x's Admin
// unregisterBroker, kafka-cluster.sh unregister, samsa cluster decommission).
//
// Removes a broker's registration once it has been decommissioned: its
// replicas drained off it, its process stopped. The active controller
// (controller.UnregisterBroker) takes it out of every ISR and every
// leadership and drops the registration in one batch, as Kafka's
// ReplicationControlManager does; its replicas stay in the replica lists
// (draining them is the operator's part, before), and a broker-only node
// also leaves the metadata quorum's non-voters. The request is answered
// once this node's image no longer lists the broker, so a DescribeCluster
// sent next does not show it.
//
// A broker that is still running is not refused, as in Kafka, but it does
// not stay away: its next heartbeat finds its epoch gone and it registers
// again, fenced, then rejoins once caught up (Kafka's broker instead keeps
// heartbeating STALE_BROKER_EPOCH until it restarts). Stop it first.
//
// Errors: BROKER_ID_NOT_REGISTERED for a broker ID the cluster has no
// registration for (Kafka's BrokerIdNotRegisteredException);
// NOT_CONTROLLER or REQUEST_TIMED_OUT when the commit fails. On a single
// node (no quorum) the node's own broker is the only one and is never
// unregistered: INVALID_REQUEST.
//
// A broker that is not the active controller forwards the request (Kafka's
// KafkaApis forwards UNREGISTER_BROKER too). Authorization (authz.go):
// ALTER on the cluster, else CLUSTER_AUTHORIZATION_FAILED (Kafka's
// ControllerApis.handleUnregisterBroker), checked before forwarding.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/model"
)

func init() {
	registerAPI(apiEntry{key: kmsg.UnregisterBroker, min: 0, max: 0, handle: typed(handleUnregisterBroker)})
}

func handleUnregisterBroker(b *Broker, c *conn, req *kmsg.UnregisterBrokerRequest) (kmsg.Response, error) {
	if !b.authorizeCluster(c, kmsg.ACLOperationAlter) {
		return unregisterBrokerResponse(req, kerr.ClusterAuthorizationFailed, ""), nil
	}
	return b.forwardOr(c, req, func() kmsg.Response { return b.unregisterBroker(req) })
}

func (b *Broker) unregisterBroker(req *kmsg.UnregisterBrokerRequest) *kmsg.UnregisterBrokerResponse {
	id := model.NodeID(req.BrokerID)
	if !b.cfg.quorum.cluster() && req.BrokerID == b.cfg.NodeID {
		return unregisterBrokerResponse(req, kerr.InvalidRequest,
			"this single node's broker is the only one and cannot be unregistered")
	}
	ctx, cancel := b.adminContext(int32(controllerRequestTimeout.Milliseconds()))
	defer cancel()
	code, msg := b.ctrl.UnregisterBroker(ctx, id)
	if code == nil {
		b.catchUpMetadata()
	}
	return unregisterBrokerResponse(req, code, msg)
}

func unregisterBrokerResponse(req *kmsg.UnregisterBrokerRequest, code *kerr.Error, msg string) *kmsg.UnregisterBrokerResponse {
	resp := req.ResponseKind().(*kmsg.UnregisterBrokerResponse)
	if code != nil {
		resp.ErrorCode = code.Code
		if msg == "" {
			msg = code.Description
		}
		resp.ErrorMessage = kmsg.StringPtr(msg)
	}
	return resp
}

package broker

// BrokerHeartbeat (key 63), versions 0-1, controller listeners only.
//
// Every broker.heartbeat.interval.ms a registered broker tells the active
// controller it is alive and how far it has applied the metadata log
// (KIP-631). The controller unfences a caught-up broker, fences one whose
// heartbeats stopped for broker.session.timeout.ms, and runs controlled
// shutdown for one that sets WantShutdown: its leaderships move to other
// in-sync replicas, and ShouldShutdown says when it leads nothing.
// STALE_BROKER_EPOCH for a heartbeat of an earlier registration;
// NOT_CONTROLLER from a controller that is not active. OfflineLogDirs
// (KIP-858, JBOD): the broker's failed log directories; the controller
// takes the replicas assigned to them out of their ISRs and leaderships
// in one batch (logdirs.go). CordonedLogDirs (KIP-1066) is not read.
//
// Authorization (authz.go): CLUSTER_ACTION on the cluster, else
// CLUSTER_AUTHORIZATION_FAILED. Nodes ask as ANONYMOUS over PLAINTEXT, so
// a cluster with an authorizer has User:ANONYMOUS in super.users.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/controller"
	"github.com/samsa-io/samsa/internal/model"
)

func init() {
	registerAPI(apiEntry{key: kmsg.BrokerHeartbeat, min: 0, max: 1, controllerOnly: true, handle: typed(handleBrokerHeartbeat)})
}

func handleBrokerHeartbeat(b *Broker, c *conn, req *kmsg.BrokerHeartbeatRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.BrokerHeartbeatResponse)
	if !b.authorizeCluster(c, kmsg.ACLOperationClusterAction) {
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		return resp, nil
	}
	ctx, cancel := context.WithTimeout(b.tasks.Context(), controllerRequestTimeout)
	defer cancel()
	res := b.ctrl.BrokerHeartbeat(ctx, controller.Heartbeat{
		NodeID: model.NodeID(req.BrokerID), Epoch: req.BrokerEpoch, AppliedOffset: req.CurrentMetadataOffset,
		WantFence: req.WantFence, WantShutDown: req.WantShutdown,
		OfflineLogDirs: dirIDsFromWire(req.OfflineLogDirs),
	})
	if res.Err != nil {
		resp.ErrorCode = res.Err.Code
		resp.IsFenced = true
		return resp, nil
	}
	resp.IsCaughtUp, resp.IsFenced, resp.ShouldShutdown = res.IsCaughtUp, res.IsFenced, res.ShouldShutDown
	return resp, nil
}

package broker

// AllocateProducerIds (key 67), version 0, controller listeners only.
//
// A broker takes a block of producer IDs from the active controller
// (KIP-730) and hands them out to InitProducerId callers; the block is
// recorded in the metadata log before the answer, so no ID is given twice
// even across controller failover. NOT_CONTROLLER from a controller that is
// not active. The broker epoch is not checked: a block given to a stale
// incarnation is merely unused.
//
// Authorization (authz.go): CLUSTER_ACTION on the cluster, else
// CLUSTER_AUTHORIZATION_FAILED. Nodes ask as ANONYMOUS over PLAINTEXT, so
// a cluster with an authorizer has User:ANONYMOUS in super.users.

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(apiEntry{key: kmsg.AllocateProducerIDs, min: 0, max: 0, controllerOnly: true, handle: typed(handleAllocateProducerIDs)})
}

func handleAllocateProducerIDs(b *Broker, c *conn, req *kmsg.AllocateProducerIDsRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.AllocateProducerIDsResponse)
	if !b.authorizeCluster(c, kmsg.ACLOperationClusterAction) {
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		return resp, nil
	}
	if !b.ctrl.Active() {
		resp.ErrorCode = kerr.NotController.Code
		return resp, nil
	}
	ctx, cancel := context.WithTimeout(b.tasks.Context(), controllerRequestTimeout)
	defer cancel()
	first, count, err := b.ctrl.AllocateProducerIDs(ctx)
	if err != nil {
		var ke *kerr.Error
		resp.ErrorCode = kerr.UnknownServerError.Code
		if errors.As(err, &ke) {
			resp.ErrorCode = ke.Code
		}
		return resp, nil
	}
	resp.ProducerIDStart, resp.ProducerIDLen = first, int32(count)
	return resp, nil
}

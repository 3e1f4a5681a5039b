package broker

// AlterPartition (key 56), versions 2-3, controller listeners only.
//
// A partition leader proposes a new ISR at the leader and partition epochs
// it holds (KIP-497); the active controller commits it or says why not
// (controller.AlterPartition: FENCED_LEADER_EPOCH, INVALID_UPDATE_VERSION,
// INELIGIBLE_REPLICA, NOT_LEADER_OR_FOLLOWER). An ISR that completes a
// reassignment (KIP-455) commits its end in the same record, and answers
// NEW_LEADER_ELECTED when that moved leadership off the sender, as Kafka's
// controller does for v2+. Versions 0-1 name topics by
// name and are not served: every Samsa node speaks v2+. v3's NewEpochISR
// carries broker epochs (KIP-903); the ISR is taken from its IDs, and a
// member's epoch is not checked against its registration.
// LeaderRecoveryState (KIP-704) is always RECOVERED: an unclean election
// here needs no recovery step.
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
	registerAPI(apiEntry{key: kmsg.AlterPartition, min: 2, max: 3, controllerOnly: true, handle: typed(handleAlterPartition)})
}

func handleAlterPartition(b *Broker, c *conn, req *kmsg.AlterPartitionRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.AlterPartitionResponse)
	if !b.authorizeCluster(c, kmsg.ACLOperationClusterAction) {
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		return resp, nil
	}
	var changes []controller.ISRChange
	for _, t := range req.Topics {
		for _, p := range t.Partitions {
			ch := controller.ISRChange{TopicID: model.TopicID(t.TopicID), Partition: p.Partition,
				LeaderEpoch: p.LeaderEpoch, PartitionEpoch: p.PartitionEpoch}
			if req.Version >= 3 {
				for _, e := range p.NewEpochISR {
					ch.ISR = append(ch.ISR, model.NodeID(e.BrokerID))
				}
			} else {
				for _, id := range p.NewISR {
					ch.ISR = append(ch.ISR, model.NodeID(id))
				}
			}
			changes = append(changes, ch)
		}
	}
	ctx, cancel := context.WithTimeout(b.tasks.Context(), controllerRequestTimeout)
	defer cancel()
	results, err := b.ctrl.AlterPartition(ctx, model.NodeID(req.BrokerID), req.BrokerEpoch, changes)
	if err != nil {
		resp.ErrorCode = err.Code
		return resp, nil
	}
	i := 0
	for _, t := range req.Topics {
		rt := kmsg.NewAlterPartitionResponseTopic()
		rt.TopidID = t.TopicID // sic, kmsg's spelling
		for _, p := range t.Partitions {
			r := results[i]
			i++
			rp := kmsg.NewAlterPartitionResponseTopicPartition()
			rp.Partition = p.Partition
			if r.Err != nil {
				rp.ErrorCode = r.Err.Code
			}
			rp.LeaderID, rp.LeaderEpoch, rp.PartitionEpoch = int32(r.Leader), r.LeaderEpoch, r.PartitionEpoch
			for _, id := range r.ISR {
				rp.ISR = append(rp.ISR, int32(id))
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}

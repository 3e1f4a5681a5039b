package broker

// ListPartitionReassignments (key 46), version 0.
//
// Lists the reassignments in progress (KIP-455): per partition its full
// replica set (target and removed replicas) and the adding and removing
// replicas. A null topic list means every reassigning partition; named
// topics and partitions that are unknown or not being reassigned are left
// out, as Kafka's controller does. Answered from the active controller's
// image (forwarded there like the writes, forward.go), so a client that
// just altered a reassignment through any broker sees it.
//
// Authorization (authz.go): DESCRIBE on the cluster, else
// CLUSTER_AUTHORIZATION_FAILED as the top-level error.

import (
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/controller"
	"github.com/samsa-io/samsa/internal/model"
)

func init() {
	registerAPI(apiEntry{key: kmsg.ListPartitionReassignments, min: 0, max: 0, handle: typed(handleListPartitionReassignments)})
}

func handleListPartitionReassignments(b *Broker, c *conn, req *kmsg.ListPartitionReassignmentsRequest) (kmsg.Response, error) {
	if !b.authorizeCluster(c, kmsg.ACLOperationDescribe) {
		resp := req.ResponseKind().(*kmsg.ListPartitionReassignmentsResponse)
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		return resp, nil
	}
	return b.forwardOr(c, req, func() kmsg.Response { return b.listPartitionReassignments(req) })
}

func (b *Broker) listPartitionReassignments(req *kmsg.ListPartitionReassignmentsRequest) *kmsg.ListPartitionReassignmentsResponse {
	resp := req.ResponseKind().(*kmsg.ListPartitionReassignmentsResponse)
	var topics map[string][]int32 // nil: every topic
	if req.Topics != nil {
		topics = map[string][]int32{}
		for _, rt := range req.Topics {
			topics[rt.Topic] = append(topics[rt.Topic], rt.Partitions...)
		}
	}
	ongoing := controller.ListPartitionReassignments(b.ctrl.Image(), topics)
	for _, name := range slices.Sorted(maps.Keys(ongoing)) {
		st := kmsg.NewListPartitionReassignmentsResponseTopic()
		st.Topic = name
		for _, o := range ongoing[name] {
			sp := kmsg.NewListPartitionReassignmentsResponseTopicPartition()
			sp.Partition = o.Partition
			sp.Replicas, sp.AddingReplicas, sp.RemovingReplicas = int32s(o.Replicas), int32s(o.AddingReplicas), int32s(o.RemovingReplicas)
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}

// int32s is a replica list on the wire: never null.
func int32s(ids []model.NodeID) []int32 {
	out := make([]int32, len(ids))
	for i, id := range ids {
		out[i] = int32(id)
	}
	return out
}

package broker

// AlterPartitionReassignments (key 45), versions 0-1.
//
// Moves partitions to other replicas while they serve (KIP-455,
// kafka-reassign-partitions.sh, kadm's AlterPartitionAssignments). The
// controller decides as Kafka's KRaft controller does
// (controller.AlterPartitionReassignments): the partition's replicas
// become the target followed by the replicas it removes, with the
// difference recorded as adding and removing replicas; the new replicas
// fetch from the leader like any follower, and the AlterPartition that
// brings the last of them into the ISR completes the move in the same
// record (the removed replicas leave the replicas and ISR, a removed
// leader hands over to the first target replica in the ISR, and the
// brokers that no longer host the partition delete its log). Null
// replicas cancel the move in progress, back to the replicas before it.
// A broker that is not the active controller forwards the request
// (forward.go) and answers once its own image shows the change.
//
// Errors per partition, as Kafka's: UNKNOWN_TOPIC_OR_PARTITION;
// INVALID_REPLICA_ASSIGNMENT for an empty list, a broker given twice or
// not registered, or a cancel that would need an unclean election the
// topic does not allow; NO_REASSIGNMENT_IN_PROGRESS for a cancel with
// none. NOT_CONTROLLER or REQUEST_TIMED_OUT (TimeoutMillis before the
// commit; zero or negative leaves the bound to the controller) for every
// partition of a failed commit. v1 adds AllowReplicationFactorChange
// (KIP-860, Kafka 4.1): false refuses a target whose size is not the
// partition's replica count (the count before the move in progress) with
// INVALID_REPLICATION_FACTOR; the response echoes the flag.
//
// Authorization (authz.go): ALTER on the cluster, else the whole request
// fails with CLUSTER_AUTHORIZATION_FAILED, checked by the broker the
// client reached before it forwards, as Kafka's ControllerApis.
//
// Throttling a move is not this request's: kafka-reassign-partitions.sh
// --throttle sets the replication throttles' configs around it
// (replication_throttle.go).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/controller"
	"github.com/samsa-io/samsa/internal/model"
)

func init() {
	registerAPI(apiEntry{key: kmsg.AlterPartitionAssignments, min: 0, max: 1, handle: typed(handleAlterPartitionReassignments)})
}

func handleAlterPartitionReassignments(b *Broker, c *conn, req *kmsg.AlterPartitionAssignmentsRequest) (kmsg.Response, error) {
	if !b.authorizeCluster(c, kmsg.ACLOperationAlter) {
		return alterReassignmentsFailed(req, kerr.ClusterAuthorizationFailed, ""), nil
	}
	return b.forwardOr(c, req, func() kmsg.Response { return b.alterPartitionReassignments(req) })
}

func (b *Broker) alterPartitionReassignments(req *kmsg.AlterPartitionAssignmentsRequest) *kmsg.AlterPartitionAssignmentsResponse {
	allowRF := req.Version < 1 || req.AllowReplicationFactorChange
	topics := make([]controller.ReassignTopic, len(req.Topics))
	for i, rt := range req.Topics {
		topics[i].Name = rt.Topic
		for _, rp := range rt.Partitions {
			p := controller.ReassignPartition{Partition: rp.Partition}
			if rp.Replicas != nil {
				p.Replicas = make([]model.NodeID, len(rp.Replicas))
				for j, id := range rp.Replicas {
					p.Replicas[j] = model.NodeID(id)
				}
			}
			topics[i].Partitions = append(topics[i].Partitions, p)
		}
	}
	ctx, cancel := b.adminContext(req.TimeoutMillis)
	defer cancel()
	results, code := b.ctrl.AlterPartitionReassignments(ctx, allowRF, topics)
	if code != nil {
		return alterReassignmentsFailed(req, code, "")
	}
	b.catchUpMetadata()
	resp := req.ResponseKind().(*kmsg.AlterPartitionAssignmentsResponse)
	resp.AllowReplicationFactorChange = allowRF
	i := 0
	for _, rt := range req.Topics {
		st := kmsg.NewAlterPartitionAssignmentsResponseTopic()
		st.Topic = rt.Topic
		for range rt.Partitions {
			r := results[i]
			i++
			sp := kmsg.NewAlterPartitionAssignmentsResponseTopicPartition()
			sp.Partition, sp.ErrorCode = r.Partition, r.ErrorCode
			if r.ErrorMessage != "" {
				sp.ErrorMessage = kmsg.StringPtr(r.ErrorMessage)
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp
}

// alterReassignmentsFailed is Kafka's error response
// (AlterPartitionReassignmentsRequest.getErrorResponse): the top-level
// error, and the same error for every partition asked about. The Java
// Admin reads the partitions and, finding none, fails with "too less
// results" instead of the error.
func alterReassignmentsFailed(req *kmsg.AlterPartitionAssignmentsRequest, err *kerr.Error, msg string) *kmsg.AlterPartitionAssignmentsResponse {
	resp := req.ResponseKind().(*kmsg.AlterPartitionAssignmentsResponse)
	resp.AllowReplicationFactorChange = req.Version < 1 || req.AllowReplicationFactorChange
	resp.ErrorCode = err.Code
	var message *string
	if msg != "" {
		message = kmsg.StringPtr(msg)
	}
	resp.ErrorMessage = message
	for _, t := range req.Topics {
		rt := kmsg.NewAlterPartitionAssignmentsResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewAlterPartitionAssignmentsResponseTopicPartition()
			rp.Partition, rp.ErrorCode, rp.ErrorMessage = p.Partition, err.Code, message
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

package broker

// AssignReplicasToDirs (key 73), version 0, controller listeners only.
//
// A broker tells the active controller which of its log directories each
// of its replicas is in (KIP-858, JBOD): after placing a new replica,
// after a move between directories (AlterReplicaLogDirs), and when it
// finds a replica elsewhere than the metadata says. The controller records
// it in the partition's Directories (controller.AssignReplicasToDirs); a
// replica assigned to a directory its broker has not online is taken out
// of its ISR and leadership. STALE_BROKER_EPOCH (the whole request) for an
// earlier registration; per partition UNKNOWN_TOPIC_ID,
// UNKNOWN_TOPIC_OR_PARTITION, or NOT_LEADER_OR_FOLLOWER for a partition
// the broker does not replicate; NOT_CONTROLLER from a controller that is
// not active.
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
	registerAPI(apiEntry{key: kmsg.AssignReplicasToDirs, min: 0, max: 0, controllerOnly: true, handle: typed(handleAssignReplicasToDirs)})
}

func handleAssignReplicasToDirs(b *Broker, c *conn, req *kmsg.AssignReplicasToDirsRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.AssignReplicasToDirsResponse)
	if !b.authorizeCluster(c, kmsg.ACLOperationClusterAction) {
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		return resp, nil
	}
	var as []controller.DirAssignment
	for _, d := range req.Directories {
		for _, t := range d.Topics {
			for _, p := range t.Partitions {
				as = append(as, controller.DirAssignment{TopicID: model.TopicID(t.TopicID), Partition: p.Partition, Directory: fromKafkaUUID(d.ID)})
			}
		}
	}
	ctx, cancel := context.WithTimeout(b.tasks.Context(), controllerRequestTimeout)
	defer cancel()
	errs, refused := b.ctrl.AssignReplicasToDirs(ctx, model.NodeID(req.BrokerID), req.BrokerEpoch, as)
	if refused != nil {
		resp.ErrorCode = refused.Code
		return resp, nil
	}
	i := 0
	for _, d := range req.Directories {
		rd := kmsg.NewAssignReplicasToDirsResponseDirectory()
		rd.ID = d.ID
		for _, t := range d.Topics {
			rt := kmsg.NewAssignReplicasToDirsResponseDirectoryTopic()
			rt.TopicID = t.TopicID
			for _, p := range t.Partitions {
				rp := kmsg.NewAssignReplicasToDirsResponseDirectoryTopicPartition()
				rp.Partition = p.Partition
				if errs[i] != nil {
					rp.ErrorCode = errs[i].Code
				}
				i++
				rt.Partitions = append(rt.Partitions, rp)
			}
			rd.Topics = append(rd.Topics, rt)
		}
		resp.Directories = append(resp.Directories, rd)
	}
	return resp, nil
}

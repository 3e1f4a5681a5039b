package broker

// DeleteShareGroupState (key 86), version 0 (KIP-932), between brokers:
// forget share-partitions' state on the share coordinator
// (internal/sharecoord), with a tombstone in __share_group_state. A key
// with no state is no error. Authorization: CLUSTER_ACTION on the cluster.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/share"
)

func init() {
	registerAPI(apiEntry{key: kmsg.DeleteShareGroupState, min: 0, max: 0, handle: typed(handleDeleteShareGroupState)})
}

func handleDeleteShareGroupState(b *Broker, c *conn, req *kmsg.DeleteShareGroupStateRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.DeleteShareGroupStateResponse)
	refused := !b.authorizeCluster(c, kmsg.ACLOperationClusterAction)
	ctx, cancel := context.WithTimeout(b.tasks.Context(), shareStateWait)
	defer cancel()
	for _, t := range req.Topics {
		rt := kmsg.NewDeleteShareGroupStateResponseTopic()
		rt.TopicID = t.TopicID
		for _, p := range t.Partitions {
			rp := kmsg.NewDeleteShareGroupStateResponseTopicPartition()
			rp.Partition = p.Partition
			if refused {
				rp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
			} else {
				rp.ErrorCode = b.shareCoord.Delete(ctx, share.Key{Group: req.GroupID, TopicID: t.TopicID, Partition: p.Partition})
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}

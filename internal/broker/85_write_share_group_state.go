package broker

// WriteShareGroupState (key 85), versions 0-1 (KIP-932), between brokers:
// a share-partition leader stores its state on the share coordinator
// (internal/sharecoord), answered once committed. An older state epoch
// than stored is FENCED_STATE_EPOCH, an older leader epoch than a
// reader's FENCED_LEADER_EPOCH. v1's DeliveryCompleteCount is recomputed
// from the batches. Authorization: CLUSTER_ACTION on the cluster.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/share"
)

func init() {
	registerAPI(apiEntry{key: kmsg.WriteShareGroupState, min: 0, max: 1, handle: typed(handleWriteShareGroupState)})
}

func handleWriteShareGroupState(b *Broker, c *conn, req *kmsg.WriteShareGroupStateRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.WriteShareGroupStateResponse)
	refused := !b.authorizeCluster(c, kmsg.ACLOperationClusterAction)
	ctx, cancel := context.WithTimeout(b.tasks.Context(), shareStateWait)
	defer cancel()
	for _, t := range req.Topics {
		rt := kmsg.NewWriteShareGroupStateResponseTopic()
		rt.TopicID = t.TopicID
		for _, p := range t.Partitions {
			rp := kmsg.NewWriteShareGroupStateResponseTopicPartition()
			rp.Partition = p.Partition
			if refused {
				rp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
			} else {
				batches := make([]share.StateBatch, 0, len(p.StateBatches))
				for _, sb := range p.StateBatches {
					batches = append(batches, share.StateBatch{FirstOffset: sb.FirstOffset, LastOffset: sb.LastOffset,
						DeliveryState: share.RecordState(sb.DeliveryState), DeliveryCount: sb.DeliveryCount})
				}
				rp.ErrorCode = b.shareCoord.Write(ctx, share.Key{Group: req.GroupID, TopicID: t.TopicID, Partition: p.Partition},
					p.StateEpoch, p.LeaderEpoch, p.StartOffset, batches)
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}

package broker

// ReadShareGroupState (key 84), version 0 (KIP-932), between brokers: a
// share-partition leader reads its state from the share coordinator
// (internal/sharecoord), which records the reader's leader epoch so older
// leaders' writes are fenced. A key with no state is
// UNKNOWN_TOPIC_OR_PARTITION, as Kafka answers it. Authorization:
// CLUSTER_ACTION on the cluster.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/share"
)

func init() {
	registerAPI(apiEntry{key: kmsg.ReadShareGroupState, min: 0, max: 0, handle: typed(handleReadShareGroupState)})
}

func handleReadShareGroupState(b *Broker, c *conn, req *kmsg.ReadShareGroupStateRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.ReadShareGroupStateResponse)
	refused := !b.authorizeCluster(c, kmsg.ACLOperationClusterAction)
	ctx, cancel := context.WithTimeout(b.tasks.Context(), shareStateWait)
	defer cancel()
	for _, t := range req.Topics {
		rt := kmsg.NewReadShareGroupStateResponseTopic()
		rt.TopicID = t.TopicID
		for _, p := range t.Partitions {
			rp := kmsg.NewReadShareGroupStateResponseTopicPartition()
			rp.Partition, rp.StateEpoch, rp.StartOffset = p.Partition, -1, -1
			if refused {
				rp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
				rt.Partitions = append(rt.Partitions, rp)
				continue
			}
			st, found, code := b.shareCoord.Read(ctx, share.Key{Group: req.GroupID, TopicID: t.TopicID, Partition: p.Partition}, p.LeaderEpoch)
			switch {
			case code != 0:
				rp.ErrorCode = code
			case !found:
				rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			default:
				rp.StateEpoch, rp.StartOffset = st.StateEpoch, st.StartOffset
				for _, sb := range st.Batches {
					b := kmsg.NewReadShareGroupStateResponseTopicPartitionStateBatch()
					b.FirstOffset, b.LastOffset, b.DeliveryState, b.DeliveryCount = sb.FirstOffset, sb.LastOffset, int8(sb.DeliveryState), sb.DeliveryCount
					rp.StateBatches = append(rp.StateBatches, b)
				}
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}

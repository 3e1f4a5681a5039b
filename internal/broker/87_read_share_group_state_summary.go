package broker

// ReadShareGroupStateSummary (key 87), versions 0-1 (KIP-932), between
// brokers: share-partitions' state epoch, leader epoch, start offset and
// (v1) delivery-complete count, from the share coordinator
// (internal/sharecoord), for DescribeShareGroupOffsets. A key with no
// state is UNKNOWN_TOPIC_OR_PARTITION. Authorization: CLUSTER_ACTION on
// the cluster.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/share"
)

func init() {
	registerAPI(apiEntry{key: kmsg.ReadShareGroupStateSummary, min: 0, max: 1, handle: typed(handleReadShareGroupStateSummary)})
}

func handleReadShareGroupStateSummary(b *Broker, c *conn, req *kmsg.ReadShareGroupStateSummaryRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.ReadShareGroupStateSummaryResponse)
	refused := !b.authorizeCluster(c, kmsg.ACLOperationClusterAction)
	for _, t := range req.Topics {
		rt := kmsg.NewReadShareGroupStateSummaryResponseTopic()
		rt.TopicID = t.TopicID
		for _, p := range t.Partitions {
			rp := kmsg.NewReadShareGroupStateSummaryResponseTopicPartition()
			rp.Partition, rp.StateEpoch, rp.LeaderEpoch, rp.StartOffset = p.Partition, -1, -1, -1
			if refused {
				rp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
				rt.Partitions = append(rt.Partitions, rp)
				continue
			}
			st, found, code := b.shareCoord.Summary(share.Key{Group: req.GroupID, TopicID: t.TopicID, Partition: p.Partition})
			switch {
			case code != 0:
				rp.ErrorCode = code
			case !found:
				rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			default:
				rp.StateEpoch, rp.LeaderEpoch, rp.StartOffset = st.StateEpoch, st.LeaderEpoch, st.StartOffset
				rp.DeliveryCompleteCount = int32(min(st.DeliveryComplete, 1<<31-1))
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}

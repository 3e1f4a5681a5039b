package broker

// InitializeShareGroupState (key 83), version 0 (KIP-932), between
// brokers: (re)start share-partitions' state at a start offset with a
// state epoch, on the share coordinator of each key (internal/sharecoord).
// A key whose __share_group_state partition is not led here is
// NOT_COORDINATOR. Authorization: CLUSTER_ACTION on the cluster.

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/share"
)

func init() {
	registerAPI(apiEntry{key: kmsg.InitializeShareGroupState, min: 0, max: 0, handle: typed(handleInitializeShareGroupState)})
}

// shareStateWait bounds an inter-broker share-state request's write.
const shareStateWait = 30 * time.Second

func handleInitializeShareGroupState(b *Broker, c *conn, req *kmsg.InitializeShareGroupStateRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.InitializeShareGroupStateResponse)
	refused := !b.authorizeCluster(c, kmsg.ACLOperationClusterAction)
	ctx, cancel := context.WithTimeout(b.tasks.Context(), shareStateWait)
	defer cancel()
	for _, t := range req.Topics {
		rt := kmsg.NewInitializeShareGroupStateResponseTopic()
		rt.TopicID = t.TopicID
		for _, p := range t.Partitions {
			rp := kmsg.NewInitializeShareGroupStateResponseTopicPartition()
			rp.Partition = p.Partition
			if refused {
				rp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
			} else {
				rp.ErrorCode = b.shareCoord.Initialize(ctx, share.Key{Group: req.GroupID, TopicID: t.TopicID, Partition: p.Partition}, p.StateEpoch, p.StartOffset)
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}

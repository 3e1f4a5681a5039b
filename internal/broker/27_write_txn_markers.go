package broker

// WriteTxnMarkers (key 27), versions 0-1.
//
// Writes transaction markers (control batches) to partitions this broker
// leads: the transaction coordinator's request to partition leaders on
// other brokers (writeMarkers; a coordinator writes the markers of the
// partitions it leads itself). Each marker is answered once it is on every
// ISR member, as Kafka's acks=-1 marker append, bounded by 30 s (Kafka's
// request.timeout.ms for the marker channel). Per-partition errors:
// UNKNOWN_TOPIC_OR_PARTITION for a missing partition, NOT_LEADER_OR_FOLLOWER
// where this broker does not lead, NOT_ENOUGH_REPLICAS below
// min.insync.replicas, the append's or the wait's error otherwise.
//
// Authorization (authz.go), as Kafka's: ALTER on the cluster (documented)
// or CLUSTER_ACTION (what brokers have), else every partition is
// CLUSTER_AUTHORIZATION_FAILED.
//
// Not yet: v2 (transaction version in the marker, KIP-890) is not
// advertised.

import (
	"context"
	"errors"
	"time"

	"github.com/samsa-io/samsa/internal/model"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(apiEntry{key: kmsg.WriteTxnMarkers, min: 0, max: 1, handle: typed(handleWriteTxnMarkers)})
}

// markerWait bounds how long a WriteTxnMarkers request waits for its
// markers to be committed.
const markerWait = 30 * time.Second

func handleWriteTxnMarkers(b *Broker, c *conn, req *kmsg.WriteTxnMarkersRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.WriteTxnMarkersResponse)
	refused := !b.permitsCluster(c, kmsg.ACLOperationAlter) && !b.authorizeCluster(c, kmsg.ACLOperationClusterAction)
	ctx, cancel := context.WithTimeout(b.tasks.Context(), markerWait)
	defer cancel()
	for _, m := range req.Markers {
		rm := kmsg.NewWriteTxnMarkersResponseMarker()
		rm.ProducerID = m.ProducerID
		for _, t := range m.Topics {
			rt := kmsg.NewWriteTxnMarkersResponseMarkerTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewWriteTxnMarkersResponseMarkerTopicPartition()
				rp.Partition = p
				if refused {
					rp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
				} else if !b.topicExists(t.Topic, p) {
					rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
				} else if err := b.writeMarker(ctx, m.ProducerID, m.ProducerEpoch, m.Committed, m.CoordinatorEpoch, model.TopicPartition{Topic: t.Topic, Partition: p}); err != nil {
					rp.ErrorCode = markerErrorCode(err)
				}
				rt.Partitions = append(rt.Partitions, rp)
			}
			rm.Topics = append(rm.Topics, rt)
		}
		resp.Markers = append(resp.Markers, rm)
	}
	return resp, nil
}

func markerErrorCode(err error) int16 {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Code
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return kerr.RequestTimedOut.Code
	}
	code, _ := appendErrorCode(err)
	return code
}

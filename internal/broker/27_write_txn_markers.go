package broker

// WriteTxnMarkers (key 27), versions 0-1.
//
// Writes transaction markers (control batches) to partitions this broker
// leads: the transaction coordinator's request to partition leaders. On a
// single node the coordinator writes its markers in process (writeMarkers);
// this API serves the same path to tools and tests. Per-partition errors:
// UNKNOWN_TOPIC_OR_PARTITION for a missing partition, the append's error
// otherwise.
//
// Not yet: it should be allowed to brokers only (CLUSTER_ACTION); there are
// no ACLs. v2 (transaction version in the marker, KIP-890) is not
// advertised.

import (
	"errors"

	"github.com/samsa-io/samsa/internal/model"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(apiEntry{key: kmsg.WriteTxnMarkers, min: 0, max: 1, handle: typed(handleWriteTxnMarkers)})
}

func handleWriteTxnMarkers(b *Broker, c *conn, req *kmsg.WriteTxnMarkersRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.WriteTxnMarkersResponse)
	for _, m := range req.Markers {
		rm := kmsg.NewWriteTxnMarkersResponseMarker()
		rm.ProducerID = m.ProducerID
		for _, t := range m.Topics {
			rt := kmsg.NewWriteTxnMarkersResponseMarkerTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewWriteTxnMarkersResponseMarkerTopicPartition()
				rp.Partition = p
				if !b.topicExists(t.Topic, p) {
					rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
				} else if err := b.writeMarker(m.ProducerID, m.ProducerEpoch, m.Committed, m.CoordinatorEpoch, model.TopicPartition{Topic: t.Topic, Partition: p}); err != nil {
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
	code, _ := appendErrorCode(err)
	return code
}

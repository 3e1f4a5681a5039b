package broker

// DeleteRecords (key 21), versions 0-2.
//
// Moves each partition's log start offset up to the requested offset
// (-1 means the high watermark), which makes the records below it
// unreadable at once and deletes the segments wholly below it; the new
// start is checkpointed before the response. The response's low watermark
// is the new log start offset. An offset past the high watermark gets
// OFFSET_OUT_OF_RANGE, as in Kafka; an offset at or below the current start
// changes nothing and reports the current start. Records of an internal
// topic cannot be deleted (INVALID_TOPIC_EXCEPTION, as in Kafka).
//
// Authorization (authz.go): DELETE on each topic, else its partitions are
// TOPIC_AUTHORIZATION_FAILED, before its existence is checked.

import (
	"errors"

	"github.com/samsa-io/samsa/internal/storage"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(apiEntry{key: kmsg.DeleteRecords, min: 0, max: 2, handle: typed(handleDeleteRecords)})
}

func handleDeleteRecords(b *Broker, c *conn, req *kmsg.DeleteRecordsRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.DeleteRecordsResponse)
	del := b.authorizeEach(c, kmsg.ACLOperationDelete, kmsg.ACLResourceTypeTopic)
	for _, rt := range req.Topics {
		st := kmsg.NewDeleteRecordsResponseTopic()
		st.Topic = rt.Topic
		ts, known := b.topics.byTopicName(rt.Topic)
		allowed := del(rt.Topic)
		for _, rp := range rt.Partitions {
			sp := kmsg.NewDeleteRecordsResponseTopicPartition()
			sp.Partition, sp.LowWatermark = rp.Partition, -1
			switch {
			case !allowed:
				sp.ErrorCode = kerr.TopicAuthorizationFailed.Code
			case !known:
				sp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			case ts.internal:
				// As Kafka: the coordinators' state would be lost.
				sp.ErrorCode = kerr.InvalidTopicException.Code
			default:
				sp.LowWatermark, sp.ErrorCode = deleteRecords(ts, rp.Partition, rp.Offset)
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp, nil
}

func deleteRecords(ts *topicState, partition int32, offset int64) (int64, int16) {
	p, code := ts.partition(partition)
	if code != 0 {
		return -1, code
	}
	start, err := p.DeleteRecords(offset)
	if err != nil {
		if errors.Is(err, storage.ErrOffsetOutOfRange) {
			return -1, kerr.OffsetOutOfRange.Code
		}
		return -1, kerr.KafkaStorageError.Code
	}
	return start, 0
}

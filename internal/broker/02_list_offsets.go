package broker

// ListOffsets (key 2), versions 0-10.
//
// Per partition, by timestamp:
//
//	-1 latest       the high watermark (read_uncommitted) or the last
//	                stable offset (read_committed)
//	-2 earliest     the log start offset
//	-3 max          the first record with the largest timestamp (v7+, KIP-734)
//	-4 earliest local  the log start offset: all data is local (v8+, KIP-405)
//	-5 latest tiered, -6 earliest pending upload (v9+/v10+): no tiered
//	                storage, so offset and timestamp -1 as Kafka answers
//	                for a topic without remote storage
//	t >= 0          the first record whose timestamp is >= t, if it is
//	                below the high watermark; else offset -1
//
// The response's leader epoch (v4+) is the epoch that wrote the returned
// offset, from the leader-epoch checkpoint. CurrentLeaderEpoch is fenced as
// in Fetch (KIP-320). v0 answers in the old style (a one-element offsets
// array). A partition asked for twice gets INVALID_REQUEST, as in Kafka.
//
// Authorization (authz.go): DESCRIBE on each topic, else its partitions
// are TOPIC_AUTHORIZATION_FAILED, before its existence is checked.

import (
	"errors"

	"github.com/samsa-io/samsa/internal/storage"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(apiEntry{key: kmsg.ListOffsets, min: 0, max: 10, handle: typed(handleListOffsets)})
}

func handleListOffsets(b *Broker, c *conn, req *kmsg.ListOffsetsRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.ListOffsetsResponse)
	type key struct {
		topic string
		p     int32
	}
	seen := map[key]int{}
	for _, rt := range req.Topics {
		for _, rp := range rt.Partitions {
			seen[key{rt.Topic, rp.Partition}]++
		}
	}
	describe := b.authorizeEach(c, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeTopic)
	for _, rt := range req.Topics {
		st := kmsg.NewListOffsetsResponseTopic()
		st.Topic = rt.Topic
		ts, known := b.topics.byTopicName(rt.Topic)
		allowed := describe(rt.Topic)
		for _, rp := range rt.Partitions {
			sp := kmsg.NewListOffsetsResponseTopicPartition()
			sp.Partition = rp.Partition
			switch {
			case !allowed:
				sp.ErrorCode = kerr.TopicAuthorizationFailed.Code
			case seen[key{rt.Topic, rp.Partition}] > 1:
				sp.ErrorCode = kerr.InvalidRequest.Code
			case !known:
				sp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			default:
				b.listOffset(req, ts, &rp, &sp)
			}
			if req.Version == 0 && sp.ErrorCode == 0 {
				sp.OldStyleOffsets = []int64{sp.Offset}
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp, nil
}

func (b *Broker) listOffset(req *kmsg.ListOffsetsRequest, ts *topicState, rp *kmsg.ListOffsetsRequestTopicPartition, sp *kmsg.ListOffsetsResponseTopicPartition) {
	p, code := ts.partition(rp.Partition)
	if code == 0 {
		code = checkLeaderEpoch(rp.CurrentLeaderEpoch, p.LeaderEpoch())
	}
	if code != 0 {
		sp.ErrorCode = code
		return
	}
	off, t, epoch, err := p.ListOffset(rp.Timestamp, req.IsolationLevel == 1)
	if err != nil {
		sp.ErrorCode = kerr.KafkaStorageError.Code
		if errors.Is(err, storage.ErrClosed) {
			sp.ErrorCode = kerr.NotLeaderForPartition.Code
		}
		return
	}
	sp.Offset, sp.Timestamp, sp.LeaderEpoch = off, t, epoch
}

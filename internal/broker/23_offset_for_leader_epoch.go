package broker

// OffsetForLeaderEpoch (key 23), versions 0-4.
//
// For each partition and leader epoch, the largest epoch at or below it that
// the leader's log knows, and the offset where that epoch ended (the log
// end for the current epoch), from the leader-epoch checkpoint (KIP-101,
// KIP-279). An epoch older than the log's first gives that epoch and the
// first epoch's start offset, as Kafka does; a log without epochs gives
// UNDEFINED_EPOCH (-1) and offset -1. CurrentLeaderEpoch (v2+) is fenced as in
// Fetch. Consumers use it to detect log truncation after an unclean leader
// change (KIP-320); followers use it to truncate before fetching.
//
// v3+ carries the requester's replica ID; with no followers it is only
// logged in errors.
//
// Authorization (authz.go): CLUSTER_ACTION on the cluster (a follower)
// allows every topic; without it each topic needs DESCRIBE (KIP-320), else
// its partitions are TOPIC_AUTHORIZATION_FAILED, before its existence is
// checked.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(apiEntry{key: kmsg.OffsetForLeaderEpoch, min: 0, max: 4, handle: typed(handleOffsetForLeaderEpoch)})
}

func handleOffsetForLeaderEpoch(b *Broker, c *conn, req *kmsg.OffsetForLeaderEpochRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.OffsetForLeaderEpochResponse)
	describe := allowAll
	if !b.permitsCluster(c, kmsg.ACLOperationClusterAction) {
		describe = b.authorizeEach(c, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeTopic)
	}
	for _, rt := range req.Topics {
		st := kmsg.NewOffsetForLeaderEpochResponseTopic()
		st.Topic = rt.Topic
		ts, known := b.topics.byTopicName(rt.Topic)
		allowed := describe(rt.Topic)
		for _, rp := range rt.Partitions {
			sp := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
			sp.Partition, sp.LeaderEpoch, sp.EndOffset = rp.Partition, -1, -1
			if !allowed {
				sp.ErrorCode = kerr.TopicAuthorizationFailed.Code
				st.Partitions = append(st.Partitions, sp)
				continue
			}
			if !known {
				sp.ErrorCode = kerr.UnknownTopicOrPartition.Code
				st.Partitions = append(st.Partitions, sp)
				continue
			}
			p, code := ts.partition(rp.Partition)
			if code == 0 {
				code = checkLeaderEpoch(rp.CurrentLeaderEpoch, p.LeaderEpoch())
			}
			if sp.ErrorCode = code; code == 0 {
				sp.LeaderEpoch, sp.EndOffset = p.EndOffsetForEpoch(rp.LeaderEpoch)
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	return resp, nil
}

package broker

// DescribeProducers (key 61), version 0 (KIP-664).
//
// The active producers of each requested partition, from the log's
// producer-state table: producer ID and epoch, last sequence and
// timestamp, coordinator epoch, and the first offset of its open
// transaction (-1 when none). Tools use it to find hanging transactions.
//
// Authorization (authz.go): READ on each topic, else its partitions are
// TOPIC_AUTHORIZATION_FAILED, before its existence is checked.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(apiEntry{key: kmsg.DescribeProducers, min: 0, max: 0, handle: typed(handleDescribeProducers)})
}

func handleDescribeProducers(b *Broker, c *conn, req *kmsg.DescribeProducersRequest) (kmsg.Response, error) {
	resp := req.ResponseKind().(*kmsg.DescribeProducersResponse)
	read := b.authorizeEach(c, kmsg.ACLOperationRead, kmsg.ACLResourceTypeTopic)
	for _, t := range req.Topics {
		rt := kmsg.NewDescribeProducersResponseTopic()
		rt.Topic = t.Topic
		ts, known := b.topics.byTopicName(t.Topic)
		allowed := read(t.Topic)
		for _, pn := range t.Partitions {
			rp := kmsg.NewDescribeProducersResponseTopicPartition()
			rp.Partition = pn
			if !allowed {
				rp.ErrorCode = kerr.TopicAuthorizationFailed.Code
				rt.Partitions = append(rt.Partitions, rp)
				continue
			}
			if !known {
				rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
				rt.Partitions = append(rt.Partitions, rp)
				continue
			}
			p, code := ts.partition(pn)
			if rp.ErrorCode = code; code == 0 {
				for _, ps := range p.Producers() {
					ap := kmsg.NewDescribeProducersResponseTopicPartitionActiveProducer()
					ap.ProducerID, ap.ProducerEpoch = ps.ProducerID, int32(ps.Epoch)
					ap.LastSequence, ap.LastTimestamp = ps.LastSeq(), ps.LastTimestamp
					ap.CoordinatorEpoch, ap.CurrentTxnStartOffset = ps.CoordinatorEpoch, ps.TxnFirstOffset
					rp.ActiveProducers = append(rp.ActiveProducers, ap)
				}
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp, nil
}

package broker

// AddPartitionsToTxn (key 24), versions 0-5.
//
// Adds partitions to a producer's ongoing transaction (v0-3, one
// transactional ID), or checks or adds them for a batch of transactional IDs
// (v4+, KIP-890, meant for partition leaders). Kafka's state machine and
// errors (INVALID_TXN_STATE, PRODUCER_FENCED, CONCURRENT_TRANSACTIONS ...)
// are internal/txn's; see docs/DESIGN-txn.md.
//
// Authorization (authz.go), as Kafka's: v4+ is for brokers, CLUSTER_ACTION
// on the cluster, else CLUSTER_AUTHORIZATION_FAILED for the request. v0-3
// need WRITE on the transactional ID, else every partition is
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED, and WRITE on each topic (never
// granted on an internal topic, as Kafka filters them out): if a topic is
// refused, or missing (UNKNOWN_TOPIC_OR_PARTITION), nothing is added and
// the other partitions answer OPERATION_NOT_ATTEMPTED.

import (
	"github.com/samsa-io/samsa/internal/metadata"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(apiEntry{key: kmsg.AddPartitionsToTxn, min: 0, max: 5, handle: typed(handleAddPartitionsToTxn)})
}

func handleAddPartitionsToTxn(b *Broker, c *conn, req *kmsg.AddPartitionsToTxnRequest) (kmsg.Response, error) {
	if req.Version >= 4 {
		if !b.authorizeCluster(c, kmsg.ACLOperationClusterAction) {
			resp := req.ResponseKind().(*kmsg.AddPartitionsToTxnResponse)
			resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
			return resp, nil
		}
		return b.txns.AddPartitionsToTxn(req), nil
	}
	if !b.authorize(c, kmsg.ACLOperationWrite, kmsg.ACLResourceTypeTransactionalId, req.TransactionalID) {
		return addPartitionsRefused(req, func(string, int32) int16 { return kerr.TransactionalIDAuthorizationFailed.Code }), nil
	}
	if b.authorizer() == nil {
		return b.txns.AddPartitionsToTxn(req), nil
	}
	write := b.authorizeEach(c, kmsg.ACLOperationWrite, kmsg.ACLResourceTypeTopic)
	refused := false
	for _, t := range req.Topics {
		if metadata.IsInternalTopic(t.Topic) || !write(t.Topic) {
			refused = true
		}
	}
	if !refused {
		return b.txns.AddPartitionsToTxn(req), nil
	}
	return addPartitionsRefused(req, func(topic string, p int32) int16 {
		switch {
		case metadata.IsInternalTopic(topic) || !write(topic):
			return kerr.TopicAuthorizationFailed.Code
		case !b.topicExists(topic, p):
			return kerr.UnknownTopicOrPartition.Code
		}
		return kerr.OperationNotAttempted.Code
	}), nil
}

// addPartitionsRefused answers a v0-3 request whose partitions are not
// added, each with code's error.
func addPartitionsRefused(req *kmsg.AddPartitionsToTxnRequest, code func(topic string, p int32) int16) *kmsg.AddPartitionsToTxnResponse {
	resp := req.ResponseKind().(*kmsg.AddPartitionsToTxnResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewAddPartitionsToTxnResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rt.Partitions = append(rt.Partitions, kmsg.AddPartitionsToTxnResponseTopicPartition{Partition: p, ErrorCode: code(t.Topic, p)})
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

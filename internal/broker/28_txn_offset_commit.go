package broker

// TxnOffsetCommit (key 28), versions 0-5.
//
// Commits consumer offsets inside a producer's transaction
// (consume-transform-produce, KIP-98): the group coordinator writes them to
// __consumer_offsets as a transactional batch from the producer and keeps
// them pending, invisible to OffsetFetch, until the transaction's marker
// commits or aborts them (writeMarkers). From v3 the group's generation and
// member are checked (KIP-447), so a zombie after a rebalance is fenced.
//
// v5 (transactions v2, KIP-890) adds the group's offsets partition to the
// transaction first, as the client no longer sends AddOffsetsToTxn.

import "github.com/twmb/franz-go/pkg/kmsg"

func init() {
	registerAPI(apiEntry{key: kmsg.TxnOffsetCommit, min: 0, max: 5, handle: typed(handleTxnOffsetCommit)})
}

func handleTxnOffsetCommit(b *Broker, c *conn, req *kmsg.TxnOffsetCommitRequest) (kmsg.Response, error) {
	if req.Version >= 5 {
		// Transactions v2 (KIP-890): the commit adds the group's offsets
		// partition itself; the client sends no AddOffsetsToTxn.
		add := kmsg.NewPtrAddOffsetsToTxnRequest()
		add.Version = 4
		add.TransactionalID, add.ProducerID, add.ProducerEpoch, add.Group = req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Group
		if ar := b.txns.AddOffsetsToTxn(add); ar.ErrorCode != 0 {
			return txnOffsetCommitError(req, ar.ErrorCode), nil
		}
	}
	return b.groups.TxnOffsetCommit(b.tasks.Context(), req), nil
}

// txnOffsetCommitError answers every partition with code.
func txnOffsetCommitError(req *kmsg.TxnOffsetCommitRequest, code int16) *kmsg.TxnOffsetCommitResponse {
	resp := req.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
	for _, t := range req.Topics {
		rt := kmsg.NewTxnOffsetCommitResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewTxnOffsetCommitResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p.Partition, code
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

package txn

import (
	"slices"

	"github.com/samsa-io/samsa/internal/model"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// AddPartitionsToTxn answers AddPartitionsToTxn (API key 24).
//
// v0-3 come from producers, one transactional ID each: the partitions join
// the transaction (Empty or Complete* become Ongoing, with a new start
// time). If any partition is refused (unknown), the others answer
// OPERATION_NOT_ATTEMPTED, as in Kafka. v4+ (KIP-890) come from partition
// leaders, batched over transactional IDs: VerifyOnly checks that the
// partitions are already in the Ongoing transaction (INVALID_TXN_STATE per
// partition otherwise), and without it (transaction version 2, v5) the
// partitions are added implicitly. The broker must allow v4+ only to
// brokers (CLUSTER_ACTION). PRODUCER_FENCED from v2, INVALID_PRODUCER_EPOCH
// before.
func (c *Coordinator) AddPartitionsToTxn(req *kmsg.AddPartitionsToTxnRequest) *kmsg.AddPartitionsToTxnResponse {
	resp := kmsg.NewPtrAddPartitionsToTxnResponse()
	resp.Version = req.Version
	if req.Version < 4 {
		var tps []model.TopicPartition
		for _, t := range req.Topics {
			for _, p := range t.Partitions {
				tps = append(tps, model.TopicPartition{Topic: t.Topic, Partition: p})
			}
		}
		codes := c.addPartitions(req.TransactionalID, req.ProducerID, req.ProducerEpoch, tps, false, 0)
		for _, t := range req.Topics {
			rt := kmsg.AddPartitionsToTxnResponseTopic{Topic: t.Topic}
			for _, p := range t.Partitions {
				code := codes[model.TopicPartition{Topic: t.Topic, Partition: p}]
				if code == codeProducerFenced {
					code = fencedCode(req.Version, 2)
				}
				rt.Partitions = append(rt.Partitions, kmsg.AddPartitionsToTxnResponseTopicPartition{Partition: p, ErrorCode: code})
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	}
	for _, tx := range req.Transactions {
		var tps []model.TopicPartition
		for _, t := range tx.Topics {
			for _, p := range t.Partitions {
				tps = append(tps, model.TopicPartition{Topic: t.Topic, Partition: p})
			}
		}
		var version int16
		if req.Version >= 5 {
			version = transactionVersionTV2
		}
		codes := c.addPartitions(tx.TransactionalID, tx.ProducerID, tx.ProducerEpoch, tps, tx.VerifyOnly, version)
		rtx := kmsg.AddPartitionsToTxnResponseTransaction{TransactionalID: tx.TransactionalID}
		for _, t := range tx.Topics {
			rt := kmsg.AddPartitionsToTxnResponseTransactionTopic{Topic: t.Topic}
			for _, p := range t.Partitions {
				rt.Partitions = append(rt.Partitions, kmsg.AddPartitionsToTxnResponseTransactionTopicPartition{
					Partition: p, ErrorCode: codes[model.TopicPartition{Topic: t.Topic, Partition: p}]})
			}
			rtx.Topics = append(rtx.Topics, rt)
		}
		resp.Transactions = append(resp.Transactions, rtx)
	}
	return resp
}

// AddOffsetsToTxn answers AddOffsetsToTxn (API key 25): the group's
// __consumer_offsets partition joins the transaction, so the markers reach
// the offsets a TxnOffsetCommit (served by the group coordinator) writes.
// PRODUCER_FENCED from v2, INVALID_PRODUCER_EPOCH before.
func (c *Coordinator) AddOffsetsToTxn(req *kmsg.AddOffsetsToTxnRequest) *kmsg.AddOffsetsToTxnResponse {
	resp := kmsg.NewPtrAddOffsetsToTxnResponse()
	resp.Version = req.Version
	tp := model.TopicPartition{Topic: OffsetsTopic, Partition: c.deps.GroupPartition(req.Group)}
	resp.ErrorCode = c.addPartitions(req.TransactionalID, req.ProducerID, req.ProducerEpoch,
		[]model.TopicPartition{tp}, false, 0)[tp]
	if resp.ErrorCode == codeProducerFenced {
		resp.ErrorCode = fencedCode(req.Version, 2)
	}
	return resp
}

// addPartitions adds (or, verifyOnly, checks) partitions of one
// transaction and returns each partition's code.
func (c *Coordinator) addPartitions(id string, producerID int64, epoch int16, tps []model.TopicPartition,
	verifyOnly bool, version int16) map[model.TopicPartition]int16 {
	codes := make(map[model.TopicPartition]int16, len(tps))
	all := func(code int16) map[model.TopicPartition]int16 {
		for _, tp := range tps {
			codes[tp] = code
		}
		return codes
	}
	if !verifyOnly && c.deps.TopicExists != nil {
		unknown := false
		for _, tp := range tps {
			if !c.deps.TopicExists(tp.Topic, tp.Partition) {
				codes[tp], unknown = codeUnknownTopicOrPartition, true
			}
		}
		if unknown {
			for _, tp := range tps {
				if codes[tp] == 0 {
					codes[tp] = codeOperationNotAttempted
				}
			}
			return codes
		}
	}
	t, code := c.lockTxn(id, false)
	if t == nil {
		if code == 0 {
			code = codeInvalidProducerIDMapping
		}
		return all(code)
	}
	defer c.unlock(t)
	st := &t.st
	switch {
	case st.producerID != producerID:
		return all(codeInvalidProducerIDMapping)
	case st.producerEpoch != epoch:
		return all(codeProducerFenced)
	case t.completing, st.prepared():
		return all(codeConcurrentTransactions)
	}
	if verifyOnly {
		for _, tp := range tps {
			if st.state != stateOngoing || !st.hasPartition(tp) {
				codes[tp] = codeInvalidTxnState
			} else {
				codes[tp] = 0
			}
		}
		return codes
	}
	switch st.state {
	case stateEmpty, stateOngoing, stateCompleteCommit, stateCompleteAbort:
	default:
		return all(codeInvalidTxnState)
	}
	if st.state == stateOngoing && !slices.ContainsFunc(tps, func(tp model.TopicPartition) bool { return !st.hasPartition(tp) }) {
		return all(0)
	}
	next := *st
	next.partitions = st.withPartitions(tps)
	if st.state != stateOngoing {
		next.state, next.start = stateOngoing, c.clock.Now()
	}
	if version > next.version {
		next.version = version
	}
	return all(c.transitLocked(t, next))
}

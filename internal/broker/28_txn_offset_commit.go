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
// transaction first, as the client no longer sends AddOffsetsToTxn: with
// an AddOffsetsToTxn to the transaction's coordinator, here or on the
// broker leading the ID's __transaction_state partition. If that broker
// cannot be reached the commit answers COORDINATOR_NOT_AVAILABLE, which
// the client retries.
//
// Authorization (authz.go), first: WRITE on the transactional ID, else
// every partition is TRANSACTIONAL_ID_AUTHORIZATION_FAILED; READ on the
// group, else every partition is GROUP_AUTHORIZATION_FAILED; then READ on
// each topic, else its partitions are TOPIC_AUTHORIZATION_FAILED and the
// coordinator never sees them.

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(apiEntry{key: kmsg.TxnOffsetCommit, min: 0, max: 5, handle: typed(handleTxnOffsetCommit)})
}

func handleTxnOffsetCommit(b *Broker, c *conn, req *kmsg.TxnOffsetCommitRequest) (kmsg.Response, error) {
	if code := b.authorizeTxnAndGroup(c, req.TransactionalID, req.Group); code != 0 {
		return txnOffsetCommitError(req, code), nil
	}
	read := b.authorizeEach(c, kmsg.ACLOperationRead, kmsg.ACLResourceTypeTopic)
	kept, denied := filterDenied(req.Topics, func(t kmsg.TxnOffsetCommitRequestTopic) bool { return read(t.Topic) })
	if denied == nil {
		return b.txnOffsetCommit(req), nil
	}
	resp := req.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
	if len(kept) > 0 {
		allowed := *req
		allowed.Topics = kept
		resp = b.txnOffsetCommit(&allowed)
	}
	refused := txnOffsetCommitError(req, kerr.TopicAuthorizationFailed.Code)
	resp.Topics = mergeDenied(len(req.Topics), func(i int) (kmsg.TxnOffsetCommitResponseTopic, bool) {
		return refused.Topics[i], denied[i]
	}, resp.Topics)
	return resp, nil
}

// txnOffsetCommit commits the request's offsets, which the principal may
// commit.
func (b *Broker) txnOffsetCommit(req *kmsg.TxnOffsetCommitRequest) *kmsg.TxnOffsetCommitResponse {
	if req.Version >= 5 {
		// Transactions v2 (KIP-890): the commit adds the group's offsets
		// partition itself; the client sends no AddOffsetsToTxn.
		add := kmsg.NewPtrAddOffsetsToTxnRequest()
		add.Version = 4
		add.TransactionalID, add.ProducerID, add.ProducerEpoch, add.Group = req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Group
		if code := b.addOffsetsToTxn(add); code != 0 {
			return txnOffsetCommitError(req, code)
		}
	}
	return b.groups.TxnOffsetCommit(b.tasks.Context(), req)
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

// addOffsetsToTxn asks the transaction's coordinator to add the group's
// offsets partition, bounded by the group's commit timeout.
func (b *Broker) addOffsetsToTxn(add *kmsg.AddOffsetsToTxnRequest) int16 {
	addr, err := b.txnCoordinator(add.TransactionalID)
	if err != nil {
		return kerr.CoordinatorNotAvailable.Code
	}
	if addr == "" {
		return b.txns.AddOffsetsToTxn(add).ErrorCode
	}
	timeout := time.Duration(b.brokerConfig(b.meta.Load()).Int("offsets.commit.timeout.ms")) * time.Millisecond
	ctx, cancel := context.WithTimeout(b.tasks.Context(), timeout)
	defer cancel()
	raw, err := b.peers.request(ctx, addr, add)
	if err != nil {
		b.log.Warn("adding offsets to a transaction at its coordinator failed", "transactional_id", add.TransactionalID, "err", err)
		return kerr.CoordinatorNotAvailable.Code
	}
	return raw.(*kmsg.AddOffsetsToTxnResponse).ErrorCode
}

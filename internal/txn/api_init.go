package txn

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// InitProducerID answers InitProducerId (API key 22) for a transactional
// ID; the broker answers the idempotent-only case (no transactional ID)
// itself.
//
// The first call for an ID gets a new producer ID at epoch 0. Later calls
// bump the epoch, which fences the previous producer (a zombie): its
// requests with the old epoch get PRODUCER_FENCED, and the markers written
// with the new epoch make partitions refuse its writes. An Ongoing
// transaction is aborted first (PrepareAbort with the bumped epoch,
// markers, CompleteAbort), so the new producer starts clean. An exhausted
// epoch gets a new producer ID. v3+ (KIP-360) carry the producer ID and
// epoch of a producer that recovers from an abortable error: it keeps its
// ID if that pair is current (or the one just replaced, a retry) and is
// fenced otherwise. v4+ know PRODUCER_FENCED; older versions get
// INVALID_PRODUCER_EPOCH.
func (c *Coordinator) InitProducerID(ctx context.Context, req *kmsg.InitProducerIDRequest) *kmsg.InitProducerIDResponse {
	resp := kmsg.NewPtrInitProducerIDResponse()
	resp.Version = req.Version
	resp.ProducerID, resp.ProducerEpoch = noProducerID, noProducerEpoch
	if req.TransactionalID == nil || *req.TransactionalID == "" {
		resp.ErrorCode = codeInvalidRequest
		return resp
	}
	timeout := time.Duration(req.TransactionTimeoutMillis) * time.Millisecond
	if timeout <= 0 || timeout > c.cfg.MaxTimeout {
		resp.ErrorCode = codeInvalidTransactionTimeout
		return resp
	}
	t, code := c.lockTxn(*req.TransactionalID, true)
	if t == nil {
		resp.ErrorCode = code
		return resp
	}
	defer c.unlock(t)
	expected := req.Version >= 3 && req.ProducerID != noProducerID
	resp.ErrorCode = c.initProducerIDLocked(ctx, t, req, timeout, expected)
	if resp.ErrorCode == 0 {
		resp.ProducerID, resp.ProducerEpoch = t.st.producerID, t.st.producerEpoch
	} else if resp.ErrorCode == codeProducerFenced {
		resp.ErrorCode = fencedCode(req.Version, 4)
	}
	return resp
}

func (c *Coordinator) initProducerIDLocked(ctx context.Context, t *txn, req *kmsg.InitProducerIDRequest,
	timeout time.Duration, expected bool) int16 {
	if t.st.producerID == noProducerID {
		pid, err := c.deps.AllocateProducerID(ctx)
		if err != nil {
			c.log.Warn("allocating a producer id failed", "err", err)
			return codeCoordinatorNotAvailable
		}
		next := t.st
		next.producerID, next.producerEpoch, next.state, next.timeout = pid, 0, stateEmpty, timeout
		return c.transitLocked(t, next)
	}
	if t.completing {
		return codeConcurrentTransactions
	}
	st := &t.st
	if expected {
		// KIP-360: the caller must be the current producer, or the one
		// replaced by the ID's last epoch exhaustion.
		valid := req.ProducerID == st.producerID ||
			req.ProducerID == st.lastProducerID && epochExhausted(req.ProducerEpoch)
		if !valid {
			return codeProducerFenced
		}
		current := req.ProducerID == st.producerID &&
			(req.ProducerEpoch == st.producerEpoch || req.ProducerEpoch == noProducerEpoch)
		retry := req.ProducerEpoch == st.lastProducerEpoch &&
			(req.ProducerID == st.producerID || req.ProducerID == st.lastProducerID)
		switch {
		case current:
		case retry && !st.running():
			// A retry of the call that made the current epoch.
			return 0
		default:
			return codeProducerFenced
		}
	}
	switch st.state {
	case statePrepareCommit, statePrepareAbort:
		// A previous commit or abort is still completing (its markers
		// failed, or the broker restarted): try once more now.
		if err := c.completeLocked(t); err != nil {
			return codeConcurrentTransactions
		}
	case stateOngoing:
		// Fence the old producer and abort its transaction.
		if code := c.abortLocked(t, true); code != 0 {
			return code
		}
	case stateEmpty, stateCompleteCommit, stateCompleteAbort:
	default:
		return codeConcurrentTransactions
	}
	var newID int64 = noProducerID
	if epochExhausted(t.st.producerEpoch) {
		pid, err := c.deps.AllocateProducerID(ctx)
		if err != nil {
			c.log.Warn("allocating a producer id failed", "err", err)
			return codeCoordinatorNotAvailable
		}
		newID = pid
	}
	next := t.st.bumped(newID)
	next.state, next.timeout, next.partitions, next.start = stateEmpty, timeout, nil, time.Time{}
	return c.transitLocked(t, next)
}

// abortLocked aborts t's Ongoing transaction: PrepareAbort, with the epoch
// bumped when fence is set (an InitProducerID or the timeout taking the
// transaction from its producer) so the producer's further writes are
// refused, then the markers and CompleteAbort. A failure to write the
// markers answers CONCURRENT_TRANSACTIONS: the abort is durable, and the
// sweep finishes it.
func (c *Coordinator) abortLocked(t *txn, fence bool) int16 {
	next := t.st
	if fence && !epochExhausted(next.producerEpoch) {
		next.producerEpoch++
		// Kafka's fence forgets the previous epoch: the fenced producer
		// cannot pass for a retry.
		next.lastProducerEpoch = noProducerEpoch
	}
	next.state = statePrepareAbort
	if code := c.transitLocked(t, next); code != 0 {
		return code
	}
	if err := c.completeLocked(t); err != nil {
		return codeConcurrentTransactions
	}
	return 0
}

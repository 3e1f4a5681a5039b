package txn

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// EndTxn answers EndTxn (API key 26): commit or abort the Ongoing
// transaction. The PrepareCommit or PrepareAbort record is written first;
// once it is durable the outcome is decided, and the answer is success
// even if the markers then fail (they are retried in the background, and
// meanwhile the ID answers CONCURRENT_TRANSACTIONS). A repeated EndTxn of
// the same outcome after completion succeeds (a retry); of the other
// outcome, INVALID_TXN_STATE.
//
// v5 (KIP-890, transaction version 2) bumps the epoch with every EndTxn,
// writes the markers with the new epoch, and returns the producer ID and
// epoch to use next (a new producer ID once the epoch is exhausted); it
// also allows aborting an Empty transaction. A retry of a version 2 EndTxn
// carries the epoch before the bump. PRODUCER_FENCED from v2,
// INVALID_PRODUCER_EPOCH before.
func (c *Coordinator) EndTxn(ctx context.Context, req *kmsg.EndTxnRequest) *kmsg.EndTxnResponse {
	resp := kmsg.NewPtrEndTxnResponse()
	resp.Version = req.Version
	resp.ProducerID, resp.ProducerEpoch = noProducerID, noProducerEpoch
	t, code := c.lockTxn(req.TransactionalID, false)
	if t == nil {
		if code == 0 {
			code = codeInvalidProducerIDMapping
		}
		resp.ErrorCode = code
		return resp
	}
	defer c.unlock(t)
	resp.ErrorCode = c.endTxnLocked(ctx, t, req)
	if resp.ErrorCode == 0 {
		resp.ProducerID, resp.ProducerEpoch = t.st.producerID, t.st.producerEpoch
	} else if resp.ErrorCode == codeProducerFenced {
		resp.ErrorCode = fencedCode(req.Version, 2)
	}
	return resp
}

func (c *Coordinator) endTxnLocked(ctx context.Context, t *txn, req *kmsg.EndTxnRequest) int16 {
	st := &t.st
	tv2 := req.Version >= 5
	// retry: a version 2 EndTxn whose bump already happened.
	retry := tv2 && req.ProducerEpoch == st.lastProducerEpoch && req.ProducerEpoch != noProducerEpoch &&
		(req.ProducerID == st.producerID || req.ProducerID == st.lastProducerID) &&
		(st.prepared() || st.state == stateCompleteCommit || st.state == stateCompleteAbort)
	switch {
	case retry:
	case st.producerID != req.ProducerID:
		return codeInvalidProducerIDMapping
	case st.producerEpoch != req.ProducerEpoch:
		return codeProducerFenced
	}
	if t.completing {
		return codeConcurrentTransactions
	}
	want, other := statePrepareAbort, statePrepareCommit
	done, otherDone := stateCompleteAbort, stateCompleteCommit
	if req.Commit {
		want, other, done, otherDone = other, want, otherDone, done
	}
	switch st.state {
	case stateOngoing:
		return c.prepareLocked(ctx, t, want, tv2)
	case want:
		// Prepared before, markers not yet written: try them again.
		if err := c.completeLocked(t); err != nil {
			return codeConcurrentTransactions
		}
		return 0
	case other, otherDone:
		if st.state == otherDone && tv2 && !req.Commit && !retry {
			// Version 2 may abort when no transaction is running.
			return c.prepareLocked(ctx, t, want, tv2)
		}
		return codeInvalidTxnState
	case done:
		if tv2 && !retry {
			if req.Commit {
				return codeInvalidTxnState
			}
			return c.prepareLocked(ctx, t, want, tv2)
		}
		return 0
	case stateEmpty:
		if tv2 && !req.Commit {
			return c.prepareLocked(ctx, t, want, tv2)
		}
		return codeInvalidTxnState
	}
	return codeInvalidTxnState
}

// prepareLocked writes PrepareCommit or PrepareAbort (with the epoch
// bumped for transaction version 2) and completes the transaction. Once
// the prepare record is durable the answer is success; markers that fail
// are retried by the sweep.
func (c *Coordinator) prepareLocked(ctx context.Context, t *txn, state kmsg.TransactionState, tv2 bool) int16 {
	next := t.st
	next.state = state
	if tv2 {
		next.version = transactionVersionTV2
		next.lastProducerID, next.lastProducerEpoch = next.producerID, next.producerEpoch
		if epochExhausted(next.producerEpoch) {
			pid, err := c.deps.AllocateProducerID(ctx)
			if err != nil {
				c.log.Warn("allocating a producer id failed", "err", err)
				return codeCoordinatorNotAvailable
			}
			next.nextProducerID = pid
		}
		next.producerEpoch++
	}
	if next.start.IsZero() {
		next.start = c.clock.Now()
	}
	if code := c.transitLocked(t, next); code != 0 {
		return code
	}
	_ = c.completeLocked(t)
	return 0
}

package broker

// EndTxn (key 26), versions 0-5.
//
// Commits or aborts the producer's transaction: PrepareCommit/PrepareAbort
// is made durable in __transaction_state, markers go to every partition of
// the transaction (writeMarkers: control batches that close the producer's
// transaction there, enter aborts in the aborted-transaction index, and
// apply or drop transactional offsets), then CompleteCommit/Abort. v5
// (KIP-890, transactions version 2) bumps the epoch and returns it.
//
// Authorization (authz.go): WRITE on the transactional ID, else
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(apiEntry{key: kmsg.EndTxn, min: 0, max: 5, handle: typed(handleEndTxn)})
}

func handleEndTxn(b *Broker, c *conn, req *kmsg.EndTxnRequest) (kmsg.Response, error) {
	if !b.authorize(c, kmsg.ACLOperationWrite, kmsg.ACLResourceTypeTransactionalId, req.TransactionalID) {
		resp := req.ResponseKind().(*kmsg.EndTxnResponse)
		resp.ErrorCode = kerr.TransactionalIDAuthorizationFailed.Code
		return resp, nil
	}
	return b.txns.EndTxn(b.tasks.Context(), req), nil
}

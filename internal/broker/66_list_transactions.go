package broker

// ListTransactions (key 66), versions 0-2.
//
// Lists transactional IDs with their producer ID and state, filtered by
// state and producer ID (KIP-664), by running time (v1, KIP-994) and by an
// ID pattern (v2).
//
// Authorization (authz.go): only the transactional IDs the principal may
// DESCRIBE are listed, never an error.

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(apiEntry{key: kmsg.ListTransactions, min: 0, max: 2, handle: typed(handleListTransactions)})
}

func handleListTransactions(b *Broker, c *conn, req *kmsg.ListTransactionsRequest) (kmsg.Response, error) {
	resp := b.txns.ListTransactions(req)
	if b.authorizer() != nil {
		resp.TransactionStates = slices.DeleteFunc(resp.TransactionStates, func(ts kmsg.ListTransactionsResponseTransactionState) bool {
			return !b.permits(c, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeTransactionalId, ts.TransactionalID)
		})
	}
	return resp, nil
}

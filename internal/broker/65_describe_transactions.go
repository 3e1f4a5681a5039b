package broker

// DescribeTransactions (key 65), versions 0-0.
//
// Describes transactional IDs: state, producer ID and epoch, timeout,
// start time and partitions (KIP-664). Unknown IDs get
// TRANSACTIONAL_ID_NOT_FOUND.
//
// Authorization (authz.go): DESCRIBE on each transactional ID, else
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED for it; the partitions of topics
// the principal may not DESCRIBE are left out of a transaction's.

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(apiEntry{key: kmsg.DescribeTransactions, min: 0, max: 0, handle: typed(handleDescribeTransactions)})
}

func handleDescribeTransactions(b *Broker, c *conn, req *kmsg.DescribeTransactionsRequest) (kmsg.Response, error) {
	if b.authorizer() == nil {
		return b.txns.DescribeTransactions(req), nil
	}
	describe := b.authorizeEach(c, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeTransactionalId)
	kept, denied := filterDenied(req.TransactionalIDs, describe)
	resp := req.ResponseKind().(*kmsg.DescribeTransactionsResponse)
	if len(kept) > 0 {
		allowed := *req
		allowed.TransactionalIDs = kept
		resp = b.txns.DescribeTransactions(&allowed)
	}
	for i := range resp.TransactionStates {
		ts := &resp.TransactionStates[i]
		ts.Topics = slices.DeleteFunc(ts.Topics, func(t kmsg.DescribeTransactionsResponseTransactionStateTopic) bool {
			return !b.permits(c, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeTopic, t.Topic)
		})
	}
	if denied != nil {
		resp.TransactionStates = mergeDenied(len(req.TransactionalIDs), func(i int) (kmsg.DescribeTransactionsResponseTransactionState, bool) {
			ts := kmsg.NewDescribeTransactionsResponseTransactionState()
			ts.TransactionalID, ts.ErrorCode = req.TransactionalIDs[i], kerr.TransactionalIDAuthorizationFailed.Code
			ts.ProducerID, ts.ProducerEpoch, ts.StartTimestamp = -1, -1, -1
			return ts, denied[i]
		}, resp.TransactionStates)
	}
	return resp, nil
}

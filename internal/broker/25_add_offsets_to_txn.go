package broker

// AddOffsetsToTxn (key 25), versions 0-4.
//
// Adds the group's __consumer_offsets partition to the producer's
// transaction, so TxnOffsetCommit may write there and EndTxn writes a marker
// there (consume-transform-produce, KIP-98).
//
// Authorization (authz.go): WRITE on the transactional ID, else
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED; then READ on the group, else
// GROUP_AUTHORIZATION_FAILED.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(apiEntry{key: kmsg.AddOffsetsToTxn, min: 0, max: 4, handle: typed(handleAddOffsetsToTxn)})
}

func handleAddOffsetsToTxn(b *Broker, c *conn, req *kmsg.AddOffsetsToTxnRequest) (kmsg.Response, error) {
	if code := b.authorizeTxnAndGroup(c, req.TransactionalID, req.Group); code != 0 {
		resp := req.ResponseKind().(*kmsg.AddOffsetsToTxnResponse)
		resp.ErrorCode = code
		return resp, nil
	}
	return b.txns.AddOffsetsToTxn(req), nil
}

// authorizeTxnAndGroup is the check AddOffsetsToTxn and TxnOffsetCommit
// make first: WRITE on the transactional ID, then READ on the group; the
// error of the first refused, 0 when both pass.
func (b *Broker) authorizeTxnAndGroup(c *conn, transactionalID, group string) int16 {
	switch {
	case !b.authorize(c, kmsg.ACLOperationWrite, kmsg.ACLResourceTypeTransactionalId, transactionalID):
		return kerr.TransactionalIDAuthorizationFailed.Code
	case !b.authorize(c, kmsg.ACLOperationRead, kmsg.ACLResourceTypeGroup, group):
		return kerr.GroupAuthorizationFailed.Code
	}
	return 0
}

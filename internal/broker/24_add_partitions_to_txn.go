package broker

// AddPartitionsToTxn (key 24), versions 0-5.
//
// Adds partitions to a producer's ongoing transaction (v0-3, one
// transactional ID), or checks or adds them for a batch of transactional IDs
// (v4+, KIP-890, meant for partition leaders). Kafka's state machine and
// errors (INVALID_TXN_STATE, PRODUCER_FENCED, CONCURRENT_TRANSACTIONS ...)
// are internal/txn's; see docs/DESIGN-txn.md.
//
// Not yet: v4+ should be allowed to brokers only (CLUSTER_ACTION); there are
// no ACLs.

import "github.com/twmb/franz-go/pkg/kmsg"

func init() {
	registerAPI(apiEntry{key: kmsg.AddPartitionsToTxn, min: 0, max: 5, handle: typed(handleAddPartitionsToTxn)})
}

func handleAddPartitionsToTxn(b *Broker, c *conn, req *kmsg.AddPartitionsToTxnRequest) (kmsg.Response, error) {
	return b.txns.AddPartitionsToTxn(req), nil
}

package broker

// DescribeTransactions (key 65), versions 0-0.
//
// Describes transactional IDs: state, producer ID and epoch, timeout,
// start time and partitions (KIP-664). Unknown IDs get
// TRANSACTIONAL_ID_NOT_FOUND.

import "github.com/twmb/franz-go/pkg/kmsg"

func init() {
	registerAPI(apiEntry{key: kmsg.DescribeTransactions, min: 0, max: 0, handle: typed(handleDescribeTransactions)})
}

func handleDescribeTransactions(b *Broker, c *conn, req *kmsg.DescribeTransactionsRequest) (kmsg.Response, error) {
	return b.txns.DescribeTransactions(req), nil
}

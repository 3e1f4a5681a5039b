package broker

// AddOffsetsToTxn (key 25), versions 0-4.
//
// Adds the group's __consumer_offsets partition to the producer's
// transaction, so TxnOffsetCommit may write there and EndTxn writes a marker
// there (consume-transform-produce, KIP-98).

import "github.com/twmb/franz-go/pkg/kmsg"

func init() {
	registerAPI(apiEntry{key: kmsg.AddOffsetsToTxn, min: 0, max: 4, handle: typed(handleAddOffsetsToTxn)})
}

func handleAddOffsetsToTxn(b *Broker, c *conn, req *kmsg.AddOffsetsToTxnRequest) (kmsg.Response, error) {
	return b.txns.AddOffsetsToTxn(req), nil
}

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
// Not yet: v5's verification that the producer added the group to its
// transaction (KIP-890) is not done.

import "github.com/twmb/franz-go/pkg/kmsg"

func init() {
	registerAPI(apiEntry{key: kmsg.TxnOffsetCommit, min: 0, max: 5, handle: typed(handleTxnOffsetCommit)})
}

func handleTxnOffsetCommit(b *Broker, c *conn, req *kmsg.TxnOffsetCommitRequest) (kmsg.Response, error) {
	return b.groups.TxnOffsetCommit(b.tasks.Context(), req), nil
}

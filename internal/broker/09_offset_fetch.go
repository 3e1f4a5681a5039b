package broker

// OffsetFetch (key 9), versions 0-10.
//
// Returns committed offsets for one group (v0-7) or several (v8+, KIP-709),
// all partitions when the topic list is null. A group that does not exist
// answers offset -1 for each partition asked and no error, as Kafka does.
// v10 names topics by ID.
//
// require_stable (v7+, KIP-447): a partition with a transactional offset
// commit (TxnOffsetCommit) whose transaction has not ended yet answers
// UNSTABLE_OFFSET_COMMIT instead of an offset, so a consumer that starts
// in the middle of a transaction retries rather than resume from an offset
// that may yet be aborted (internal/group: api_offsets.go).

import "github.com/twmb/franz-go/pkg/kmsg"

func init() {
	registerAPI(apiEntry{key: kmsg.OffsetFetch, min: 0, max: 10, handle: typed(handleOffsetFetch)})
}

func handleOffsetFetch(b *Broker, c *conn, req *kmsg.OffsetFetchRequest) (kmsg.Response, error) {
	return b.groups.OffsetFetch(b.tasks.Context(), req), nil
}

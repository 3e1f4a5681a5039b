package broker

// OffsetFetch (key 9), versions 0-10.
//
// Returns committed offsets for one group (v0-7) or several (v8+, KIP-709),
// all partitions when the topic list is null. A group that does not exist
// answers offset -1 for each partition asked and no error, as Kafka does.
// v10 names topics by ID.
//
// Not yet: require_stable (v7+, KIP-447) is always satisfied: there are no
// pending transactional offsets until transactions land (issue 5).

import "github.com/twmb/franz-go/pkg/kmsg"

func init() {
	registerAPI(apiEntry{key: kmsg.OffsetFetch, min: 0, max: 10, handle: typed(handleOffsetFetch)})
}

func handleOffsetFetch(b *Broker, c *conn, req *kmsg.OffsetFetchRequest) (kmsg.Response, error) {
	return b.groups.OffsetFetch(b.tasks.Context(), req), nil
}

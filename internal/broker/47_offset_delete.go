package broker

// OffsetDelete (key 47), versions 0-0.
//
// Deletes a group's committed offsets for some partitions (KIP-496), unless
// the group is subscribed to the topic (GROUP_SUBSCRIBED_TO_TOPIC); an
// unknown group is GROUP_ID_NOT_FOUND.

import "github.com/twmb/franz-go/pkg/kmsg"

func init() {
	registerAPI(apiEntry{key: kmsg.OffsetDelete, min: 0, max: 0, handle: typed(handleOffsetDelete)})
}

func handleOffsetDelete(b *Broker, c *conn, req *kmsg.OffsetDeleteRequest) (kmsg.Response, error) {
	return b.groups.OffsetDelete(b.tasks.Context(), req), nil
}

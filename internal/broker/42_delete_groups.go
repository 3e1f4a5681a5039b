package broker

// DeleteGroups (key 42), versions 0-2.
//
// Deletes groups with no members and their committed offsets (tombstones in
// __consumer_offsets). A group with members gets NON_EMPTY_GROUP, an unknown
// one GROUP_ID_NOT_FOUND.

import "github.com/twmb/franz-go/pkg/kmsg"

func init() {
	registerAPI(apiEntry{key: kmsg.DeleteGroups, min: 0, max: 2, handle: typed(handleDeleteGroups)})
}

func handleDeleteGroups(b *Broker, c *conn, req *kmsg.DeleteGroupsRequest) (kmsg.Response, error) {
	return b.groups.DeleteGroups(b.tasks.Context(), req), nil
}

package broker

// DescribeGroups (key 15), versions 0-6.
//
// Describes groups: state, protocol type and name, and members with their
// client ID, host, metadata and assignment (and instance ID from v4). An
// unknown group is reported in state Dead with no error, as Kafka does.
//
// Not yet: authorized operations (v3+) are not filled in; there are no
// ACLs.

import "github.com/twmb/franz-go/pkg/kmsg"

func init() {
	registerAPI(apiEntry{key: kmsg.DescribeGroups, min: 0, max: 6, handle: typed(handleDescribeGroups)})
}

func handleDescribeGroups(b *Broker, c *conn, req *kmsg.DescribeGroupsRequest) (kmsg.Response, error) {
	return b.groups.DescribeGroups(b.tasks.Context(), req), nil
}

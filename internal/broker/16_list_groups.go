package broker

// ListGroups (key 16), versions 0-5.
//
// Lists every group this coordinator knows, with its protocol type, state
// (v4+, filtered by StatesFilter, KIP-518) and type (v5+, filtered by
// TypesFilter: classic or consumer, KIP-848).
//
// Authorization (authz.go): with DESCRIBE on the cluster every group is
// listed; without it, only the groups the principal may DESCRIBE, never an
// error, as in Kafka.

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() {
	registerAPI(apiEntry{key: kmsg.ListGroups, min: 0, max: 5, handle: typed(handleListGroups)})
}

func handleListGroups(b *Broker, c *conn, req *kmsg.ListGroupsRequest) (kmsg.Response, error) {
	resp := b.groups.ListGroups(b.tasks.Context(), req)
	if !b.permitsCluster(c, kmsg.ACLOperationDescribe) {
		resp.Groups = slices.DeleteFunc(resp.Groups, func(g kmsg.ListGroupsResponseGroup) bool {
			return !b.permits(c, kmsg.ACLOperationDescribe, kmsg.ACLResourceTypeGroup, g.Group)
		})
	}
	return resp, nil
}

package group

import (
	"context"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// DescribeGroups handles DescribeGroups v0-v6. A group that does not exist,
// or a consumer (KIP-848) group, which Kafka describes only with
// ConsumerGroupDescribe, is described as Dead with no members; from v6
// (KIP-1043) it also carries GROUP_ID_NOT_FOUND. The protocol and the members' metadata and
// assignments are shown only for a Stable group. AuthorizedOperations (v3+)
// is left for the broker to fill in.
func (c *Coordinator) DescribeGroups(ctx context.Context, req *kmsg.DescribeGroupsRequest) *kmsg.DescribeGroupsResponse {
	resp := req.ResponseKind().(*kmsg.DescribeGroupsResponse)
	for _, id := range req.Groups {
		dg := kmsg.NewDescribeGroupsResponseGroup()
		dg.Group = id
		c.describe(req.Version, &dg)
		resp.Groups = append(resp.Groups, dg)
	}
	return resp
}

// An empty group ID is served like any other, as Kafka does for the
// offset and admin APIs (old simple consumers commit under "").
func (c *Coordinator) describe(version int16, dg *kmsg.DescribeGroupsResponseGroup) {
	g, code := c.lockGroup(dg.Group, false)
	if g == nil {
		if code != 0 {
			dg.ErrorCode = code
			return
		}
		dg.State = stateDead.String()
		if version >= 6 {
			dg.ErrorCode = codeGroupIDNotFound
			dg.ErrorMessage = new("group " + dg.Group + " not found")
		}
		return
	}
	defer g.mu.Unlock()
	if g.kind != protocolClassic {
		// Kafka describes only classic groups here; clients describe
		// consumer groups with ConsumerGroupDescribe, and fall back to
		// DescribeGroups on this answer.
		dg.State = stateDead.String()
		if version >= 6 {
			dg.ErrorCode = codeGroupIDNotFound
			dg.ErrorMessage = new("group " + dg.Group + " is not a classic group")
		}
		return
	}
	g.classic.describe(dg)
}

// ListGroups handles ListGroups v0-v5: every group this coordinator serves,
// filtered by state (v4, KIP-518) and type (v5, KIP-848: "classic" or
// "consumer"), both ignoring case. While a partition is loading the answer
// carries COORDINATOR_LOAD_IN_PROGRESS with the groups known so far.
func (c *Coordinator) ListGroups(ctx context.Context, req *kmsg.ListGroupsRequest) *kmsg.ListGroupsResponse {
	resp := req.ResponseKind().(*kmsg.ListGroupsResponse)
	c.mu.Lock()
	if c.mu.partitions.AnyLoading() {
		resp.ErrorCode = codeCoordinatorLoadInProgress
	}
	c.mu.Unlock()
	matches := func(filter []string, value string) bool {
		return len(filter) == 0 || slices.ContainsFunc(filter, func(f string) bool { return strings.EqualFold(f, value) })
	}
	for _, g := range c.snapshot(nil) {
		g.mu.Lock()
		lg := kmsg.NewListGroupsResponseGroup()
		lg.Group, lg.ProtocolType, lg.GroupState, lg.GroupType = g.id, g.protocolType(), g.stateName(), g.kind.String()
		removed := g.removed
		g.mu.Unlock()
		if removed || !matches(req.StatesFilter, lg.GroupState) || !matches(req.TypesFilter, lg.GroupType) {
			continue
		}
		resp.Groups = append(resp.Groups, lg)
	}
	slices.SortFunc(resp.Groups, func(a, b kmsg.ListGroupsResponseGroup) int { return strings.Compare(a.Group, b.Group) })
	return resp
}

// DeleteGroups handles DeleteGroups v0-v3: each group, classic or consumer,
// must be Empty (NON_EMPTY_GROUP otherwise); its offsets and metadata get
// tombstones and it is gone once they are durable.
func (c *Coordinator) DeleteGroups(ctx context.Context, req *kmsg.DeleteGroupsRequest) *kmsg.DeleteGroupsResponse {
	resp := req.ResponseKind().(*kmsg.DeleteGroupsResponse)
	for _, id := range req.Groups {
		rg := kmsg.NewDeleteGroupsResponseGroup()
		rg.Group = id
		rg.ErrorCode = c.deleteGroup(id)
		resp.Groups = append(resp.Groups, rg)
	}
	return resp
}

func (c *Coordinator) deleteGroup(id string) int16 {
	g, code := c.lockGroup(id, false)
	if g == nil {
		if code == 0 {
			code = codeGroupIDNotFound
		}
		return code
	}
	s := c.newStep(g)
	switch {
	case g.dead():
		code = codeGroupIDNotFound
	case !g.isEmpty():
		code = codeNonEmptyGroup
	default:
		records := make([]kv, 0, len(g.offsets)+3)
		for _, tp := range sortedPartitions(g.offsets) {
			records = append(records, kv{key: offsetKey(g.id, tp)})
		}
		// The offsets of open transactions go too, as in Kafka; a
		// partition with both needs one tombstone.
		for _, tp := range g.pendingPartitions() {
			if _, ok := g.offsets[tp]; !ok {
				records = append(records, kv{key: offsetKey(g.id, tp)})
			}
		}
		records = append(records, g.tombstones()...)
		s.write(records, func(s *step, err error) {
			if err != nil {
				code = commitErrorCode(err)
				return
			}
			clear(g.offsets)
			clear(g.pending)
			g.markDead(s)
			s.log.Info("group deleted")
		})
	}
	c.finishTurn(g, s)
	return code
}

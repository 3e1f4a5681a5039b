package broker

// DeleteAcls (key 31), versions 0-3.
//
// Removes the ACLs each filter matches, through the active controller
// (internal/controller's DeleteACLs): the filters are Kafka's
// AclBindingFilter, as in DescribeAcls; each reports the ACLs it matched,
// and every removal of the request is one metadata batch (an ACL two
// filters match is listed by both, removed once). The broker applies the
// image before it answers. In a quorum a broker that is not the active
// controller forwards the request. A filter holding a value Kafka does not
// know (resource type 99, say) is INVALID_REQUEST ("Unknown
// patternFilter." or "Unknown entryFilter."), and removes nothing.
//
// v1 adds pattern types (KIP-290; v0's filter is LITERAL), v2 is flexible,
// v3 adds the USER resource type.
//
// Without an authorizer every filter gets SECURITY_DISABLED, as in Kafka
// (authz.go). UNKNOWN (0) as a resource type, pattern type, operation or
// permission closes the connection: Kafka cannot parse such a request.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/controller"
)

func init() {
	registerAPI(apiEntry{key: kmsg.DeleteACLs, min: 0, max: 3, handle: typed(handleDeleteACLs)})
}

func handleDeleteACLs(b *Broker, c *conn, req *kmsg.DeleteACLsRequest) (kmsg.Response, error) {
	for _, f := range req.Filters {
		if err := checkACLValues("DeleteAcls", f.ResourceType, f.ResourcePatternType, f.Operation, f.PermissionType); err != nil {
			return nil, err
		}
	}
	resp := req.ResponseKind().(*kmsg.DeleteACLsResponse)
	if code, msg := b.aclWriteRefusal(c); code != 0 {
		for range req.Filters {
			r := kmsg.NewDeleteACLsResponseResult()
			r.ErrorCode, r.ErrorMessage = code, kmsg.StringPtr(msg)
			resp.Results = append(resp.Results, r)
		}
		return resp, nil
	}
	return b.forwardOr(c, req, func() kmsg.Response { return b.deleteACLs(req) })
}

func (b *Broker) deleteACLs(req *kmsg.DeleteACLsRequest) *kmsg.DeleteACLsResponse {
	resp := req.ResponseKind().(*kmsg.DeleteACLsResponse)
	filters := make([]controller.ACLFilter, len(req.Filters))
	for i, f := range req.Filters {
		filters[i] = aclFilterFromDelete(f)
	}
	ctx, cancel := b.adminContext(0)
	defer cancel()
	results := b.ctrl.DeleteACLs(ctx, filters)
	b.catchUpMetadata()
	for _, res := range results {
		r := kmsg.NewDeleteACLsResponseResult()
		r.ErrorCode, r.ErrorMessage = res.ErrorCode, optionalMessage(res.ErrorMessage)
		for _, a := range res.Matching {
			m := kmsg.NewDeleteACLsResponseResultMatchingACL()
			m.ResourceType, m.ResourceName = kmsg.ACLResourceType(a.ResourceType), a.ResourceName
			m.ResourcePatternType = kmsg.ACLResourcePatternType(a.PatternType)
			m.Principal, m.Host = a.Principal, a.Host
			m.Operation, m.PermissionType = kmsg.ACLOperation(a.Operation), kmsg.ACLPermissionType(a.PermissionType)
			r.MatchingACLs = append(r.MatchingACLs, m)
		}
		resp.Results = append(resp.Results, r)
	}
	return resp
}

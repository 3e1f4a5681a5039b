package broker

// DescribeAcls (key 29), versions 0-3.
//
// Lists the ACLs of the broker's current metadata image that the request's
// filter matches, with Kafka's AclBindingFilter rules
// (controller.ACLFilter): ANY (1) in a number and a null string match
// every value; with a resource name, the pattern type MATCH (2) finds the
// ACLs that apply to that one resource (LITERAL ones named exactly, the
// LITERAL wildcard "*", PREFIXED ones whose name the resource name starts
// with), while ANY, LITERAL or PREFIXED compare the name exactly. A value
// Kafka does not know (resource type 99, say) matches nothing, as there.
// The answer groups the ACLs by resource (type, name, pattern type), as
// Kafka does, in a sorted order where Kafka's is a hash map's.
//
// v1 adds pattern types (KIP-290); v0 has none on the wire and its filter
// is LITERAL (kmsg's default, where Kafka turns ANY into LITERAL), so a v0
// client never sees a PREFIXED ACL. v2 is flexible, v3 adds the USER
// resource type (7), which every version here accepts, as Kafka does.
//
// Without an authorizer the answer is SECURITY_DISABLED, as Kafka's
// (authz.go); with one, a principal without DESCRIBE on the cluster gets
// CLUSTER_AUTHORIZATION_FAILED (Kafka's AclApis.handleDescribeAcls). UNKNOWN (0) as a resource type, pattern type, operation or
// permission closes the connection: Kafka cannot parse such a request.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/controller"
	"github.com/samsa-io/samsa/internal/metadata"
)

func init() {
	registerAPI(apiEntry{key: kmsg.DescribeACLs, min: 0, max: 3, handle: typed(handleDescribeACLs)})
}

func handleDescribeACLs(b *Broker, c *conn, req *kmsg.DescribeACLsRequest) (kmsg.Response, error) {
	if err := checkACLValues("DescribeAcls", req.ResourceType, req.ResourcePatternType, req.Operation, req.PermissionType); err != nil {
		return nil, err
	}
	resp := req.ResponseKind().(*kmsg.DescribeACLsResponse)
	if !b.authorizerEnabled() {
		resp.ErrorCode, resp.ErrorMessage = kerr.SecurityDisabled.Code, kmsg.StringPtr(noAuthorizerDescribeMessage)
		return resp, nil
	}
	if !b.authorizeCluster(c, kmsg.ACLOperationDescribe) {
		resp.ErrorCode, resp.ErrorMessage = kerr.ClusterAuthorizationFailed.Code, kmsg.StringPtr(kerr.ClusterAuthorizationFailed.Description)
		return resp, nil
	}
	filter := controller.ACLFilter{
		ResourceType: int8(req.ResourceType), ResourceName: req.ResourceName, PatternType: int8(req.ResourcePatternType),
		Principal: req.Principal, Host: req.Host, Operation: int8(req.Operation), PermissionType: int8(req.PermissionType),
	}
	img := b.meta.Load()
	if img == nil {
		img = metadata.Empty()
	}
	resp.Resources = describeACLResources(img.ACLs(), filter)
	return resp, nil
}

// describeACLResources groups the ACLs the filter matches by resource.
// acls come in metadata.ACL.Compare's order, so a resource's ACLs are
// adjacent.
func describeACLResources(acls []metadata.ACLWithID, filter controller.ACLFilter) []kmsg.DescribeACLsResponseResource {
	var out []kmsg.DescribeACLsResponseResource
	for _, a := range acls {
		if !filter.Matches(a.ACL) {
			continue
		}
		n := len(out)
		if n == 0 || int8(out[n-1].ResourceType) != a.ResourceType || out[n-1].ResourceName != a.ResourceName ||
			int8(out[n-1].ResourcePatternType) != a.PatternType {
			r := kmsg.NewDescribeACLsResponseResource()
			r.ResourceType, r.ResourceName = kmsg.ACLResourceType(a.ResourceType), a.ResourceName
			r.ResourcePatternType = kmsg.ACLResourcePatternType(a.PatternType)
			out = append(out, r)
			n++
		}
		d := kmsg.NewDescribeACLsResponseResourceACL()
		d.Principal, d.Host = a.Principal, a.Host
		d.Operation, d.PermissionType = kmsg.ACLOperation(a.Operation), kmsg.ACLPermissionType(a.PermissionType)
		out[n-1].ACLs = append(out[n-1].ACLs, d)
	}
	return out
}

package broker

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/controller"
	"github.com/samsa-io/samsa/internal/metadata"
)

// What the ACL handlers share (DescribeAcls, CreateAcls, DeleteAcls):
// Kafka's wire ACLs and filters as the controller's, and the refusal of
// UNKNOWN values that Kafka makes while it parses the request.

// SECURITY_DISABLED messages, Kafka's (AclApis) for each API.
const (
	noAuthorizerMessage         = "No Authorizer is configured."
	noAuthorizerDescribeMessage = "No Authorizer is configured on the broker"
)

// aclWriteRefusal is why CreateAcls and DeleteAcls refuse every item, 0
// when they may go on: SECURITY_DISABLED without an authorizer,
// CLUSTER_AUTHORIZATION_FAILED without ALTER on the cluster (Kafka's
// AclApis).
func (b *Broker) aclWriteRefusal(c *conn) (int16, string) {
	switch {
	case !b.authorizerEnabled():
		return kerr.SecurityDisabled.Code, noAuthorizerMessage
	case !b.authorizeCluster(c, kmsg.ACLOperationAlter):
		return kerr.ClusterAuthorizationFailed.Code, kerr.ClusterAuthorizationFailed.Description
	}
	return 0, ""
}

// checkACLValues refuses UNKNOWN (0) as a resource type, pattern type,
// operation or permission, which Kafka's request classes refuse while
// parsing (CreateAclsRequest.validate and the others): the request is
// malformed and its connection closes. Other numbers Kafka does not know
// pass here and get the per-item error (or match nothing) as in Kafka.
func checkACLValues(api string, resourceType kmsg.ACLResourceType, pattern kmsg.ACLResourcePatternType, op kmsg.ACLOperation, perm kmsg.ACLPermissionType) error {
	if resourceType == 0 || pattern == 0 || op == 0 || perm == 0 {
		return fmt.Errorf("%w: %s with an UNKNOWN element (resource type %d, pattern type %d, operation %d, permission %d)",
			errMalformed, api, resourceType, pattern, op, perm)
	}
	return nil
}

func aclFromCreation(c kmsg.CreateACLsRequestCreation) metadata.ACL {
	return metadata.ACL{
		ResourceType: int8(c.ResourceType), ResourceName: c.ResourceName, PatternType: int8(c.ResourcePatternType),
		Principal: c.Principal, Host: c.Host, Operation: int8(c.Operation), PermissionType: int8(c.PermissionType),
	}
}

func aclFilterFromDelete(f kmsg.DeleteACLsRequestFilter) controller.ACLFilter {
	return controller.ACLFilter{
		ResourceType: int8(f.ResourceType), ResourceName: f.ResourceName, PatternType: int8(f.ResourcePatternType),
		Principal: f.Principal, Host: f.Host, Operation: int8(f.Operation), PermissionType: int8(f.PermissionType),
	}
}

// imageHasACL reports whether img holds an ACL like a, under any ID.
func imageHasACL(img *metadata.Image, a metadata.ACL) bool {
	for _, have := range img.ACLs() {
		if have.ACL == a {
			return true
		}
	}
	return false
}

// optionalMessage is an error message as the wire carries it: null for none.
func optionalMessage(msg string) *string {
	if msg == "" {
		return nil
	}
	return kmsg.StringPtr(msg)
}

package broker

// CreateAcls (key 30), versions 0-3.
//
// Adds ACLs through the active controller, which validates each as Kafka
// does (internal/controller's CreateACLs) and commits the valid ones as
// AccessControlEntryRecords in one metadata batch; the broker then applies
// the image before it answers, so a DescribeAcls right after lists them.
// In a quorum a broker that is not the active controller forwards the
// request. Per ACL: INVALID_REQUEST for a CLUSTER resource not named
// kafka-cluster, an empty resource name, a resource type, pattern type,
// operation or permission that is ANY (or, as a number Kafka does not
// know, UNKNOWN), a pattern type other than LITERAL and PREFIXED (MATCH),
// or a principal not of the form Type:Name. An ACL that exists already
// succeeds, once in the metadata.
//
// v1 adds pattern types (KIP-290; v0's ACLs are LITERAL), v2 is flexible,
// v3 adds the USER resource type, accepted at every version as in Kafka.
//
// Without an authorizer every ACL gets SECURITY_DISABLED, as in Kafka
// (authz.go); without ALTER on the cluster, CLUSTER_AUTHORIZATION_FAILED.
// UNKNOWN (0) as a resource type, pattern type, operation or permission
// closes the connection: Kafka cannot parse such a request.

import (
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/metadata"
)

func init() {
	registerAPI(apiEntry{key: kmsg.CreateACLs, min: 0, max: 3, handle: typed(handleCreateACLs)})
}

func handleCreateACLs(b *Broker, c *conn, req *kmsg.CreateACLsRequest) (kmsg.Response, error) {
	for _, cr := range req.Creations {
		if err := checkACLValues("CreateAcls", cr.ResourceType, cr.ResourcePatternType, cr.Operation, cr.PermissionType); err != nil {
			return nil, err
		}
	}
	resp := req.ResponseKind().(*kmsg.CreateACLsResponse)
	if code, msg := b.aclWriteRefusal(c); code != 0 {
		for range req.Creations {
			r := kmsg.NewCreateACLsResponseResult()
			r.ErrorCode, r.ErrorMessage = code, kmsg.StringPtr(msg)
			resp.Results = append(resp.Results, r)
		}
		return resp, nil
	}
	return b.forwardOr(c, req, func() kmsg.Response { return b.createACLs(req) })
}

func (b *Broker) createACLs(req *kmsg.CreateACLsRequest) *kmsg.CreateACLsResponse {
	resp := req.ResponseKind().(*kmsg.CreateACLsResponse)
	acls := make([]metadata.ACL, len(req.Creations))
	for i, cr := range req.Creations {
		acls[i] = aclFromCreation(cr)
	}
	ctx, cancel := b.adminContext(0)
	defer cancel()
	results := b.ctrl.CreateACLs(ctx, acls)
	b.catchUpMetadata()
	for _, res := range results {
		r := kmsg.NewCreateACLsResponseResult()
		r.ErrorCode, r.ErrorMessage = res.ErrorCode, optionalMessage(res.ErrorMessage)
		resp.Results = append(resp.Results, r)
	}
	return resp
}

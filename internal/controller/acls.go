package controller

import (
	"context"
	"crypto/rand"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-io/samsa/internal/metadata"
)

// Kafka's ACL enums by their wire numbers (ResourceType, PatternType,
// AclOperation, AclPermissionType); 0 is UNKNOWN in each. The names are
// Kafka's, for its error messages.
const (
	aclResourceAny     int8 = 1
	aclResourceCluster int8 = 4
	aclResourceUser    int8 = 7 // the highest

	aclPatternAny      int8 = 1
	aclPatternMatch    int8 = 2
	aclPatternLiteral  int8 = 3
	aclPatternPrefixed int8 = 4

	aclOperationAny            int8 = 1
	aclOperationDescribeTokens int8 = 14 // the highest

	aclPermissionAny   int8 = 1
	aclPermissionDeny  int8 = 2
	aclPermissionAllow int8 = 3
)

var (
	aclResourceNames   = []string{"UNKNOWN", "ANY", "TOPIC", "GROUP", "CLUSTER", "TRANSACTIONAL_ID", "DELEGATION_TOKEN", "USER"}
	aclPatternNames    = []string{"UNKNOWN", "ANY", "MATCH", "LITERAL", "PREFIXED"}
	aclOperationNames  = []string{"UNKNOWN", "ANY", "ALL", "READ", "WRITE", "CREATE", "DELETE", "ALTER", "DESCRIBE", "CLUSTER_ACTION", "DESCRIBE_CONFIGS", "ALTER_CONFIGS", "IDEMPOTENT_WRITE", "CREATE_TOKENS", "DESCRIBE_TOKENS"}
	aclPermissionNames = []string{"UNKNOWN", "ANY", "DENY", "ALLOW"}
)

// enumName is Kafka's name of an enum value; a number Kafka does not know
// is UNKNOWN, as its fromCode makes it.
func enumName(names []string, v int8) string {
	if v < 0 || int(v) >= len(names) {
		return names[0]
	}
	return names[v]
}

const (
	// ClusterResourceName is the only name of the CLUSTER resource.
	ClusterResourceName = "kafka-cluster"
	// wildcardResource, in a LITERAL ACL, names every resource of its type.
	wildcardResource = "*"
	// maxACLRecordsPerRequest caps the records one ACL request may write,
	// as Kafka's MAX_RECORDS_PER_USER_OP.
	maxACLRecordsPerRequest = 10000
)

// ACLFilter selects ACLs, as Kafka's AclBindingFilter: ANY (1) in a
// number and nil in a string match every value. A resource name is
// compared by the filter's pattern type: ANY or the ACL's own pattern type
// compare names exactly; MATCH finds the ACLs that apply to that one
// resource: LITERAL ones named exactly or "*", and PREFIXED ones whose
// name the resource name starts with.
type ACLFilter struct {
	ResourceType   int8
	ResourceName   *string
	PatternType    int8
	Principal      *string
	Host           *string
	Operation      int8
	PermissionType int8
}

// Matches reports whether the filter selects a.
func (f ACLFilter) Matches(a metadata.ACL) bool {
	switch {
	case f.ResourceType != aclResourceAny && f.ResourceType != a.ResourceType,
		f.PatternType != aclPatternAny && f.PatternType != aclPatternMatch && f.PatternType != a.PatternType,
		f.ResourceName != nil && !f.matchesName(a),
		f.Principal != nil && *f.Principal != a.Principal,
		f.Host != nil && *f.Host != a.Host,
		f.Operation != aclOperationAny && f.Operation != a.Operation:
		return false
	}
	return f.PermissionType == aclPermissionAny || f.PermissionType == a.PermissionType
}

func (f ACLFilter) matchesName(a metadata.ACL) bool {
	name := *f.ResourceName
	if f.PatternType == aclPatternAny || f.PatternType == a.PatternType {
		return name == a.ResourceName
	}
	switch a.PatternType { // the filter's is MATCH
	case aclPatternLiteral:
		return name == a.ResourceName || a.ResourceName == wildcardResource
	case aclPatternPrefixed:
		return strings.HasPrefix(name, a.ResourceName)
	}
	return false
}

// checkACLFilter refuses a filter with a value Kafka does not know, which
// could match nothing, as AclControlManager.validateFilter does.
func checkACLFilter(f ACLFilter) *failure {
	switch {
	case f.ResourceType < aclResourceAny || f.ResourceType > aclResourceUser,
		f.PatternType < aclPatternAny || f.PatternType > aclPatternPrefixed:
		return fail(kerr.InvalidRequest, "Unknown patternFilter.")
	case f.Operation < aclOperationAny || f.Operation > aclOperationDescribeTokens,
		f.PermissionType < aclPermissionAny || f.PermissionType > aclPermissionAllow:
		return fail(kerr.InvalidRequest, "Unknown entryFilter.")
	}
	return nil
}

// checkNewACL validates an ACL to create, with the checks and messages of
// Kafka's AclApis (the CLUSTER resource's name, an empty name) and
// AclControlManager.validateNewAcl (concrete enum values), plus the
// principal's Type:Name form, which the authorizer needs to match it.
func checkNewACL(a metadata.ACL) *failure {
	switch {
	case a.ResourceType == aclResourceCluster && a.ResourceName != ClusterResourceName:
		return fail(kerr.InvalidRequest, "The only valid name for the CLUSTER resource is %s", ClusterResourceName)
	case a.ResourceName == "":
		return fail(kerr.InvalidRequest, "Invalid empty resource name")
	case a.ResourceType <= aclResourceAny || a.ResourceType > aclResourceUser:
		return fail(kerr.InvalidRequest, "Invalid resourceType %s", enumName(aclResourceNames, a.ResourceType))
	case a.PatternType != aclPatternLiteral && a.PatternType != aclPatternPrefixed:
		return fail(kerr.InvalidRequest, "Invalid patternType %s", enumName(aclPatternNames, a.PatternType))
	case a.Operation <= aclOperationAny || a.Operation > aclOperationDescribeTokens:
		return fail(kerr.InvalidRequest, "Invalid operation %s", enumName(aclOperationNames, a.Operation))
	case a.PermissionType != aclPermissionDeny && a.PermissionType != aclPermissionAllow:
		return fail(kerr.InvalidRequest, "Invalid permissionType %s", enumName(aclPermissionNames, a.PermissionType))
	}
	if typ, _, ok := strings.Cut(a.Principal, ":"); !ok || typ == "" {
		return fail(kerr.InvalidRequest, "Invalid principal %q: expected a string in format principalType:principalName", a.Principal)
	}
	return nil
}

// ACLResult is the outcome of one ACL of a CreateAcls request.
type ACLResult struct {
	ErrorCode    int16
	ErrorMessage string
}

// CreateACLs adds ACLs, each under a new random ID, all valid ones in one
// committed batch, as Kafka's AclControlManager.createAcls: an invalid ACL
// is INVALID_REQUEST with Kafka's message; an ACL that exists already, or
// earlier in the request, succeeds without a second copy.
func (c *Controller) CreateACLs(ctx context.Context, acls []metadata.ACL) []ACLResult {
	results := make([]ACLResult, len(acls))
	setAll := func(idx []int, f *failure) {
		for _, i := range idx {
			results[i] = ACLResult{ErrorCode: f.code(), ErrorMessage: f.message()}
		}
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if err := c.checkWritableLocked(); err != nil {
		f := proposeFailure(err)
		for i := range results {
			results[i] = ACLResult{ErrorCode: f.code(), ErrorMessage: f.message()}
		}
		return results
	}
	img := c.Image()
	existing := map[metadata.ACL]bool{}
	for _, a := range img.ACLs() {
		existing[a.ACL] = true
	}
	taken := map[metadata.ACLID]bool{}
	var recs []metadata.Record
	var planned []int
	for i, a := range acls {
		if f := checkNewACL(a); f != nil {
			setAll([]int{i}, f)
			continue
		}
		planned = append(planned, i)
		if existing[a] {
			continue
		}
		existing[a] = true
		id, err := newACLID(img, taken)
		if err != nil {
			setAll([]int{i}, fail(kerr.UnknownServerError, "%v", err))
			continue
		}
		recs = append(recs, metadata.AccessControlEntryRecord{ID: id, ACL: a})
	}
	switch {
	case len(recs) == 0:
		return results
	case len(recs) > maxACLRecordsPerRequest:
		setAll(planned, fail(kerr.UnknownServerError, "Cannot create more than %d ACLs in one request.", maxACLRecordsPerRequest))
		return results
	}
	if err := c.proposeLocked(ctx, recs); err != nil {
		setAll(planned, proposeFailure(err))
		return results
	}
	c.log.Info("acls created", "count", len(recs))
	return results
}

// newACLID draws an ID no ACL has, in the image or among those taken for
// this batch.
func newACLID(img *metadata.Image, taken map[metadata.ACLID]bool) (metadata.ACLID, error) {
	for {
		u, err := metadata.NewUUID(rand.Reader)
		if err != nil {
			return metadata.ACLID{}, err
		}
		id := metadata.ACLID(u)
		if _, ok := img.ACL(id); !ok && !taken[id] {
			taken[id] = true
			return id, nil
		}
	}
}

// DeleteACLsResult is the outcome of one filter of a DeleteAcls request:
// the ACLs it matched (and so removed), in metadata.ACL.Compare's order,
// or an error.
type DeleteACLsResult struct {
	ErrorCode    int16
	ErrorMessage string
	Matching     []metadata.ACL
}

// DeleteACLs removes the ACLs each filter matches, as Kafka's
// AclControlManager.deleteAcls: every valid filter reports what it
// matched, and all the removals are one committed batch (an ACL that two
// filters match is listed by both and removed once). A filter with a value
// Kafka does not know is INVALID_REQUEST.
func (c *Controller) DeleteACLs(ctx context.Context, filters []ACLFilter) []DeleteACLsResult {
	results := make([]DeleteACLsResult, len(filters))
	setResult := func(i int, f *failure) {
		results[i] = DeleteACLsResult{ErrorCode: f.code(), ErrorMessage: f.message()}
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if err := c.checkWritableLocked(); err != nil {
		for i := range results {
			setResult(i, proposeFailure(err))
		}
		return results
	}
	acls := c.Image().ACLs()
	removing := map[metadata.ACLID]bool{}
	var recs []metadata.Record
	var planned []int
	for i, f := range filters {
		if fl := checkACLFilter(f); fl != nil {
			setResult(i, fl)
			continue
		}
		var matching []metadata.ACL
		var ids []metadata.ACLID
		for _, a := range acls {
			if f.Matches(a.ACL) {
				matching = append(matching, a.ACL)
				if !removing[a.ID] {
					ids = append(ids, a.ID)
				}
			}
		}
		if len(removing)+len(ids) > maxACLRecordsPerRequest {
			setResult(i, fail(kerr.UnknownServerError, "Cannot remove more than %d acls in a single delete operation.", maxACLRecordsPerRequest))
			continue
		}
		for _, id := range ids {
			removing[id] = true
			recs = append(recs, metadata.RemoveAccessControlEntryRecord{ID: id})
		}
		results[i].Matching = matching
		planned = append(planned, i)
	}
	if len(recs) == 0 {
		return results
	}
	if err := c.proposeLocked(ctx, recs); err != nil {
		for _, i := range planned {
			setResult(i, proposeFailure(err))
		}
		return results
	}
	c.log.Info("acls deleted", "count", len(recs))
	return results
}

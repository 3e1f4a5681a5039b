package auth

import (
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The names Kafka's ACLs give a special meaning.
const (
	// WildcardResource is the name of a LITERAL ACL that applies to every
	// resource of its type. A PREFIXED ACL on "*" is no wildcard: it
	// applies to names starting with "*", as in Kafka, which accepts it.
	WildcardResource = "*"
	// WildcardPrincipal is the ACL principal that applies to every
	// principal, whatever its type.
	WildcardPrincipal = "User:*"
	// WildcardHost is the ACL host that applies to every client address.
	WildcardHost = "*"
	// ClusterName is the name of the one CLUSTER resource.
	ClusterName = "kafka-cluster"
)

// ACL is one stored access control entry: Kafka's AclBinding, a resource
// pattern and who may or may not do what on it. The wire values are
// kmsg's, so a CreateAcls creation or a DescribeAcls resource converts
// field by field.
type ACL struct {
	ResourceType kmsg.ACLResourceType
	ResourceName string
	// PatternType is LITERAL (the name, or every name for "*") or
	// PREFIXED (every name starting with ResourceName).
	PatternType kmsg.ACLResourcePatternType
	// Principal is "Type:Name", such as User:alice, or User:* for all.
	Principal string
	// Host is a client address as the broker sees it, or * for all.
	Host       string
	Operation  kmsg.ACLOperation
	Permission kmsg.ACLPermissionType
}

func (a ACL) String() string {
	return fmt.Sprintf("%s:%s:%s %s %s %s from %s", a.ResourceType, a.PatternType, a.ResourceName,
		a.Principal, a.Permission, a.Operation, a.Host)
}

// ACLError is an ACL or filter a CreateAcls, DescribeAcls or DeleteAcls
// request may not carry. Code is the Kafka error the broker answers with
// (errors.Is(err, kerr.InvalidRequest) holds for the codes Kafka uses);
// Message goes in the response's ErrorMessage.
type ACLError struct {
	Code    *kerr.Error
	Message string
}

func (e *ACLError) Error() string { return e.Message }

// Unwrap lets errors.Is match the Kafka error code.
func (e *ACLError) Unwrap() error { return e.Code }

// invalidACL is the error of every ACL validation: Kafka's
// AclControlManager and AclApis throw InvalidRequestException for each.
func invalidACL(format string, args ...any) error {
	return &ACLError{Code: kerr.InvalidRequest, Message: fmt.Sprintf(format, args...)}
}

// Validate checks an ACL before it is stored, as Kafka's CreateAcls does
// (AclApis on the broker, AclControlManager.validateNewAcl on the
// controller). Every failure is INVALID_REQUEST. The broker itself
// answers UNSUPPORTED_VERSION for a PREFIXED ACL in CreateAcls v0 and
// SECURITY_DISABLED when no authorizer is configured.
//
// Like Kafka, it does not check the host, and it accepts a PREFIXED "*".
// A principal must be Type:Name (KAFKA-18051: one without a colon broke
// authorization); an empty type is refused too, though Kafka keeps it,
// since no principal has an empty type.
func (a ACL) Validate() error {
	if !storedResourceType(a.ResourceType) {
		return invalidACL("Invalid resourceType %s", a.ResourceType)
	}
	if a.PatternType != kmsg.ACLResourcePatternTypeLiteral && a.PatternType != kmsg.ACLResourcePatternTypePrefixed {
		return invalidACL("Invalid patternType %s", a.PatternType)
	}
	if !storedOperation(a.Operation) {
		return invalidACL("Invalid operation %s", a.Operation)
	}
	if a.Permission != kmsg.ACLPermissionTypeAllow && a.Permission != kmsg.ACLPermissionTypeDeny {
		return invalidACL("Invalid permissionType %s", a.Permission)
	}
	if a.ResourceType == kmsg.ACLResourceTypeCluster && a.ResourceName != ClusterName {
		return invalidACL("The only valid name for the CLUSTER resource is %s", ClusterName)
	}
	if a.ResourceName == "" {
		return invalidACL("Invalid empty resource name")
	}
	if _, err := ParsePrincipal(a.Principal); err != nil {
		return invalidACL("Could not parse principal from `%s` (it is not principalType:principalName)", a.Principal)
	}
	return nil
}

// storedResourceType: TOPIC through USER. Codes Kafka does not know read
// as UNKNOWN there (ResourceType.fromCode).
func storedResourceType(t kmsg.ACLResourceType) bool {
	return t >= kmsg.ACLResourceTypeTopic && t <= kmsg.ACLResourceTypeUser
}

// storedOperation: ALL through DESCRIBE_TOKENS; ANY is a filter value.
func storedOperation(op kmsg.ACLOperation) bool {
	return op >= kmsg.ACLOperationAll && op <= kmsg.ACLOperationDescribeTokens
}

// ACLFilter selects ACLs, as DescribeAcls and each DeleteAcls filter
// carry it (Kafka's AclBindingFilter). ANY in an enum field and nil in a
// string field match everything.
type ACLFilter struct {
	ResourceType kmsg.ACLResourceType
	ResourceName *string
	// PatternType is ANY, LITERAL, PREFIXED, or MATCH: with a name, MATCH
	// selects every ACL that applies to a resource of that name (the
	// literal one, the wildcard, and each prefix of it); with none, all.
	PatternType kmsg.ACLResourcePatternType
	Principal   *string
	Host        *string
	Operation   kmsg.ACLOperation
	Permission  kmsg.ACLPermissionType
}

// MatchAll is the filter that selects every ACL.
var MatchAll = ACLFilter{
	ResourceType: kmsg.ACLResourceTypeAny,
	PatternType:  kmsg.ACLResourcePatternTypeAny,
	Operation:    kmsg.ACLOperationAny,
	Permission:   kmsg.ACLPermissionTypeAny,
}

// Validate refuses a filter with an UNKNOWN field (Kafka reads any code
// it does not know as UNKNOWN), with INVALID_REQUEST as Kafka's
// AclControlManager.validateFilter does. The broker itself maps ANY to
// LITERAL, and refuses other pattern types, in DescribeAcls and
// DeleteAcls v0.
func (f ACLFilter) Validate() error {
	if f.ResourceType < kmsg.ACLResourceTypeAny || f.ResourceType > kmsg.ACLResourceTypeUser {
		return invalidACL("Unknown patternFilter: resource type %d", int8(f.ResourceType))
	}
	if f.PatternType < kmsg.ACLResourcePatternTypeAny || f.PatternType > kmsg.ACLResourcePatternTypePrefixed {
		return invalidACL("Unknown patternFilter: pattern type %d", int8(f.PatternType))
	}
	if f.Operation < kmsg.ACLOperationAny || f.Operation > kmsg.ACLOperationDescribeTokens {
		return invalidACL("Unknown entryFilter: operation %d", int8(f.Operation))
	}
	if f.Permission < kmsg.ACLPermissionTypeAny || f.Permission > kmsg.ACLPermissionTypeAllow {
		return invalidACL("Unknown entryFilter: permission type %d", int8(f.Permission))
	}
	return nil
}

// Matches reports whether the filter selects a, with Kafka's rules: the
// operation and permission compare exactly (a READ filter does not
// select an ALL ACL), and so do principal and host strings.
func (f ACLFilter) Matches(a ACL) bool {
	return f.matchesPattern(a) && f.matchesEntry(a)
}

func (f ACLFilter) matchesPattern(a ACL) bool {
	if f.ResourceType != kmsg.ACLResourceTypeAny && f.ResourceType != a.ResourceType {
		return false
	}
	anyPattern := f.PatternType == kmsg.ACLResourcePatternTypeAny || f.PatternType == kmsg.ACLResourcePatternTypeMatch
	if !anyPattern && f.PatternType != a.PatternType {
		return false
	}
	if f.ResourceName == nil {
		return true
	}
	name := *f.ResourceName
	if f.PatternType != kmsg.ACLResourcePatternTypeMatch {
		return name == a.ResourceName
	}
	return patternAppliesTo(a.PatternType, a.ResourceName, name)
}

// patternAppliesTo reports whether an ACL pattern applies to the resource name:
// the rule Authorize uses, written plainly for MATCH filters.
func patternAppliesTo(pattern kmsg.ACLResourcePatternType, aclName, name string) bool {
	switch pattern {
	case kmsg.ACLResourcePatternTypeLiteral:
		return aclName == name || aclName == WildcardResource
	case kmsg.ACLResourcePatternTypePrefixed:
		return strings.HasPrefix(name, aclName)
	}
	return false
}

func (f ACLFilter) matchesEntry(a ACL) bool {
	if f.Principal != nil && *f.Principal != a.Principal {
		return false
	}
	if f.Host != nil && *f.Host != a.Host {
		return false
	}
	if f.Operation != kmsg.ACLOperationAny && f.Operation != a.Operation {
		return false
	}
	return f.Permission == kmsg.ACLPermissionTypeAny || f.Permission == a.Permission
}

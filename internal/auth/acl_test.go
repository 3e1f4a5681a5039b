package auth

import (
	"errors"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// topicACL is a valid ALLOW READ ACL on the literal topic "orders".
func topicACL() ACL {
	return ACL{
		ResourceType: kmsg.ACLResourceTypeTopic,
		ResourceName: "orders",
		PatternType:  kmsg.ACLResourcePatternTypeLiteral,
		Principal:    "User:alice",
		Host:         "*",
		Operation:    kmsg.ACLOperationRead,
		Permission:   kmsg.ACLPermissionTypeAllow,
	}
}

func TestACLValidate(t *testing.T) {
	tests := []struct {
		name    string
		edit    func(*ACL)
		wantErr string // "" for valid; else a substring of the message
	}{
		{"valid literal", func(*ACL) {}, ""},
		{"valid prefixed", func(a *ACL) { a.PatternType = kmsg.ACLResourcePatternTypePrefixed }, ""},
		{"valid wildcard literal", func(a *ACL) { a.ResourceName = "*" }, ""},
		// Kafka stores a PREFIXED "*"; it applies to names starting with "*".
		{"prefixed star accepted", func(a *ACL) { a.ResourceName, a.PatternType = "*", kmsg.ACLResourcePatternTypePrefixed }, ""},
		{"wildcard principal", func(a *ACL) { a.Principal = "User:*" }, ""},
		{"principal name with colons", func(a *ACL) { a.Principal = "User:CN=a:b" }, ""},
		{"deny all", func(a *ACL) { a.Permission, a.Operation = kmsg.ACLPermissionTypeDeny, kmsg.ACLOperationAll }, ""},
		{"cluster", func(a *ACL) { a.ResourceType, a.ResourceName = kmsg.ACLResourceTypeCluster, ClusterName }, ""},
		{"user resource", func(a *ACL) { a.ResourceType, a.Operation = kmsg.ACLResourceTypeUser, kmsg.ACLOperationCreateTokens }, ""},

		{"unknown resource type", func(a *ACL) { a.ResourceType = kmsg.ACLResourceTypeUnknown }, "Invalid resourceType"},
		{"ANY resource type", func(a *ACL) { a.ResourceType = kmsg.ACLResourceTypeAny }, "Invalid resourceType"},
		{"resource type past USER", func(a *ACL) { a.ResourceType = 8 }, "Invalid resourceType"},
		{"ANY pattern", func(a *ACL) { a.PatternType = kmsg.ACLResourcePatternTypeAny }, "Invalid patternType"},
		{"MATCH pattern", func(a *ACL) { a.PatternType = kmsg.ACLResourcePatternTypeMatch }, "Invalid patternType"},
		{"unknown pattern", func(a *ACL) { a.PatternType = 0 }, "Invalid patternType"},
		{"ANY operation", func(a *ACL) { a.Operation = kmsg.ACLOperationAny }, "Invalid operation"},
		{"unknown operation", func(a *ACL) { a.Operation = 0 }, "Invalid operation"},
		{"operation past DESCRIBE_TOKENS", func(a *ACL) { a.Operation = 15 }, "Invalid operation"},
		{"ANY permission", func(a *ACL) { a.Permission = kmsg.ACLPermissionTypeAny }, "Invalid permissionType"},
		{"unknown permission", func(a *ACL) { a.Permission = 4 }, "Invalid permissionType"},
		{"empty name", func(a *ACL) { a.ResourceName = "" }, "empty resource name"},
		{"cluster by another name", func(a *ACL) { a.ResourceType, a.ResourceName = kmsg.ACLResourceTypeCluster, "c" }, "only valid name for the CLUSTER"},
		{"principal without colon", func(a *ACL) { a.Principal = "alice" }, "Could not parse principal"},
		{"empty principal", func(a *ACL) { a.Principal = "" }, "Could not parse principal"},
		{"principal without type", func(a *ACL) { a.Principal = ":alice" }, "Could not parse principal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := topicACL()
			tt.edit(&a)
			err := a.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate(%v) = %v, want nil", a, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Validate(%v) = %v, want %q", a, err, tt.wantErr)
			}
			if !errors.Is(err, kerr.InvalidRequest) {
				t.Fatalf("Validate(%v) = %v, not INVALID_REQUEST", a, err)
			}
		})
	}
}

func TestACLFilterValidate(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(*ACLFilter)
		valid bool
	}{
		{"match all", func(*ACLFilter) {}, true},
		{"MATCH", func(f *ACLFilter) { f.PatternType = kmsg.ACLResourcePatternTypeMatch }, true},
		{"every concrete field", func(f *ACLFilter) {
			f.ResourceType, f.PatternType = kmsg.ACLResourceTypeUser, kmsg.ACLResourcePatternTypePrefixed
			f.Operation, f.Permission = kmsg.ACLOperationDescribeTokens, kmsg.ACLPermissionTypeAllow
		}, true},
		{"unknown resource type", func(f *ACLFilter) { f.ResourceType = 0 }, false},
		{"resource type past USER", func(f *ACLFilter) { f.ResourceType = 8 }, false},
		{"unknown pattern type", func(f *ACLFilter) { f.PatternType = 0 }, false},
		{"pattern type past PREFIXED", func(f *ACLFilter) { f.PatternType = 5 }, false},
		{"unknown operation", func(f *ACLFilter) { f.Operation = 0 }, false},
		{"operation past DESCRIBE_TOKENS", func(f *ACLFilter) { f.Operation = 15 }, false},
		{"unknown permission", func(f *ACLFilter) { f.Permission = 0 }, false},
		{"permission past ALLOW", func(f *ACLFilter) { f.Permission = 4 }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := MatchAll
			tt.edit(&f)
			err := f.Validate()
			if tt.valid != (err == nil) {
				t.Fatalf("Validate(%+v) = %v, want valid %v", f, err, tt.valid)
			}
			if err != nil && !errors.Is(err, kerr.InvalidRequest) {
				t.Fatalf("Validate(%+v) = %v, not INVALID_REQUEST", f, err)
			}
		})
	}
}

func filterString(s string) *string { return &s }

func TestACLFilterMatches(t *testing.T) {
	literal := func(name string) ACL {
		a := topicACL()
		a.ResourceName = name
		return a
	}
	prefixed := func(name string) ACL {
		a := literal(name)
		a.PatternType = kmsg.ACLResourcePatternTypePrefixed
		return a
	}
	filter := func(pt kmsg.ACLResourcePatternType, name *string) ACLFilter {
		f := MatchAll
		f.PatternType, f.ResourceName = pt, name
		return f
	}
	const (
		anyPT    = kmsg.ACLResourcePatternTypeAny
		match    = kmsg.ACLResourcePatternTypeMatch
		literalP = kmsg.ACLResourcePatternTypeLiteral
		prefixP  = kmsg.ACLResourcePatternTypePrefixed
	)
	tests := []struct {
		name   string
		filter ACLFilter
		newACL ACL
		want   bool
	}{
		{"match all", MatchAll, literal("orders"), true},
		{"ANY pattern, same name", filter(anyPT, filterString("orders")), literal("orders"), true},
		{"ANY pattern, same name prefixed", filter(anyPT, filterString("orders")), prefixed("orders"), true},
		{"ANY pattern is exact on the name", filter(anyPT, filterString("orders")), prefixed("ord"), false},
		{"ANY pattern does not expand the wildcard", filter(anyPT, filterString("orders")), literal("*"), false},
		{"LITERAL filter, literal ACL", filter(literalP, filterString("orders")), literal("orders"), true},
		{"LITERAL filter, prefixed ACL", filter(literalP, filterString("orders")), prefixed("orders"), false},
		{"LITERAL filter, wildcard ACL", filter(literalP, filterString("orders")), literal("*"), false},
		{"LITERAL * finds the wildcard", filter(literalP, filterString("*")), literal("*"), true},
		{"PREFIXED filter, same prefix", filter(prefixP, filterString("ord")), prefixed("ord"), true},
		{"PREFIXED filter is exact on the name", filter(prefixP, filterString("orders")), prefixed("ord"), false},
		{"PREFIXED filter, no name", filter(prefixP, nil), prefixed("x"), true},
		{"PREFIXED filter, no name, literal ACL", filter(prefixP, nil), literal("x"), false},
		{"MATCH, literal", filter(match, filterString("orders")), literal("orders"), true},
		{"MATCH, other literal", filter(match, filterString("orders")), literal("order"), false},
		{"MATCH, wildcard", filter(match, filterString("orders")), literal("*"), true},
		{"MATCH, prefix", filter(match, filterString("orders")), prefixed("ord"), true},
		{"MATCH, whole name as prefix", filter(match, filterString("orders")), prefixed("orders"), true},
		{"MATCH, longer prefix", filter(match, filterString("orders")), prefixed("orders-eu"), false},
		{"MATCH, prefixed star is not a wildcard", filter(match, filterString("orders")), prefixed("*"), false},
		{"MATCH, no name", filter(match, nil), prefixed("x"), true},
		{"resource type", ACLFilter{ResourceType: kmsg.ACLResourceTypeGroup, PatternType: anyPT,
			Operation: kmsg.ACLOperationAny, Permission: kmsg.ACLPermissionTypeAny}, literal("orders"), false},
		{"principal", func() ACLFilter { f := MatchAll; f.Principal = filterString("User:alice"); return f }(), literal("x"), true},
		{"other principal", func() ACLFilter { f := MatchAll; f.Principal = filterString("User:bob"); return f }(), literal("x"), false},
		{"principal filter is exact, not wildcard", func() ACLFilter { f := MatchAll; f.Principal = filterString("User:*"); return f }(), literal("x"), false},
		{"host", func() ACLFilter { f := MatchAll; f.Host = filterString("*"); return f }(), literal("x"), true},
		{"other host", func() ACLFilter { f := MatchAll; f.Host = filterString("10.0.0.1"); return f }(), literal("x"), false},
		{"operation", func() ACLFilter { f := MatchAll; f.Operation = kmsg.ACLOperationRead; return f }(), literal("x"), true},
		{"other operation", func() ACLFilter { f := MatchAll; f.Operation = kmsg.ACLOperationWrite; return f }(), literal("x"), false},
		{"ALL filter does not select READ", func() ACLFilter { f := MatchAll; f.Operation = kmsg.ACLOperationAll; return f }(), literal("x"), false},
		{"permission", func() ACLFilter { f := MatchAll; f.Permission = kmsg.ACLPermissionTypeAllow; return f }(), literal("x"), true},
		{"other permission", func() ACLFilter { f := MatchAll; f.Permission = kmsg.ACLPermissionTypeDeny; return f }(), literal("x"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.filter.Matches(tt.newACL); got != tt.want {
				t.Fatalf("%+v.Matches(%v) = %v, want %v", tt.filter, tt.newACL, got, tt.want)
			}
		})
	}
}

func TestACLErrorIsKafkaCode(t *testing.T) {
	err := error(&ACLError{Code: kerr.SecurityDisabled, Message: "no authorizer"})
	if !errors.Is(err, kerr.SecurityDisabled) || errors.Is(err, kerr.InvalidRequest) {
		t.Fatalf("errors.Is does not follow Code: %v", err)
	}
	var ae *ACLError
	if !errors.As(err, &ae) || ae.Message != "no authorizer" {
		t.Fatalf("errors.As = %v", ae)
	}
}

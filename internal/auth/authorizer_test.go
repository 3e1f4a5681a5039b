package auth

import (
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
	"pgregory.net/rapid"
)

// Short names for the tables below.
const (
	rtTopic   = kmsg.ACLResourceTypeTopic
	rtGroup   = kmsg.ACLResourceTypeGroup
	rtCluster = kmsg.ACLResourceTypeCluster
	rtTxnID   = kmsg.ACLResourceTypeTransactionalId

	ptLiteral  = kmsg.ACLResourcePatternTypeLiteral
	ptPrefixed = kmsg.ACLResourcePatternTypePrefixed

	permAllow = kmsg.ACLPermissionTypeAllow
	permDeny  = kmsg.ACLPermissionTypeDeny

	opAll             = kmsg.ACLOperationAll
	opRead            = kmsg.ACLOperationRead
	opWrite           = kmsg.ACLOperationWrite
	opCreate          = kmsg.ACLOperationCreate
	opDelete          = kmsg.ACLOperationDelete
	opAlter           = kmsg.ACLOperationAlter
	opDescribe        = kmsg.ACLOperationDescribe
	opClusterAction   = kmsg.ACLOperationClusterAction
	opDescribeConfigs = kmsg.ACLOperationDescribeConfigs
	opAlterConfigs    = kmsg.ACLOperationAlterConfigs
	opIdempotentWrite = kmsg.ACLOperationIdempotentWrite
)

// newACL builds an ACL from any host.
func newACL(rt kmsg.ACLResourceType, pt kmsg.ACLResourcePatternType, name, principal string,
	perm kmsg.ACLPermissionType, op kmsg.ACLOperation) ACL {
	return ACL{ResourceType: rt, ResourceName: name, PatternType: pt, Principal: principal,
		Host: "*", Operation: op, Permission: perm}
}

func withHost(a ACL, host string) ACL { a.Host = host; return a }

type authzCheck struct {
	who  Principal
	host string
	op   kmsg.ACLOperation
	rt   kmsg.ACLResourceType
	name string
	want bool
}

var (
	userAlice = User("alice")
	userBob   = User("bob")
)

func TestAuthorize(t *testing.T) {
	tests := []struct {
		name   string
		acls   []ACL
		opts   AuthorizerOptions
		checks []authzCheck
	}{
		{
			name: "no ACLs: allow.everyone.if.no.acl.found off denies",
			checks: []authzCheck{
				{userAlice, "h", opRead, rtTopic, "orders", false},
			},
		},
		{
			name: "no ACLs: allow.everyone.if.no.acl.found on allows",
			opts: AuthorizerOptions{AllowEveryoneIfNoACLFound: true},
			checks: []authzCheck{
				{userAlice, "h", opRead, rtTopic, "orders", true},
				{userAlice, "h", opClusterAction, rtCluster, ClusterName, true},
			},
		},
		{
			name: "allow-everyone counts ACLs on the resource, whoever they name",
			acls: []ACL{
				newACL(rtTopic, ptLiteral, "orders", "User:bob", permAllow, opRead),
				newACL(rtGroup, ptLiteral, "payments", "User:bob", permAllow, opRead),
			},
			opts: AuthorizerOptions{AllowEveryoneIfNoACLFound: true},
			checks: []authzCheck{
				{userAlice, "h", opRead, rtTopic, "orders", false},
				{userAlice, "h", opWrite, rtTopic, "orders", false},
				{userAlice, "h", opRead, rtTopic, "payments", true}, // only a GROUP ACL by that name
				{userAlice, "h", opRead, rtTopic, "other", true},
			},
		},
		{
			name: "allow-everyone counts prefixed and wildcard ACLs on the resource",
			acls: []ACL{
				newACL(rtTopic, ptPrefixed, "ord", "User:bob", permAllow, opRead),
				newACL(rtGroup, ptLiteral, "*", "User:bob", permAllow, opRead),
			},
			opts: AuthorizerOptions{AllowEveryoneIfNoACLFound: true},
			checks: []authzCheck{
				{userAlice, "h", opRead, rtTopic, "orders", false},
				{userAlice, "h", opRead, rtTopic, "or", true},
				{userAlice, "h", opRead, rtGroup, "anything", false},
			},
		},
		{
			name: "literal ALLOW",
			acls: []ACL{newACL(rtTopic, ptLiteral, "orders", "User:alice", permAllow, opRead)},
			checks: []authzCheck{
				{userAlice, "h", opRead, rtTopic, "orders", true},
				{userAlice, "h", opWrite, rtTopic, "orders", false},
				{userBob, "h", opRead, rtTopic, "orders", false},
				{userAlice, "h", opRead, rtTopic, "orders2", false},
				{userAlice, "h", opRead, rtTopic, "order", false},
				{userAlice, "h", opRead, rtGroup, "orders", false},
			},
		},
		{
			name: "DENY wins over ALLOW, whichever pattern carries it",
			acls: []ACL{
				newACL(rtTopic, ptLiteral, "orders", "User:alice", permAllow, opRead),
				newACL(rtTopic, ptLiteral, "orders", "User:*", permDeny, opRead),
				newACL(rtTopic, ptLiteral, "*", "User:alice", permAllow, opWrite),
				newACL(rtTopic, ptPrefixed, "ord", "User:alice", permDeny, opWrite),
				newACL(rtTopic, ptPrefixed, "pay", "User:alice", permAllow, opRead),
				newACL(rtTopic, ptLiteral, "*", "User:alice", permDeny, opDelete),
				newACL(rtTopic, ptPrefixed, "pay", "User:alice", permAllow, opDelete),
			},
			checks: []authzCheck{
				{userAlice, "h", opRead, rtTopic, "orders", false},
				{userAlice, "h", opWrite, rtTopic, "orders", false},
				{userAlice, "h", opWrite, rtTopic, "other", true},
				{userAlice, "h", opRead, rtTopic, "payments", true},
				{userAlice, "h", opDelete, rtTopic, "payments", false},
			},
		},
		{
			name: "wildcard principal",
			acls: []ACL{
				newACL(rtTopic, ptLiteral, "orders", "User:*", permAllow, opRead),
				newACL(rtTopic, ptLiteral, "audit", "Group:*", permAllow, opRead),
			},
			checks: []authzCheck{
				{userAlice, "h", opRead, rtTopic, "orders", true},
				{userBob, "h", opRead, rtTopic, "orders", true},
				// User:* names every principal, whatever its type.
				{Principal{Type: "Group", Name: "eng"}, "h", opRead, rtTopic, "orders", true},
				// Only User:* is a wildcard.
				{Principal{Type: "Group", Name: "eng"}, "h", opRead, rtTopic, "audit", false},
				{Principal{Type: "Group", Name: "*"}, "h", opRead, rtTopic, "audit", true},
			},
		},
		{
			name: "principal type and name both compare",
			acls: []ACL{newACL(rtTopic, ptLiteral, "orders", "Service:alice", permAllow, opRead)},
			checks: []authzCheck{
				{userAlice, "h", opRead, rtTopic, "orders", false},
				{Principal{Type: "Service", Name: "alice"}, "h", opRead, rtTopic, "orders", true},
			},
		},
		{
			name: "host",
			acls: []ACL{
				withHost(newACL(rtTopic, ptLiteral, "orders", "User:alice", permAllow, opRead), "10.0.0.1"),
				withHost(newACL(rtTopic, ptLiteral, "orders", "User:alice", permAllow, opWrite), "*"),
				withHost(newACL(rtTopic, ptLiteral, "orders", "User:bob", permDeny, opRead), "10.0.0.2"),
				withHost(newACL(rtTopic, ptLiteral, "orders", "User:bob", permAllow, opRead), "*"),
			},
			checks: []authzCheck{
				{userAlice, "10.0.0.1", opRead, rtTopic, "orders", true},
				{userAlice, "10.0.0.2", opRead, rtTopic, "orders", false},
				{userAlice, "10.0.0.2", opWrite, rtTopic, "orders", true},
				{userBob, "10.0.0.1", opRead, rtTopic, "orders", true},
				{userBob, "10.0.0.2", opRead, rtTopic, "orders", false},
			},
		},
		{
			name: "prefixed versus literal",
			acls: []ACL{
				newACL(rtTopic, ptPrefixed, "ord", "User:alice", permAllow, opRead),
				newACL(rtTopic, ptLiteral, "pay", "User:alice", permAllow, opRead),
				newACL(rtTopic, ptPrefixed, "*", "User:alice", permAllow, opWrite),
				newACL(rtTopic, ptPrefixed, "a", "User:alice", permAllow, opCreate),
				newACL(rtTopic, ptPrefixed, "abc", "User:alice", permAllow, opDelete),
			},
			checks: []authzCheck{
				{userAlice, "h", opRead, rtTopic, "orders", true},
				{userAlice, "h", opRead, rtTopic, "ord", true},
				{userAlice, "h", opRead, rtTopic, "or", false},
				{userAlice, "h", opRead, rtTopic, "xorders", false},
				{userAlice, "h", opRead, rtTopic, "pay", true},
				{userAlice, "h", opRead, rtTopic, "payments", false},
				// A PREFIXED "*" is no wildcard.
				{userAlice, "h", opWrite, rtTopic, "orders", false},
				{userAlice, "h", opWrite, rtTopic, "*orders", true},
				// Every prefix length is consulted, short and long.
				{userAlice, "h", opCreate, rtTopic, "abcd", true},
				{userAlice, "h", opDelete, rtTopic, "abcd", true},
				{userAlice, "h", opDelete, rtTopic, "ab", false},
			},
		},
		{
			name: "wildcard literal",
			acls: []ACL{newACL(rtTopic, ptLiteral, "*", "User:alice", permAllow, opRead)},
			checks: []authzCheck{
				{userAlice, "h", opRead, rtTopic, "orders", true},
				{userAlice, "h", opRead, rtTopic, "*", true},
				{userAlice, "h", opRead, rtTopic, "", true},
				{userAlice, "h", opRead, rtGroup, "orders", false},
			},
		},
		{
			name: "ALLOW implies DESCRIBE and DESCRIBE_CONFIGS",
			acls: []ACL{
				newACL(rtTopic, ptLiteral, "read", "User:alice", permAllow, opRead),
				newACL(rtTopic, ptLiteral, "write", "User:alice", permAllow, opWrite),
				newACL(rtTopic, ptLiteral, "delete", "User:alice", permAllow, opDelete),
				newACL(rtTopic, ptLiteral, "alter", "User:alice", permAllow, opAlter),
				newACL(rtTopic, ptLiteral, "create", "User:alice", permAllow, opCreate),
				newACL(rtTopic, ptLiteral, "alterconfigs", "User:alice", permAllow, opAlterConfigs),
				newACL(rtTopic, ptLiteral, "describeconfigs", "User:alice", permAllow, opDescribeConfigs),
				newACL(rtTopic, ptLiteral, "describe", "User:alice", permAllow, opDescribe),
			},
			checks: []authzCheck{
				{userAlice, "h", opDescribe, rtTopic, "read", true},
				{userAlice, "h", opDescribe, rtTopic, "write", true},
				{userAlice, "h", opDescribe, rtTopic, "delete", true},
				{userAlice, "h", opDescribe, rtTopic, "alter", true},
				{userAlice, "h", opDescribe, rtTopic, "create", false},
				{userAlice, "h", opDescribe, rtTopic, "alterconfigs", false},
				{userAlice, "h", opDescribeConfigs, rtTopic, "alterconfigs", true},
				{userAlice, "h", opDescribeConfigs, rtTopic, "alter", false},
				{userAlice, "h", opAlterConfigs, rtTopic, "describeconfigs", false},
				{userAlice, "h", opRead, rtTopic, "describe", false},
				{userAlice, "h", opWrite, rtTopic, "read", false},
				{userAlice, "h", opRead, rtTopic, "write", false},
			},
		},
		{
			name: "ALL allows and denies everything",
			acls: []ACL{
				newACL(rtTopic, ptLiteral, "mine", "User:alice", permAllow, opAll),
				newACL(rtTopic, ptLiteral, "theirs", "User:alice", permAllow, opRead),
				newACL(rtTopic, ptLiteral, "theirs", "User:alice", permDeny, opAll),
			},
			checks: []authzCheck{
				{userAlice, "h", opRead, rtTopic, "mine", true},
				{userAlice, "h", opIdempotentWrite, rtTopic, "mine", true},
				{userAlice, "h", opDescribeConfigs, rtTopic, "mine", true},
				{userAlice, "h", opRead, rtTopic, "theirs", false},
				{userAlice, "h", opDescribe, rtTopic, "theirs", false},
			},
		},
		{
			name: "a DENY denies only its own operation",
			acls: []ACL{
				newACL(rtTopic, ptLiteral, "orders", "User:alice", permAllow, opRead),
				newACL(rtTopic, ptLiteral, "orders", "User:alice", permDeny, opDescribe),
				newACL(rtTopic, ptLiteral, "payments", "User:alice", permAllow, opRead),
				newACL(rtTopic, ptLiteral, "payments", "User:alice", permDeny, opWrite),
				newACL(rtTopic, ptLiteral, "refunds", "User:alice", permAllow, opAlterConfigs),
				newACL(rtTopic, ptLiteral, "refunds", "User:alice", permDeny, opAlterConfigs),
			},
			checks: []authzCheck{
				{userAlice, "h", opRead, rtTopic, "orders", true},
				{userAlice, "h", opDescribe, rtTopic, "orders", false},
				// A DENY of WRITE does not deny the DESCRIBE READ implies.
				{userAlice, "h", opDescribe, rtTopic, "payments", true},
				{userAlice, "h", opWrite, rtTopic, "payments", false},
				// Nor does a DENY of ALTER_CONFIGS deny DESCRIBE_CONFIGS it implied.
				{userAlice, "h", opDescribeConfigs, rtTopic, "refunds", true},
			},
		},
		{
			name: "super users pass every DENY",
			acls: []ACL{
				newACL(rtTopic, ptLiteral, "*", "User:*", permDeny, opAll),
				newACL(rtCluster, ptLiteral, ClusterName, "User:*", permDeny, opAll),
			},
			opts: AuthorizerOptions{SuperUsers: []Principal{User("admin"), {Type: "Service", Name: "ops:eu"}, User("x")}},
			checks: []authzCheck{
				{User("admin"), "h", opWrite, rtTopic, "orders", true},
				{Principal{Type: "Resu", Name: "admin"}, "h", opRead, rtTopic, "x", false},
				{Principal{Type: "ServiceAccount", Name: "x"}, "h", opRead, rtTopic, "x", false},
				{User("admin"), "h", opAlter, rtCluster, ClusterName, true},
				{Principal{Type: "Service", Name: "ops:eu"}, "h", opRead, rtTopic, "x", true},
				{Principal{Type: "Service", Name: "admin"}, "h", opRead, rtTopic, "x", false},
				{User("admin2"), "h", opRead, rtTopic, "x", false},
				{User("admi"), "h", opRead, rtTopic, "x", false},
				{userAlice, "h", opRead, rtTopic, "orders", false},
			},
		},
		{
			// Such ACLs cannot be created (Validate), but a record holding
			// one is read as Kafka's StandardAuthorizer reads it.
			name: "a permission other than ALLOW denies",
			acls: []ACL{
				newACL(rtTopic, ptLiteral, "orders", "User:alice", permAllow, opRead),
				newACL(rtTopic, ptLiteral, "orders", "User:alice", kmsg.ACLPermissionTypeAny, opRead),
				newACL(rtTopic, ptLiteral, "payments", "User:alice", permAllow, opRead),
				newACL(rtTopic, ptLiteral, "payments", "User:alice", kmsg.ACLPermissionTypeUnknown, opRead),
			},
			checks: []authzCheck{
				{userAlice, "h", opRead, rtTopic, "orders", false},
				{userAlice, "h", opRead, rtTopic, "payments", false},
			},
		},
		{
			name: "cluster and transactional ids",
			acls: []ACL{
				newACL(rtCluster, ptLiteral, ClusterName, "User:broker", permAllow, opClusterAction),
				newACL(rtTxnID, ptPrefixed, "app-", "User:alice", permAllow, opWrite),
			},
			checks: []authzCheck{
				{User("broker"), "h", opClusterAction, rtCluster, ClusterName, true},
				{User("broker"), "h", opAlter, rtCluster, ClusterName, false},
				{userAlice, "h", opWrite, rtTxnID, "app-1", true},
				{userAlice, "h", opDescribe, rtTxnID, "app-1", true},
				{userAlice, "h", opWrite, rtTopic, "app-1", false},
			},
		},
		{
			name: "a resource type no ACL can name follows allow-everyone",
			acls: []ACL{newACL(rtTopic, ptLiteral, "*", "User:*", permDeny, opAll)},
			opts: AuthorizerOptions{AllowEveryoneIfNoACLFound: true},
			checks: []authzCheck{
				{userAlice, "h", opRead, kmsg.ACLResourceTypeAny, "x", true},
				{userAlice, "h", opRead, kmsg.ACLResourceType(42), "x", true},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := NewAuthorizer(tt.acls, tt.opts)
			for _, c := range tt.checks {
				if got := a.Authorize(c.who, c.host, c.op, c.rt, c.name); got != c.want {
					t.Errorf("Authorize(%s, %s, %s, %s, %q) = %v, want %v", c.who, c.host, c.op, c.rt, c.name, got, c.want)
				}
			}
		})
	}
}

func TestNilAuthorizerAllowsEverything(t *testing.T) {
	var a *Authorizer
	if !a.Authorize(userAlice, "h", opAlter, rtCluster, ClusterName) {
		t.Error("nil Authorize denied")
	}
	if !a.AuthorizeAny(userAlice, "h", opWrite, rtTopic) {
		t.Error("nil AuthorizeAny denied")
	}
	ops := SupportedOperations(rtTopic)
	if got, want := a.AuthorizedOperations(userAlice, "h", rtTopic, "t", ops), opsBitfield(ops...); got != want {
		t.Errorf("nil AuthorizedOperations = %b, want %b", got, want)
	}
	if a.ACLs() != nil || a.Describe(MatchAll) != nil {
		t.Error("nil authorizer lists ACLs")
	}
}

func TestAuthorizeAny(t *testing.T) {
	tests := []struct {
		name string
		acls []ACL
		opts AuthorizerOptions
		who  Principal
		op   kmsg.ACLOperation
		want bool
	}{
		{name: "no ACLs", want: false},
		{name: "no ACLs, allow everyone", opts: AuthorizerOptions{AllowEveryoneIfNoACLFound: true}, want: true},
		{name: "super user", opts: AuthorizerOptions{SuperUsers: []Principal{userAlice}},
			acls: []ACL{newACL(rtTopic, ptLiteral, "*", "User:*", permDeny, opAll)}, want: true},
		{name: "a literal allow", acls: []ACL{newACL(rtTopic, ptLiteral, "orders", "User:alice", permAllow, opWrite)}, want: true},
		{name: "a prefixed allow", acls: []ACL{newACL(rtTopic, ptPrefixed, "ord", "User:alice", permAllow, opWrite)}, want: true},
		{name: "ALL allows", acls: []ACL{newACL(rtTopic, ptLiteral, "orders", "User:alice", permAllow, opAll)}, want: true},
		{name: "wildcard principal allows", acls: []ACL{newACL(rtTopic, ptLiteral, "orders", "User:*", permAllow, opWrite)}, want: true},
		{name: "another principal's allow", acls: []ACL{newACL(rtTopic, ptLiteral, "orders", "User:bob", permAllow, opWrite)}, want: false},
		{name: "another operation's allow", acls: []ACL{newACL(rtTopic, ptLiteral, "orders", "User:alice", permAllow, opRead)}, want: false},
		{name: "no implied operations", acls: []ACL{newACL(rtTopic, ptLiteral, "orders", "User:alice", permAllow, opWrite)},
			op: opDescribe, want: false},
		{name: "another resource type", acls: []ACL{newACL(rtGroup, ptLiteral, "orders", "User:alice", permAllow, opWrite)}, want: false},
		{name: "another host", acls: []ACL{withHost(newACL(rtTopic, ptLiteral, "orders", "User:alice", permAllow, opWrite), "10.0.0.9")}, want: false},
		{name: "deny on the same literal", acls: []ACL{
			newACL(rtTopic, ptLiteral, "orders", "User:alice", permAllow, opWrite),
			newACL(rtTopic, ptLiteral, "orders", "User:*", permDeny, opWrite),
		}, want: false},
		{name: "deny on another literal", acls: []ACL{
			newACL(rtTopic, ptLiteral, "orders", "User:alice", permAllow, opWrite),
			newACL(rtTopic, ptLiteral, "order", "User:alice", permDeny, opWrite),
		}, want: true},
		{name: "deny on a prefix of the literal", acls: []ACL{
			newACL(rtTopic, ptLiteral, "orders", "User:alice", permAllow, opWrite),
			newACL(rtTopic, ptPrefixed, "o", "User:alice", permDeny, opAll),
		}, want: false},
		{name: "deny on a prefix of the prefix", acls: []ACL{
			newACL(rtTopic, ptPrefixed, "orders-", "User:alice", permAllow, opWrite),
			newACL(rtTopic, ptPrefixed, "orders", "User:alice", permDeny, opWrite),
		}, want: false},
		{name: "deny on a longer prefix leaves the allow", acls: []ACL{
			newACL(rtTopic, ptPrefixed, "orders", "User:alice", permAllow, opWrite),
			newACL(rtTopic, ptPrefixed, "orders-eu", "User:alice", permDeny, opWrite),
		}, want: true},
		{name: "a literal deny does not overrule a prefixed allow", acls: []ACL{
			newACL(rtTopic, ptPrefixed, "orders", "User:alice", permAllow, opWrite),
			newACL(rtTopic, ptLiteral, "orders", "User:alice", permDeny, opWrite),
		}, want: true},
		{name: "one allow standing is enough", acls: []ACL{
			newACL(rtTopic, ptLiteral, "orders", "User:alice", permAllow, opWrite),
			newACL(rtTopic, ptLiteral, "orders", "User:alice", permDeny, opWrite),
			newACL(rtTopic, ptLiteral, "payments", "User:alice", permAllow, opWrite),
		}, want: true},
		{name: "wildcard allow", acls: []ACL{
			newACL(rtTopic, ptLiteral, "*", "User:alice", permAllow, opWrite),
			newACL(rtTopic, ptPrefixed, "o", "User:alice", permDeny, opWrite),
		}, want: true},
		{name: "wildcard allow stands over prefix denies", acls: []ACL{
			newACL(rtTopic, ptLiteral, "*", "User:alice", permAllow, opWrite),
			newACL(rtTopic, ptPrefixed, "h", "User:alice", permDeny, opWrite),
		}, want: true},
		{name: "wildcard deny", acls: []ACL{
			newACL(rtTopic, ptLiteral, "*", "User:alice", permAllow, opWrite),
			newACL(rtTopic, ptLiteral, "*", "User:*", permDeny, opWrite),
		}, want: false},
		{name: "the hardcode quirk: a prefix allow on h", acls: []ACL{
			newACL(rtTopic, ptPrefixed, "h", "User:alice", permAllow, opWrite),
			newACL(rtTopic, ptPrefixed, "h", "User:alice", permDeny, opWrite),
		}, want: false},
		{name: "the hardcode quirk: allow-everyone when only hardcode is free",
			opts: AuthorizerOptions{AllowEveryoneIfNoACLFound: true},
			acls: []ACL{newACL(rtTopic, ptPrefixed, "o", "User:*", permDeny, opWrite)}, want: true},
		{name: "the hardcode quirk: a literal on hardcode", acls: []ACL{
			newACL(rtTopic, ptLiteral, "hardcode", "User:alice", permAllow, opWrite),
			newACL(rtTopic, ptPrefixed, "hard", "User:alice", permDeny, opRead),
		}, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			who, op := tt.who, tt.op
			if who == (Principal{}) {
				who = userAlice
			}
			if op == 0 {
				op = opWrite
			}
			a := NewAuthorizer(tt.acls, tt.opts)
			if got := a.AuthorizeAny(who, "h", op, rtTopic); got != tt.want {
				t.Fatalf("AuthorizeAny(%s, %s, TOPIC) = %v, want %v", who, op, got, tt.want)
			}
		})
	}
}

func TestAuthorizeAnyRefusesFilterValues(t *testing.T) {
	a := NewAuthorizer(nil, AuthorizerOptions{AllowEveryoneIfNoACLFound: true})
	for _, c := range []struct {
		op kmsg.ACLOperation
		rt kmsg.ACLResourceType
	}{{kmsg.ACLOperationAny, rtTopic}, {0, rtTopic}, {opWrite, kmsg.ACLResourceTypeAny}, {opWrite, 0}} {
		if a.AuthorizeAny(userAlice, "h", c.op, c.rt) {
			t.Errorf("AuthorizeAny(%s, %s) allowed", c.op, c.rt)
		}
	}
	if !a.AuthorizeAny(userAlice, "h", opWrite, rtTopic) {
		t.Error("AuthorizeAny(WRITE, TOPIC) denied with allow-everyone")
	}
}

func opsBitfield(ops ...kmsg.ACLOperation) int32 {
	var b int32
	for _, op := range ops {
		b |= 1 << op
	}
	return b
}

func TestSupportedOperations(t *testing.T) {
	// Kafka's AclEntry.supportedOperations.
	want := map[kmsg.ACLResourceType][]kmsg.ACLOperation{
		rtTopic:                             {opRead, opWrite, opCreate, opDescribe, opDelete, opAlter, opDescribeConfigs, opAlterConfigs},
		rtGroup:                             {opRead, opDescribe, opDelete, opDescribeConfigs, opAlterConfigs},
		rtCluster:                           {opCreate, opClusterAction, opDescribeConfigs, opAlterConfigs, opIdempotentWrite, opAlter, opDescribe},
		rtTxnID:                             {opDescribe, opWrite},
		kmsg.ACLResourceTypeDelegationToken: {opDescribe},
		kmsg.ACLResourceTypeUser:            {kmsg.ACLOperationCreateTokens, kmsg.ACLOperationDescribeTokens},
		kmsg.ACLResourceTypeAny:             nil,
		kmsg.ACLResourceTypeUnknown:         nil,
	}
	for rt, ops := range want {
		got := SupportedOperations(rt)
		slices.Sort(got)
		slices.Sort(ops)
		if !slices.Equal(got, ops) {
			t.Errorf("SupportedOperations(%s) = %v, want %v", rt, got, ops)
		}
	}
}

func TestAuthorizedOperations(t *testing.T) {
	a := NewAuthorizer([]ACL{
		newACL(rtTopic, ptLiteral, "orders", "User:alice", permAllow, opRead),
		newACL(rtTopic, ptLiteral, "orders", "User:alice", permAllow, opAlterConfigs),
		newACL(rtTopic, ptLiteral, "orders", "User:alice", permDeny, opDelete),
		newACL(rtCluster, ptLiteral, ClusterName, "User:alice", permAllow, opAll),
	}, AuthorizerOptions{})
	tests := []struct {
		rt   kmsg.ACLResourceType
		name string
		want int32
	}{
		{rtTopic, "orders", opsBitfield(opRead, opDescribe, opAlterConfigs, opDescribeConfigs)},
		{rtTopic, "other", 0},
		{rtCluster, ClusterName, opsBitfield(SupportedOperations(rtCluster)...)},
	}
	for _, tt := range tests {
		got := a.AuthorizedOperations(userAlice, "h", tt.rt, tt.name, SupportedOperations(tt.rt))
		if got != tt.want {
			t.Errorf("AuthorizedOperations(%s %q) = %b, want %b", tt.rt, tt.name, got, tt.want)
		}
	}
	// Codes that do not fit the bitfield are left out rather than wrapped.
	if got := a.AuthorizedOperations(userAlice, "h", rtCluster, ClusterName, []kmsg.ACLOperation{40, -1, opAlter}); got != opsBitfield(opAlter) {
		t.Errorf("AuthorizedOperations with codes past 31 = %b", got)
	}
}

func TestACLsAndDescribe(t *testing.T) {
	acls := []ACL{
		newACL(rtTopic, ptLiteral, "orders", "User:alice", permAllow, opRead),
		newACL(rtTopic, ptPrefixed, "ord", "User:bob", permDeny, opWrite),
		newACL(rtTopic, ptLiteral, "orders", "User:alice", permAllow, opRead), // a duplicate
		newACL(rtTopic, ptLiteral, "*", "User:carol", permAllow, opRead),
		newACL(rtGroup, ptLiteral, "orders", "User:alice", permAllow, opRead),
	}
	a := NewAuthorizer(acls, AuthorizerOptions{})
	want := []ACL{acls[0], acls[1], acls[3], acls[4]}
	if got := a.ACLs(); !slices.Equal(got, want) {
		t.Fatalf("ACLs() = %v, want %v", got, want)
	}
	a.ACLs()[0].ResourceName = "changed" // the caller's copy
	if a.ACLs()[0] != acls[0] {
		t.Fatal("ACLs() shares the authorizer's slice")
	}
	f := MatchAll
	f.ResourceType, f.PatternType, f.ResourceName = rtTopic, kmsg.ACLResourcePatternTypeMatch, filterString("orders")
	if got := a.Describe(f); !slices.Equal(got, []ACL{acls[0], acls[1], acls[3]}) {
		t.Fatalf("Describe(MATCH orders) = %v", got)
	}
	f = MatchAll
	f.Principal = filterString("User:bob")
	if got := a.Describe(f); !slices.Equal(got, []ACL{acls[1]}) {
		t.Fatalf("Describe(User:bob) = %v", got)
	}
}

func TestAuthorizeDoesNotAllocate(t *testing.T) {
	a := NewAuthorizer([]ACL{
		newACL(rtTopic, ptLiteral, "orders", "User:alice", permAllow, opRead),
		newACL(rtTopic, ptPrefixed, "ord", "User:alice", permAllow, opWrite),
		newACL(rtTopic, ptLiteral, "*", "User:bob", permDeny, opRead),
	}, AuthorizerOptions{SuperUsers: []Principal{User("admin")}})
	ops := SupportedOperations(rtTopic)
	allocs := testing.AllocsPerRun(100, func() {
		a.Authorize(userAlice, "10.0.0.1", opDescribe, rtTopic, "orders-eu")
		a.Authorize(User("admin"), "10.0.0.1", opDescribe, rtTopic, "orders-eu")
		a.AuthorizedOperations(userAlice, "10.0.0.1", rtTopic, "orders", ops)
	})
	if allocs != 0 {
		t.Fatalf("Authorize allocates %v times per run", allocs)
	}
}

// The property test: the indexed Authorizer against a linear scan over
// every ACL, written from Kafka's rules without the index.

// refAuthorize is StandardAuthorizerData.authorize as a plain loop.
func refAuthorize(acls []ACL, opts AuthorizerOptions, p Principal, host string,
	op kmsg.ACLOperation, rt kmsg.ACLResourceType, name string) bool {
	for _, su := range opts.SuperUsers {
		if su.String() == p.String() {
			return true
		}
	}
	found, allowed := false, false
	for _, a := range acls {
		if !refResourceApplies(a, rt, name) {
			continue
		}
		found = true
		if !refWhoApplies(a, p, host) || !refOperationApplies(a, op) {
			continue
		}
		if a.Permission != kmsg.ACLPermissionTypeAllow {
			return false
		}
		allowed = true
	}
	if allowed {
		return true
	}
	return !found && opts.AllowEveryoneIfNoACLFound
}

func refResourceApplies(a ACL, rt kmsg.ACLResourceType, name string) bool {
	if a.ResourceType != rt {
		return false
	}
	switch a.PatternType {
	case kmsg.ACLResourcePatternTypeLiteral:
		return a.ResourceName == name || a.ResourceName == "*"
	case kmsg.ACLResourcePatternTypePrefixed:
		return len(name) >= len(a.ResourceName) && name[:len(a.ResourceName)] == a.ResourceName
	}
	return false
}

func refWhoApplies(a ACL, p Principal, host string) bool {
	t, n, ok := strings.Cut(a.Principal, ":")
	if !ok {
		return false
	}
	ap := Principal{Type: t, Name: n}
	if ap != p && ap != User("*") {
		return false
	}
	return a.Host == "*" || a.Host == host
}

// refImplied lists, for each operation an ALLOW names, the operations it
// also allows.
var refImplied = map[kmsg.ACLOperation][]kmsg.ACLOperation{
	opRead:         {opDescribe},
	opWrite:        {opDescribe},
	opDelete:       {opDescribe},
	opAlter:        {opDescribe},
	opAlterConfigs: {opDescribeConfigs},
}

func refOperationApplies(a ACL, op kmsg.ACLOperation) bool {
	if a.Operation == opAll || a.Operation == op {
		return true
	}
	return a.Permission == kmsg.ACLPermissionTypeAllow && slices.Contains(refImplied[a.Operation], op)
}

// refAuthorizeAny is Authorizer.authorizeByResourceType's default body
// as a plain loop.
func refAuthorizeAny(acls []ACL, opts AuthorizerOptions, p Principal, host string,
	op kmsg.ACLOperation, rt kmsg.ACLResourceType) bool {
	if refAuthorize(acls, opts, p, host, op, rt, "hardcode") {
		return true
	}
	var allows, denies []ACL
	for _, a := range acls {
		if a.ResourceType != rt || !refWhoApplies(a, p, host) || (a.Operation != op && a.Operation != opAll) {
			continue
		}
		if a.Permission == kmsg.ACLPermissionTypeDeny {
			if a.PatternType == kmsg.ACLResourcePatternTypeLiteral && a.ResourceName == "*" {
				return false
			}
			denies = append(denies, a)
		} else {
			allows = append(allows, a)
		}
	}
	for _, a := range allows {
		if a.PatternType == kmsg.ACLResourcePatternTypeLiteral && a.ResourceName == "*" {
			return true
		}
	}
	for _, a := range allows {
		if !refOverruled(a, denies) {
			return true
		}
	}
	return false
}

func refOverruled(allowACL ACL, denies []ACL) bool {
	for _, d := range denies {
		if allowACL.PatternType == kmsg.ACLResourcePatternTypeLiteral &&
			d.PatternType == kmsg.ACLResourcePatternTypeLiteral && d.ResourceName == allowACL.ResourceName {
			return true
		}
		if d.PatternType == kmsg.ACLResourcePatternTypePrefixed && d.ResourceName != "" &&
			strings.HasPrefix(allowACL.ResourceName, d.ResourceName) {
			return true
		}
	}
	return false
}

// Small alphabets make collisions (shared names, prefixes, principals)
// common.
var (
	genNames      = []string{"a", "ab", "abc", "b", "ba", "*", "*a", "h", "hardcode"}
	genPrincipals = []string{"User:alice", "User:bob", "User:*", "Group:alice", "Group:*"}
	genWho        = []Principal{userAlice, userBob, {Type: "Group", Name: "alice"}, User("admin"), User("*")}
	genHosts      = []string{"*", "h1", "h2"}
	genTypes      = []kmsg.ACLResourceType{rtTopic, rtGroup, rtTxnID}
)

func genACL(t *rapid.T) ACL {
	return ACL{
		ResourceType: rapid.SampledFrom(genTypes).Draw(t, "rt"),
		ResourceName: rapid.SampledFrom(genNames).Draw(t, "name"),
		PatternType:  rapid.SampledFrom([]kmsg.ACLResourcePatternType{ptLiteral, ptPrefixed}).Draw(t, "pattern"),
		Principal:    rapid.SampledFrom(genPrincipals).Draw(t, "principal"),
		Host:         rapid.SampledFrom(genHosts).Draw(t, "host"),
		Operation:    kmsg.ACLOperation(rapid.IntRange(int(opAll), int(kmsg.ACLOperationDescribeTokens)).Draw(t, "op")),
		Permission:   rapid.SampledFrom([]kmsg.ACLPermissionType{permAllow, permDeny}).Draw(t, "perm"),
	}
}

func genOptions(t *rapid.T) AuthorizerOptions {
	var opts AuthorizerOptions
	opts.AllowEveryoneIfNoACLFound = rapid.Bool().Draw(t, "allowEveryone")
	if rapid.Bool().Draw(t, "superAdmin") {
		opts.SuperUsers = append(opts.SuperUsers, User("admin"))
	}
	return opts
}

func TestAuthorizerMatchesLinearScan(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		acls := rapid.SliceOfN(rapid.Custom(genACL), 0, 30).Draw(t, "acls")
		opts := genOptions(t)
		a := NewAuthorizer(acls, opts)
		for range 20 {
			p := rapid.SampledFrom(genWho).Draw(t, "who")
			host := rapid.SampledFrom([]string{"h1", "h2", "h3"}).Draw(t, "from")
			rt := rapid.SampledFrom(genTypes).Draw(t, "qrt")
			name := rapid.SampledFrom(append([]string{"", "abcd", "bab", "*ab", "hard"}, genNames...)).Draw(t, "qname")
			op := kmsg.ACLOperation(rapid.IntRange(int(kmsg.ACLOperationAny), int(kmsg.ACLOperationDescribeTokens)).Draw(t, "qop"))

			if got, want := a.Authorize(p, host, op, rt, name), refAuthorize(acls, opts, p, host, op, rt, name); got != want {
				t.Fatalf("Authorize(%s, %s, %s, %s, %q) = %v, linear scan %v", p, host, op, rt, name, got, want)
			}
			if op >= opAll {
				if got, want := a.AuthorizeAny(p, host, op, rt), refAuthorizeAny(acls, opts, p, host, op, rt); got != want {
					t.Fatalf("AuthorizeAny(%s, %s, %s, %s) = %v, linear scan %v", p, host, op, rt, got, want)
				}
			}
			checkMatchFilter(t, a, rt, name)
		}
	})
}

// checkMatchFilter: a MATCH filter selects exactly the ACLs whose
// pattern Authorize weighs for the resource.
func checkMatchFilter(t *rapid.T, a *Authorizer, rt kmsg.ACLResourceType, name string) {
	f := MatchAll
	f.ResourceType, f.PatternType, f.ResourceName = rt, kmsg.ACLResourcePatternTypeMatch, &name
	var want []ACL
	for _, newACL := range a.ACLs() {
		if refResourceApplies(newACL, rt, name) {
			want = append(want, newACL)
		}
	}
	if got := a.Describe(f); !slices.Equal(got, want) {
		t.Fatalf("Describe(MATCH %s %q) = %v, want %v", rt, name, got, want)
	}
}

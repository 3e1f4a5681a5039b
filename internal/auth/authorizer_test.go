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
	topic   = kmsg.ACLResourceTypeTopic
	group   = kmsg.ACLResourceTypeGroup
	cluster = kmsg.ACLResourceTypeCluster
	txnID   = kmsg.ACLResourceTypeTransactionalId

	lit = kmsg.ACLResourcePatternTypeLiteral
	pre = kmsg.ACLResourcePatternTypePrefixed

	allow = kmsg.ACLPermissionTypeAllow
	deny  = kmsg.ACLPermissionTypeDeny

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

// acl builds an ACL from any host.
func acl(rt kmsg.ACLResourceType, pt kmsg.ACLResourcePatternType, name, principal string,
	perm kmsg.ACLPermissionType, op kmsg.ACLOperation) ACL {
	return ACL{ResourceType: rt, ResourceName: name, PatternType: pt, Principal: principal,
		Host: "*", Operation: op, Permission: perm}
}

func fromHost(a ACL, host string) ACL { a.Host = host; return a }

type check struct {
	who  Principal
	host string
	op   kmsg.ACLOperation
	rt   kmsg.ACLResourceType
	name string
	want bool
}

var (
	alice = User("alice")
	bob   = User("bob")
)

func TestAuthorize(t *testing.T) {
	tests := []struct {
		name   string
		acls   []ACL
		opts   AuthorizerOptions
		checks []check
	}{
		{
			name: "no ACLs: allow.everyone.if.no.acl.found off denies",
			checks: []check{
				{alice, "h", opRead, topic, "orders", false},
			},
		},
		{
			name: "no ACLs: allow.everyone.if.no.acl.found on allows",
			opts: AuthorizerOptions{AllowEveryoneIfNoACLFound: true},
			checks: []check{
				{alice, "h", opRead, topic, "orders", true},
				{alice, "h", opClusterAction, cluster, ClusterName, true},
			},
		},
		{
			name: "allow-everyone counts ACLs on the resource, whoever they name",
			acls: []ACL{
				acl(topic, lit, "orders", "User:bob", allow, opRead),
				acl(group, lit, "payments", "User:bob", allow, opRead),
			},
			opts: AuthorizerOptions{AllowEveryoneIfNoACLFound: true},
			checks: []check{
				{alice, "h", opRead, topic, "orders", false},
				{alice, "h", opWrite, topic, "orders", false},
				{alice, "h", opRead, topic, "payments", true}, // only a GROUP ACL by that name
				{alice, "h", opRead, topic, "other", true},
			},
		},
		{
			name: "allow-everyone counts prefixed and wildcard ACLs on the resource",
			acls: []ACL{
				acl(topic, pre, "ord", "User:bob", allow, opRead),
				acl(group, lit, "*", "User:bob", allow, opRead),
			},
			opts: AuthorizerOptions{AllowEveryoneIfNoACLFound: true},
			checks: []check{
				{alice, "h", opRead, topic, "orders", false},
				{alice, "h", opRead, topic, "or", true},
				{alice, "h", opRead, group, "anything", false},
			},
		},
		{
			name: "literal ALLOW",
			acls: []ACL{acl(topic, lit, "orders", "User:alice", allow, opRead)},
			checks: []check{
				{alice, "h", opRead, topic, "orders", true},
				{alice, "h", opWrite, topic, "orders", false},
				{bob, "h", opRead, topic, "orders", false},
				{alice, "h", opRead, topic, "orders2", false},
				{alice, "h", opRead, topic, "order", false},
				{alice, "h", opRead, group, "orders", false},
			},
		},
		{
			name: "DENY wins over ALLOW, whichever pattern carries it",
			acls: []ACL{
				acl(topic, lit, "orders", "User:alice", allow, opRead),
				acl(topic, lit, "orders", "User:*", deny, opRead),
				acl(topic, lit, "*", "User:alice", allow, opWrite),
				acl(topic, pre, "ord", "User:alice", deny, opWrite),
				acl(topic, pre, "pay", "User:alice", allow, opRead),
				acl(topic, lit, "*", "User:alice", deny, opDelete),
				acl(topic, pre, "pay", "User:alice", allow, opDelete),
			},
			checks: []check{
				{alice, "h", opRead, topic, "orders", false},
				{alice, "h", opWrite, topic, "orders", false},
				{alice, "h", opWrite, topic, "other", true},
				{alice, "h", opRead, topic, "payments", true},
				{alice, "h", opDelete, topic, "payments", false},
			},
		},
		{
			name: "wildcard principal",
			acls: []ACL{
				acl(topic, lit, "orders", "User:*", allow, opRead),
				acl(topic, lit, "audit", "Group:*", allow, opRead),
			},
			checks: []check{
				{alice, "h", opRead, topic, "orders", true},
				{bob, "h", opRead, topic, "orders", true},
				// User:* names every principal, whatever its type.
				{Principal{Type: "Group", Name: "eng"}, "h", opRead, topic, "orders", true},
				// Only User:* is a wildcard.
				{Principal{Type: "Group", Name: "eng"}, "h", opRead, topic, "audit", false},
				{Principal{Type: "Group", Name: "*"}, "h", opRead, topic, "audit", true},
			},
		},
		{
			name: "principal type and name both compare",
			acls: []ACL{acl(topic, lit, "orders", "Service:alice", allow, opRead)},
			checks: []check{
				{alice, "h", opRead, topic, "orders", false},
				{Principal{Type: "Service", Name: "alice"}, "h", opRead, topic, "orders", true},
			},
		},
		{
			name: "host",
			acls: []ACL{
				fromHost(acl(topic, lit, "orders", "User:alice", allow, opRead), "10.0.0.1"),
				fromHost(acl(topic, lit, "orders", "User:alice", allow, opWrite), "*"),
				fromHost(acl(topic, lit, "orders", "User:bob", deny, opRead), "10.0.0.2"),
				fromHost(acl(topic, lit, "orders", "User:bob", allow, opRead), "*"),
			},
			checks: []check{
				{alice, "10.0.0.1", opRead, topic, "orders", true},
				{alice, "10.0.0.2", opRead, topic, "orders", false},
				{alice, "10.0.0.2", opWrite, topic, "orders", true},
				{bob, "10.0.0.1", opRead, topic, "orders", true},
				{bob, "10.0.0.2", opRead, topic, "orders", false},
			},
		},
		{
			name: "prefixed versus literal",
			acls: []ACL{
				acl(topic, pre, "ord", "User:alice", allow, opRead),
				acl(topic, lit, "pay", "User:alice", allow, opRead),
				acl(topic, pre, "*", "User:alice", allow, opWrite),
				acl(topic, pre, "a", "User:alice", allow, opCreate),
				acl(topic, pre, "abc", "User:alice", allow, opDelete),
			},
			checks: []check{
				{alice, "h", opRead, topic, "orders", true},
				{alice, "h", opRead, topic, "ord", true},
				{alice, "h", opRead, topic, "or", false},
				{alice, "h", opRead, topic, "xorders", false},
				{alice, "h", opRead, topic, "pay", true},
				{alice, "h", opRead, topic, "payments", false},
				// A PREFIXED "*" is no wildcard.
				{alice, "h", opWrite, topic, "orders", false},
				{alice, "h", opWrite, topic, "*orders", true},
				// Every prefix length is consulted, short and long.
				{alice, "h", opCreate, topic, "abcd", true},
				{alice, "h", opDelete, topic, "abcd", true},
				{alice, "h", opDelete, topic, "ab", false},
			},
		},
		{
			name: "wildcard literal",
			acls: []ACL{acl(topic, lit, "*", "User:alice", allow, opRead)},
			checks: []check{
				{alice, "h", opRead, topic, "orders", true},
				{alice, "h", opRead, topic, "*", true},
				{alice, "h", opRead, topic, "", true},
				{alice, "h", opRead, group, "orders", false},
			},
		},
		{
			name: "ALLOW implies DESCRIBE and DESCRIBE_CONFIGS",
			acls: []ACL{
				acl(topic, lit, "read", "User:alice", allow, opRead),
				acl(topic, lit, "write", "User:alice", allow, opWrite),
				acl(topic, lit, "delete", "User:alice", allow, opDelete),
				acl(topic, lit, "alter", "User:alice", allow, opAlter),
				acl(topic, lit, "create", "User:alice", allow, opCreate),
				acl(topic, lit, "alterconfigs", "User:alice", allow, opAlterConfigs),
				acl(topic, lit, "describeconfigs", "User:alice", allow, opDescribeConfigs),
				acl(topic, lit, "describe", "User:alice", allow, opDescribe),
			},
			checks: []check{
				{alice, "h", opDescribe, topic, "read", true},
				{alice, "h", opDescribe, topic, "write", true},
				{alice, "h", opDescribe, topic, "delete", true},
				{alice, "h", opDescribe, topic, "alter", true},
				{alice, "h", opDescribe, topic, "create", false},
				{alice, "h", opDescribe, topic, "alterconfigs", false},
				{alice, "h", opDescribeConfigs, topic, "alterconfigs", true},
				{alice, "h", opDescribeConfigs, topic, "alter", false},
				{alice, "h", opAlterConfigs, topic, "describeconfigs", false},
				{alice, "h", opRead, topic, "describe", false},
				{alice, "h", opWrite, topic, "read", false},
				{alice, "h", opRead, topic, "write", false},
			},
		},
		{
			name: "ALL allows and denies everything",
			acls: []ACL{
				acl(topic, lit, "mine", "User:alice", allow, opAll),
				acl(topic, lit, "theirs", "User:alice", allow, opRead),
				acl(topic, lit, "theirs", "User:alice", deny, opAll),
			},
			checks: []check{
				{alice, "h", opRead, topic, "mine", true},
				{alice, "h", opIdempotentWrite, topic, "mine", true},
				{alice, "h", opDescribeConfigs, topic, "mine", true},
				{alice, "h", opRead, topic, "theirs", false},
				{alice, "h", opDescribe, topic, "theirs", false},
			},
		},
		{
			name: "a DENY denies only its own operation",
			acls: []ACL{
				acl(topic, lit, "orders", "User:alice", allow, opRead),
				acl(topic, lit, "orders", "User:alice", deny, opDescribe),
				acl(topic, lit, "payments", "User:alice", allow, opRead),
				acl(topic, lit, "payments", "User:alice", deny, opWrite),
				acl(topic, lit, "refunds", "User:alice", allow, opAlterConfigs),
				acl(topic, lit, "refunds", "User:alice", deny, opAlterConfigs),
			},
			checks: []check{
				{alice, "h", opRead, topic, "orders", true},
				{alice, "h", opDescribe, topic, "orders", false},
				// A DENY of WRITE does not deny the DESCRIBE READ implies.
				{alice, "h", opDescribe, topic, "payments", true},
				{alice, "h", opWrite, topic, "payments", false},
				// Nor does a DENY of ALTER_CONFIGS deny DESCRIBE_CONFIGS it implied.
				{alice, "h", opDescribeConfigs, topic, "refunds", true},
			},
		},
		{
			name: "super users pass every DENY",
			acls: []ACL{
				acl(topic, lit, "*", "User:*", deny, opAll),
				acl(cluster, lit, ClusterName, "User:*", deny, opAll),
			},
			opts: AuthorizerOptions{SuperUsers: []Principal{User("admin"), {Type: "Service", Name: "ops:eu"}, User("x")}},
			checks: []check{
				{User("admin"), "h", opWrite, topic, "orders", true},
				{Principal{Type: "Resu", Name: "admin"}, "h", opRead, topic, "x", false},
				{Principal{Type: "ServiceAccount", Name: "x"}, "h", opRead, topic, "x", false},
				{User("admin"), "h", opAlter, cluster, ClusterName, true},
				{Principal{Type: "Service", Name: "ops:eu"}, "h", opRead, topic, "x", true},
				{Principal{Type: "Service", Name: "admin"}, "h", opRead, topic, "x", false},
				{User("admin2"), "h", opRead, topic, "x", false},
				{User("admi"), "h", opRead, topic, "x", false},
				{alice, "h", opRead, topic, "orders", false},
			},
		},
		{
			// Such ACLs cannot be created (Validate), but a record holding
			// one is read as Kafka's StandardAuthorizer reads it.
			name: "a permission other than ALLOW denies",
			acls: []ACL{
				acl(topic, lit, "orders", "User:alice", allow, opRead),
				acl(topic, lit, "orders", "User:alice", kmsg.ACLPermissionTypeAny, opRead),
				acl(topic, lit, "payments", "User:alice", allow, opRead),
				acl(topic, lit, "payments", "User:alice", kmsg.ACLPermissionTypeUnknown, opRead),
			},
			checks: []check{
				{alice, "h", opRead, topic, "orders", false},
				{alice, "h", opRead, topic, "payments", false},
			},
		},
		{
			name: "cluster and transactional ids",
			acls: []ACL{
				acl(cluster, lit, ClusterName, "User:broker", allow, opClusterAction),
				acl(txnID, pre, "app-", "User:alice", allow, opWrite),
			},
			checks: []check{
				{User("broker"), "h", opClusterAction, cluster, ClusterName, true},
				{User("broker"), "h", opAlter, cluster, ClusterName, false},
				{alice, "h", opWrite, txnID, "app-1", true},
				{alice, "h", opDescribe, txnID, "app-1", true},
				{alice, "h", opWrite, topic, "app-1", false},
			},
		},
		{
			name: "a resource type no ACL can name follows allow-everyone",
			acls: []ACL{acl(topic, lit, "*", "User:*", deny, opAll)},
			opts: AuthorizerOptions{AllowEveryoneIfNoACLFound: true},
			checks: []check{
				{alice, "h", opRead, kmsg.ACLResourceTypeAny, "x", true},
				{alice, "h", opRead, kmsg.ACLResourceType(42), "x", true},
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
	if !a.Authorize(alice, "h", opAlter, cluster, ClusterName) {
		t.Error("nil Authorize denied")
	}
	if !a.AuthorizeAny(alice, "h", opWrite, topic) {
		t.Error("nil AuthorizeAny denied")
	}
	ops := SupportedOperations(topic)
	if got, want := a.AuthorizedOperations(alice, "h", topic, "t", ops), bitfield(ops...); got != want {
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
		{name: "super user", opts: AuthorizerOptions{SuperUsers: []Principal{alice}},
			acls: []ACL{acl(topic, lit, "*", "User:*", deny, opAll)}, want: true},
		{name: "a literal allow", acls: []ACL{acl(topic, lit, "orders", "User:alice", allow, opWrite)}, want: true},
		{name: "a prefixed allow", acls: []ACL{acl(topic, pre, "ord", "User:alice", allow, opWrite)}, want: true},
		{name: "ALL allows", acls: []ACL{acl(topic, lit, "orders", "User:alice", allow, opAll)}, want: true},
		{name: "wildcard principal allows", acls: []ACL{acl(topic, lit, "orders", "User:*", allow, opWrite)}, want: true},
		{name: "another principal's allow", acls: []ACL{acl(topic, lit, "orders", "User:bob", allow, opWrite)}, want: false},
		{name: "another operation's allow", acls: []ACL{acl(topic, lit, "orders", "User:alice", allow, opRead)}, want: false},
		{name: "no implied operations", acls: []ACL{acl(topic, lit, "orders", "User:alice", allow, opWrite)},
			op: opDescribe, want: false},
		{name: "another resource type", acls: []ACL{acl(group, lit, "orders", "User:alice", allow, opWrite)}, want: false},
		{name: "another host", acls: []ACL{fromHost(acl(topic, lit, "orders", "User:alice", allow, opWrite), "10.0.0.9")}, want: false},
		{name: "deny on the same literal", acls: []ACL{
			acl(topic, lit, "orders", "User:alice", allow, opWrite),
			acl(topic, lit, "orders", "User:*", deny, opWrite),
		}, want: false},
		{name: "deny on another literal", acls: []ACL{
			acl(topic, lit, "orders", "User:alice", allow, opWrite),
			acl(topic, lit, "order", "User:alice", deny, opWrite),
		}, want: true},
		{name: "deny on a prefix of the literal", acls: []ACL{
			acl(topic, lit, "orders", "User:alice", allow, opWrite),
			acl(topic, pre, "o", "User:alice", deny, opAll),
		}, want: false},
		{name: "deny on a prefix of the prefix", acls: []ACL{
			acl(topic, pre, "orders-", "User:alice", allow, opWrite),
			acl(topic, pre, "orders", "User:alice", deny, opWrite),
		}, want: false},
		{name: "deny on a longer prefix leaves the allow", acls: []ACL{
			acl(topic, pre, "orders", "User:alice", allow, opWrite),
			acl(topic, pre, "orders-eu", "User:alice", deny, opWrite),
		}, want: true},
		{name: "a literal deny does not overrule a prefixed allow", acls: []ACL{
			acl(topic, pre, "orders", "User:alice", allow, opWrite),
			acl(topic, lit, "orders", "User:alice", deny, opWrite),
		}, want: true},
		{name: "one allow standing is enough", acls: []ACL{
			acl(topic, lit, "orders", "User:alice", allow, opWrite),
			acl(topic, lit, "orders", "User:alice", deny, opWrite),
			acl(topic, lit, "payments", "User:alice", allow, opWrite),
		}, want: true},
		{name: "wildcard allow", acls: []ACL{
			acl(topic, lit, "*", "User:alice", allow, opWrite),
			acl(topic, pre, "o", "User:alice", deny, opWrite),
		}, want: true},
		{name: "wildcard allow stands over prefix denies", acls: []ACL{
			acl(topic, lit, "*", "User:alice", allow, opWrite),
			acl(topic, pre, "h", "User:alice", deny, opWrite),
		}, want: true},
		{name: "wildcard deny", acls: []ACL{
			acl(topic, lit, "*", "User:alice", allow, opWrite),
			acl(topic, lit, "*", "User:*", deny, opWrite),
		}, want: false},
		{name: "the hardcode quirk: a prefix allow on h", acls: []ACL{
			acl(topic, pre, "h", "User:alice", allow, opWrite),
			acl(topic, pre, "h", "User:alice", deny, opWrite),
		}, want: false},
		{name: "the hardcode quirk: allow-everyone when only hardcode is free",
			opts: AuthorizerOptions{AllowEveryoneIfNoACLFound: true},
			acls: []ACL{acl(topic, pre, "o", "User:*", deny, opWrite)}, want: true},
		{name: "the hardcode quirk: a literal on hardcode", acls: []ACL{
			acl(topic, lit, "hardcode", "User:alice", allow, opWrite),
			acl(topic, pre, "hard", "User:alice", deny, opRead),
		}, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			who, op := tt.who, tt.op
			if who == (Principal{}) {
				who = alice
			}
			if op == 0 {
				op = opWrite
			}
			a := NewAuthorizer(tt.acls, tt.opts)
			if got := a.AuthorizeAny(who, "h", op, topic); got != tt.want {
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
	}{{kmsg.ACLOperationAny, topic}, {0, topic}, {opWrite, kmsg.ACLResourceTypeAny}, {opWrite, 0}} {
		if a.AuthorizeAny(alice, "h", c.op, c.rt) {
			t.Errorf("AuthorizeAny(%s, %s) allowed", c.op, c.rt)
		}
	}
	if !a.AuthorizeAny(alice, "h", opWrite, topic) {
		t.Error("AuthorizeAny(WRITE, TOPIC) denied with allow-everyone")
	}
}

func bitfield(ops ...kmsg.ACLOperation) int32 {
	var b int32
	for _, op := range ops {
		b |= 1 << op
	}
	return b
}

func TestSupportedOperations(t *testing.T) {
	// Kafka's AclEntry.supportedOperations.
	want := map[kmsg.ACLResourceType][]kmsg.ACLOperation{
		topic:                               {opRead, opWrite, opCreate, opDescribe, opDelete, opAlter, opDescribeConfigs, opAlterConfigs},
		group:                               {opRead, opDescribe, opDelete, opDescribeConfigs, opAlterConfigs},
		cluster:                             {opCreate, opClusterAction, opDescribeConfigs, opAlterConfigs, opIdempotentWrite, opAlter, opDescribe},
		txnID:                               {opDescribe, opWrite},
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
		acl(topic, lit, "orders", "User:alice", allow, opRead),
		acl(topic, lit, "orders", "User:alice", allow, opAlterConfigs),
		acl(topic, lit, "orders", "User:alice", deny, opDelete),
		acl(cluster, lit, ClusterName, "User:alice", allow, opAll),
	}, AuthorizerOptions{})
	tests := []struct {
		rt   kmsg.ACLResourceType
		name string
		want int32
	}{
		{topic, "orders", bitfield(opRead, opDescribe, opAlterConfigs, opDescribeConfigs)},
		{topic, "other", 0},
		{cluster, ClusterName, bitfield(SupportedOperations(cluster)...)},
	}
	for _, tt := range tests {
		got := a.AuthorizedOperations(alice, "h", tt.rt, tt.name, SupportedOperations(tt.rt))
		if got != tt.want {
			t.Errorf("AuthorizedOperations(%s %q) = %b, want %b", tt.rt, tt.name, got, tt.want)
		}
	}
	// Codes that do not fit the bitfield are left out rather than wrapped.
	if got := a.AuthorizedOperations(alice, "h", cluster, ClusterName, []kmsg.ACLOperation{40, -1, opAlter}); got != bitfield(opAlter) {
		t.Errorf("AuthorizedOperations with codes past 31 = %b", got)
	}
}

func TestACLsAndDescribe(t *testing.T) {
	acls := []ACL{
		acl(topic, lit, "orders", "User:alice", allow, opRead),
		acl(topic, pre, "ord", "User:bob", deny, opWrite),
		acl(topic, lit, "orders", "User:alice", allow, opRead), // a duplicate
		acl(topic, lit, "*", "User:carol", allow, opRead),
		acl(group, lit, "orders", "User:alice", allow, opRead),
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
	f.ResourceType, f.PatternType, f.ResourceName = topic, kmsg.ACLResourcePatternTypeMatch, strp("orders")
	if got := a.Describe(f); !slices.Equal(got, []ACL{acls[0], acls[1], acls[3]}) {
		t.Fatalf("Describe(MATCH orders) = %v", got)
	}
	f = MatchAll
	f.Principal = strp("User:bob")
	if got := a.Describe(f); !slices.Equal(got, []ACL{acls[1]}) {
		t.Fatalf("Describe(User:bob) = %v", got)
	}
}

func TestAuthorizeDoesNotAllocate(t *testing.T) {
	a := NewAuthorizer([]ACL{
		acl(topic, lit, "orders", "User:alice", allow, opRead),
		acl(topic, pre, "ord", "User:alice", allow, opWrite),
		acl(topic, lit, "*", "User:bob", deny, opRead),
	}, AuthorizerOptions{SuperUsers: []Principal{User("admin")}})
	ops := SupportedOperations(topic)
	allocs := testing.AllocsPerRun(100, func() {
		a.Authorize(alice, "10.0.0.1", opDescribe, topic, "orders-eu")
		a.Authorize(User("admin"), "10.0.0.1", opDescribe, topic, "orders-eu")
		a.AuthorizedOperations(alice, "10.0.0.1", topic, "orders", ops)
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
	genWho        = []Principal{alice, bob, {Type: "Group", Name: "alice"}, User("admin"), User("*")}
	genHosts      = []string{"*", "h1", "h2"}
	genTypes      = []kmsg.ACLResourceType{topic, group, txnID}
)

func genACL(t *rapid.T) ACL {
	return ACL{
		ResourceType: rapid.SampledFrom(genTypes).Draw(t, "rt"),
		ResourceName: rapid.SampledFrom(genNames).Draw(t, "name"),
		PatternType:  rapid.SampledFrom([]kmsg.ACLResourcePatternType{lit, pre}).Draw(t, "pattern"),
		Principal:    rapid.SampledFrom(genPrincipals).Draw(t, "principal"),
		Host:         rapid.SampledFrom(genHosts).Draw(t, "host"),
		Operation:    kmsg.ACLOperation(rapid.IntRange(int(opAll), int(kmsg.ACLOperationDescribeTokens)).Draw(t, "op")),
		Permission:   rapid.SampledFrom([]kmsg.ACLPermissionType{allow, deny}).Draw(t, "perm"),
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
	for _, acl := range a.ACLs() {
		if refResourceApplies(acl, rt, name) {
			want = append(want, acl)
		}
	}
	if got := a.Describe(f); !slices.Equal(got, want) {
		t.Fatalf("Describe(MATCH %s %q) = %v, want %v", rt, name, got, want)
	}
}

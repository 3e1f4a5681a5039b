package controller

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/samsa-io/samsa/internal/metadata"
)

// Wire numbers the tests spell out (Kafka's enums).
const (
	resTopic, resGroup, resCluster int8 = 2, 3, 4
	patLiteral, patPrefixed        int8 = 3, 4
	opAll, opRead, opWrite         int8 = 2, 3, 4
	permDeny, permAllow            int8 = 2, 3
)

func topicACL(name string, pattern int8, principal string, op, perm int8) metadata.ACL {
	return metadata.ACL{ResourceType: resTopic, ResourceName: name, PatternType: pattern, Principal: principal, Host: "*", Operation: op, PermissionType: perm}
}

// imageACLs is the image's ACLs without their IDs.
func imageACLs(c *Controller) []metadata.ACL {
	var out []metadata.ACL
	for _, a := range c.Image().ACLs() {
		out = append(out, a.ACL)
	}
	return out
}

func checkACLResults(t *testing.T, res []ACLResult, want ...int16) {
	t.Helper()
	if len(res) != len(want) {
		t.Fatalf("%d results, want %d", len(res), len(want))
	}
	for i, r := range res {
		if r.ErrorCode != want[i] {
			t.Errorf("acl %d: got %d %q, want %d", i, r.ErrorCode, r.ErrorMessage, want[i])
		}
	}
}

func TestCreateACLs(t *testing.T) {
	c := open(t, testConfig(t.TempDir()))
	alice := topicACL("orders", patLiteral, "User:alice", opRead, permAllow)
	bob := topicACL("ord", patPrefixed, "User:bob", opWrite, permDeny)
	res := c.CreateACLs(ctx(t), []metadata.ACL{alice, bob, alice})
	checkACLResults(t, res, 0, 0, 0)
	if diff := cmp.Diff([]metadata.ACL{bob, alice}, imageACLs(c)); diff != "" {
		t.Fatalf("image ACLs (-want +got):\n%s", diff)
	}
	ids := c.Image().ACLs()
	if ids[0].ID == ids[1].ID || ids[0].ID == (metadata.ACLID{}) {
		t.Errorf("ACL IDs %s and %s", ids[0].ID, ids[1].ID)
	}

	// An ACL that exists succeeds again without a second copy.
	before := c.Image()
	checkACLResults(t, c.CreateACLs(ctx(t), []metadata.ACL{alice}), 0)
	if c.Image() != before {
		t.Error("creating an existing ACL wrote a record")
	}

	// Invalid ACLs are refused one by one, with Kafka's messages; the
	// valid one beside them is created.
	with := func(change func(*metadata.ACL)) metadata.ACL {
		a := topicACL("payments", patLiteral, "User:carol", opRead, permAllow)
		change(&a)
		return a
	}
	cases := []struct {
		acl metadata.ACL
		msg string
	}{
		{with(func(a *metadata.ACL) { a.ResourceType = 1 }), "Invalid resourceType ANY"},
		{with(func(a *metadata.ACL) { a.ResourceType = 0 }), "Invalid resourceType UNKNOWN"},
		{with(func(a *metadata.ACL) { a.ResourceType = 99 }), "Invalid resourceType UNKNOWN"},
		{with(func(a *metadata.ACL) { a.ResourceType = resCluster }), "The only valid name for the CLUSTER resource is kafka-cluster"},
		{with(func(a *metadata.ACL) { a.ResourceName = "" }), "Invalid empty resource name"},
		{with(func(a *metadata.ACL) { a.PatternType = 2 }), "Invalid patternType MATCH"},
		{with(func(a *metadata.ACL) { a.PatternType = 1 }), "Invalid patternType ANY"},
		{with(func(a *metadata.ACL) { a.PatternType = -3 }), "Invalid patternType UNKNOWN"},
		{with(func(a *metadata.ACL) { a.Operation = 1 }), "Invalid operation ANY"},
		{with(func(a *metadata.ACL) { a.Operation = 15 }), "Invalid operation UNKNOWN"},
		{with(func(a *metadata.ACL) { a.PermissionType = 1 }), "Invalid permissionType ANY"},
		{with(func(a *metadata.ACL) { a.Principal = "carol" }), `Invalid principal "carol"`},
		{with(func(a *metadata.ACL) { a.Principal = ":carol" }), `Invalid principal ":carol"`},
	}
	var acls []metadata.ACL
	for _, tc := range cases {
		acls = append(acls, tc.acl)
	}
	good := metadata.ACL{ResourceType: resCluster, ResourceName: ClusterResourceName, PatternType: patLiteral, Principal: "User:*", Host: "*", Operation: opAll, PermissionType: permAllow}
	res = c.CreateACLs(ctx(t), append(acls, good))
	for i, tc := range cases {
		if res[i].ErrorCode != kerr.InvalidRequest.Code || !strings.HasPrefix(res[i].ErrorMessage, tc.msg) {
			t.Errorf("%+v: got %d %q, want INVALID_REQUEST %q", tc.acl, res[i].ErrorCode, res[i].ErrorMessage, tc.msg)
		}
	}
	if last := res[len(res)-1]; last.ErrorCode != 0 {
		t.Errorf("the valid ACL: %d %s", last.ErrorCode, last.ErrorMessage)
	}
	if got := imageACLs(c); len(got) != 3 || got[2] != good {
		t.Errorf("image ACLs %+v", got)
	}
}

func sptr(s string) *string { return &s }

// anyFilter matches every ACL; tests narrow it.
func anyFilter() ACLFilter {
	return ACLFilter{ResourceType: 1, PatternType: 1, Operation: 1, PermissionType: 1}
}

// TestACLFilterMatches is Kafka's AclBindingFilter.matches, field by field.
func TestACLFilterMatches(t *testing.T) {
	literal := topicACL("orders", patLiteral, "User:alice", opRead, permAllow)
	wildcard := topicACL("*", patLiteral, "User:alice", opRead, permAllow)
	prefixed := topicACL("ord", patPrefixed, "User:alice", opRead, permAllow)
	other := topicACL("payments", patLiteral, "User:bob", opWrite, permDeny)
	group := metadata.ACL{ResourceType: resGroup, ResourceName: "orders", PatternType: patLiteral, Principal: "User:alice", Host: "h1", Operation: opRead, PermissionType: permAllow}
	all := []metadata.ACL{literal, wildcard, prefixed, other, group}
	named := func(f ACLFilter, name string) ACLFilter { f.ResourceName = &name; return f }
	cases := []struct {
		name   string
		filter ACLFilter
		want   []metadata.ACL
	}{
		{"any", anyFilter(), all},
		{"topics", func() ACLFilter { f := anyFilter(); f.ResourceType = resTopic; return f }(), []metadata.ACL{literal, wildcard, prefixed, other}},
		{"literal pattern", func() ACLFilter { f := anyFilter(); f.PatternType = patLiteral; return f }(), []metadata.ACL{literal, wildcard, other, group}},
		{"prefixed pattern", func() ACLFilter { f := anyFilter(); f.PatternType = patPrefixed; return f }(), []metadata.ACL{prefixed}},
		{"any pattern, name exactly", named(anyFilter(), "orders"), []metadata.ACL{literal, group}},
		{"literal name", func() ACLFilter { f := named(anyFilter(), "ord"); f.PatternType = patLiteral; return f }(), nil},
		{"prefixed name exactly", func() ACLFilter { f := named(anyFilter(), "ord"); f.PatternType = patPrefixed; return f }(), []metadata.ACL{prefixed}},
		{"literal wildcard only itself", func() ACLFilter { f := named(anyFilter(), "*"); f.PatternType = patLiteral; return f }(), []metadata.ACL{wildcard}},
		{"match: what applies to topic orders", func() ACLFilter {
			f := named(anyFilter(), "orders")
			f.ResourceType, f.PatternType = resTopic, 2
			return f
		}(), []metadata.ACL{literal, wildcard, prefixed}},
		{"match: ordinal is under prefix ord", func() ACLFilter { f := named(anyFilter(), "ordinal"); f.PatternType = 2; return f }(), []metadata.ACL{wildcard, prefixed}},
		{"match without a name", func() ACLFilter { f := anyFilter(); f.PatternType = 2; return f }(), all},
		{"principal", func() ACLFilter { f := anyFilter(); f.Principal = sptr("User:bob"); return f }(), []metadata.ACL{other}},
		{"host", func() ACLFilter { f := anyFilter(); f.Host = sptr("h1"); return f }(), []metadata.ACL{group}},
		{"operation", func() ACLFilter { f := anyFilter(); f.Operation = opWrite; return f }(), []metadata.ACL{other}},
		{"permission", func() ACLFilter { f := anyFilter(); f.PermissionType = permAllow; return f }(), []metadata.ACL{literal, wildcard, prefixed, group}},
		{"unknown resource type matches nothing", func() ACLFilter { f := anyFilter(); f.ResourceType = 99; return f }(), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []metadata.ACL
			for _, a := range all {
				if tc.filter.Matches(a) {
					got = append(got, a)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestDeleteACLs(t *testing.T) {
	c := open(t, testConfig(t.TempDir()))
	literal := topicACL("orders", patLiteral, "User:alice", opRead, permAllow)
	prefixed := topicACL("ord", patPrefixed, "User:alice", opRead, permAllow)
	other := topicACL("payments", patLiteral, "User:bob", opWrite, permDeny)
	checkACLResults(t, c.CreateACLs(ctx(t), []metadata.ACL{literal, prefixed, other}), 0, 0, 0)

	// An unknown value in a filter is refused and changes nothing.
	before := c.Image()
	bad := []ACLFilter{anyFilter(), anyFilter(), anyFilter(), anyFilter()}
	bad[0].ResourceType, bad[1].PatternType, bad[2].Operation, bad[3].PermissionType = 0, 9, 0, 4
	res := c.DeleteACLs(ctx(t), bad)
	for i, r := range res {
		want := "Unknown patternFilter."
		if i >= 2 {
			want = "Unknown entryFilter."
		}
		if r.ErrorCode != kerr.InvalidRequest.Code || r.ErrorMessage != want || r.Matching != nil {
			t.Errorf("filter %d: %+v, want INVALID_REQUEST %q", i, r, want)
		}
	}
	if c.Image() != before {
		t.Error("refused filters changed the image")
	}

	// Two filters match alice's prefixed ACL: both list it, it goes once,
	// and the unmatched ACL stays.
	match := anyFilter()
	match.ResourceType, match.PatternType, match.ResourceName = resTopic, 2, sptr("orders")
	byPrefix := anyFilter()
	byPrefix.PatternType = patPrefixed
	res = c.DeleteACLs(ctx(t), []ACLFilter{match, byPrefix, bad[0]})
	if diff := cmp.Diff([]DeleteACLsResult{
		{Matching: []metadata.ACL{prefixed, literal}},
		{Matching: []metadata.ACL{prefixed}},
		{ErrorCode: kerr.InvalidRequest.Code, ErrorMessage: "Unknown patternFilter."},
	}, res); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]metadata.ACL{other}, imageACLs(c)); diff != "" {
		t.Errorf("left (-want +got):\n%s", diff)
	}

	// A filter matching nothing succeeds with nothing, and writes nothing.
	before = c.Image()
	if res := c.DeleteACLs(ctx(t), []ACLFilter{byPrefix}); res[0].ErrorCode != 0 || len(res[0].Matching) != 0 || c.Image() != before {
		t.Errorf("empty match: %+v", res)
	}
	if res := c.DeleteACLs(ctx(t), []ACLFilter{anyFilter()}); len(res[0].Matching) != 1 || len(imageACLs(c)) != 0 {
		t.Errorf("delete all: %+v, left %v", res, imageACLs(c))
	}
}

// TestACLsSurviveRestart: the ACLs are in the metadata log, under the IDs
// they got.
func TestACLsSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	c := open(t, testConfig(dir))
	checkACLResults(t, c.CreateACLs(ctx(t), []metadata.ACL{topicACL("orders", patLiteral, "User:alice", opRead, permAllow)}), 0)
	want := c.Image().ACLs()
	c.Close()
	c = open(t, testConfig(dir))
	if diff := cmp.Diff(want, c.Image().ACLs()); diff != "" {
		t.Errorf("after restart (-want +got):\n%s", diff)
	}
}

func TestACLWritesOnClosedController(t *testing.T) {
	c := open(t, testConfig(t.TempDir()))
	c.Close()
	checkACLResults(t, c.CreateACLs(ctx(t), []metadata.ACL{topicACL("orders", patLiteral, "User:a", opRead, permAllow)}), kerr.NotController.Code)
	if res := c.DeleteACLs(ctx(t), []ACLFilter{anyFilter()}); res[0].ErrorCode != kerr.NotController.Code {
		t.Errorf("delete: %+v", res)
	}
	res := c.AlterUserScramCredentials(ctx(t), []ScramDeletion{{User: "a", Mechanism: 1}}, nil)
	if !slices.Equal([]string{res[0].User}, []string{"a"}) || res[0].ErrorCode != kerr.NotController.Code {
		t.Errorf("scram: %+v", res)
	}
}

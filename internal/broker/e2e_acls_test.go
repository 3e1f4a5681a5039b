package broker

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/config"
)

// withAuthorizer adds to a broker's static configs the StandardAuthorizer
// with User:ANONYMOUS a super user, so the tests' PLAINTEXT clients may do
// everything while the ACL APIs serve as with any authorizer.
func withAuthorizer(raw map[string]string) map[string]string {
	if raw == nil {
		raw = map[string]string{}
	}
	raw["authorizer.class.name"] = config.StandardAuthorizer
	raw["super.users"] = "User:ANONYMOUS"
	return raw
}

// authorizerValues are withAuthorizer's configs, parsed.
func authorizerValues(tb testing.TB) config.Values {
	tb.Helper()
	v, err := config.Parse(config.Broker, withAuthorizer(nil))
	if err != nil {
		tb.Fatal(err)
	}
	return v
}

// aclLine is one ACL as the tests compare them.
func aclLine(typ kmsg.ACLResourceType, name string, pattern kadm.ACLPattern, principal, host string, op kadm.ACLOperation, perm kmsg.ACLPermissionType) string {
	return fmt.Sprintf("%s %s %s %s@%s %s %s", typ, name, pattern, principal, host, op, perm)
}

// describedACLs runs one DescribeAcls filter through kadm and returns what
// it lists, sorted.
func describedACLs(t *testing.T, adm *kadm.Client, b *kadm.ACLBuilder) []string {
	t.Helper()
	ctx := t.Context()
	res, err := adm.DescribeACLs(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range res {
		if r.Err != nil {
			t.Fatalf("describe: %v %s", r.Err, r.ErrMessage)
		}
		for _, d := range r.Described {
			out = append(out, aclLine(d.Type, d.Name, d.Pattern, d.Principal, d.Host, d.Operation, d.Permission))
		}
	}
	slices.Sort(out)
	return out
}

// everyACL is a filter matching every ACL.
func everyACL() *kadm.ACLBuilder {
	return kadm.NewACLs().AnyResource().Allow().AllowHosts().Deny().DenyHosts().Operations().ResourcePatternType(kadm.ACLPatternAny)
}

func mustCreateACLs(t *testing.T, adm *kadm.Client, b *kadm.ACLBuilder) {
	t.Helper()
	res, err := adm.CreateACLs(t.Context(), b)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Err != nil {
			t.Fatalf("create %s %s: %v %s", r.Type, r.Name, r.Err, r.ErrMessage)
		}
	}
}

// TestAclsCreateDescribeDeleteWithKadm drives the three ACL APIs with
// kadm: literal, prefixed and wildcard ACLs, the filters Kafka has (ANY,
// LITERAL, PREFIXED, MATCH, by principal), deletions that report what they
// matched, and the ACLs left surviving a restart, IDs and all.
func TestAclsCreateDescribeDeleteWithKadm(t *testing.T) {
	dir := t.TempDir()
	b := startBrokerWith(t, Config{LogDir: dir, Values: authorizerValues(t)})
	adm, _ := adminClient(t, b)
	const (
		topic   = kmsg.ACLResourceTypeTopic
		group   = kmsg.ACLResourceTypeGroup
		cluster = kmsg.ACLResourceTypeCluster
		allow   = kmsg.ACLPermissionTypeAllow
		deny    = kmsg.ACLPermissionTypeDeny
		literal = kadm.ACLPatternLiteral
		prefix  = kadm.ACLPatternPrefixed
	)
	mustCreateACLs(t, adm, kadm.NewACLs().Topics("orders").Allow("User:alice").Operations(kadm.OpRead, kadm.OpWrite))
	mustCreateACLs(t, adm, kadm.NewACLs().Topics("ord").ResourcePatternType(prefix).Deny("User:bob").Operations(kadm.OpWrite))
	mustCreateACLs(t, adm, kadm.NewACLs().Topics("*").Allow("User:carol").Operations(kadm.OpDescribe))
	mustCreateACLs(t, adm, kadm.NewACLs().Groups("g1").Allow("User:alice").Operations(kadm.OpRead))
	mustCreateACLs(t, adm, kadm.NewACLs().Clusters().Allow("User:admin").AllowHosts("10.0.0.1").Operations(kadm.OpAlter))
	// Creating one again changes nothing.
	mustCreateACLs(t, adm, kadm.NewACLs().Groups("g1").Allow("User:alice").Operations(kadm.OpRead))

	aliceRead := aclLine(topic, "orders", literal, "User:alice", "*", kadm.OpRead, allow)
	aliceWrite := aclLine(topic, "orders", literal, "User:alice", "*", kadm.OpWrite, allow)
	bobPrefix := aclLine(topic, "ord", prefix, "User:bob", "*", kadm.OpWrite, deny)
	carolAll := aclLine(topic, "*", literal, "User:carol", "*", kadm.OpDescribe, allow)
	aliceGroup := aclLine(group, "g1", literal, "User:alice", "*", kadm.OpRead, allow)
	admin := aclLine(cluster, "kafka-cluster", literal, "User:admin", "10.0.0.1", kadm.OpAlter, allow)
	sorted := func(s ...string) []string { slices.Sort(s); return s }

	anyTopicFilter := func(name string, pattern kadm.ACLPattern) *kadm.ACLBuilder {
		return kadm.NewACLs().Topics(name).Allow().AllowHosts().Deny().DenyHosts().Operations().ResourcePatternType(pattern)
	}
	for _, tc := range []struct {
		name   string
		filter *kadm.ACLBuilder
		want   []string
	}{
		{"any", everyACL(), sorted(aliceRead, aliceWrite, bobPrefix, carolAll, aliceGroup, admin)},
		{"literal orders", anyTopicFilter("orders", literal), sorted(aliceRead, aliceWrite)},
		{"literal wildcard", anyTopicFilter("*", literal), sorted(carolAll)},
		{"prefixed ord", anyTopicFilter("ord", prefix), sorted(bobPrefix)},
		{"prefixed orders", anyTopicFilter("orders", prefix), nil},
		{"match orders", anyTopicFilter("orders", kadm.ACLPatternMatch), sorted(aliceRead, aliceWrite, bobPrefix, carolAll)},
		{"match payments", anyTopicFilter("payments", kadm.ACLPatternMatch), sorted(carolAll)},
		{"any type named orders", kadm.NewACLs().AnyResource("orders").Allow().AllowHosts().Deny().DenyHosts().Operations().ResourcePatternType(kadm.ACLPatternAny), sorted(aliceRead, aliceWrite)},
		{"alice's", kadm.NewACLs().AnyResource().Allow("User:alice").AllowHosts().Operations().ResourcePatternType(kadm.ACLPatternAny), sorted(aliceRead, aliceWrite, aliceGroup)},
		{"host 10.0.0.1", kadm.NewACLs().AnyResource().Allow().AllowHosts("10.0.0.1").Operations().ResourcePatternType(kadm.ACLPatternAny), sorted(admin)},
		{"writes", kadm.NewACLs().AnyResource().Allow().AllowHosts().Deny().DenyHosts().Operations(kadm.OpWrite).ResourcePatternType(kadm.ACLPatternAny), sorted(aliceWrite, bobPrefix)},
	} {
		if diff := cmp.Diff(tc.want, describedACLs(t, adm, tc.filter)); diff != "" {
			t.Errorf("describe %s (-want +got):\n%s", tc.name, diff)
		}
	}

	// The response groups ACLs by resource, as Kafka's does.
	req := kmsg.NewPtrDescribeACLsRequest()
	req.ResourceType, req.ResourcePatternType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny
	req.Operation, req.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	resp, err := req.RequestWith(t.Context(), newFranz(t, b.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	var resources []string
	for _, r := range resp.Resources {
		resources = append(resources, fmt.Sprintf("%s %s %s: %d", r.ResourceType, r.ResourceName, r.ResourcePatternType, len(r.ACLs)))
	}
	want := []string{"TOPIC * LITERAL: 1", "TOPIC ord PREFIXED: 1", "TOPIC orders LITERAL: 2", "GROUP g1 LITERAL: 1", "CLUSTER kafka-cluster LITERAL: 1"}
	if diff := cmp.Diff(want, resources); diff != "" {
		t.Errorf("resources (-want +got):\n%s", diff)
	}

	// Deleting by a MATCH filter removes what applies to topic orders,
	// the prefixed and wildcard ACLs included, and reports them.
	del, err := adm.DeleteACLs(t.Context(), anyTopicFilter("orders", kadm.ACLPatternMatch))
	if err != nil {
		t.Fatal(err)
	}
	var deleted []string
	for _, r := range del {
		if r.Err != nil {
			t.Fatalf("delete: %v %s", r.Err, r.ErrMessage)
		}
		for _, d := range r.Deleted {
			if d.Err != nil {
				t.Errorf("deleted %s: %v", d.Name, d.Err)
			}
			deleted = append(deleted, aclLine(d.Type, d.Name, d.Pattern, d.Principal, d.Host, d.Operation, d.Permission))
		}
	}
	slices.Sort(deleted)
	if diff := cmp.Diff(sorted(aliceRead, aliceWrite, bobPrefix, carolAll), deleted); diff != "" {
		t.Errorf("deleted (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(sorted(aliceGroup, admin), describedACLs(t, adm, everyACL())); diff != "" {
		t.Errorf("left after delete (-want +got):\n%s", diff)
	}

	// What is left is in the metadata log: a restart reads it back, under
	// the same IDs.
	before := b.meta.Load().ACLs()
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	b = startBrokerWith(t, Config{LogDir: dir, Values: authorizerValues(t)})
	adm, _ = adminClient(t, b)
	if diff := cmp.Diff(sorted(aliceGroup, admin), describedACLs(t, adm, everyACL())); diff != "" {
		t.Errorf("after restart (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(before, b.meta.Load().ACLs()); diff != "" {
		t.Errorf("image ACLs after restart (-want +got):\n%s", diff)
	}
}

// TestAclsWithoutAuthorizer: with no authorizer configured every ACL API
// answers SECURITY_DISABLED with Kafka's messages, and writes nothing.
func TestAclsWithoutAuthorizer(t *testing.T) {
	b := startBroker(t)
	adm, ctx := adminClient(t, b)
	created, err := adm.CreateACLs(ctx, kadm.NewACLs().Topics("orders").Allow("User:alice").Operations(kadm.OpRead))
	if err != nil {
		t.Fatal(err)
	}
	if len(created) != 1 || created[0].Err != kerr.SecurityDisabled || created[0].ErrMessage != "No Authorizer is configured." {
		t.Errorf("create: %+v", created)
	}
	described, err := adm.DescribeACLs(ctx, everyACL())
	if err != nil {
		t.Fatal(err)
	}
	if len(described) != 1 || described[0].Err != kerr.SecurityDisabled || described[0].ErrMessage != "No Authorizer is configured on the broker" {
		t.Errorf("describe: %+v", described)
	}
	deleted, err := adm.DeleteACLs(ctx, everyACL())
	if err != nil {
		t.Fatal(err)
	}
	if len(deleted) != 1 || deleted[0].Err != kerr.SecurityDisabled || deleted[0].ErrMessage != "No Authorizer is configured." {
		t.Errorf("delete: %+v", deleted)
	}
	if n := len(b.meta.Load().ACLs()); n != 0 {
		t.Errorf("%d ACLs written without an authorizer", n)
	}
}

func creation(typ kmsg.ACLResourceType, name string, pattern kmsg.ACLResourcePatternType, principal string, op kmsg.ACLOperation, perm kmsg.ACLPermissionType) kmsg.CreateACLsRequestCreation {
	c := kmsg.NewCreateACLsRequestCreation()
	c.ResourceType, c.ResourceName, c.ResourcePatternType = typ, name, pattern
	c.Principal, c.Host, c.Operation, c.PermissionType = principal, "*", op, perm
	return c
}

// TestAclsBadInput: bad ACLs and filters get Kafka's error codes per item
// and leave the broker serving; UNKNOWN (0) values, which Kafka cannot
// parse, close the connection as there.
func TestAclsBadInput(t *testing.T) {
	b := startBrokerValues(t, withAuthorizer(nil))
	cl := newFranz(t, b.Addr())
	ctx := t.Context()
	const (
		topic   = kmsg.ACLResourceTypeTopic
		literal = kmsg.ACLResourcePatternTypeLiteral
		read    = kmsg.ACLOperationRead
		allow   = kmsg.ACLPermissionTypeAllow
	)
	cases := []struct {
		c   kmsg.CreateACLsRequestCreation
		msg string
	}{
		{creation(99, "orders", literal, "User:a", read, allow), "Invalid resourceType UNKNOWN"},
		{creation(kmsg.ACLResourceTypeAny, "orders", literal, "User:a", read, allow), "Invalid resourceType ANY"},
		{creation(topic, "orders", kmsg.ACLResourcePatternTypeMatch, "User:a", read, allow), "Invalid patternType MATCH"},
		{creation(topic, "orders", 42, "User:a", read, allow), "Invalid patternType UNKNOWN"},
		{creation(topic, "orders", literal, "alice", read, allow), `Invalid principal "alice"`},
		{creation(topic, "orders", literal, "", read, allow), `Invalid principal ""`},
		{creation(topic, "orders", literal, "User:a", kmsg.ACLOperationAny, allow), "Invalid operation ANY"},
		{creation(topic, "orders", literal, "User:a", read, kmsg.ACLPermissionTypeAny), "Invalid permissionType ANY"},
		{creation(topic, "", literal, "User:a", read, allow), "Invalid empty resource name"},
		{creation(kmsg.ACLResourceTypeCluster, "cluster", literal, "User:a", read, allow), "The only valid name for the CLUSTER resource is kafka-cluster"},
	}
	req := kmsg.NewPtrCreateACLsRequest()
	for _, tc := range cases {
		req.Creations = append(req.Creations, tc.c)
	}
	good := creation(kmsg.ACLResourceTypeUser, "alice", literal, "User:admin", kmsg.ACLOperationCreateTokens, allow)
	req.Creations = append(req.Creations, good)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	for i, tc := range cases {
		r := resp.Results[i]
		if r.ErrorCode != kerr.InvalidRequest.Code || r.ErrorMessage == nil || !strings.HasPrefix(*r.ErrorMessage, tc.msg) {
			t.Errorf("%+v: %s %v, want INVALID_REQUEST %q", tc.c, codeName(r.ErrorCode), r.ErrorMessage, tc.msg)
		}
	}
	if last := resp.Results[len(cases)]; last.ErrorCode != 0 || last.ErrorMessage != nil {
		t.Errorf("the valid ACL: %s %v", codeName(last.ErrorCode), last.ErrorMessage)
	}
	if acls := b.meta.Load().ACLs(); len(acls) != 1 || acls[0].ResourceName != "alice" {
		t.Errorf("image ACLs %+v, want the valid one only", acls)
	}

	// Filters with values Kafka does not know: DeleteAcls refuses them,
	// DescribeAcls matches nothing with them.
	dreq := kmsg.NewPtrDeleteACLsRequest()
	for _, edit := range []func(*kmsg.DeleteACLsRequestFilter){
		func(f *kmsg.DeleteACLsRequestFilter) { f.ResourceType = 99 },
		func(f *kmsg.DeleteACLsRequestFilter) { f.ResourcePatternType = 42 },
		func(f *kmsg.DeleteACLsRequestFilter) { f.Operation = 99 },
		func(f *kmsg.DeleteACLsRequestFilter) { f.PermissionType = 9 },
	} {
		f := kmsg.NewDeleteACLsRequestFilter()
		f.ResourceType, f.ResourcePatternType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny
		f.Operation, f.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
		edit(&f)
		dreq.Filters = append(dreq.Filters, f)
	}
	dresp, err := dreq.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range dresp.Results {
		want := "Unknown patternFilter."
		if i >= 2 {
			want = "Unknown entryFilter."
		}
		if r.ErrorCode != kerr.InvalidRequest.Code || r.ErrorMessage == nil || *r.ErrorMessage != want || len(r.MatchingACLs) != 0 {
			t.Errorf("filter %d: %s %v, want INVALID_REQUEST %q", i, codeName(r.ErrorCode), r.ErrorMessage, want)
		}
	}
	desc := kmsg.NewPtrDescribeACLsRequest()
	desc.ResourceType, desc.ResourcePatternType = 99, kmsg.ACLResourcePatternTypeAny
	desc.Operation, desc.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	descResp, err := desc.RequestWith(ctx, cl)
	if err != nil || descResp.ErrorCode != 0 || len(descResp.Resources) != 0 {
		t.Errorf("describe resource type 99: %v %s %+v", err, codeName(descResp.ErrorCode), descResp.Resources)
	}
	if len(b.meta.Load().ACLs()) != 1 {
		t.Error("refused filters deleted ACLs")
	}

	// UNKNOWN (0) cannot be parsed: the connection closes, the broker
	// serves the next one.
	unknown := []kmsg.Request{
		&kmsg.CreateACLsRequest{Version: 3, Creations: []kmsg.CreateACLsRequestCreation{creation(0, "orders", literal, "User:a", read, allow)}},
		&kmsg.CreateACLsRequest{Version: 3, Creations: []kmsg.CreateACLsRequestCreation{creation(topic, "orders", literal, "User:a", read, 0)}},
		&kmsg.DeleteACLsRequest{Version: 3, Filters: []kmsg.DeleteACLsRequestFilter{{ResourceType: 1, ResourcePatternType: 0, Operation: 1, PermissionType: 1}}},
		&kmsg.DescribeACLsRequest{Version: 3, ResourceType: 1, ResourcePatternType: 1, Operation: 0, PermissionType: 1},
	}
	for i, r := range unknown {
		rc := dialRaw(t, b)
		rc.sendFrame(encodeRequest(r, int32(i)))
		rc.expectClosed()
	}
	if n := len(b.meta.Load().ACLs()); n != 1 {
		t.Errorf("%d ACLs after the unparseable requests, want 1", n)
	}
	if _, err := kadm.NewClient(cl).DescribeACLs(ctx, everyACL()); err != nil {
		t.Errorf("the broker stopped serving: %v", err)
	}
}

// TestAclsEveryVersion: each version of the three APIs round-trips; v0,
// without pattern types, creates LITERAL ACLs and never sees PREFIXED
// ones.
func TestAclsEveryVersion(t *testing.T) {
	b := startBrokerValues(t, withAuthorizer(nil))
	rc := dialRaw(t, b)
	prefixed := kmsg.NewPtrCreateACLsRequest()
	prefixed.Version = 1
	prefixed.Creations = []kmsg.CreateACLsRequestCreation{creation(kmsg.ACLResourceTypeTopic, "p", kmsg.ACLResourcePatternTypePrefixed, "User:p", kmsg.ACLOperationRead, kmsg.ACLPermissionTypeAllow)}
	if r := rc.roundTrip(prefixed, 1).(*kmsg.CreateACLsResponse); r.Results[0].ErrorCode != 0 {
		t.Fatalf("create prefixed: %s", codeName(r.Results[0].ErrorCode))
	}
	for v := int16(0); v <= 3; v++ {
		name := fmt.Sprintf("v%d", v)
		create := kmsg.NewPtrCreateACLsRequest()
		create.Version = v
		create.Creations = []kmsg.CreateACLsRequestCreation{creation(kmsg.ACLResourceTypeTopic, name, kmsg.ACLResourcePatternTypeLiteral, "User:"+name, kmsg.ACLOperationRead, kmsg.ACLPermissionTypeAllow)}
		if r := rc.roundTrip(create, int32(10*v+2)).(*kmsg.CreateACLsResponse); len(r.Results) != 1 || r.Results[0].ErrorCode != 0 {
			t.Fatalf("v%d create: %+v", v, r.Results)
		}
		desc := kmsg.NewPtrDescribeACLsRequest()
		desc.Version = v
		desc.ResourceType, desc.Operation, desc.PermissionType = kmsg.ACLResourceTypeTopic, kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
		if v >= 1 {
			desc.ResourcePatternType = kmsg.ACLResourcePatternTypeAny
		}
		r := rc.roundTrip(desc, int32(10*v+3)).(*kmsg.DescribeACLsResponse)
		var names []string
		for _, res := range r.Resources {
			names = append(names, res.ResourceName)
		}
		want := []string{"p", "v0", "v1", "v2", "v3"}[:v+2]
		if v == 0 {
			want = []string{"v0"} // LITERAL only
		}
		if r.ErrorCode != 0 || !slices.Equal(names, want) {
			t.Errorf("v%d describe: %s %v, want %v", v, codeName(r.ErrorCode), names, want)
		}
	}
	for v := int16(0); v <= 3; v++ {
		del := kmsg.NewPtrDeleteACLsRequest()
		del.Version = v
		f := kmsg.NewDeleteACLsRequestFilter()
		f.ResourceType, f.ResourceName = kmsg.ACLResourceTypeTopic, kmsg.StringPtr(fmt.Sprintf("v%d", v))
		f.Operation, f.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
		del.Filters = []kmsg.DeleteACLsRequestFilter{f}
		r := rc.roundTrip(del, int32(50+v)).(*kmsg.DeleteACLsResponse)
		if len(r.Results) != 1 || r.Results[0].ErrorCode != 0 || len(r.Results[0].MatchingACLs) != 1 {
			t.Errorf("v%d delete: %+v", v, r.Results)
		}
	}
	if acls := b.meta.Load().ACLs(); len(acls) != 1 || acls[0].ResourceName != "p" {
		t.Errorf("left %+v, want the prefixed ACL only", acls)
	}
}

// TestClusterForwardsAclAndScramWrites sends CreateAcls, DeleteAcls and
// AlterUserScramCredentials to a broker that is not the active controller:
// it forwards each, and answers once its own image has the change, so a
// describe on the same broker right after sees it.
func TestClusterForwardsAclAndScramWrites(t *testing.T) {
	c := newTestCluster(t, 3, withAuthorizer(nil))
	active := c.activeController()
	var n *clusterNode
	for _, node := range c.nodes {
		if node != active {
			n = node
			break
		}
	}
	broker := newFranz(t, n.get().Addr()).SeedBrokers()[0]
	ctx := t.Context()

	create := kmsg.NewPtrCreateACLsRequest()
	create.Creations = []kmsg.CreateACLsRequestCreation{creation(kmsg.ACLResourceTypeTopic, "orders", kmsg.ACLResourcePatternTypeLiteral, "User:alice", kmsg.ACLOperationRead, kmsg.ACLPermissionTypeAllow)}
	resp, err := broker.Request(ctx, create)
	if err != nil {
		t.Fatal(err)
	}
	if code := resp.(*kmsg.CreateACLsResponse).Results[0].ErrorCode; code != 0 {
		t.Fatalf("create via broker %d: %s", n.id, codeName(code))
	}
	if len(n.get().meta.Load().ACLs()) != 1 {
		t.Errorf("broker %d answered CreateAcls before its image had the ACL", n.id)
	}

	scram := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	scram.Upsertions = []kmsg.AlterUserSCRAMCredentialsRequestUpsertion{{Name: "alice", Mechanism: 1, Iterations: 4096, Salt: []byte("s"), SaltedPassword: []byte("p")}}
	resp, err = broker.Request(ctx, scram)
	if err != nil {
		t.Fatal(err)
	}
	if code := resp.(*kmsg.AlterUserSCRAMCredentialsResponse).Results[0].ErrorCode; code != 0 {
		t.Fatalf("alter scram via broker %d: %s", n.id, codeName(code))
	}
	if _, ok := n.get().meta.Load().ScramCredential("alice", 1); !ok {
		t.Errorf("broker %d answered AlterUserScramCredentials before its image had the credential", n.id)
	}

	del := kmsg.NewPtrDeleteACLsRequest()
	f := kmsg.NewDeleteACLsRequestFilter()
	f.ResourceType, f.ResourcePatternType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny
	f.Operation, f.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	del.Filters = []kmsg.DeleteACLsRequestFilter{f}
	resp, err = broker.Request(ctx, del)
	if err != nil {
		t.Fatal(err)
	}
	if r := resp.(*kmsg.DeleteACLsResponse).Results[0]; r.ErrorCode != 0 || len(r.MatchingACLs) != 1 {
		t.Fatalf("delete via broker %d: %s, %d matching", n.id, codeName(r.ErrorCode), len(r.MatchingACLs))
	}
	if len(n.get().meta.Load().ACLs()) != 0 {
		t.Errorf("broker %d answered DeleteAcls before its image lost the ACL", n.id)
	}
	// The active controller has it all too.
	img := active.get().ctrl.Image()
	if _, ok := img.ScramCredential("alice", 1); !ok || len(img.ACLs()) != 0 {
		t.Errorf("the active controller's image: %d ACLs, alice's credential %v", len(img.ACLs()), ok)
	}
}

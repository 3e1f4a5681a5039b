package broker

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/samsa-io/samsa/internal/auth"
	"github.com/samsa-io/samsa/internal/config"
	"github.com/samsa-io/samsa/internal/controller"
)

// Targeted authorization tests beside the matrix (e2e_authz_matrix_test.go):
// what a listing hides, the KIP-430 bitfields, the audit, forwarding in a
// cluster, IPv6 hosts.

func aliceACL(rt kmsg.ACLResourceType, name string, pattern kmsg.ACLResourcePatternType, op kmsg.ACLOperation) auth.ACL {
	return auth.ACL{ResourceType: rt, ResourceName: name, PatternType: pattern, Principal: "User:alice", Host: "*", Operation: op, Permission: allow}
}

// metadataNames lists the topics of a Metadata answer, with their errors.
func metadataNames(resp *kmsg.MetadataResponse) []string {
	var out []string
	for _, t := range resp.Topics {
		name := "<null>"
		if t.Topic != nil {
			name = *t.Topic
		}
		out = append(out, name+" "+codeName(t.ErrorCode))
	}
	return out
}

// Metadata shows a principal only the topics it may DESCRIBE: a listing
// leaves the others out; a topic named, existing or not, is
// TOPIC_AUTHORIZATION_FAILED, so its existence is not given away; one
// named by ID keeps its name hidden. Auto-creation needs CREATE too.
func TestAuthzMetadataHidesTopics(t *testing.T) {
	e := newAuthzEnv(t, nil)
	for _, name := range []string{"visible-a", "hidden-b"} {
		e.mustCreateTopic(name)
	}
	e.setACLs([]auth.ACL{aliceACL(kmsg.ACLResourceTypeTopic, "visible-", prefixed, opDescribe)})
	alice := e.client("alice", nil)

	all := request(t, alice, kmsg.NewPtrMetadataRequest()).(*kmsg.MetadataResponse)
	if got := metadataNames(all); !slices.Equal(got, []string{"visible-a NONE"}) {
		t.Errorf("all topics: %v, want visible-a alone", got)
	}
	v0 := kmsg.NewPtrMetadataRequest()
	v0.Topics = []kmsg.MetadataRequestTopic{} // all topics, at v0
	if got := metadataNames(request(t, e.client("alice", map[kmsg.Key]int16{kmsg.Metadata: 0}), v0).(*kmsg.MetadataResponse)); !slices.Equal(got, []string{"visible-a NONE"}) {
		t.Errorf("all topics at v0 (an empty list): %v, want visible-a alone", got)
	}

	named := kmsg.NewPtrMetadataRequest()
	for _, name := range []string{"hidden-b", "hidden-missing", "visible-missing", "visible-a"} {
		named.Topics = append(named.Topics, kmsg.MetadataRequestTopic{Topic: kmsg.StringPtr(name)})
	}
	want := []string{"hidden-b TOPIC_AUTHORIZATION_FAILED", "hidden-missing TOPIC_AUTHORIZATION_FAILED",
		"visible-missing UNKNOWN_TOPIC_OR_PARTITION", "visible-a NONE"}
	if got := metadataNames(request(t, alice, named).(*kmsg.MetadataResponse)); !slices.Equal(got, want) {
		t.Errorf("named topics: %v, want %v", got, want)
	}

	hidden, _ := e.b.topics.byTopicName("hidden-b")
	byID := kmsg.NewPtrMetadataRequest()
	byID.Topics = []kmsg.MetadataRequestTopic{{TopicID: hidden.id}}
	mt := request(t, alice, byID).(*kmsg.MetadataResponse).Topics[0]
	if mt.ErrorCode != topicDenied || mt.Topic != nil || mt.TopicID != hidden.id {
		t.Errorf("hidden topic by ID: %s, name %v, ID %x; want TOPIC_AUTHORIZATION_FAILED, no name, its ID", codeName(mt.ErrorCode), mt.Topic, mt.TopicID)
	}

	autoCreate := func(name string) int16 {
		req := kmsg.NewPtrMetadataRequest()
		req.Topics, req.AllowAutoTopicCreation = []kmsg.MetadataRequestTopic{{Topic: kmsg.StringPtr(name)}}, true
		return request(t, alice, req).(*kmsg.MetadataResponse).Topics[0].ErrorCode
	}
	if code := autoCreate("visible-new"); code != topicDenied {
		t.Errorf("auto-creating without CREATE: %s, want TOPIC_AUTHORIZATION_FAILED", codeName(code))
	}
	if _, ok := e.b.meta.Load().Topic("visible-new"); ok || e.b.autoCreate.inFlight["visible-new"] {
		t.Error("a topic the principal may not create was created")
	}
	e.setACLs([]auth.ACL{aliceACL(kmsg.ACLResourceTypeTopic, "visible-", prefixed, opDescribe),
		aliceACL(kmsg.ACLResourceTypeTopic, "visible-", prefixed, opCreate)})
	if code := autoCreate("visible-new"); code != 0 && code != kerr.LeaderNotAvailable.Code {
		t.Errorf("auto-creating with CREATE: %s", codeName(code))
	}

	dtp := kmsg.NewPtrDescribeTopicPartitionsRequest()
	dtp.ResponsePartitionLimit = 100
	var listedTopics []string
	for _, t := range request(t, alice, dtp).(*kmsg.DescribeTopicPartitionsResponse).Topics {
		listedTopics = append(listedTopics, *t.Topic)
	}
	if slices.Contains(listedTopics, "hidden-b") || !slices.Contains(listedTopics, "visible-a") {
		t.Errorf("DescribeTopicPartitions of all topics: %v, want visible-a and not hidden-b", listedTopics)
	}
	if n := e.b.AuthorizationDenials(kmsg.Metadata); n != 4 {
		t.Errorf("%d Metadata denials counted, want 4: the named topics and the refused creation, not the listings' omissions", n)
	}
}

// opBits is a KIP-430 bitfield of ops.
func opBits(ops ...kmsg.ACLOperation) int32 {
	var bits int32
	for _, op := range ops {
		bits |= 1 << op
	}
	return bits
}

// The authorized-operations bitfields (KIP-430) say what the principal
// may do: the cluster's (Metadata v8-10, DescribeCluster) only with
// DESCRIBE on it, else 0; a topic's (Metadata), a group's
// (DescribeGroups, ConsumerGroupDescribe); -2147483648 when not asked
// for; everything the resource type has for a super user, and without an
// authorizer.
func TestAuthzAuthorizedOperations(t *testing.T) {
	e := newAuthzEnv(t, nil)
	e.mustCreateTopic("ops-t")
	e.mustCommit("ops-t", "ops-g")
	cgh := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	cgh.Group, cgh.MemberID, cgh.RebalanceTimeoutMillis, cgh.SubscribedTopicNames = "ops-cg", "member-1", 30000, []string{"ops-t"}
	cgh.Topics = []kmsg.ConsumerGroupHeartbeatRequestTopic{}
	if code := request(t, e.admin, cgh).(*kmsg.ConsumerGroupHeartbeatResponse).ErrorCode; code != 0 {
		t.Fatalf("consumer group heartbeat: %s", codeName(code))
	}
	e.setACLs([]auth.ACL{
		aliceACL(kmsg.ACLResourceTypeCluster, auth.ClusterName, literal, opAlter),
		aliceACL(kmsg.ACLResourceTypeTopic, "ops-t", literal, opRead),
		aliceACL(kmsg.ACLResourceTypeGroup, "ops-", prefixed, opRead),
	})
	type fields struct{ cluster, topic, describeCluster, group, consumerGroup int32 }
	ask := func(user string, include bool) fields {
		cl := e.client(user, map[kmsg.Key]int16{kmsg.Metadata: 10})
		var f fields
		md := kmsg.NewPtrMetadataRequest()
		md.Topics = []kmsg.MetadataRequestTopic{{Topic: kmsg.StringPtr("ops-t")}}
		md.IncludeClusterAuthorizedOperations, md.IncludeTopicAuthorizedOperations = include, include
		mr := request(t, cl, md).(*kmsg.MetadataResponse)
		f.cluster, f.topic = mr.AuthorizedOperations, mr.Topics[0].AuthorizedOperations
		dc := kmsg.NewPtrDescribeClusterRequest()
		dc.IncludeClusterAuthorizedOperations = include
		f.describeCluster = request(t, cl, dc).(*kmsg.DescribeClusterResponse).ClusterAuthorizedOperations
		dg := kmsg.NewPtrDescribeGroupsRequest()
		dg.Groups, dg.IncludeAuthorizedOperations = []string{"ops-g"}, include
		g := request(t, cl, dg).(*kmsg.DescribeGroupsResponse).Groups[0]
		if g.ErrorCode != 0 {
			t.Fatalf("describe group: %s", codeName(g.ErrorCode))
		}
		f.group = g.AuthorizedOperations
		cgd := kmsg.NewPtrConsumerGroupDescribeRequest()
		cgd.Groups, cgd.IncludeAuthorizedOperations = []string{"ops-cg"}, include
		cg := request(t, cl, cgd).(*kmsg.ConsumerGroupDescribeResponse).Groups[0]
		if cg.ErrorCode != 0 {
			t.Fatalf("describe consumer group: %s", codeName(cg.ErrorCode))
		}
		f.consumerGroup = cg.AuthorizedOperations
		return f
	}
	const none = notRequestedOperations
	readDescribe := opBits(opRead, opDescribe)
	check := func(what string, got, want fields) {
		t.Helper()
		if got != want {
			t.Errorf("%s: %+v, want %+v", what, got, want)
		}
	}
	check("alice, not asked", ask("alice", false), fields{none, none, none, none, none})
	// ALTER implies DESCRIBE, which the cluster's bitfield needs.
	aliceCluster := opBits(opAlter, opDescribe)
	check("alice", ask("alice", true), fields{aliceCluster, readDescribe, aliceCluster, readDescribe, readDescribe})

	clusterOps := opBits(auth.SupportedOperations(kmsg.ACLResourceTypeCluster)...)
	groupOps := opBits(auth.SupportedOperations(kmsg.ACLResourceTypeGroup)...)
	check("super user", ask("admin", true), fields{clusterOps, opBits(auth.SupportedOperations(kmsg.ACLResourceTypeTopic)...), clusterOps, groupOps, groupOps})

	// ALTER_CONFIGS on the cluster implies DESCRIBE_CONFIGS, not DESCRIBE:
	// without DESCRIBE the cluster's bitfield is 0, as in Kafka.
	e.setACLs([]auth.ACL{
		aliceACL(kmsg.ACLResourceTypeCluster, auth.ClusterName, literal, opAlterConfigs),
		aliceACL(kmsg.ACLResourceTypeTopic, "ops-t", literal, opRead),
		aliceACL(kmsg.ACLResourceTypeGroup, "ops-", prefixed, opRead),
	})
	check("alice without DESCRIBE on the cluster", ask("alice", true), fields{0, readDescribe, 0, readDescribe, readDescribe})

	// Without an authorizer: every operation of the resource type.
	b := startBroker(t)
	md := kmsg.NewPtrMetadataRequest()
	md.Version, md.IncludeClusterAuthorizedOperations, md.IncludeTopicAuthorizedOperations = 10, true, true
	if got := dialRaw(t, b).roundTrip(md, 1).(*kmsg.MetadataResponse).AuthorizedOperations; got != clusterOps {
		t.Errorf("no authorizer: cluster operations %b, want %b", got, clusterOps)
	}
}

// Each denial is counted, and audited in a rate-limited line that names
// the principal, the client's host, the operation, the resource and the
// API; the authorizer is rebuilt when the ACLs change, not on every
// metadata image.
func TestAuthzDenialsAreCountedAndLogged(t *testing.T) {
	var logs syncBuffer
	e := newAuthzEnvLogging(t, nil, slogTo(&logs))
	e.mustCreateTopic("audit-t")
	alice := e.client("alice", nil)
	p := &probe{t: t, e: e, cl: alice}
	for range 3 {
		if code := p.produce("audit-t", nil); code != topicDenied {
			t.Fatalf("produce without WRITE: %s", codeName(code))
		}
	}
	if n := e.b.AuthorizationDenials(kmsg.Produce); n != 3 {
		t.Errorf("%d Produce denials counted, want 3", n)
	}
	var lines []string
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, "authorization denied") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 {
		t.Fatalf("%d audit lines for 3 denials within a second, want 1 (rate-limited):\n%s", len(lines), strings.Join(lines, "\n"))
	}
	for _, want := range []string{"api=Produce", "principal=User:alice", "host=127.0.0.1", "operation=WRITE",
		"resource_type=TOPIC", "resource_name=audit-t", "denials_in_request=1", "listener=SASL_PLAINTEXT"} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("audit line lacks %s: %s", want, lines[0])
		}
	}

	before := e.b.authorizer()
	e.mustCreateTopic("audit-another")
	if e.b.authorizer() != before {
		t.Error("an image without an ACL change rebuilt the authorizer")
	}
	e.setACLs([]auth.ACL{aliceACL(kmsg.ACLResourceTypeTopic, "audit-t", literal, opWrite)})
	if e.b.authorizer() == before {
		t.Error("an ACL change left the authorizer as it was")
	}
	if code := p.produce("audit-t", nil); code != 0 {
		t.Errorf("produce on the same connection after the ACL came: %s", codeName(code))
	}
}

// An ACL's host is the client's IP as Java prints it: an IPv6 client
// from ::1 matches 0:0:0:0:0:0:0:1, not ::1.
func TestAuthzIPv6Host(t *testing.T) {
	ln, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Skipf("no IPv6 loopback: %v", err)
	}
	ln.Close()
	e := newAuthzEnv(t, map[string]string{"listeners": "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://[::1]:0"})
	e.mustCreateTopic("v6-t")
	p := &probe{t: t, e: e, cl: e.client("alice", nil)}
	for _, tt := range []struct {
		host string
		want int16
	}{{"0:0:0:0:0:0:0:1", 0}, {"::1", topicDenied}} {
		e.setACLs([]auth.ACL{{ResourceType: kmsg.ACLResourceTypeTopic, ResourceName: "v6-t", PatternType: literal,
			Principal: "User:alice", Host: tt.host, Operation: opDescribe, Permission: allow}})
		if code := p.metadataTopic("v6-t", false); code != tt.want {
			t.Errorf("ACL from host %s: %s, want %s", tt.host, codeName(code), codeName(tt.want))
		}
	}
}

// In a cluster a broker that is not the active controller authorizes a
// metadata write with the client's principal before it forwards it (the
// controller sees the peer's ANONYMOUS, a super user there), sends on
// only what was allowed, and answers with the denials merged in order.
func TestAuthzClusterAuthorizesBeforeForwarding(t *testing.T) {
	c := newTestCluster(t, 3, withAuthorizer(nil))
	active := c.activeController()
	var n *clusterNode
	for _, node := range c.nodes {
		if node != active {
			n = node
			break
		}
	}
	b := n.get()
	adm := kadm.NewClient(newFranz(t, b.Addr()))
	mustCreateACLs(t, adm, kadm.NewACLs().Topics("fw-ok").Allow("User:alice").Operations(kadm.OpCreate))
	alice := &conn{b: b, principal: auth.User("alice"), nc: addrConn{addr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1}}, log: quiet}
	if !b.forwarding(alice) {
		t.Fatal("the broker would not forward: the test needs one that is not the active controller")
	}

	req := kmsg.NewPtrCreateTopicsRequest()
	req.Version, req.TimeoutMillis = 7, 10000
	for _, name := range []string{"fw-denied", "fw-ok"} {
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, 1, 1
		req.Topics = append(req.Topics, rt)
	}
	resp, err := handleCreateTopics(b, alice, req)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, st := range resp.(*kmsg.CreateTopicsResponse).Topics {
		got = append(got, st.Topic+" "+codeName(st.ErrorCode))
	}
	if want := []string{"fw-denied TOPIC_AUTHORIZATION_FAILED", "fw-ok NONE"}; !slices.Equal(got, want) {
		t.Errorf("forwarded CreateTopics: %v, want %v", got, want)
	}
	img := active.get().ctrl.Image()
	if _, ok := img.Topic("fw-denied"); ok {
		t.Error("the controller created the topic the principal may not create")
	}
	if _, ok := img.Topic("fw-ok"); !ok {
		t.Error("the controller did not create the allowed topic")
	}

	acls := kmsg.NewPtrCreateACLsRequest()
	acls.Creations = []kmsg.CreateACLsRequestCreation{{ResourceType: kmsg.ACLResourceTypeTopic, ResourceName: "x",
		ResourcePatternType: literal, Principal: "User:alice", Host: "*", Operation: opAll, PermissionType: allow}}
	ar, err := handleCreateACLs(b, alice, acls)
	if err != nil {
		t.Fatal(err)
	}
	if code := ar.(*kmsg.CreateACLsResponse).Results[0].ErrorCode; code != clusterDenied {
		t.Errorf("CreateAcls without ALTER on the cluster: %s, want CLUSTER_AUTHORIZATION_FAILED", codeName(code))
	}
	if len(active.get().ctrl.Image().ACLs()) != 1 {
		t.Error("a refused CreateAcls reached the controller")
	}
}

const opAll = kmsg.ACLOperationAll

// slogTo is a logger writing text lines to w.
func slogTo(w io.Writer) *slog.Logger { return slog.New(slog.NewTextHandler(w, nil)) }

// CreateTopics (v5+) answers a topic the principal may create but not
// DESCRIBE_CONFIGS without its partitions, replication factor or configs;
// DeleteTopics of a topic named by ID keeps its name from a principal that
// may not DESCRIBE it.
func TestAuthzTopicAdminHidesWhatItMayNotDescribe(t *testing.T) {
	e := newAuthzEnv(t, nil)
	alice := e.client("alice", nil)
	create := func(name string) kmsg.CreateTopicsResponseTopic {
		req := kmsg.NewPtrCreateTopicsRequest()
		req.TimeoutMillis = 10000
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, 2, 1
		req.Topics = append(req.Topics, rt)
		return request(t, alice, req).(*kmsg.CreateTopicsResponse).Topics[0]
	}
	e.setACLs([]auth.ACL{aliceACL(kmsg.ACLResourceTypeTopic, "ha-", prefixed, opCreate)})
	st := create("ha-blind")
	if st.ErrorCode != 0 || st.ConfigErrorCode != topicDenied || st.NumPartitions != -1 || st.ReplicationFactor != -1 || len(st.Configs) != 0 {
		t.Errorf("created without DESCRIBE_CONFIGS: %s, config error %s, %d partitions, factor %d, %d configs; want the topic created and its configs hidden",
			codeName(st.ErrorCode), codeName(st.ConfigErrorCode), st.NumPartitions, st.ReplicationFactor, len(st.Configs))
	}
	e.setACLs([]auth.ACL{aliceACL(kmsg.ACLResourceTypeTopic, "ha-", prefixed, opCreate),
		aliceACL(kmsg.ACLResourceTypeTopic, "ha-", prefixed, opDescribeConfigs)})
	st = create("ha-seen")
	if st.ErrorCode != 0 || st.ConfigErrorCode != 0 || st.NumPartitions != 2 || len(st.Configs) == 0 {
		t.Errorf("created with DESCRIBE_CONFIGS: %s, config error %s, %d partitions, %d configs", codeName(st.ErrorCode), codeName(st.ConfigErrorCode), st.NumPartitions, len(st.Configs))
	}

	ts, _ := e.b.topics.byTopicName("ha-blind")
	del := kmsg.NewPtrDeleteTopicsRequest()
	del.Topics = []kmsg.DeleteTopicsRequestTopic{{TopicID: ts.id}}
	dt := request(t, alice, del).(*kmsg.DeleteTopicsResponse).Topics[0]
	if dt.ErrorCode != topicDenied || dt.Topic != nil || dt.TopicID != ts.id {
		t.Errorf("deleting by ID without DESCRIBE: %s, name %v; want TOPIC_AUTHORIZATION_FAILED and no name", codeName(dt.ErrorCode), dt.Topic)
	}
	if _, ok := e.b.meta.Load().Topic("ha-blind"); !ok {
		t.Error("a topic the principal may not delete was deleted")
	}
}

// Delegation tokens: a requester creates its own tokens without an ACL,
// and an Envelope's inner request is authorized as the principal from
// the client address it carries, not as the forwarding connection, with
// the audit line naming them.
func TestAuthzDelegationTokenRequesters(t *testing.T) {
	var logs syncBuffer
	e := newAuthzEnvLogging(t, nil, slogTo(&logs))
	p := &probe{t: t, e: e, cl: e.client("alice", nil), user: "admin"}
	own := kmsg.NewPtrCreateDelegationTokenRequest()
	own.OwnerPrincipalType, own.OwnerPrincipalName = kmsg.StringPtr("User"), kmsg.StringPtr("alice")
	if code := p.do(own).(*kmsg.CreateDelegationTokenResponse).ErrorCode; code != 0 {
		t.Fatalf("alice creates her own token with no ACLs: %s", codeName(code))
	}

	forBob := kmsg.NewPtrCreateDelegationTokenRequest()
	forBob.Version = 3
	forBob.OwnerPrincipalType, forBob.OwnerPrincipalName = kmsg.StringPtr("User"), kmsg.StringPtr("bob")
	e.setACLs([]auth.ACL{{ResourceType: kmsg.ACLResourceTypeUser, ResourceName: "User:bob", PatternType: literal,
		Principal: "User:alice", Host: "10.0.0.1", Operation: kmsg.ACLOperationCreateTokens, Permission: allow}})
	enveloped := func(principal string, client net.IP) int16 {
		t.Helper()
		env := envelopeOf(forBob, auth.User(principal), false)
		env.ClientHostAddress = client
		resp := handleAs(p, handleEnvelope, env).(*kmsg.EnvelopeResponse) // from the admin, a super user
		if resp.ErrorCode != 0 {
			t.Fatalf("Envelope: %s", codeName(resp.ErrorCode))
		}
		inner, err := decodeResponseHeaderAndBody(resp.ResponseData, forBob)
		if err != nil {
			t.Fatal(err)
		}
		return inner.(*kmsg.CreateDelegationTokenResponse).ErrorCode
	}
	for _, tc := range []struct {
		principal string
		client    net.IP
		want      int16
	}{
		{"alice", net.IPv4(10, 0, 0, 1).To4(), 0},
		{"alice", net.IPv4(10, 0, 0, 1), 0}, // IPv4-mapped, 16 bytes
		{"alice", net.IPv4(127, 0, 0, 1).To4(), tokenDenied},
		{"bob", net.IPv4(127, 0, 0, 1).To4(), 0}, // his own
		{"mallory", net.IPv4(10, 0, 0, 1).To4(), tokenDenied},
	} {
		if got := enveloped(tc.principal, tc.client); got != tc.want {
			t.Errorf("%s from %s, forwarded for bob: %s, want %s", tc.principal, tc.client, codeName(got), codeName(tc.want))
		}
	}
	if !strings.Contains(logs.String(), "principal=User:alice host=127.0.0.1 operation=CREATE_TOKENS resource_type=USER resource_name=User:bob") {
		t.Errorf("no audit line names the Envelope's principal and client:\n%s", logs.String())
	}
	env := envelopeOf(forBob, auth.User("alice"), false)
	env.ClientHostAddress = []byte{10, 0, 0}
	if code := handleAs(p, handleEnvelope, env).(*kmsg.EnvelopeResponse).ErrorCode; code != kerr.InvalidRequest.Code {
		t.Errorf("an Envelope with a 3-byte client address: %s", codeName(code))
	}
}

// Raft rides a controller listener after a SASL login, and only for a
// principal with CLUSTER_ACTION on the cluster (Kafka's check on the KRaft
// APIs): alice, logged in but not allowed, has the connection closed and
// the denial counted; the node's own principal, a super user, is handed
// to Raft, which keeps the connection open.
func TestRaftOverSASLNeedsClusterAction(t *testing.T) {
	jaas := `org.apache.kafka.common.security.plain.PlainLoginModule required username="node" password="node-pw" user_node="node-pw" user_alice="alice-pw";`
	c := newTestCluster(t, 1, map[string]string{
		"listener.security.protocol.map":                   "PLAINTEXT:PLAINTEXT,CONTROLLER:SASL_PLAINTEXT",
		"sasl.mechanism.controller.protocol":               "PLAIN",
		"listener.name.controller.sasl.enabled.mechanisms": "PLAIN",
		"listener.name.controller.plain.sasl.jaas.config":  jaas,
		"authorizer.class.name":                            config.StandardAuthorizer,
		"super.users":                                      "User:node;User:ANONYMOUS",
	})
	n := c.nodes[0]
	addr := "127.0.0.1:" + n.ctrlPort
	// open logs in as user, sends Raft's preamble, and reports whether the
	// node closed the connection within a second.
	open := func(user, pass string) (closed bool) {
		t.Helper()
		s := &clientSecurity{mechanism: plain.Auth{User: user, Pass: pass}.AsMechanism()}
		nc, err := s.dialRaft(addr, 5*time.Second)
		if err != nil {
			t.Fatalf("log in as %s: %v", user, err)
		}
		defer nc.Close()
		if _, err := nc.Write(controller.RaftPreamble[:]); err != nil {
			t.Fatal(err)
		}
		nc.SetReadDeadline(time.Now().Add(time.Second))
		_, err = nc.Read(make([]byte, 1))
		var ne net.Error
		return !(errors.As(err, &ne) && ne.Timeout())
	}
	before := n.get().AuthorizationDenials(kmsg.Vote)
	if !open("alice", "alice-pw") {
		t.Error("alice, without CLUSTER_ACTION, was handed to Raft")
	}
	if got := n.get().AuthorizationDenials(kmsg.Vote) - before; got != 1 {
		t.Errorf("%d denials counted under Vote, want 1", got)
	}
	if open("node", "node-pw") {
		t.Error("the node's own principal, a super user, had its Raft connection closed")
	}
}

package restproxy

import (
	"fmt"
	"strings"
	"testing"
)

// withAuthorizer is a broker with Kafka's StandardAuthorizer, the proxy's
// (anonymous) principal a super user so it may manage ACLs.
var withAuthorizer = []string{
	"--override", "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
	"--override", "super.users=User:ANONYMOUS",
}

func TestRestACLs(t *testing.T) {
	tp := startProxy(t, Config{}, withAuthorizer...)
	c := tp.clusterID
	aclJSON := func(rt, name, pt, principal, host, op, perm string) string {
		q := fmt.Sprintf("resource_type=%s&resource_name=%s&pattern_type=%s&principal=%s&host=%s&operation=%s&permission=%s",
			rt, name, pt, principal, host, op, perm)
		return fmt.Sprintf(`{"kind":"KafkaAcl","metadata":{"self":%q},"cluster_id":%q,"resource_type":%q,"resource_name":%q,
			"pattern_type":%q,"principal":%q,"host":%q,"operation":%q,"permission":%q}`,
			tp.link("/acls?"+q), c, rt, name, pt, principal, host, op, perm)
	}
	list := func(query, items string) string {
		self := tp.link("/acls")
		if query != "" {
			self += "?" + query
		}
		return fmt.Sprintf(`{"kind":"KafkaAclList","metadata":{"self":%q,"next":null},"data":[%s]}`, self, items)
	}

	status, body := tp.do(t, "GET", tp.v3("/acls"), "", "")
	expect(t, "no ACLs", status, body, 200, list("", ""))

	status, body = tp.do(t, "POST", tp.v3("/acls"), jsonType, `{"resource_type":"TOPIC","resource_name":"orders","pattern_type":"LITERAL",
		"principal":"User:alice","host":"*","operation":"READ","permission":"ALLOW"}`)
	expect(t, "create", status, body, 201, "")
	status, body = tp.do(t, "POST", tp.v3("/acls:batch"), jsonType, `{"data":[
		{"resource_type":"GROUP","resource_name":"app-","pattern_type":"PREFIXED","principal":"User:alice","host":"*","operation":"READ","permission":"ALLOW"},
		{"resource_type":"TOPIC","resource_name":"orders","pattern_type":"LITERAL","principal":"User:bob","host":"10.0.0.1","operation":"WRITE","permission":"DENY"}]}`)
	expect(t, "batch create", status, body, 201, "")

	aliceTopic := aclJSON("TOPIC", "orders", "LITERAL", "User%3Aalice", "%2A", "READ", "ALLOW")
	bobTopic := aclJSON("TOPIC", "orders", "LITERAL", "User%3Abob", "10.0.0.1", "WRITE", "DENY")
	aliceGroup := aclJSON("GROUP", "app-", "PREFIXED", "User%3Aalice", "%2A", "READ", "ALLOW")
	// the JSON fields are the decoded values, the self link the encoded ones
	fix := func(s string) string {
		for _, r := range [][2]string{{`"principal":"User%3Aalice"`, `"principal":"User:alice"`}, {`"principal":"User%3Abob"`, `"principal":"User:bob"`}, {`"host":"%2A"`, `"host":"*"`}} {
			s = strings.ReplaceAll(s, r[0], r[1])
		}
		return s
	}
	aliceTopic, bobTopic, aliceGroup = fix(aliceTopic), fix(bobTopic), fix(aliceGroup)

	status, body = tp.do(t, "GET", tp.v3("/acls"), "", "")
	expect(t, "list all", status, body, 200, list("", aliceGroup+","+aliceTopic+","+bobTopic))
	status, body = tp.do(t, "GET", tp.v3("/acls?resource_type=topic&principal=User:alice"), "", "")
	expect(t, "filter", status, body, 200, list("resource_type=topic&principal=User:alice", aliceTopic))
	status, body = tp.do(t, "GET", tp.v3("/acls?permission=DENY"), "", "")
	expect(t, "filter by permission", status, body, 200, list("permission=DENY", bobTopic))

	// Bad enum values and missing fields: 400.
	// UNKNOWN too: Kafka refuses it, and it never reaches the cluster.
	for _, q := range []string{"resource_type=FILE", "pattern_type=GLOB", "operation=EAT", "permission=MAYBE",
		"resource_type=UNKNOWN", "operation=unknown"} {
		status, body = tp.do(t, "GET", tp.v3("/acls?"+q), "", "")
		expect(t, q, status, body, 400, "")
		if code := field(body, "error_code"); code != float64(400) {
			t.Fatalf("%s: error_code %v", q, code)
		}
	}
	status, body = tp.do(t, "POST", tp.v3("/acls"), jsonType, `{"resource_type":"TOPIC","resource_name":"x","pattern_type":"LITERAL","principal":"User:a","host":"*","operation":"READ"}`)
	expect(t, "missing permission", status, body, 400, `{"error_code":400,"message":"Bad Request: permission is required"}`)
	status, body = tp.do(t, "POST", tp.v3("/acls"), jsonType, `{"resource_type":"TOPIC","resource_name":"x","pattern_type":"LITERAL","principal":"User:a","host":"*","operation":"READ","permission":"SOMETIMES"}`)
	expect(t, "bad permission", status, body, 400, `{"error_code":400,"message":"Bad Request: permission: SOMETIMES is not one of UNKNOWN, ANY, DENY, ALLOW"}`)
	for _, c := range []struct{ what, acl string }{
		{"an ANY resource type", `"resource_type":"ANY","pattern_type":"LITERAL","operation":"READ","permission":"ALLOW"`},
		{"an UNKNOWN operation", `"resource_type":"TOPIC","pattern_type":"LITERAL","operation":"UNKNOWN","permission":"ALLOW"`},
		{"a MATCH pattern", `"resource_type":"TOPIC","pattern_type":"MATCH","operation":"READ","permission":"ALLOW"`},
		{"an empty permission", `"resource_type":"TOPIC","pattern_type":"LITERAL","operation":"READ","permission":""`},
	} {
		status, body = tp.do(t, "POST", tp.v3("/acls:batch"), jsonType, `{"data":[{"resource_name":"x","principal":"User:a","host":"*",`+c.acl+`}]}`)
		expect(t, "create "+c.what, status, body, 400, "")
	}
	status, body = tp.do(t, "DELETE", tp.v3("/acls?resource_type=TOPIC"), "", "")
	expect(t, "delete without the required filter", status, body, 400, `{"error_code":400,"message":"Bad Request: pattern_type is required"}`)

	// Delete by filter answers what it deleted; the rest stays.
	q := "resource_type=TOPIC&pattern_type=ANY&operation=ANY&permission=ANY&resource_name=orders"
	status, body = tp.do(t, "DELETE", tp.v3("/acls?"+q), "", "")
	expect(t, "delete", status, body, 200, `{"data":[`+aliceTopic+","+bobTopic+`]}`)
	status, body = tp.do(t, "GET", tp.v3("/acls"), "", "")
	expect(t, "after delete", status, body, 200, list("", aliceGroup))
	status, body = tp.do(t, "DELETE", tp.v3("/acls?"+q), "", "")
	expect(t, "delete again", status, body, 200, `{"data":[]}`)
}

// A broker without an authorizer cannot keep ACLs: 400, not a 500.
func TestRestACLsSecurityDisabled(t *testing.T) {
	tp := startProxy(t, Config{})
	status, body := tp.do(t, "GET", tp.v3("/acls"), "", "")
	expect(t, "list", status, body, 400, "")
	if code := field(body, "error_code"); code != float64(40002) {
		t.Fatalf("error_code %v, body %v", code, body)
	}
	status, body = tp.do(t, "POST", tp.v3("/acls"), jsonType, `{"resource_type":"TOPIC","resource_name":"x","pattern_type":"LITERAL","principal":"User:a","host":"*","operation":"READ","permission":"ALLOW"}`)
	expect(t, "create", status, body, 400, "")
}

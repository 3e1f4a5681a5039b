package cli

import (
	"strings"
	"testing"
)

// TestACLRoundTrip runs on kfake, which keeps ACLs without an authorizer
// to configure; the Samsa broker answers SECURITY_DISABLED until one is
// configured (TestACLWithoutAuthorizer).
func TestACLRoundTrip(t *testing.T) {
	aclRoundTrip(t, newTestCluster(t))
}

// aclRoundTrip creates ACLs of every resource type and pattern, lists
// them whole and filtered, deletes some and lists what is left.
func aclRoundTrip(t *testing.T, c *testCluster) {
	t.Helper()
	out := c.ok("", "acl", "create", "--allow-principal", "User:alice", "--allow-principal", "User:bob",
		"--operation", "Read", "--operation", "describe", "--topic", "orders", "--group", "billing")
	want := "" +
		"RESOURCE-TYPE  RESOURCE-NAME  PATTERN  PRINCIPAL   HOST  OPERATION  PERMISSION  ERROR\n" +
		"GROUP          billing        LITERAL  User:alice  *     DESCRIBE   ALLOW       -\n" +
		"GROUP          billing        LITERAL  User:alice  *     READ       ALLOW       -\n" +
		"GROUP          billing        LITERAL  User:bob    *     DESCRIBE   ALLOW       -\n" +
		"GROUP          billing        LITERAL  User:bob    *     READ       ALLOW       -\n" +
		"TOPIC          orders         LITERAL  User:alice  *     DESCRIBE   ALLOW       -\n" +
		"TOPIC          orders         LITERAL  User:alice  *     READ       ALLOW       -\n" +
		"TOPIC          orders         LITERAL  User:bob    *     DESCRIBE   ALLOW       -\n" +
		"TOPIC          orders         LITERAL  User:bob    *     READ       ALLOW       -\n"
	if out != want {
		t.Fatalf("acl create:\n%s\nwant:\n%s", out, want)
	}
	c.ok("", "acl", "create", "--deny-principal", "User:mallory", "--deny-host", "10.0.0.9", "--cluster")
	c.ok("", "acl", "create", "--allow-principal", "User:etl", "--operation", "Write", "--topic", "raw.", "--resource-pattern-type", "prefixed")
	c.ok("", "acl", "create", "--allow-principal", "User:app", "--allow-host", "10.0.0.1", "--operation", "Write", "--transactional-id", "tx-1")

	want = "" +
		"RESOURCE-TYPE     RESOURCE-NAME  PATTERN   PRINCIPAL     HOST      OPERATION  PERMISSION\n" +
		"CLUSTER           kafka-cluster  LITERAL   User:mallory  10.0.0.9  ALL        DENY\n" +
		"GROUP             billing        LITERAL   User:alice    *         DESCRIBE   ALLOW\n" +
		"GROUP             billing        LITERAL   User:alice    *         READ       ALLOW\n" +
		"GROUP             billing        LITERAL   User:bob      *         DESCRIBE   ALLOW\n" +
		"GROUP             billing        LITERAL   User:bob      *         READ       ALLOW\n" +
		"TOPIC             orders         LITERAL   User:alice    *         DESCRIBE   ALLOW\n" +
		"TOPIC             orders         LITERAL   User:alice    *         READ       ALLOW\n" +
		"TOPIC             orders         LITERAL   User:bob      *         DESCRIBE   ALLOW\n" +
		"TOPIC             orders         LITERAL   User:bob      *         READ       ALLOW\n" +
		"TOPIC             raw.           PREFIXED  User:etl      *         WRITE      ALLOW\n" +
		"TRANSACTIONAL_ID  tx-1           LITERAL   User:app      10.0.0.1  WRITE      ALLOW\n"
	if out := c.ok("", "acl", "list"); out != want {
		t.Fatalf("acl list:\n%s\nwant:\n%s", out, want)
	}
	want = "" +
		"RESOURCE-TYPE  RESOURCE-NAME  PATTERN  PRINCIPAL   HOST  OPERATION  PERMISSION\n" +
		"TOPIC          orders         LITERAL  User:alice  *     DESCRIBE   ALLOW\n" +
		"TOPIC          orders         LITERAL  User:alice  *     READ       ALLOW\n"
	if out := c.ok("", "acl", "list", "--topic", "orders", "--principal", "User:alice"); out != want {
		t.Fatalf("acl list --topic orders --principal User:alice:\n%s\nwant:\n%s", out, want)
	}
	// An ACL that several filters match is listed once.
	if out := c.ok("", "acl", "list", "--topic", "orders", "--topic", "orders", "--principal", "User:alice"); out != want {
		t.Fatalf("acl list --topic orders twice:\n%s\nwant:\n%s", out, want)
	}
	// A resource is matched literally unless told otherwise.
	if out := c.ok("", "acl", "list", "--topic", "raw."); out != "RESOURCE-TYPE  RESOURCE-NAME  PATTERN  PRINCIPAL  HOST  OPERATION  PERMISSION\n" {
		t.Fatalf("acl list --topic raw.:\n%s", out)
	}
	if out := c.ok("", "acl", "list", "--topic", "raw.", "--resource-pattern-type", "prefixed"); !strings.Contains(out, "User:etl") {
		t.Fatalf("acl list --topic raw. --resource-pattern-type prefixed:\n%s", out)
	}
	wantJSON := `[
  {
    "resource_type": "CLUSTER",
    "resource_name": "kafka-cluster",
    "pattern_type": "LITERAL",
    "principal": "User:mallory",
    "host": "10.0.0.9",
    "operation": "ALL",
    "permission": "DENY"
  }
]
`
	if out := c.ok("", "acl", "list", "--principal", "User:mallory", "--json"); out != wantJSON {
		t.Fatalf("acl list --json:\n%s", out)
	}

	want = "" +
		"RESOURCE-TYPE  RESOURCE-NAME  PATTERN  PRINCIPAL  HOST  OPERATION  PERMISSION  ERROR\n" +
		"TOPIC          orders         LITERAL  User:bob   *     READ       ALLOW       -\n"
	if out := c.ok("", "acl", "delete", "--topic", "orders", "--allow-principal", "User:bob", "--operation", "read"); out != want {
		t.Fatalf("acl delete one:\n%s\nwant:\n%s", out, want)
	}
	if out := c.ok("", "acl", "delete", "--group", "billing", "--cluster"); strings.Count(out, "\n") != 6 {
		t.Fatalf("acl delete --group billing --cluster deleted other than 5:\n%s", out)
	}
	if out := c.ok("", "acl", "delete", "--topic", "nothing-here"); out != "RESOURCE-TYPE  RESOURCE-NAME  PATTERN  PRINCIPAL  HOST  OPERATION  PERMISSION  ERROR\n" {
		t.Fatalf("acl delete of nothing:\n%s", out)
	}
	want = "" +
		"RESOURCE-TYPE     RESOURCE-NAME  PATTERN   PRINCIPAL   HOST      OPERATION  PERMISSION\n" +
		"TOPIC             orders         LITERAL   User:alice  *         DESCRIBE   ALLOW\n" +
		"TOPIC             orders         LITERAL   User:alice  *         READ       ALLOW\n" +
		"TOPIC             orders         LITERAL   User:bob    *         DESCRIBE   ALLOW\n" +
		"TOPIC             raw.           PREFIXED  User:etl    *         WRITE      ALLOW\n" +
		"TRANSACTIONAL_ID  tx-1           LITERAL   User:app    10.0.0.1  WRITE      ALLOW\n"
	if out := c.ok("", "acl", "list"); out != want {
		t.Fatalf("acl list after deleting:\n%s\nwant:\n%s", out, want)
	}
}

// A broker without an authorizer refuses every binding and filter; each
// row says why, in the broker's words.
func TestACLWithoutAuthorizer(t *testing.T) {
	b := newSamsaBroker(t)
	r := b.run("", "acl", "create", "--allow-principal", "User:alice", "--operation", "Read", "--operation", "Write", "--topic", "orders")
	want := "" +
		"RESOURCE-TYPE  RESOURCE-NAME  PATTERN  PRINCIPAL   HOST  OPERATION  PERMISSION  ERROR\n" +
		"TOPIC          orders         LITERAL  User:alice  *     READ       ALLOW       security disabled: No Authorizer is configured.\n" +
		"TOPIC          orders         LITERAL  User:alice  *     WRITE      ALLOW       security disabled: No Authorizer is configured.\n"
	if r.stdout != want || r.err == nil || r.err.Error() != "2 of 2 ACLs were not created (see ERROR)" {
		t.Fatalf("acl create: %v\n%s\nwant:\n%s", r.err, r.stdout, want)
	}
	b.fails("cannot list ACLs: security disabled: No Authorizer is configured on the broker", "acl", "list")
	r = b.run("", "acl", "delete", "--topic", "orders", "--principal", "User:alice")
	if r.err == nil || r.err.Error() != "cannot delete ACLs: security disabled: No Authorizer is configured." || r.stdout != "" {
		t.Fatalf("acl delete: %v\n%s", r.err, r.stdout)
	}
}

func TestACLFlagErrors(t *testing.T) {
	c := newTestCluster(t)
	for _, tc := range []struct {
		want string
		args []string
	}{
		{"give the principals: --allow-principal or --deny-principal", []string{"create", "--topic", "t"}},
		{"give a resource: --topic, --group, --cluster or --transactional-id", []string{"create", "--allow-principal", "User:a"}},
		{`invalid --allow-principal "alice": want Type:Name, e.g. User:alice`, []string{"create", "--allow-principal", "alice", "--topic", "t"}},
		{`invalid --principal "User:": want Type:Name`, []string{"list", "--principal", "User:"}},
		{`invalid --operation "Fly": want Read, Write`, []string{"create", "--allow-principal", "User:a", "--operation", "Fly", "--topic", "t"}},
		{`invalid --operation "Any"`, []string{"create", "--allow-principal", "User:a", "--operation", "Any", "--topic", "t"}},
		{"--operation CLUSTER_ACTION does not apply to a topic: it takes READ, WRITE, CREATE, DESCRIBE, DELETE, ALTER, DESCRIBE_CONFIGS, ALTER_CONFIGS or ALL",
			[]string{"create", "--allow-principal", "User:a", "--operation", "ClusterAction", "--topic", "t"}},
		{"--operation READ does not apply to a transactional_id: it takes DESCRIBE, WRITE or ALL",
			[]string{"create", "--allow-principal", "User:a", "--operation", "Read", "--transactional-id", "x"}},
		{`invalid --resource-pattern-type "match": want literal or prefixed`,
			[]string{"create", "--allow-principal", "User:a", "--topic", "t", "--resource-pattern-type", "match"}},
		{"--allow-host needs the principals it is for: --allow-principal",
			[]string{"create", "--deny-principal", "User:a", "--allow-host", "10.0.0.1", "--topic", "t"}},
		{"give the resources whose ACLs to delete", []string{"delete", "--principal", "User:a"}},
		{"--deny-host needs the principals it is for", []string{"delete", "--topic", "t", "--deny-host", "h"}},
		{`invalid --resource-pattern-type "regex": want literal, prefixed, match or any`, []string{"list", "--resource-pattern-type", "regex"}},
		{`unknown command "lst" for "samsa acl"; did you mean list?`, []string{"lst"}},
	} {
		c.fails(tc.want, append([]string{"acl"}, tc.args...)...)
	}
}

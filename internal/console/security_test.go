package console

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/devcluster"
	"github.com/samsa-io/samsa/internal/httpauth"
)

var securitySASLRE = regexp.MustCompile(`SASL_PLAINTEXT://[^ ,]* \(bound ([0-9.]+:[0-9]+)\)`)

// TestSecurityPage on a broker with Kafka's StandardAuthorizer, the
// console's anonymous principal a super user, and a SCRAM listener: each
// action of the three tabs changes the cluster as an independent client
// sees it; bad input is a 400 that says why and changes nothing; a
// deletion asks first.
func TestSecurityPage(t *testing.T) {
	addr, serve := devcluster.StartTestBroker(t,
		"--listeners", "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
		"--override", "listener.name.sasl_plaintext.sasl.enabled.mechanisms=SCRAM-SHA-256,SCRAM-SHA-512",
		"--override", "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"--override", "super.users=User:ANONYMOUS")
	m := securitySASLRE.FindStringSubmatch(serve.Tail())
	if m == nil {
		t.Fatalf("no SASL listener in the broker's log:\n%s", serve.Tail())
	}
	saslAddr := m[1]
	tc := startConsoleOn(t, addr, Config{})

	t.Run("acls", func(t *testing.T) {
		aclCount := func() int {
			t.Helper()
			res, err := tc.Admin.DescribeACLs(ctx(t), kadm.NewACLs().AnyResource().ResourcePatternType(kadm.ACLPatternAny).
				Operations(kadm.OpAny).Allow().AllowHosts().Deny().DenyHosts())
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, r := range res {
				if r.Err != nil {
					t.Fatal(r.Err)
				}
				n += len(r.Described)
			}
			return n
		}
		if st, body := tc.get("/security"); st != 200 || !strings.Contains(body, `id="acls-empty"`) {
			t.Fatalf("no ACLs yet: status %d:\n%s", st, body)
		}
		acl := url.Values{"principal": {"User:alice"}, "host": {"*"}, "type": {"TOPIC"}, "name": {"orders"}, "pattern": {"LITERAL"},
			"operation": {"READ"}, "permission": {"ALLOW"}}
		if st, body, loc := tc.post("/security/acls/create", acl); st != http.StatusSeeOther || !strings.HasPrefix(loc, "/security/acls?done=") {
			t.Fatalf("create: status %d to %q:\n%s", st, loc, body)
		}
		pre := url.Values{"principal": {"User:etl"}, "type": {"topic"}, "name": {"raw."}, "pattern": {"PREFIXED"}, "operation": {"write"}, "permission": {"DENY"}}
		if st, body, _ := tc.post("/security/acls/create", pre); st != http.StatusSeeOther {
			t.Fatalf("create prefixed: status %d:\n%s", st, body)
		}
		// bob's differs from alice's in the principal only: deleting one
		// must leave the other.
		bob := url.Values{}
		for k, v := range acl {
			bob[k] = v
		}
		bob.Set("principal", "User:bob")
		if st, body, _ := tc.post("/security/acls/create", bob); st != http.StatusSeeOther {
			t.Fatalf("create bob's: status %d:\n%s", st, body)
		}
		res, err := tc.Admin.DescribeACLs(ctx(t), kadm.NewACLs().Topics("orders").Allow("User:alice").AllowHosts("*").Operations(kadm.OpRead))
		if err != nil || len(res) != 1 || res[0].Err != nil || len(res[0].Described) != 1 {
			t.Fatalf("DescribeACLs after create: %v %+v", err, res)
		}
		if n := aclCount(); n != 3 {
			t.Fatalf("%d ACLs, want 3", n)
		}
		_, body := tc.get("/security/acls")
		wantContains(t, body, `id="acls-table"`, "User:alice", "orders", "User:etl", "raw.", "PREFIXED", ">DENY<", "3 ACLs")
		_, body = tc.get("/security/acls?principal=User:alice&view=principal")
		wantContains(t, body, "User:alice", "orders", "1 ACL.")
		if strings.Contains(body, "User:etl") {
			t.Errorf("the filter by principal shows User:etl:\n%s", body)
		}
		// MATCH finds the prefixed ACL that applies to a topic.
		_, body = tc.get("/security/acls?type=TOPIC&name=raw.events&pattern=MATCH")
		wantContains(t, body, "User:etl", "1 ACL.")

		for name, c := range map[string]struct {
			field, value, want string
		}{
			"unknown operation":  {"operation", "FLY", `unknown operation &#34;FLY&#34;`},
			"empty principal":    {"principal", "", "the principal is empty"},
			"bare principal":     {"principal", "alice", "is not Type:name"},
			"filter as type":     {"type", "ANY", "unknown resource type"},
			"no name":            {"name", "", "the resource name is empty"},
			"unknown permission": {"permission", "MAYBE", "unknown permission"},
		} {
			bad := url.Values{}
			for k, v := range acl {
				bad[k] = v
			}
			bad.Set("name", "other")
			bad.Set(c.field, c.value)
			st, body, _ := tc.post("/security/acls/create", bad)
			if st != http.StatusBadRequest || !strings.Contains(body, c.want) {
				t.Errorf("%s: status %d, want 400 with %q:\n%s", name, st, c.want, body)
			}
		}
		if n := aclCount(); n != 3 {
			t.Fatalf("bad input changed the ACLs: %d, want 3", n)
		}

		// A deletion asks first; only the confirmed one deletes, and only
		// the ACL named.
		st, body, _ := tc.post("/security/acls/delete", acl)
		if st != 200 || !strings.Contains(body, `id="security-confirm"`) || !strings.Contains(body, "Delete the ACL User:alice ALLOW READ on TOPIC orders") {
			t.Fatalf("delete without confirm: status %d:\n%s", st, body)
		}
		if n := aclCount(); n != 3 {
			t.Fatalf("an unconfirmed delete deleted: %d ACLs", n)
		}
		acl.Set("confirm", "yes")
		if st, body, loc := tc.post("/security/acls/delete", acl); st != http.StatusSeeOther || !strings.Contains(loc, "Deleted") {
			t.Fatalf("delete: status %d to %q:\n%s", st, loc, body)
		}
		res, err = tc.Admin.DescribeACLs(ctx(t), kadm.NewACLs().Topics("orders").Allow("User:alice").AllowHosts("*").Operations(kadm.OpRead))
		if err != nil || len(res) != 1 || len(res[0].Described) != 0 {
			t.Fatalf("DescribeACLs after delete: %v %+v", err, res)
		}
		if n := aclCount(); n != 2 {
			t.Fatalf("%d ACLs after deleting one of 3", n)
		}

		// Long lists come a page at a time, the filter kept in the links.
		var topics []string
		for i := range 150 {
			topics = append(topics, fmt.Sprintf("bulk-%03d", i))
		}
		bulk := kadm.NewACLs().Topics(topics...).Allow("User:bulk").AllowHosts("*").Operations(kadm.OpRead)
		if res, err := tc.Admin.CreateACLs(ctx(t), bulk); err != nil || res[0].Err != nil {
			t.Fatalf("CreateACLs: %v %+v", err, res)
		}
		_, body = tc.get("/security/acls?principal=User:bulk")
		wantContains(t, body, "150 ACLs, page 1 of 2", "bulk-000", "bulk-099", `href="/security/acls?page=2&amp;principal=User%3Abulk" rel="next"`)
		if strings.Contains(body, "bulk-100") {
			t.Errorf("page 1 shows the 101st ACL")
		}
		_, body = tc.get("/security/acls?principal=User:bulk&page=2")
		wantContains(t, body, "page 2 of 2", "bulk-100", "bulk-149", `rel="prev"`)
		if strings.Contains(body, "bulk-099") || strings.Contains(body, `rel="next"`) {
			t.Errorf("page 2 shows page 1's ACLs or a next page")
		}
		if _, err := tc.Admin.DeleteACLs(ctx(t), bulk); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("users", func(t *testing.T) {
		login, err := httpauth.KafkaLogin([]kgo.Opt{kgo.SeedBrokers(saslAddr)}, "SCRAM-SHA-512", 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if st, body := tc.get("/security/users"); st != 200 || !strings.Contains(body, `id="users-empty"`) {
			t.Fatalf("no users yet: status %d:\n%s", st, body)
		}
		const pw = "s3cret-Pa55"
		form := url.Values{"user": {"alice"}, "mechanism": {"SCRAM-SHA-512"}, "iterations": {"4096"}, "password": {pw}}
		if st, body, _ := tc.post("/security/users/upsert", form); st != http.StatusSeeOther {
			t.Fatalf("upsert: status %d:\n%s", st, body)
		}
		users, err := tc.Admin.DescribeUserSCRAMs(ctx(t))
		if err != nil || len(users["alice"].CredInfos) != 1 || users["alice"].CredInfos[0].Mechanism != kadm.ScramSha512 || users["alice"].CredInfos[0].Iterations != 4096 {
			t.Fatalf("DescribeUserSCRAMs: %v %+v", err, users)
		}
		if err := login(ctx(t), "alice", pw); err != nil {
			t.Fatalf("SCRAM login with the new password: %v", err)
		}
		if err := login(ctx(t), "alice", "wrong"); !errors.Is(err, httpauth.ErrLoginFailed) {
			t.Fatalf("SCRAM login with a wrong password: %v", err)
		}
		_, body := tc.get("/security/users")
		wantContains(t, body, `id="users-table"`, "alice", "SCRAM-SHA-512", "4096", `type="password"`)
		if strings.Contains(body, pw) {
			t.Fatalf("the page shows the password:\n%s", body)
		}

		for name, c := range map[string]struct{ field, value, want string }{
			"few iterations":    {"iterations", "100", "iterations 100: a SCRAM credential needs 4096 to 16384"},
			"unknown mechanism": {"mechanism", "SCRAM-MD5", "unknown mechanism"},
			"empty user":        {"user", "", "the user is empty"},
			"empty password":    {"password", "", "the password is empty"},
		} {
			bad := url.Values{"user": {"bob"}, "mechanism": {"SCRAM-SHA-256"}, "iterations": {"4096"}, "password": {"x"}}
			bad.Set(c.field, c.value)
			st, body, _ := tc.post("/security/users/upsert", bad)
			if st != http.StatusBadRequest || !strings.Contains(body, c.want) {
				t.Errorf("%s: status %d, want 400 with %q:\n%s", name, st, c.want, body)
			}
		}
		if users, _ := tc.Admin.DescribeUserSCRAMs(ctx(t)); len(users) != 1 {
			t.Fatalf("bad input changed the users: %+v", users)
		}

		del := url.Values{"user": {"alice"}, "mechanism": {"SCRAM-SHA-512"}}
		if st, body, _ := tc.post("/security/users/delete", del); st != 200 || !strings.Contains(body, `id="security-confirm"`) {
			t.Fatalf("delete without confirm: status %d:\n%s", st, body)
		}
		del.Set("confirm", "yes")
		if st, body, _ := tc.post("/security/users/delete", del); st != http.StatusSeeOther {
			t.Fatalf("delete: status %d:\n%s", st, body)
		}
		if users, err := tc.Admin.DescribeUserSCRAMs(ctx(t)); err != nil || len(users) != 0 {
			t.Fatalf("after delete: %v %+v", err, users)
		}
		if err := login(ctx(t), "alice", pw); !errors.Is(err, httpauth.ErrLoginFailed) {
			t.Fatalf("SCRAM login after the delete: %v", err)
		}
	})

	t.Run("quotas", func(t *testing.T) {
		quotas := func() map[string]string {
			t.Helper()
			d, err := tc.Admin.DescribeClientQuotas(ctx(t), false, nil)
			if err != nil {
				t.Fatal(err)
			}
			out := map[string]string{}
			for _, q := range d {
				var ent []string
				for _, e := range q.Entity {
					ent = append(ent, e.String())
				}
				for _, v := range q.Values {
					out[strings.Join(ent, ",")+" "+v.Key+"="+strconv.FormatFloat(v.Value, 'f', -1, 64)] = ""
				}
			}
			return out
		}
		if st, body := tc.get("/security/quotas"); st != 200 || !strings.Contains(body, `id="quotas-empty"`) {
			t.Fatalf("no quotas yet: status %d:\n%s", st, body)
		}
		if st, body, _ := tc.post("/security/quotas/set", url.Values{"user": {"alice"}, "key": {"producer_byte_rate"}, "value": {"1024"}}); st != http.StatusSeeOther {
			t.Fatalf("set: status %d:\n%s", st, body)
		}
		if st, body, _ := tc.post("/security/quotas/set", url.Values{"client_id_default": {"on"}, "key": {"consumer_byte_rate"}, "value": {"2048"}}); st != http.StatusSeeOther {
			t.Fatalf("set default: status %d:\n%s", st, body)
		}
		got := quotas()
		for _, k := range []string{"user=alice producer_byte_rate=1024", "client-id=<default> consumer_byte_rate=2048"} {
			if _, ok := got[k]; !ok || len(got) != 2 {
				t.Fatalf("quotas %v lack %q", got, k)
			}
		}
		_, body := tc.get("/security/quotas")
		wantContains(t, body, `id="quotas-table"`, "user=alice", "client-id=&lt;default&gt;", ">1024<", ">2048<")

		for name, c := range map[string]url.Values{
			"is negative":           {"user": {"bob"}, "key": {"producer_byte_rate"}, "value": {"-5"}},
			"unknown quota":         {"user": {"bob"}, "key": {"fast"}, "value": {"5"}},
			"name the entity":       {"key": {"producer_byte_rate"}, "value": {"5"}},
			"not both":              {"user": {"bob"}, "user_default": {"on"}, "key": {"producer_byte_rate"}, "value": {"5"}},
			"IP quota stands alone": {"user": {"bob"}, "ip": {"10.0.0.1"}, "key": {"connection_creation_rate"}, "value": {"5"}},
			"is not a number":       {"user": {"bob"}, "key": {"producer_byte_rate"}, "value": {"lots"}},
		} {
			st, body, _ := tc.post("/security/quotas/set", c)
			if st != http.StatusBadRequest || !strings.Contains(body, name) {
				t.Errorf("%v: status %d, want 400 with %q:\n%s", c, st, name, body)
			}
		}
		if after := quotas(); len(after) != 2 {
			t.Fatalf("bad input changed the quotas: %v", after)
		}

		rm := url.Values{"user": {"alice"}, "key": {"producer_byte_rate"}}
		if st, body, _ := tc.post("/security/quotas/remove", rm); st != 200 || !strings.Contains(body, `id="security-confirm"`) {
			t.Fatalf("remove without confirm: status %d:\n%s", st, body)
		}
		rm.Set("confirm", "yes")
		if st, body, _ := tc.post("/security/quotas/remove", rm); st != http.StatusSeeOther {
			t.Fatalf("remove: status %d:\n%s", st, body)
		}
		got = quotas()
		if _, ok := got["client-id=<default> consumer_byte_rate=2048"]; len(got) != 1 || !ok {
			t.Fatalf("after removing alice's: %v", got)
		}
	})
}

// TestSecurityWithoutAuthorizer: a broker without an authorizer answers
// SECURITY_DISABLED; the ACL tab says so as a notice, not an error, and
// the other tabs still work.
func TestSecurityWithoutAuthorizer(t *testing.T) {
	tc := startConsole(t, Config{})
	st, body := tc.get("/security")
	if st != 200 || !strings.Contains(body, `id="security-disabled"`) || !strings.Contains(body, "This cluster has no authorizer") {
		t.Fatalf("status %d:\n%s", st, body)
	}
	if strings.Contains(body, `class="error"`) || strings.Contains(body, `id="acl-create"`) {
		t.Fatalf("the page shows an error or offers to create ACLs:\n%s", body)
	}
	for _, p := range []string{"/security/users", "/security/quotas"} {
		if st, body := tc.get(p); st != 200 {
			t.Errorf("%s: status %d:\n%s", p, st, body)
		}
	}
	st, body, _ = tc.post("/security/acls/create", url.Values{"principal": {"User:alice"}, "type": {"TOPIC"}, "name": {"t"},
		"pattern": {"LITERAL"}, "operation": {"READ"}, "permission": {"ALLOW"}})
	if st != http.StatusConflict || !strings.Contains(body, "this cluster has no authorizer") {
		t.Fatalf("create without an authorizer: status %d:\n%s", st, body)
	}
}

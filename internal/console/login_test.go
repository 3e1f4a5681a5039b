package console

import (
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/devcluster"
)

// TestLoginRunsAsTheUser: with LoginMechanism every page asks for a
// login, checked by the cluster; a logged-in user sees and does only what
// the cluster's ACLs let their principal (alice reads alpha, not beta;
// bob neither; neither may create a topic), their password is never in a
// page, and logging out ends the session.
func TestLoginRunsAsTheUser(t *testing.T) {
	const jaas = `org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret" user_bob="bob-secret";`
	addr, serve := devcluster.StartTestBroker(t,
		"--listeners", "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
		"--override", "listener.name.sasl_plaintext.sasl.enabled.mechanisms=PLAIN",
		"--override", "listener.name.sasl_plaintext.plain.sasl.jaas.config="+jaas,
		"--override", "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"--override", "super.users=User:ANONYMOUS")
	m := securitySASLRE.FindStringSubmatch(serve.Tail())
	if m == nil {
		t.Fatalf("no SASL listener in the broker's log:\n%s", serve.Tail())
	}
	// The operator's client (PLAINTEXT is the super user here).
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopics(ctx(t), 1, 1, nil, "alpha", "beta"); err != nil {
		t.Fatal(err)
	}
	res, err := adm.CreateACLs(ctx(t), kadm.NewACLs().Topics("alpha").Allow("User:alice").AllowHosts("*").
		Operations(kadm.OpDescribe, kadm.OpRead, kadm.OpDescribeConfigs).ResourcePatternType(kadm.ACLPatternLiteral))
	if err != nil || res[0].Err != nil {
		t.Fatalf("ACLs: %v %v", err, res)
	}

	c, err := New(Config{ClientOpts: []kgo.Opt{kgo.SeedBrokers(m[1])}, LoginMechanism: "PLAIN"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(c)
	t.Cleanup(func() { srv.Close(); c.Close() })
	browser := func() *testConsole {
		jar, _ := cookiejar.New(nil)
		return &testConsole{t: t, c: c, URL: srv.URL, Broker: addr, Client: cl, Admin: adm,
			browser: &http.Client{Jar: jar, Timeout: 60 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error {
				return http.ErrUseLastResponse
			}}}
	}
	login := func(tc *testConsole, user, password string) (int, string, string) {
		t.Helper()
		_, page := tc.get("/login")
		tok := csrfRE.FindStringSubmatch(page)
		if tok == nil {
			t.Fatalf("no CSRF token on the login page:\n%s", page)
		}
		return tc.post("/login", url.Values{"_csrf": {tok[1]}, "user": {user}, "password": {password}, "next": {"/topics"}})
	}

	alice := browser()
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/topics", nil)
	if st, _, h := alice.do(req); st != http.StatusSeeOther || h.Get("Location") != "/login?next=%2Ftopics" {
		t.Fatalf("a page before logging in: status %d to %q; want 303 to the login page", st, h.Get("Location"))
	}
	if st, body, _ := alice.post("/login", url.Values{"_csrf": {"forged"}, "user": {"alice"}, "password": {"alice-secret"}}); st != http.StatusForbidden {
		t.Fatalf("a login without the page's CSRF token: status %d:\n%s", st, body)
	}
	if st, body, _ := login(alice, "alice", "wrong"); st != http.StatusUnauthorized || !strings.Contains(body, "refused this login") {
		t.Fatalf("a wrong password: status %d:\n%s", st, body)
	}
	if st, body, loc := login(alice, "alice", "alice-secret"); st != http.StatusSeeOther || loc != "/topics" {
		t.Fatalf("alice's login: status %d to %q:\n%s", st, loc, body)
	}
	st, body := alice.get("/topics")
	if st != 200 || !strings.Contains(body, "/topics/alpha") || strings.Contains(body, "/topics/beta") || !strings.Contains(body, "alice") {
		t.Fatalf("alice's topics: status %d; want alpha, not beta, and her name:\n%s", st, body)
	}
	if strings.Contains(body, "alice-secret") {
		t.Fatal("alice's password is in a page")
	}
	if st, body := alice.get("/topics/beta"); st != http.StatusForbidden && st != http.StatusNotFound {
		t.Fatalf("alice on beta: status %d; want 403 or 404:\n%s", st, body)
	}
	if st, body, _ := alice.post("/topics", url.Values{"name": {"gamma"}, "partitions": {"1"}}); st < 400 {
		t.Fatalf("alice creating a topic: status %d; want a refusal:\n%s", st, body)
	}
	if td, err := adm.ListTopics(ctx(t), "gamma"); err != nil || td.Has("gamma") {
		t.Fatalf("gamma exists after alice's refused create (%v)", err)
	}

	bob := browser()
	if st, _, _ := login(bob, "bob", "bob-secret"); st != http.StatusSeeOther {
		t.Fatalf("bob's login: status %d", st)
	}
	if _, body := bob.get("/topics"); strings.Contains(body, "/topics/alpha") || strings.Contains(body, "/topics/beta") {
		t.Fatalf("bob sees topics his principal may not describe:\n%s", body)
	}

	if st, _, loc := alice.post("/logout", nil); st != http.StatusSeeOther || loc != "/login" {
		t.Fatalf("logout: status %d to %q", st, loc)
	}
	req, _ = http.NewRequest(http.MethodGet, srv.URL+"/topics", nil)
	if st, _, _ := alice.do(req); st != http.StatusSeeOther {
		t.Fatalf("a page after logging out: status %d; want the login page again", st)
	}
}

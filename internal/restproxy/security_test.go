package restproxy

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/clock"
	"github.com/samsa-io/samsa/internal/devcluster"
	"github.com/samsa-io/samsa/internal/httpauth"
	"github.com/samsa-io/samsa/internal/keystore/keystoretest"
	"github.com/samsa-io/samsa/internal/task"
)

// serveProxy runs a proxy with its whole service (Serve: TLS, basic auth,
// principals, limits) on a loopback port, and answers its base URL.
func serveProxy(t *testing.T, cfg Config) (*Proxy, string) {
	t.Helper()
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := task.NewGroup(context.Background())
	g.Go(func(ctx context.Context) { _ = p.Serve(ctx, ln) })
	t.Cleanup(func() {
		g.Stop()
		p.Close()
	})
	scheme := "http://"
	if cfg.TLS != nil {
		scheme = "https://"
	}
	return p, scheme + ln.Addr().String()
}

// answer is one HTTP answer: status, the WWW-Authenticate header, the
// body as text.
type answer struct {
	status    int
	challenge string
	body      string
}

// call sends a request with basic credentials when user is not "" (a JSON
// body when body is not "").
func call(t *testing.T, cl *http.Client, method, url, user, pw, body string) answer {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", jsonType)
	}
	if user != "" {
		req.SetBasicAuth(user, pw)
	}
	resp, err := cl.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{resp.StatusCode, resp.Header.Get("WWW-Authenticate"), strings.TrimSpace(string(raw))}
}

// errorCode is the error_code of a Confluent error body (0 if none).
func errorCode(t *testing.T, body string) int {
	t.Helper()
	var e struct {
		Code int `json:"error_code"`
	}
	_ = json.Unmarshal([]byte(body), &e)
	return e.Code
}

// TestRestTLSAndBasicAuth: the API over TLS with a client certificate
// required, and basic authentication against a users file: no or wrong
// credentials 401 with the challenge, a role not allowed 403, a good user
// answered; plain HTTP and a client without a certificate are refused.
func TestRestTLSAndBasicAuth(t *testing.T) {
	addr := startBroker(t)
	ca := keystoretest.NewCA(t)
	pair := func(cn string) tls.Certificate {
		id := ca.Issue(t, keystoretest.Subject(cn), []string{"localhost"}, keystoretest.NewKey(t))
		c, err := tls.X509KeyPair(id.CertPEM, id.KeyPEM)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	serverTLS, _, err := httpauth.ListenerTLS([]tls.Certificate{pair("rest")}, []*x509.Certificate{ca.Cert}, "REQUIRED")
	if err != nil {
		t.Fatal(err)
	}
	users := filepath.Join(t.TempDir(), "users.properties")
	if err := os.WriteFile(users, []byte("alice: secret,developer\ncarol: pw,guest\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	loaded, err := httpauth.LoadUsers(users)
	if err != nil {
		t.Fatal(err)
	}
	_, base := serveProxy(t, Config{ClientOpts: []kgo.Opt{kgo.SeedBrokers(addr)}, TLS: serverTLS,
		Auth: &httpauth.Auth{Realm: "KafkaRest", Roles: []string{"developer"}, Users: loaded}})

	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	withCert := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
		RootCAs: pool, Certificates: []tls.Certificate{pair("client")}, ServerName: "localhost", MinVersion: tls.VersionTLS12}}}

	got := call(t, withCert, "GET", base+"/v3/clusters", "", "", "")
	if got.status != 401 || got.challenge != `Basic realm="KafkaRest"` || got.body != `{"error_code":401,"message":"Unauthorized"}` {
		t.Errorf("no credentials: %+v", got)
	}
	if got = call(t, withCert, "GET", base+"/v3/clusters", "alice", "wrong", ""); got.status != 401 {
		t.Errorf("wrong password: %+v", got)
	}
	if got = call(t, withCert, "GET", base+"/v3/clusters", "carol", "pw", ""); got.status != 403 || got.body != `{"error_code":403,"message":"Forbidden"}` {
		t.Errorf("role not allowed: %+v", got)
	}
	if got = call(t, withCert, "GET", base+"/v3/clusters", "alice", "secret", ""); got.status != 200 || !strings.Contains(got.body, `"kind":"KafkaClusterList"`) {
		t.Errorf("alice: %+v", got)
	}
	// TLS is required, and so is the client's certificate.
	plain := &http.Client{Timeout: 10 * time.Second}
	if resp, err := plain.Get("http" + strings.TrimPrefix(base, "https") + "/v3/clusters"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == 200 {
			t.Error("plain HTTP was answered 200 on the TLS listener")
		}
	}
	noCert := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
		RootCAs: pool, ServerName: "localhost", MinVersion: tls.VersionTLS12}}}
	if resp, err := noCert.Get(base + "/v3/clusters"); err == nil {
		resp.Body.Close()
		t.Errorf("a client without a certificate was answered %d", resp.StatusCode)
	}
}

// saslUsersJAAS declares the PLAIN users of the SASL listener.
const saslUsersJAAS = `org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret" user_bob="bob-secret" user_carol="carol-secret";`

var saslListenerRE = regexp.MustCompile(`SASL_PLAINTEXT://[^ ,]* \(bound ([0-9.]+:[0-9]+)\)`)

// startSASLBroker starts a broker with StandardAuthorizer, a PLAINTEXT
// listener (anonymous, a super user: the test's admin) and a
// SASL_PLAINTEXT one with PLAIN users alice, bob and carol; it answers
// both addresses.
func startSASLBroker(t *testing.T) (plain, sasl string) {
	t.Helper()
	bin, err := devcluster.BuildOnce(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	serve, found, err := devcluster.StartServe(ctx, bin, []string{
		"--override", "samsa.http.listener=", "--override", "samsa.schema.registry.listener=", "--override", "samsa.rest.listener=",
		"--listeners", "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0", "--log.dirs", filepath.Join(t.TempDir(), "data"),
		"--override", "listener.name.sasl_plaintext.sasl.enabled.mechanisms=PLAIN",
		"--override", "listener.name.sasl_plaintext.plain.sasl.jaas.config=" + saslUsersJAAS,
		"--override", "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"--override", "super.users=User:ANONYMOUS",
	}, brokerServingRE)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		serve.Kill()
		if t.Failed() {
			t.Logf("broker log (last lines):\n%s", serve.Tail())
		}
	})
	p, s := listenerRE.FindStringSubmatch(found[0][0]), saslListenerRE.FindStringSubmatch(found[0][0])
	if p == nil || s == nil {
		t.Fatalf("no PLAINTEXT or SASL_PLAINTEXT listener in %q", found[0][0])
	}
	return p[1], s[1]
}

// saslCluster is a SASL broker and its super user's admin client.
type saslCluster struct {
	plain, sasl string
	admin       *kadm.Client
}

func newSASLCluster(t *testing.T) saslCluster {
	t.Helper()
	plain, sasl := startSASLBroker(t)
	cl, err := kgo.NewClient(kgo.SeedBrokers(plain))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return saslCluster{plain: plain, sasl: sasl, admin: kadm.NewClient(cl)}
}

// proxy is a proxy whose users are the broker's SASL principals, each
// request run with a client logged in as its user.
func (sc saslCluster) proxy(t *testing.T, cfg Config) (*Proxy, string) {
	t.Helper()
	login, err := httpauth.KafkaLogin([]kgo.Opt{kgo.SeedBrokers(sc.sasl)}, "PLAIN", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ClientOpts = []kgo.Opt{kgo.SeedBrokers(sc.plain)}
	cfg.Auth = &httpauth.Auth{Realm: "KafkaRest", Login: login}
	cfg.PrincipalMechanism = "PLAIN"
	cfg.PrincipalClientOpts = []kgo.Opt{kgo.SeedBrokers(sc.sasl)}
	return serveProxy(t, cfg)
}

// clusterPath is the v3 path of the proxy's cluster, as user reads it.
func clusterPath(t *testing.T, base, user, pw string) string {
	t.Helper()
	got := call(t, &http.Client{Timeout: 30 * time.Second}, "GET", base+"/v3/clusters", user, pw, "")
	var list struct {
		Data []struct {
			ClusterID string `json:"cluster_id"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(got.body), &list); err != nil || got.status != 200 || len(list.Data) != 1 {
		t.Fatalf("%s GET /v3/clusters: %+v (%v)", user, got, err)
	}
	return base + "/v3/clusters/" + list.Data[0].ClusterID
}

// allow grants principal ops on topic (ACLs made by the super user).
func allow(t *testing.T, admin *kadm.Client, principal, topic string, ops ...kadm.ACLOperation) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	b := kadm.NewACLs().Allow("User:" + principal).AllowHosts().Topics(topic).ResourcePatternType(kadm.ACLPatternLiteral).Operations(ops...)
	results, err := admin.CreateACLs(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		if r.Err != nil {
			t.Fatalf("ACL for %s on %s: %v", principal, topic, r.Err)
		}
	}
}

func createTopic(t *testing.T, admin *kadm.Client, names ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	resps, err := admin.CreateTopics(ctx, 1, 1, nil, names...)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range resps {
		if r.Err != nil {
			t.Fatalf("create %s: %v", r.Topic, r.Err)
		}
	}
}

// TestRestPrincipalACLs: two REST users logged in as the cluster's SASL
// principals see what their ACLs let them: alice may write to orders and
// produces to it, bob may only describe it and is refused 403 40301; each
// lists the topics it may describe. A password the cluster refuses is 401.
func TestRestPrincipalACLs(t *testing.T) {
	sc := newSASLCluster(t)
	admin := sc.admin
	p, base := sc.proxy(t, Config{})
	createTopic(t, admin, "orders", "alice-only")
	allow(t, admin, "alice", "orders", kadm.OpWrite, kadm.OpDescribe)
	allow(t, admin, "alice", "alice-only", kadm.OpDescribe)
	allow(t, admin, "bob", "orders", kadm.OpDescribe)

	cl := &http.Client{Timeout: 30 * time.Second}
	topics := clusterPath(t, base, "alice", "alice-secret") + "/topics"
	record := `{"value":{"type":"STRING","data":"hello"}}`

	if got := call(t, cl, "POST", topics+"/orders/records", "alice", "alice-secret", record); got.status != 200 || errorCode(t, got.body) != 200 {
		t.Errorf("alice produce: %+v", got)
	}
	if got := call(t, cl, "POST", topics+"/orders/records", "bob", "bob-secret", record); got.status != 403 || errorCode(t, got.body) != 40301 {
		t.Errorf("bob produce: %+v", got)
	}
	names := func(user, pw string) string {
		got := call(t, cl, "GET", topics, user, pw, "")
		if got.status != 200 {
			t.Fatalf("%s lists topics: %+v", user, got)
		}
		var l struct {
			Data []struct {
				Name string `json:"topic_name"`
			} `json:"data"`
		}
		if err := json.Unmarshal([]byte(got.body), &l); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, d := range l.Data {
			out = append(out, d.Name)
		}
		return strings.Join(out, ",")
	}
	if got := names("alice", "alice-secret"); got != "alice-only,orders" {
		t.Errorf("alice sees topics %q", got)
	}
	if got := names("bob", "bob-secret"); got != "orders" {
		t.Errorf("bob sees topics %q", got)
	}
	if got := call(t, cl, "GET", topics, "bob", "not-bobs", ""); got.status != 401 || got.challenge == "" {
		t.Errorf("a password the cluster refuses: %+v", got)
	}
	if got := call(t, cl, "GET", topics, "", "", ""); got.status != 401 {
		t.Errorf("no credentials: %+v", got)
	}
	// One client per user, kept for the next request.
	if n := p.pool.size(); n != 2 {
		t.Errorf("%d pooled clients after two users' requests, want 2", n)
	}

}

// pooled is the pooled client of user with password, nil when none.
func pooled(p *Proxy, user, password string) *kafkaClient {
	p.pool.mu.Lock()
	defer p.pool.mu.Unlock()
	if pc, ok := p.pool.mu.clients[httpauth.CacheKey(user, password)]; ok {
		return pc.kc
	}
	return nil
}

// closed reports whether a Kafka client was closed.
func closed(t *testing.T, kc *kafkaClient) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	return errors.Is(kc.client.Ping(ctx), kgo.ErrClientClosed)
}

// TestRestPrincipalClientPool: a user's client is made once and reused,
// a new password makes a new one, the least recently used idle client
// makes room past the bound, an idle one is closed after the idle time
// (by the proxy's own sweeping too), a full pool of busy clients answers
// 429, and Close closes them all.
func TestRestPrincipalClientPool(t *testing.T) {
	sc := newSASLCluster(t)
	manual := clock.NewManual(time.Unix(1_000_000, 0))
	p, base := sc.proxy(t, Config{MaxPrincipalClients: 2, PrincipalClientIdle: time.Hour, clock: manual})
	cl := &http.Client{Timeout: 30 * time.Second}
	get := func(user, pw string) answer { return call(t, cl, "GET", base+"/v3/clusters", user, pw, "") }

	if got := get("alice", "alice-secret"); got.status != 200 {
		t.Fatalf("alice: %+v", got)
	}
	alice := pooled(p, "alice", "alice-secret")
	if alice == nil || alice.principal != "alice" {
		t.Fatalf("alice's client %+v", alice)
	}
	manual.Advance(time.Second)
	get("alice", "alice-secret")
	if again := pooled(p, "alice", "alice-secret"); again != alice || p.pool.size() != 1 {
		t.Fatalf("alice's second request: client %p (first %p), %d pooled", again, alice, p.pool.size())
	}
	manual.Advance(time.Second)
	if got := get("bob", "bob-secret"); got.status != 200 || p.pool.size() != 2 {
		t.Fatalf("bob: %+v, %d pooled", got, p.pool.size())
	}
	// At the bound: carol's client takes the place of alice's, the least
	// recently used, which is closed.
	manual.Advance(time.Second)
	if got := get("carol", "carol-secret"); got.status != 200 || p.pool.size() != 2 {
		t.Fatalf("carol: %+v, %d pooled", got, p.pool.size())
	}
	if pooled(p, "alice", "alice-secret") != nil || pooled(p, "bob", "bob-secret") == nil || !closed(t, alice) {
		t.Fatal("alice's client was not the one evicted and closed")
	}
	// Every client busy and the pool full: 429.
	_, releaseBob, err := p.pool.get("bob", "bob-secret")
	if err != nil {
		t.Fatal(err)
	}
	_, releaseCarol, err := p.pool.get("carol", "carol-secret")
	if err != nil {
		t.Fatal(err)
	}
	if got := get("alice", "alice-secret"); got.status != 429 || errorCode(t, got.body) != 429 {
		t.Errorf("a full pool of busy clients: %+v", got)
	}
	releaseBob()
	releaseCarol()
	// Idle for less than the idle time: kept; for it: closed.
	carol := pooled(p, "carol", "carol-secret")
	manual.Advance(59 * time.Minute)
	p.pool.sweep()
	if p.pool.size() != 2 {
		t.Fatalf("%d pooled after 59 idle minutes, want 2", p.pool.size())
	}
	manual.Advance(time.Minute)
	p.pool.sweep()
	if p.pool.size() != 0 || !closed(t, carol) {
		t.Fatalf("%d pooled after an idle hour, want 0 (carol's closed: %v)", p.pool.size(), closed(t, carol))
	}

	// The proxy sweeps by itself, on the wall clock.
	p2, base2 := sc.proxy(t, Config{PrincipalClientIdle: 200 * time.Millisecond})
	if got := call(t, cl, "GET", base2+"/v3/clusters", "bob", "bob-secret", ""); got.status != 200 || p2.pool.size() != 1 {
		t.Fatalf("bob on the second proxy: %+v, %d pooled", got, p2.pool.size())
	}
	bob := pooled(p2, "bob", "bob-secret")
	deadline := time.Now().Add(10 * time.Second)
	for p2.pool.size() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("an idle client was kept 10s with an idle time of 200ms")
		}
		time.Sleep(50 * time.Millisecond) // the sweep has no event to wait on
	}
	if !closed(t, bob) {
		t.Error("the swept client was not closed")
	}

	// Close closes every pooled client.
	p3, base3 := sc.proxy(t, Config{})
	call(t, cl, "GET", base3+"/v3/clusters", "alice", "alice-secret", "")
	a3 := pooled(p3, "alice", "alice-secret")
	if a3 == nil {
		t.Fatal("no client for alice on the third proxy")
	}
	p3.Close()
	if !closed(t, a3) {
		t.Error("Close left a pooled client open")
	}
}

// TestRestPrincipalRateLimits: the produce and request rate limits count
// per principal: alice past hers gets 429 while bob is still answered.
func TestRestPrincipalRateLimits(t *testing.T) {
	sc := newSASLCluster(t)
	createTopic(t, sc.admin, "orders")
	allow(t, sc.admin, "alice", "orders", kadm.OpWrite, kadm.OpDescribe)
	allow(t, sc.admin, "bob", "orders", kadm.OpWrite, kadm.OpDescribe)
	// A produce limit of one record per 100 s: the first of each user
	// passes, the second is refused.
	_, base := sc.proxy(t, Config{ProduceRateLimit: 0.01})
	cl := &http.Client{Timeout: 30 * time.Second}
	records := clusterPath(t, base, "alice", "alice-secret") + "/topics/orders/records"
	record := `{"value":{"type":"STRING","data":"hello"}}`
	produce := func(user string) answer { return call(t, cl, "POST", records, user, user+"-secret", record) }
	if got := produce("alice"); got.status != 200 {
		t.Fatalf("alice's first record: %+v", got)
	}
	if got := produce("alice"); got.status != 429 || errorCode(t, got.body) != 429 || !strings.Contains(got.body, "for user alice") {
		t.Errorf("alice's second record: %+v", got)
	}
	if got := produce("bob"); got.status != 200 {
		t.Errorf("bob's first record, alice past her limit: %+v", got)
	}

	// A request limit of one per 100 s.
	_, base2 := sc.proxy(t, Config{RequestRateLimit: 0.01})
	get := func(user string) answer { return call(t, cl, "GET", base2+"/v3/clusters", user, user+"-secret", "") }
	if got := get("alice"); got.status != 200 {
		t.Fatalf("alice's first request: %+v", got)
	}
	if got := get("alice"); got.status != 429 || errorCode(t, got.body) != 429 {
		t.Errorf("alice's second request: %+v", got)
	}
	if got := get("bob"); got.status != 200 {
		t.Errorf("bob's first request, alice past her limit: %+v", got)
	}
}

// TestRestPrincipalConfig: per-principal settings without a Kafka login,
// or a login without its mechanism, are refused rather than ignored.
func TestRestPrincipalConfig(t *testing.T) {
	login := func(context.Context, string, string) error { return nil }
	for name, cfg := range map[string]Config{
		"mechanism without login": {PrincipalMechanism: "PLAIN"},
		"login without mechanism": {Auth: &httpauth.Auth{Login: login}},
		"unknown mechanism":       {Auth: &httpauth.Auth{Login: login}, PrincipalMechanism: "GSSAPI"},
		"negative bound":          {Auth: &httpauth.Auth{Login: login}, PrincipalMechanism: "PLAIN", MaxPrincipalClients: -1},
		"negative request rate":   {RequestRateLimit: -1},
	} {
		if p, err := New(cfg); err == nil {
			p.Close()
			t.Errorf("%s: accepted", name)
		}
	}
}

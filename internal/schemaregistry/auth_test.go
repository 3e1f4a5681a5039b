package schemaregistry

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/samsa-io/samsa/internal/httpauth"
	"github.com/samsa-io/samsa/internal/keystore/keystoretest"
	"github.com/samsa-io/samsa/internal/task"
)

// tlsSetup is a CA, a server certificate for 127.0.0.1 and a client
// certificate, all from the CA.
type tlsSetup struct {
	server, client tls.Certificate
	pool           *x509.CertPool
}

func newTLSSetup(t *testing.T) tlsSetup {
	ca := keystoretest.NewCA(t)
	pair := func(cn string) tls.Certificate {
		id := ca.Issue(t, keystoretest.Subject(cn), []string{"localhost"}, keystoretest.NewKey(t))
		c, err := tls.X509KeyPair(id.CertPEM, id.KeyPEM)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	return tlsSetup{server: pair("registry"), client: pair("client"), pool: pool}
}

// serverTLS requires and verifies client certificates.
func (s tlsSetup) serverTLS() *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{s.server}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: s.pool, MinVersion: tls.VersionTLS12}
}

func (s tlsSetup) clientTLS() *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{s.client}, RootCAs: s.pool, MinVersion: tls.VersionTLS12}
}

// serveRegistry starts a registry with cfg on the broker and serves it
// with Serve (TLS included) on a loopback port; it returns the base URL.
func serveRegistry(t *testing.T, b *testBroker, cfg Config, ln net.Listener) (*Registry, string) {
	t.Helper()
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
	}
	cfg.ClientOpts = []kgo.Opt{kgo.SeedBrokers(b.addr)}
	if cfg.Timeout == 0 {
		cfg.Timeout = 20 * time.Second
	}
	reg, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	if err := reg.Start(ctx); err != nil {
		reg.Close()
		t.Fatal(err)
	}
	g := task.NewGroup(context.Background())
	g.Go(func(ctx context.Context) { _ = reg.Serve(ctx, ln) })
	t.Cleanup(func() {
		g.Stop()
		reg.Close()
	})
	scheme := "http://"
	if cfg.TLS != nil {
		scheme = "https://"
	}
	return reg, scheme + ln.Addr().String()
}

// rawGet is a GET with optional basic credentials through cl.
func rawGet(t *testing.T, cl *http.Client, url, user, pw string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if user != "" {
		req.SetBasicAuth(user, pw)
	}
	resp, err := cl.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, strings.TrimSpace(string(body))
}

// TestBasicAuthAndTLS: the API over TLS with client certificates
// verified, and basic authentication from a users file with roles, driven
// by franz-go's registry client and by plain HTTP requests.
func TestBasicAuthAndTLS(t *testing.T) {
	b := startBroker(t)
	s := newTLSSetup(t)
	users := map[string]httpauth.User{
		"alice": {Password: "secret", Roles: []string{"admin"}},
		"carol": {Password: "pw", Roles: []string{"guest"}},
	}
	_, base := serveRegistry(t, b, Config{Topic: "_schemas", TLS: s.serverTLS(),
		Auth: &httpauth.Auth{Realm: "SchemaRegistry-Props", Roles: []string{"admin", "developer"}, Users: users}}, nil)

	cl, err := sr.NewClient(sr.URLs(base), sr.DialTLSConfig(s.clientTLS()), sr.BasicAuth("alice", "secret"))
	if err != nil {
		t.Fatal(err)
	}
	created, err := cl.CreateSchema(t.Context(), "secure-value", sr.Schema{Schema: s1})
	if err != nil || created.ID != 1 {
		t.Fatalf("create through TLS and basic auth: %+v %v", created, err)
	}
	if got, err := cl.SchemaByID(t.Context(), 1); err != nil || got.Schema != s1 {
		t.Fatalf("by id: %+v %v", got, err)
	}

	var re *sr.ResponseError
	for _, c := range []struct {
		name, user, pw string
		status         int
	}{{"no credentials", "", "", 401}, {"a wrong password", "alice", "nope", 401}, {"an unknown user", "mallory", "secret", 401}, {"a role not allowed", "carol", "pw", 403}} {
		opts := []sr.ClientOpt{sr.URLs(base), sr.DialTLSConfig(s.clientTLS())}
		if c.user != "" {
			opts = append(opts, sr.BasicAuth(c.user, c.pw))
		}
		bad, err := sr.NewClient(opts...)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := bad.Subjects(t.Context()); !errors.As(err, &re) || re.StatusCode != c.status || re.ErrorCode != c.status {
			t.Errorf("%s: %v", c.name, err)
		}
	}

	// The 401 as Confluent's Jetty answers it: the challenge header and
	// the error body.
	httpCl := &http.Client{Transport: &http.Transport{TLSClientConfig: s.clientTLS()}}
	resp, got := rawGet(t, httpCl, base+"/subjects", "", "")
	if resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") != `Basic realm="SchemaRegistry-Props"` || got != errBody(401, "Unauthorized") {
		t.Errorf("no credentials: %d %q %s", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), got)
	}
	if resp, got := rawGet(t, httpCl, base+"/subjects", "alice", "secret"); resp.StatusCode != 200 || got != `["secure-value"]` {
		t.Errorf("alice: %d %s", resp.StatusCode, got)
	}

	// A client without a certificate does not get through the handshake.
	noCert := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: s.pool, MinVersion: tls.VersionTLS12}}}
	req, _ := http.NewRequestWithContext(t.Context(), "GET", base+"/subjects", nil)
	req.SetBasicAuth("alice", "secret")
	if resp, err := noCert.Do(req); err == nil {
		resp.Body.Close()
		t.Errorf("a client without a certificate got %d", resp.StatusCode)
	}
}

// TestForwardingKeepsCredentials: a write through a secondary reaches the
// primary over TLS with the caller's Authorization header, which the
// primary checks again: a caller the primary refuses is refused.
func TestForwardingKeepsCredentials(t *testing.T) {
	b := startBroker(t)
	s := newTLSSetup(t)
	users := map[string]httpauth.User{"alice": {Password: "secret"}}
	start := func() (*Registry, string) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		return serveRegistry(t, b, Config{Topic: "_schemas", TLS: s.serverTLS(), ForwardTLS: s.clientTLS(),
			GroupID: "schema-registry", URL: "https://" + ln.Addr().String(),
			Auth: &httpauth.Auth{Realm: "r", Users: users}}, ln)
	}
	primary, primaryURL := start()
	_, secondaryURL := start()
	deadline := time.Now().Add(60 * time.Second)
	for primary.election.current() != primaryURL || !strings.HasPrefix(secondaryURL, "https://") {
		if time.Now().After(deadline) {
			t.Fatalf("primary %q, want %q", primary.election.current(), primaryURL)
		}
		time.Sleep(20 * time.Millisecond) // the election has no event the test can reach from here
	}
	httpCl := &http.Client{Transport: &http.Transport{TLSClientConfig: s.clientTLS()}}
	post := func(user, pw string) (int, string) {
		req, _ := http.NewRequestWithContext(t.Context(), "POST", secondaryURL+"/subjects/fwd-value/versions", strings.NewReader(body(s1)))
		req.Header.Set("Content-Type", contentType)
		req.SetBasicAuth(user, pw)
		resp, err := httpCl.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		got, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, strings.TrimSpace(string(got))
	}
	if status, got := post("alice", "secret"); status != 200 || got != `{"id":1}` {
		t.Fatalf("register through the secondary: %d %s", status, got)
	}
	// The secondary lets bob through only if its own check is skipped; it
	// is not, so the write is refused before it is forwarded.
	if status, got := post("bob", "x"); status != 401 || got != errBody(401, "Unauthorized") {
		t.Fatalf("bob through the secondary: %d %s", status, got)
	}
}

// TestKafkaLoginAuth: credentials the file does not hold are checked by a
// SASL/PLAIN login to the broker, and a success is trusted for a while.
func TestKafkaLoginAuth(t *testing.T) {
	b := startBroker(t, saslBrokerArgs("alice", "secret")...)
	if b.saslAddr == "" {
		t.Fatal("the broker has no SASL_PLAINTEXT listener")
	}
	login, err := httpauth.KafkaLogin([]kgo.Opt{kgo.SeedBrokers(b.saslAddr)}, "plain", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	counted := func(ctx context.Context, user, pw string) error {
		calls.Add(1)
		return login(ctx, user, pw)
	}
	_, base := serveRegistry(t, b, Config{Topic: "_schemas", Auth: &httpauth.Auth{Realm: "r", Roles: []string{"*"}, Login: counted}}, nil)
	cl := &http.Client{Timeout: 20 * time.Second}
	for i := range 2 {
		if resp, got := rawGet(t, cl, base+"/subjects", "alice", "secret"); resp.StatusCode != 200 || got != `[]` {
			t.Fatalf("alice, request %d: %d %s", i, resp.StatusCode, got)
		}
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("%d logins for two requests: a success is cached", n)
	}
	if resp, got := rawGet(t, cl, base+"/subjects", "alice", "wrong"); resp.StatusCode != 401 || got != errBody(401, "Unauthorized") {
		t.Errorf("a wrong password: %d %s", resp.StatusCode, got)
	}
	if _, err := httpauth.KafkaLogin(nil, "OAUTHBEARER", 0); err == nil {
		t.Error("OAUTHBEARER was taken for a password check")
	}
}

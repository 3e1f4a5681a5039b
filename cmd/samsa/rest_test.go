package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/keystore/keystoretest"
	"github.com/samsa-io/samsa/internal/task"
)

// runServe runs serve in the test's process on exactly overrides and
// answers the groups of the first log line matching pattern, and a stop
// that ends serve and returns its error.
func runServe(t *testing.T, overrides map[string]string, pattern string) ([]string, func() error) {
	t.Helper()
	logs := dropSink(make(chan string, 1000))
	logger := slog.New(slog.NewTextHandler(logs, nil))
	g := task.NewGroup(context.Background())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	g.Go(func(context.Context) { done <- serve(ctx, "", overrides, false, logger) })
	stop := func() error {
		cancel()
		err := <-done
		done <- err // a second stop (the cleanup) sees it too
		g.Stop()
		return err
	}
	t.Cleanup(func() { _ = stop() })
	re := regexp.MustCompile(pattern)
	for {
		select {
		case line := <-logs:
			if m := re.FindStringSubmatch(line); m != nil {
				return m[1:], stop
			}
		case err := <-done:
			done <- err // for the cleanup's stop
			t.Fatalf("serve stopped: %v", err)
		case <-time.After(30 * time.Second):
			t.Fatalf("serve did not log %s", pattern)
		}
	}
}

// restCall sends a request with basic credentials when user is not "",
// a JSON body when body is not "", and answers status and body.
func restCall(t *testing.T, cl *http.Client, method, url, user, pw, body string) (int, string) {
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
		req.Header.Set("Content-Type", "application/json")
	}
	if user != "" {
		req.SetBasicAuth(user, pw)
	}
	resp, err := cl.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(raw))
}

// restCluster is the v3 path of the one cluster a proxy answers for.
func restCluster(t *testing.T, cl *http.Client, base, user, pw string) string {
	t.Helper()
	code, body := restCall(t, cl, "GET", base+"/v3/clusters", user, pw, "")
	var list struct {
		Data []struct {
			ClusterID string `json:"cluster_id"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(body), &list); err != nil || code != 200 || len(list.Data) != 1 {
		t.Fatalf("GET /v3/clusters: %d %s (%v)", code, body, err)
	}
	return base + "/v3/clusters/" + list.Data[0].ClusterID
}

// TestServeRunsRestProxy: serve runs the REST Proxy by default on
// 127.0.0.1:8082, a client of the broker with the in-process registry as
// its registry; it creates a topic and produces to it, and stops on
// shutdown.
func TestServeRunsRestProxy(t *testing.T) {
	m, stop := runServe(t, map[string]string{"listeners": "PLAINTEXT://127.0.0.1:0", "log.dirs": filepath.Join(t.TempDir(), "data"),
		"samsa.http.listener": "", "samsa.schema.registry.listener": "127.0.0.1:0"},
		`msg="rest proxy serving".* listener=([0-9.:]+) url=(\S+) .*schema_registry=(\S+)`)
	if m[0] != "127.0.0.1:8082" || m[1] != "http://127.0.0.1:8082" || !strings.HasPrefix(m[2], "http://127.0.0.1:") {
		t.Fatalf("rest proxy on %s (%s), registry %s; want 127.0.0.1:8082 and the in-process registry", m[0], m[1], m[2])
	}
	cl := &http.Client{Timeout: 20 * time.Second}
	cluster := restCluster(t, cl, "http://127.0.0.1:8082", "", "")
	if code, body := restCall(t, cl, "POST", cluster+"/topics", "", "", `{"topic_name":"orders","partitions_count":1}`); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	if code, body := restCall(t, cl, "POST", cluster+"/topics/orders/records", "", "", `{"value":{"type":"STRING","data":"hi"}}`); code != 200 || !strings.Contains(body, `"offset":0`) {
		t.Fatalf("produce: %d %s", code, body)
	}
	if err := stop(); err != nil {
		t.Fatalf("serve returned %v", err)
	}
	if resp, err := cl.Get("http://127.0.0.1:8082/v3/clusters"); err == nil {
		resp.Body.Close()
		t.Error("the REST Proxy still answers after serve returned")
	}
}

// restJAAS declares the PLAIN users of the SASL listener.
const restJAAS = `org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret" user_bob="bob-secret";`

// TestServeRestSecurity: the samsa.rest.* configs serve the proxy over
// https (PKCS12 stores, client certificates verified when given) with
// basic authentication: a users-file user runs as the proxy's own
// (super) client and sets up a topic and an ACL; the cluster's principals
// alice and bob run as themselves, so alice may produce and bob is refused
// 403 40301; the request size limit answers 413. Settings that would be
// ignored stop the start.
func TestServeRestSecurity(t *testing.T) {
	dir := t.TempDir()
	ca := keystoretest.NewCA(t)
	key := keystoretest.NewKey(t)
	server := ca.Issue(t, keystoretest.Subject("rest"), []string{"localhost"}, key)
	client := ca.Issue(t, keystoretest.Subject("client"), nil, keystoretest.NewKey(t))
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	overrides := map[string]string{
		"listeners": "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0", "log.dirs": filepath.Join(dir, "data"),
		"listener.name.sasl_plaintext.sasl.enabled.mechanisms": "PLAIN",
		"listener.name.sasl_plaintext.plain.sasl.jaas.config":  restJAAS,
		"authorizer.class.name":                                "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users":                                          "User:ANONYMOUS",
		"samsa.http.listener":                                  "",
		"samsa.schema.registry.listener":                       "",
		"samsa.rest.listener":                                  "127.0.0.1:0",
		"samsa.rest.ssl.keystore.type":                         "PKCS12",
		"samsa.rest.ssl.keystore.location":                     write("rest.p12", keystoretest.PKCS12KeyStore(t, "ks-pw", key, server.Cert, ca.Cert)),
		"samsa.rest.ssl.keystore.password":                     "ks-pw",
		"samsa.rest.ssl.truststore.location":                   write("trust.p12", keystoretest.PKCS12TrustStore(t, "ts-pw", ca.Cert)),
		"samsa.rest.ssl.truststore.password":                   "ts-pw",
		"samsa.rest.ssl.client.authentication":                 "REQUESTED",
		"samsa.rest.authentication.method":                     "BASIC",
		"samsa.rest.authentication.users.file":                 write("users.properties", []byte("ops: ops-pw\n")),
		"samsa.rest.authentication.kafka.sasl.mechanism":       "PLAIN",
		"samsa.rest.max.request.bytes":                         "1000",
		"samsa.rest.principal.clients.max":                     "10",
	}
	m, stop := runServe(t, overrides, `msg="rest proxy serving".* url=(https://[0-9.:]+)`)
	base := m[0]
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	pair, err := tls.X509KeyPair(client.CertPEM, client.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	cl := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
		RootCAs: pool, Certificates: []tls.Certificate{pair}, ServerName: "localhost", MinVersion: tls.VersionTLS12}}}

	if code, body := restCall(t, cl, "GET", base+"/v3/clusters", "", "", ""); code != 401 || body != `{"error_code":401,"message":"Unauthorized"}` {
		t.Fatalf("no credentials: %d %s", code, body)
	}
	cluster := restCluster(t, cl, base, "ops", "ops-pw")
	if code, body := restCall(t, cl, "POST", cluster+"/topics", "ops", "ops-pw", `{"topic_name":"orders","partitions_count":1}`); code != 201 {
		t.Fatalf("ops creates orders: %d %s", code, body)
	}
	for _, op := range []string{"WRITE", "DESCRIBE"} {
		acl := fmt.Sprintf(`{"resource_type":"TOPIC","resource_name":"orders","pattern_type":"LITERAL","principal":"User:alice","host":"*","operation":%q,"permission":"ALLOW"}`, op)
		if code, body := restCall(t, cl, "POST", cluster+"/acls", "ops", "ops-pw", acl); code != 201 {
			t.Fatalf("ops grants alice %s: %d %s", op, code, body)
		}
	}
	record := `{"value":{"type":"STRING","data":"hi"}}`
	if code, body := restCall(t, cl, "POST", cluster+"/topics/orders/records", "alice", "alice-secret", record); code != 200 {
		t.Errorf("alice produces: %d %s", code, body)
	}
	if code, body := restCall(t, cl, "POST", cluster+"/topics/orders/records", "bob", "bob-secret", record); code != 403 || !strings.Contains(body, `"error_code":40301`) {
		t.Errorf("bob produces: %d %s", code, body)
	}
	if code, _ := restCall(t, cl, "GET", base+"/v3/clusters", "bob", "wrong", ""); code != 401 {
		t.Errorf("bob with a wrong password: %d", code)
	}
	big := `{"value":{"type":"STRING","data":"` + strings.Repeat("x", 2000) + `"}}`
	if code, body := restCall(t, cl, "POST", cluster+"/topics/orders/records", "alice", "alice-secret", big); code != 413 {
		t.Errorf("a body past samsa.rest.max.request.bytes: %d %s", code, body)
	}
	if err := stop(); err != nil {
		t.Fatalf("serve returned %v", err)
	}

	// Settings that would be ignored, or cannot work, stop the start,
	// naming themselves.
	for name, change := range map[string]map[string]string{
		"client auth without a key store": {"samsa.rest.ssl.keystore.location": "", "samsa.rest.ssl.keystore.password": "", "samsa.rest.ssl.truststore.location": "", "samsa.rest.ssl.truststore.password": ""},
		"users file with method NONE":     {"samsa.rest.authentication.method": "NONE", "samsa.rest.authentication.kafka.sasl.mechanism": ""},
		"pool bound without a login":      {"samsa.rest.authentication.kafka.sasl.mechanism": ""},
		"a mechanism the listener lacks":  {"samsa.rest.authentication.kafka.sasl.mechanism": "SCRAM-SHA-256"},
	} {
		bad := maps.Clone(overrides)
		bad["log.dirs"] = filepath.Join(t.TempDir(), "data")
		maps.Copy(bad, change)
		err := serve(context.Background(), "", bad, false, slog.New(slog.DiscardHandler))
		if err == nil || !strings.Contains(err.Error(), "samsa.rest.") {
			t.Errorf("%s: serve returned %v", name, err)
		}
	}
}

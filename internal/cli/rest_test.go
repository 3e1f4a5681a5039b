package cli

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/keystore/keystoretest"
)

// TestRestCommand runs "samsa rest" as users do, against a Samsa broker:
// it serves Confluent's v3 API, produces a record a Kafka client reads
// back, refuses a body past --max-body, and ends cleanly on SIGTERM.
func TestRestCommand(t *testing.T) {
	b := newSamsaBroker(t)
	b.ok("", "topic", "create", "rest-cli", "--partitions", "1")
	proc, m := startServing(t, regexp.MustCompile(`rest proxy serving on (http://[0-9.:]+)`),
		"rest", "--bootstrap-server", b.addr, "--listener", "127.0.0.1:0", "--max-body", "200")
	base := m[1]

	var clusters struct {
		Data []struct {
			ClusterID string `json:"cluster_id"`
		} `json:"data"`
	}
	restCall(t, "GET", base+"/v3/clusters", "", 200, &clusters)
	if len(clusters.Data) != 1 || clusters.Data[0].ClusterID == "" {
		t.Fatalf("clusters: %+v", clusters)
	}
	records := base + "/v3/clusters/" + clusters.Data[0].ClusterID + "/topics/rest-cli/records"
	restCall(t, "POST", records, `{"key":{"type":"STRING","data":"k1"},"value":{"type":"STRING","data":"over http"}}`, 200, nil)
	restCall(t, "POST", records, `{"value":{"type":"STRING","data":"`+strings.Repeat("x", 300)+`"}}`, 413, nil)
	if out := b.ok("", "consume", "rest-cli", "--max", "1", "--format", `%k=%v\n`); out != "k1=over http\n" {
		t.Fatalf("consumed:\n%s", out)
	}

	proc.stopCleanly(t)
}

// restCall sends a JSON request, checks the status and decodes the answer
// into out (when not nil).
func restCall(t *testing.T, method, url, body string, status int, out any) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != status {
		t.Fatalf("%s %s: %d %s, want %d", method, url, resp.StatusCode, raw, status)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: %s: %v", method, url, raw, err)
		}
	}
}

func TestRestFlagsRefused(t *testing.T) {
	c := newTestCluster(t)
	c.fails("--max-body 0: must be positive", "rest", "--listener", "127.0.0.1:0", "--max-body", "0")
	c.fails(`schema registry url "ftp://host:1": want http://host:port or https://host:port`,
		"rest", "--listener", "127.0.0.1:0", "--schema-registry-url", "ftp://host:1")
	c.fails("a schema registry user or password without a schema registry url",
		"rest", "--listener", "127.0.0.1:0", "--schema-registry-user", "u")
	c.fails("--request-rate-limit -1: must not be negative", "rest", "--listener", "127.0.0.1:0", "--request-rate-limit", "-1")
	c.fails("--auth-realm needs --auth-users or --auth-kafka-mechanism", "rest", "--listener", "127.0.0.1:0", "--auth-realm", "x")
	c.fails("--listener-tls-cert and --listener-tls-key go together", "rest", "--listener", "127.0.0.1:0", "--listener-tls-cert", "c.pem")
	c.fails("--principal-clients-max and --principal-clients-idle need --auth-kafka-mechanism", "rest", "--listener", "127.0.0.1:0", "--principal-clients-max", "3")
	c.fails("cannot check a user and password", "rest", "--listener", "127.0.0.1:0", "--auth-kafka-mechanism", "OAUTHBEARER")
	c.fails("--consumer-instance-timeout-ms 0: must be positive", "rest", "--listener", "127.0.0.1:0", "--consumer-instance-timeout-ms", "0")
	c.fails(`advertised URL "rest.example:8082"`, "rest", "--listener", "127.0.0.1:0", "--advertised-url", "rest.example:8082")
}

// TestRestCommandTLSAndAuth: samsa rest over https with a client
// certificate required and basic authentication from a users file.
func TestRestCommandTLSAndAuth(t *testing.T) {
	b := newSamsaBroker(t)
	dir := t.TempDir()
	ca := keystoretest.NewCA(t)
	server := ca.Issue(t, keystoretest.Subject("rest"), []string{"localhost"}, keystoretest.NewKey(t))
	client := ca.Issue(t, keystoretest.Subject("client"), nil, keystoretest.NewKey(t))
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	base := startRest(t, b.addr, "--listener-tls-cert", write("cert.pem", server.CertPEM), "--listener-tls-key", write("key.pem", server.KeyPEM),
		"--listener-tls-ca", write("ca.pem", ca.PEM), "--listener-tls-client-auth", "REQUIRED",
		"--auth-users", write("users", []byte("alice: secret\n")))
	if !strings.HasPrefix(base, "https://") {
		t.Fatalf("samsa rest with a key store serves %s", base)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	pair, err := tls.X509KeyPair(client.CertPEM, client.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	cl := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
		RootCAs: pool, Certificates: []tls.Certificate{pair}, ServerName: "localhost", MinVersion: tls.VersionTLS12}}}
	get := func(user, pw string) int {
		req, _ := http.NewRequestWithContext(t.Context(), "GET", base+"/v3/clusters", nil)
		if user != "" {
			req.SetBasicAuth(user, pw)
		}
		resp, err := cl.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := get("", ""); code != 401 {
		t.Errorf("no credentials: %d", code)
	}
	if code := get("alice", "nope"); code != 401 {
		t.Errorf("a wrong password: %d", code)
	}
	if code := get("alice", "secret"); code != 200 {
		t.Errorf("alice: %d", code)
	}
}

// TestRestV2ConsumerFlags: --advertised-url starts a v2 consumer
// instance's base_uri, and --consumer-instance-timeout-ms closes an idle
// instance.
func TestRestV2ConsumerFlags(t *testing.T) {
	b := newSamsaBroker(t)
	base := startRest(t, b.addr, "--advertised-url", "https://rest-1.example:8082", "--consumer-instance-timeout-ms", "1000")
	var created struct {
		InstanceID string `json:"instance_id"`
		BaseURI    string `json:"base_uri"`
	}
	restCall(t, "POST", base+"/consumers/g", `{"name":"c"}`, 200, &created)
	if created.BaseURI != "https://rest-1.example:8082/consumers/g/instances/c" {
		t.Fatalf("base_uri %q", created.BaseURI)
	}
	restCall(t, "GET", base+"/consumers/g/instances/c/subscription", "", 200, nil)
	// Any request would keep the instance alive: wait past its timeout
	// (plus the expiry check's quarter) without one.
	time.Sleep(1600 * time.Millisecond)
	restCall(t, "GET", base+"/consumers/g/instances/c/subscription", "", 404, nil)
}

// startRest runs samsa rest against broker on a free loopback port with
// more flags, and answers the URL its first line names (killed at the
// test's end).
func startRest(t *testing.T, broker string, args ...string) string {
	t.Helper()
	_, m := startServing(t, regexp.MustCompile(`rest proxy serving on (https?://[0-9.:]+)`),
		append([]string{"rest", "--bootstrap-server", broker, "--listener", "127.0.0.1:0"}, args...)...)
	return m[1]
}

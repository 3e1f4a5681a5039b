package cli

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/sr"

	"github.com/samsa-io/samsa/internal/keystore/keystoretest"
	"github.com/samsa-io/samsa/internal/task"
)

// TestRegistryCommand runs "samsa registry" as users do, against a Samsa
// broker: it creates its store topic, serves Confluent's API, and ends
// cleanly on SIGTERM.
func TestRegistryCommand(t *testing.T) {
	b := newSamsaBroker(t)
	proc, m := startServing(t, regexp.MustCompile(`serving on (http://[0-9.:]+) \(store topic _registry_cli\)`),
		"registry", "--bootstrap-server", b.addr, "--listener", "127.0.0.1:0", "--topic", "_registry_cli")
	base := m[1]

	resp, err := http.Post(base+"/subjects/t-value/versions", "application/vnd.schemaregistry.v1+json",
		strings.NewReader(`{"schema":"{\"type\":\"string\"}"}`))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || strings.TrimSpace(string(got)) != `{"id":1}` {
		t.Fatalf("register: %d %s", resp.StatusCode, got)
	}
	if out := b.ok("", "topic", "describe", "_registry_cli"); !strings.Contains(out, "cleanup.policy") || !strings.Contains(out, "compact") {
		t.Errorf("store topic:\n%s", out)
	}

	proc.stopCleanly(t)
}

// startRegistryCommand runs "samsa registry" with args and returns the URL
// its first line names; the process is killed at cleanup.
func startRegistryCommand(t *testing.T, args ...string) string {
	t.Helper()
	proc := exec.Command(samsaBinary(t), append([]string{"registry"}, args...)...)
	stdout, err := proc.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	proc.Stderr = &stderr
	if err := proc.Start(); err != nil {
		t.Fatal(err)
	}
	g := task.NewGroup(context.Background())
	t.Cleanup(g.Stop)
	t.Cleanup(func() {
		proc.Process.Kill()
		proc.Wait()
	})
	first := make(chan string, 1)
	g.Go(func(context.Context) {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		first <- line
		io.Copy(io.Discard, stdout)
	})
	select {
	case line := <-first:
		m := regexp.MustCompile(`serving on (https?://[0-9.:]+) `).FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("first line %q; stderr:\n%s", line, stderr.String())
		}
		return m[1]
	case <-time.After(60 * time.Second):
		t.Fatalf("samsa registry did not start; stderr:\n%s", stderr.String())
	}
	return ""
}

// TestRegistryCommandTLSAndAuth: the --listener-tls-* and --auth-* flags
// serve https with client certificates and basic authentication.
func TestRegistryCommandTLSAndAuth(t *testing.T) {
	b := newSamsaBroker(t)
	dir := t.TempDir()
	ca := keystoretest.NewCA(t)
	server := ca.Issue(t, keystoretest.Subject("registry"), []string{"localhost"}, keystoretest.NewKey(t))
	client := ca.Issue(t, keystoretest.Subject("client"), nil, keystoretest.NewKey(t))
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	base := startRegistryCommand(t, "--bootstrap-server", b.addr, "--listener", "127.0.0.1:0", "--topic", "_registry_tls",
		"--listener-tls-cert", write("cert.pem", server.CertPEM), "--listener-tls-key", write("key.pem", server.KeyPEM),
		"--listener-tls-ca", write("ca.pem", ca.PEM), "--listener-tls-client-auth", "REQUIRED",
		"--auth-users", write("users", []byte("alice: secret\n")))
	if !strings.HasPrefix(base, "https://") {
		t.Fatalf("URL %s", base)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	pair, err := tls.X509KeyPair(client.CertPEM, client.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	srCl, err := sr.NewClient(sr.URLs(base), sr.BasicAuth("alice", "secret"),
		sr.DialTLSConfig(&tls.Config{RootCAs: pool, Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}))
	if err != nil {
		t.Fatal(err)
	}
	if s, err := srCl.CreateSchema(t.Context(), "t-value", sr.Schema{Schema: `"string"`}); err != nil || s.ID != 1 {
		t.Fatalf("register over https with basic auth: %+v %v", s, err)
	}
	bad, err := sr.NewClient(sr.URLs(base), sr.BasicAuth("alice", "nope"),
		sr.DialTLSConfig(&tls.Config{RootCAs: pool, Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}))
	if err != nil {
		t.Fatal(err)
	}
	var re *sr.ResponseError
	if _, err := bad.Subjects(t.Context()); !errors.As(err, &re) || re.StatusCode != 401 {
		t.Errorf("a wrong password: %v", err)
	}
}

// TestRegistryFlagsRefused: listener settings that would have no effect
// are refused before anything starts.
func TestRegistryFlagsRefused(t *testing.T) {
	c := newTestCluster(t)
	c.fails("--auth-realm needs --auth-users or --auth-kafka-mechanism", "registry", "--listener", "127.0.0.1:0", "--auth-realm", "x")
	c.fails("--listener-tls-ca and --listener-tls-client-auth need", "registry", "--listener", "127.0.0.1:0", "--listener-tls-ca", "ca.pem")
	c.fails("--listener-tls-cert and --listener-tls-key go together", "registry", "--listener", "127.0.0.1:0", "--listener-tls-cert", "c.pem")
	c.fails("cannot check a user and password", "registry", "--listener", "127.0.0.1:0", "--auth-kafka-mechanism", "OAUTHBEARER")
}

package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
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

// TestServeRunsRegistry: with samsa.schema.registry.listener set, serve
// runs the Schema Registry against itself, and stops it on shutdown.
func TestServeRunsRegistry(t *testing.T) {
	dir := t.TempDir()
	logs := dropSink(make(chan string, 1000))
	logger := slog.New(slog.NewTextHandler(logs, nil))
	g := task.NewGroup(context.Background())
	defer g.Stop() // after the cancel below, which ends serve
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	g.Go(func(context.Context) {
		done <- serve(ctx, "", map[string]string{"listeners": "PLAINTEXT://127.0.0.1:0", "log.dirs": filepath.Join(dir, "data"),
			"samsa.http.listener": "", "samsa.schema.registry.listener": "127.0.0.1:0", "samsa.rest.listener": ""}, false, logger)
	})
	re := regexp.MustCompile(`msg="schema registry serving".* listener=([0-9.:]+)`)
	addr := ""
	for addr == "" {
		select {
		case line := <-logs:
			if m := re.FindStringSubmatch(line); m != nil {
				addr = m[1]
			}
		case err := <-done:
			t.Fatalf("serve stopped: %v", err)
		case <-time.After(30 * time.Second):
			t.Fatal("the registry did not start")
		}
	}
	resp, err := http.Post("http://"+addr+"/subjects/t-value/versions", "application/json", strings.NewReader(`{"schema":"\"string\""}`))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || strings.TrimSpace(string(got)) != `{"id":1}` {
		t.Fatalf("register: %d %s", resp.StatusCode, got)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve returned %v", err)
	}
	if _, err := http.Get("http://" + addr + "/subjects"); err == nil {
		t.Error("the registry still answers after serve returned")
	}
}

// dropSink passes log lines to a channel, dropping them when it is full:
// serve never blocks on a test that stopped reading.
type dropSink chan string

func (d dropSink) Write(p []byte) (int, error) {
	select {
	case d <- string(p):
	default:
	}
	return len(p), nil
}

// TestServeRegistryTLSAndAuth: the samsa.schema.registry.ssl.* and
// authentication.* configs serve the registry over https with client
// certificates and basic authentication from a users file; settings that
// would have no effect stop the start.
func TestServeRegistryTLSAndAuth(t *testing.T) {
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
	ks := write("registry.pem", append(append([]byte{}, server.KeyPEM...), server.CertPEM...))
	ts := write("ca.pem", ca.PEM)
	users := write("users.properties", []byte("alice: secret,admin\n"))
	overrides := map[string]string{"listeners": "PLAINTEXT://127.0.0.1:0", "log.dirs": filepath.Join(dir, "data"),
		"samsa.http.listener": "", "samsa.schema.registry.listener": "127.0.0.1:0", "samsa.rest.listener": "",
		"samsa.schema.registry.ssl.keystore.location": ks, "samsa.schema.registry.ssl.truststore.location": ts,
		"samsa.schema.registry.ssl.client.authentication": "REQUIRED",
		"samsa.schema.registry.authentication.method":     "BASIC", "samsa.schema.registry.authentication.users.file": users,
		"samsa.schema.registry.authentication.roles": "admin"}

	logs := dropSink(make(chan string, 1000))
	logger := slog.New(slog.NewTextHandler(logs, nil))
	g := task.NewGroup(context.Background())
	defer g.Stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	g.Go(func(context.Context) { done <- serve(ctx, "", overrides, false, logger) })
	re := regexp.MustCompile(`msg="schema registry serving".* url=(https://[0-9.:]+)`)
	url := ""
	for url == "" {
		select {
		case line := <-logs:
			if m := re.FindStringSubmatch(line); m != nil {
				url = m[1]
			}
		case err := <-done:
			t.Fatalf("serve stopped: %v", err)
		case <-time.After(30 * time.Second):
			t.Fatal("the registry did not start")
		}
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	pair, err := tls.X509KeyPair(client.CertPEM, client.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	cl := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}}}
	get := func(user, pw string) (int, string) {
		req, _ := http.NewRequestWithContext(t.Context(), "GET", url+"/subjects", nil)
		if user != "" {
			req.SetBasicAuth(user, pw)
		}
		resp, err := cl.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, strings.TrimSpace(string(body))
	}
	if code, body := get("alice", "secret"); code != 200 || body != "[]" {
		t.Errorf("alice: %d %s", code, body)
	}
	if code, body := get("alice", "wrong"); code != 401 || !strings.Contains(body, `"error_code":401`) {
		t.Errorf("a wrong password: %d %s", code, body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve returned %v", err)
	}

	// Settings that would be ignored stop the start, naming themselves.
	for name, value := range map[string]string{
		"samsa.schema.registry.authentication.method":     "NONE",
		"samsa.schema.registry.ssl.keystore.location":     "",
		"samsa.schema.registry.ssl.client.authentication": "NONE",
	} {
		bad := maps.Clone(overrides)
		bad["log.dirs"] = filepath.Join(t.TempDir(), "data")
		bad[name] = value
		if name == "samsa.schema.registry.ssl.client.authentication" {
			delete(bad, "samsa.schema.registry.ssl.truststore.location")
			bad[name] = "REQUESTED"
		}
		err := serve(context.Background(), "", bad, false, slog.New(slog.DiscardHandler))
		if err == nil || !strings.Contains(err.Error(), "samsa.schema.registry.") {
			t.Errorf("%s=%s: serve returned %v", name, value, err)
		}
	}
}

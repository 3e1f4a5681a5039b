package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// consoleOverrides are a serve of a test: its own ports, the registry on
// (the console shows it), no REST Proxy.
func consoleOverrides(t *testing.T, more map[string]string) map[string]string {
	o := map[string]string{"listeners": "PLAINTEXT://127.0.0.1:0", "log.dirs": filepath.Join(t.TempDir(), "data"),
		"samsa.http.listener": "127.0.0.1:0", "samsa.schema.registry.listener": "127.0.0.1:0", "samsa.rest.listener": ""}
	for k, v := range more {
		o[k] = v
	}
	return o
}

// TestServeRunsConsole: serve runs the console on samsa.console.listener
// with the in-process registry and this broker's HTTP listener wired in
// (the nav shows the registry's page), serves its pages and static
// files, and stops with serve.
func TestServeRunsConsole(t *testing.T) {
	m, stop := runServe(t, consoleOverrides(t, map[string]string{"samsa.console.listener": "127.0.0.1:0"}),
		`msg="console serving".* url=(\S+) cluster=(\S+) .*schema_registry=(\S+)`)
	url, registry := m[0], m[2]
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasPrefix(registry, "http://127.0.0.1:") {
		t.Fatalf("console at %s with registry %s; want loopback URLs", url, registry)
	}
	cl := &http.Client{Timeout: 20 * time.Second}
	get := func(path string) (int, string) {
		resp, err := cl.Get(url + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/static/console.css"); code != 200 || !strings.Contains(body, "--accent") {
		t.Fatalf("stylesheet: %d", code)
	}
	_, body := get("/no-such-page")
	if !strings.Contains(body, `href="/schemas"`) {
		t.Fatalf("the nav lacks the in-process registry's page:\n%s", body)
	}
	if err := stop(); err != nil {
		t.Fatalf("serve returned %v", err)
	}
	if resp, err := cl.Get(url + "/static/console.css"); err == nil {
		resp.Body.Close()
		t.Error("the console still answers after serve returned")
	}
}

// TestServeConsoleListenerTaken: a listener the operator set that is in
// use stops the start; the default one in use (127.0.0.1:8080 is held
// here, by this test or by someone else) turns the console off with a
// warning and serve runs on.
func TestServeConsoleListenerTaken(t *testing.T) {
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	logger := slog.New(slog.DiscardHandler)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	err = serve(ctx, "", consoleOverrides(t, map[string]string{"samsa.console.listener": held.Addr().String()}), false, logger)
	if err == nil || !strings.Contains(err.Error(), "samsa.console.listener "+held.Addr().String()) {
		t.Fatalf("serve with its console's listener taken: %v; want an error naming samsa.console.listener", err)
	}
	if def, err := net.Listen("tcp", "127.0.0.1:8080"); err == nil {
		defer def.Close()
	}
	m, stop := runServe(t, consoleOverrides(t, nil), `msg="(console off): .*address already in use`)
	if m[0] != "console off" {
		t.Fatalf("log: %v", m)
	}
	if err := stop(); err != nil {
		t.Fatalf("serve with the default console listener taken returned %v; want it to run without the console", err)
	}
}

// TestServeConsoleSettingsChecked: console settings with the console off,
// and a login mechanism without a SASL listener, stop the start.
func TestServeConsoleSettingsChecked(t *testing.T) {
	logger := slog.New(slog.DiscardHandler)
	for _, tc := range []struct {
		more map[string]string
		want string
	}{
		{map[string]string{"samsa.console.listener": "", "samsa.console.page.size": "20"}, "samsa.console.page.size is set but samsa.console.listener is empty"},
		{map[string]string{"samsa.console.listener": "127.0.0.1:0", "samsa.console.authentication.kafka.sasl.mechanism": "PLAIN"}, "no SASL_PLAINTEXT listener"},
		{map[string]string{"samsa.console.listener": "127.0.0.1:0", "samsa.console.page.size": "501"}, "samsa.console.page.size"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		err := serve(ctx, "", consoleOverrides(t, tc.more), false, logger)
		cancel()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v; want an error with %q", tc.more, err, tc.want)
		}
		if errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("serve ran with %v", tc.more)
		}
	}
}

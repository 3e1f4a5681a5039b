package consoletest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/devcluster"
)

func TestMain(m *testing.M) {
	code := m.Run()
	devcluster.RemoveBuilt()
	os.Exit(code)
}

// TestConsoleInBrowser drives the console in headless Chromium through
// every page and action on a seeded samsa serve: walk.mjs visits every
// section (status 200, one h1, no browser console errors, axe-core with
// no serious or critical violation, a screenshot), the keyboard
// shortcuts, the themes and the CSRF refusal; actions.mjs does each
// page's actions and checks what they show.
func TestConsoleInBrowser(t *testing.T) {
	requireBrowser(t)
	start := time.Now()
	mods := npmModules(t)
	scripts := scriptDir(t, mods)
	if _, err := devcluster.BuildOnce(t.Context()); err != nil {
		t.Fatal(err)
	}
	built := time.Now()
	p := startPlatform(t)
	up := time.Now()
	s := seedPlatform(t, p)
	t.Logf("npm ci and samsa built in %s, serve up in %s, seeded in %s: console %s, broker %s, registry %s, connect %s",
		built.Sub(start).Round(time.Millisecond), up.Sub(built).Round(time.Millisecond), time.Since(up).Round(time.Millisecond),
		p.Console, p.Broker, p.Registry, p.Connect)

	shots := os.Getenv("SAMSA_CONSOLE_SCREENSHOTS")
	if shots == "" {
		shots = filepath.Join(t.TempDir(), "shots")
	} else if !filepath.IsAbs(shots) {
		// A relative directory is the repository's (docs/console), not
		// this package's, where go test runs.
		shots = filepath.Join(here(), "..", "..", shots)
	}
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	seedJSON, _ := json.Marshal(s)
	env := []string{"CONSOLE_URL=" + p.Console, "LOGIN_URL=" + p.LoginConsole, "REGISTRY_URL=" + p.Registry,
		"CONNECT_URL=" + p.Connect, "SHOTS_DIR=" + shots, "SEED=" + string(seedJSON)}
	runNode(t, scripts, "walk.mjs", 120*time.Second, env...)
	runNode(t, scripts, "actions.mjs", 120*time.Second, env...)
	runNode(t, scripts, "login.mjs", 60*time.Second, env...)
	t.Logf("the browser test took %s in all", time.Since(start).Round(time.Millisecond))
}

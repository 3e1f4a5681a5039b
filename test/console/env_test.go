package consoletest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The browser side's tools: node, npm, and Debian's chromium. A machine
// without them skips the test, unless SAMSA_REQUIRE_BROWSER is set (CI
// installs chromium and sets it, so a missing browser fails there).

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// chromiumPath is the browser Playwright drives: Debian's package, never
// one Playwright downloads (this machine's network refuses that).
func chromiumPath() string { return envOr("SAMSA_CHROMIUM", "/usr/bin/chromium") }

// requireBrowser skips the test when node, npm or chromium is missing,
// unless SAMSA_REQUIRE_BROWSER is set.
func requireBrowser(t *testing.T) {
	t.Helper()
	missing := ""
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing = tool
		}
	}
	if _, err := os.Stat(chromiumPath()); err != nil {
		missing = chromiumPath()
	}
	if missing == "" {
		return
	}
	if os.Getenv("SAMSA_REQUIRE_BROWSER") != "" {
		t.Fatalf("consoletest: %s is needed for the browser test (SAMSA_REQUIRE_BROWSER is set)", missing)
	}
	t.Skipf("consoletest: no %s on this machine (apt-get install chromium, and set SAMSA_REQUIRE_BROWSER=1 to fail instead)", missing)
}

// here is this package's directory: the scripts and the lock file.
func here() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

func compatCache() string {
	home, err := os.UserHomeDir()
	if err != nil {
		home = os.TempDir()
	}
	return envOr("COMPAT_CACHE", filepath.Join(home, ".cache", "samsa-compat"))
}

// npmModules installs package-lock.json's packages with npm ci into
// COMPAT_CACHE/console-npm (outside the repository: no node_modules in
// the tree) unless the lock there is already this one, and returns the
// node_modules directory. A file lock serialises concurrent test binaries.
func npmModules(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(compatCache(), "console-npm")
	mods := filepath.Join(dir, "node_modules")
	lockFile := filepath.Join(here(), "package-lock.json")
	want, err := os.ReadFile(lockFile)
	if err != nil {
		t.Fatal(err)
	}
	stamp := filepath.Join(mods, ".samsa-console-lock")
	current := func() bool {
		got, err := os.ReadFile(stamp)
		return err == nil && bytes.Equal(got, want)
	}
	if current() {
		return mods
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	lock, err := os.OpenFile(dir+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatalf("consoletest: lock %s: %v", lock.Name(), err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	if current() {
		return mods
	}
	for _, f := range []string{"package.json", "package-lock.json"} {
		b, err := os.ReadFile(filepath.Join(here(), f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "ci", "--cache", filepath.Join(compatCache(), "npm"),
		"--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("consoletest: npm ci in %s: %v\n%s", dir, err, out)
	}
	if err := os.WriteFile(stamp, want, 0o644); err != nil {
		t.Fatal(err)
	}
	return mods
}

// scriptDir is a temporary directory holding this package's scripts
// (*.mjs) and a link to the installed node_modules, so that node resolves
// the packages from the cache.
func scriptDir(t *testing.T, mods string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "scripts")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	scripts, _ := filepath.Glob(filepath.Join(here(), "*.mjs"))
	scripts = append(scripts, filepath.Join(here(), "package.json"))
	for _, s := range scripts {
		b, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(s)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(mods, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// runNode runs node on script in dir with env added; it fails the test
// with the script's output when the script fails (and the test goes on
// to the next script), and logs it otherwise.
func runNode(t *testing.T, dir, script string, limit time.Duration, env ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Env = append(cmd.Env, "CHROMIUM="+chromiumPath())
	// Chromium's helper processes are in the same process group; end
	// them all when the script overruns.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	out, err := cmd.CombinedOutput()
	took := time.Since(start).Round(time.Millisecond)
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (over its %s limit)", err, limit)
		}
		t.Errorf("node %s failed after %s: %v\n%s", script, took, err, strings.TrimRight(string(out), "\n"))
		return
	}
	t.Logf("node %s passed in %s:\n%s", script, took, strings.TrimRight(string(out), "\n"))
}

package main

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestVersionFlagAndCommand(t *testing.T) {
	var outs []string
	for _, args := range [][]string{{"--version"}, {"version"}} {
		root := newRoot()
		var out bytes.Buffer
		root.SetOut(&out)
		root.SetArgs(args)
		if err := root.Execute(); err != nil {
			t.Fatalf("samsa %s: %v", args[0], err)
		}
		outs = append(outs, out.String())
	}
	if want := "samsa " + buildVersion() + "\n"; outs[0] != want || outs[1] != want {
		t.Fatalf("--version printed %q, version %q; want %q", outs[0], outs[1], want)
	}
}

// TestMakeBuildStampsVersion builds the binary the way the Makefile does
// and asks it for its version.
func TestMakeBuildStampsVersion(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	bin := filepath.Join(t.TempDir(), "samsa")
	build := exec.Command("make", "-s", "-C", filepath.Join("..", ".."), "build", "VERSION=v9.9.9-test", "BIN="+bin)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("make build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(out), "samsa v9.9.9-test (") {
		t.Fatalf("samsa --version = %q", out)
	}
}

func TestUnknownCommand(t *testing.T) {
	root := newRoot()
	root.SetOut(new(bytes.Buffer))
	root.SetErr(new(bytes.Buffer))
	root.SetArgs([]string{"topci"})
	if err := root.Execute(); err == nil || err.Error() != `unknown command "topci" for "samsa"; did you mean topic? (see samsa --help)` {
		t.Fatalf("samsa topci: %v", err)
	}
	root = newRoot()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetArgs([]string{})
	if err := root.Execute(); err != nil || !strings.Contains(out.String(), "Available Commands:") {
		t.Fatalf("samsa: %v\n%s", err, out.String())
	}
}

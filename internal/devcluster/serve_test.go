package devcluster

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestStartServe: StartServe returns once every pattern has matched a log
// line, whatever their order, and Kill ends the process.
func TestStartServe(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	s, found, err := StartServe(ctx, binary, []string{"--override", "samsa.http.listener=", "--override", "samsa.schema.registry.listener=", "--override", "samsa.rest.listener=",
		"--listeners", "PLAINTEXT://127.0.0.1:0", "--log.dirs", filepath.Join(t.TempDir(), "data")},
		regexp.MustCompile(`samsa serving.*\(bound ([0-9.]+:[0-9]+)\)`), regexp.MustCompile(`level=INFO`))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Kill()
	if len(found) != 2 || !strings.HasPrefix(found[0][1], "127.0.0.1:") || found[1][0] != "level=INFO" {
		t.Fatalf("matches %q", found)
	}
	s.Kill()
	if s.Cmd.ProcessState == nil {
		t.Fatal("Kill did not wait for the process")
	}
}

// TestStartServeReportsAnExit: a serve that exits at once fails StartServe
// without waiting for the context, with the log's last lines.
func TestStartServeReportsAnExit(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	_, _, err := StartServe(ctx, binary, []string{"--no-such-flag"}, regexp.MustCompile(`samsa serving`))
	if err == nil || !strings.Contains(err.Error(), "exited before it started") || !strings.Contains(err.Error(), "no-such-flag") {
		t.Fatalf("StartServe = %v", err)
	}
	if ctx.Err() != nil {
		t.Fatal("StartServe waited for the context")
	}
}

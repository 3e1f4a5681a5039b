package cli

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/task"
)

// TestRegistryCommand runs "samsa registry" as users do, against a Samsa
// broker: it creates its store topic, serves Confluent's API, and ends
// cleanly on SIGTERM.
func TestRegistryCommand(t *testing.T) {
	b := newSamsaBroker(t)
	proc := exec.Command(samsaBinary(t), "registry", "--bootstrap-server", b.addr, "--listener", "127.0.0.1:0", "--topic", "_registry_cli")
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
	t.Cleanup(g.Stop) // runs after the kill below: cleanups run last first
	t.Cleanup(func() { proc.Process.Kill() })
	first := make(chan string, 1)
	g.Go(func(context.Context) { // ends with the process's stdout
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		first <- line
		io.Copy(io.Discard, stdout)
	})
	var base string
	select {
	case line := <-first:
		m := regexp.MustCompile(`serving on (http://[0-9.:]+) \(store topic _registry_cli\)`).FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("first line %q; stderr:\n%s", line, stderr.String())
		}
		base = m[1]
	case <-time.After(60 * time.Second):
		t.Fatalf("samsa registry did not start; stderr:\n%s", stderr.String())
	}

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

	if err := proc.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	g.Go(func(context.Context) { done <- proc.Wait() })
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit: %v; stderr:\n%s", err, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("samsa registry did not stop on SIGTERM")
	}
}

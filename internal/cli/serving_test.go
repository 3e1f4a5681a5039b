package cli

import (
	"bufio"
	"context"
	"io"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/task"
)

// startServing runs the samsa binary with args as a long-running service
// (samsa rest, console, connect) and answers the submatches of re in the
// first line it prints, which must match it (the process is killed when
// the test ends; its stderr is shown when it does not start), and the
// service, for a test that stops it.
func startServing(t *testing.T, re *regexp.Regexp, args ...string) (*serving, []string) {
	t.Helper()
	proc := exec.Command(samsaBinary(t), args...)
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
	select {
	case line := <-first:
		m := re.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("samsa %s: first line %q; stderr:\n%s", args[0], line, stderr.String())
		}
		return &serving{name: args[0], proc: proc, stderr: &stderr, g: g}, m
	case <-time.After(60 * time.Second):
		t.Fatalf("samsa %s did not start; stderr:\n%s", args[0], stderr.String())
	}
	return nil, nil
}

// serving is a service started by startServing.
type serving struct {
	name   string
	proc   *exec.Cmd
	stderr *strings.Builder
	g      *task.Group
}

// stopCleanly sends SIGTERM and requires the process to exit with 0
// within 20 s.
func (s *serving) stopCleanly(t *testing.T) {
	t.Helper()
	if err := s.proc.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	s.g.Go(func(context.Context) { done <- s.proc.Wait() })
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit: %v; stderr:\n%s", err, s.stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("samsa %s did not stop on SIGTERM", s.name)
	}
}

package cli

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// testCluster is one in-memory kfake broker on loopback.
type testCluster struct {
	t       *testing.T
	addr    string
	timeout time.Duration // --timeout of every command; 10s when zero
	tee     io.Writer     // also gets stdout, as the command writes it
	errTee  io.Writer     // also gets stderr
}

func newTestCluster(t *testing.T, opts ...kfake.Opt) *testCluster {
	t.Helper()
	opts = append([]kfake.Opt{kfake.NumBrokers(1)}, opts...)
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return &testCluster{t: t, addr: c.ListenAddrs()[0]}
}

// result is what one command printed.
type result struct {
	stdout, stderr string
	err            error
}

// run executes "samsa args..." against the cluster with stdin as input.
func (c *testCluster) run(stdin string, args ...string) result {
	c.t.Helper()
	return c.runReader(strings.NewReader(stdin), args...)
}

// runReader is run with any standard input.
func (c *testCluster) runReader(stdin io.Reader, args ...string) result {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(c.t.Context(), time.Minute)
	defer cancel()
	return c.runIn(ctx, stdin, args...)
}

// runCtx is run until ctx ends (a command that runs until interrupted).
func (c *testCluster) runCtx(ctx context.Context, stdin string, args ...string) result {
	return c.runIn(ctx, strings.NewReader(stdin), args...)
}

func (c *testCluster) runIn(ctx context.Context, stdin io.Reader, args ...string) result {
	root := &cobra.Command{Use: "samsa", SilenceUsage: true, SilenceErrors: true}
	root.AddCommand(Commands()...)
	var out, errOut bytes.Buffer
	root.SetIn(stdin)
	root.SetOut(&out)
	if c.tee != nil {
		root.SetOut(io.MultiWriter(&out, c.tee))
	}
	root.SetErr(&errOut)
	if c.errTee != nil {
		root.SetErr(io.MultiWriter(&errOut, c.errTee))
	}
	timeout := 10 * time.Second
	if c.timeout > 0 {
		timeout = c.timeout
	}
	extra := []string{"--bootstrap-server", c.addr, "--timeout", timeout.String()}
	if found, _, err := root.Find(args); err == nil && found.Flag("bootstrap-server") == nil {
		extra = extra[2:] // samsa schema reaches a registry, not the cluster
		if found.Flag("timeout") == nil {
			extra = nil // samsa mirror reads its clusters from its file
		}
	}
	root.SetArgs(append(args, extra...))
	err := root.ExecuteContext(ctx)
	return result{stdout: out.String(), stderr: errOut.String(), err: err}
}

// withTimeout is the same cluster with another --timeout.
func (c *testCluster) withTimeout(d time.Duration) *testCluster {
	cp := *c
	cp.timeout = d
	return &cp
}

// printingTo is the same cluster with stdout copied to w as it is written.
func (c *testCluster) printingTo(w io.Writer) *testCluster {
	cp := *c
	cp.tee = w
	return &cp
}

// warningTo is the same cluster with stderr copied to w as it is written.
func (c *testCluster) warningTo(w io.Writer) *testCluster {
	cp := *c
	cp.errTee = w
	return &cp
}

// lineWaiter passes on every complete line written to it.
type lineWaiter struct {
	mu    sync.Mutex
	part  []byte
	lines chan string
}

func (w *lineWaiter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.part = append(w.part, p...)
	for {
		i := bytes.IndexByte(w.part, '\n')
		if i < 0 {
			return len(p), nil
		}
		w.lines <- string(w.part[:i])
		w.part = w.part[i+1:]
	}
}

// ok runs a command that must succeed and returns its stdout.
func (c *testCluster) ok(stdin string, args ...string) string {
	c.t.Helper()
	r := c.run(stdin, args...)
	if r.err != nil {
		c.t.Fatalf("samsa %s: %v\nstderr: %s", strings.Join(args, " "), r.err, r.stderr)
	}
	return r.stdout
}

// fails runs a command that must fail with an error containing want.
func (c *testCluster) fails(want string, args ...string) {
	c.t.Helper()
	r := c.run("", args...)
	if r.err == nil {
		c.t.Fatalf("samsa %s: succeeded, want error containing %q\nstdout: %s", strings.Join(args, " "), want, r.stdout)
	}
	if !strings.Contains(r.err.Error(), want) {
		c.t.Fatalf("samsa %s: error %q, want it to contain %q", strings.Join(args, " "), r.err, want)
	}
	if strings.Contains(r.err.Error(), "\n") {
		c.t.Fatalf("samsa %s: error spans lines: %q", strings.Join(args, " "), r.err)
	}
}

// client is a plain kgo client for arranging data the CLI cannot (explicit
// timestamps, transactions).
func (c *testCluster) client(opts ...kgo.Opt) *kgo.Client {
	c.t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(c.addr)}, opts...)...)
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(cl.Close)
	return cl
}

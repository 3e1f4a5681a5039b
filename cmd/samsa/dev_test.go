package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/devcluster"
)

func TestDevClusterRefusesBadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--nodes", "0"}, "--nodes 0: want 1 to 9"},
		{[]string{"--nodes", "10"}, "--nodes 10: want 1 to 9"},
		{[]string{"--override", "novalue"}, `--override "novalue": want name=value`},
		{[]string{"--controllers", "3"}, "--controllers 3: want 0 (every node combined) or 1 to 2, leaving a broker"},
		{[]string{"--base-port", "65500"}, "base port 65500: the ports of 3 nodes run past 1-65535"},
	} {
		_, err := runSamsa(t, append([]string{"dev", "cluster", "--binary", "/nonexistent/samsa"}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("samsa dev cluster %v: %v, want %q", c.args, err, c.want)
		}
	}
	if _, err := runSamsa(t, "dev", "clustr"); err == nil || !strings.Contains(err.Error(), "did you mean cluster?") {
		t.Errorf("samsa dev clustr: %v", err)
	}
}

// TestDevClusterNamesTheBusyPort: a taken port fails the command before a
// node starts (the binary given does not exist), naming the port, and the
// temporary directory is gone.
func TestDevClusterNamesTheBusyPort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	out, err := runSamsa(t, "dev", "cluster", "--nodes", "2", "--base-port", fmt.Sprint(port-1), "--binary", "/nonexistent/samsa")
	want := fmt.Sprintf("127.0.0.1:%d (node 2's Kafka listener): port in use", port)
	if err == nil || !strings.Contains(err.Error(), want) {
		// Another of the cluster's ports, taken meanwhile by someone
		// else (the ports are in the kernel's ephemeral range, where
		// other tests' connections land), may be found first: the
		// command must still name it, as the port of one of its nodes.
		if err == nil || !busyNodePort.MatchString(err.Error()) {
			t.Fatalf("busy port %d: %v, want %q", port, err, want)
		}
		t.Logf("another port was busy first: %v", err)
	}
	dir := regexp.MustCompile(`Cluster directory: (\S+)`).FindStringSubmatch(out)
	if dir == nil {
		t.Fatalf("no directory printed: %q", out)
	}
	if _, err := os.Stat(dir[1]); !os.IsNotExist(err) {
		t.Errorf("%s left behind: %v", dir[1], err)
	}
}

// busyNodePort is dev cluster's report of a port in use.
var busyNodePort = regexp.MustCompile(`127\.0\.0\.1:\d+ \(node \d+'s [^)]+\): port in use`)

var (
	buildOnce sync.Once
	samsaBin  string
	buildErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if samsaBin != "" {
		os.RemoveAll(filepath.Dir(samsaBin))
	}
	os.Exit(code)
}

// builtSamsa is this tree's samsa binary, built once per test run: the
// test binary itself cannot serve as a node.
func builtSamsa(t *testing.T) string {
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "samsa-cmd-test-")
		if err != nil {
			buildErr = err
			return
		}
		samsaBin = filepath.Join(dir, "samsa")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		buildErr = devcluster.Build(ctx, samsaBin)
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return samsaBin
}

// lockedBuffer is an output the test reads while the command writes.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestDevClusterRunsAndStops runs the command's logic for three nodes on
// free ports, waits for its bootstrap line, ends it as Ctrl-C does, and
// checks every node exited 0 and the temporary directory is gone.
func TestDevClusterRunsAndStops(t *testing.T) {
	bin := builtSamsa(t)
	var (
		base   int
		cancel context.CancelFunc
		out    *lockedBuffer
		done   chan error
	)
	// The ports were free when freeBase looked; another process may take
	// one before the nodes bind it: a start that fails so runs again on
	// new ports.
	for try := 1; ; try++ {
		base = freeBase(t, 3)
		var ctx context.Context
		ctx, cancel = context.WithCancel(context.Background())
		defer cancel()
		out, done = &lockedBuffer{}, make(chan error, 1)
		go func() {
			done <- runDevCluster(ctx, func() {}, devClusterOptions{nodes: 3, basePort: base, binary: bin}, out)
		}()
		err := waitForLine(out, done, fmt.Sprintf("Bootstrap: 127.0.0.1:%d,127.0.0.1:%d,127.0.0.1:%d\n", base, base+1, base+2))
		if err == nil {
			break
		}
		if !errors.Is(err, devcluster.ErrPortInUse) || try == 3 {
			t.Fatalf("%v\n%s", err, out)
		}
		t.Logf("start %d: %v; again on other ports", try, err)
	}
	// Each node's HTTP listener is in the summary, and serves /metrics.
	for i := range 3 {
		addr := fmt.Sprintf("127.0.0.1:%d", base+devcluster.HTTPPortOffset+i)
		if !regexp.MustCompile(fmt.Sprintf(`(?m)^%d +broker,controller +\S+ +\S+ +%s `, i+1, regexp.QuoteMeta(addr))).MatchString(out.String()) {
			t.Errorf("node %d's HTTP address %s is not in the summary:\n%s", i+1, addr, out)
		}
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			t.Fatalf("node %d: GET /metrics: %v", i+1, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), "samsa_") {
			t.Errorf("node %d: GET /metrics: %d %.200q", i+1, resp.StatusCode, body)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for id := 1; id <= 3; id++ {
		if !regexp.MustCompile(fmt.Sprintf(`(?m)^node %d: exited 0 after`, id)).MatchString(out.String()) {
			t.Errorf("no clean exit of node %d:\n%s", id, out)
		}
	}
	dir := regexp.MustCompile(`Cluster directory: (\S+)`).FindStringSubmatch(out.String())
	if dir == nil {
		t.Fatalf("no directory printed:\n%s", out)
	}
	if _, err := os.Stat(dir[1]); !os.IsNotExist(err) {
		t.Errorf("%s left behind: %v", dir[1], err)
	}
}

// waitForLine waits up to a minute for line in out, or for the command
// to end (its error).
func waitForLine(out *lockedBuffer, done <-chan error, line string) error {
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(out.String(), line) {
		select {
		case err := <-done:
			return fmt.Errorf("the command ended: %w", err)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return errors.New("no bootstrap line")
		}
	}
	return nil
}

// freeBase finds a base port whose n Kafka, controller and HTTP ports are
// free now, among a few tries.
func freeBase(t *testing.T, n int) int {
	for range 20 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		base := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		if base+devcluster.HTTPPortOffset+n > 65535 {
			continue
		}
		free := true
		for i := range n {
			for _, p := range []int{base + i, base + devcluster.ControllerPortOffset + i, base + devcluster.HTTPPortOffset + i} {
				if l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p)); err != nil {
					free = false
				} else {
					l.Close()
				}
			}
		}
		if free {
			return base
		}
	}
	t.Fatal("no free run of ports found")
	return 0
}

package devcluster

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/samsa-io/samsa/internal/freeport"
	"github.com/samsa-io/samsa/internal/task"
)

// ConnectWorker is one `samsa connect` process of a test: its ID (the
// host:port statuses name it by), its REST URL, and its log's tail.
type ConnectWorker struct {
	ID, URL string
	cmd     *exec.Cmd
	log     *tailBuffer
	exited  chan struct{}
	g       *task.Group
}

// StartConnectWorker writes props plus a loopback listener on a free port
// to a worker.properties in dir, runs `bin connect --config` on it and
// waits until GET /health answers 200 (two minutes at most). Its output
// goes to the log's tail and, when set, to more. The process is killed when
// the test ends, a failed test reporting the tail.
func StartConnectWorker(t TB, bin, dir, props string, more io.Writer) *ConnectWorker {
	t.Helper()
	port, err := freeport.One()
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, fmt.Sprintf("worker-%d.properties", port))
	if err := os.WriteFile(cfg, []byte(props+fmt.Sprintf("\nlisteners=http://127.0.0.1:%d\n", port)), 0o644); err != nil {
		t.Fatal(err)
	}
	w := &ConnectWorker{ID: fmt.Sprintf("127.0.0.1:%d", port), URL: fmt.Sprintf("http://127.0.0.1:%d", port),
		log: &tailBuffer{}, exited: make(chan struct{}), g: task.NewGroup(context.Background())}
	w.cmd = exec.Command(bin, "connect", "--config", cfg)
	var out io.Writer = w.log
	if more != nil {
		out = io.MultiWriter(w.log, more)
	}
	w.cmd.Stdout, w.cmd.Stderr = out, out
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.g.Go(func(context.Context) { _ = w.cmd.Wait(); close(w.exited) })
	t.Cleanup(func() {
		w.Kill()
		w.g.Stop()
		if t.Failed() {
			t.Logf("worker %s log (last lines):\n%s", w.ID, w.Tail())
		}
	})
	if err := w.waitHealthy(2 * time.Minute); err != nil {
		t.Fatal(fmt.Sprintf("worker %s: %v\n%s", w.ID, err, w.Tail()))
	}
	return w
}

func (w *ConnectWorker) waitHealthy(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if !w.Alive() {
			return fmt.Errorf("exited")
		}
		if resp, err := http.Get(w.URL + "/health"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("not healthy after %s", limit)
}

// Alive says whether the process still runs.
func (w *ConnectWorker) Alive() bool {
	select {
	case <-w.exited:
		return false
	default:
		return true
	}
}

// Exited is closed when the process has exited.
func (w *ConnectWorker) Exited() <-chan struct{} { return w.exited }

// Kill ends the process with SIGKILL (no leave, no flush, no commit) and
// waits for it.
func (w *ConnectWorker) Kill() {
	_ = w.cmd.Process.Signal(syscall.SIGKILL)
	<-w.exited
}

// Stop ends the process with SIGTERM, an orderly stop, and waits up to
// limit; past it the process gets SIGQUIT (its goroutine dump goes to the
// log) and Stop answers an error.
func (w *ConnectWorker) Stop(limit time.Duration) error {
	_ = w.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-w.exited:
		return nil
	case <-time.After(limit):
		_ = w.cmd.Process.Signal(syscall.SIGQUIT)
		<-w.exited
		return fmt.Errorf("worker %s did not stop within %s of SIGTERM", w.ID, limit)
	}
}

// Tail is the last part of the process's output.
func (w *ConnectWorker) Tail() string { return w.log.String() }

// tailBuffer keeps what is written, for the tail.
type tailBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *tailBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *tailBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.b.String()
	if len(s) > 8000 {
		s = s[len(s)-8000:]
	}
	return s
}

// Call makes a REST call to the worker (body marshalled as JSON when not
// nil) and answers the status and the body; a 2xx body is decoded into out
// when out is not nil.
func (w *ConnectWorker) Call(method, path string, body, out any) (int, []byte, error) {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, w.URL+path, r)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 2 * time.Minute}).Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	if out != nil && len(data) > 0 && resp.StatusCode < 300 {
		if err := json.Unmarshal(data, out); err != nil {
			return resp.StatusCode, data, fmt.Errorf("%s %s: %w: %s", method, path, err, data)
		}
	}
	return resp.StatusCode, data, nil
}

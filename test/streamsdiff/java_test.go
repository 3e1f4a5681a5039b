package streamsdiff

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/task"
)

// requireJava skips when the machine has no Java or Maven, except in CI
// (CI=true), where the test must run.
func requireJava(t *testing.T) {
	for _, tool := range []string{"java", "mvn"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is needed for the Kafka Streams side: %v", tool, err)
			}
			t.Skipf("no %s on this machine: the Kafka Streams side cannot run", tool)
		}
	}
}

// javaDescribe holds each application's Topology.describe() as the last
// Java run wrote it, by application name, the output topics' prefix
// written $PREFIX.
var javaDescribe = map[string]string{}

// startJava runs the Kafka Streams reference topologies (java/run.sh)
// against the cluster and waits until each application reports RUNNING;
// any application reporting ERROR, or the process exiting, fails the
// test. The process gets SIGTERM when the test ends.
func startJava(t *testing.T, bootstrap, prefix string) {
	t.Helper()
	requireJava(t)
	dir := t.TempDir()
	_, file, _, _ := runtime.Caller(0)
	cmd := exec.Command(filepath.Join(filepath.Dir(file), "java", "run.sh"))
	cmd.Env = append(os.Environ(), "STREAMS_BOOTSTRAP="+bootstrap, "STREAMS_PREFIX="+prefix, "STREAMS_DIR="+dir)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	log := &tail{}
	cmd.Stderr = log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 64)
	exited := make(chan struct{})
	g := task.NewGroup(context.Background())
	g.Go(func(context.Context) {
		scanLines(io.TeeReader(stdout, log), prefix, lines)
		reportFailure(prefix, errors.New("the Kafka Streams process exited"))
		cmd.Wait()
		close(exited)
	})
	t.Cleanup(func() {
		stopJava(cmd, exited)
		g.Stop()
		if t.Failed() {
			t.Logf("Kafka Streams log (last lines):\n%s", log.String())
		}
	})
	// The first run builds Main.java and copies the jars: minutes.
	if err := awaitRunning(t.Context(), prefix, lines, exited, 10*time.Minute); err != nil {
		t.Fatalf("Kafka Streams: %v", err)
	}
	for _, app := range apps {
		b, err := os.ReadFile(filepath.Join(dir, "describe", app.name+".txt"))
		if err != nil {
			t.Fatal(err)
		}
		// The sinks name the run's prefix; the goldens say $PREFIX.
		javaDescribe[app.name] = strings.ReplaceAll(string(b), "(topic: "+prefix, "(topic: $PREFIX")
	}
}

// scanLines sends every line of r to lines, dropping lines nobody reads
// once the buffer is full (only RUNNING and ERROR lines matter), and
// reports an ERROR line as the run's failure (settle stops on it).
func scanLines(r io.Reader, prefix string, lines chan<- string) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "ERROR ") {
			reportFailure(prefix, errors.New(sc.Text()))
		}
		select {
		case lines <- sc.Text():
		default:
		}
	}
}

// awaitRunning waits for "RUNNING <app-id>" from every application.
func awaitRunning(ctx context.Context, prefix string, lines <-chan string, exited <-chan struct{}, limit time.Duration) error {
	waiting := map[string]bool{}
	for _, app := range apps {
		waiting[prefix+app.name] = true
	}
	timeout := time.After(limit)
	for len(waiting) > 0 {
		select {
		case line := <-lines:
			if id, ok := strings.CutPrefix(line, "RUNNING "); ok {
				delete(waiting, id)
			}
			if strings.HasPrefix(line, "ERROR ") {
				return fmt.Errorf("an application failed: %s", line)
			}
		case <-exited:
			return fmt.Errorf("the process exited before every application ran")
		case <-timeout:
			return fmt.Errorf("not running after %v: %v", limit, waiting)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// stopJava stops the process as an operator does (SIGTERM: the shutdown
// hook closes every application); SIGKILL after 30 s.
func stopJava(cmd *exec.Cmd, exited <-chan struct{}) {
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-exited
	}
}

// tail keeps a process's last 64 KiB of output.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - 64<<10; over > 0 {
		t.buf = t.buf[over:]
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := string(t.buf)
	if len(s) > 16<<10 {
		s = s[len(s)-16<<10:]
	}
	return s
}

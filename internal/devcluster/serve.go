package devcluster

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/samsa-io/samsa/internal/task"
)

// built is the binary BuildOnce compiles, shared by every test of one
// test binary: building cmd/samsa takes seconds, a test needs it once.
var built struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// BuildOnce builds cmd/samsa (as Build does) into a temporary directory the
// first time it is called in a process and returns the binary's path; later
// calls return the same path, or the same error. A test's TestMain calls
// RemoveBuilt after m.Run.
func BuildOnce(ctx context.Context) (string, error) {
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "samsa-test-bin-"); built.err != nil {
			return
		}
		built.path = filepath.Join(built.dir, "samsa")
		built.err = Build(ctx, built.path)
	})
	return built.path, built.err
}

// RemoveBuilt removes what BuildOnce built, if anything.
func RemoveBuilt() {
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
}

// tailLines is how many lines of its log a Serve keeps for a failed test's
// report.
const tailLines = 50

// Serve is one `samsa serve` process that StartServe started, its stderr
// (the log) read to the end.
type Serve struct {
	// Cmd is the process; tests signal it (SIGSTOP) through Cmd.Process.
	Cmd *exec.Cmd
	g   *task.Group
	// scanned is closed once the log has been read to its end.
	scanned chan struct{}

	mu   sync.Mutex
	tail []string // guarded by mu
}

// StartServe runs `bin serve args...` and waits until each of patterns has
// matched a line of its log, in any order; it returns each pattern's
// submatches of the first line it matched. It fails, and ends the process,
// when ctx ends first or the process exits; the error carries the log's
// last lines. The caller calls Kill when done.
func StartServe(ctx context.Context, bin string, args []string, patterns ...*regexp.Regexp) (*Serve, [][]string, error) {
	cmd := exec.Command(bin, append([]string{"serve"}, args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, nil, fmt.Errorf("devcluster: samsa serve: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("devcluster: samsa serve: %w", err)
	}
	s := &Serve{Cmd: cmd, g: task.NewGroup(context.Background()), scanned: make(chan struct{})}
	found := make(chan [][]string, 1)
	s.g.Go(func(context.Context) {
		defer close(s.scanned)
		s.scan(stderr, patterns, found)
	})
	select {
	case matches := <-found:
		return s, matches, nil
	case <-s.scanned:
		err = fmt.Errorf("devcluster: samsa serve exited before it started")
	case <-ctx.Done():
		err = fmt.Errorf("devcluster: samsa serve did not start: %w", ctx.Err())
	}
	s.Kill()
	return nil, nil, fmt.Errorf("%w; log (last lines):\n%s", err, s.Tail())
}

// scan reads the log to its end, keeping its tail, and sends the matches
// once every pattern has matched.
func (s *Serve) scan(r io.Reader, patterns []*regexp.Regexp, found chan<- [][]string) {
	matches := make([][]string, len(patterns))
	left := len(patterns)
	if left == 0 {
		found <- matches
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.Contains(line, `msg="loaded __`) {
			continue // one line per internal partition at start-up
		}
		// The tail first: a caller woken by a match reads the matched line
		// in Tail (it was not there yet, now and then, under load).
		s.mu.Lock()
		s.tail = append(s.tail, line)
		if len(s.tail) > tailLines {
			s.tail = s.tail[1:]
		}
		s.mu.Unlock()
		for i, re := range patterns {
			if matches[i] != nil {
				continue
			}
			if matches[i] = re.FindStringSubmatch(line); matches[i] != nil {
				if left--; left == 0 {
					found <- matches
				}
			}
		}
	}
	io.Copy(io.Discard, r)
}

// Tail is the last lines of the log.
func (s *Serve) Tail() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.tail, "\n")
}

// Kill ends the process at once (SIGKILL), as a crash or a power cut does,
// and waits for it and its log. Killing it again does nothing.
func (s *Serve) Kill() {
	if s.Cmd.ProcessState == nil {
		s.Cmd.Process.Kill()
		<-s.scanned // Wait closes the pipe: read it to its end first
		s.Cmd.Wait()
	}
	s.g.Stop()
}

package kafkaref

import (
	"context"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/samsa-io/samsa/internal/task"
)

// process is one JVM this package started, its output in a log file.
type process struct {
	cmd     *exec.Cmd
	logPath string
	exited  chan struct{} // closed once the process has exited
	group   *task.Group
}

// startProcess starts cmd with its stdout and stderr appended to logPath.
// The process gets a process group of its own, so a Ctrl-C at the
// terminal reaches the test only (which stops it in turn), and SIGKILL
// when the test binary dies, so a crashed or timed-out test leaves no JVM
// behind (as internal/devcluster's nodes: Pdeathsig fires when the thread
// that started the child ends, which the Go runtime does only under a
// goroutine that locked its thread).
func startProcess(cmd *exec.Cmd, logPath string) (*process, error) {
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	p := &process{cmd: cmd, logPath: logPath, exited: make(chan struct{}), group: task.NewGroup(context.Background())}
	p.group.Go(func(context.Context) {
		_ = cmd.Wait()
		logf.Close()
		close(p.exited)
	})
	return p, nil
}

// alive reports whether the process still runs.
func (p *process) alive() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// stop asks the process to shut down (SIGTERM: the JVM's shutdown hooks
// run, a broker closes its logs cleanly) and kills it after grace.
func (p *process) stop(grace time.Duration) {
	if p.alive() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(grace):
			_ = p.cmd.Process.Kill()
		}
	}
	p.group.Stop()
}

// kill is a crash: SIGKILL, no shutdown hook runs.
func (p *process) kill() {
	if p.alive() {
		_ = p.cmd.Process.Kill()
	}
	p.group.Stop()
}

// logTail is the last n lines of the process's log.
func (p *process) logTail(n int) string {
	data, _ := os.ReadFile(p.logPath)
	return lastLines(string(data), n)
}

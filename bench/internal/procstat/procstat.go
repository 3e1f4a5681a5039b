package procstat

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// userHZ is the unit of utime and stime in /proc/<pid>/stat: USER_HZ,
// 100 on every Linux architecture Go builds for.
const userHZ = 100

// statTicks sums fields of /proc/<pid>/stat after the command name (idx
// counts from field 3, the state).
func statTicks(pid int, idx ...int) (float64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces; the fields after its
	// closing parenthesis start at field 3 (state).
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(s[i+1:])
	var ticks int64
	for _, k := range idx {
		if k >= len(f) {
			return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
		}
		v, err := strconv.ParseInt(f[k], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%d/stat field %d: %q", pid, k+3, f[k])
		}
		ticks += v
	}
	return float64(ticks) / userHZ, nil
}

// CPUSeconds is the process's user plus system CPU time so far, all its
// threads (the JVM's compiler and GC threads included).
func CPUSeconds(pid int) (float64, error) {
	return statTicks(pid, 11, 12) // fields 14, 15: utime, stime
}

// CPUWithChildren is CPUSeconds plus the CPU time of the process's
// children it has waited for (cutime, cstime): a launcher script's JVM
// counts as the launcher's.
func CPUWithChildren(pid int) (float64, error) {
	return statTicks(pid, 11, 12, 13, 14) // fields 14-17
}

// Memory is VmRSS and VmHWM (the peak RSS) of /proc/<pid>/status, in KiB.
func Memory(pid int) (rss, hwm int64, err error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		name, value, ok := strings.Cut(line, ":")
		if !ok || (name != "VmRSS" && name != "VmHWM") {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("/proc/%d/status %s: %w", pid, name, err)
		}
		if name == "VmRSS" {
			rss = kb
		} else {
			hwm = kb
		}
	}
	return rss, hwm, nil
}

// Process is a child a benchmark started, in its own process group, with
// its output in a log file.
type Process struct {
	Cmd    *exec.Cmd
	Log    string
	exited chan struct{}
}

// Start starts cmd with its output in a new file at logPath.
func Start(cmd *exec.Cmd, logPath string) (*Process, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	p := &Process{Cmd: cmd, Log: logPath, exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		logf.Close()
		close(p.exited)
	}()
	return p, nil
}

// PID is the process's ID.
func (p *Process) PID() int { return p.Cmd.Process.Pid }

// Exited is closed once the process has exited and been waited for.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Alive says whether the process still runs.
func (p *Process) Alive() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// Stop sends SIGTERM (the programs benchmarked shut down cleanly on it,
// writing what they write on exit) and SIGKILL after grace.
func (p *Process) Stop(grace time.Duration) {
	if !p.Alive() {
		return
	}
	_ = p.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(grace):
		_ = p.Cmd.Process.Kill()
		<-p.exited
	}
}

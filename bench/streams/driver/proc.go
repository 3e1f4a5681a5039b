package main

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

// cpuSeconds is the process's user plus system CPU time so far, all its
// threads (the JVM's compiler and GC threads included).
func cpuSeconds(pid int) (float64, error) {
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
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64) // field 14
	stime, err2 := strconv.ParseInt(f[12], 10, 64) // field 15
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: utime %q stime %q", pid, f[11], f[12])
	}
	return float64(utime+stime) / userHZ, nil
}

// memory is VmRSS and VmHWM (the peak RSS) of /proc/<pid>/status, in KiB.
func memory(pid int) (rss, hwm int64, err error) {
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

// process is a child the benchmark started, in its own process group, with
// its output in a log file.
type process struct {
	cmd    *exec.Cmd
	log    string
	exited chan struct{}
}

func startProcess(cmd *exec.Cmd, logPath string) (*process, error) {
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
	p := &process{cmd: cmd, log: logPath, exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		logf.Close()
		close(p.exited)
	}()
	return p, nil
}

func (p *process) pid() int { return p.cmd.Process.Pid }

func (p *process) alive() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// stop sends SIGTERM (the application closes and leaves its group) and
// SIGKILL after grace.
func (p *process) stop(grace time.Duration) {
	if !p.alive() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(grace):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// sampler reads a process's RSS every 100 ms.
type sampler struct {
	pid  int
	done chan struct{}
	res  chan [2]int64 // peak, mean
}

func startSampler(pid int) *sampler {
	s := &sampler{pid: pid, done: make(chan struct{}), res: make(chan [2]int64, 1)}
	go s.loop()
	return s
}

func (s *sampler) loop() {
	var sum, n, hwm int64
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		rss, h, err := memory(s.pid)
		if err == nil {
			sum, n, hwm = sum+rss, n+1, h
		}
		select {
		case <-s.done:
			mean := int64(0)
			if n > 0 {
				mean = sum / n
			}
			s.res <- [2]int64{hwm, mean}
			return
		case <-tick.C:
		}
	}
}

func (s *sampler) stop() (peak, mean int64) {
	close(s.done)
	r := <-s.res
	return r[0], r[1]
}

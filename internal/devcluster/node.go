package devcluster

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Node is one combined node: its ports, its directory, and the samsa serve
// process running it, if any.
type Node struct {
	ID int32
	// Host is the address the node listens on: 127.0.0.1 unless
	// Config.Hosts gives it one.
	Host string
	// Roles is the node's process.roles.
	Roles          string
	KafkaPort      int
	ControllerPort int
	// HTTPPort is the node's samsa.http.listener port: /metrics,
	// /healthz and /readyz.
	HTTPPort int
	// RegistryPort is the node's samsa.schema.registry.listener port: the
	// Schema Registry a broker node runs.
	RegistryPort int
	// RestPort is the node's samsa.rest.listener port: the REST Proxy a
	// broker node runs.
	RestPort int
	// ConnectPort is the node's samsa.connect.listener port, 0 when the
	// cluster runs no Connect (Config.Connect).
	ConnectPort int
	// Dir holds server.properties, node.log and the data directory.
	Dir string

	cluster *Cluster
	mu      struct {
		sync.Mutex
		proc *process // the latest process, running or exited; nil before the first Start
	}
}

// process is one run of a node.
type process struct {
	cmd     *exec.Cmd
	log     *os.File
	done    chan struct{} // closed once the process has exited and been reaped
	err     error         // cmd.Wait's answer, set before done closes
	stopped bool          // Stop or Kill ended it: not a crash to report
}

// Broker reports whether the node has the broker role (a Kafka listener).
func (n *Node) Broker() bool { return strings.Contains(n.Roles, "broker") }

// Controller reports whether the node has the controller role (a voter).
func (n *Node) Controller() bool { return strings.Contains(n.Roles, "controller") }

// Addr is the node's Kafka address.
func (n *Node) Addr() string { return net.JoinHostPort(n.Host, strconv.Itoa(n.KafkaPort)) }

// HTTPAddr is the node's HTTP listener address (samsa.http.listener),
// "" when it has none.
func (n *Node) HTTPAddr() string {
	if n.HTTPPort == 0 {
		return ""
	}
	return net.JoinHostPort(n.Host, strconv.Itoa(n.HTTPPort))
}

// RegistryAddr is the node's Schema Registry address
// (samsa.schema.registry.listener), "" when it has none: a controller-only
// node has no PLAINTEXT listener for the registry to reach.
func (n *Node) RegistryAddr() string {
	if n.RegistryPort == 0 || !n.Broker() {
		return ""
	}
	return net.JoinHostPort(n.Host, strconv.Itoa(n.RegistryPort))
}

// RestAddr is the node's REST Proxy address (samsa.rest.listener), ""
// when it has none: a controller-only node has no PLAINTEXT listener for
// the proxy to reach.
func (n *Node) RestAddr() string {
	if n.RestPort == 0 || !n.Broker() {
		return ""
	}
	return net.JoinHostPort(n.Host, strconv.Itoa(n.RestPort))
}

// ConnectAddr is the node's Connect worker address
// (samsa.connect.listener), "" when it runs none: the cluster runs no
// Connect, or the node is controller-only.
func (n *Node) ConnectAddr() string {
	if n.ConnectPort == 0 || !n.Broker() {
		return ""
	}
	return net.JoinHostPort(n.Host, strconv.Itoa(n.ConnectPort))
}

// ConfigPath is the node's server.properties.
func (n *Node) ConfigPath() string { return filepath.Join(n.Dir, "server.properties") }

// LogPath is the file the node's processes write their output to, each
// run appended after a line that marks its start.
func (n *Node) LogPath() string { return filepath.Join(n.Dir, "node.log") }

// DataDir is the node's log.dirs.
func (n *Node) DataDir() string { return filepath.Join(n.Dir, "data") }

// Start starts the node's process on its directory, as it was left (a
// restart after Stop or Kill). It returns once the process runs; the
// cluster's WaitReady says when it serves.
func (n *Node) Start() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if p := n.mu.proc; p != nil && !p.exited() {
		return fmt.Errorf("devcluster: node %d is running", n.ID)
	}
	log, err := os.OpenFile(n.LogPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("devcluster: node %d: %w", n.ID, err)
	}
	fmt.Fprintf(log, "--- devcluster: node %d starting at %s\n", n.ID, time.Now().Format(time.RFC3339Nano))
	args := []string{n.cluster.cfg.Binary, "serve", "--config", n.ConfigPath()}
	if pre := n.cluster.cfg.Prefix; pre != nil {
		args = append(pre(n.ID), args...)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = childAttr()
	if err := cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("devcluster: start node %d: %w", n.ID, err)
	}
	p := &process{cmd: cmd, log: log, done: make(chan struct{})}
	n.mu.proc = p
	n.cluster.tasks.Go(func(context.Context) {
		p.err = cmd.Wait()
		log.Close()
		close(p.done)
	})
	return nil
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// current is the latest process, nil before the first Start.
func (n *Node) current() *process {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.mu.proc
}

// Running says whether the node's process runs.
func (n *Node) Running() bool {
	p := n.current()
	return p != nil && !p.exited()
}

// Pid is the running process's ID, 0 when none runs.
func (n *Node) Pid() int {
	if p := n.current(); p != nil && !p.exited() {
		return p.cmd.Process.Pid
	}
	return 0
}

// crashed is the error of a process that exited on its own (neither Stop
// nor Kill), nil otherwise.
func (n *Node) crashed() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	p := n.mu.proc
	if p == nil || p.stopped || !p.exited() {
		return nil
	}
	err := fmt.Errorf("devcluster: node %d exited: %v", n.ID, p.err)
	if strings.Contains(n.startedLog(), "address already in use") {
		err = fmt.Errorf("%w (%w)", err, ErrPortInUse)
	}
	return err
}

// Kill ends the node's process with SIGKILL, a crash: no controlled
// shutdown, no flush. It returns once the process is gone.
func (n *Node) Kill() error {
	p := n.markStopped()
	if p == nil {
		return fmt.Errorf("devcluster: node %d is not running", n.ID)
	}
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil && !p.exited() {
		return fmt.Errorf("devcluster: kill node %d: %w", n.ID, err)
	}
	<-p.done
	return nil
}

// Stop sends SIGTERM, which makes samsa serve shut down under control
// (its leaderships moved first), and waits for the exit: nil when the
// process exits 0. After timeout it is killed and Stop says so.
func (n *Node) Stop(timeout time.Duration) error {
	p := n.markStopped()
	if p == nil {
		return fmt.Errorf("devcluster: node %d is not running", n.ID)
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !p.exited() {
		return fmt.Errorf("devcluster: stop node %d: %w", n.ID, err)
	}
	select {
	case <-p.done:
	case <-time.After(timeout):
		p.cmd.Process.Signal(syscall.SIGKILL)
		<-p.done
		return fmt.Errorf("devcluster: node %d did not stop within %v after SIGTERM and was killed", n.ID, timeout)
	}
	if p.err != nil {
		return fmt.Errorf("devcluster: node %d exited after SIGTERM: %w", n.ID, p.err)
	}
	return nil
}

// markStopped marks the running process as ended on purpose and returns
// it; nil when none runs.
func (n *Node) markStopped() *process {
	n.mu.Lock()
	defer n.mu.Unlock()
	p := n.mu.proc
	if p == nil || p.exited() {
		return nil
	}
	p.stopped = true
	return p
}

// LogTail is the last lines of the node's log, all of its runs.
func (n *Node) LogTail(lines int) string {
	data := readTail(n.LogPath(), 64<<10)
	all := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}

// startedLog is the log of the latest run only.
func (n *Node) startedLog() string {
	data := readTail(n.LogPath(), 64<<10)
	if i := bytes.LastIndex(data, []byte("--- devcluster: node")); i >= 0 {
		data = data[i:]
	}
	return string(data)
}

// readTail reads at most max bytes from the end of a file; nothing when
// it cannot be read, as a log that is not there yet.
func readTail(path string, max int64) []byte {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > max {
		f.Seek(-max, io.SeekEnd)
	}
	data, _ := io.ReadAll(f)
	return data
}

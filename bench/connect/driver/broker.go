package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/freeport"
)

func newBufWriter(f *os.File) *bufio.Writer { return bufio.NewWriterSize(f, 1<<20) }
func newBufReader(f *os.File) *bufio.Reader { return bufio.NewReaderSize(f, 1<<20) }

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

// stop sends SIGTERM (a samsa connect profile is written on a clean exit)
// and SIGKILL after grace.
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

type broker struct {
	*process
	addr  string
	admin *kadm.Client
}

// startBroker runs one `samsa serve` on a free loopback port, with no
// HTTP listeners (their default ports may be taken) and no initial
// rebalance delay (the sinks' consumer groups join at once, as Kafka's
// test setups do), and waits until it answers metadata.
func startBroker(ctx context.Context, bin, dir string) (*broker, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	port, err := freeport.One()
	if err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	cmd := exec.Command(bin, "serve",
		"--listeners", "PLAINTEXT://"+addr,
		"--log.dirs", filepath.Join(dir, "data"),
		"--override", "group.initial.rebalance.delay.ms=0",
		"--override", "samsa.http.listener=",
		"--override", "samsa.schema.registry.listener=",
		"--override", "samsa.rest.listener=",
	)
	p, err := startProcess(cmd, filepath.Join(dir, "broker.log"))
	if err != nil {
		return nil, err
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		p.stop(5 * time.Second)
		return nil, err
	}
	b := &broker{process: p, addr: addr, admin: kadm.NewClient(cl)}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if !p.alive() {
			return nil, fmt.Errorf("broker exited (log %s)", p.log)
		}
		c, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := b.admin.ListBrokers(c)
		cancel()
		if err == nil {
			return b, nil
		}
		if time.Now().After(deadline) {
			b.stop()
			return nil, fmt.Errorf("broker not ready after 30s: %w (log %s)", err, p.log)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (b *broker) stop() {
	b.admin.Close()
	b.process.stop(10 * time.Second)
}

// createTopic makes the run's topic: one partition, so the sink sees the
// lines in the file's order.
func (b *broker) createTopic(ctx context.Context, topic string) error {
	resp, err := b.admin.CreateTopic(ctx, 1, 1, nil, topic)
	if err != nil {
		return err
	}
	return resp.Err
}

func (b *broker) deleteTopic(ctx context.Context, topic string) error {
	resp, err := b.admin.DeleteTopic(ctx, topic)
	if err != nil {
		return err
	}
	return resp.Err
}

// endOffset is the topic's high watermark (partition 0).
func (b *broker) endOffset(ctx context.Context, topic string) (int64, error) {
	offs, err := b.admin.ListEndOffsets(ctx, topic)
	if err != nil {
		return 0, err
	}
	o, ok := offs.Lookup(topic, 0)
	if !ok {
		return 0, fmt.Errorf("no end offset for %s", topic)
	}
	return o.Offset, o.Err
}

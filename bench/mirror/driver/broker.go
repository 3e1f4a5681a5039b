package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/freeport"
)

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

// stop sends SIGTERM (MirrorMaker 2 and samsa mirror shut down cleanly on
// it) and SIGKILL after grace.
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
// rebalance delay (MirrorMaker 2's worker group joins at once, as in
// Kafka's test setups), and waits until it answers metadata.
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

// createTopic makes a topic of partitions partitions, replication factor 1.
func (b *broker) createTopic(ctx context.Context, topic string, partitions int32) error {
	resp, err := b.admin.CreateTopic(ctx, partitions, 1, nil, topic)
	if err != nil {
		return err
	}
	return resp.Err
}

// deleteTopics deletes the topics that exist of names.
func (b *broker) deleteTopics(ctx context.Context, names ...string) error {
	resps, err := b.admin.DeleteTopics(ctx, names...)
	if err != nil {
		return err
	}
	for _, r := range resps {
		if r.Err != nil && !errors.Is(r.Err, kerr.UnknownTopicOrPartition) {
			return fmt.Errorf("delete %s: %w", r.Topic, r.Err)
		}
	}
	return nil
}

// endOffsets is the sum of the topic's partitions' high watermarks.
func (b *broker) endOffsets(ctx context.Context, topic string) (int64, error) {
	offs, err := b.admin.ListEndOffsets(ctx, topic)
	if err != nil {
		return 0, err
	}
	var sum int64
	var ferr error
	offs.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			ferr = o.Err
		}
		sum += o.Offset
	})
	return sum, ferr
}

package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/freeport"
)

func newBufWriter(f *os.File) *bufio.Writer { return bufio.NewWriterSize(f, 1<<20) }
func newBufReader(f *os.File) *bufio.Reader { return bufio.NewReaderSize(f, 1<<20) }

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
		p.Stop(5 * time.Second)
		return nil, err
	}
	b := &broker{process: p, addr: addr, admin: kadm.NewClient(cl)}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if !p.Alive() {
			return nil, fmt.Errorf("broker exited (log %s)", p.Log)
		}
		c, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := b.admin.ListBrokers(c)
		cancel()
		if err == nil {
			return b, nil
		}
		if time.Now().After(deadline) {
			b.stop()
			return nil, fmt.Errorf("broker not ready after 30s: %w (log %s)", err, p.Log)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (b *broker) stop() {
	b.admin.Close()
	b.process.Stop(10 * time.Second)
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

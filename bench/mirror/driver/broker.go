package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/freeport"
)

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

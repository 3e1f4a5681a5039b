package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/samsa-io/samsa/bench/internal/procstat"
)

func newBufWriter(f *os.File) *bufio.Writer { return bufio.NewWriterSize(f, 1<<20) }
func newBufReader(f *os.File) *bufio.Reader { return bufio.NewReaderSize(f, 1<<20) }

type broker struct {
	*process
	addr  string
	admin *kadm.Client
}

// startBroker runs one `samsa serve` (procstat.StartBroker).
func startBroker(ctx context.Context, bin, dir string) (*broker, error) {
	sb, err := procstat.StartBroker(ctx, bin, dir)
	if err != nil {
		return nil, err
	}
	return &broker{process: sb.Process, addr: sb.Addr, admin: sb.Admin}, nil
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

package broker

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/samsa-io/samsa/internal/model"
	"github.com/samsa-io/samsa/internal/vfs"
)

// hwCheckpointFile holds each partition's high watermark, under Kafka's
// name and in its format (version 0, a count, then "topic partition
// offset" lines), written every replica.high.watermark.checkpoint.interval.ms
// and on shutdown. A replica opened at start begins at the checkpointed
// high watermark instead of its log start (replication.Options), so a
// restarted cluster serves what it had committed at once rather than
// after every follower has fetched again. The single node needs none: its
// high watermark is its log end.
const hwCheckpointFile = "replication-offset-checkpoint"

// encodeHighWatermarks renders the checkpoint, partitions in order.
func encodeHighWatermarks(hws map[model.TopicPartition]int64) []byte {
	tps := make([]model.TopicPartition, 0, len(hws))
	for tp := range hws {
		tps = append(tps, tp)
	}
	slices.SortFunc(tps, func(a, b model.TopicPartition) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return int(a.Partition - b.Partition)
	})
	var b bytes.Buffer
	fmt.Fprintf(&b, "0\n%d\n", len(tps))
	for _, tp := range tps {
		fmt.Fprintf(&b, "%s %d %d\n", tp.Topic, tp.Partition, hws[tp])
	}
	return b.Bytes()
}

// decodeHighWatermarks parses a checkpoint; any fault refuses the whole
// file, and the replicas then start at their log starts (always safe).
func decodeHighWatermarks(data []byte) (map[model.TopicPartition]int64, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	if !sc.Scan() || sc.Text() != "0" {
		return nil, errors.New("not version 0")
	}
	if !sc.Scan() {
		return nil, errors.New("no count")
	}
	n, err := strconv.Atoi(sc.Text())
	if err != nil || n < 0 {
		return nil, fmt.Errorf("bad count %q", sc.Text())
	}
	out := make(map[model.TopicPartition]int64, n)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 3 {
			return nil, fmt.Errorf("bad line %q", sc.Text())
		}
		p, err1 := strconv.ParseInt(f[1], 10, 32)
		off, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil || p < 0 || off < 0 {
			return nil, fmt.Errorf("bad line %q", sc.Text())
		}
		out[model.TopicPartition{Topic: f[0], Partition: int32(p)}] = off
	}
	if len(out) != n {
		return nil, fmt.Errorf("%d entries, the count says %d", len(out), n)
	}
	return out, nil
}

// readHighWatermarks loads the checkpoint at start; none (or a damaged
// one, logged) is an empty map.
func (b *Broker) readHighWatermarks() map[model.TopicPartition]int64 {
	path := filepath.Join(b.cfg.LogDir, hwCheckpointFile)
	data, err := vfs.ReadFile(b.cfg.FS, path)
	if errors.Is(err, vfs.ErrNotExist) {
		return nil
	}
	if err == nil {
		var hws map[model.TopicPartition]int64
		if hws, err = decodeHighWatermarks(data); err == nil {
			return hws
		}
	}
	b.log.Warn("ignoring the high-watermark checkpoint; replicas start at their log starts", "path", path, "err", err)
	return nil
}

// writeHighWatermarks checkpoints every hosted partition's high watermark.
func (b *Broker) writeHighWatermarks() error {
	hws := map[model.TopicPartition]int64{}
	for _, ts := range b.topics.all() {
		for _, p := range ts.partitions {
			if p != nil {
				hws[p.TP] = p.HighWatermark()
			}
		}
	}
	if err := vfs.WriteFileAtomic(b.cfg.FS, filepath.Join(b.cfg.LogDir, hwCheckpointFile), encodeHighWatermarks(hws)); err != nil {
		return fmt.Errorf("broker: write %s: %w", hwCheckpointFile, err)
	}
	return nil
}

// checkpointHighWatermarks writes the checkpoint every
// replica.high.watermark.checkpoint.interval.ms until ctx ends.
func (b *Broker) checkpointHighWatermarks(ctx context.Context) {
	every := millis(b.cfg.Values.Long("replica.high.watermark.checkpoint.interval.ms"))
	tick := time.NewTicker(max(every, 10*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if err := b.writeHighWatermarks(); err != nil {
			b.log.Warn("high-watermark checkpoint failed", "err", err)
		}
	}
}

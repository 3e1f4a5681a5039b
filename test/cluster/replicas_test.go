package cluster

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/samsa-io/samsa/internal/devcluster"
	"github.com/samsa-io/samsa/internal/record"
	"github.com/samsa-io/samsa/internal/storage"
)

// replicaNodes lists each partition's replicas as the metadata has them.
func replicaNodes(t *testing.T, c *devcluster.Cluster, topic string) map[int32][]int32 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ps, err := partitions(ctx, runningAddrs(c)[0], topic)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int32][]int32{}
	for _, p := range ps {
		out[p.Partition] = p.Replicas
	}
	return out
}

// batchID is what identifies a stored batch: its offsets, the leader epoch
// it was written in, and its CRC (over everything from the attributes on).
type batchID struct {
	Base, Last int64
	Epoch      int32
	CRC        uint32
}

// assertReplicasIdentical opens every replica's log of the stopped
// cluster and demands the same batches, offset by offset, in each.
func assertReplicasIdentical(t *testing.T, c *devcluster.Cluster, topic string, replicas map[int32][]int32) {
	t.Helper()
	for p, nodes := range replicas {
		var first []batchID
		for i, id := range nodes {
			dir := filepath.Join(c.Node(id).DataDir(), fmt.Sprintf("%s-%d", topic, p))
			batches, err := readBatches(dir)
			if err != nil {
				t.Fatalf("node %d: %v", id, err)
			}
			if i == 0 {
				first = batches
				t.Logf("%s-%d: %d batches on each of nodes %s", topic, p, len(batches), nodeList(nodes))
				continue
			}
			if diff := cmp.Diff(first, batches); diff != "" {
				t.Errorf("%s-%d: node %d's log differs from node %d's (-node %d +node %d):\n%s", topic, p, id, nodes[0], nodes[0], id, diff)
			}
		}
	}
}

// readBatches lists every batch of the log in dir.
func readBatches(dir string) ([]batchID, error) {
	l, err := storage.Open(dir, storage.DefaultConfig(), storage.Options{})
	if err != nil {
		return nil, err
	}
	defer l.Close()
	var out []batchID
	for off := l.LogStartOffset(); off < l.LogEndOffset(); {
		rr, err := l.Read(off, 1<<20, -1, true)
		if err != nil {
			return nil, fmt.Errorf("%s at %d: %w", dir, off, err)
		}
		b, err := rr.ReadAll()
		rr.Release()
		if err != nil {
			return nil, err
		}
		if len(b) == 0 {
			return nil, fmt.Errorf("%s: nothing at %d below the log end %d", dir, off, l.LogEndOffset())
		}
		for len(b) >= record.LogOverhead {
			h, err := record.ParseHeader(b)
			if err != nil || h.Size() > len(b) {
				break // a batch cut short by the read size: read again from it
			}
			out = append(out, batchID{h.BaseOffset, h.LastOffset(), h.PartitionLeaderEpoch, h.CRC})
			off = h.NextOffset()
			b = b[h.Size():]
		}
	}
	return out, nil
}

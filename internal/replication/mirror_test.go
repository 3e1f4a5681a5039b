package replication

import (
	"slices"
	"testing"

	"github.com/samsa-io/samsa/internal/record"
)

// mirrorBatch is a batch of a mirror topic's source: its own offsets
// (from base, n of them), its own leader epoch, no producer.
func mirrorBatch(t *testing.T, base int64, n int) []byte {
	t.Helper()
	b := record.Batch{BaseOffset: base, PartitionLeaderEpoch: 42, ProducerID: record.NoProducerID, ProducerEpoch: record.NoProducerEpoch, BaseSequence: record.NoSequence}
	for i := range n {
		b.Records = append(b.Records, record.Record{Offset: base + int64(i), Timestamp: 1000 + base + int64(i), Value: []byte("v")})
	}
	raw, err := b.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// A mirror append on the leader restarts its empty log at the source's
// log start and raises the high watermark there; the followers fetch out
// of range, restart at the same offset, and copy the batches and the gaps
// between them; the high watermark then passes them on every replica.
// After a leader change, the new leader's mirror appends continue at its
// log end.
func TestMirrorAppendReplicates(t *testing.T) {
	c := newTestCluster(t, []int32{1, 2, 3}, false)
	c.elect(1, []int32{1, 2, 3})
	res, err := c.parts[1].AppendMirror(slices.Concat(mirrorBatch(t, 100, 5), mirrorBatch(t, 110, 2)))
	if err != nil || res.FirstOffset != 100 || res.LastOffset != 111 {
		t.Fatalf("mirror append: %+v %v", res, err)
	}
	wantHW(t, c, map[int32]int64{1: 100})
	for _, id := range []int32{2, 3} {
		if got := mustFetch(t, c, id, 1<<20); got != "fetch offset=0 epoch=-1: out of range [100, 112] -> start=100 end=100" {
			t.Fatalf("replica %d's first fetch: %s", id, got)
		}
		c.catchUp(id)
	}
	for _, id := range []int32{2, 3} {
		c.catchUp(id) // learns the high watermark the other's fetch moved
		if d := c.sameLogs(1, id); d != "" {
			t.Fatal(d)
		}
	}
	wantHW(t, c, map[int32]int64{1: 112, 2: 112, 3: 112})

	c.elect(2, []int32{2, 3})
	if res, err := c.parts[2].AppendMirror(mirrorBatch(t, 110, 2)); err != nil || !res.Duplicate || res.FirstOffset != 110 {
		t.Fatalf("retry on the new leader: %+v %v", res, err)
	}
	if res, err := c.parts[2].AppendMirror(mirrorBatch(t, 120, 3)); err != nil || res.FirstOffset != 120 {
		t.Fatalf("mirror append on the new leader: %+v %v", res, err)
	}
	if _, err := c.parts[3].AppendMirror(mirrorBatch(t, 130, 1)); err == nil {
		t.Fatal("a follower took a mirror append")
	}
	c.catchUp(3)
	c.catchUp(3)
	if d := c.sameLogs(2, 3); d != "" {
		t.Fatal(d)
	}
	wantHW(t, c, map[int32]int64{2: 123, 3: 123})
}

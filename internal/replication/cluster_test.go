package replication

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/model"
	"github.com/samsa-io/samsa/internal/record"
	"github.com/samsa-io/samsa/internal/storage"
)

// testCluster is every replica of one partition in one process, each a
// Partition over a real log in a temporary directory, with the
// controller's view of the partition and a clock that moves only when
// told. fetchOnce is what the broker's fetcher does for one partition.
type testCluster struct {
	t       testing.TB
	now     time.Time
	lag     time.Duration
	durable bool
	ids     []int32
	parts   map[int32]*Partition
	logs    map[int32]*storage.Log
	ctl     State // the controller's state of the partition (Self unused)
	seq     int   // makes every produced record's value unique

	mu        sync.Mutex
	proposals []proposal
}

// proposal is one ProposeISR call.
type proposal struct {
	from                        int32
	leaderEpoch, partitionEpoch int32
	isr                         []int32
}

var testTP = model.TopicPartition{Topic: "t", Partition: 0}

func newTestCluster(t testing.TB, ids []int32, durable bool) *testCluster {
	t.Helper()
	c := &testCluster{t: t, now: time.Unix(1_000_000, 0), lag: 10 * time.Second, durable: durable,
		ids: ids, parts: map[int32]*Partition{}, logs: map[int32]*storage.Log{}}
	c.ctl = State{Leader: NoLeader, LeaderEpoch: 0, PartitionEpoch: 0, Replicas: slices.Clone(ids), ISR: slices.Clone(ids)}
	dir := t.TempDir()
	for _, id := range ids {
		c.openReplica(id, filepath.Join(dir, fmt.Sprintf("r%d", id), "t-0"))
	}
	return c
}

// openReplica opens replica id's log in dir and wraps it, with no role yet.
func (c *testCluster) openReplica(id int32, dir string) {
	c.t.Helper()
	cfg := storage.DefaultConfig()
	cfg.RetentionMs = -1
	l, err := storage.Open(dir, cfg, storage.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() { l.Close() })
	c.logs[id] = l
	c.parts[id] = NewReplica(testTP, model.TopicID{1}, l, Options{Durable: c.durable, ProposeISR: c.proposer(id)})
}

// restart closes replica id's log and opens it again, with the
// controller's state delivered to it; loseEpochs deletes its
// leader-epoch checkpoint between the two (a log copied without it, or
// an operator's mistake), so it reopens with no epochs.
func (c *testCluster) restart(id int32, loseEpochs bool) Transition {
	c.t.Helper()
	l := c.logs[id]
	if err := l.Close(); err != nil {
		c.t.Fatal(err)
	}
	if loseEpochs {
		if err := os.Remove(filepath.Join(l.Dir(), "leader-epoch-checkpoint")); err != nil {
			c.t.Fatal(err)
		}
	}
	c.openReplica(id, l.Dir())
	return c.deliver(id)[id]
}

func (c *testCluster) proposer(id int32) func(model.TopicPartition, int32, int32, []int32) {
	return func(_ model.TopicPartition, leaderEpoch, partitionEpoch int32, isr []int32) {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.proposals = append(c.proposals, proposal{from: id, leaderEpoch: leaderEpoch, partitionEpoch: partitionEpoch, isr: isr})
	}
}

// takeProposals returns and forgets the proposals made so far.
func (c *testCluster) takeProposals() []proposal {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.proposals
	c.proposals = nil
	return out
}

// elect makes the controller elect leader with isr in a new leader epoch,
// and delivers the state to the replicas in to (all when empty).
func (c *testCluster) elect(leader int32, isr []int32, to ...int32) map[int32]Transition {
	c.ctl.Leader, c.ctl.ISR = leader, slices.Clone(isr)
	c.ctl.LeaderEpoch++
	c.ctl.PartitionEpoch++
	return c.deliver(to...)
}

// deliver applies the controller's state on the replicas in to (all when
// empty), as a metadata image reaching them.
func (c *testCluster) deliver(to ...int32) map[int32]Transition {
	if len(to) == 0 {
		to = c.ids
	}
	out := map[int32]Transition{}
	for _, id := range to {
		st := c.ctl
		st.Self, st.LagTime = id, c.lag
		out[id] = c.parts[id].Apply(st, c.now)
	}
	return out
}

// commit is the controller's answer to a proposal: it commits the ISR when
// the proposal's epochs are current, as KIP-497 has it, and delivers the
// new state to every replica; otherwise it refuses it.
func (c *testCluster) commit(pr proposal) bool {
	if pr.leaderEpoch != c.ctl.LeaderEpoch || pr.partitionEpoch != c.ctl.PartitionEpoch {
		c.parts[pr.from].AlterPartitionFailed(pr.leaderEpoch, pr.partitionEpoch, pr.isr)
		return false
	}
	c.ctl.ISR = slices.Clone(pr.isr)
	c.ctl.PartitionEpoch++
	c.deliver()
	return true
}

// produce appends n one-record batches on replica id, as a producer with
// acks=1 would; it returns the offsets written.
func (c *testCluster) produce(id int32, n int) (first, last int64, err error) {
	return c.produceBatches(id, n, 1)
}

// produceBatches is produce with k records in each batch.
func (c *testCluster) produceBatches(id int32, n, k int) (first, last int64, err error) {
	first = -1
	for range n {
		b := record.Batch{ProducerID: record.NoProducerID, ProducerEpoch: record.NoProducerEpoch, BaseSequence: record.NoSequence}
		for j := range k {
			c.seq++
			b.Records = append(b.Records, record.Record{Offset: int64(j), Timestamp: int64(1000 + c.seq), Value: fmt.Appendf(nil, "v%d", c.seq)})
		}
		raw, err := b.AppendTo(nil)
		if err != nil {
			c.t.Fatal(err)
		}
		res, err := c.parts[id].Append(raw)
		if err != nil {
			return first, last, err
		}
		if first < 0 {
			first = res.FirstOffset
		}
		last = res.LastOffset
	}
	return first, last, nil
}

// fetchOnce is one fetch of follower id from the leader it knows, and
// what the follower does with the answer: append, truncate by epoch, or
// reset out of range. It describes the round; progress is false when the
// round brought nothing and cut nothing.
func (c *testCluster) fetchOnce(id int32, maxBytes int32) (desc string, progress bool, err error) {
	f := c.parts[id]
	pos, err := f.FetchState()
	if err != nil {
		return "", false, err
	}
	desc = fmt.Sprintf("fetch offset=%d epoch=%d", pos.FetchOffset, pos.LastFetchedEpoch)
	leader, ok := c.parts[pos.Leader]
	if !ok {
		return desc + ": no leader", false, nil
	}
	fr, err := leader.FollowerFetch(id, pos.FetchOffset, pos.LastFetchedEpoch, pos.LeaderEpoch, maxBytes, c.now)
	defer fr.Records.Release()
	switch {
	case errors.Is(err, storage.ErrOffsetOutOfRange):
		err = f.TruncateOutOfRange(fr.LogStartOffset, fr.LogEndOffset)
		return fmt.Sprintf("%s: out of range [%d, %d] -> start=%d end=%d", desc, fr.LogStartOffset, fr.LogEndOffset,
			f.LogStartOffset(), c.logs[id].LogEndOffset()), true, err
	case err != nil:
		return desc, false, err
	case fr.Diverged:
		off, done, err := f.TruncateDiverging(fr.DivergingEpoch)
		return fmt.Sprintf("%s: diverging epoch=%d end=%d -> truncate to %d done=%v",
			desc, fr.DivergingEpoch.Epoch, fr.DivergingEpoch.EndOffset, off, done), true, err
	}
	data, err := fr.Records.ReadAll()
	if err != nil {
		return desc, false, err
	}
	hwBefore := f.HighWatermark()
	fa, err := f.AppendAsFollower(data, fr.HighWatermark, fr.LogStartOffset)
	if err != nil {
		return desc, false, err
	}
	if fa.Truncated {
		from, to, _ := batchRange(firstBatch(data))
		return fmt.Sprintf("%s: batch %d-%d holds the log end -> truncate %d to %d, hw=%d", desc, from, to,
			fa.TruncatedFrom, fa.TruncatedTo, f.HighWatermark()), true, nil
	}
	got := "nothing"
	if from, to, ok := batchRange(wholeBatches(data)); ok {
		got = fmt.Sprintf("records %d-%d", from, to)
	}
	return fmt.Sprintf("%s: %s, leader hw=%d", desc, got, fr.HighWatermark),
		len(data) > 0 || f.HighWatermark() != hwBefore, nil
}

// catchUp fetches for follower id until a round changes nothing.
func (c *testCluster) catchUp(id int32) []string {
	c.t.Helper()
	var out []string
	for range 20 {
		desc, progress, err := c.fetchOnce(id, 1<<20)
		if err != nil {
			c.t.Fatalf("replica %d: %s: %v", id, desc, err)
		}
		out = append(out, desc)
		if !progress {
			return out
		}
	}
	c.t.Fatalf("replica %d: not caught up after 20 fetches: %v", id, out)
	return nil
}

// firstBatch is data's first batch, or data when it cannot be parsed.
func firstBatch(data []byte) []byte {
	h, err := record.ParseHeader(data)
	if err != nil || h.Size() > len(data) {
		return data
	}
	return data[:h.Size()]
}

// batchRange is the first and last offset of whole batches.
func batchRange(data []byte) (first, last int64, ok bool) {
	for pos := 0; pos < len(data); {
		h, err := record.ParseHeader(data[pos:])
		if err != nil {
			break
		}
		if !ok {
			first, ok = h.BaseOffset, true
		}
		last = h.LastOffset()
		pos += h.Size()
	}
	return first, last, ok
}

// logBatches is a log's batches by base offset, as bytes.
func logBatches(t testing.TB, l *storage.Log) map[int64][]byte {
	t.Helper()
	out := map[int64][]byte{}
	for off := l.LogStartOffset(); off < l.LogEndOffset(); {
		rr, err := l.Read(off, 1<<20, -1, true)
		if err != nil {
			t.Fatal(err)
		}
		data, err := rr.ReadAll()
		rr.Release()
		if err != nil || len(data) == 0 {
			t.Fatalf("read at %d: %d bytes, %v", off, len(data), err)
		}
		for pos := 0; pos < len(data); {
			h, err := record.ParseHeader(data[pos:])
			if err != nil || record.CheckComplete(&h, data[pos:]) != nil {
				break
			}
			out[h.BaseOffset] = data[pos : pos+h.Size()]
			off = h.NextOffset()
			pos += h.Size()
		}
	}
	return out
}

// sameLogs reports where two replicas' logs differ, batch by batch over
// the batches holding offsets both hold (a batch that straddles the later
// log start too), and in their ends; "" when they are identical.
func (c *testCluster) sameLogs(a, b int32) string {
	la, lb := c.logs[a], c.logs[b]
	if la.LogEndOffset() != lb.LogEndOffset() {
		return fmt.Sprintf("log ends %d and %d", la.LogEndOffset(), lb.LogEndOffset())
	}
	ba, bb := logBatches(c.t, la), logBatches(c.t, lb)
	from := max(la.LogStartOffset(), lb.LogStartOffset())
	below := func(batch []byte) bool {
		h, err := record.ParseHeader(batch)
		return err == nil && h.LastOffset() < from
	}
	for off, x := range ba {
		if below(x) {
			continue
		}
		if y, ok := bb[off]; !ok || !bytes.Equal(x, y) {
			return fmt.Sprintf("batch at %d differs", off)
		}
	}
	for off, y := range bb {
		if _, ok := ba[off]; !ok && !below(y) {
			return fmt.Sprintf("batch at %d only on %d", off, b)
		}
	}
	return ""
}

// describe is one replica's state in one line.
func (c *testCluster) describe(id int32) string {
	p, l := c.parts[id], c.logs[id]
	role := "follower"
	if p.IsLeader() {
		role = "leader"
	}
	var epochs []string
	for _, e := range l.Epochs() {
		epochs = append(epochs, fmt.Sprintf("%d@%d", e.Epoch, e.StartOffset))
	}
	durable := ""
	if c.durable {
		durable = fmt.Sprintf(" fsynced=%d", l.Offsets().RecoveryPoint)
	}
	return fmt.Sprintf("%d: %s of %d epoch=%d hw=%d start=%d end=%d%s isr=%v epochs=[%s]", id, role, p.Leader(), p.LeaderEpoch(),
		p.HighWatermark(), l.LogStartOffset(), l.LogEndOffset(), durable, p.ISR(), strings.Join(epochs, " "))
}

package storage

import (
	"bytes"
	"errors"
	"maps"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/samsa-io/samsa/internal/record"
	"github.com/samsa-io/samsa/internal/vfs"
	"pgregory.net/rapid"
)

// The replication property: two replicas, one leading, the other fed from
// the leader's reads in random chunk sizes. The leader takes appends from
// idempotent and transactional producers (retries, zombies, epoch bumps,
// commits and aborts) and bumps its leader epoch; leaderships change, and
// replicas close, crash and restart. A follower that the leader-epoch
// divergence check lets fetch holds a prefix of its leader's log: the same
// bytes below its end, the same EndOffsetForEpoch answers once caught up,
// and the same producer state. Every replica's epoch cache describes its
// own batches, and its producer state is what a replay of them gives.
//
// The divergence rules are internal/replication's DivergingEpoch and
// TruncationOffset, copied below: that package imports this one.

// divergingEpoch is replication.DivergingEpoch.
func divergingEpoch(leader func(int32) (int32, int64), fetchOffset int64, lastFetchedEpoch int32) (int32, int64, bool) {
	if lastFetchedEpoch < 0 {
		return 0, 0, true
	}
	epoch, end := leader(lastFetchedEpoch)
	if epoch == lastFetchedEpoch && end >= fetchOffset {
		return 0, 0, true
	}
	return epoch, end, false
}

// truncationOffset is replication.TruncationOffset.
func truncationOffset(follower func(int32) (int32, int64), logEnd, highWatermark int64, divEpoch int32, divEnd int64) int64 {
	if divEpoch < 0 {
		return min(highWatermark, logEnd)
	}
	epoch, end := follower(divEpoch)
	if epoch < 0 {
		return min(highWatermark, logEnd)
	}
	return min(divEnd, end, logEnd)
}

type replica struct {
	mem *vfs.Mem
	log *Log
	hw  int64 // the high watermark it last knew
}

type replicationMachine struct {
	cfg      Config
	replicas [2]*replica
	leader   int   // index of the leading replica
	epoch    int32 // the current leader epoch, the largest ever used
	// synced: the follower passed the divergence check since its log or
	// the leadership last changed, so its log is a prefix of the leader's.
	synced bool
	// startsMoved: a log start offset moved (DeleteRecords, a follower
	// restarted at its leader's start). Producer state then outlives the
	// batches that built it, and a replay from the log start no longer
	// gives it: the producer-state checks stop.
	startsMoved   bool
	deleteRecords bool // this run moves log starts
}

const replicationDir = "/data/repl-0"

func (m *replicationMachine) open(t *rapid.T, r *replica) {
	l, err := Open(replicationDir, m.cfg, Options{FS: r.mem, Logger: quiet})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	r.log = l
	r.hw = min(r.hw, l.LogEndOffset())
}

func (m *replicationMachine) lead() *replica   { return m.replicas[m.leader] }
func (m *replicationMachine) follow() *replica { return m.replicas[1-m.leader] }

// Producers 1 and 2 are idempotent, 3 and 4 transactional. What a
// producer sends next comes from the leader's state of it, as a client
// that follows the leader's answers would.
func (m *replicationMachine) producer(pid int64) (epoch int16, next int32, txnOpen bool, batches []ProducerBatch) {
	p, ok := m.lead().log.mu.producers.Producer(pid)
	if !ok {
		return 0, 0, false, nil
	}
	return p.Epoch, p.LastSeq() + 1, p.TxnFirstOffset >= 0, p.Batches
}

func (m *replicationMachine) produce(t *rapid.T, op producerOp) (AppendResult, error) {
	l := m.lead().log
	return l.AppendAsLeader(buildProducerBatch(t, op, 0), m.epoch)
}

func (m *replicationMachine) Produce(t *rapid.T) {
	pid := rapid.Int64Range(0, 4).Draw(t, "pid")
	op := producerOp{pid: pid, n: int32(rapid.IntRange(1, 4).Draw(t, "n")), txn: pid >= 3}
	if pid == 0 {
		op.pid, op.epoch, op.seq = -1, -1, -1
	} else {
		op.epoch, op.seq, _, _ = m.producer(pid)
	}
	if _, err := m.produce(t, op); err != nil {
		t.Fatalf("produce %+v: %v", op, err)
	}
}

func (m *replicationMachine) Retry(t *rapid.T) {
	pid := rapid.Int64Range(1, 4).Draw(t, "pid")
	epoch, _, _, batches := m.producer(pid)
	if len(batches) == 0 {
		return // no batch to retry
	}
	b := batches[rapid.IntRange(0, len(batches)-1).Draw(t, "batch")]
	op := producerOp{pid: pid, epoch: epoch, seq: b.FirstSeq, n: b.LastSeq - b.FirstSeq + 1, txn: pid >= 3}
	end := m.lead().log.LogEndOffset()
	res, err := m.produce(t, op)
	// Once a log start moved, a reopen rebuilds producer state from the
	// log start (as Kafka does) and forgets batches below it, so a bump
	// of the producer's epoch may be taken twice and the retry match the
	// older batch: only its being a duplicate is checked then.
	exact := m.startsMoved || (res.FirstOffset == b.FirstOffset && res.LastOffset == b.LastOffset)
	if err != nil || !res.Duplicate || !exact {
		t.Fatalf("retry of %+v: %+v %v, want a duplicate at %d..%d", op, res, err, b.FirstOffset, b.LastOffset)
	}
	if m.lead().log.LogEndOffset() != end {
		t.Fatal("a retry was written")
	}
}

func (m *replicationMachine) Zombie(t *rapid.T) {
	pid := rapid.Int64Range(1, 4).Draw(t, "pid")
	epoch, next, _, _ := m.producer(pid)
	if epoch <= 0 {
		return // no older epoch
	}
	op := producerOp{pid: pid, epoch: epoch - 1, seq: next, n: 1, txn: pid >= 3}
	if _, err := m.produce(t, op); !errors.Is(err, ErrInvalidProducerEpoch) {
		t.Fatalf("zombie %+v: %v, want ErrInvalidProducerEpoch", op, err)
	}
}

func (m *replicationMachine) BumpProducerEpoch(t *rapid.T) {
	pid := rapid.Int64Range(1, 4).Draw(t, "pid")
	epoch, _, open, batches := m.producer(pid)
	if open || len(batches) == 0 {
		return // a transaction is open, or the producer has no state
	}
	op := producerOp{pid: pid, epoch: epoch + 1, seq: 0, n: 1, txn: pid >= 3}
	if _, err := m.produce(t, op); err != nil {
		t.Fatalf("epoch bump %+v: %v", op, err)
	}
}

func (m *replicationMachine) EndTxn(t *rapid.T) {
	pid := rapid.Int64Range(3, 4).Draw(t, "pid")
	epoch, _, open, _ := m.producer(pid)
	if !open {
		return // no open transaction
	}
	op := producerOp{pid: pid, epoch: epoch, marker: true, abort: rapid.Bool().Draw(t, "abort")}
	if op.abort && rapid.Bool().Draw(t, "fence") {
		op.epoch++ // the coordinator aborts and fences the producer (InitProducerId)
	}
	if _, err := m.produce(t, op); err != nil {
		t.Fatalf("marker %+v: %v", op, err)
	}
}

// BumpLeaderEpoch: the leader is elected again, in a new epoch.
func (m *replicationMachine) BumpLeaderEpoch(t *rapid.T) {
	m.epoch++
	if err := m.lead().log.AssignEpoch(m.epoch); err != nil {
		t.Fatal(err)
	}
}

// Failover: the follower leads in a new epoch; the old leader follows and
// must find where its log left the new leader's.
func (m *replicationMachine) Failover(t *rapid.T) {
	m.leader = 1 - m.leader
	m.synced = false
	m.BumpLeaderEpoch(t)
}

func (m *replicationMachine) Replicate(t *rapid.T) {
	maxBytes := int32(rapid.IntRange(1, 3000).Draw(t, "maxBytes"))
	for range rapid.IntRange(1, 5).Draw(t, "fetches") {
		if !m.fetch(t, maxBytes) {
			return
		}
	}
}

// CatchUp: with the leadership stable, a few fetches bring the follower
// level with its leader, whatever its log held: divergence, truncation
// and refetch always converge.
func (m *replicationMachine) CatchUp(t *rapid.T) {
	for range 10 {
		if !m.fetch(t, 1<<20) && m.synced {
			break
		}
	}
	if l, f := m.lead().log.LogEndOffset(), m.follow().log.LogEndOffset(); !m.synced || l != f {
		t.Fatalf("after 10 fetches the follower is at %d (epochs %v), the leader at %d (epochs %v), synced %v",
			f, m.follow().log.Epochs(), l, m.lead().log.Epochs(), m.synced)
	}
}

// fetch is one follower fetch and what the follower does with the
// answer; false when there was nothing to fetch.
func (m *replicationMachine) fetch(t *rapid.T, maxBytes int32) bool {
	l, f := m.lead(), m.follow()
	fetchOffset := f.log.LogEndOffset()
	last := int32(-1)
	if ep, ok := f.log.LatestEpoch(); ok {
		last = ep.Epoch
	}
	if divEpoch, divEnd, ok := divergingEpoch(l.log.EndOffsetForEpoch, fetchOffset, last); !ok {
		off := truncationOffset(f.log.EndOffsetForEpoch, fetchOffset, f.hw, divEpoch, divEnd)
		if err := f.log.TruncateTo(off); err != nil {
			t.Fatalf("truncate to %d: %v", off, err)
		}
		f.hw = min(f.hw, f.log.LogEndOffset())
		return true
	}
	lo := l.log.Offsets()
	switch {
	case fetchOffset < lo.LogStartOffset: // OFFSET_OUT_OF_RANGE, below
		m.startsMoved = true
		if err := f.log.TruncateFullyAndStartAt(lo.LogStartOffset); err != nil {
			t.Fatal(err)
		}
		return true
	case fetchOffset > lo.LogEndOffset: // OFFSET_OUT_OF_RANGE, past the end
		if err := f.log.TruncateTo(lo.LogEndOffset); err != nil {
			t.Fatal(err)
		}
		return true
	}
	m.synced = true
	l.hw = max(l.hw, fetchOffset)
	data := readAt(t, l.log, fetchOffset, maxBytes)
	if len(data) > 0 {
		_, err := f.log.AppendAsFollower(data)
		if h, _ := record.ParseHeader(data); errors.Is(err, ErrInvalidOffset) && h.BaseOffset < fetchOffset {
			// The leader's first batch holds offsets below our end: its
			// log start fell inside the batch, and the epochs of what our
			// log holds there are gone from its cache, so the divergence
			// check could not see that we differ. The batch says so:
			// truncate to its base and fetch again.
			if err := f.log.TruncateTo(h.BaseOffset); err != nil {
				t.Fatal(err)
			}
			m.synced = false
			return true
		}
		if err != nil {
			t.Fatalf("follower append at %d: %v", fetchOffset, err)
		}
	}
	fo := f.log.Offsets()
	if start := min(lo.LogStartOffset, fo.LogEndOffset); start > fo.LogStartOffset {
		if err := f.log.SetLogStartOffset(start); err != nil {
			t.Fatal(err)
		}
	}
	f.hw = min(l.hw, fo.LogEndOffset)
	return len(data) > 0
}

// readAt is a fetch's read: whole batches from off, at least one.
func readAt(t fataler, l *Log, off int64, maxBytes int32) []byte {
	t.Helper()
	rr, err := l.Read(off, maxBytes, -1, true)
	if err != nil {
		t.Fatalf("read at %d: %v", off, err)
	}
	defer rr.Release()
	data, err := rr.ReadAll()
	if err != nil {
		t.Fatalf("read at %d: %v", off, err)
	}
	return trimPartial(data)
}

func (m *replicationMachine) DeleteRecords(t *rapid.T) {
	if !m.deleteRecords {
		return // log starts stay in this run
	}
	o := m.lead().log.Offsets()
	to := rapid.Int64Range(o.LogStartOffset, o.LogEndOffset).Draw(t, "logStart")
	if err := m.lead().log.SetLogStartOffset(to); err != nil {
		t.Fatal(err)
	}
	m.startsMoved = m.startsMoved || to > o.LogStartOffset
}

func (m *replicationMachine) Flush(t *rapid.T) {
	if err := m.replicas[rapid.IntRange(0, 1).Draw(t, "replica")].log.Flush(); err != nil {
		t.Fatal(err)
	}
}

// Reopen closes and opens a replica. Opening drops an epoch begun with
// nothing written yet, as Kafka's loader does, so a reopened leader is
// elected again, in a new epoch, as a restarted broker would be.
func (m *replicationMachine) Reopen(t *rapid.T) {
	i := rapid.IntRange(0, 1).Draw(t, "replica")
	r := m.replicas[i]
	if err := r.log.Close(); err != nil {
		t.Fatal(err)
	}
	m.open(t, r)
	if i == m.leader {
		m.BumpLeaderEpoch(t)
	}
}

// Crash loses what a replica had not synced; a leader that crashes loses
// the leadership.
func (m *replicationMachine) Crash(t *rapid.T) {
	i := rapid.IntRange(0, 1).Draw(t, "replica")
	r := m.replicas[i]
	crashed := r.mem.CrashClone(vfs.CrashLoseUnsynced, nil)
	r.log.Close()
	r.mem = crashed
	m.open(t, r)
	m.synced = false
	if i == m.leader {
		m.Failover(t)
	}
}

func (m *replicationMachine) Check(t *rapid.T) {
	for _, r := range m.replicas {
		checkEpochsDescribeBatches(t, r.log)
		if !m.startsMoved {
			checkProducersReplay(t, r.log)
		}
	}
	if !m.synced {
		return
	}
	l, f := m.lead().log, m.follow().log
	lb := map[int64][]byte{}
	for _, b := range readBatches(t, l) {
		h, _ := record.ParseHeader(b)
		lb[h.BaseOffset] = b
	}
	lo, fo := l.Offsets(), f.Offsets()
	for _, b := range readBatches(t, f) {
		h, _ := record.ParseHeader(b)
		if h.BaseOffset < lo.LogStartOffset {
			continue // below the leader's start: gone there
		}
		if want, ok := lb[h.BaseOffset]; !ok || !bytes.Equal(b, want) {
			t.Fatalf("follower batch at %d (log end %d) is not the leader's (found %v, leader end %d)", h.BaseOffset, fo.LogEndOffset, ok, lo.LogEndOffset)
		}
	}
	if fo.LogEndOffset > lo.LogEndOffset {
		t.Fatalf("follower log end %d past the leader's %d", fo.LogEndOffset, lo.LogEndOffset)
	}
	if fo.LogEndOffset != lo.LogEndOffset {
		return
	}
	checkEpochsAgreeCaughtUp(t, l, f)
	if !m.startsMoved {
		if diff := cmp.Diff(l.Producers(), f.Producers(), cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("producer state (-leader +follower):\n%s", diff)
		}
		if lu, fu := l.FirstUnstableOffset(), f.FirstUnstableOffset(); lu != fu {
			t.Fatalf("first unstable offset: leader %d, follower %d", lu, fu)
		}
		if diff := cmp.Diff(l.AbortedTransactions(0, lo.LogEndOffset), f.AbortedTransactions(0, fo.LogEndOffset), cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("aborted transactions (-leader +follower):\n%s", diff)
		}
	}
}

// checkEpochsAgreeCaughtUp: a follower at its leader's end answers
// OffsetForLeaderEpoch as the leader does, for every epoch from the
// oldest both still know to the one before an epoch the leader began
// without writing in yet (which the follower cannot know).
func checkEpochsAgreeCaughtUp(t *rapid.T, l, f *Log) {
	le, fe := l.Epochs(), f.Epochs()
	if len(le) == 0 || len(fe) == 0 {
		if len(le) != len(fe) && l.LogEndOffset() > max(l.LogStartOffset(), f.LogStartOffset()) {
			t.Fatalf("leader epochs %v, follower %v", le, fe)
		}
		return
	}
	from := max(le[0].Epoch, fe[0].Epoch)
	through := le[len(le)-1].Epoch + 1
	if last := le[len(le)-1]; last.StartOffset == l.LogEndOffset() {
		through = last.Epoch - 1
	}
	for e := from; e <= through; e++ {
		lep, lend := l.EndOffsetForEpoch(e)
		fep, fend := f.EndOffsetForEpoch(e)
		if lep != fep || lend != fend {
			t.Fatalf("EndOffsetForEpoch(%d): leader %d/%d, follower %d/%d (leader epochs %v, follower %v)", e, lep, lend, fep, fend, le, fe)
		}
	}
}

// checkEpochsDescribeBatches: a log's epoch cache is the lineage of its
// batches: an entry where each new partition leader epoch begins (the
// first at the log start), and at most one more at the log end, an epoch
// begun without a batch yet.
func checkEpochsDescribeBatches(t *rapid.T, l *Log) {
	o := l.Offsets()
	var want []EpochEntry
	for _, b := range readBatches(t, l) {
		h, _ := record.ParseHeader(b)
		if n := len(want); n == 0 || h.PartitionLeaderEpoch > want[n-1].Epoch {
			want = append(want, EpochEntry{h.PartitionLeaderEpoch, max(h.BaseOffset, o.LogStartOffset)})
		} else if h.PartitionLeaderEpoch < want[n-1].Epoch {
			t.Fatalf("batch at %d has epoch %d after epoch %d", h.BaseOffset, h.PartitionLeaderEpoch, want[n-1].Epoch)
		}
	}
	got := l.Epochs()
	if n := len(got); n > len(want) && n == len(want)+1 && got[n-1].StartOffset == o.LogEndOffset &&
		(len(want) == 0 || got[n-1].Epoch > want[len(want)-1].Epoch) {
		got = got[:n-1]
	}
	if !slices.Equal(got, want) {
		t.Fatalf("epochs %v, the batches [%d, %d) say %v", l.Epochs(), o.LogStartOffset, o.LogEndOffset, want)
	}
}

// checkProducersReplay: a log's producer state, however it was built
// (appends as leader or follower, truncations, snapshots and replays), is
// what replaying its batches from the start gives.
func checkProducersReplay(t fataler, l *Log) {
	t.Helper()
	want := NewProducerStateTable()
	for _, b := range readBatches(t, l) {
		if err := want.UpdateBatch(b); err != nil {
			t.Fatalf("replay: %v", err)
		}
	}
	l.mu.RLock()
	got := l.mu.producers
	diffs := []string{
		cmp.Diff(want.Producers(), got.Producers(), cmpopts.EquateEmpty()),
		cmp.Diff(want.AbortedIndex(), got.AbortedIndex(), cmpopts.EquateEmpty()),
	}
	gu, wu := got.FirstUnstableOffset(), want.FirstUnstableOffset()
	l.mu.RUnlock()
	for _, d := range diffs {
		if d != "" {
			t.Fatalf("producer state in %s differs from a replay of its batches (-replay +log):\n%s", l.dir, d)
		}
	}
	if gu != wu {
		t.Fatalf("first unstable offset %d, a replay gives %d", gu, wu)
	}
}

func TestFollowerReplicatesLeader(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cfg := DefaultConfig()
		cfg.SegmentBytes = int64(rapid.IntRange(400, 4000).Draw(t, "segmentBytes"))
		cfg.IndexIntervalBytes = int64(rapid.IntRange(1, 1000).Draw(t, "indexInterval"))
		cfg.RetentionMs = -1
		m := &replicationMachine{cfg: cfg, deleteRecords: rapid.Bool().Draw(t, "deleteRecords")}
		for i := range m.replicas {
			m.replicas[i] = &replica{mem: vfs.NewMem()}
			m.open(t, m.replicas[i])
		}
		defer func() {
			for _, r := range m.replicas {
				r.log.Close()
			}
		}()
		// Long runs rather than rapid's short Repeat: the interesting
		// states (two transactions open, a failover in the middle, a
		// fetch that carries a marker and other producers' batches) take
		// many steps to reach.
		actions := map[string]func(*rapid.T){
			"Produce": m.Produce, "Retry": m.Retry, "Zombie": m.Zombie,
			"BumpProducerEpoch": m.BumpProducerEpoch, "EndTxn": m.EndTxn,
			"BumpLeaderEpoch": m.BumpLeaderEpoch, "Failover": m.Failover,
			"Replicate": m.Replicate, "CatchUp": m.CatchUp, "DeleteRecords": m.DeleteRecords,
			"Flush": m.Flush, "Reopen": m.Reopen, "Crash": m.Crash,
		}
		names := slices.Sorted(maps.Keys(actions))
		// Weights: more batches, markers and fetches than anything else.
		names = append(names, "Produce", "Produce", "EndTxn", "Replicate")
		for range rapid.IntRange(50, 250).Draw(t, "steps") {
			actions[rapid.SampledFrom(names).Draw(t, "action")](t)
			m.Check(t)
		}
	})
}

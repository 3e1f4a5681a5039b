package storage

import (
	"bytes"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/samsa-io/samsa/internal/record"
	"github.com/samsa-io/samsa/internal/vfs"
)

// leaderBatch is a batch of n records as a leader wrote it: at base, in
// partition leader epoch epoch.
func leaderBatch(t testing.TB, base int64, n int, epoch int32) []byte {
	t.Helper()
	b := makeBatch(t, n, base, "f", 10)
	record.AssignOffsets(b, base, epoch, -1)
	return b
}

// A follower append keeps the leader's batches as they are, and takes
// only batches that continue its log: from its end, one after the other,
// with gaps on any log (a mirror topic's leader has them outside
// compaction, TestFollowerGapSurvivesRecovery). A refused append leaves the log as
// it was and usable.
func TestAppendAsFollowerOffsets(t *testing.T) {
	cat := func(batches ...[]byte) []byte { return bytes.Join(batches, nil) }
	cases := []struct {
		name      string
		compacted bool
		data      func(t testing.TB) []byte
		wantEnd   int64
		wantErr   error
	}{
		{"at the log end", false, func(t testing.TB) []byte { return cat(leaderBatch(t, 10, 2, 1), leaderBatch(t, 12, 3, 1)) }, 15, nil},
		{"gap before the first batch", false, func(t testing.TB) []byte { return leaderBatch(t, 11, 2, 1) }, 13, nil},
		{"gap before the first batch, compacted", true, func(t testing.TB) []byte { return leaderBatch(t, 11, 2, 1) }, 13, nil},
		{"gap between batches", false, func(t testing.TB) []byte { return cat(leaderBatch(t, 10, 2, 1), leaderBatch(t, 13, 1, 1)) }, 14, nil},
		{"gap between batches, compacted", true, func(t testing.TB) []byte { return cat(leaderBatch(t, 10, 2, 1), leaderBatch(t, 13, 1, 1)) }, 14, nil},
		{"below the log end", false, func(t testing.TB) []byte { return leaderBatch(t, 9, 2, 1) }, 10, ErrInvalidOffset},
		{"below the log end, compacted", true, func(t testing.TB) []byte { return leaderBatch(t, 9, 2, 1) }, 10, ErrInvalidOffset},
		{"overlapping batches, compacted", true, func(t testing.TB) []byte { return cat(leaderBatch(t, 10, 3, 1), leaderBatch(t, 12, 2, 1)) }, 10, ErrInvalidOffset},
		{"bad CRC", false, func(t testing.TB) []byte {
			b := leaderBatch(t, 10, 2, 1)
			b[len(b)-1] ^= 0xff
			return b
		}, 10, record.ErrCorrupt},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			cfg := testConfig()
			cfg.Compacted = c.compacted
			l := e.open(cfg)
			defer l.Close()
			for _, b := range [][]byte{leaderBatch(t, 0, 4, 0), leaderBatch(t, 4, 6, 1)} {
				if _, err := l.AppendAsFollower(b); err != nil {
					t.Fatal(err)
				}
			}
			data := c.data(t)
			want := bytes.Clone(data)
			_, err := l.AppendAsFollower(data)
			if !errors.Is(err, c.wantErr) || (err != nil) != (c.wantErr != nil) {
				t.Fatalf("append: %v, want %v", err, c.wantErr)
			}
			if got := l.LogEndOffset(); got != c.wantEnd {
				t.Fatalf("log end %d, want %d", got, c.wantEnd)
			}
			if err == nil {
				got := readBatches(t, l)
				if tail := bytes.Join(got[2:], nil); !bytes.Equal(tail, want) {
					t.Fatalf("the follower's batches differ from the leader's at byte %d", firstDifference(tail, want))
				}
			}
			if _, err := l.AppendAsFollower(leaderBatch(t, c.wantEnd, 1, 1)); err != nil {
				t.Fatalf("log unusable after the append: %v", err)
			}
		})
	}
}

// The leader's log start fell inside a batch (DeleteRecords at 12 in
// 10..14): a follower that started its empty log at 12 takes the batch
// whole, keeps 12 as its log start, and reopens so. A log that is not
// empty takes no batch that starts below its end.
func TestAppendAsFollowerStraddlingLogStart(t *testing.T) {
	e := newEnv(t)
	l := e.open(testConfig())
	if err := l.TruncateFullyAndStartAt(12); err != nil {
		t.Fatal(err)
	}
	b := leaderBatch(t, 10, 5, 3)
	if _, err := l.AppendAsFollower(bytes.Clone(b)); err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		if o := l.Offsets(); o.LogStartOffset != 12 || o.LogEndOffset != 15 {
			t.Fatalf("%s: log start %d, end %d; want 12, 15", when, o.LogStartOffset, o.LogEndOffset)
		}
		if got := readBatches(t, l); len(got) != 1 || !bytes.Equal(got[0], b) {
			t.Fatalf("%s: read %d batches, not the leader's", when, len(got))
		}
	}
	check("after the append")
	if _, err := l.AppendAsFollower(leaderBatch(t, 14, 2, 3)); !errors.Is(err, ErrInvalidOffset) {
		t.Fatalf("batch below the end of a log that is not empty: %v", err)
	}
	l.Close()
	l = e.open(testConfig())
	defer l.Close()
	check("after reopen")
}

// readFrom returns the whole batches of l from offset on, as a fetch
// would send them.
func readFrom(t fataler, l *Log, off int64) []byte {
	t.Helper()
	rr, err := l.Read(off, 1<<20, -1, true)
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

// checkEpochsAgree compares EndOffsetForEpoch on two logs for every epoch
// from -1 to through.
func checkEpochsAgree(t fataler, leader, follower *Log, through int32) {
	t.Helper()
	for e := int32(-1); e <= through; e++ {
		le, lo := leader.EndOffsetForEpoch(e)
		fe, fo := follower.EndOffsetForEpoch(e)
		if le != fe || lo != fo {
			t.Fatalf("EndOffsetForEpoch(%d): leader %d/%d, follower %d/%d (leader epochs %v, follower %v)",
				e, le, lo, fe, fo, leader.Epochs(), follower.Epochs())
		}
	}
}

// A follower learns each new epoch from its batches, so it answers
// OffsetForLeaderEpoch as its leader does, epochs a leader began without
// writing included; a batch whose epoch goes back is refused.
func TestFollowerLearnsLeaderEpochs(t *testing.T) {
	le, fe := newEnv(t), newEnv(t)
	leader, follower := le.open(testConfig()), fe.open(testConfig())
	defer leader.Close()
	defer follower.Close()
	// Epoch 1 and 3 were begun on the leader and never written in: 2
	// and 4 took over at the same offsets.
	for _, step := range []struct {
		assign, write int32
	}{{-1, 0}, {-1, 0}, {1, 2}, {-1, 2}, {3, -1}, {4, 5}, {-1, 5}} {
		if step.assign >= 0 {
			if err := leader.AssignEpoch(step.assign); err != nil {
				t.Fatal(err)
			}
		}
		if step.write >= 0 {
			if _, err := leader.AppendAsLeader(makeBatch(t, 2, 1, "l", 10), step.write); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The follower, too, began an epoch (7) as a short-lived leader with
	// nothing written; the leader's batches take its place.
	if err := follower.AssignEpoch(7); err != nil {
		t.Fatal(err)
	}
	if _, err := follower.AppendAsFollower(readFrom(t, leader, 0)); err != nil {
		t.Fatal(err)
	}
	want := []EpochEntry{{0, 0}, {2, 4}, {5, 8}}
	if got := leader.Epochs(); !slices.Equal(got, want) {
		t.Fatalf("leader epochs %v, want %v", got, want)
	}
	if got := follower.Epochs(); !slices.Equal(got, want) {
		t.Fatalf("follower epochs %v, want %v", got, want)
	}
	checkEpochsAgree(t, leader, follower, 8)

	end := follower.LogEndOffset()
	if _, err := follower.AppendAsFollower(leaderBatch(t, end, 1, 4)); !errors.Is(err, ErrLeaderEpochRegression) {
		t.Fatalf("batch of epoch 4 after epoch 5: %v", err)
	}
	two := bytes.Join([][]byte{leaderBatch(t, end, 1, 6), leaderBatch(t, end+1, 1, 5)}, nil)
	if _, err := follower.AppendAsFollower(two); !errors.Is(err, ErrLeaderEpochRegression) {
		t.Fatalf("epoch 5 after 6 in one append: %v", err)
	}
	if follower.LogEndOffset() != end || !slices.Equal(follower.Epochs(), want) {
		t.Fatalf("a refused append changed the log: end %d, epochs %v", follower.LogEndOffset(), follower.Epochs())
	}
}

// Truncation trims the epoch cache, durably: TruncateTo at the log end
// drops an epoch begun and never written, and TruncateFullyAndStartAt
// drops every epoch, so the follower fetches again with no last epoch
// rather than one that describes none of its batches.
func TestTruncationTrimsEpochs(t *testing.T) {
	e := newEnv(t)
	l := e.open(testConfig())
	for _, b := range [][]byte{leaderBatch(t, 0, 4, 0), leaderBatch(t, 4, 4, 2)} {
		if _, err := l.AppendAsFollower(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := l.AssignEpoch(3); err != nil { // a short leadership, nothing written
		t.Fatal(err)
	}
	want := []EpochEntry{{0, 0}, {2, 4}}
	crashed := func() *Log {
		t.Helper()
		e.fs = e.mem.CrashClone(vfs.CrashLoseUnsynced, nil)
		l.Close()
		l = e.open(testConfig())
		e.mem = e.fs.(*vfs.Mem)
		return l
	}
	for _, off := range []int64{8, 100} {
		if err := l.TruncateTo(off); err != nil {
			t.Fatal(err)
		}
		if got := l.Epochs(); !slices.Equal(got, want) {
			t.Fatalf("TruncateTo(%d) at log end 8: epochs %v, want %v", off, got, want)
		}
	}
	l = crashed()
	if got := l.Epochs(); !slices.Equal(got, want) {
		t.Fatalf("after a crash: epochs %v, want %v", got, want)
	}

	if err := l.TruncateFullyAndStartAt(20); err != nil {
		t.Fatal(err)
	}
	empty := func(when string) {
		t.Helper()
		if ep, ok := l.LatestEpoch(); ok {
			t.Fatalf("%s: latest epoch %+v, want none", when, ep)
		}
		for ep := int32(0); ep < 4; ep++ {
			if got, end := l.EndOffsetForEpoch(ep); got != -1 || end != -1 {
				t.Fatalf("%s: EndOffsetForEpoch(%d) = %d/%d, want -1/-1", when, ep, got, end)
			}
		}
	}
	empty("after TruncateFullyAndStartAt")
	l = crashed()
	empty("after a crash")
	if _, err := l.AppendAsFollower(leaderBatch(t, 20, 2, 1)); err != nil {
		t.Fatalf("epoch 1 at the new start: %v", err)
	}
	if got := l.Epochs(); !slices.Equal(got, []EpochEntry{{1, 20}}) {
		t.Fatalf("epochs %v after the first batch", got)
	}
	l.Close()
}

// A follower builds its producer state from the leader's batches, so once
// promoted it answers a producer's retry of a batch it holds as a
// duplicate, with the leader's offsets, and fences a zombie's old epoch,
// as the old leader would have.
func TestPromotedFollowerDedupesAndFences(t *testing.T) {
	le, fe := newEnv(t), newEnv(t)
	leader, follower := le.open(testConfig()), fe.open(testConfig())
	defer leader.Close()
	appendL := func(op producerOp) AppendResult {
		t.Helper()
		res, err := leader.AppendAsLeader(buildProducerBatch(t, op, 0), 0)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	first := appendL(producerOp{pid: 7, epoch: 0, seq: 0, n: 3})
	appendL(producerOp{pid: 9, epoch: 2, seq: 0, n: 2, txn: true})
	second := appendL(producerOp{pid: 7, epoch: 0, seq: 3, n: 2})
	appendL(producerOp{pid: 9, epoch: 2, marker: true, coordinatorEpoch: 1})
	appendL(producerOp{pid: 11, epoch: 0, seq: 0, n: 1, txn: true})
	appendL(producerOp{pid: 9, epoch: 2, seq: 2, n: 1, txn: true}) // stays open
	appendL(producerOp{pid: 11, epoch: 0, marker: true, abort: true, coordinatorEpoch: 1})

	// Replicate two batches at a time, so markers share appends with
	// other producers' batches; reopen the follower halfway.
	for off := int64(0); off < leader.LogEndOffset(); {
		data := readFrom(t, leader, off)
		var chunk []byte
		for n := 0; n < 2 && len(data) > 0; n++ {
			h, _ := record.ParseHeader(data)
			chunk, data, off = append(chunk, data[:h.Size()]...), data[h.Size():], h.NextOffset()
		}
		if _, err := follower.AppendAsFollower(chunk); err != nil {
			t.Fatal(err)
		}
		if off == 8 {
			follower.Close()
			follower = fe.open(testConfig())
		}
	}
	defer follower.Close()
	if diff := cmp.Diff(leader.Producers(), follower.Producers()); diff != "" {
		t.Fatalf("producer state (-leader +follower):\n%s", diff)
	}
	end := leader.LogEndOffset()
	if l, f := leader.FirstUnstableOffset(), follower.FirstUnstableOffset(); l != f || f < 0 {
		t.Fatalf("first unstable offset: leader %d, follower %d", l, f)
	}
	if diff := cmp.Diff(leader.AbortedTransactions(0, end), follower.AbortedTransactions(0, end)); diff != "" {
		t.Fatalf("aborted transactions (-leader +follower):\n%s", diff)
	}

	if err := follower.AssignEpoch(1); err != nil { // promoted
		t.Fatal(err)
	}
	for _, c := range []struct {
		seq, n int32
		want   AppendResult
	}{{0, 3, first}, {3, 2, second}} {
		res, err := follower.AppendAsLeader(buildProducerBatch(t, producerOp{pid: 7, epoch: 0, seq: c.seq, n: c.n}, 0), 1)
		if err != nil || !res.Duplicate || res.FirstOffset != c.want.FirstOffset || res.LastOffset != c.want.LastOffset {
			t.Fatalf("retry of sequence %d on the promoted follower: %+v %v, want a duplicate at %d..%d", c.seq, res, err, c.want.FirstOffset, c.want.LastOffset)
		}
	}
	if follower.LogEndOffset() != end {
		t.Fatal("a retry was written")
	}
	for _, c := range []struct {
		op   producerOp
		want error
	}{
		{producerOp{pid: 7, epoch: 0, seq: 6, n: 1}, ErrOutOfOrderSequence},
		{producerOp{pid: 9, epoch: 1, seq: 3, n: 1, txn: true}, ErrInvalidProducerEpoch},
		{producerOp{pid: 9, epoch: 2, seq: 3, n: 1}, ErrInvalidTxnState},
	} {
		if _, err := follower.AppendAsLeader(buildProducerBatch(t, c.op, 0), 1); !errors.Is(err, c.want) {
			t.Fatalf("%+v on the promoted follower: %v, want %v", c.op, err, c.want)
		}
	}
	if res, err := follower.AppendAsLeader(buildProducerBatch(t, producerOp{pid: 7, epoch: 0, seq: 5, n: 1}, 0), 1); err != nil || res.Duplicate || res.FirstOffset != end {
		t.Fatalf("the next sequence on the promoted follower: %+v %v", res, err)
	}
}

// Reopening moves the epochs to the log start before it cuts them at the
// log end: an epoch that began below the start of an empty log (here the
// checkpoint as a crash left it before the start moved, or before a
// follower's straddling batch was synced) would otherwise stay, at the log
// end, with no batch.
func TestReopenDropsAnEpochLeftAtAnEmptyEnd(t *testing.T) {
	e := newEnv(t)
	l := e.open(testConfig())
	for i := range 5 {
		if _, err := l.AppendAsLeader(makeBatch(t, 2, int64(i), "x", 10), 2); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.SetLogStartOffset(10); err != nil {
		t.Fatal(err)
	}
	l.Close()
	if err := vfs.WriteFileAtomic(e.fs, filepath.Join(e.dir, epochFile), []byte("0\n1\n2 0\n")); err != nil {
		t.Fatal(err)
	}
	l = e.open(testConfig())
	defer l.Close()
	if o := l.Offsets(); o.LogStartOffset != 10 || o.LogEndOffset != 10 {
		t.Fatalf("offsets %+v", o)
	}
	if got := l.Epochs(); len(got) != 0 {
		t.Fatalf("epochs %v on an empty log", got)
	}
}

// A compacted follower rolls at its log end, not at the first batch of
// the append, which the leader's cleaner may have left past it: a segment
// that ends short of the next one's base looks, to recovery, like one
// that lost its tail, and the segments after it would go, synced batches
// and all.
func TestCompactedFollowerRollsAtTheLogEnd(t *testing.T) {
	e := newEnv(t)
	cfg := testConfig()
	cfg.Compacted, cfg.Deletes = true, false
	l := e.open(cfg)
	if _, err := l.AppendAsFollower(leaderBatch(t, 0, 8, 0)); err != nil {
		t.Fatal(err)
	}
	big := makeBatch(t, 2, 1, "big", int(cfg.SegmentBytes)) // rolls
	record.AssignOffsets(big, 20, 0, -1)
	if _, err := l.AppendAsFollower(big); err != nil {
		t.Fatal(err)
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	e.fs = e.mem.CrashClone(vfs.CrashLoseUnsynced, nil)
	l.Close()
	l = e.open(cfg)
	defer l.Close()
	if got := l.LogEndOffset(); got != 22 {
		t.Fatalf("log end %d after a crash, want the synced 22", got)
	}
}

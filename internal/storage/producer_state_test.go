package storage

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/samsa-io/samsa/internal/record"
	"github.com/samsa-io/samsa/internal/vfs"
	"pgregory.net/rapid"
)

// pHeader is the header of a data batch of n records from producer pid at
// epoch with base sequence seq, appended at offset base, timestamp base.
func pHeader(pid int64, epoch int16, seq, n int32, base int64) *record.Header {
	return &record.Header{BaseOffset: base, LastOffsetDelta: n - 1, MaxTimestamp: base, ProducerID: pid, ProducerEpoch: epoch, BaseSequence: seq, NumRecords: n}
}

func txnHeader(pid int64, epoch int16, seq, n int32, base int64) *record.Header {
	h := pHeader(pid, epoch, seq, n, base)
	h.Attributes |= record.TransactionalMask
	return h
}

func markerHeader(pid int64, epoch int16, off int64) *record.Header {
	return &record.Header{BaseOffset: off, MaxTimestamp: off, ProducerID: pid, ProducerEpoch: epoch, BaseSequence: -1, NumRecords: 1,
		Attributes: record.TransactionalMask | record.ControlMask}
}

// checkFixture: producer 1 at epoch 3 appended six batches (the first is
// no longer retained); producer 2 ended at sequence MaxInt32; producer 3
// has a transaction ongoing; producer 4's epoch was bumped by a marker.
func checkFixture() *ProducerStateTable {
	t := NewProducerStateTable()
	for _, b := range []struct {
		seq, n int32
		off    int64
	}{{0, 2, 0}, {2, 3, 2}, {5, 1, 5}, {6, 4, 6}, {10, 1, 10}, {11, 2, 11}} {
		t.Update(pHeader(1, 3, b.seq, b.n, b.off))
	}
	t.Update(pHeader(2, 0, math.MaxInt32-3, 4, 20))
	t.Update(txnHeader(3, 0, 0, 1, 30))
	t.Update(pHeader(4, 0, 0, 3, 40))
	t.UpdateMarker(markerHeader(4, 1, 43), true, 0)
	return t
}

func TestProducerCheck(t *testing.T) {
	dup := func(first, last int32, fo, lo int64) *DuplicateBatch {
		return &DuplicateBatch{FirstSeq: first, LastSeq: last, FirstOffset: fo, LastOffset: lo, Timestamp: fo}
	}
	tests := []struct {
		name string
		h    *record.Header
		dup  *DuplicateBatch
		err  error
	}{
		{"next sequence", pHeader(1, 3, 13, 1, 100), nil, nil},
		{"duplicate of 5th newest", pHeader(1, 3, 2, 3, 100), dup(2, 4, 2, 4), nil},
		{"duplicate of 4th newest", pHeader(1, 3, 5, 1, 100), dup(5, 5, 5, 5), nil},
		{"duplicate of 3rd newest", pHeader(1, 3, 6, 4, 100), dup(6, 9, 6, 9), nil},
		{"duplicate of 2nd newest", pHeader(1, 3, 10, 1, 100), dup(10, 10, 10, 10), nil},
		{"duplicate of newest", pHeader(1, 3, 11, 2, 100), dup(11, 12, 11, 12), nil},
		{"no longer retained", pHeader(1, 3, 0, 2, 100), nil, ErrOutOfOrderSequence},
		{"same first seq, other last seq", pHeader(1, 3, 11, 1, 100), nil, ErrOutOfOrderSequence},
		{"gap", pHeader(1, 3, 14, 1, 100), nil, ErrOutOfOrderSequence},
		{"old epoch", pHeader(1, 2, 13, 1, 100), nil, ErrInvalidProducerEpoch},
		{"old epoch, duplicate sequences", pHeader(1, 2, 11, 2, 100), nil, ErrInvalidProducerEpoch},
		{"new epoch at 0", pHeader(1, 4, 0, 1, 100), nil, nil},
		{"new epoch not at 0", pHeader(1, 4, 13, 1, 100), nil, ErrOutOfOrderSequence},
		{"unknown producer at 0", pHeader(9, 0, 0, 1, 100), nil, nil},
		{"unknown producer past 0 (KIP-360)", pHeader(9, 5, 42, 1, 100), nil, nil},
		{"no producer", pHeader(-1, -1, -1, 1, 100), nil, nil},
		{"wrap to 0", pHeader(2, 0, 0, 1, 100), nil, nil},
		{"wrap gap", pHeader(2, 0, 1, 1, 100), nil, ErrOutOfOrderSequence},
		{"duplicate across wrap", pHeader(2, 0, math.MaxInt32-3, 4, 100), dup(math.MaxInt32-3, math.MaxInt32, 20, 23), nil},
		{"transaction ongoing, transactional", txnHeader(3, 0, 1, 1, 100), nil, nil},
		{"transaction ongoing, not transactional", pHeader(3, 0, 1, 1, 100), nil, ErrInvalidTxnState},
		{"after epoch bump by marker, at 0", pHeader(4, 1, 0, 1, 100), nil, nil},
		{"after epoch bump by marker, old sequence", pHeader(4, 1, 3, 1, 100), nil, ErrOutOfOrderSequence},
		{"after epoch bump by marker, old epoch", pHeader(4, 0, 3, 1, 100), nil, ErrInvalidProducerEpoch},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tab := checkFixture()
			d, err := tab.Check(tc.h)
			if !errors.Is(err, tc.err) || (err == nil) != (tc.err == nil) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			if diff := cmp.Diff(tc.dup, d); diff != "" {
				t.Fatalf("dup (-want +got):\n%s", diff)
			}
		})
	}
}

func TestProducerSequenceWrapsInsideBatch(t *testing.T) {
	tab := NewProducerStateTable()
	tab.Update(pHeader(1, 0, math.MaxInt32-1, 4, 0)) // sequences MaxInt32-1, MaxInt32, 0, 1
	p, _ := tab.Producer(1)
	if got := p.LastSeq(); got != 1 {
		t.Fatalf("last seq %d, want 1", got)
	}
	if _, err := tab.Check(pHeader(1, 0, 2, 1, 4)); err != nil {
		t.Fatal(err)
	}
}

func TestProducerCoordinatorBatch(t *testing.T) {
	tab := checkFixture()
	if err := tab.CheckCoordinatorBatch(txnHeader(1, 3, -1, 1, 100)); err != nil {
		t.Fatal(err)
	}
	if err := tab.CheckCoordinatorBatch(txnHeader(1, 2, -1, 1, 100)); !errors.Is(err, ErrInvalidProducerEpoch) {
		t.Fatalf("old epoch: %v", err)
	}
	tab.Update(txnHeader(8, 0, -1, 3, 100))
	if p, _ := tab.Producer(8); p.LastSeq() != record.NoSequence {
		t.Fatalf("batch without sequences has last seq %d", p.LastSeq())
	}
}

func TestProducerCheckMarker(t *testing.T) {
	tab := NewProducerStateTable()
	tab.Update(txnHeader(1, 5, 0, 1, 0))
	tab.UpdateMarker(markerHeader(1, 5, 1), true, 7)
	for _, tc := range []struct {
		epoch int16
		coord int32
		err   error
	}{{5, 7, nil}, {6, 8, nil}, {4, 7, ErrInvalidProducerEpoch}, {5, 6, ErrTransactionCoordinatorFenced}} {
		if err := tab.CheckMarker(1, tc.epoch, tc.coord); !errors.Is(err, tc.err) || (err == nil) != (tc.err == nil) {
			t.Errorf("CheckMarker(epoch %d, coordinator %d) = %v, want %v", tc.epoch, tc.coord, err, tc.err)
		}
	}
	if err := tab.CheckMarker(99, 0, 0); err != nil {
		t.Errorf("unknown producer: %v", err)
	}
}

func TestProducerTransactions(t *testing.T) {
	tab := NewProducerStateTable()
	if got := tab.FirstUnstableOffset(); got != -1 {
		t.Fatalf("empty: first unstable %d", got)
	}
	tab.Update(txnHeader(10, 0, 0, 2, 100))
	tab.Update(pHeader(20, 0, 0, 3, 102)) // idempotent only: not unstable
	tab.Update(txnHeader(11, 0, 0, 1, 105))
	tab.Update(txnHeader(10, 0, 2, 1, 106))
	if got := tab.FirstUnstableOffset(); got != 100 {
		t.Fatalf("first unstable %d, want 100", got)
	}
	tab.UpdateMarker(markerHeader(10, 0, 110), true, 0)
	if got := tab.FirstUnstableOffset(); got != 105 {
		t.Fatalf("after commit: first unstable %d, want 105", got)
	}
	tab.UpdateMarker(markerHeader(11, 0, 111), false, 0)
	if got := tab.FirstUnstableOffset(); got != -1 {
		t.Fatalf("after abort: first unstable %d, want -1", got)
	}
	// Overlapping aborts: 12's abort happens while 13's transaction is open.
	tab.Update(txnHeader(12, 0, 0, 1, 120))
	tab.Update(txnHeader(13, 0, 0, 1, 121))
	tab.UpdateMarker(markerHeader(12, 0, 125), false, 0)
	tab.UpdateMarker(markerHeader(13, 0, 126), false, 0)
	// A marker without a transaction (an empty one) indexes nothing.
	tab.UpdateMarker(markerHeader(14, 0, 127), false, 0)

	want := []AbortedTxn{
		{ProducerID: 11, FirstOffset: 105, LastOffset: 111, LastStableOffset: 112},
		{ProducerID: 12, FirstOffset: 120, LastOffset: 125, LastStableOffset: 121},
		{ProducerID: 13, FirstOffset: 121, LastOffset: 126, LastStableOffset: 127},
	}
	if diff := cmp.Diff(want, tab.AbortedIndex()); diff != "" {
		t.Fatalf("aborted index (-want +got):\n%s", diff)
	}
	for _, q := range []struct {
		from, to int64
		want     []AbortedTxn
	}{
		{0, 100, nil},
		{0, 106, want[:1]},
		{0, 200, want},
		{111, 112, want[:1]},
		{112, 121, want[1:2]},
		{112, 122, want[1:]},
		{126, 200, want[2:]},
		{127, 200, nil},
	} {
		if diff := cmp.Diff(q.want, tab.AbortedTransactions(q.from, q.to), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("AbortedTransactions(%d, %d) (-want +got):\n%s", q.from, q.to, diff)
		}
	}
	tab.TrimAborted(112)
	if diff := cmp.Diff(want[1:], tab.AbortedIndex()); diff != "" {
		t.Fatalf("trimmed (-want +got):\n%s", diff)
	}
	p, _ := tab.Producer(13)
	if p.CoordinatorEpoch != 0 || p.TxnFirstOffset != -1 {
		t.Fatalf("producer 13 after abort: %+v", p)
	}
}

func TestProducerMarkerFromBatch(t *testing.T) {
	tab := NewProducerStateTable()
	data := buildProducerBatch(t, producerOp{pid: 7, epoch: 2, seq: 0, n: 2, txn: true}, 50)
	if _, err := tab.ReplayBatches(data, 0); err != nil {
		t.Fatal(err)
	}
	data = buildProducerBatch(t, producerOp{pid: 7, epoch: 2, marker: true, abort: true, coordinatorEpoch: 9}, 52)
	if _, err := tab.ReplayBatches(data, 0); err != nil {
		t.Fatal(err)
	}
	want := []AbortedTxn{{ProducerID: 7, FirstOffset: 50, LastOffset: 52, LastStableOffset: 53}}
	if diff := cmp.Diff(want, tab.AbortedIndex()); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if p, _ := tab.Producer(7); p.CoordinatorEpoch != 9 {
		t.Fatalf("coordinator epoch %d", p.CoordinatorEpoch)
	}
}

func TestProducerAppendStagesBatches(t *testing.T) {
	tab := NewProducerStateTable()
	tab.Update(pHeader(1, 0, 0, 5, 0))
	a := tab.NewAppend()
	for i, h := range []*record.Header{pHeader(1, 0, 5, 5, 5), pHeader(1, 0, 10, 5, 10), txnHeader(2, 0, 0, 1, 15)} {
		if d, err := a.Check(h); d != nil || err != nil {
			t.Fatalf("batch %d: dup %v err %v", i, d, err)
		}
		a.Update(h)
	}
	if d, _ := a.Check(pHeader(1, 0, 5, 5, 20)); d == nil || d.FirstOffset != 5 {
		t.Fatalf("staged duplicate not found: %v", d)
	}
	if _, err := tab.Check(pHeader(1, 0, 10, 5, 10)); !errors.Is(err, ErrOutOfOrderSequence) {
		t.Fatalf("table changed before Commit: %v", err)
	}
	if tab.FirstUnstableOffset() != -1 {
		t.Fatal("transaction visible before Commit")
	}
	a.Commit()
	if p, _ := tab.Producer(1); p.LastSeq() != 14 {
		t.Fatalf("last seq %d after Commit", p.LastSeq())
	}
	if got := tab.FirstUnstableOffset(); got != 15 {
		t.Fatalf("first unstable %d after Commit", got)
	}
	a = tab.NewAppend()
	a.UpdateMarker(markerHeader(2, 0, 16), false, 0)
	if err := a.CheckMarker(2, 0, 0); err != nil {
		t.Fatal(err)
	}
	a.Commit()
	if diff := cmp.Diff([]AbortedTxn{{ProducerID: 2, FirstOffset: 15, LastOffset: 16, LastStableOffset: 17}}, tab.AbortedIndex()); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}

// One append that aborts a transaction and then commits another (a
// follower's fetch carries both markers) indexes the abort as appending
// them one by one would: the other transaction was still open at the
// abort, so the abort's last stable offset is that transaction's start.
func TestProducerAppendCommitsInOrder(t *testing.T) {
	tab := NewProducerStateTable()
	tab.Update(txnHeader(3, 0, 0, 1, 0))
	tab.Update(txnHeader(4, 0, 0, 1, 1))
	a := tab.NewAppend()
	a.UpdateMarker(markerHeader(3, 0, 2), false, 0)
	a.UpdateMarker(markerHeader(4, 0, 3), true, 0)
	a.Commit()
	want := []AbortedTxn{{ProducerID: 3, FirstOffset: 0, LastOffset: 2, LastStableOffset: 1}}
	if diff := cmp.Diff(want, tab.AbortedIndex()); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if got := tab.FirstUnstableOffset(); got != -1 {
		t.Fatalf("first unstable %d after both markers", got)
	}
}

func TestProducerExpire(t *testing.T) {
	tab := NewProducerStateTable()
	h := pHeader(1, 0, 0, 1, 0)
	h.MaxTimestamp = 1000
	tab.Update(h)
	h = pHeader(2, 0, 0, 1, 1)
	h.MaxTimestamp = 5000
	tab.Update(h)
	h = txnHeader(3, 0, 0, 1, 2)
	h.MaxTimestamp = 0
	tab.Update(h)
	if n := tab.Expire(12000, 10000); n != 1 {
		t.Fatalf("expired %d, want 1", n)
	}
	if _, ok := tab.Producer(1); ok {
		t.Fatal("producer 1 not expired")
	}
	for _, pid := range []int64{2, 3} {
		if _, ok := tab.Producer(pid); !ok {
			t.Fatalf("producer %d expired", pid)
		}
	}
	// An expired producer is accepted again at its next sequence.
	if _, err := tab.Check(pHeader(1, 0, 1, 1, 3)); err != nil {
		t.Fatal(err)
	}
}

// --- snapshots ---

const snapDir = "/data/txn-0"

func snapshotFS(t *testing.T) *vfs.Mem {
	mem := vfs.NewMem()
	if err := vfs.MkdirAllDurable(mem, snapDir); err != nil {
		t.Fatal(err)
	}
	return mem
}

func tablesEqual(t fataler, want, got *ProducerStateTable) {
	t.Helper()
	if diff := cmp.Diff(want.Producers(), got.Producers(), cmpopts.EquateEmpty()); diff != "" {
		t.Fatalf("producers (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want.AbortedIndex(), got.AbortedIndex(), cmpopts.EquateEmpty()); diff != "" {
		t.Fatalf("aborted (-want +got):\n%s", diff)
	}
	if w, g := want.FirstUnstableOffset(), got.FirstUnstableOffset(); w != g {
		t.Fatalf("first unstable offset %d, want %d", g, w)
	}
}

func TestProducerSnapshotRoundTrip(t *testing.T) {
	mem := snapshotFS(t)
	tab := checkFixture()
	tab.Update(txnHeader(11, 0, 0, 1, 105))
	tab.UpdateMarker(markerHeader(11, 0, 111), false, 3)
	if err := tab.WriteSnapshot(mem, snapDir, 112); err != nil {
		t.Fatal(err)
	}
	got, off, err := LoadLatestSnapshot(mem, snapDir, math.MaxInt64)
	if err != nil || off != 112 {
		t.Fatalf("load: offset %d err %v", off, err)
	}
	tablesEqual(t, tab, got)
	// Empty directory: empty table, offset -1.
	empty := snapshotFS(t)
	got, off, err = LoadLatestSnapshot(empty, snapDir, math.MaxInt64)
	if err != nil || off != -1 || got.Len() != 0 {
		t.Fatalf("empty: %d producers, offset %d, err %v", got.Len(), off, err)
	}
}

func TestProducerSnapshotCorruptIgnored(t *testing.T) {
	older := checkFixture()
	newer := checkFixture()
	newer.Update(pHeader(1, 3, 13, 1, 50))
	valid := newer.encodeSnapshot(60)
	damage := map[string]func([]byte) []byte{
		"torn":          func(b []byte) []byte { return b[:len(b)-7] },
		"header only":   func(b []byte) []byte { return b[:snapshotHeader] },
		"empty":         func(b []byte) []byte { return nil },
		"flipped bit":   func(b []byte) []byte { b[len(b)/2] ^= 1; return b },
		"version":       func(b []byte) []byte { b[1] = 9; return b },
		"trailing junk": func(b []byte) []byte { return append(b, 0) },
	}
	for name, f := range damage {
		t.Run(name, func(t *testing.T) {
			mem := snapshotFS(t)
			if err := older.WriteSnapshot(mem, snapDir, 40); err != nil {
				t.Fatal(err)
			}
			if err := vfs.WriteFileAtomic(mem, SnapshotName(snapDir, 60), f(append([]byte(nil), valid...))); err != nil {
				t.Fatal(err)
			}
			got, off, err := LoadLatestSnapshot(mem, snapDir, math.MaxInt64)
			if err != nil || off != 40 {
				t.Fatalf("offset %d err %v, want the older snapshot", off, err)
			}
			tablesEqual(t, older, got)
			if offs, _ := ListSnapshots(mem, snapDir); !cmp.Equal(offs, []int64{40}) {
				t.Fatalf("corrupt snapshot not removed: %v", offs)
			}
		})
	}
	// A snapshot renamed to another offset is refused too.
	mem := snapshotFS(t)
	if err := vfs.WriteFileAtomic(mem, SnapshotName(snapDir, 61), valid); err != nil {
		t.Fatal(err)
	}
	if _, off, err := LoadLatestSnapshot(mem, snapDir, math.MaxInt64); err != nil || off != -1 {
		t.Fatalf("renamed snapshot: offset %d err %v", off, err)
	}
}

// A crash anywhere in writing a snapshot leaves either the old one or the
// new one loadable, never garbage.
func TestProducerSnapshotCrash(t *testing.T) {
	older := checkFixture()
	newer := checkFixture()
	newer.Update(txnHeader(5, 0, 0, 3, 50))
	rng := rand.New(rand.NewPCG(1, 2))
	for _, mode := range []vfs.CrashMode{vfs.CrashTorn, vfs.CrashGarbage, vfs.CrashLoseUnsynced} {
		mem := snapshotFS(t)
		if err := older.WriteSnapshot(mem, snapDir, 40); err != nil {
			t.Fatal(err)
		}
		var images []*vfs.Mem
		fsys := vfs.NewFaulty(mem, func(op vfs.Op, name string) error {
			if op == vfs.OpSync || op == vfs.OpSyncDir {
				for range 4 {
					images = append(images, mem.CrashClone(mode, rng))
				}
			}
			return nil
		})
		if err := newer.WriteSnapshot(fsys, snapDir, 60); err != nil {
			t.Fatal(err)
		}
		images = append(images, mem.CrashClone(mode, rng))
		seen := map[int64]bool{}
		for i, img := range images {
			got, off, err := LoadLatestSnapshot(img, snapDir, math.MaxInt64)
			switch {
			case err != nil:
				t.Fatalf("mode %d image %d: %v", mode, i, err)
			case off == 40:
				tablesEqual(t, older, got)
			case off == 60:
				tablesEqual(t, newer, got)
			default:
				t.Fatalf("mode %d image %d: offset %d", mode, i, off)
			}
			seen[off] = true
		}
		if !seen[40] || !seen[60] {
			t.Fatalf("mode %d: images loaded only %v", mode, seen)
		}
		if _, off, _ := LoadLatestSnapshot(images[len(images)-1], snapDir, math.MaxInt64); off != 60 {
			t.Fatalf("mode %d: completed snapshot lost (offset %d)", mode, off)
		}
	}
}

func TestProducerSnapshotDelete(t *testing.T) {
	mem := snapshotFS(t)
	tab := NewProducerStateTable()
	for _, off := range []int64{10, 20, 30, 40} {
		if err := tab.WriteSnapshot(mem, snapDir, off); err != nil {
			t.Fatal(err)
		}
	}
	if err := DeleteSnapshotsAfter(mem, snapDir, 35); err != nil {
		t.Fatal(err)
	}
	if err := DeleteSnapshotsBefore(mem, snapDir, 20); err != nil {
		t.Fatal(err)
	}
	if offs, _ := ListSnapshots(mem, snapDir); !cmp.Equal(offs, []int64{20, 30}) {
		t.Fatalf("snapshots %v, want [20 30]", offs)
	}
	// The newest is kept even below the log start.
	if err := DeleteSnapshotsBefore(mem, snapDir, 100); err != nil {
		t.Fatal(err)
	}
	if offs, _ := ListSnapshots(mem, snapDir); !cmp.Equal(offs, []int64{30}) {
		t.Fatalf("snapshots %v, want [30]", offs)
	}
	if _, off, _ := LoadLatestSnapshot(mem, snapDir, 29); off != -1 {
		t.Fatalf("upTo ignored: %d", off)
	}
}

func TestParseSnapshotName(t *testing.T) {
	for name, want := range map[string]int64{"00000000000000000042.snapshot": 42, "42.snapshot": -1, "00000000000000000042.log": -1, "0000000000000000004x.snapshot": -1} {
		off, ok := ParseSnapshotName(name)
		if (want >= 0) != ok || (ok && off != want) {
			t.Errorf("ParseSnapshotName(%q) = %d, %v", name, off, ok)
		}
	}
}

// --- rebuild property ---

type producerOp struct {
	pid              int64
	epoch            int16
	seq, n           int32
	txn              bool
	marker, abort    bool
	coordinatorEpoch int32
}

func buildProducerBatch(t fataler, op producerOp, base int64) []byte {
	t.Helper()
	b := record.Batch{BaseOffset: base, ProducerID: op.pid, ProducerEpoch: op.epoch, BaseSequence: op.seq, Transactional: op.txn || op.marker}
	if op.marker {
		r := record.EndTxnMarker(!op.abort, op.coordinatorEpoch)
		r.Offset, r.Timestamp = base, base
		b.Control, b.BaseSequence, b.Records = true, record.NoSequence, []record.Record{r}
	} else {
		for i := range op.n {
			b.Records = append(b.Records, record.Record{Offset: base + int64(i), Timestamp: base, Value: []byte("v")})
		}
	}
	out, err := b.AppendTo(nil)
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	return out
}

// Rebuilding from any snapshot plus a replay of the batches after it, or
// replaying the whole log, gives the table built batch by batch; so does
// reloading after a truncation.
func TestProducerRebuildProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		mem := vfs.NewMem()
		if err := mem.MkdirAll(snapDir); err != nil {
			rt.Fatal(err)
		}
		live := NewProducerStateTable()
		var log []byte
		var bounds []int64 // batch start offsets, then the log end
		next := int64(0)
		steps := rapid.IntRange(1, 60).Draw(rt, "steps")
		for range steps {
			if rapid.IntRange(0, 5).Draw(rt, "snapshot") == 0 {
				if err := live.WriteSnapshot(mem, snapDir, next); err != nil {
					rt.Fatal(err)
				}
			}
			op := producerOp{
				pid:   rapid.Int64Range(-1, 3).Draw(rt, "pid"),
				epoch: int16(rapid.IntRange(0, 2).Draw(rt, "epoch")),
				seq:   int32(rapid.IntRange(0, 10).Draw(rt, "seq")),
				n:     int32(rapid.IntRange(1, 3).Draw(rt, "n")),
				txn:   rapid.Bool().Draw(rt, "txn"),
			}
			if op.pid < 0 {
				op.epoch, op.seq, op.txn = -1, -1, false
			} else if rapid.IntRange(0, 3).Draw(rt, "marker") == 0 {
				op.marker, op.abort = true, rapid.Bool().Draw(rt, "abort")
				op.coordinatorEpoch = int32(rapid.IntRange(0, 2).Draw(rt, "coordinatorEpoch"))
			}
			batch := buildProducerBatch(rt, op, next)
			if err := live.UpdateBatch(batch); err != nil {
				rt.Fatal(err)
			}
			bounds = append(bounds, next)
			h, _ := record.ParseHeader(batch)
			next = h.NextOffset()
			log = append(log, batch...)
		}
		bounds = append(bounds, next)

		full := NewProducerStateTable()
		if end, err := full.ReplayBatches(log, 0); err != nil || end != next {
			rt.Fatalf("full replay: end %d err %v", end, err)
		}
		tablesEqual(rt, live, full)

		loaded, off, err := LoadLatestSnapshot(mem, snapDir, math.MaxInt64)
		if err != nil {
			rt.Fatal(err)
		}
		if _, err := loaded.ReplayBatches(log, max(off, 0)); err != nil {
			rt.Fatal(err)
		}
		tablesEqual(rt, live, loaded)

		// Truncate at a batch boundary: reload the newest snapshot at or
		// below it and replay up to it.
		cut := bounds[rapid.IntRange(0, len(bounds)-1).Draw(rt, "cut")]
		want := NewProducerStateTable()
		prefix := logPrefix(rt, log, cut)
		if _, err := want.ReplayBatches(prefix, 0); err != nil {
			rt.Fatal(err)
		}
		if err := DeleteSnapshotsAfter(mem, snapDir, cut); err != nil {
			rt.Fatal(err)
		}
		got, off, err := LoadLatestSnapshot(mem, snapDir, math.MaxInt64)
		if err != nil || off > cut {
			rt.Fatalf("after truncation to %d: snapshot %d, err %v", cut, off, err)
		}
		if _, err := got.ReplayBatches(prefix, max(off, 0)); err != nil {
			rt.Fatal(err)
		}
		tablesEqual(rt, want, got)
	})
}

// logPrefix returns the batches of log below offset cut (a batch boundary).
func logPrefix(t fataler, log []byte, cut int64) []byte {
	pos := 0
	for pos < len(log) {
		h, err := record.ParseHeader(log[pos:])
		if err != nil {
			t.Fatalf("parse: %v", err)
		}
		if h.BaseOffset >= cut {
			break
		}
		pos += h.Size()
	}
	return log[:pos]
}

// FuzzProducerSnapshot: decoding never panics, and whatever decodes
// encodes back to the same bytes.
func FuzzProducerSnapshot(f *testing.F) {
	tab := checkFixture()
	tab.UpdateMarker(markerHeader(3, 0, 31), false, 1)
	f.Add(tab.encodeSnapshot(50))
	f.Add(NewProducerStateTable().encodeSnapshot(50))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := decodeSnapshot(b, 50)
		if err != nil {
			return
		}
		if again := got.encodeSnapshot(50); !cmp.Equal(again, b) {
			t.Fatalf("re-encoding differs")
		}
	})
}

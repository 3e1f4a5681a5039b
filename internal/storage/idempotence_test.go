package storage

import (
	"errors"
	"testing"

	"github.com/samsa-io/samsa/internal/record"
	"github.com/samsa-io/samsa/internal/vfs"
)

// producerBatch builds an idempotent producer's batch of n records.
func producerBatch(t *testing.T, pid int64, epoch int16, seq int32, n int) []byte {
	t.Helper()
	recs := make([]record.Record, n)
	for i := range recs {
		recs[i] = record.Record{Offset: int64(i), Timestamp: 1000, Value: []byte("v")}
	}
	b := record.Batch{ProducerID: pid, ProducerEpoch: epoch, BaseSequence: seq, Records: recs}
	out, err := b.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestIdempotentAppends(t *testing.T) {
	e := newEnv(t)
	l := e.open(testConfig())
	first := mustAppend(t, l, producerBatch(t, 7, 0, 0, 3))
	mustAppend(t, l, makeBatch(t, 2, 1, "other", 10)) // a non-idempotent producer in between
	second := mustAppend(t, l, producerBatch(t, 7, 0, 3, 2))

	// A retry of either batch is acknowledged with its original offsets and
	// not written again.
	for _, c := range []struct {
		seq  int32
		n    int
		want AppendResult
	}{{0, 3, first}, {3, 2, second}} {
		end := l.LogEndOffset()
		res, err := l.AppendAsLeader(producerBatch(t, 7, 0, c.seq, c.n), 0)
		if err != nil || !res.Duplicate || res.FirstOffset != c.want.FirstOffset || res.LastOffset != c.want.LastOffset {
			t.Fatalf("retry of seq %d: %+v %v, want offsets %d..%d", c.seq, res, err, c.want.FirstOffset, c.want.LastOffset)
		}
		if l.LogEndOffset() != end {
			t.Fatalf("retry was written: log end %d -> %d", end, l.LogEndOffset())
		}
	}
	// A gap and an old epoch are refused without failing the log.
	if _, err := l.AppendAsLeader(producerBatch(t, 7, 0, 9, 1), 0); !errors.Is(err, ErrOutOfOrderSequence) {
		t.Fatalf("gap: %v", err)
	}
	mustAppend(t, l, producerBatch(t, 7, 1, 0, 1)) // a new epoch starts at 0
	if _, err := l.AppendAsLeader(producerBatch(t, 7, 0, 5, 1), 0); !errors.Is(err, ErrInvalidProducerEpoch) {
		t.Fatalf("old epoch: %v", err)
	}

	// The state survives a clean reopen (snapshot) and a crash (replay).
	l.Close()
	l = e.open(testConfig())
	if res, err := l.AppendAsLeader(producerBatch(t, 7, 1, 0, 1), 0); err != nil || !res.Duplicate {
		t.Fatalf("retry after reopen: %+v %v", res, err)
	}
	mustAppend(t, l, producerBatch(t, 7, 1, 1, 1))
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	crashed := e.mem.CrashClone(vfs.CrashLoseUnsynced, nil)
	l.Close()
	e.fs = crashed
	l = e.open(testConfig())
	defer l.Close()
	if res, err := l.AppendAsLeader(producerBatch(t, 7, 1, 1, 1), 0); err != nil || !res.Duplicate {
		t.Fatalf("retry after crash: %+v %v", res, err)
	}
	// Truncation forgets the cut batches: the same sequence is new again.
	end := l.LogEndOffset()
	if err := l.TruncateTo(end - 1); err != nil {
		t.Fatal(err)
	}
	if res, err := l.AppendAsLeader(producerBatch(t, 7, 1, 1, 1), 0); err != nil || res.Duplicate || res.FirstOffset != end-1 {
		t.Fatalf("append after truncating it away: %+v %v", res, err)
	}
}

// Snapshots are written at rolls and survive in the directory listing.
func TestProducerSnapshotsAtRoll(t *testing.T) {
	e := newEnv(t)
	l := e.open(testConfig())
	for i := range 60 {
		mustAppend(t, l, producerBatch(t, 3, 0, int32(i), 1))
	}
	if l.Offsets().Segments < 2 {
		t.Fatal("no roll")
	}
	snaps, err := ListSnapshots(e.fs, e.dir)
	if err != nil || len(snaps) == 0 {
		t.Fatalf("snapshots %v %v", snaps, err)
	}
	l.Close()
	l = e.open(testConfig())
	defer l.Close()
	if _, err := l.AppendAsLeader(producerBatch(t, 3, 0, 61, 1), 0); !errors.Is(err, ErrOutOfOrderSequence) {
		t.Fatalf("gap after reopen: %v", err)
	}
	mustAppend(t, l, producerBatch(t, 3, 0, 60, 1))
}

// TestMarkerFromADeposedCoordinatorRefused: once a producer's transaction
// marker came from coordinator epoch 5, a marker from epoch 3 (a
// coordinator that lost its __transaction_state partition) is refused, and
// the log is unchanged; a newer coordinator's marker is taken.
func TestMarkerFromADeposedCoordinatorRefused(t *testing.T) {
	e := newEnv(t)
	l := e.open(testConfig())
	marker := func(coordinatorEpoch int32) []byte {
		r := record.EndTxnMarker(true, coordinatorEpoch)
		b := record.Batch{ProducerID: 7, ProducerEpoch: 0, BaseSequence: record.NoSequence, Transactional: true, Control: true,
			Records: []record.Record{r}}
		out, err := b.AppendTo(nil)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	mustAppend(t, l, marker(5))
	end := l.LogEndOffset()
	if _, err := l.AppendAsLeader(marker(3), 0); !errors.Is(err, ErrTransactionCoordinatorFenced) {
		t.Fatalf("marker from coordinator epoch 3 after 5: %v, want ErrTransactionCoordinatorFenced", err)
	}
	if l.LogEndOffset() != end {
		t.Fatalf("the refused marker moved the log end from %d to %d", end, l.LogEndOffset())
	}
	mustAppend(t, l, marker(6))
}

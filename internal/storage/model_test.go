package storage

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/samsa-io/samsa/internal/record"
	"github.com/samsa-io/samsa/internal/vfs"
	"pgregory.net/rapid"
)

// logModel is what the log should hold: batches in order, each a run of
// records with their values and timestamps.
type logModel struct {
	batches  []modelBatch
	logStart int64
	logEnd   int64
}

type modelBatch struct {
	base   int64
	values []string
	ts     []int64
}

func (m *logModel) last(b modelBatch) int64 { return b.base + int64(len(b.values)) - 1 }

// records lists every readable record (at or above the log start).
func (m *logModel) records() (offs []int64, vals []string, ts []int64) {
	for _, b := range m.batches {
		for i, v := range b.values {
			if o := b.base + int64(i); o >= m.logStart {
				offs, vals, ts = append(offs, o), append(vals, v), append(ts, b.ts[i])
			}
		}
	}
	return
}

func (m *logModel) truncateTo(off int64) {
	for len(m.batches) > 0 && m.last(m.batches[len(m.batches)-1]) >= off {
		m.batches = m.batches[:len(m.batches)-1]
	}
	m.logEnd = m.logStart
	if n := len(m.batches); n > 0 {
		m.logEnd = max(m.logStart, m.last(m.batches[n-1])+1)
	}
}

// logMachine drives a Log and the model with the same random operations.
type logMachine struct {
	mem   *vfs.Mem
	log   *Log
	cfg   Config
	model logModel
	seq   int
}

const modelDir = "/data/model-0"

func (lm *logMachine) open(t *rapid.T) {
	l, err := Open(modelDir, lm.cfg, Options{FS: lm.mem, Logger: quiet})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	lm.log = l
}

func (lm *logMachine) Append(t *rapid.T) {
	n := rapid.IntRange(1, 5).Draw(t, "records")
	size := rapid.IntRange(0, 400).Draw(t, "valueSize")
	recs := make([]record.Record, n)
	mb := modelBatch{}
	for i := range recs {
		ts := rapid.Int64Range(0, 1000).Draw(t, "ts")
		v := fmt.Sprintf("r%d-%d-%s", lm.seq, i, string(make([]byte, size)))
		recs[i] = record.Record{Offset: int64(i), Timestamp: ts, Key: []byte("k"), Value: []byte(v)}
		mb.values, mb.ts = append(mb.values, v), append(mb.ts, ts)
	}
	lm.seq++
	codec := rapid.SampledFrom([]record.Codec{record.CodecNone, record.CodecZstd, record.CodecLZ4}).Draw(t, "codec")
	b := record.Batch{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, Codec: codec, Records: recs}
	data, err := b.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := lm.log.AppendAsLeader(data, 0)
	if err != nil {
		t.Fatalf("append: %v", err)
	}
	if res.FirstOffset != lm.model.logEnd {
		t.Fatalf("appended at %d, model end %d", res.FirstOffset, lm.model.logEnd)
	}
	mb.base = res.FirstOffset
	lm.model.batches = append(lm.model.batches, mb)
	lm.model.logEnd += int64(n)
}

func (lm *logMachine) Roll(t *rapid.T) {
	if err := lm.log.Roll(); err != nil {
		t.Fatal(err)
	}
}

func (lm *logMachine) Truncate(t *rapid.T) {
	m := &lm.model
	off := rapid.Int64Range(m.logStart, m.logEnd).Draw(t, "truncateTo")
	if err := lm.log.TruncateTo(off); err != nil {
		t.Fatal(err)
	}
	m.truncateTo(off)
}

func (lm *logMachine) DeleteRecords(t *rapid.T) {
	m := &lm.model
	off := rapid.Int64Range(m.logStart, m.logEnd).Draw(t, "logStart")
	if err := lm.log.SetLogStartOffset(off); err != nil {
		t.Fatal(err)
	}
	m.logStart = off
}

func (lm *logMachine) Retention(t *rapid.T) {
	before := lm.log.LogStartOffset()
	if _, err := lm.log.EnforceRetention(lm.model.logEnd); err != nil {
		t.Fatal(err)
	}
	after := lm.log.LogStartOffset()
	if after < before || after > lm.model.logEnd {
		t.Fatalf("retention moved the log start from %d to %d (end %d)", before, after, lm.model.logEnd)
	}
	lm.model.logStart = after
}

func (lm *logMachine) Reopen(t *rapid.T) {
	if err := lm.log.Close(); err != nil {
		t.Fatal(err)
	}
	lm.open(t)
}

// Crash flushes, then crashes with unsynced writes torn: nothing may be lost.
func (lm *logMachine) FlushAndCrash(t *rapid.T) {
	if err := lm.log.Flush(); err != nil {
		t.Fatal(err)
	}
	seed := rapid.Uint64().Draw(t, "seed")
	crashed := lm.mem.CrashClone(vfs.CrashTorn, rand.New(rand.NewPCG(seed, 0)))
	lm.log.Close()
	lm.mem = crashed
	lm.open(t)
}

// CrashUnflushed crashes without a flush: the log may lose its unsynced
// tail, but never what it reported durable, and never anything in between.
func (lm *logMachine) CrashUnflushed(t *rapid.T) {
	durable := lm.log.Offsets().RecoveryPoint
	seed := rapid.Uint64().Draw(t, "seed")
	crashed := lm.mem.CrashClone(vfs.CrashGarbage, rand.New(rand.NewPCG(seed, 1)))
	lm.log.Close()
	lm.mem = crashed
	lm.open(t)
	end := lm.log.LogEndOffset()
	if end < durable || end > lm.model.logEnd {
		t.Fatalf("after crash log end %d, durable %d, model end %d", end, durable, lm.model.logEnd)
	}
	lm.model.truncateTo(end)
	lm.model.logStart = min(max(lm.model.logStart, lm.log.LogStartOffset()), lm.model.logEnd)
}

func (lm *logMachine) ReadAt(t *rapid.T) {
	m := &lm.model
	if m.logEnd == m.logStart {
		return
	}
	off := rapid.Int64Range(m.logStart, m.logEnd-1).Draw(t, "readAt")
	rr, err := lm.log.Read(off, 1, -1, true)
	if err != nil {
		t.Fatalf("read %d: %v", off, err)
	}
	data, err := rr.ReadAll()
	rr.Release()
	if err != nil {
		t.Fatal(err)
	}
	h, err := record.ParseHeader(data)
	if err != nil || h.BaseOffset > off || h.LastOffset() < off || len(data) != h.Size() {
		t.Fatalf("read at %d returned batch %d..%d (%d bytes): %v", off, h.BaseOffset, h.LastOffset(), len(data), err)
	}
}

func (lm *logMachine) TimestampLookup(t *rapid.T) {
	target := rapid.Int64Range(0, 1001).Draw(t, "ts")
	offs, _, ts := lm.model.records()
	wantOff, wantTs := int64(-1), int64(-1)
	for i := range offs {
		if ts[i] >= target {
			wantOff, wantTs = offs[i], ts[i]
			break
		}
	}
	off, gotTs, found, err := lm.log.OffsetForTimestamp(target)
	if err != nil || off != wantOff || gotTs != wantTs || found != (wantOff >= 0) {
		t.Fatalf("timestamp %d: got %d@%d found=%v err=%v, model %d@%d", target, off, gotTs, found, err, wantOff, wantTs)
	}
}

// Check is the invariant after every step: bounds agree and a full read
// gives exactly the model's records, in order.
func (lm *logMachine) Check(t *rapid.T) {
	o := lm.log.Offsets()
	if o.LogStartOffset != lm.model.logStart || o.LogEndOffset != lm.model.logEnd {
		t.Fatalf("log bounds [%d, %d), model [%d, %d)", o.LogStartOffset, o.LogEndOffset, lm.model.logStart, lm.model.logEnd)
	}
	offs, vals := readAllRecords(t, lm.log)
	wantOffs, wantVals, _ := lm.model.records()
	if !slices.Equal(offs, wantOffs) || !slices.Equal(vals, wantVals) {
		t.Fatalf("log holds offsets %v, model %v", offs, wantOffs)
	}
}

func TestLogMatchesModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cfg := DefaultConfig()
		cfg.SegmentBytes = int64(rapid.IntRange(300, 5000).Draw(t, "segmentBytes"))
		cfg.IndexIntervalBytes = int64(rapid.IntRange(1, 1000).Draw(t, "indexInterval"))
		cfg.RetentionMs = -1
		cfg.RetentionBytes = int64(rapid.IntRange(-1, 20000).Draw(t, "retentionBytes"))
		lm := &logMachine{mem: vfs.NewMem(), cfg: cfg}
		lm.open(t)
		defer func() { lm.log.Close() }()
		t.Repeat(rapid.StateMachineActions(lm))
	})
}

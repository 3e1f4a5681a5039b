package storage

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/clock"
	"github.com/samsa-io/samsa/internal/record"
	"github.com/samsa-io/samsa/internal/vfs"
	"pgregory.net/rapid"
)

// The cleaner's model: every record ever appended, by offset, and each key's
// latest write. Cleaning may drop any record but a key's latest write, and a
// tombstone that is a key's latest write only once it is past the delete
// horizon.
//
// The horizon rule has changed with the cleaner (a per-batch MaxTimestamp
// cutoff, then KIP-534: the pass that first rewrites a batch stamps it with
// NowMs + delete.retention.ms and a pass at or past that removes its
// tombstones), so the model asserts what every version gives as long as
// record timestamps are not ahead of the passes' NowMs: a tombstone may be
// missing only after some pass ran at a NowMs with NowMs - tombstone
// timestamp >= delete.retention.ms; never while it is younger.
//
// Kept records must also keep their timestamps (a KIP-534 horizon lives in
// the batch header, not in the records).

// cleanWrite is one appended record.
type cleanWrite struct {
	key   string
	value []byte // nil: a tombstone
	ts    int64
}

// cleanedRecord is a record as a full read returns it.
type cleanedRecord struct {
	offset    int64
	timestamp int64
	key       []byte
	value     []byte // nil: a tombstone
}

// readKeyedRecords reads the log from its start to its end through Read,
// batch by batch, checking CRCs, and returns every record with its key and
// whether its value is null (readAllRecords cannot tell null from empty).
func readKeyedRecords(t fataler, l *Log) []cleanedRecord {
	t.Helper()
	var out []cleanedRecord
	off, end := l.LogStartOffset(), l.LogEndOffset()
	for off < end {
		rr, err := l.Read(off, 1<<20, -1, true)
		if err != nil {
			t.Fatalf("read at %d: %v", off, err)
		}
		data, err := rr.ReadAll()
		rr.Release()
		if err != nil {
			t.Fatalf("read at %d: %v", off, err)
		}
		data = trimPartial(data)
		if len(data) == 0 {
			t.Fatalf("no whole batch at %d below the log end %d", off, end)
		}
		err = record.ForEachBatch(data, func(batch []byte, h record.Header) error {
			if err := record.CheckCRC(batch); err != nil {
				return err
			}
			return record.Iterate(batch, record.DefaultMaxDecompressedBytes, func(r *record.Record) bool {
				if r.Offset >= off {
					out = append(out, cleanedRecord{offset: r.Offset, timestamp: r.Timestamp, key: bytes.Clone(r.Key), value: bytes.Clone(r.Value)})
				}
				return true
			})
		})
		if err != nil {
			t.Fatalf("batches read at %d: %v", off, err)
		}
		h, _ := record.ParseHeader(lastWhole(data))
		if h.NextOffset() <= off {
			t.Fatalf("read at %d made no progress", off)
		}
		off = h.NextOffset()
	}
	return out
}

// cleanModel is what a compacted log must hold.
type cleanModel struct {
	writes map[int64]cleanWrite // offset -> what was appended there
	latest map[string]int64     // key -> offset of its latest write
	logEnd int64
}

func newCleanModel() *cleanModel {
	return &cleanModel{writes: map[int64]cleanWrite{}, latest: map[string]int64{}}
}

func (m *cleanModel) add(off int64, w cleanWrite) {
	m.writes[off] = w
	m.latest[w.key] = off
	m.logEnd = off + 1
}

// truncateTo forgets every write at or above off.
func (m *cleanModel) truncateTo(off int64) {
	for o := off; o < m.logEnd; o++ {
		delete(m.writes, o)
	}
	m.logEnd = off
	clear(m.latest)
	for o := range off {
		if w, ok := m.writes[o]; ok {
			m.latest[w.key] = o
		}
	}
}

// check verifies a full read of the log against the model. tombstoneGone
// says whether the cleaner may have removed the tombstone at offset off
// (nil: never). It returns the records read.
func (m *cleanModel) check(t fataler, l *Log, tombstoneGone func(off int64) bool) []cleanedRecord {
	t.Helper()
	if end := l.LogEndOffset(); end != m.logEnd {
		t.Fatalf("log end %d, model %d", end, m.logEnd)
	}
	recs := readKeyedRecords(t, l)
	last := map[string]cleanedRecord{}
	prev := int64(-1)
	for _, r := range recs {
		if r.offset <= prev {
			t.Fatalf("offset %d after %d", r.offset, prev)
		}
		prev = r.offset
		w, ok := m.writes[r.offset]
		if !ok {
			t.Fatalf("offset %d was never appended", r.offset)
		}
		if string(r.key) != w.key || !bytes.Equal(r.value, w.value) || (r.value == nil) != (w.value == nil) {
			t.Fatalf("offset %d holds %q=%q (null %v), appended %q=%q (null %v)", r.offset, r.key, r.value, r.value == nil, w.key, w.value, w.value == nil)
		}
		if r.timestamp != w.ts {
			t.Fatalf("offset %d has timestamp %d, appended with %d", r.offset, r.timestamp, w.ts)
		}
		last[w.key] = r
	}
	for key, off := range m.latest {
		w := m.writes[off]
		r, ok := last[key]
		switch {
		case ok && r.offset != off:
			t.Fatalf("key %s: last record read at %d, its latest write is at %d (tombstone %v)", key, r.offset, off, w.value == nil)
		case !ok && w.value != nil:
			t.Fatalf("key %s: latest value at %d lost", key, off)
		case !ok && (tombstoneGone == nil || !tombstoneGone(off)):
			t.Fatalf("key %s: tombstone at %d (timestamp %d) removed before the delete horizon", key, off, w.ts)
		}
	}
	return recs
}

// compactedView is the exact view a full pass over every segment gives once
// every tombstone is past the horizon: each key's latest write if it is a
// value, in offset order.
func (m *cleanModel) compactedView(withTombstones bool) []int64 {
	var offs []int64
	for off := int64(0); off < m.logEnd; off++ {
		w, ok := m.writes[off]
		if ok && m.latest[w.key] == off && (w.value != nil || withTombstones) {
			offs = append(offs, off)
		}
	}
	return offs
}

func recordOffsets(recs []cleanedRecord) []int64 {
	offs := make([]int64, len(recs))
	for i, r := range recs {
		offs[i] = r.offset
	}
	return offs
}

// cleanMachine drives a compacted log and the model with random appends,
// cleaning passes, clock steps, reopens and crashes.
type cleanMachine struct {
	mem        *vfs.Mem
	clk        *clock.Manual
	log        *Log
	cfg        Config
	keys       int
	nowMs      int64   // the time appends and passes run at
	maxCleanMs int64   // the latest NowMs a pass ran at
	cleanedTo  int64   // the largest log end a pass started at
	batchEnds  []int64 // each appended batch's next offset
	model      *cleanModel
	seq        int
	mapSizes   []int // MapMemory a pass picks from
}

const cleanModelDir = "/data/clean-model-0"

// Mostly uncompressed: decompression dominates the run time under -race.
var cleanModelCodecs = []record.Codec{record.CodecNone, record.CodecNone, record.CodecNone, record.CodecNone, record.CodecGzip, record.CodecSnappy, record.CodecLZ4, record.CodecZstd}

func (cm *cleanMachine) open(t *rapid.T) {
	l, err := Open(cleanModelDir, cm.cfg, Options{FS: cm.mem, Clock: cm.clk, Logger: quiet})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	cm.log = l
}

// tombstoneGone: a pass ran past the tombstone's horizon.
func (cm *cleanMachine) tombstoneGone(off int64) bool {
	return cm.maxCleanMs-cm.model.writes[off].ts >= cm.cfg.DeleteRetentionMs
}

// Append appends a run of batches.
func (cm *cleanMachine) Append(t *rapid.T) {
	for range rapid.IntRange(1, 5).Draw(t, "batches") {
		cm.appendBatch(t)
	}
}

func (cm *cleanMachine) appendBatch(t *rapid.T) {
	n := rapid.IntRange(1, 8).Draw(t, "records")
	tombOdds := rapid.IntRange(0, 4).Draw(t, "tombstoneOdds") // in 8
	recs := make([]record.Record, n)
	for i := range recs {
		key := fmt.Sprintf("k%d", rapid.IntRange(0, cm.keys-1).Draw(t, "key"))
		ts := cm.nowMs - int64(rapid.IntRange(0, 5).Draw(t, "age"))
		var value []byte
		if rapid.IntRange(0, 7).Draw(t, "tombstone") >= tombOdds {
			pad := rapid.IntRange(0, 60).Draw(t, "pad")
			value = fmt.Appendf(nil, "s%d.%d%s", cm.seq, i, bytes.Repeat([]byte{'.'}, pad))
		}
		recs[i] = record.Record{Offset: int64(i), Timestamp: ts, Key: []byte(key), Value: value}
	}
	cm.seq++
	codec := rapid.SampledFrom(cleanModelCodecs).Draw(t, "codec")
	b := record.Batch{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, Codec: codec, Records: recs}
	data, err := b.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cm.log.AppendAsLeader(data, 0)
	if err != nil {
		t.Fatalf("append: %v", err)
	}
	if res.FirstOffset != cm.model.logEnd {
		t.Fatalf("appended at %d, model end %d", res.FirstOffset, cm.model.logEnd)
	}
	for i, r := range recs {
		cm.model.add(res.FirstOffset+int64(i), cleanWrite{key: string(r.Key), value: r.Value, ts: r.Timestamp})
	}
	cm.batchEnds = append(cm.batchEnds, cm.model.logEnd)
}

func (cm *cleanMachine) Advance(t *rapid.T) {
	d := int64(rapid.IntRange(0, int(2*cm.cfg.DeleteRetentionMs)+10).Draw(t, "advanceMs"))
	cm.nowMs += d
	cm.clk.Advance(time.Duration(d) * time.Millisecond)
}

func (cm *cleanMachine) Roll(t *rapid.T) {
	if err := cm.log.Roll(); err != nil {
		t.Fatal(err)
	}
}

func (cm *cleanMachine) Clean(t *rapid.T) {
	cm.cleanWith(t, rapid.SampledFrom(cm.mapSizes).Draw(t, "mapMemory"))
}

// cleanWith runs a pass at the machine's time: it must not move the log end.
func (cm *cleanMachine) cleanWith(t *rapid.T, mapMemory int) {
	end := cm.log.LogEndOffset()
	cm.cleanedTo = max(cm.cleanedTo, end)
	if _, err := cm.log.Clean(CleanOptions{MapMemory: mapMemory, NowMs: cm.nowMs}); err != nil {
		t.Fatalf("clean: %v", err)
	}
	cm.maxCleanMs = max(cm.maxCleanMs, cm.nowMs)
	if got := cm.log.LogEndOffset(); got != end {
		t.Fatalf("cleaning moved the log end from %d to %d", end, got)
	}
}

// Truncate truncates the log as a follower does, but never below where a
// pass could have cleaned (the log end when it started): a truncation
// there can lose a key's only remaining write, which Kafka avoids by
// cleaning only below the high watermark.
func (cm *cleanMachine) Truncate(t *rapid.T) {
	off := rapid.Int64Range(cm.cleanedTo, cm.model.logEnd).Draw(t, "truncateTo")
	if err := cm.log.TruncateTo(off); err != nil {
		t.Fatalf("truncate to %d: %v", off, err)
	}
	// Whole batches go: the log ends at the last batch ending at or
	// below off.
	for len(cm.batchEnds) > 0 && cm.batchEnds[len(cm.batchEnds)-1] > off {
		cm.batchEnds = cm.batchEnds[:len(cm.batchEnds)-1]
	}
	end := int64(0)
	if n := len(cm.batchEnds); n > 0 {
		end = cm.batchEnds[n-1]
	}
	cm.model.truncateTo(end)
}

func (cm *cleanMachine) Reopen(t *rapid.T) {
	if err := cm.log.Close(); err != nil {
		t.Fatal(err)
	}
	cm.open(t)
}

// SyncAndCrash flushes, then reopens what a crash could leave: nothing the
// log holds may be lost, cleaned or not.
func (cm *cleanMachine) SyncAndCrash(t *rapid.T) {
	if err := cm.log.Flush(); err != nil {
		t.Fatal(err)
	}
	mode := rapid.SampledFrom([]vfs.CrashMode{vfs.CrashLoseUnsynced, vfs.CrashTorn, vfs.CrashGarbage}).Draw(t, "crashMode")
	seed := rapid.Uint64().Draw(t, "crashSeed")
	crashed := cm.mem.CrashClone(mode, rand.New(rand.NewPCG(seed, 3)))
	cm.log.Close()
	cm.mem = crashed
	cm.open(t)
}

func (cm *cleanMachine) Check(t *rapid.T) {
	cm.model.check(t, cm.log, cm.tombstoneGone)
}

// finalPass rolls and cleans with a map big enough for every key, each
// pass past every horizon and lag the last one could have set: after at
// most a few passes the log must hold exactly each key's latest value.
func (cm *cleanMachine) finalPass(t *rapid.T) {
	if err := cm.log.Roll(); err != nil {
		t.Fatal(err)
	}
	want := cm.model.compactedView(false)
	var got []int64
	for range 3 {
		cm.nowMs += cm.cfg.DeleteRetentionMs + cm.cfg.MinCompactionLagMs + 1
		cm.cleanWith(t, 1<<16)
		got = recordOffsets(cm.model.check(t, cm.log, cm.tombstoneGone))
		if slices.Equal(got, want) {
			return
		}
	}
	t.Fatalf("after full passes the log holds offsets %v, want %v", got, want)
}

func TestCleanMatchesModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cfg := DefaultConfig()
		cfg.Compacted, cfg.Deletes = true, false
		cfg.RetentionMs = -1
		cfg.SegmentBytes = int64(rapid.IntRange(200, 2000).Draw(t, "segmentBytes"))
		cfg.IndexIntervalBytes = int64(rapid.IntRange(1, 500).Draw(t, "indexInterval"))
		cfg.DeleteRetentionMs = int64(rapid.IntRange(0, 100).Draw(t, "deleteRetentionMs"))
		if rapid.Bool().Draw(t, "compactionLag") {
			cfg.MinCompactionLagMs = int64(rapid.IntRange(1, 50).Draw(t, "minCompactionLagMs"))
		}
		const startMs = 1_000_000
		cm := &cleanMachine{
			mem:  vfs.NewMem(),
			clk:  clock.NewManual(time.UnixMilli(startMs)),
			cfg:  cfg,
			keys: rapid.IntRange(1, 12).Draw(t, "keys"),
			// 48 bytes is the smallest map: two slots, one key.
			mapSizes: rapid.SampledFrom([][]int{
				{48, 72, 96, 5 * offsetMapEntrySize, 10 * offsetMapEntrySize, 1 << 16},
				{48, 72, 96},
				{1 << 16},
			}).Draw(t, "mapSizes"),
			nowMs: startMs,
			model: newCleanModel(),
		}
		cm.open(t)
		defer func() { cm.log.Close() }()
		// Appends and passes weigh more than reopens and crashes.
		actions := map[string]func(*rapid.T){
			"Append": cm.Append, "Append2": cm.Append,
			"Clean": cm.Clean, "Clean2": cm.Clean,
			"Advance": cm.Advance, "Roll": cm.Roll, "Truncate": cm.Truncate,
			"Reopen": cm.Reopen, "SyncAndCrash": cm.SyncAndCrash,
			"": cm.Check,
		}
		t.Repeat(actions)
		cm.finalPass(t)
	})
}

// A key the offset map cannot take keeps all its records in the segment
// being cleaned (cleaner.go); its tombstone must then stay too, or the older
// value before it comes back. Here the map has two slots and takes one key
// ("a"): "b" is not mapped, its value at offset 1 is kept, and its
// tombstone at offset 2 must not be dropped.
func TestCleanUnmappedKeyKeepsItsTombstone(t *testing.T) {
	e := newEnv(t)
	l := e.open(compactedConfig())
	defer l.Close()
	now := e.clock.Now().UnixMilli()
	model := newCleanModel()
	for _, b := range []struct {
		keys   []string
		values [][]byte
	}{
		{[]string{"a", "b"}, [][]byte{[]byte("a1"), []byte("b1")}},
		{[]string{"b"}, [][]byte{nil}},
	} {
		res := mustAppend(t, l, keyedBatch(t, now, b.keys, b.values))
		for i, k := range b.keys {
			model.add(res.FirstOffset+int64(i), cleanWrite{key: k, value: b.values[i], ts: now})
		}
	}
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	res := mustAppend(t, l, keyedBatch(t, now, []string{"c"}, [][]byte{[]byte("c1")}))
	model.add(res.FirstOffset, cleanWrite{key: "c", value: []byte("c1"), ts: now})

	nowMs := now + 2*compactedConfig().DeleteRetentionMs
	if _, err := l.Clean(CleanOptions{MapMemory: 2 * offsetMapEntrySize, NowMs: nowMs}); err != nil {
		t.Fatal(err)
	}
	model.check(t, l, func(int64) bool { return true })
}

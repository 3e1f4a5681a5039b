package storage

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/record"
	"github.com/samsa-io/samsa/internal/vfs"
)

// keyedBatch builds a batch of records with the given keys and values (a
// nil value is a tombstone), all at timestamp ts.
func keyedBatch(t testing.TB, ts int64, keys []string, values [][]byte) []byte {
	t.Helper()
	recs := make([]record.Record, len(keys))
	for i := range keys {
		recs[i] = record.Record{Offset: int64(i), Timestamp: ts, Key: []byte(keys[i]), Value: values[i]}
	}
	b := record.Batch{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, Records: recs}
	out, err := b.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func compactedConfig() Config {
	cfg := testConfig()
	cfg.Compacted = true
	cfg.Deletes = false
	cfg.DeleteRetentionMs = int64(time.Hour / time.Millisecond)
	return cfg
}

// latestWrite is what the model expects for a key.
type latestWrite struct {
	offset int64
	value  string
	tomb   bool
}

// fillKeyed appends batches updating keys k0..k(nkeys-1) round-robin; keys
// whose index is in tombs get a tombstone as their very last write. It
// advances the clock 1ms per batch and returns each key's latest write.
func fillKeyed(t *testing.T, e *env, l *Log, batches, perBatch, nkeys int, tombs map[int]bool, model map[string]latestWrite) {
	t.Helper()
	n := 0
	for b := range batches {
		keys := make([]string, perBatch)
		vals := make([][]byte, perBatch)
		for i := range perBatch {
			k := n % nkeys
			keys[i] = fmt.Sprintf("k%d", k)
			vals[i] = fmt.Appendf(nil, "v%d-%s", n, strings.Repeat(".", 20))
			if b >= batches-nkeys/perBatch-1 && tombs[k] {
				vals[i] = nil
			}
			n++
		}
		res := mustAppend(t, l, keyedBatch(t, e.clock.Now().UnixMilli(), keys, vals))
		for i := range keys {
			model[keys[i]] = latestWrite{offset: res.FirstOffset + int64(i), value: string(vals[i]), tomb: vals[i] == nil}
		}
		e.clock.Advance(time.Millisecond)
	}
}

func expected(model map[string]latestWrite, withTombs bool) (offs []int64, vals []string) {
	var ws []latestWrite
	for _, w := range model {
		if w.tomb && !withTombs {
			continue
		}
		ws = append(ws, w)
	}
	slices.SortFunc(ws, func(a, b latestWrite) int { return cmpInt64(a.offset, b.offset) })
	for _, w := range ws {
		offs = append(offs, w.offset)
		vals = append(vals, w.value)
	}
	return offs, vals
}

func checkRecords(t *testing.T, l *Log, wantOffs []int64, wantVals []string) {
	t.Helper()
	offs, vals := readAllRecords(t, l)
	if !slices.Equal(offs, wantOffs) || !slices.Equal(vals, wantVals) {
		t.Fatalf("log holds\n offsets %v\n values %q\nwant\n offsets %v\n values %q", offs, vals, wantOffs, wantVals)
	}
}

func TestCleanKeepsLatestPerKey(t *testing.T) {
	e := newEnv(t)
	cfg := compactedConfig()
	l := e.open(cfg)
	model := map[string]latestWrite{}
	fillKeyed(t, e, l, 200, 5, 20, map[int]bool{3: true, 7: true, 12: true}, model)
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	segsBefore := l.Offsets().Segments
	if segsBefore < 5 {
		t.Fatalf("only %d segments", segsBefore)
	}
	endBefore := l.LogEndOffset()

	stats, err := l.Clean(CleanOptions{MapMemory: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if stats.SegmentsCleaned != segsBefore-1 || stats.RecordsRemoved != 1000-20 || stats.BytesWritten >= stats.BytesRead {
		t.Fatalf("stats %+v, %d segments", stats, segsBefore)
	}
	if o := l.Offsets(); o.Segments != segsBefore || o.LogEndOffset != endBefore || o.LogStartOffset != 0 {
		t.Fatalf("offsets after clean: %+v", o)
	}
	// Tombstones are younger than delete.retention.ms: kept.
	wantOffs, wantVals := expected(model, true)
	checkRecords(t, l, wantOffs, wantVals)

	// A second pass changes nothing until the tombstones pass the horizon.
	stats, err = l.Clean(CleanOptions{MapMemory: 1 << 20})
	if err != nil || stats.RecordsRemoved != 0 {
		t.Fatalf("second pass: %+v, %v", stats, err)
	}
	checkRecords(t, l, wantOffs, wantVals)

	e.clock.Advance(2 * time.Hour)
	stats, err = l.Clean(CleanOptions{MapMemory: 1 << 20})
	if err != nil || stats.RecordsRemoved != 3 {
		t.Fatalf("pass past the horizon: %+v, %v", stats, err)
	}
	wantOffs, wantVals = expected(model, false)
	checkRecords(t, l, wantOffs, wantVals)

	// The log still appends, and reopens (cleanly and not) to the same.
	fillKeyed(t, e, l, 10, 5, 20, nil, model)
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Clean(CleanOptions{MapMemory: 1 << 20}); err != nil {
		t.Fatal(err)
	}
	wantOffs, wantVals = expected(model, false)
	checkRecords(t, l, wantOffs, wantVals)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = e.open(cfg)
	checkRecords(t, l, wantOffs, wantVals)
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	// Unclean: open a second time without closing, from the synced state.
	crashed := e.mem.CrashClone(vfs.CrashLoseUnsynced, nil)
	l.Close()
	e.mem = crashed
	e.fs = crashed
	// Without a checkpoint every segment is recovered, not trusted: cleaned
	// segments must still end where the next one starts.
	if err := e.fs.Remove(e.dir + "/" + checkpointFile); err != nil {
		t.Fatal(err)
	}
	l = e.open(cfg)
	defer l.Close()
	checkRecords(t, l, wantOffs, wantVals)
	names, err := e.fs.ReadDir(e.dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if strings.HasSuffix(n, cleanedSuffix) || strings.HasSuffix(n, swapSuffix) {
			t.Fatalf("leftover %s", n)
		}
	}
}

func TestCleanReaderKeepsOldSegment(t *testing.T) {
	e := newEnv(t)
	l := e.open(compactedConfig())
	defer l.Close()
	model := map[string]latestWrite{}
	fillKeyed(t, e, l, 100, 5, 10, nil, model)
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	rr, err := l.Read(0, 1<<20, -1, true)
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	before, err := rr.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	stats, err := l.Clean(CleanOptions{MapMemory: 1 << 20})
	if err != nil || stats.SegmentsCleaned == 0 {
		t.Fatalf("clean: %+v, %v", stats, err)
	}
	after, err := rr.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Fatal("a read pinned before the swap changed")
	}
	if err := record.ForEachBatch(trimPartial(after), func(b []byte, _ record.Header) error { return record.CheckCRC(b) }); err != nil {
		t.Fatal(err)
	}
	wantOffs, wantVals := expected(model, true)
	checkRecords(t, l, wantOffs, wantVals)
}

func TestCleanSkipsNonCompactedLog(t *testing.T) {
	e := newEnv(t)
	cfg := compactedConfig()
	cfg.Compacted = false
	l := e.open(cfg)
	defer l.Close()
	fillKeyed(t, e, l, 100, 5, 10, map[int]bool{1: true}, map[string]latestWrite{})
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	offsBefore, valsBefore := readAllRecords(t, l)
	stats, err := l.Clean(CleanOptions{MapMemory: 1 << 20})
	if err != nil || stats != (CleanStats{}) {
		t.Fatalf("clean: %+v, %v", stats, err)
	}
	checkRecords(t, l, offsBefore, valsBefore)
	if len(offsBefore) != 500 {
		t.Fatalf("%d records", len(offsBefore))
	}
}

func TestCleanRespectsActiveSegmentAndLag(t *testing.T) {
	e := newEnv(t)
	cfg := compactedConfig()
	cfg.MinCompactionLagMs = int64(time.Minute / time.Millisecond)
	l := e.open(cfg)
	defer l.Close()
	model := map[string]latestWrite{}
	fillKeyed(t, e, l, 100, 5, 10, nil, model)
	// Everything is younger than the lag: nothing is cleaned.
	stats, err := l.Clean(CleanOptions{MapMemory: 1 << 20})
	if err != nil || stats.SegmentsCleaned != 0 {
		t.Fatalf("clean within the lag: %+v, %v", stats, err)
	}
	e.clock.Advance(2 * time.Minute)
	active := l.Offsets().Segments
	stats, err = l.Clean(CleanOptions{MapMemory: 1 << 20})
	if err != nil || stats.SegmentsCleaned != active-1 {
		t.Fatalf("clean past the lag: %+v, %v (%d segments)", stats, err, active)
	}
	// The active segment still holds every record appended to it, so
	// older copies of its keys survive in it; each key's latest is there.
	offs, vals := readAllRecords(t, l)
	got := map[int64]string{}
	for i, o := range offs {
		got[o] = vals[i]
	}
	for _, w := range model {
		if got[w.offset] != w.value {
			t.Fatalf("latest write at %d lost", w.offset)
		}
	}
	if len(offs) >= 500 {
		t.Fatalf("nothing removed: %d records", len(offs))
	}
}

func TestCleanSmallMapCleansAPrefix(t *testing.T) {
	e := newEnv(t)
	l := e.open(compactedConfig())
	defer l.Close()
	model := map[string]latestWrite{}
	fillKeyed(t, e, l, 200, 5, 100, nil, model)
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	activeBase := l.LogEndOffset()
	// Room for about 40 keys: each pass maps a slice of the dirty section
	// and the next one goes on from where it stopped (the checkpoint).
	passes, end := 0, int64(0)
	for end < activeBase {
		stats, err := l.Clean(CleanOptions{MapMemory: 40 * offsetMapEntrySize})
		if err != nil || stats.FirstDirtyOffset != end || stats.EndOffset <= end {
			t.Fatalf("pass %d: %+v, %v (previous end %d)", passes, stats, err, end)
		}
		end = stats.EndOffset
		passes++
	}
	if passes < 10 {
		t.Fatalf("%d passes with a 40-key map over 1000 offsets of 100 keys", passes)
	}
	// Nothing dirty left: a pass maps nothing and removes nothing.
	if stats, err := l.Clean(CleanOptions{MapMemory: 1 << 20}); err != nil || stats.RecordsRemoved != 0 || stats.EndOffset != end {
		t.Fatalf("pass with nothing dirty: %+v, %v", stats, err)
	}
	wantOffs, wantVals := expected(model, true)
	checkRecords(t, l, wantOffs, wantVals)
}

// A truncation or retention that runs while the pass writes its files makes
// the swap give up: nothing is swapped in and no cleaner file is left.
func TestCleanAbortsWhenLogChanges(t *testing.T) {
	for _, change := range []string{"truncate", "delete-records"} {
		t.Run(change, func(t *testing.T) {
			e := newEnv(t)
			faulty := vfs.NewFaulty(e.mem, nil)
			e.fs = faulty
			cfg := compactedConfig()
			l := e.open(cfg)
			defer l.Close()
			model := map[string]latestWrite{}
			fillKeyed(t, e, l, 100, 5, 10, nil, model)
			if err := l.Roll(); err != nil {
				t.Fatal(err)
			}
			var once bool
			faulty.SetInjector(func(op vfs.Op, name string) error {
				if op != vfs.OpCreate || !strings.HasSuffix(name, logSuffix+cleanedSuffix) || once {
					return nil
				}
				once = true
				var err error
				if change == "truncate" {
					err = l.TruncateTo(l.LogEndOffset() - 200)
				} else {
					err = l.SetLogStartOffset(l.LogEndOffset() - 200)
				}
				if err != nil {
					t.Error(err)
				}
				return nil
			})
			before := l.Offsets()
			stats, err := l.Clean(CleanOptions{MapMemory: 1 << 20})
			faulty.SetInjector(nil)
			if err != nil || stats.SegmentsCleaned != 0 || !once {
				t.Fatalf("clean: %+v, %v", stats, err)
			}
			offs, _ := readAllRecords(t, l)
			if o := l.Offsets(); len(offs) != int(o.LogEndOffset-o.LogStartOffset) || o.Segments >= before.Segments {
				t.Fatalf("log after the aborted pass: %+v (%d records), before %+v", o, len(offs), before)
			}
			names, _ := e.fs.ReadDir(e.dir)
			for _, n := range names {
				if strings.HasSuffix(n, cleanedSuffix) || strings.HasSuffix(n, swapSuffix) {
					t.Fatalf("leftover %s", n)
				}
			}
			// The next pass cleans what is left.
			if stats, err := l.Clean(CleanOptions{MapMemory: 1 << 20}); err != nil {
				t.Fatalf("next pass: %+v, %v", stats, err)
			}
		})
	}
}

// Appends, reads and flushes go on while passes run (run with -race).
func TestCleanConcurrentAppends(t *testing.T) {
	e := newEnv(t)
	l := e.open(compactedConfig())
	defer l.Close()
	model := map[string]latestWrite{}
	fillKeyed(t, e, l, 50, 5, 10, nil, model)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 20 {
			if _, err := l.Clean(CleanOptions{MapMemory: 1 << 20}); err != nil && err != ErrCleanerBusy {
				t.Error(err)
				return
			}
		}
	}()
	for i := range 200 {
		mustAppend(t, l, keyedBatch(t, e.clock.Now().UnixMilli(), []string{fmt.Sprintf("k%d", i%10)}, [][]byte{[]byte("x")}))
		if i%20 == 0 {
			if err := l.Flush(); err != nil {
				t.Fatal(err)
			}
			readAllRecords(t, l)
		}
	}
	<-done
	if _, err := l.Clean(CleanOptions{MapMemory: 1 << 20}); err != nil {
		t.Fatal(err)
	}
	offs, _ := readAllRecords(t, l)
	if len(offs) == 0 || offs[len(offs)-1] != l.LogEndOffset()-1 {
		t.Fatalf("records %v, log end %d", offs, l.LogEndOffset())
	}
}

// A crash during a cleaner swap leaves .swap files: with the log's .swap
// the swap was committed and open completes it; without, open drops the
// leftovers. Either way the segment is recovered, not trusted.
func TestOpenCompletesOrUndoesSwaps(t *testing.T) {
	for _, committed := range []bool{true, false} {
		e := newEnv(t)
		fill(t, e, 30)
		logs := segmentFiles(t, e, ".log")
		first := logs[0]
		data, err := vfs.ReadFile(e.fs, first)
		if err != nil {
			t.Fatal(err)
		}
		idx := strings.TrimSuffix(first, ".log") + ".index"
		writeFile(t, e.fs, idx+".swap", []byte("garbage index bytes!")) // 20 bytes: not a valid index
		if committed {
			writeFile(t, e.fs, first+".swap", data)
		}
		l := e.open(testConfig())
		if offs, _ := readAllRecords(t, l); len(offs) != 60 {
			t.Fatalf("committed=%v: read %d records", committed, len(offs))
		}
		l.Close()
		names, _ := e.fs.ReadDir(e.dir)
		for _, n := range names {
			if strings.HasSuffix(n, ".swap") {
				t.Fatalf("committed=%v: %s left behind", committed, n)
			}
		}
	}
}

func writeFile(t *testing.T, fsys vfs.FS, name string, data []byte) {
	t.Helper()
	f, err := fsys.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(data, 0); err != nil {
		t.Fatal(err)
	}
}

package storage

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/samsa-io/samsa/internal/clock"
	"github.com/samsa-io/samsa/internal/model"
	"github.com/samsa-io/samsa/internal/record"
	"github.com/samsa-io/samsa/internal/vfs"
)

// Segments that cleaning shrank are merged by the next pass, within
// segment.bytes; the content is the same and reopens the same.
func TestCleanMergesSmallSegments(t *testing.T) {
	e := newEnv(t)
	cfg := compactedConfig()
	l := e.open(cfg)
	model := map[string]latestWrite{}
	fillKeyed(t, e, l, 200, 5, 20, nil, model)
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	before := l.Offsets().Segments
	if _, err := l.Clean(CleanOptions{MapMemory: 1 << 20}); err != nil {
		t.Fatal(err)
	}
	wantOffs, wantVals := expected(model, true)
	checkRecords(t, l, wantOffs, wantVals)
	// The first pass cleans segment by segment (their sizes before
	// cleaning fill segment.bytes); the second merges what is left.
	stats, err := l.Clean(CleanOptions{MapMemory: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	after := l.Offsets().Segments
	if stats.SegmentsWritten >= stats.SegmentsCleaned || after > 3 {
		t.Fatalf("merge pass: %+v; %d segments, %d before cleaning", stats, after, before)
	}
	checkRecords(t, l, wantOffs, wantVals)
	for _, n := range segmentNames(t, e) {
		if strings.HasSuffix(n, cleanedSuffix) || strings.HasSuffix(n, swapSuffix) {
			t.Fatalf("leftover %s", n)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// Without the log checkpoint every segment is recovered: a merged
	// segment must still end where the next begins.
	if err := e.fs.Remove(e.dir + "/" + checkpointFile); err != nil {
		t.Fatal(err)
	}
	l = e.open(cfg)
	defer l.Close()
	checkRecords(t, l, wantOffs, wantVals)
	if got := l.Offsets().Segments; got != after {
		t.Fatalf("%d segments after reopening, %d before", got, after)
	}
}

func segmentNames(t *testing.T, e *env) []string {
	t.Helper()
	names, err := e.fs.ReadDir(e.dir)
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// The first dirty offset survives a reopen, and a truncation below it
// brings it down (durably) so appends after the cut count as dirty.
func TestCleanerCheckpoint(t *testing.T) {
	e := newEnv(t)
	cfg := compactedConfig()
	l := e.open(cfg)
	model := map[string]latestWrite{}
	fillKeyed(t, e, l, 100, 5, 10, nil, model)
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	stats, err := l.Clean(CleanOptions{MapMemory: 1 << 20})
	if err != nil || stats.FirstDirtyOffset != 0 || stats.EndOffset != 500 {
		t.Fatalf("first pass: %+v, %v", stats, err)
	}
	l.Close()
	l = e.open(cfg)
	fillKeyed(t, e, l, 20, 5, 10, nil, model)
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	if c := l.Cleanability(e.clock.Now().UnixMilli(), 0); c.DirtyBytes == 0 || c.CleanBytes == 0 {
		t.Fatalf("cleanability after appends: %+v", c)
	}
	stats, err = l.Clean(CleanOptions{MapMemory: 1 << 20})
	if err != nil || stats.FirstDirtyOffset != 500 || stats.EndOffset != 600 {
		t.Fatalf("pass after reopen: %+v, %v", stats, err)
	}
	wantOffs, wantVals := expected(model, true)
	checkRecords(t, l, wantOffs, wantVals)

	// Truncate into the clean section, then crash: the first dirty offset
	// on disk is the truncation point.
	if err := l.TruncateTo(550); err != nil {
		t.Fatal(err)
	}
	end := l.LogEndOffset()
	if end > 550 {
		t.Fatalf("log end %d after truncating to 550", end)
	}
	crashed := e.mem.CrashClone(vfs.CrashLoseUnsynced, nil)
	l.Close()
	e.mem, e.fs = crashed, crashed
	l = e.open(cfg)
	defer l.Close()
	fillKeyed(t, e, l, 4, 5, 10, nil, model)
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	stats, err = l.Clean(CleanOptions{MapMemory: 1 << 20})
	if err != nil || stats.FirstDirtyOffset != end {
		t.Fatalf("pass after truncation and crash: %+v, %v (log end was %d)", stats, err, end)
	}
}

// MaxOffset (the high watermark) bounds what a pass cleans: records above
// it keep their duplicates.
func TestCleanStopsAtMaxOffset(t *testing.T) {
	e := newEnv(t)
	l := e.open(compactedConfig())
	defer l.Close()
	model := map[string]latestWrite{}
	fillKeyed(t, e, l, 200, 5, 10, nil, model)
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	stats, err := l.Clean(CleanOptions{MapMemory: 1 << 20, MaxOffset: 500})
	if err != nil || stats.EndOffset > 500 || stats.EndOffset < 400 {
		t.Fatalf("clean below 500: %+v, %v", stats, err)
	}
	offs, _ := readAllRecords(t, l)
	above := 0
	for _, o := range offs {
		if o >= stats.EndOffset {
			above++
		}
	}
	if want := int(1000 - stats.EndOffset); above != want {
		t.Fatalf("%d records at or above %d, want all %d", above, stats.EndOffset, want)
	}
}

// The throttle sleeps off bytes over its rate, measured per period.
func TestThrottle(t *testing.T) {
	if NewThrottle(0, nil) != nil || NewThrottle(math.Inf(1), nil) != nil {
		t.Fatal("an unlimited rate must give a nil throttle")
	}
	var nilThrottle *Throttle
	nilThrottle.Wait(1 << 30) // does not block

	clk := clock.NewManual(epoch0)
	th := NewThrottle(1000, clk)
	var slept time.Duration
	th.sleep = func(d time.Duration) { slept += d; clk.Advance(d) }
	for range 30 {
		th.Wait(100)
		clk.Advance(time.Millisecond)
	}
	// 3000 bytes at 1000 B/s take 3 s; 30 ms passed on their own.
	if slept < 2900*time.Millisecond || slept > 3*time.Second {
		t.Fatalf("slept %v for 3000 bytes at 1000 B/s", slept)
	}
}

// Cleanability: the ratio follows appends and passes, the max lag flags an
// old dirty section, and a pass that stamped tombstones makes the log due
// once their horizon comes.
func TestCleanability(t *testing.T) {
	e := newEnv(t)
	cfg := compactedConfig()
	cfg.MaxCompactionLagMs = int64(time.Hour / time.Millisecond)
	l := e.open(cfg)
	defer l.Close()
	now := func() int64 { return e.clock.Now().UnixMilli() }
	model := map[string]latestWrite{}
	fillKeyed(t, e, l, 100, 5, 10, map[int]bool{3: true}, model)
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	c := l.Cleanability(now(), 0)
	if c.CleanBytes != 0 || c.DirtyBytes == 0 || c.Ratio() != 1 || c.MaxLagExceeded || c.HorizonDue {
		t.Fatalf("before any pass: %+v", c)
	}
	// The high watermark at 0 leaves nothing cleanable.
	if c := l.Cleanability(now(), 1); c.DirtyBytes != 0 {
		t.Fatalf("with the high watermark at 1: %+v", c)
	}
	e.clock.Advance(2 * time.Hour)
	if c := l.Cleanability(now(), 0); !c.MaxLagExceeded {
		t.Fatalf("two hours later, max lag one hour: %+v", c)
	}
	if _, err := l.Clean(CleanOptions{MapMemory: 1 << 20}); err != nil {
		t.Fatal(err)
	}
	c = l.Cleanability(now(), 0)
	if c.DirtyBytes != 0 || c.CleanBytes == 0 || c.Ratio() != 0 || c.HorizonDue {
		t.Fatalf("after a pass: %+v", c)
	}
	// delete.retention.ms is an hour.
	e.clock.Advance(time.Hour)
	if c := l.Cleanability(now(), 0); !c.HorizonDue {
		t.Fatalf("an hour after the tombstones were stamped: %+v", c)
	}
	stats, err := l.Clean(CleanOptions{MapMemory: 1 << 20})
	if err != nil || stats.RecordsRemoved != 1 {
		t.Fatalf("pass at the horizon: %+v, %v", stats, err)
	}
	wantOffs, wantVals := expected(model, false)
	checkRecords(t, l, wantOffs, wantVals)
	if c := l.Cleanability(now(), 0); c.HorizonDue {
		t.Fatalf("after the tombstones went: %+v", c)
	}
}

// A tombstone written with an old timestamp stays for delete.retention.ms
// after the pass that first sees it (KIP-534), not for whatever is left of
// delete.retention.ms after its timestamp.
func TestCleanTombstoneWithOldTimestamp(t *testing.T) {
	e := newEnv(t)
	l := e.open(compactedConfig())
	defer l.Close()
	old := e.clock.Now().Add(-48 * time.Hour).UnixMilli()
	mustAppend(t, l, keyedBatch(t, old, []string{"a", "b"}, [][]byte{[]byte("1"), []byte("1")}))
	mustAppend(t, l, keyedBatch(t, old, []string{"a"}, [][]byte{nil}))
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := l.Clean(CleanOptions{MapMemory: 1 << 20}); err != nil {
			t.Fatal(err)
		}
		checkRecords(t, l, []int64{1, 2}, []string{"1", ""})
		e.clock.Advance(59 * time.Minute)
	}
	e.clock.Advance(2 * time.Minute)
	if _, err := l.Clean(CleanOptions{MapMemory: 1 << 20}); err != nil {
		t.Fatal(err)
	}
	checkRecords(t, l, []int64{1}, []string{"1"})
}

// txnBatch is a transactional data batch of pid with keyed records.
func txnBatch(t *testing.T, pid int64, seq int32, ts int64, keys ...string) []byte {
	t.Helper()
	b := record.Batch{ProducerID: pid, ProducerEpoch: 0, BaseSequence: seq, Transactional: true}
	for i, k := range keys {
		b.Records = append(b.Records, record.Record{Offset: int64(i), Timestamp: ts, Key: []byte(k), Value: []byte("txn-" + k)})
	}
	out, err := b.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func markerBatch(t *testing.T, pid int64, ts int64, commit bool) []byte {
	t.Helper()
	r := record.EndTxnMarker(commit, 0)
	r.Timestamp = ts
	b := record.Batch{ProducerID: pid, ProducerEpoch: 0, BaseSequence: record.NoSequence, Transactional: true, Control: true,
		Records: []record.Record{r}}
	out, err := b.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// batchesOf lists the log's batches as "base:control:records".
func batchesOf(t *testing.T, l *Log) []string {
	t.Helper()
	var out []string
	for off := l.LogStartOffset(); off < l.LogEndOffset(); {
		rr, err := l.Read(off, 1<<20, -1, true)
		if err != nil {
			t.Fatal(err)
		}
		data, err := rr.ReadAll()
		rr.Release()
		if err != nil {
			t.Fatal(err)
		}
		err = record.ForEachBatch(data, func(_ []byte, h record.Header) error {
			if h.NextOffset() > off {
				out = append(out, fmt.Sprintf("%d:%v:%d", h.BaseOffset, h.IsControl(), h.NumRecords))
				off = h.NextOffset()
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// Aborted data goes at the first pass; a committed transaction's data goes
// when newer records replace it; a marker is stamped once its transaction
// has no data left and removed after delete.retention.ms; a producer's
// last data batch stays as an empty header so its sequence survives.
func TestCleanTransactions(t *testing.T) {
	e := newEnv(t)
	cfg := compactedConfig()
	l := e.open(cfg)
	ts := e.clock.Now().UnixMilli()
	mustAppend(t, l, txnBatch(t, 7, 0, ts, "a", "b")) // 0-1, committed
	mustAppend(t, l, markerBatch(t, 7, ts, true))     // 2
	mustAppend(t, l, txnBatch(t, 8, 0, ts, "c"))      // 3, aborted
	mustAppend(t, l, markerBatch(t, 8, ts, false))    // 4
	mustAppend(t, l, keyedBatch(t, ts, []string{"a", "b"}, [][]byte{[]byte("new"), []byte("new")}))
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Clean(CleanOptions{MapMemory: 1 << 20}); err != nil {
		t.Fatal(err)
	}
	// Producer 7's only data batch lost its records: an empty header keeps
	// its sequence; producer 8's aborted batch likewise (its last). Both
	// markers stay, now stamped.
	if got, want := batchesOf(t, l), []string{"0:false:0", "2:true:1", "3:false:0", "4:true:1", "5:false:2"}; !slices.Equal(got, want) {
		t.Fatalf("after the first pass: %v, want %v", got, want)
	}
	e.clock.Advance(2 * time.Hour)
	if _, err := l.Clean(CleanOptions{MapMemory: 1 << 20}); err != nil {
		t.Fatal(err)
	}
	if got, want := batchesOf(t, l), []string{"0:false:0", "3:false:0", "5:false:2"}; !slices.Equal(got, want) {
		t.Fatalf("past the horizon: %v, want %v", got, want)
	}
	l.Close()
	l = e.open(cfg)
	defer l.Close()
	for pid, wantSeq := range map[int64]int32{7: 1, 8: 0} {
		p, ok := l.mu.producers.Producer(pid)
		if !ok || p.LastSeq() != wantSeq {
			t.Fatalf("producer %d after cleaning and reopening: %+v (found %v), want last sequence %d", pid, p, ok, wantSeq)
		}
	}
	if fu := l.FirstUnstableOffset(); fu >= 0 {
		t.Fatalf("first unstable offset %d after reopen: a transaction looks open", fu)
	}
}

// The Manager cleans the logs that are due, dirtiest first, and stops each
// at its high watermark.
func TestManagerCleansDueLogs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := vfs.NewMem()
		clk := clock.NewManual(epoch0)
		m, err := NewManager(ManagerConfig{Dirs: []string{"/data"}, CleanerMapMemory: 1 << 20}, Options{FS: mem, Clock: clk, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		cfg := testConfig()
		cfg.Compacted, cfg.Deletes = true, false
		cfg.MinCleanableDirtyRatio = 0.5
		open := func(name string) *Log {
			l, err := m.OpenLog(model.TopicPartition{Topic: name, Partition: 0}, cfg)
			if err != nil {
				t.Fatal(err)
			}
			return l
		}
		dirty, clean, held := open("dirty"), open("clean"), open("held")
		fillLogs := func(ls ...*Log) {
			for i := range 300 {
				for _, l := range ls {
					mustAppend(t, l, keyedBatch(t, clk.Now().UnixMilli(), []string{fmt.Sprint("k", i%5)}, [][]byte{fmt.Appendf(nil, "v%d", i)}))
				}
			}
			for _, l := range ls {
				if err := l.Roll(); err != nil {
					t.Fatal(err)
				}
			}
		}
		fillLogs(dirty, clean, held)
		m.HighWatermark = func(tp model.TopicPartition, l *Log) int64 {
			if tp.Topic == "held" {
				return 1
			}
			return l.LogEndOffset()
		}
		if _, err := clean.Clean(CleanOptions{MapMemory: 1 << 20}); err != nil {
			t.Fatal(err)
		}
		// A few appends to the clean log: far below the ratio.
		mustAppend(t, clean, keyedBatch(t, clk.Now().UnixMilli(), []string{"k1"}, [][]byte{[]byte("x")}))
		if err := clean.Roll(); err != nil {
			t.Fatal(err)
		}
		sizes := func() (int64, int64, int64) { return dirty.Offsets().Size, clean.Offsets().Size, held.Offsets().Size }
		d0, c0, h0 := sizes()
		m.cleanDirtiest()
		d1, c1, h1 := sizes()
		if d1 >= d0/2 || c1 != c0 || h1 != h0 {
			t.Fatalf("sizes before %d %d %d, after %d %d %d: want only the dirty log cleaned", d0, c0, h0, d1, c1, h1)
		}
		// The background loop runs the same.
		m.cfg.CleanerBackoff = 5 * time.Millisecond
		fillLogs(dirty)
		d0, _, _ = sizes()
		m.Start(context.Background())
		runBackground(5 * time.Millisecond)
		if d, _, _ := sizes(); d >= d0/2 {
			t.Fatalf("dirty log holds %d of %d bytes after a background round", d, d0)
		}
	})
}

// A crash after a merged swap was committed (its .log.swap durable) but
// before the group's later segments were deleted: open completes the swap
// and deletes the segments the swapped one now covers.
func TestOpenCompletesMergedSwap(t *testing.T) {
	e := newEnv(t)
	fill(t, e, 100)
	logs := segmentFiles(t, e, ".log")
	if len(logs) < 4 {
		t.Fatalf("only %d segments", len(logs))
	}
	var merged []byte
	for _, name := range logs[:3] {
		data, err := vfs.ReadFile(e.fs, name)
		if err != nil {
			t.Fatal(err)
		}
		merged = append(merged, data...)
	}
	writeFile(t, e.fs, logs[0]+swapSuffix, merged)
	l := e.open(testConfig())
	defer l.Close()
	if offs, _ := readAllRecords(t, l); len(offs) != 200 {
		t.Fatalf("read %d records, want 200", len(offs))
	}
	after := segmentFiles(t, e, ".log")
	if len(after) != len(logs)-2 || after[0] != logs[0] || after[1] != logs[3] {
		t.Fatalf("segments after completing the swap: %v (before %v)", after, logs)
	}
	for _, n := range segmentNames(t, e) {
		if strings.HasSuffix(n, swapSuffix) {
			t.Fatalf("%s left behind", n)
		}
	}
}

// A pass reports what it reads and writes to its throttle, which sleeps it
// down to the rate: at 1 MB/s the pass's bytes cost their time in sleep.
func TestCleanIsThrottled(t *testing.T) {
	e := newEnv(t)
	l := e.open(compactedConfig())
	defer l.Close()
	model := map[string]latestWrite{}
	fillKeyed(t, e, l, 200, 5, 20, nil, model)
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	clk := clock.NewManual(epoch0)
	th := NewThrottle(1e6, clk)
	var slept time.Duration
	th.sleep = func(d time.Duration) { slept += d; clk.Advance(d) }
	stats, err := l.Clean(CleanOptions{MapMemory: 1 << 20, Throttle: th})
	if err != nil || stats.SegmentsCleaned == 0 {
		t.Fatalf("clean: %+v, %v", stats, err)
	}
	// Mapping reads the dirty section, rewriting reads it again and
	// writes the result: at least BytesRead*2 + BytesWritten, less what
	// the last period left unslept.
	io := 2*stats.BytesRead + stats.BytesWritten
	want := time.Duration(float64(io) / 1e6 * float64(time.Second))
	if slept < want-throttleCheck || slept > want+throttleCheck {
		t.Fatalf("slept %v for %d bytes of I/O at 1 MB/s (want about %v)", slept, io, want)
	}
}

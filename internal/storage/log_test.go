package storage

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/record"
	"github.com/samsa-io/samsa/internal/vfs"
)

func TestAppendAssignsContiguousOffsets(t *testing.T) {
	e := newEnv(t)
	l := e.open(testConfig())
	defer l.Close()
	var want []int64
	for i := range 50 {
		res := mustAppend(t, l, makeBatch(t, 3, 1000+int64(i), fmt.Sprint(i), 40))
		if res.FirstOffset != int64(i*3) || res.LastOffset != int64(i*3+2) {
			t.Fatalf("append %d: offsets %d..%d", i, res.FirstOffset, res.LastOffset)
		}
		want = append(want, int64(i*3), int64(i*3+1), int64(i*3+2))
	}
	if got := l.LogEndOffset(); got != 150 {
		t.Fatalf("log end %d", got)
	}
	if l.Offsets().Segments < 2 {
		t.Fatalf("expected rolls at 4 KiB segments, have %d segment(s)", l.Offsets().Segments)
	}
	got, values := readAllRecords(t, l)
	if !slices.Equal(got, want) {
		t.Fatalf("offsets %v", got)
	}
	if values[4] != "v1-1"+strings.Repeat(".", 36) {
		t.Fatalf("value 4 = %q", values[4])
	}
}

func TestReadBounds(t *testing.T) {
	e := newEnv(t)
	l := e.open(testConfig())
	defer l.Close()
	sizes := []int{}
	for i := range 10 {
		b := makeBatch(t, 2, 1000, fmt.Sprint(i), 20)
		sizes = append(sizes, len(b))
		mustAppend(t, l, b)
	}
	// Mid-batch offset: the read starts at the batch holding it.
	rr, err := l.Read(5, 1<<20, -1, false)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := rr.ReadAll()
	rr.Release()
	if h, _ := record.ParseHeader(data); h.BaseOffset != 4 {
		t.Fatalf("read at 5 starts at batch %d", h.BaseOffset)
	}
	// maxOffset (high watermark) stops before the batch at 6.
	rr, _ = l.Read(0, 1<<20, 6, false)
	if rr.Size != int64(sizes[0]+sizes[1]+sizes[2]) {
		t.Fatalf("read to hw 6: %d bytes", rr.Size)
	}
	rr.Release()
	// maxBytes below one batch: nothing, unless minOneBatch.
	if rr, _ = l.Read(0, 10, -1, false); rr.Size != 10 {
		t.Fatalf("maxBytes 10 without minOne: %d bytes", rr.Size)
	}
	rr.Release()
	if rr, _ = l.Read(0, 10, -1, true); rr.Size != int64(sizes[0]) {
		t.Fatalf("maxBytes 10 with minOne: %d bytes", rr.Size)
	}
	rr.Release()
	// At the log end: empty. Past it or below the start: out of range.
	if rr, err = l.Read(20, 100, -1, true); err != nil || rr.Size != 0 {
		t.Fatalf("read at end: %d %v", rr.Size, err)
	}
	if _, err = l.Read(21, 100, -1, true); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("read past end: %v", err)
	}
	if _, err = l.Read(-1, 100, -1, true); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("read below start: %v", err)
	}
}

// ReadWhole ends at the last whole batch of a capped read, whatever the
// index spacing (an entry per batch, or none past the segment's start);
// keeps the first batch whole when it alone is larger than the cap; and
// reads exactly what Read does when nothing is cut.
func TestReadWholeEndsAtABatch(t *testing.T) {
	for _, interval := range []int64{1, 1 << 20} {
		t.Run(fmt.Sprint("index interval ", interval), func(t *testing.T) {
			e := newEnv(t)
			cfg := testConfig()
			cfg.SegmentBytes, cfg.IndexIntervalBytes = 1<<20, interval
			l := e.open(cfg)
			defer l.Close()
			var ends []int64 // where each batch ends, from the log's start
			for i := range 12 {
				b := makeBatch(t, 1+i%3, 1000, fmt.Sprint(i), 40+30*i)
				mustAppend(t, l, b)
				last := int64(0)
				if len(ends) > 0 {
					last = ends[len(ends)-1]
				}
				ends = append(ends, last+int64(len(b)))
			}
			total := ends[len(ends)-1]
			// wholeBelow is the end of the last batch within max bytes,
			// at least the first batch's.
			wholeBelow := func(max int64) int64 {
				out := ends[0]
				for _, e := range ends {
					if e <= max {
						out = e
					}
				}
				return out
			}
			for max := int64(1); max <= total+10; max += 7 {
				rr, err := l.ReadWhole(0, int32(max), -1)
				if err != nil {
					t.Fatal(err)
				}
				data, _ := rr.ReadAll()
				rr.Release()
				if want := wholeBelow(max); int64(len(data)) != want {
					t.Fatalf("ReadWhole of %d bytes: %d, want %d", max, len(data), want)
				}
				if len(trimPartial(data)) != len(data) {
					t.Fatalf("ReadWhole of %d bytes ends in a cut batch", max)
				}
				plain, _ := l.Read(0, int32(max), -1, true)
				plain.Release()
				if max >= total && plain.Size != int64(len(data)) {
					t.Fatalf("uncut read: Read %d bytes, ReadWhole %d", plain.Size, len(data))
				}
			}
		})
	}
}

func TestReadUsesOSFileForSendfile(t *testing.T) {
	l, err := Open(t.TempDir()+"/t-0", testConfig(), Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	mustAppend(t, l, makeBatch(t, 1, 1, "a", 10))
	rr, err := l.Read(0, 1000, -1, true)
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	if _, ok := rr.File.(vfs.OSFile); !ok {
		t.Fatal("segment file on the OS filesystem does not expose *os.File")
	}
}

func TestRollBySegmentMs(t *testing.T) {
	e := newEnv(t)
	cfg := testConfig()
	cfg.SegmentBytes = 1 << 30
	cfg.SegmentMs = 1000
	l := e.open(cfg)
	defer l.Close()
	mustAppend(t, l, makeBatch(t, 1, 10_000, "a", 10))
	mustAppend(t, l, makeBatch(t, 1, 10_500, "b", 10))
	if n := l.Offsets().Segments; n != 1 {
		t.Fatalf("rolled early: %d segments", n)
	}
	mustAppend(t, l, makeBatch(t, 1, 11_001, "c", 10))
	if n := l.Offsets().Segments; n != 2 {
		t.Fatalf("segment.ms did not roll: %d segments", n)
	}
}

func TestRollWhenIndexFull(t *testing.T) {
	e := newEnv(t)
	cfg := testConfig()
	cfg.SegmentBytes = 1 << 30
	cfg.IndexIntervalBytes = 1
	cfg.SegmentIndexBytes = 3 * offsetEntrySize
	l := e.open(cfg)
	defer l.Close()
	for i := range 10 {
		mustAppend(t, l, makeBatch(t, 1, int64(i), "x", 10))
	}
	if n := l.Offsets().Segments; n < 2 {
		t.Fatalf("full index did not roll: %d segments", n)
	}
}

func TestOversizeBatchGetsItsOwnSegment(t *testing.T) {
	e := newEnv(t)
	l := e.open(testConfig())
	defer l.Close()
	mustAppend(t, l, makeBatch(t, 1, 1, "a", 10))
	mustAppend(t, l, makeBatch(t, 1, 2, "big", 10_000))
	mustAppend(t, l, makeBatch(t, 1, 3, "c", 10))
	if _, values := readAllRecords(t, l); len(values) != 3 {
		t.Fatalf("read %d records", len(values))
	}
}

func TestLogAppendTime(t *testing.T) {
	e := newEnv(t)
	cfg := testConfig()
	cfg.LogAppendTime = true
	l := e.open(cfg)
	defer l.Close()
	b := makeBatch(t, 2, 5, "a", 10)
	res := mustAppend(t, l, b)
	if res.LogAppendTime != epoch0.UnixMilli() {
		t.Fatalf("log append time %d", res.LogAppendTime)
	}
	h, _ := record.ParseHeader(b)
	if !h.LogAppendTime() || h.MaxTimestamp != epoch0.UnixMilli() || record.CheckCRC(b) != nil {
		t.Fatalf("batch not rewritten: %+v crc=%v", h, record.CheckCRC(b))
	}
}

func TestOffsetForTimestamp(t *testing.T) {
	e := newEnv(t)
	l := e.open(testConfig())
	defer l.Close()
	// Batch i holds records at 1000+10i, 1000+10i+1, 1000+10i+2.
	for i := range 100 {
		mustAppend(t, l, makeBatch(t, 3, 1000+10*int64(i), "t", 30))
	}
	cases := []struct {
		ts, off, gotTs int64
		found          bool
	}{
		{0, 0, 1000, true},
		{1000, 0, 1000, true},
		{1001, 1, 1001, true},
		{1003, 3, 1010, true},
		{1500, 150, 1500, true},
		{1502, 152, 1502, true},
		{1992, 299, 1992, true},
		{1993, -1, -1, false},
	}
	for _, c := range cases {
		off, ts, found, err := l.OffsetForTimestamp(c.ts)
		if err != nil || off != c.off || ts != c.gotTs || found != c.found {
			t.Errorf("ts %d: got %d@%d found=%v err=%v, want %d@%d", c.ts, off, ts, found, err, c.off, c.gotTs)
		}
	}
	// Max timestamp: a later batch with an older timestamp does not count.
	mustAppend(t, l, makeBatch(t, 1, 50, "old", 10))
	off, ts, found, err := l.MaxTimestamp()
	if err != nil || !found || off != 299 || ts != 1992 {
		t.Fatalf("max timestamp: %d@%d %v %v", off, ts, found, err)
	}
}

func TestReopenCleanReadsOnlyTheTail(t *testing.T) {
	e := newEnv(t)
	cfg := testConfig()
	cfg.SegmentBytes = 256 << 10
	l := e.open(cfg)
	for i := range 2000 {
		mustAppend(t, l, makeBatch(t, 2, int64(i), "r", 100))
	}
	size := l.Offsets().Size
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	cfs := &countingFS{FS: e.mem}
	e.fs = cfs
	l = e.open(cfg)
	read := cfs.logBytes.Load()
	if read*20 > size {
		t.Fatalf("clean reopen read %d of %d log bytes: it scanned", read, size)
	}
	if l.LogEndOffset() != 4000 {
		t.Fatalf("log end %d", l.LogEndOffset())
	}
	if off, _, _, _ := l.OffsetForTimestamp(1500); off != 2999 { // batch 1499 holds ts 1499, 1500
		t.Fatalf("time index after reopen: %d", off)
	}
	mustAppend(t, l, makeBatch(t, 1, 1, "after", 10))
	l.Close()

	// The same log after a crash (no clean mark) is scanned from the
	// recovery point: here, the start, since nothing was checkpointed.
	crashed := e.mem.CrashClone(vfs.CrashLoseUnsynced, nil)
	cfs = &countingFS{FS: crashed}
	e.fs = cfs
	if err := writeCheckpoint(cfs, e.dir, checkpoint{}); err != nil {
		t.Fatal(err)
	}
	l = e.open(cfg)
	defer l.Close()
	if cfs.logBytes.Load() < size {
		t.Fatalf("unclean reopen read only %d of %d bytes", cfs.logBytes.Load(), size)
	}
	if l.LogEndOffset() != 4001 {
		t.Fatalf("log end after recovery %d", l.LogEndOffset())
	}
}

func TestTruncateTo(t *testing.T) {
	e := newEnv(t)
	l := e.open(testConfig())
	defer l.Close()
	for i := range 60 {
		mustAppend(t, l, makeBatch(t, 2, int64(i), "x", 40))
	}
	segs := l.Offsets().Segments
	if err := l.TruncateTo(31); err != nil { // inside batch 30..31: it goes whole
		t.Fatal(err)
	}
	if l.LogEndOffset() != 30 {
		t.Fatalf("log end %d", l.LogEndOffset())
	}
	if l.Offsets().Segments >= segs {
		t.Fatal("truncation kept later segments")
	}
	res := mustAppend(t, l, makeBatch(t, 1, 99, "new", 10))
	if res.FirstOffset != 30 {
		t.Fatalf("append after truncate at %d", res.FirstOffset)
	}
	offs, vals := readAllRecords(t, l)
	if len(offs) != 31 || offs[30] != 30 || !strings.HasPrefix(vals[30], "vnew-0") {
		t.Fatalf("after truncate: %d records, last %v", len(offs), vals[len(vals)-1])
	}
	if err := l.TruncateTo(0); err != nil || l.LogEndOffset() != 0 {
		t.Fatalf("truncate to 0: %v, end %d", err, l.LogEndOffset())
	}
}

func TestTruncateFullyAndStartAt(t *testing.T) {
	e := newEnv(t)
	l := e.open(testConfig())
	for i := range 20 {
		mustAppend(t, l, makeBatch(t, 2, int64(i), "x", 40))
	}
	if err := l.TruncateFullyAndStartAt(500); err != nil {
		t.Fatal(err)
	}
	if o := l.Offsets(); o.LogStartOffset != 500 || o.LogEndOffset != 500 || o.Segments != 1 {
		t.Fatalf("offsets %+v", o)
	}
	if res := mustAppend(t, l, makeBatch(t, 1, 1, "y", 1)); res.FirstOffset != 500 {
		t.Fatalf("first offset %d", res.FirstOffset)
	}
	l.Close()
	l = e.open(testConfig())
	defer l.Close()
	if o := l.Offsets(); o.LogStartOffset != 500 || o.LogEndOffset != 501 {
		t.Fatalf("after reopen %+v", o)
	}
}

func TestSetLogStartOffset(t *testing.T) {
	e := newEnv(t)
	l := e.open(testConfig())
	for i := range 60 {
		mustAppend(t, l, makeBatch(t, 2, int64(i), "x", 40))
	}
	before := l.Offsets().Segments
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := l.SetLogStartOffset(70); err != nil {
		t.Fatal(err)
	}
	if l.Offsets().Segments >= before {
		t.Fatal("no segment deleted below the new start")
	}
	if _, err := l.Read(69, 100, -1, true); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("read below start: %v", err)
	}
	offs, _ := readAllRecords(t, l)
	if offs[0] != 70 || len(offs) != 50 {
		t.Fatalf("first %d, count %d", offs[0], len(offs))
	}
	if err := l.SetLogStartOffset(1000); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("start past end: %v", err)
	}
	// The start survives a crash: it is checkpointed at once.
	crashed := e.mem.CrashClone(vfs.CrashLoseUnsynced, nil)
	l.Close()
	e.fs = crashed
	l = e.open(testConfig())
	defer l.Close()
	if got := l.LogStartOffset(); got != 70 {
		t.Fatalf("log start after crash %d", got)
	}
}

func TestRetention(t *testing.T) {
	e := newEnv(t)
	cfg := testConfig()
	cfg.RetentionMs = 60_000
	l := e.open(cfg)
	defer l.Close()
	now := e.clock.Now().UnixMilli()
	for i := range 40 {
		mustAppend(t, l, makeBatch(t, 2, now+int64(i)*1000, "x", 100))
	}
	segs := l.Offsets().Segments
	if n, err := l.EnforceRetention(l.LogEndOffset()); n != 0 || err != nil {
		t.Fatalf("deleted %d fresh segments: %v", n, err)
	}
	e.clock.Advance(80 * time.Second) // the first 20 seconds of records expire
	n, err := l.EnforceRetention(l.LogEndOffset())
	if err != nil || n == 0 || n >= segs {
		t.Fatalf("deleted %d of %d: %v", n, segs, err)
	}
	start := l.LogStartOffset()
	if start == 0 || start > 40 {
		t.Fatalf("log start %d after time retention", start)
	}
	// The high watermark bounds retention: nothing at or above it goes.
	e.clock.Advance(time.Hour)
	if n, _ := l.EnforceRetention(start); n != 0 {
		t.Fatalf("deleted %d segments above the high watermark", n)
	}
	// Everything expired: the log rolls and keeps an empty active segment.
	if _, err := l.EnforceRetention(l.LogEndOffset()); err != nil {
		t.Fatal(err)
	}
	if o := l.Offsets(); o.LogStartOffset != 80 || o.LogEndOffset != 80 || o.Segments != 1 {
		t.Fatalf("after full expiry %+v", o)
	}
	if res := mustAppend(t, l, makeBatch(t, 1, 1, "y", 1)); res.FirstOffset != 80 {
		t.Fatalf("append after expiry at %d", res.FirstOffset)
	}
}

func TestRetentionBytes(t *testing.T) {
	e := newEnv(t)
	cfg := testConfig()
	cfg.RetentionBytes = 10_000
	l := e.open(cfg)
	defer l.Close()
	for i := range 200 {
		mustAppend(t, l, makeBatch(t, 1, int64(i), "x", 100))
	}
	if _, err := l.EnforceRetention(l.LogEndOffset()); err != nil {
		t.Fatal(err)
	}
	o := l.Offsets()
	// Like Kafka, whole segments go while the rest still exceeds the
	// limit, so what stays is under it plus less than one segment.
	if o.Size > 10_000+cfg.SegmentBytes || o.Size < 10_000-cfg.SegmentBytes {
		t.Fatalf("size %d after retention.bytes 10000", o.Size)
	}
}

func TestLeaderEpochs(t *testing.T) {
	e := newEnv(t)
	l := e.open(testConfig())
	for i := range 10 {
		if _, err := l.AppendAsLeader(makeBatch(t, 1, 1, "x", 10), int32(i/4)); err != nil {
			t.Fatal(err)
		}
	}
	want := []EpochEntry{{0, 0}, {1, 4}, {2, 8}}
	if got := l.Epochs(); !slices.Equal(got, want) {
		t.Fatalf("epochs %v", got)
	}
	for _, c := range []struct {
		ask, epoch int32
		end        int64
	}{{0, 0, 4}, {1, 1, 8}, {2, 2, 10}, {5, 2, 10}} {
		ep, end := l.EndOffsetForEpoch(c.ask)
		if ep != c.epoch || end != c.end {
			t.Errorf("epoch %d: got %d/%d want %d/%d", c.ask, ep, end, c.epoch, c.end)
		}
	}
	if err := l.TruncateTo(6); err != nil {
		t.Fatal(err)
	}
	if got := l.Epochs(); !slices.Equal(got, want[:2]) {
		t.Fatalf("epochs after truncate %v", got)
	}
	l.Close()
	l = e.open(testConfig())
	defer l.Close()
	if got := l.Epochs(); !slices.Equal(got, want[:2]) {
		t.Fatalf("epochs after reopen %v", got)
	}
	if err := l.SetLogStartOffset(5); err != nil {
		t.Fatal(err)
	}
	if got := l.Epochs(); !slices.Equal(got, []EpochEntry{{1, 5}}) {
		t.Fatalf("epochs after start moved %v", got)
	}
	// Epoch 0 is gone: as Kafka, it ends where the first known one starts.
	if ep, end := l.EndOffsetForEpoch(0); ep != 0 || end != 5 {
		t.Fatalf("epoch 0 below the first known: %d/%d, want 0/5", ep, end)
	}
	if ep, end := l.EndOffsetForEpoch(-1); ep != -1 || end != -1 {
		t.Fatalf("epoch -1: %d/%d", ep, end)
	}
}

func TestAppendAsFollower(t *testing.T) {
	e := newEnv(t)
	l := e.open(testConfig())
	defer l.Close()
	b := makeBatch(t, 3, 1, "f", 10)
	record.AssignOffsets(b, 10, 7, -1)
	if err := l.TruncateFullyAndStartAt(10); err != nil {
		t.Fatal(err)
	}
	if _, err := l.AppendAsFollower(b); err != nil {
		t.Fatal(err)
	}
	if l.LogEndOffset() != 13 {
		t.Fatalf("log end %d", l.LogEndOffset())
	}
	if ep, _ := l.LatestEpoch(); ep.Epoch != 7 || ep.StartOffset != 10 {
		t.Fatalf("epoch %+v", ep)
	}
	// Going backwards, or a bad CRC, is refused without failing the log.
	if _, err := l.AppendAsFollower(b); !errors.Is(err, ErrInvalidOffset) {
		t.Fatalf("backwards append: %v", err)
	}
	c := makeBatch(t, 1, 1, "g", 10)
	record.AssignOffsets(c, 13, 7, -1)
	c[len(c)-1] ^= 0xff
	if _, err := l.AppendAsFollower(c); !errors.Is(err, record.ErrCorrupt) {
		t.Fatalf("bad crc: %v", err)
	}
	if _, err := l.AppendAsLeader(makeBatch(t, 1, 1, "h", 1), 7); err != nil {
		t.Fatalf("log unusable after refused appends: %v", err)
	}
}

// Concurrent Syncs share fsyncs. The first log fsync is held until every
// writer has appended, so the other writers' Syncs arrive while it runs
// (or after it) and wait: one more flush, which sees every append, covers
// them all. At most two fsyncs for 40 writers whatever the scheduling, and
// no sleep; a Sync that ran a flush of its own per caller would take 40.
func TestGroupCommitFoldsSyncs(t *testing.T) {
	e := newEnv(t)
	ff := vfs.NewFaulty(e.mem, nil)
	e.fs = ff
	cfg := testConfig()
	cfg.SegmentBytes = 1 << 20 // one segment: one log fsync per flush
	l := e.open(cfg)
	defer l.Close()
	const writers = 40
	var appended sync.WaitGroup
	appended.Add(writers)
	var syncs atomic.Int64
	ff.SetInjector(func(op vfs.Op, name string) error {
		if op == vfs.OpSync && strings.HasSuffix(name, ".log") && syncs.Add(1) == 1 {
			appended.Wait()
		}
		return nil
	})
	var done sync.WaitGroup
	errs := make(chan error, writers)
	for i := range writers {
		done.Add(1)
		go func() {
			defer done.Done()
			res, err := l.AppendAsLeader(makeBatch(t, 1, int64(i), "g", 10), 0)
			appended.Done()
			if err == nil {
				err = l.Sync(res.LastOffset + 1)
			}
			errs <- err
		}()
	}
	done.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := l.Offsets().RecoveryPoint; got != writers {
		t.Fatalf("recovery point %d", got)
	}
	if n := syncs.Load(); n > 2 {
		t.Fatalf("%d log fsyncs for %d concurrent syncs, want at most 2: they were not folded", n, writers)
	}
	// What makes one flush enough for every waiter: a flush claims the log
	// end it saw, not only the offset its caller asked for. (Which waiter
	// runs the second flush above is the scheduler's choice; here the
	// claim is checked without one.)
	first := mustAppend(t, l, makeBatch(t, 1, 1, "g", 10))
	mustAppend(t, l, makeBatch(t, 2, 1, "g", 10))
	if err := l.Sync(first.LastOffset + 1); err != nil {
		t.Fatal(err)
	}
	if o := l.Offsets(); o.RecoveryPoint != o.LogEndOffset {
		t.Fatalf("a sync to %d flushed up to %d of %d", first.LastOffset+1, o.RecoveryPoint, o.LogEndOffset)
	}
}

func TestFlushMessages(t *testing.T) {
	e := newEnv(t)
	cfg := testConfig()
	cfg.FlushMessages = 5
	l := e.open(cfg)
	defer l.Close()
	for range 4 {
		mustAppend(t, l, makeBatch(t, 1, 1, "x", 1))
	}
	if rp := l.Offsets().RecoveryPoint; rp != 0 {
		t.Fatalf("flushed early: recovery point %d", rp)
	}
	mustAppend(t, l, makeBatch(t, 1, 1, "x", 1))
	if rp := l.Offsets().RecoveryPoint; rp != 5 {
		t.Fatalf("flush.messages=5: recovery point %d", rp)
	}
}

func TestFlushMs(t *testing.T) {
	e := newEnv(t)
	cfg := testConfig()
	cfg.FlushMs = 1000
	l := e.open(cfg)
	defer l.Close()
	mustAppend(t, l, makeBatch(t, 1, 1, "x", 1))
	if err := l.FlushIfDue(); err != nil || l.Offsets().RecoveryPoint != 0 {
		t.Fatalf("flushed before flush.ms: %v", err)
	}
	e.clock.Advance(1001 * time.Millisecond)
	if err := l.FlushIfDue(); err != nil || l.Offsets().RecoveryPoint != 1 {
		t.Fatalf("not flushed after flush.ms: rp %d %v", l.Offsets().RecoveryPoint, err)
	}
}

func TestIOErrorFailsTheLog(t *testing.T) {
	e := newEnv(t)
	var fail bool
	e.fs = vfs.NewFaulty(e.mem, func(op vfs.Op, name string) error {
		if fail && op == vfs.OpWrite {
			return fmt.Errorf("%w: disk full", vfs.ErrInjected)
		}
		return nil
	})
	l := e.open(testConfig())
	mustAppend(t, l, makeBatch(t, 1, 1, "a", 1))
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	fail = true
	if _, err := l.AppendAsLeader(makeBatch(t, 1, 1, "b", 1), 0); !errors.Is(err, ErrLogFailed) {
		t.Fatalf("append on failing disk: %v", err)
	}
	fail = false
	if _, err := l.AppendAsLeader(makeBatch(t, 1, 1, "c", 1), 0); !errors.Is(err, ErrLogFailed) {
		t.Fatalf("failed log accepted an append: %v", err)
	}
	l.Close()
	l = e.open(testConfig())
	defer l.Close()
	if l.LogEndOffset() != 1 {
		t.Fatalf("log end after reopen %d", l.LogEndOffset())
	}
}

// A sync past the log end (the batch was truncated away after its append)
// is an error, not an endless wait.
func TestSyncPastLogEnd(t *testing.T) {
	e := newEnv(t)
	l := e.open(testConfig())
	defer l.Close()
	res := mustAppend(t, l, makeBatch(t, 3, 1, "x", 10))
	if err := l.TruncateTo(0); err != nil {
		t.Fatal(err)
	}
	if err := l.Sync(res.LastOffset + 1); !errors.Is(err, ErrOffsetOutOfRange) {
		t.Fatalf("sync past the end: %v", err)
	}
}

// A group commit fsyncs only the segment log files: one fdatasync per
// flush on a single-segment log.
func TestFlushSyncsOnlyLogFiles(t *testing.T) {
	e := newEnv(t)
	var syncs []string
	var mu sync.Mutex
	e.fs = vfs.NewFaulty(e.mem, func(op vfs.Op, name string) error {
		if op == vfs.OpSync {
			mu.Lock()
			syncs = append(syncs, name)
			mu.Unlock()
		}
		return nil
	})
	l := e.open(testConfig())
	defer l.Close()
	if err := l.AssignEpoch(0); err != nil { // as a new leader does
		t.Fatal(err)
	}
	mu.Lock()
	syncs = nil
	mu.Unlock()
	mustAppend(t, l, makeBatch(t, 1, 1, "x", 10))
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(syncs) != 1 || !strings.HasSuffix(syncs[0], ".log") {
		t.Fatalf("flush synced %v", syncs)
	}
}

// A compact-only log (cleanup.policy=compact) keeps its segments whatever
// their age or size: only the cleaner may remove records from it.
func TestRetentionOffForCompactOnly(t *testing.T) {
	e := newEnv(t)
	cfg := testConfig()
	cfg.RetentionMs, cfg.RetentionBytes = 1000, 100
	cfg.Deletes, cfg.Compacted = false, true
	l := e.open(cfg)
	defer l.Close()
	for i := range 40 {
		mustAppend(t, l, makeBatch(t, 2, epoch0.UnixMilli()+int64(i), "x", 100))
	}
	e.clock.Advance(time.Hour)
	if n, err := l.EnforceRetention(l.LogEndOffset()); n != 0 || err != nil {
		t.Fatalf("retention deleted %d segments of a compact-only log: %v", n, err)
	}
	cfg.Deletes = true // cleanup.policy=compact,delete: retention applies again
	l.SetConfig(cfg)
	if n, _ := l.EnforceRetention(l.LogEndOffset()); n == 0 {
		t.Fatal("compact,delete did not apply retention")
	}
}

package storage

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/clock"
	"github.com/samsa-io/samsa/internal/record"
	"github.com/samsa-io/samsa/internal/vfs"
)

// Crash and I/O-failure tests for the cleaner. A compacted log with many
// segments, duplicate keys and tombstones is built once and closed; each
// test runs one cleaning pass over a copy of it. Whatever a crash during the
// pass leaves, or whatever a failed file operation leaves, must reopen to a
// log that
//
//   - has the same log end offset (everything was durable before the pass);
//   - reads end to end through Read, every record at the offset it was
//     appended at with its original key, value and timestamp;
//   - lies between the pre-clean view and the view of the uninterrupted
//     pass: no record the full pass keeps is missing, no record that was
//     never in the log appears (each segment is either its old self or its
//     cleaned self);
//   - leaves no cleaner file behind;
//   - cleans again, to the uninterrupted pass's view when the map holds
//     every key (otherwise to a valid view that only ever loses records),
//     takes appends and reopens cleanly.

const cleanCrashDir = "/data/clean-crash-0"

var cleanCrashStart = time.UnixMilli(1_000_000)

func cleanCrashConfig() Config {
	cfg := DefaultConfig()
	cfg.Compacted, cfg.Deletes = true, false
	cfg.RetentionMs = -1
	cfg.SegmentBytes = 800
	cfg.IndexIntervalBytes = 100
	cfg.DeleteRetentionMs = 1000
	return cfg
}

// cleanCrashFixture is a closed compacted log and what one pass over it
// gives.
type cleanCrashFixture struct {
	mem   *vfs.Mem // the closed log before the pass
	model *cleanModel
	opts  CleanOptions
	pre   []int64 // offsets a full read gives before the pass
	post  []int64 // and after an uninterrupted pass
	// fullMap: the pass's map covers every segment, so a second pass over
	// any partly cleaned image gives exactly post.
	fullMap bool
}

type cleanCrashCase struct {
	name      string
	mapMemory int
	// prepassMs, when set, is the time (after cleanCrashStart) of a pass
	// run before the one under test, after which 20 more batches are
	// appended: the pass under test then has a clean section to rewrite
	// and, past the delete horizons the prepass stamped, tombstones to
	// remove.
	prepassMs int64
	nowMs     int64 // the pass under test, after cleanCrashStart
}

var cleanCrashCases = []cleanCrashCase{
	{name: "first-pass", mapMemory: 1 << 16, nowMs: 500},
	{name: "past-horizon", mapMemory: 1 << 16, prepassMs: 100, nowMs: 100 + 1000},
	// The map fills after a few segments: the pass cleans a prefix.
	{name: "small-map", mapMemory: 16 * offsetMapEntrySize, nowMs: 500},
}

func cleanCrashOptions(fsys vfs.FS) Options {
	return Options{FS: fsys, Clock: clock.NewManual(cleanCrashStart), Logger: quiet}
}

func openCleanCrash(t testing.TB, fsys vfs.FS) *Log {
	t.Helper()
	l, err := Open(cleanCrashDir, cleanCrashConfig(), cleanCrashOptions(fsys))
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	return l
}

// newCleanCrashFixture appends 40 batches over 16 keys, a fifth of the
// records tombstones, mixed codecs, one millisecond apart (and, with a
// prepass, 20 more after it), and closes the log; then it runs the pass
// once on a copy to learn its view.
func newCleanCrashFixture(t *testing.T, seed uint64, c cleanCrashCase) *cleanCrashFixture {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 11))
	start := cleanCrashStart.UnixMilli()
	fx := &cleanCrashFixture{
		mem:     vfs.NewMem(),
		model:   newCleanModel(),
		opts:    CleanOptions{MapMemory: c.mapMemory, NowMs: start + c.nowMs},
		fullMap: c.mapMemory >= 1<<16,
	}
	l := openCleanCrash(t, fx.mem)
	fx.appendBatches(t, l, rng, 40, start)
	if c.prepassMs > 0 {
		if _, err := l.Clean(CleanOptions{MapMemory: 1 << 16, NowMs: start + c.prepassMs}); err != nil {
			t.Fatalf("prepass: %v", err)
		}
		fx.appendBatches(t, l, rng, 20, start+c.prepassMs)
	}
	if segs := l.Offsets().Segments; segs < 5 {
		t.Fatalf("only %d segments", segs)
	}
	fx.pre = recordOffsets(fx.model.check(t, l, fx.tombstoneGone))
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	l = openCleanCrash(t, fx.copy())
	defer l.Close()
	if got := recordOffsets(fx.model.check(t, l, fx.tombstoneGone)); !slices.Equal(got, fx.pre) {
		t.Fatalf("a copy of the closed log reads %v, the log read %v", got, fx.pre)
	}
	stats, err := l.Clean(fx.opts)
	if err != nil || stats.SegmentsCleaned == 0 || stats.RecordsRemoved == 0 {
		t.Fatalf("the uninterrupted pass: %+v, %v", stats, err)
	}
	fx.post = recordOffsets(fx.model.check(t, l, fx.tombstoneGone))
	if c.prepassMs > 0 && len(fx.model.compactedView(true)) == len(fx.post) {
		t.Fatalf("the pass past the delete horizon removed no tombstone: %v", fx.post)
	}
	return fx
}

// appendBatches appends n batches with timestamps from ts on.
func (fx *cleanCrashFixture) appendBatches(t *testing.T, l *Log, rng *rand.Rand, n int, ts int64) {
	t.Helper()
	codecs := []record.Codec{record.CodecNone, record.CodecNone, record.CodecGzip, record.CodecLZ4, record.CodecZstd, record.CodecSnappy}
	for b := range n {
		recs := make([]record.Record, 1+rng.IntN(4))
		for i := range recs {
			recs[i] = record.Record{Offset: int64(i), Timestamp: ts + int64(b), Key: fmt.Appendf(nil, "k%d", rng.IntN(16))}
			if rng.IntN(5) != 0 {
				recs[i].Value = fmt.Appendf(nil, "b%d.%d.%d%s", fx.model.logEnd, b, i, strings.Repeat(".", rng.IntN(40)))
			}
		}
		batch := record.Batch{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, Codec: codecs[rng.IntN(len(codecs))], Records: recs}
		data, err := batch.AppendTo(nil)
		if err != nil {
			t.Fatal(err)
		}
		res := mustAppend(t, l, data)
		for i, r := range recs {
			fx.model.add(res.FirstOffset+int64(i), cleanWrite{key: string(r.Key), value: r.Value, ts: r.Timestamp})
		}
	}
}

// copy is the closed log as a fresh filesystem: everything it holds was
// synced by Close.
func (fx *cleanCrashFixture) copy() *vfs.Mem { return fx.mem.CrashClone(vfs.CrashLoseUnsynced, nil) }

func (fx *cleanCrashFixture) tombstoneGone(off int64) bool {
	return fx.opts.NowMs-fx.model.writes[off].ts >= cleanCrashConfig().DeleteRetentionMs
}

// checkBetween: post ⊆ got ⊆ pre, all three sorted.
func (fx *cleanCrashFixture) checkBetween(t testing.TB, got []int64, what string) {
	t.Helper()
	for _, off := range fx.post {
		if _, ok := slices.BinarySearch(got, off); !ok {
			t.Fatalf("%s: offset %d, which the full pass keeps, is missing (read %v)", what, off, got)
		}
	}
	for _, off := range got {
		if _, ok := slices.BinarySearch(fx.pre, off); !ok {
			t.Fatalf("%s: offset %d was not in the log before the pass", what, off)
		}
	}
}

// checkReopened runs every check on a log reopened after a crash or a
// failure, then cleans it again, appends and reopens it.
func (fx *cleanCrashFixture) checkReopened(t testing.TB, fsys vfs.FS, what string) {
	t.Helper()
	l := openCleanCrash(t, fsys)
	if o := l.Offsets(); o.LogStartOffset != 0 || o.LogEndOffset != fx.model.logEnd {
		l.Close()
		t.Fatalf("%s: reopened with bounds [%d, %d), want [0, %d)", what, o.LogStartOffset, o.LogEndOffset, fx.model.logEnd)
	}
	got := recordOffsets(fx.model.check(t, l, fx.tombstoneGone))
	fx.checkBetween(t, got, what)
	names, err := fsys.ReadDir(cleanCrashDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if strings.HasSuffix(n, cleanedSuffix) || strings.HasSuffix(n, swapSuffix) {
			t.Fatalf("%s: %s left after open", what, n)
		}
	}

	if _, err := l.Clean(fx.opts); err != nil {
		t.Fatalf("%s: second pass: %v", what, err)
	}
	again := recordOffsets(fx.model.check(t, l, fx.tombstoneGone))
	if fx.fullMap && !slices.Equal(again, fx.post) {
		t.Fatalf("%s: second pass gives %v, the uninterrupted pass %v", what, again, fx.post)
	}
	// With a small map the second pass maps where the first stopped and
	// may clean more than it: it only ever removes.
	for _, off := range again {
		if _, ok := slices.BinarySearch(got, off); !ok {
			t.Fatalf("%s: second pass brought back offset %d", what, off)
		}
	}

	res, err := l.AppendAsLeader(keyedBatch(t, cleanCrashStart.UnixMilli(), []string{"k0"}, [][]byte{[]byte("after")}), 0)
	if err != nil || res.FirstOffset != fx.model.logEnd {
		t.Fatalf("%s: append after the second pass: %+v, %v", what, res, err)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("%s: close: %v", what, err)
	}
	l = openCleanCrash(t, fsys)
	defer l.Close()
	if end := l.LogEndOffset(); end != fx.model.logEnd+1 {
		t.Fatalf("%s: clean reopen: log end %d, want %d", what, end, fx.model.logEnd+1)
	}
	if got := recordOffsets(readKeyedRecords(t, l)); !slices.Equal(got, append(slices.Clone(again), fx.model.logEnd)) {
		t.Fatalf("%s: clean reopen reads %v", what, got)
	}
}

type cleanCrashImage struct {
	fs    *vfs.Mem
	point int
	mode  vfs.CrashMode
}

// TestCleanCrashAtEverySyncPoint takes, at every fsync and directory sync
// of one pass (before it takes effect), and after the pass, the images a
// crash could leave in each crash mode, and reopens each.
func TestCleanCrashAtEverySyncPoint(t *testing.T) {
	for _, c := range cleanCrashCases {
		t.Run(c.name, func(t *testing.T) {
			fx := newCleanCrashFixture(t, 1, c)
			mem := fx.copy()
			faulty := vfs.NewFaulty(mem, nil)
			l := openCleanCrash(t, faulty)
			defer l.Close()
			rng := rand.New(rand.NewPCG(2, 3))
			var images []cleanCrashImage
			point := 0
			snap := func() {
				for _, mode := range []vfs.CrashMode{vfs.CrashLoseUnsynced, vfs.CrashTorn, vfs.CrashGarbage} {
					images = append(images, cleanCrashImage{fs: mem.CrashClone(mode, rng), point: point, mode: mode})
				}
			}
			faulty.SetInjector(func(op vfs.Op, name string) error {
				if op == vfs.OpSync || op == vfs.OpSyncDir {
					point++
					snap()
				}
				return nil
			})
			stats, err := l.Clean(fx.opts)
			faulty.SetInjector(nil)
			if err != nil || stats.SegmentsCleaned == 0 {
				t.Fatalf("clean: %+v, %v", stats, err)
			}
			if got := recordOffsets(fx.model.check(t, l, fx.tombstoneGone)); !slices.Equal(got, fx.post) {
				t.Fatalf("the pass gives %v, before %v", got, fx.post)
			}
			point++
			snap()
			if point < 4 {
				t.Fatalf("only %d sync points", point)
			}
			for _, img := range images {
				fx.checkReopened(t, img.fs, fmt.Sprintf("sync point %d/%d, crash mode %d", img.point, point, img.mode))
			}
			t.Logf("%d segments cleaned, %d sync points, %d images", stats.SegmentsCleaned, point, len(images))
		})
	}
}

// cleanFault is a file operation to fail during a pass: the k-th of its kind.
type cleanFault struct {
	op    vfs.Op
	short bool // OpWrite: half the bytes land
}

// TestCleanFailedFileOpAtEveryStep fails, one run each, every create,
// write (whole or short), read, fsync, rename, remove and directory sync
// of a pass (every third one with -short); a pass truncates nothing (its
// indexes are written whole from memory). The pass must
// report the injected error; the open log must still read correctly; and
// both the files as they are and what a crash then leaves must reopen.
func TestCleanFailedFileOpAtEveryStep(t *testing.T) {
	fx := newCleanCrashFixture(t, 4, cleanCrashCases[1])

	counts := map[vfs.Op]int{}
	{
		faulty := vfs.NewFaulty(fx.copy(), nil)
		l := openCleanCrash(t, faulty)
		faulty.SetInjector(func(op vfs.Op, name string) error {
			counts[op]++
			return nil
		})
		if _, err := l.Clean(fx.opts); err != nil {
			t.Fatal(err)
		}
		faulty.SetInjector(nil)
		l.Close()
	}
	faults := []cleanFault{{op: vfs.OpCreate}, {op: vfs.OpWrite}, {op: vfs.OpWrite, short: true}, {op: vfs.OpRead}, {op: vfs.OpSync}, {op: vfs.OpRename}, {op: vfs.OpRemove}, {op: vfs.OpSyncDir}}
	stride := 1
	if testing.Short() {
		stride = 3
	}
	runs := 0
	for _, f := range faults {
		if counts[f.op] == 0 {
			t.Fatalf("the pass does no %v", f.op)
		}
		for k := 1; k <= counts[f.op]; k += stride {
			what := fmt.Sprintf("%v #%d of %d (short %v)", f.op, k, counts[f.op], f.short)
			fx.failOneOp(t, f, k, what)
			runs++
		}
	}
	t.Logf("%d runs; operations in one pass: %v", runs, counts)
}

func (fx *cleanCrashFixture) failOneOp(t *testing.T, f cleanFault, k int, what string) {
	t.Helper()
	mem := fx.copy()
	faulty := vfs.NewFaulty(mem, nil)
	l := openCleanCrash(t, faulty)
	n := 0
	faulty.SetInjector(func(op vfs.Op, name string) error {
		if op != f.op {
			return nil
		}
		if n++; n != k {
			return nil
		}
		if f.short {
			return fmt.Errorf("%w: %w", vfs.ErrInjected, vfs.ErrShortWrite)
		}
		return fmt.Errorf("%w: %v %s", vfs.ErrInjected, op, name)
	})
	_, err := l.Clean(fx.opts)
	faulty.SetInjector(nil)
	if !errors.Is(err, vfs.ErrInjected) {
		l.Close()
		t.Fatalf("%s: the pass returned %v, want the injected fault", what, err)
	}
	// The broker-facing log still serves reads.
	got := recordOffsets(fx.model.check(t, l, fx.tombstoneGone))
	fx.checkBetween(t, got, what+", open log")

	crashed := mem.CrashClone(vfs.CrashTorn, rand.New(rand.NewPCG(uint64(k), uint64(f.op))))
	l.Close() // may fail: a failed swap fails the log
	fx.checkReopened(t, mem, what+", reopened")
	fx.checkReopened(t, crashed, what+", crashed")
}

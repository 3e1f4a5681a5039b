package storage

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/samsa-io/samsa/internal/vfs"
)

// The crash tests run a workload over the in-memory filesystem and, at every
// sync point (each file fsync and directory sync, before it takes effect),
// take images of what a crash there could leave: unsynced bytes lost, torn,
// or garbled. Each image is reopened and must hold
//
//   - every batch whose Sync returned, and after a clean Close everything
//     appended (the durable offset at the crash);
//   - nothing past what had been written at the crash: the log end is at
//     most the end of the last batch appended (or being appended);
//   - contiguous batches from the log start to the log end, each byte for
//     byte the batch appended at its base offset (nothing stale, nothing
//     corrupt, nothing made up);
//   - a log start offset no lower than the last SetLogStartOffset returned;
//   - a log that takes appends again and reopens cleanly.

type crashImage struct {
	fs       *vfs.Mem
	point    int
	mode     vfs.CrashMode
	durable  int64 // offsets below this were acknowledged as synced
	logStart int64 // the last acknowledged log start offset
	end      int64 // the end of everything written so far
}

// crashWorkload appends batches of random sizes, syncs now and then, moves
// the log start, and closes and reopens, driven by seed. onSync runs before
// every sync point with the acknowledged state so far; if it returns an
// error, that sync fails.
type crashWorkload struct {
	t        *testing.T
	rng      *rand.Rand
	mem      *vfs.Mem
	log      *appended // every batch ever appended; offsets are never reused
	durable  int64
	logStart int64
	point    int

	// When an operation fails, failed is the log it failed on, left open
	// (closed if Close failed), and before its offsets just before.
	failed *Log
	before Offsets
}

func newCrashWorkload(t *testing.T, seed uint64) *crashWorkload {
	return &crashWorkload{t: t, rng: rand.New(rand.NewPCG(seed, 99)), mem: vfs.NewMem(), log: newAppended()}
}

// image is the crash image state at the current sync point.
func (w *crashWorkload) image(fs *vfs.Mem, mode vfs.CrashMode) crashImage {
	return crashImage{fs: fs, point: w.point, mode: mode, durable: w.durable, logStart: w.logStart, end: w.log.end}
}

func crashConfig() Config {
	cfg := DefaultConfig()
	cfg.SegmentBytes = 2048
	cfg.IndexIntervalBytes = 200
	cfg.RetentionMs = -1
	return cfg
}

const crashDir = "/data/crash-0"

func (w *crashWorkload) run(steps int, onSync func(w *crashWorkload) error) error {
	fsys := vfs.NewFaulty(w.mem, func(op vfs.Op, name string) error {
		if op != vfs.OpSync && op != vfs.OpSyncDir {
			return nil
		}
		w.point++
		return onSync(w)
	})
	open := func() (*Log, error) { return Open(crashDir, crashConfig(), Options{FS: fsys, Logger: quiet}) }
	l, err := open()
	if err != nil {
		return err
	}
	for i := range steps {
		w.before = l.Offsets()
		if err := w.step(l, i); err != nil {
			w.failed = l
			return err
		}
		if w.rng.IntN(40) == 0 {
			if err := w.close(l); err != nil {
				w.failed = l
				return err
			}
			if l, err = open(); err != nil {
				return err
			}
		}
	}
	w.before = l.Offsets()
	if err := w.close(l); err != nil {
		w.failed = l
		return err
	}
	return nil
}

// close closes l: a clean close flushes, so everything appended is durable.
func (w *crashWorkload) close(l *Log) error {
	if err := l.Close(); err != nil {
		return err
	}
	w.durable = w.log.end
	return nil
}

func (w *crashWorkload) step(l *Log, i int) error {
	switch r := w.rng.IntN(20); {
	case r < 14:
		n := 1 + w.rng.IntN(4)
		if _, err := w.log.append(w.t, l, makeBatch(w.t, n, int64(i), fmt.Sprint(i), w.rng.IntN(300))); err != nil {
			return err
		}
	case r < 19:
		end := l.LogEndOffset()
		if err := l.Sync(end); err != nil {
			return err
		}
		w.durable = end
	default:
		o := l.Offsets()
		if o.LogEndOffset > o.LogStartOffset {
			to := o.LogStartOffset + w.rng.Int64N(o.LogEndOffset-o.LogStartOffset)/4
			if err := l.SetLogStartOffset(to); err != nil {
				return err
			}
			w.logStart = max(w.logStart, to)
		}
	}
	return nil
}

func (w *crashWorkload) checkImage(t *testing.T, img crashImage) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("sync point %d, mode %d: %s", img.point, img.mode, fmt.Sprintf(format, args...))
	}
	l, err := Open(crashDir, crashConfig(), Options{FS: img.fs, Logger: quiet})
	if err != nil {
		fail("reopen: %v", err)
	}
	o := l.Offsets()
	if o.LogStartOffset < img.logStart {
		fail("log start %d below the acknowledged %d", o.LogStartOffset, img.logStart)
	}
	// The batches appended after the image have offsets at or past its
	// end, which the check refuses: the whole record serves every image.
	(&appended{batches: w.log.batches, end: img.end}).check(imageFataler{t, fail}, l, img.durable)
	res, err := l.AppendAsLeader(makeBatch(t, 1, 1, "after", 1), 0)
	if err != nil || res.FirstOffset != o.LogEndOffset {
		fail("append after recovery: %+v %v", res, err)
	}
	if err := l.Close(); err != nil {
		fail("close: %v", err)
	}
	l, err = Open(crashDir, crashConfig(), Options{FS: img.fs, Logger: quiet})
	if err != nil {
		fail("clean reopen after recovery: %v", err)
	}
	if got := l.LogEndOffset(); got != o.LogEndOffset+1 {
		fail("clean reopen: log end %d, want %d", got, o.LogEndOffset+1)
	}
	l.Close()
}

// imageFataler prefixes the failures of a check with the image's sync
// point and mode.
type imageFataler struct {
	*testing.T
	fail func(format string, args ...any)
}

func (f imageFataler) Fatalf(format string, args ...any) {
	f.Helper()
	f.fail(format, args...)
}

func TestCrashAtEverySyncPoint(t *testing.T) {
	seeds := []uint64{1, 2, 3}
	if testing.Short() {
		seeds = seeds[:1]
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			w := newCrashWorkload(t, seed)
			var images []crashImage
			rng := rand.New(rand.NewPCG(seed, 7))
			err := w.run(300, func(w *crashWorkload) error {
				for _, mode := range []vfs.CrashMode{vfs.CrashLoseUnsynced, vfs.CrashTorn, vfs.CrashGarbage} {
					images = append(images, w.image(w.mem.CrashClone(mode, rng), mode))
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(images) < 100 {
				t.Fatalf("only %d crash images: the workload hardly synced", len(images))
			}
			for _, img := range images {
				w.checkImage(t, img)
			}
			t.Logf("%d sync points, %d crash images checked, %d offsets appended", w.point, len(images), w.log.end)
		})
	}
}

// TestFailedSyncAtEveryPoint fails the k-th sync instead: the workload must
// see the error (the batch is not acknowledged), the log must refuse further
// writes (checkFailed), and whatever a crash then leaves must satisfy the
// same checks as TestCrashAtEverySyncPoint's images.
func TestFailedSyncAtEveryPoint(t *testing.T) {
	total := 0
	{
		w := newCrashWorkload(t, 42)
		if err := w.run(120, func(*crashWorkload) error { return nil }); err != nil {
			t.Fatal(err)
		}
		total = w.point
	}
	stride := 1
	if testing.Short() {
		stride = 7
	}
	refused := 0
	for k := 1; k <= total; k += stride {
		w := newCrashWorkload(t, 42)
		var img crashImage
		rng := rand.New(rand.NewPCG(uint64(k), 5))
		err := w.run(120, func(w *crashWorkload) error {
			if w.point != k {
				return nil
			}
			img = w.image(nil, vfs.CrashTorn)
			return fmt.Errorf("%w: sync %d", vfs.ErrInjected, k)
		})
		if err == nil {
			t.Fatalf("sync point %d failed but the workload saw no error", k)
		}
		if !errors.Is(err, vfs.ErrInjected) {
			t.Fatalf("sync point %d: unexpected error %v", k, err)
		}
		if w.failed != nil {
			refused += w.checkFailed(t, k)
		}
		img.fs = w.mem.CrashClone(vfs.CrashTorn, rng)
		w.checkImage(t, img)
	}
	// Most sync points are in appends, syncs and retention on an open log;
	// the rest in Open and Close.
	if refused < total/(2*stride) {
		t.Fatalf("only %d of %d failed sync points left an open log to check", refused, total/stride)
	}
	t.Logf("%d sync points failed, %d on an open log", total/stride, refused)
}

// checkFailed checks the log an operation failed on, as the package
// documents a failed log: it refuses writes with ErrLogFailed (wrapping the
// I/O error) until reopened; its recovery point and log end stay where they
// were before the failed operation; reads still serve every batch up to the
// log end, unsynced ones included, exactly as appended. A log whose Close
// failed is closed all the same. Then it is closed, without the clean mark.
//
// It returns 1 if the log was open, 0 if the failure had closed it.
func (w *crashWorkload) checkFailed(t *testing.T, k int) int {
	t.Helper()
	l := w.failed
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("sync point %d failed: %s", k, fmt.Sprintf(format, args...))
	}
	_, err := l.AppendAsLeader(makeBatch(t, 1, 1, "refused", 1), 0)
	if errors.Is(err, ErrClosed) {
		return 0 // Close failed: the log is closed, as after any Close
	}
	if !errors.Is(err, ErrLogFailed) || !errors.Is(err, vfs.ErrInjected) {
		fail("append after the failure: %v, want ErrLogFailed wrapping the injected fault", err)
	}
	if err := l.Roll(); !errors.Is(err, ErrLogFailed) {
		fail("roll after the failure: %v, want ErrLogFailed", err)
	}
	o := l.Offsets()
	if o.RecoveryPoint != w.before.RecoveryPoint || o.LogEndOffset != w.before.LogEndOffset {
		fail("recovery point %d and log end %d after the failure, %d and %d before",
			o.RecoveryPoint, o.LogEndOffset, w.before.RecoveryPoint, w.before.LogEndOffset)
	}
	if o.LogEndOffset > o.RecoveryPoint {
		if err := l.Sync(o.LogEndOffset); !errors.Is(err, ErrLogFailed) {
			fail("sync after the failure: %v, want ErrLogFailed", err)
		}
	}
	(&appended{batches: w.log.batches, end: o.LogEndOffset}).check(imageFataler{t, fail}, l, o.LogEndOffset)
	if err := l.Close(); o.LogEndOffset > o.RecoveryPoint && !errors.Is(err, ErrLogFailed) {
		fail("close with unsynced batches: %v, want ErrLogFailed", err)
	}
	return 1
}

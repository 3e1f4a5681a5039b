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
//   - every batch whose Sync returned (the durable offset at the crash);
//   - contiguous offsets from the log start to the log end;
//   - only batches with a valid CRC whose records are exactly what was
//     appended at those offsets (nothing stale, nothing corrupt);
//   - a log start offset no lower than the last SetLogStartOffset returned;
//   - a log that takes appends again and reopens cleanly.

type crashImage struct {
	fs       *vfs.Mem
	point    int
	mode     vfs.CrashMode
	durable  int64 // offsets below this were acknowledged as synced
	logStart int64 // the last acknowledged log start offset
}

// crashWorkload appends batches of random sizes, syncs now and then, moves
// the log start, and closes and reopens, driven by seed. onSync runs before
// every sync point with the acknowledged state so far; if it returns an
// error, that sync fails.
type crashWorkload struct {
	t        *testing.T
	rng      *rand.Rand
	mem      *vfs.Mem
	values   map[int64]string // offset -> value, everything ever appended
	durable  int64
	logStart int64
	point    int
}

func newCrashWorkload(t *testing.T, seed uint64) *crashWorkload {
	return &crashWorkload{t: t, rng: rand.New(rand.NewPCG(seed, 99)), mem: vfs.NewMem(), values: map[int64]string{}}
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
		if err := w.step(l, i); err != nil {
			l.Close()
			return err
		}
		if w.rng.IntN(40) == 0 {
			if err := l.Close(); err != nil {
				return err
			}
			if l, err = open(); err != nil {
				return err
			}
		}
	}
	return l.Close()
}

func (w *crashWorkload) step(l *Log, i int) error {
	switch r := w.rng.IntN(20); {
	case r < 14:
		n := 1 + w.rng.IntN(4)
		tag := fmt.Sprint(i)
		res, err := l.AppendAsLeader(makeBatch(w.t, n, int64(i), tag, w.rng.IntN(300)), 0)
		if err != nil {
			return err
		}
		for k := range n {
			w.values[res.FirstOffset+int64(k)] = fmt.Sprintf("v%s-%d", tag, k)
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
	if o.LogEndOffset < img.durable {
		fail("log end %d below the acknowledged durable offset %d", o.LogEndOffset, img.durable)
	}
	if o.LogStartOffset < img.logStart {
		fail("log start %d below the acknowledged %d", o.LogStartOffset, img.logStart)
	}
	offs, vals := readAllRecords(t, l)
	for i, off := range offs {
		if off != o.LogStartOffset+int64(i) {
			fail("offset %d at position %d: not contiguous from %d", off, i, o.LogStartOffset)
		}
		if want := w.values[off]; len(vals[i]) < len(want) || vals[i][:len(want)] != want {
			fail("offset %d holds %.20q, appended %q", off, vals[i], want)
		}
	}
	if int64(len(offs)) != o.LogEndOffset-o.LogStartOffset {
		fail("read %d records between %d and %d", len(offs), o.LogStartOffset, o.LogEndOffset)
	}
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
					images = append(images, crashImage{fs: w.mem.CrashClone(mode, rng), point: w.point, mode: mode, durable: w.durable, logStart: w.logStart})
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
			t.Logf("%d sync points, %d crash images checked, %d records appended", w.point, len(images), len(w.values))
		})
	}
}

// TestFailedSyncAtEveryPoint fails the k-th sync instead: the workload must
// see the error (the batch is not acknowledged), the log must refuse further
// writes, and whatever a crash then leaves must satisfy the same checks.
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
	for k := 1; k <= total; k += stride {
		w := newCrashWorkload(t, 42)
		var img crashImage
		rng := rand.New(rand.NewPCG(uint64(k), 5))
		err := w.run(120, func(w *crashWorkload) error {
			if w.point != k {
				return nil
			}
			img = crashImage{point: k, mode: vfs.CrashTorn, durable: w.durable, logStart: w.logStart}
			return fmt.Errorf("%w: sync %d", vfs.ErrInjected, k)
		})
		if err == nil {
			t.Fatalf("sync point %d failed but the workload saw no error", k)
		}
		if !errors.Is(err, vfs.ErrInjected) {
			t.Fatalf("sync point %d: unexpected error %v", k, err)
		}
		img.fs = w.mem.CrashClone(vfs.CrashTorn, rng)
		w.checkImage(t, img)
	}
}

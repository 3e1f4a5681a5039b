package storage

import (
	"encoding/binary"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/samsa-io/samsa/internal/vfs"
)

// fill appends n 2-record batches and returns the log, closed cleanly.
func fill(t *testing.T, e *env, n int) {
	t.Helper()
	l := e.open(testConfig())
	for i := range n {
		mustAppend(t, l, makeBatch(t, 2, int64(i), "x", 50))
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

func segmentFiles(t *testing.T, e *env, suffix string) []string {
	t.Helper()
	names, err := e.fs.ReadDir(e.dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, n := range names {
		if strings.HasSuffix(n, suffix) {
			out = append(out, filepath.Join(e.dir, n))
		}
	}
	return out
}

func patch(t *testing.T, fsys vfs.FS, name string, off int64, b []byte) {
	t.Helper()
	f, err := fsys.OpenReadWrite(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if off < 0 {
		size, _ := f.Size()
		off += size
	}
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

func markUnclean(t *testing.T, e *env) {
	t.Helper()
	if err := writeCheckpoint(e.fs, e.dir, checkpoint{}); err != nil {
		t.Fatal(err)
	}
}

func TestRecoveryTruncatesTornTail(t *testing.T) {
	e := newEnv(t)
	fill(t, e, 30)
	logs := segmentFiles(t, e, ".log")
	last := logs[len(logs)-1]
	f, _ := e.fs.OpenReadWrite(last)
	size, _ := f.Size()
	f.Truncate(size - 7) // a torn final batch
	f.Close()
	markUnclean(t, e)
	l := e.open(testConfig())
	defer l.Close()
	if got := l.LogEndOffset(); got != 58 {
		t.Fatalf("log end %d, want 58 (last batch torn off)", got)
	}
	if offs, _ := readAllRecords(t, l); len(offs) != 58 {
		t.Fatalf("read %d records", len(offs))
	}
	if res := mustAppend(t, l, makeBatch(t, 1, 1, "y", 1)); res.FirstOffset != 58 {
		t.Fatalf("next append at %d", res.FirstOffset)
	}
}

func TestRecoveryDropsCorruptBatchAndLaterSegments(t *testing.T) {
	e := newEnv(t)
	fill(t, e, 100)
	logs := segmentFiles(t, e, ".log")
	if len(logs) < 3 {
		t.Fatalf("need 3 segments, have %d", len(logs))
	}
	patch(t, e.fs, logs[1], 200, []byte{0xde, 0xad, 0xbe, 0xef}) // corrupt the middle segment
	markUnclean(t, e)
	l := e.open(testConfig())
	defer l.Close()
	offs, _ := readAllRecords(t, l)
	for i, o := range offs {
		if o != int64(i) {
			t.Fatalf("offsets not contiguous at %d: %d", i, o)
		}
	}
	if int64(len(offs)) != l.LogEndOffset() || len(offs) >= 200 {
		t.Fatalf("read %d records, log end %d", len(offs), l.LogEndOffset())
	}
	if n := len(segmentFiles(t, e, ".log")); n != 2 {
		t.Fatalf("%d segments left, want 2 (later ones deleted)", n)
	}
}

func TestRecoveryRebuildsCorruptIndex(t *testing.T) {
	e := newEnv(t)
	fill(t, e, 100)
	idx := segmentFiles(t, e, ".index")
	patch(t, e.fs, idx[0], 0, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}) // entry past the log
	l := e.open(testConfig())
	defer l.Close()
	if offs, _ := readAllRecords(t, l); len(offs) != 200 {
		t.Fatalf("read %d records", len(offs))
	}
	if off, _, _, err := l.OffsetForTimestamp(50); err != nil || off != 99 { // batch 49 holds ts 49, 50
		t.Fatalf("timestamp lookup %d %v", off, err)
	}
}

func TestRecoveryRebuildsMissingIndex(t *testing.T) {
	e := newEnv(t)
	fill(t, e, 100)
	for _, n := range append(segmentFiles(t, e, ".index"), segmentFiles(t, e, ".timeindex")...) {
		if err := e.fs.Remove(n); err != nil {
			t.Fatal(err)
		}
	}
	markUnclean(t, e)
	l := e.open(testConfig())
	defer l.Close()
	if offs, _ := readAllRecords(t, l); len(offs) != 200 {
		t.Fatalf("read %d records", len(offs))
	}
	if n := len(segmentFiles(t, e, ".index")); n != len(segmentFiles(t, e, ".log")) {
		t.Fatalf("%d indexes rebuilt", n)
	}
}

func TestOpenRefusesForeignFiles(t *testing.T) {
	for _, name := range []string{"notes.txt", "abc.log", "123.log", "00000000000000000000.log.bak"} {
		e := newEnv(t)
		fill(t, e, 5)
		f, _ := e.fs.Create(filepath.Join(e.dir, name))
		f.Close()
		_, err := Open(e.dir, testConfig(), e.options())
		if !errors.Is(err, ErrUnexpectedFile) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestOpenRemovesLeftovers(t *testing.T) {
	e := newEnv(t)
	fill(t, e, 5)
	for _, name := range []string{"log.checkpoint.tmp", "00000000000000000099.index", "00000000000000000003.log.deleted"} {
		f, _ := e.fs.Create(filepath.Join(e.dir, name))
		f.Close()
	}
	l := e.open(testConfig())
	defer l.Close()
	for _, name := range []string{"log.checkpoint.tmp", "00000000000000000099.index", "00000000000000000003.log.deleted"} {
		if ok, _ := e.fs.Exists(filepath.Join(e.dir, name)); ok {
			t.Errorf("%s left behind", name)
		}
	}
}

func TestCleanShutdownMismatchIsAnError(t *testing.T) {
	e := newEnv(t)
	fill(t, e, 30)
	logs := segmentFiles(t, e, ".log")
	f, _ := e.fs.OpenReadWrite(logs[len(logs)-1])
	size, _ := f.Size()
	f.Truncate(size / 2)
	f.Close()
	_, err := Open(e.dir, testConfig(), e.options())
	if !errors.Is(err, ErrCorruptLog) || !strings.Contains(err.Error(), logs[len(logs)-1]) {
		t.Fatalf("truncated file after a clean shutdown: %v", err)
	}
}

func TestGarbageSegmentIsNotServed(t *testing.T) {
	e := newEnv(t)
	if err := e.fs.MkdirAll(e.dir); err != nil {
		t.Fatal(err)
	}
	f, _ := e.fs.Create(filepath.Join(e.dir, "00000000000000000000.log"))
	f.WriteAt([]byte(strings.Repeat("this is not a kafka log ", 100)), 0)
	f.Close()
	l := e.open(testConfig())
	defer l.Close()
	if l.LogEndOffset() != 0 {
		t.Fatalf("garbage became offsets up to %d", l.LogEndOffset())
	}
	if res := mustAppend(t, l, makeBatch(t, 1, 1, "x", 1)); res.FirstOffset != 0 {
		t.Fatalf("append at %d", res.FirstOffset)
	}
}

func TestCorruptCheckpointMeansFullRecovery(t *testing.T) {
	e := newEnv(t)
	fill(t, e, 30)
	patch(t, e.fs, filepath.Join(e.dir, checkpointFile), 0, []byte("garbage"))
	l := e.open(testConfig())
	defer l.Close()
	if l.LogEndOffset() != 60 {
		t.Fatalf("log end %d", l.LogEndOffset())
	}
}

func TestCorruptEpochCheckpointNamesTheFile(t *testing.T) {
	e := newEnv(t)
	fill(t, e, 3)
	patch(t, e.fs, filepath.Join(e.dir, epochFile), 0, []byte("7\nx\n"))
	_, err := Open(e.dir, testConfig(), e.options())
	if !errors.Is(err, ErrCorruptLog) || !strings.Contains(err.Error(), epochFile) {
		t.Fatalf("corrupt epoch file: %v", err)
	}
}

// The CRC does not cover a batch's partition leader epoch: recovery cuts
// the log at a batch whose epoch is below the one before it or above the
// newest the epoch cache knows, as at any corrupt batch. Such a batch is
// never written: AppendAsLeader refuses an epoch older than the log's.
func TestRecoveryCutsAGarbledLeaderEpoch(t *testing.T) {
	for _, c := range []struct {
		name  string
		epoch int32
	}{{"above the newest known", 99}, {"below the batch before", 1}, {"below -1", -7}} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			l := e.open(testConfig())
			for i := range 6 {
				if _, err := l.AppendAsLeader(makeBatch(t, 2, int64(i), "x", 10), int32(1+i/3)); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := l.AppendAsLeader(makeBatch(t, 1, 1, "x", 10), 1); !errors.Is(err, ErrLeaderEpochRegression) {
				t.Fatalf("append in epoch 1 after epoch 2: %v", err)
			}
			l.Close()
			b := makeBatch(t, 2, 4, "x", 10) // the size of every batch here
			var ep [4]byte
			binary.BigEndian.PutUint32(ep[:], uint32(c.epoch))
			patch(t, e.fs, segmentFiles(t, e, ".log")[0], int64(4*len(b)+12), ep[:])
			markUnclean(t, e)
			l = e.open(testConfig())
			defer l.Close()
			if got := l.LogEndOffset(); got != 8 {
				t.Fatalf("log end %d after a garbled epoch in the batch at 8", got)
			}
		})
	}
}

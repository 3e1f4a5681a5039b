package storage

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/samsa-io/samsa/internal/model"
	"github.com/samsa-io/samsa/internal/vfs"
)

// openFiles counts the process's open file descriptors.
func openFiles(t *testing.T) int {
	t.Helper()
	names, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatalf("this test counts open files in /proc/self/fd (Linux): %v", err)
	}
	return len(names)
}

// TestOneOpenFilePerSegment: a segment holds its log file open and nothing
// else, its indexes living in memory (index.go), so a broker's open files
// grow by one per segment, not three: on a machine whose limit is 20,000
// files a node failed at about 6,650 single-segment partitions, and now
// holds 10,000 (docs/PERFORMANCE.md#console). Sealed segments get their
// index files at the roll; a clean reopen trusts them and answers offset
// and timestamp lookups as before.
func TestOneOpenFilePerSegment(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "topic-0")
	opts := Options{FS: vfs.OS, Logger: quiet}
	cfg := testConfig()
	before := openFiles(t)
	l, err := Open(dir, cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; len(l.mu.segments) < 20; i++ {
		mustAppend(t, l, makeBatch(t, 4, int64(1000+10*i), "x", 100))
	}
	segs := len(l.mu.segments)
	if got := openFiles(t) - before; got > segs+1 {
		t.Fatalf("%d segments hold %d open files; want one each", segs, got)
	}
	end, activeBase := l.LogEndOffset(), l.activeLocked().baseOffset
	wantOff, wantTs, found, err := l.OffsetForTimestamp(1000 + 10*30 + 2)
	if err != nil || !found {
		t.Fatalf("OffsetForTimestamp: %v %v", found, err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if got := openFiles(t) - before; got > 1 {
		t.Fatalf("%d files left open after Close", got)
	}
	// Every segment, the last one too (the clean close wrote it), has both
	// index files, and each sealed one has entries.
	names, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	indexes := 0
	for _, n := range names {
		if strings.HasSuffix(n.Name(), indexSuffix) || strings.HasSuffix(n.Name(), timeIndexSuffix) {
			indexes++
			if info, _ := n.Info(); info.Size() == 0 && !strings.HasPrefix(n.Name(), filepath.Base(segmentName(dir, activeBase, ""))) {
				t.Errorf("%s is empty", n.Name())
			}
		}
	}
	if indexes != 2*segs {
		t.Fatalf("%d index files for %d segments", indexes, segs)
	}

	l, err = Open(dir, cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if got := openFiles(t) - before; got > segs+1 {
		t.Fatalf("reopened, %d segments hold %d open files", segs, got)
	}
	for i, s := range l.mu.segments[:segs-1] {
		if len(s.offsetIdx.entries) == 0 || len(s.timeIdx.entries) == 0 {
			t.Fatalf("segment %d reopened without its index entries", i)
		}
	}
	off, ts, found, err := l.OffsetForTimestamp(1000 + 10*30 + 2)
	if err != nil || !found || off != wantOff || ts != wantTs {
		t.Fatalf("after reopening OffsetForTimestamp = %d, %d, %v, %v; before %d, %d", off, ts, found, err, wantOff, wantTs)
	}
	if got := l.LogEndOffset(); got != end {
		t.Fatalf("log end %d after reopening, %d before", got, end)
	}
}

// fileLimit is an injector that fails every file creation with EMFILE
// while on, as the kernel does at the process's open-files limit.
type fileLimit struct{ on atomic.Bool }

func (f *fileLimit) inject(op vfs.Op, name string) error {
	if f.on.Load() && op == vfs.OpCreate {
		return &fs.PathError{Op: "open", Path: name, Err: syscall.EMFILE}
	}
	return nil
}

// TestRollAtOpenFilesLimit: a roll that cannot open its new segment's file
// fails the append with ErrTooManyOpenFiles and changes nothing else: the
// log stays writable (it does not fail, as an I/O error would make it) and
// rolls once files can be opened again; every batch acknowledged before
// and after is there, and after a reopen.
func TestRollAtOpenFilesLimit(t *testing.T) {
	e := newEnv(t)
	var limit fileLimit
	e.fs = vfs.NewFaulty(e.mem, limit.inject)
	cfg := testConfig()
	l := e.open(cfg)
	var want []int64
	epoch := int32(0)
	appendOne := func(i int) error {
		res, err := l.AppendAsLeader(makeBatch(t, 4, int64(1000+10*i), "x", 100), epoch)
		if err == nil {
			for o := res.FirstOffset; o <= res.LastOffset; o++ {
				want = append(want, o)
			}
		}
		return err
	}
	i := 0
	for ; len(l.mu.segments) < 3; i++ { // ends with a roll: the next append needs none
		if err := appendOne(i); err != nil {
			t.Fatal(err)
		}
	}
	limit.on.Store(true)
	// A new leader epoch needs its checkpoint file written first.
	epoch = 1
	if err := appendOne(i); !errors.Is(err, ErrTooManyOpenFiles) || errors.Is(err, ErrLogFailed) {
		t.Fatalf("a new epoch at the open-files limit: %v; want ErrTooManyOpenFiles and a log that goes on", err)
	}
	if e, _ := l.LatestEpoch(); e.Epoch != 0 {
		t.Fatalf("latest epoch %d after a failed append in epoch 1", e.Epoch)
	}
	epoch = 0
	failed := 0
	for ; failed == 0 && i < 100; i++ {
		if err := appendOne(i); err != nil {
			if !errors.Is(err, ErrTooManyOpenFiles) || errors.Is(err, ErrLogFailed) {
				t.Fatalf("a roll at the open-files limit: %v; want ErrTooManyOpenFiles and a log that goes on", err)
			}
			failed++
		}
	}
	if failed == 0 {
		t.Fatal("no append needed a roll")
	}
	epoch = 1
	segs := len(l.mu.segments)
	limit.on.Store(false)
	epoch1Start := l.LogEndOffset()
	for n := 0; len(l.mu.segments) < segs+2; n++ {
		if err := appendOne(i + n); err != nil {
			t.Fatalf("after the limit cleared: %v", err)
		}
	}
	check := func(l *Log) {
		t.Helper()
		got, _ := readAllRecords(t, l)
		if !slices.Equal(got, want) {
			t.Fatalf("offsets %v, want the %d acknowledged", got, len(want))
		}
	}
	check(l)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = e.open(cfg)
	defer l.Close()
	check(l)
	if e, _ := l.LatestEpoch(); e != (EpochEntry{Epoch: 1, StartOffset: epoch1Start}) {
		t.Fatalf("latest epoch %+v after reopening; epoch 1 started at %d", e, epoch1Start)
	}
}

// TestOpenLogAtOpenFilesLimit: a new partition's log that cannot get a
// file at the open-files limit fails to open with ErrTooManyOpenFiles; its
// directory stays online (Kafka takes it offline, and every partition in
// it with it), the other logs there keep taking appends, and the log opens
// once files can be opened again.
func TestOpenLogAtOpenFilesLimit(t *testing.T) {
	mem := vfs.NewMem()
	var limit fileLimit
	m, err := NewManager(ManagerConfig{Dirs: []string{"/data"}}, Options{FS: vfs.NewFaulty(mem, limit.inject), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	cfg := testConfig()
	a, err := m.OpenLog(model.TopicPartition{Topic: "a", Partition: 0}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, a, makeBatch(t, 2, 1000, "a", 10)) // its epoch's entry: a file written
	limit.on.Store(true)
	b := model.TopicPartition{Topic: "b", Partition: 0}
	if _, err := m.OpenLog(b, cfg); !errors.Is(err, ErrTooManyOpenFiles) {
		t.Fatalf("OpenLog at the open-files limit: %v; want ErrTooManyOpenFiles", err)
	}
	if d := m.Dirs()[0]; d.Offline != nil {
		t.Fatalf("the open-files limit took %s offline: %v", d.Path, d.Offline)
	}
	mustAppend(t, a, makeBatch(t, 2, 1002, "a", 10))
	limit.on.Store(false)
	lb, err := m.OpenLog(b, cfg)
	if err != nil {
		t.Fatalf("OpenLog once the limit cleared: %v", err)
	}
	mustAppend(t, lb, makeBatch(t, 2, 1000, "b", 10))
}

// TestOpenLogPastFileBudget: past ManagerConfig.MaxOpenFiles a new log is
// refused with ErrTooManyOpenFiles, before the process's limit fails
// anything at random (a connection's accept, a roll); its directory stays
// online, and deleting a partition makes room.
func TestOpenLogPastFileBudget(t *testing.T) {
	m, err := NewManager(ManagerConfig{Dirs: []string{"/data"}, MaxOpenFiles: 3}, Options{FS: vfs.NewMem(), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	cfg := testConfig()
	tp := func(i int) model.TopicPartition { return model.TopicPartition{Topic: "t", Partition: int32(i)} }
	for i := range 3 {
		l, err := m.OpenLog(tp(i), cfg)
		if err != nil {
			t.Fatalf("log %d of a budget of 3 files: %v", i, err)
		}
		mustAppend(t, l, makeBatch(t, 2, 1000, "a", 10))
	}
	if _, err := m.OpenLog(tp(3), cfg); !errors.Is(err, ErrTooManyOpenFiles) {
		t.Fatalf("a fourth log on a budget of 3 files: %v; want ErrTooManyOpenFiles", err)
	}
	if d := m.Dirs()[0]; d.Offline != nil {
		t.Fatalf("the budget took %s offline: %v", d.Path, d.Offline)
	}
	if err := m.DeleteLog(tp(0)); err != nil {
		t.Fatal(err)
	}
	if _, err := m.OpenLog(tp(3), cfg); err != nil {
		t.Fatalf("after a deletion: %v", err)
	}
}

package storage

import (
	"fmt"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/clock"
	"github.com/samsa-io/samsa/internal/model"
	"github.com/samsa-io/samsa/internal/vfs"
)

// slowSyncFS makes every fsync take d on a manual clock.
type slowSyncFS struct {
	vfs.FS
	clk *clock.Manual
	d   time.Duration
}

func (s *slowSyncFS) wrap(f vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	return &slowSyncFile{File: f, fs: s}, nil
}

func (s *slowSyncFS) Create(n string) (vfs.File, error)        { return s.wrap(s.FS.Create(n)) }
func (s *slowSyncFS) OpenReadWrite(n string) (vfs.File, error) { return s.wrap(s.FS.OpenReadWrite(n)) }

type slowSyncFile struct {
	vfs.File
	fs *slowSyncFS
}

func (f *slowSyncFile) Sync() error {
	f.fs.clk.Advance(f.fs.d)
	return f.File.Sync()
}

// Each flush is timed once, however many segments it syncs, into the
// bucket of its duration; a Sync with nothing to flush is not a flush.
func TestFlushTimes(t *testing.T) {
	e := newEnv(t)
	e.fs = &slowSyncFS{FS: e.mem, clk: e.clock, d: 3 * time.Millisecond}
	stats := new(Stats)
	opts := e.options()
	opts.Stats = stats
	l, err := Open(e.dir, testConfig(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for i := range 3 {
		mustAppend(t, l, makeBatch(t, 5, epoch0.UnixMilli(), "flush", 100))
		if err := l.Flush(); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			if err := l.Flush(); err != nil { // nothing new: no flush
				t.Fatal(err)
			}
		}
	}
	ft := stats.FlushTimes()
	if ft.Count != 3 {
		t.Fatalf("%d flushes timed, want 3", ft.Count)
	}
	for i, bound := range FlushBuckets {
		want := uint64(0)
		if bound >= 0.003 {
			want = 3
		}
		if ft.Buckets[i] != want {
			t.Errorf("%d flushes of at most %vs, want %d", ft.Buckets[i], bound, want)
		}
	}
	if ft.Seconds < 0.009 {
		t.Errorf("flushes took %vs in all, want at least 3 × 3 ms", ft.Seconds)
	}
}

// The histogram puts a duration in the first bucket at or above it, and
// one past every bound only in the count.
func TestFlushHistogramBuckets(t *testing.T) {
	var s Stats
	for _, d := range []time.Duration{0, 100 * time.Microsecond, 101 * time.Microsecond, time.Minute} {
		s.flush.observe(d)
	}
	ft := s.FlushTimes()
	if ft.Count != 4 || ft.Buckets[0] != 2 || ft.Buckets[1] != 3 || ft.Buckets[len(ft.Buckets)-1] != 3 {
		t.Errorf("count %d, buckets %v", ft.Count, ft.Buckets)
	}
}

// The cleaner counts its rounds and passes: what a pass read, wrote and
// removed, the dedupe buffer it used, and per round the dirtiest log, the
// most late one (past max.compaction.lag.ms) and the passes that failed.
func TestCleanerProgress(t *testing.T) {
	clk := clock.NewManual(epoch0)
	m, err := NewManager(ManagerConfig{Dirs: []string{"/data"}, CleanerMapMemory: 1 << 20}, Options{FS: vfs.NewMem(), Clock: clk, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	cfg := testConfig()
	cfg.Compacted, cfg.Deletes = true, false
	cfg.MinCleanableDirtyRatio = 0.5
	cfg.MaxCompactionLagMs = time.Minute.Milliseconds()
	l, err := m.OpenLog(model.TopicPartition{Topic: "compacted", Partition: 0}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	fill := func() {
		for i := range 200 {
			mustAppend(t, l, keyedBatch(t, clk.Now().UnixMilli(), []string{fmt.Sprint("k", i%5)}, [][]byte{fmt.Appendf(nil, "v%d", i)}))
		}
		if err := l.Roll(); err != nil {
			t.Fatal(err)
		}
	}
	fill()
	clk.Advance(3 * time.Minute)
	m.cleanDirtiest()
	p := m.Stats().Cleaner()
	if p.Rounds != 1 || p.Passes != 1 || p.FailedPasses != 0 || p.Uncleanable != 0 || !p.LastRound.Equal(clk.Now()) {
		t.Fatalf("after a round: %+v", p)
	}
	if p.BytesRead <= p.BytesWritten || p.BytesWritten <= 0 || p.RecordsRemoved < 190 {
		t.Errorf("the pass read %d bytes, wrote %d, removed %d records", p.BytesRead, p.BytesWritten, p.RecordsRemoved)
	}
	if p.LastBufferUtilization <= 0 || p.LastBufferUtilization > 0.01 {
		t.Errorf("5 keys used %v of a 1 MiB buffer", p.LastBufferUtilization)
	}
	if p.MaxDirtyRatio != 1 || p.MaxCompactionDelay != 2*time.Minute {
		t.Errorf("round: dirtiest %v, latest by %v; want 1 and 2m", p.MaxDirtyRatio, p.MaxCompactionDelay)
	}

	// A dedupe buffer too small for one key: the pass fails, every round.
	m.SetCleaner(CleanerSettings{MapMemory: 10})
	fill()
	m.cleanDirtiest()
	p = m.Stats().Cleaner()
	if p.Rounds != 2 || p.Passes != 1 || p.FailedPasses != 1 || p.Uncleanable != 1 {
		t.Errorf("after a failed pass: %+v", p)
	}
}

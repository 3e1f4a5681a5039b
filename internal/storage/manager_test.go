package storage

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
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

// runBackground lets the Manager's background loops run every round that
// falls due within the next d, and returns once all of them are idle again.
// The Manager tests run inside synctest.Test, where the loops' tickers run
// on the bubble's clock, which moves only when every goroutine waits: after
// runBackground a round either has run or is not due. No polling.
func runBackground(d time.Duration) {
	time.Sleep(d)
	synctest.Wait()
}

func newTestManager(t *testing.T, mem *vfs.Mem, clk *clock.Manual) *Manager {
	t.Helper()
	m, err := NewManager(ManagerConfig{
		Dirs:                   []string{"/data"},
		RetentionCheckInterval: 10 * time.Millisecond,
		FlushCheckInterval:     10 * time.Millisecond,
		CheckpointInterval:     10 * time.Millisecond,
	}, Options{FS: mem, Clock: clk, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestManagerBackgroundRetentionAndFlush(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := vfs.NewMem()
		clk := clock.NewManual(epoch0)
		m := newTestManager(t, mem, clk)
		defer m.Close()
		cfg := testConfig()
		cfg.RetentionMs = 60_000
		cfg.FlushMs = 1000
		tp := model.TopicPartition{Topic: "orders", Partition: 3}
		l, err := m.OpenLog(tp, cfg)
		if err != nil {
			t.Fatal(err)
		}
		m.Start(context.Background())
		for i := range 40 {
			mustAppend(t, l, makeBatch(t, 2, epoch0.UnixMilli()+int64(i), "x", 100))
		}
		clk.Advance(2 * time.Second)
		runBackground(10 * time.Millisecond)
		if rp := l.Offsets().RecoveryPoint; rp != 80 {
			t.Fatalf("recovery point %d after the flush check, want 80 (flush.ms passed)", rp)
		}
		clk.Advance(time.Hour)
		runBackground(10 * time.Millisecond)
		if start := l.LogStartOffset(); start != 80 {
			t.Fatalf("log start %d after the retention check, want 80 (retention.ms passed)", start)
		}
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := m.OpenLog(tp, cfg); err == nil {
			t.Fatal("closed manager opened a log")
		}
	})
}

func TestManagerOpenListDelete(t *testing.T) {
	mem := vfs.NewMem()
	clk := clock.NewManual(epoch0)
	m := newTestManager(t, mem, clk)
	a := model.TopicPartition{Topic: "a-b-c", Partition: 0}
	b := model.TopicPartition{Topic: "a-b-c", Partition: 12}
	for _, tp := range []model.TopicPartition{a, b} {
		l, err := m.OpenLog(tp, testConfig())
		if err != nil {
			t.Fatal(err)
		}
		mustAppend(t, l, makeBatch(t, 1, 1, "x", 1))
		if again, _ := m.OpenLog(tp, testConfig()); again != l {
			t.Fatal("second OpenLog returned another log")
		}
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	m = newTestManager(t, mem, clk)
	defer m.Close()
	got, err := m.OnDisk()
	if err != nil || !slices.Equal(got, []model.TopicPartition{a, b}) {
		t.Fatalf("on disk %v %v", got, err)
	}
	l, err := m.OpenLog(b, testConfig())
	if err != nil || l.LogEndOffset() != 1 {
		t.Fatalf("reopened %v", err)
	}
	if err := m.DeleteLog(b); err != nil {
		t.Fatal(err)
	}
	if got, _ := m.OnDisk(); !slices.Equal(got, []model.TopicPartition{a}) {
		t.Fatalf("after delete %v", got)
	}
	if _, ok := m.Log(b); ok {
		t.Fatal("deleted log still open")
	}
	l, err = m.OpenLog(b, testConfig())
	if err != nil || l.LogEndOffset() != 0 {
		t.Fatalf("recreated log: end %d %v", l.LogEndOffset(), err)
	}
}

// Producers idle for producer.id.expiration.ms are forgotten by the
// background expiry: a retry of their last batch is then a new batch.
func TestManagerExpiresProducers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := vfs.NewMem()
		clk := clock.NewManual(epoch0)
		m, err := NewManager(ManagerConfig{
			Dirs: []string{"/data"}, ProducerIDExpiration: time.Hour, ProducerExpiryInterval: 10 * time.Millisecond,
		}, Options{FS: mem, Clock: clk, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		l, err := m.OpenLog(model.TopicPartition{Topic: "p", Partition: 0}, testConfig())
		if err != nil {
			t.Fatal(err)
		}
		m.Start(context.Background())
		defer m.Close()
		// Batch timestamps are the producer's activity clock, as in Kafka.
		b := producerBatchAt(t, 9, epoch0.UnixMilli())
		mustAppend(t, l, b)
		if res, _ := l.AppendAsLeader(producerBatchAt(t, 9, epoch0.UnixMilli()), 0); !res.Duplicate {
			t.Fatal("retry before expiry was not a duplicate")
		}
		clk.Advance(2 * time.Hour)
		runBackground(10 * time.Millisecond)
		if n := len(l.Producers()); n != 0 {
			t.Fatalf("%d producers left after the expiry check", n)
		}
		if res, err := l.AppendAsLeader(producerBatchAt(t, 9, clk.Now().UnixMilli()), 0); err != nil || res.Duplicate {
			t.Fatalf("after expiry: %+v %v", res, err)
		}
	})
}

func producerBatchAt(t *testing.T, pid int64, ts int64) []byte {
	t.Helper()
	b := record.Batch{ProducerID: pid, ProducerEpoch: 0, BaseSequence: 0,
		Records: []record.Record{{Timestamp: ts, Value: []byte("v")}}}
	out, err := b.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The background cleaner compacts a compacted log once enough of it is
// dirty: many updates to few keys shrink to the latest value per key.
func TestManagerCleansCompactedLogs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mem := vfs.NewMem()
		clk := clock.NewManual(epoch0)
		m, err := NewManager(ManagerConfig{Dirs: []string{"/data"}, CleanerBackoff: 10 * time.Millisecond, CleanerMapMemory: 1 << 20},
			Options{FS: mem, Clock: clk, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		cfg := testConfig()
		cfg.Compacted, cfg.Deletes = true, false
		l, err := m.OpenLog(model.TopicPartition{Topic: "c", Partition: 0}, cfg)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 300 {
			b := record.Batch{ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, Records: []record.Record{
				{Timestamp: epoch0.UnixMilli(), Key: []byte(fmt.Sprint("k", i%5)), Value: []byte(fmt.Sprint("v", i))}}}
			data, _ := b.AppendTo(nil)
			mustAppend(t, l, data)
		}
		before := l.Offsets().Size
		m.Start(context.Background())
		defer m.Close()
		runBackground(10 * time.Millisecond)
		if size := l.Offsets().Size; size >= before/2 {
			t.Fatalf("log holds %d of %d bytes after a cleaner round", size, before)
		}
		offs, vals := readAllRecords(t, l)
		latest := map[string]bool{}
		for _, v := range vals {
			latest[v] = true
		}
		for k := range 5 { // the latest value of each key survives
			if want := fmt.Sprint("v", 295+k); !latest[want] {
				t.Fatalf("latest value %s lost; log holds %v", want, vals)
			}
		}
		// Only the active segment is never cleaned, so far fewer than 300 stay.
		if len(offs) >= 150 {
			t.Fatalf("%d of 300 records left after cleaning", len(offs))
		}
	})
}

// Every directory the Manager and a new log create is synced into its
// parent before the log is used: the data directory with its missing
// parents, then the partition directory.
func TestNewDirectoriesAreSyncedIntoTheirParents(t *testing.T) {
	mem := vfs.NewMem()
	var synced []string
	fsys := vfs.NewFaulty(mem, func(op vfs.Op, name string) error {
		if op == vfs.OpSyncDir {
			synced = append(synced, name)
		}
		return nil
	})
	m, err := NewManager(ManagerConfig{Dirs: []string{"/var/samsa/data"}}, Options{FS: fsys, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if want := []string{"/var/samsa", "/var", "/"}; !slices.Equal(synced, want) {
		t.Fatalf("NewManager synced %v, want %v", synced, want)
	}
	synced = nil
	if _, err := m.OpenLog(model.TopicPartition{Topic: "t", Partition: 0}, testConfig()); err != nil {
		t.Fatal(err)
	}
	if len(synced) == 0 || synced[0] != "/var/samsa/data" {
		t.Fatalf("opening a new log synced %v first, want the data directory", synced)
	}
}

// A Manager locks its data directory until Close: a second one on the same
// directory fails at once with an error that says why, and the .lock file
// is not taken for a partition.
func TestManagerLocksTheDataDirectory(t *testing.T) {
	dir := t.TempDir()
	open := func() (*Manager, error) {
		return NewManager(ManagerConfig{Dirs: []string{dir}}, Options{Logger: quiet})
	}
	m, err := open()
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	_, err = open()
	want := "storage: log directory " + dir + " is locked by another process (is another broker running on it?)"
	if !errors.Is(err, ErrLogDirLocked) || err.Error() != want {
		t.Fatalf("second manager on %s: %v, want %q", dir, err, want)
	}
	tp := model.TopicPartition{Topic: "t", Partition: 0}
	if _, err := m.OpenLog(tp, testConfig()); err != nil {
		t.Fatal(err)
	}
	if got, err := m.OnDisk(); err != nil || !slices.Equal(got, []model.TopicPartition{tp}) {
		t.Fatalf("on disk %v %v", got, err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := open()
	if err != nil {
		t.Fatalf("after Close: %v", err)
	}
	if err := again.Close(); err != nil {
		t.Fatal(err)
	}
	if err := again.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// lockHelperDir, set in the environment, makes the test binary a second
// process that opens a Manager on the directory and prints the outcome.
const lockHelperDir = "SAMSA_STORAGE_LOCK_HELPER_DIR"

func TestManagerLockHelperProcess(t *testing.T) {
	dir := os.Getenv(lockHelperDir)
	if dir == "" {
		t.Skip("helper for TestManagerLockRefusesAnotherProcess")
	}
	m, err := NewManager(ManagerConfig{Dirs: []string{dir}}, Options{Logger: quiet})
	if err != nil {
		fmt.Println(err)
		return
	}
	m.Close()
	fmt.Println("opened")
}

// The lock holds against another process too, and goes with the Manager
// that held it.
func TestManagerLockRefusesAnotherProcess(t *testing.T) {
	dir := t.TempDir()
	second := func() string {
		t.Helper()
		cmd := exec.Command(os.Args[0], "-test.run=^TestManagerLockHelperProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), lockHelperDir+"="+dir)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("helper process: %v\n%s", err, out)
		}
		return string(out)
	}
	m, err := NewManager(ManagerConfig{Dirs: []string{dir}}, Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if out := second(); !strings.Contains(out, "storage: log directory "+dir+" is locked by another process (is another broker running on it?)") {
		t.Fatalf("another process opened a locked directory:\n%s", out)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if out := second(); !strings.Contains(out, "opened") {
		t.Fatalf("another process after Close:\n%s", out)
	}
}

package storage

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/samsa-io/samsa/internal/model"
	"github.com/samsa-io/samsa/internal/vfs"
)

func tpOf(topic string, p int32) model.TopicPartition {
	return model.TopicPartition{Topic: topic, Partition: p}
}

func newJBOD(t *testing.T, fsys vfs.FS, dirs ...string) *Manager {
	t.Helper()
	m, err := NewManager(ManagerConfig{Dirs: dirs}, Options{FS: fsys, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func dirCounts(t *testing.T, m *Manager, tps []model.TopicPartition) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, tp := range tps {
		d, ok := m.DirOf(tp)
		if !ok {
			t.Fatalf("%s has no directory", tp)
		}
		out[d]++
	}
	return out
}

// New replicas go to the directory with the fewest replicas, the first on
// a tie, as Kafka's LogManager places them; a preferred directory wins.
func TestJBODPlacesOnTheDirectoryWithFewestReplicas(t *testing.T) {
	mem := vfs.NewMem()
	m := newJBOD(t, mem, "/a", "/b", "/c")
	var tps []model.TopicPartition
	for i := range int32(7) {
		tp := tpOf("t", i)
		tps = append(tps, tp)
		if _, err := m.OpenLog(tp, testConfig()); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := dirCounts(t, m, tps), map[string]int{"/a": 3, "/b": 2, "/c": 2}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("placement %v, want %v", got, want)
	}
	if d, _ := m.DirOf(tpOf("t", 0)); d != "/a" {
		t.Fatalf("first replica in %s, want /a (first on a tie)", d)
	}
	// The metadata's assigned directory, then AlterReplicaLogDirs's
	// preference for a replica not created yet, win over the count.
	if _, err := m.OpenLogIn(tpOf("u", 0), testConfig(), "/a"); err != nil {
		t.Fatal(err)
	}
	if d, _ := m.DirOf(tpOf("u", 0)); d != "/a" {
		t.Fatalf("assigned directory ignored: %s", d)
	}
	if err := m.Prefer(tpOf("u", 1), "/c"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.OpenLogIn(tpOf("u", 1), testConfig(), "/a"); err != nil {
		t.Fatal(err)
	}
	if d, _ := m.DirOf(tpOf("u", 1)); d != "/c" {
		t.Fatalf("preferred directory ignored: %s", d)
	}
	if err := m.Prefer(tpOf("u", 2), "/nowhere"); !errors.Is(err, ErrLogDirNotFound) {
		t.Fatalf("prefer an unknown directory: %v", err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	// At the next start each replica is found where it is, whatever the
	// counts say now.
	m = newJBOD(t, mem, "/c", "/b", "/a")
	defer m.Close()
	for _, tp := range tps {
		l, err := m.OpenLog(tp, testConfig())
		if err != nil {
			t.Fatal(err)
		}
		if want := "/a"; tp.Partition%3 == 0 && filepath.Dir(l.Dir()) != want {
			t.Fatalf("%s reopened in %s, want %s", tp, l.Dir(), want)
		}
	}
	if got := dirCounts(t, m, tps); got["/a"] != 3 || got["/b"] != 2 || got["/c"] != 2 {
		t.Fatalf("replicas moved on restart: %v", got)
	}
}

// A replica moves to another directory while batches are appended to it
// and its tail is truncated (a follower's divergence): the promoted log
// holds exactly the current one's batches, and the old directory is gone.
func TestJBODMoveUnderAppendsAndTruncation(t *testing.T) {
	mem := vfs.NewMem()
	m := newJBOD(t, mem, "/a", "/b")
	defer m.Close()
	tp := tpOf("t", 0)
	cur, err := m.OpenLogIn(tp, testConfig(), "/a")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		if _, err := cur.AppendAsLeader(makeBatch(t, 3, int64(i), fmt.Sprint(i), 100), int32(i/10)); err != nil {
			t.Fatal(err)
		}
	}
	if err := cur.SetLogStartOffset(6); err != nil {
		t.Fatal(err)
	}
	fut, ok, err := m.CreateFuture(tp, "/b")
	if err != nil || !ok {
		t.Fatalf("create future: %v %v", ok, err)
	}
	if _, ok, _ := m.CreateFuture(tp, "/a"); ok {
		t.Fatal("a future replica in the current replica's directory")
	}
	if fut, _, _ = m.CreateFuture(tp, "/b"); fut == nil {
		t.Fatal("the move to /b was dropped by asking to stay in /a")
	}
	// Copy part of it, then the current log diverges: its tail is cut
	// and rewritten in a new epoch (as a follower truncating after a
	// leader change), and the log start moves on.
	if _, err := CatchUpFuture(cur, fut, 4096); err != nil {
		t.Fatal(err)
	}
	if fut.LogEndOffset() <= 6 {
		t.Fatalf("nothing copied: future ends at %d", fut.LogEndOffset())
	}
	if err := cur.TruncateTo(fut.LogEndOffset() - 3); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if _, err := cur.AppendAsLeader(makeBatch(t, 2, int64(100+i), "new"+fmt.Sprint(i), 50), 7); err != nil {
			t.Fatal(err)
		}
	}
	if err := cur.SetLogStartOffset(9); err != nil {
		t.Fatal(err)
	}
	for {
		lag, err := CatchUpFuture(cur, fut, 512)
		if err != nil {
			t.Fatal(err)
		}
		if lag == 0 {
			break
		}
	}
	// More appends race the promotion's start: it copies them under the
	// caller's hold on writers, as the partition's role lock gives.
	if _, err := cur.AppendAsLeader(makeBatch(t, 4, 200, "last", 10), 8); err != nil {
		t.Fatal(err)
	}
	want := readBatches(t, cur)
	wantOffsets := cur.Offsets()
	var wantEpochs []string
	for e := range int32(10) {
		ep, end := cur.EndOffsetForEpoch(e)
		wantEpochs = append(wantEpochs, fmt.Sprint(ep, end))
	}
	l, err := m.PromoteFuture(tp, cur)
	if err != nil {
		t.Fatal(err)
	}
	if d := filepath.Dir(l.Dir()); d != "/b" {
		t.Fatalf("promoted log in %s", d)
	}
	got := readBatches(t, l)
	if len(got) != len(want) {
		t.Fatalf("moved log has %d batches, want %d", len(got), len(want))
	}
	for i := range got {
		if !bytes.Equal(got[i], want[i]) {
			t.Fatalf("batch %d differs after the move", i)
		}
	}
	if o := l.Offsets(); o.LogStartOffset != wantOffsets.LogStartOffset || o.LogEndOffset != wantOffsets.LogEndOffset {
		t.Fatalf("moved log [%d, %d), want [%d, %d)", o.LogStartOffset, o.LogEndOffset, wantOffsets.LogStartOffset, wantOffsets.LogEndOffset)
	}
	for e := range int32(10) {
		if ep, end := l.EndOffsetForEpoch(e); fmt.Sprint(ep, end) != wantEpochs[e] {
			t.Fatalf("EndOffsetForEpoch(%d) = %d %d after the move, %s before", e, ep, end, wantEpochs[e])
		}
	}
	names, _ := mem.ReadDir("/a")
	if slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "t-0") }) {
		t.Fatalf("old replica left in /a: %v", names)
	}
	if _, _, ok := m.Future(tp); ok {
		t.Fatal("future replica still registered")
	}
	if lg, _ := m.Log(tp); lg != l {
		t.Fatal("the manager does not serve the moved log")
	}
}

// What a crash leaves around a move is settled at the next start: before
// the commit (the old replica renamed -delete) the current replica stays
// and the future one is resumed; after it the complete future replica is
// promoted; two current replicas refuse to start.
func TestJBODStartSettlesInterruptedMoves(t *testing.T) {
	write := func(t *testing.T, mem *vfs.Mem, dir, name string, batches int) {
		t.Helper()
		l, err := Open(filepath.Join(dir, name), testConfig(), Options{FS: mem, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		for i := range batches {
			mustAppend(t, l, makeBatch(t, 1, int64(i), "x", 10))
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
	tp := tpOf("t", 0)
	t.Run("before the commit", func(t *testing.T) {
		mem := vfs.NewMem()
		write(t, mem, "/a", "t-0", 5)
		write(t, mem, "/b", "t-0.0123-future", 3)
		m := newJBOD(t, mem, "/a", "/b")
		defer m.Close()
		l, err := m.OpenLog(tp, testConfig())
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Dir(l.Dir()) != "/a" || l.LogEndOffset() != 5 {
			t.Fatalf("current replica %s ends at %d", l.Dir(), l.LogEndOffset())
		}
		fut, dir, ok := m.Future(tp)
		if !ok || dir != "/b" || fut.LogEndOffset() != 3 {
			t.Fatalf("future replica not resumed: %v %s", ok, dir)
		}
	})
	t.Run("after the commit", func(t *testing.T) {
		mem := vfs.NewMem()
		write(t, mem, "/a", "t-0.0456-delete", 5)
		write(t, mem, "/b", "t-0.0123-future", 5)
		m := newJBOD(t, mem, "/a", "/b")
		defer m.Close()
		l, err := m.OpenLog(tp, testConfig())
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Dir(l.Dir()) != "/b" || l.LogEndOffset() != 5 {
			t.Fatalf("replica %s ends at %d, want the promoted one in /b", l.Dir(), l.LogEndOffset())
		}
		if names, _ := mem.ReadDir("/a"); slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "t-0") }) {
			t.Fatalf("deleted replica left: %v", names)
		}
	})
	t.Run("an orphan future replica", func(t *testing.T) {
		mem := vfs.NewMem()
		write(t, mem, "/b", "t-0.0123-future", 5)
		m := newJBOD(t, mem, "/a", "/b")
		defer m.Close()
		if tps, _ := m.OnDisk(); len(tps) != 0 {
			t.Fatalf("an orphan future replica was kept: %v", tps)
		}
	})
	t.Run("two current replicas", func(t *testing.T) {
		mem := vfs.NewMem()
		write(t, mem, "/a", "t-0", 5)
		write(t, mem, "/b", "t-0", 5)
		_, err := NewManager(ManagerConfig{Dirs: []string{"/a", "/b"}}, Options{FS: mem, Logger: quiet})
		if err == nil || !strings.Contains(err.Error(), "duplicate log directories for t-0") {
			t.Fatalf("two current replicas: %v", err)
		}
	})
}

// A crash at any point of a promotion loses nothing: the next start finds
// one current replica holding every batch.
func TestJBODCrashDuringPromotion(t *testing.T) {
	tp := tpOf("t", 0)
	var points int
	for crashAt := 0; ; crashAt++ {
		mem := vfs.NewMem()
		var mu sync.Mutex
		syncs, armed := 0, false
		var images []*vfs.Mem
		fsys := vfs.NewFaulty(mem, func(op vfs.Op, name string) error {
			mu.Lock()
			defer mu.Unlock()
			if armed && (op == vfs.OpSync || op == vfs.OpSyncDir) {
				if syncs == crashAt && images == nil {
					images = []*vfs.Mem{mem.CrashClone(vfs.CrashLoseUnsynced, nil),
						mem.CrashClone(vfs.CrashTorn, rand.New(rand.NewPCG(uint64(crashAt), 1)))}
				}
				syncs++
			}
			return nil
		})
		m := newJBOD(t, fsys, "/a", "/b")
		cur, err := m.OpenLogIn(tp, testConfig(), "/a")
		if err != nil {
			t.Fatal(err)
		}
		for i := range 20 {
			mustAppend(t, cur, makeBatch(t, 2, int64(i), "x", 200))
		}
		if err := cur.Flush(); err != nil {
			t.Fatal(err)
		}
		want := readBatches(t, cur)
		fut, _, err := m.CreateFuture(tp, "/b")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := CatchUpFuture(cur, fut, 2048); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		armed = true
		mu.Unlock()
		if _, err := m.PromoteFuture(tp, cur); err != nil {
			t.Fatal(err)
		}
		m.Close()
		mu.Lock()
		imgs := images
		mu.Unlock()
		if imgs == nil {
			break // crashAt is past the promotion's last sync
		}
		for _, img := range imgs {
			points++
			m2 := newJBOD(t, img, "/a", "/b")
			l, err := m2.OpenLog(tp, testConfig())
			if err != nil {
				t.Fatalf("crash at sync %d: %v", crashAt, err)
			}
			got := readBatches(t, l)
			if len(got) != len(want) {
				t.Fatalf("crash at sync %d: %d batches in %s, want %d", crashAt, len(got), l.Dir(), len(want))
			}
			for i := range got {
				if !bytes.Equal(got[i], want[i]) {
					t.Fatalf("crash at sync %d: batch %d differs", crashAt, i)
				}
			}
			m2.Close()
		}
	}
	if points < 5 {
		t.Fatalf("only %d crash points", points)
	}
}

// An I/O error in one directory takes it offline: its logs close, new
// replicas go elsewhere, the other directory's logs go on.
func TestJBODFailedDirectoryGoesOffline(t *testing.T) {
	mem := vfs.NewMem()
	var mu sync.Mutex
	failB := false
	fsys := vfs.NewFaulty(mem, func(op vfs.Op, name string) error {
		mu.Lock()
		defer mu.Unlock()
		if failB && strings.HasPrefix(name, "/b/") {
			return fmt.Errorf("%w: EIO on %s", vfs.ErrInjected, name)
		}
		return nil
	})
	m := newJBOD(t, fsys, "/a", "/b")
	defer m.Close()
	la, _ := m.OpenLogIn(tpOf("t", 0), testConfig(), "/a")
	lb, _ := m.OpenLogIn(tpOf("t", 1), testConfig(), "/b")
	mustAppend(t, la, makeBatch(t, 1, 0, "a", 10))
	mustAppend(t, lb, makeBatch(t, 1, 0, "b", 10))
	changed := m.OfflineChanged()
	mu.Lock()
	failB = true
	mu.Unlock()
	if err := lb.Flush(); err == nil {
		t.Fatal("flush on the failing directory succeeded")
	}
	<-changed
	dirs := m.Dirs()
	if dirs[0].Offline != nil || dirs[1].Offline == nil {
		t.Fatalf("directory states %v", dirs)
	}
	if lost := m.CloseDir("/b"); !slices.Equal(lost, []model.TopicPartition{tpOf("t", 1)}) {
		t.Fatalf("lost %v", lost)
	}
	if !m.Offline(tpOf("t", 1)) || m.Offline(tpOf("t", 0)) {
		t.Fatal("offline replicas wrong")
	}
	if _, err := m.OpenLog(tpOf("t", 1), testConfig()); !errors.Is(err, ErrLogDirOffline) {
		t.Fatalf("open a replica of the offline directory: %v", err)
	}
	if _, err := m.OpenLogIn(tpOf("t", 2), testConfig(), "/b"); err != nil {
		t.Fatal(err)
	}
	if d, _ := m.DirOf(tpOf("t", 2)); d != "/a" {
		t.Fatalf("new replica placed in %s, want the online /a", d)
	}
	mustAppend(t, la, makeBatch(t, 1, 1, "a", 10))
	if _, _, err := m.CreateFuture(tpOf("t", 0), "/b"); !errors.Is(err, ErrLogDirOffline) {
		t.Fatalf("a move to the offline directory: %v", err)
	}
}

package storage

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/samsa-io/samsa/internal/model"
	"github.com/samsa-io/samsa/internal/vfs"
)

// Crash images around topic creation. Starting from an empty disk, a
// Manager makes its data directory (with parents that did not exist), then
// two partitions are created one after the other, each taking appends and
// syncs, and the Manager closes. At every sync point (before it takes
// effect) images of every crash mode are taken; each must open to a data
// directory in which every partition either
//
//   - exists, opens, and holds its acknowledged batches and only batches as
//     they were appended (appended.check), or
//   - does not exist at all, which is allowed only while no directory sync
//     has yet covered its name (and that of every directory above it) and
//     nothing in it was acknowledged.
//
// Once NewManager or OpenLog has returned, its directory is in every later
// image: a broker that reported its log directory or a partition ready must
// find it again after a crash.

const topicCrashDataDir = "/var/samsa/data"

var topicCrashPartitions = []model.TopicPartition{{Topic: "orders", Partition: 0}, {Topic: "orders", Partition: 1}}

type topicCrashImage struct {
	fs    *vfs.Mem
	point int
	mode  vfs.CrashMode
	// ready: NewManager, and OpenLog of the partitions that are true, had
	// returned.
	ready map[string]bool
	// linked: the directory's name had been synced into its parent.
	linked map[string]bool
	// made: the directory existed (in the live namespace).
	made    map[string]bool
	durable map[model.TopicPartition]int64
	logs    map[model.TopicPartition]*appended // as of the sync point
}

// dirSyncFS reports every directory sync that succeeded.
type dirSyncFS struct {
	vfs.FS
	synced func(dir string)
}

func (f *dirSyncFS) SyncDir(dir string) error {
	err := f.FS.SyncDir(dir)
	if err == nil {
		f.synced(dir)
	}
	return err
}

type topicCrashWorkload struct {
	mem     *vfs.Mem
	point   int
	ready   map[string]bool
	linked  map[string]bool
	durable map[model.TopicPartition]int64
	logs    map[model.TopicPartition]*appended
	images  []topicCrashImage
}

// watched are the directories whose names the test follows: the data
// directory, its parents, and the partition directories.
func topicCrashWatched() []string {
	dirs := []string{"/var", "/var/samsa", topicCrashDataDir}
	for _, tp := range topicCrashPartitions {
		dirs = append(dirs, filepath.Join(topicCrashDataDir, tp.String()))
	}
	return dirs
}

func (w *topicCrashWorkload) dirSynced(dir string) {
	for _, d := range topicCrashWatched() {
		if ok, _ := w.mem.Exists(d); ok && filepath.Dir(d) == dir {
			w.linked[d] = true
		}
	}
}

// covered reports whether dir and every directory above it had its name
// synced into its parent.
func covered(linked map[string]bool, dir string) bool {
	for d := dir; filepath.Dir(d) != d; d = filepath.Dir(d) {
		if !linked[d] {
			return false
		}
	}
	return true
}

func (w *topicCrashWorkload) snapshot(rng *rand.Rand) {
	w.point++
	made := map[string]bool{}
	for _, d := range topicCrashWatched() {
		made[d], _ = w.mem.Exists(d)
	}
	logs := map[model.TopicPartition]*appended{}
	for tp, a := range w.logs {
		logs[tp] = &appended{batches: maps.Clone(a.batches), end: a.end}
	}
	for _, mode := range []vfs.CrashMode{vfs.CrashLoseUnsynced, vfs.CrashTorn, vfs.CrashGarbage} {
		w.images = append(w.images, topicCrashImage{
			fs: w.mem.CrashClone(mode, rng), point: w.point, mode: mode,
			ready: maps.Clone(w.ready), linked: maps.Clone(w.linked), made: made, durable: maps.Clone(w.durable), logs: logs,
		})
	}
}

func (w *topicCrashWorkload) run(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 13))
	faulty := vfs.NewFaulty(w.mem, func(op vfs.Op, name string) error {
		if op == vfs.OpSync || op == vfs.OpSyncDir {
			w.snapshot(rng)
		}
		return nil
	})
	fsys := &dirSyncFS{FS: faulty, synced: w.dirSynced}
	m, err := NewManager(ManagerConfig{Dirs: []string{topicCrashDataDir}}, Options{FS: fsys, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	w.ready[topicCrashDataDir] = true
	var open []*Log
	for i, tp := range topicCrashPartitions {
		l, err := m.OpenLog(tp, crashConfig())
		if err != nil {
			t.Fatal(err)
		}
		w.ready[l.Dir()] = true
		w.logs[tp] = newAppended()
		open = append(open, l)
		// Every open partition takes appends; each third is synced.
		for k := range 12 {
			for j, l := range open {
				tp := topicCrashPartitions[j]
				tag := fmt.Sprintf("%d-%d-%d", i, j, k)
				if _, err := w.logs[tp].append(t, l, makeBatch(t, 1+rng.IntN(3), int64(k), tag, rng.IntN(200))); err != nil {
					t.Fatal(err)
				}
				if k%3 == 2 {
					end := l.LogEndOffset()
					if err := l.Sync(end); err != nil {
						t.Fatal(err)
					}
					w.durable[tp] = end
				}
			}
		}
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	for tp, a := range w.logs {
		w.durable[tp] = a.end
	}
	w.snapshot(rng) // after a clean shutdown
}

func (img *topicCrashImage) check(t *testing.T) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("sync point %d, mode %d: %s", img.point, img.mode, fmt.Sprintf(format, args...))
	}
	haveData, _ := img.fs.Exists(topicCrashDataDir)
	if !haveData && (img.ready[topicCrashDataDir] || covered(img.linked, topicCrashDataDir)) {
		fail("data directory lost after it was made durable")
	}
	m, err := NewManager(ManagerConfig{Dirs: []string{topicCrashDataDir}}, Options{FS: img.fs, Logger: quiet})
	if err != nil {
		fail("open the data directory: %v", err)
	}
	defer m.Close()
	onDisk, err := m.OnDisk()
	if err != nil {
		fail("list partitions: %v", err)
	}
	for _, tp := range onDisk {
		if !slices.Contains(topicCrashPartitions, tp) {
			fail("partition %s on disk was never created", tp)
		}
	}
	for _, tp := range topicCrashPartitions {
		dir := m.PartitionDir(tp)
		a, created := img.logs[tp]
		if !slices.Contains(onDisk, tp) {
			switch {
			case img.ready[dir] || covered(img.linked, dir):
				fail("partition %s lost after its directory was made durable", tp)
			case img.durable[tp] > 0:
				fail("partition %s lost with %d acknowledged offsets", tp, img.durable[tp])
			}
			continue
		}
		l, err := m.OpenLog(tp, crashConfig())
		if err != nil {
			fail("open %s: %v", tp, err)
		}
		if !created {
			a = newAppended() // its directory was being made: it must be empty
		}
		a.check(t, l, img.durable[tp])
	}
}

func TestCrashAroundTopicCreation(t *testing.T) {
	seeds := []uint64{1, 2, 3}
	if testing.Short() {
		seeds = seeds[:1]
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			w := &topicCrashWorkload{
				mem: vfs.NewMem(), ready: map[string]bool{}, linked: map[string]bool{},
				durable: map[model.TopicPartition]int64{}, logs: map[model.TopicPartition]*appended{},
			}
			w.run(t, seed)
			lost := map[string]bool{}
			for _, img := range w.images {
				for _, d := range topicCrashWatched() {
					if ok, _ := img.fs.Exists(d); img.made[d] && !ok {
						lost[d] = true
					}
				}
				img.check(t) // which makes the data directory if lost
			}
			// Some image must lose each directory that had been made, or the
			// test says nothing about creation.
			for _, d := range topicCrashWatched() {
				if !lost[d] {
					t.Fatalf("no image lost %s, made but not yet synced into its parent", d)
				}
			}
			t.Logf("%d sync points, %d crash images checked", w.point, len(w.images))
		})
	}
}

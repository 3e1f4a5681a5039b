package metaprops

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/samsa-io/samsa/internal/vfs"
)

// Crash images around formatting. On an empty disk, Format makes two
// directories (and their parents) and writes their meta.properties; then
// one file is rewritten (AssignDirectoryIDs-style: the same directory with
// a new content). Before every sync, directory sync and rename, images of
// every crash mode are taken. In each, every directory's meta.properties
// must be absent or whole: absent only while its first write had not
// returned, and otherwise one of the contents written to it, the newest
// once its write had returned. Check on the image never sees a corrupt
// file.

var crashDirs = []string{"/var/samsa/logs", "/var/samsa/meta"}

type crashImage struct {
	fs    *vfs.Mem
	point int
	mode  vfs.CrashMode
	// versions are every content written to each directory, oldest
	// first (the whole run's: known only once it is over); durable is how
	// many of them were durable at the image.
	versions map[string][]Props
	durable  map[string]int
}

type crashWorkload struct {
	mem      *vfs.Mem
	point    int
	versions map[string][]Props
	durable  map[string]int
	images   []crashImage
}

func (w *crashWorkload) snapshot(rng *rand.Rand) {
	w.point++
	for _, mode := range []vfs.CrashMode{vfs.CrashLoseUnsynced, vfs.CrashTorn, vfs.CrashGarbage} {
		w.images = append(w.images, crashImage{fs: w.mem.CrashClone(mode, rng), point: w.point, mode: mode,
			versions: w.versions, durable: maps.Clone(w.durable)})
	}
}

// durableFS marks a directory's meta.properties durable when the directory
// is synced after the file was renamed into place (or created in place):
// the last step of vfs.WriteFileAtomic, so the write is as good as
// returned.
type durableFS struct {
	vfs.FS
	renamed map[string]bool
	durable func(dir string)
}

func (f *durableFS) Create(name string) (vfs.File, error) {
	file, err := f.FS.Create(name)
	if err == nil && filepath.Base(name) == FileName {
		f.renamed[filepath.Dir(name)] = true
	}
	return file, err
}

func (f *durableFS) Rename(oldname, newname string) error {
	err := f.FS.Rename(oldname, newname)
	if err == nil && filepath.Base(newname) == FileName {
		f.renamed[filepath.Dir(newname)] = true
	}
	return err
}

func (f *durableFS) SyncDir(dir string) error {
	err := f.FS.SyncDir(dir)
	if err == nil && f.renamed[dir] {
		delete(f.renamed, dir)
		f.durable(dir)
	}
	return err
}

func (w *crashWorkload) run(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	faulty := vfs.NewFaulty(w.mem, func(op vfs.Op, name string) error {
		if op == vfs.OpSync || op == vfs.OpSyncDir || op == vfs.OpRename {
			w.snapshot(rng)
		}
		return nil
	})
	fsys := &durableFS{FS: faulty, renamed: map[string]bool{}, durable: func(dir string) { w.durable[dir]++ }}
	done, err := Format(fsys, crashDirs, FormatOptions{ClusterID: clusterA, NodeID: 1, Now: when})
	if err != nil || len(done) != 2 {
		t.Fatalf("Format = %v, %v", done, err)
	}
	for _, d := range crashDirs {
		p, err := Read(w.mem, d)
		if err != nil {
			t.Fatal(err)
		}
		w.versions[d] = []Props{p}
	}
	// A rewrite of one directory's file, as AssignDirectoryIDs does.
	newer := w.versions[crashDirs[0]][0]
	newer.DirectoryID = dirID2
	w.versions[crashDirs[0]] = append(w.versions[crashDirs[0]], newer)
	if err := Write(fsys, crashDirs[0], newer, when); err != nil {
		t.Fatal(err)
	}
	w.snapshot(rng) // after the last write returned
	if w.durable[crashDirs[0]] != 2 || w.durable[crashDirs[1]] != 1 {
		t.Fatalf("durable writes seen: %v", w.durable)
	}
}

func (img *crashImage) check(t *testing.T) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("point %d, mode %d: %s", img.point, img.mode, fmt.Sprintf(format, args...))
	}
	for _, d := range crashDirs {
		p, err := Read(img.fs, d)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if img.durable[d] > 0 {
				fail("%s lost after its write returned", Path(d))
			}
		case err != nil:
			fail("%s: %v", Path(d), err)
		default:
			at := slices.Index(img.versions[d], p)
			if at < 0 {
				fail("%s holds %+v, never written (written: %+v)", Path(d), p, img.versions[d])
			}
			if at+1 < img.durable[d] {
				fail("%s holds version %d after version %d was written", Path(d), at+1, img.durable[d])
			}
		}
	}
	if _, err := Check(img.fs, crashDirs, "", 1); err != nil && !errors.Is(err, ErrNotFormatted) {
		fail("Check: %v", err)
	}
}

func TestCrashAroundFormat(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3, 4} {
		w := &crashWorkload{mem: vfs.NewMem(), versions: map[string][]Props{}, durable: map[string]int{}}
		w.run(t, seed)
		if len(w.images) < 3*8 {
			t.Fatalf("only %d images: are the sync points reached?", len(w.images))
		}
		absent, whole := 0, 0
		for i := range w.images {
			w.images[i].check(t)
			if ok, _ := w.images[i].fs.Exists(Path(crashDirs[1])); ok {
				whole++
			} else {
				absent++
			}
		}
		if absent == 0 || whole == 0 {
			t.Fatalf("seed %d: %d images without the file, %d with it: the workload misses a case", seed, absent, whole)
		}
	}
}

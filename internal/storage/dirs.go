package storage

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/samsa-io/samsa/internal/model"
	"github.com/samsa-io/samsa/internal/task"
	"github.com/samsa-io/samsa/internal/vfs"
)

// Several data directories (JBOD, log.dirs with more than one path), as
// Kafka's LogManager keeps them:
//
//   - each directory holds whole partitions: `<topic>-<partition>` is a
//     partition's current replica, `<topic>-<partition>.<id>-future` the
//     copy AlterReplicaLogDirs is building in another directory (move.go),
//     and `<topic>-<partition>.<id>-delete` a replica a move replaced and
//     that is being deleted;
//   - a new replica goes to the directory with the fewest replicas, current
//     and future (Kafka's rule), unless a preferred one is online;
//   - an I/O error in a directory takes the whole directory offline: its
//     logs stop and the broker reports it (Manager.Offline). The others go
//     on. A directory that cannot be created, locked or listed at start is
//     offline from the start; with every directory offline NewManager fails.

// Names of the replicas a move leaves, Kafka's suffixes.
const (
	futureSuffix = "-future"
	deleteSuffix = "-delete"
)

// dirKind tells a current replica's directory from a move's.
type dirKind int

const (
	kindCurrent dirKind = iota
	kindFuture
	kindDelete
)

// parseReplicaDir sorts a data directory's entry: a partition's current
// replica, a move's future or deleted replica, or nothing of ours.
func parseReplicaDir(name string) (model.TopicPartition, dirKind, bool) {
	kind := kindCurrent
	base := name
	for k, suffix := range map[dirKind]string{kindFuture: futureSuffix, kindDelete: deleteSuffix} {
		if s, ok := strings.CutSuffix(name, suffix); ok {
			i := strings.LastIndexByte(s, '.')
			if i <= 0 {
				return model.TopicPartition{}, 0, false
			}
			kind, base = k, s[:i]
		}
	}
	tp, err := model.ParseTopicPartition(base)
	return tp, kind, err == nil
}

// movedName is a future or deleted replica's directory name: the
// partition's, a unique ID, and the suffix (Kafka's names).
func movedName(tp model.TopicPartition, suffix string) string {
	var id [16]byte
	_, _ = rand.Read(id[:])
	return tp.String() + "." + hex.EncodeToString(id[:]) + suffix
}

// logDir is one of the Manager's data directories.
type logDir struct {
	path string
	lock io.Closer // the directory's lockFile; nil once released or offline from the start
	// offline is why the directory is offline; nil while it is online.
	// Guarded by Manager.dirMu.
	offline error
}

// DirState is a data directory as the Manager sees it.
type DirState struct {
	Path string
	// Offline is why the directory is offline (an I/O error); nil while
	// it serves.
	Offline error
}

// dirState guards the directories' online state apart from Manager.mu:
// a log reports an I/O error while holding its own lock, and the Manager
// holds Manager.mu around Open, whose recovery can fail a log.
type dirState struct {
	mu sync.Mutex
	// offlineChanged is notified when a directory goes offline.
	offlineChanged task.Broadcast
}

// openDirs creates, locks and lists each data directory. One that fails
// is offline; a directory another process has locked is an error (a
// second broker on the same disk), as is every directory offline.
func openDirs(fsys vfs.FS, paths []string) ([]*logDir, error) {
	if len(paths) == 0 {
		return nil, errors.New("storage: no log directory")
	}
	dirs := make([]*logDir, len(paths))
	online := 0
	for i, p := range paths {
		d := &logDir{path: p}
		dirs[i] = d
		if err := vfs.MkdirAllDurable(fsys, p); err != nil {
			d.offline = fmt.Errorf("storage: create %s: %w", p, err)
			continue
		}
		lock, err := fsys.Lock(filepath.Join(p, lockFile))
		if errors.Is(err, vfs.ErrLocked) {
			closeDirs(dirs)
			return nil, &dirLockedError{dir: p, err: err}
		}
		if err != nil {
			d.offline = fmt.Errorf("storage: lock %s: %w", p, err)
			continue
		}
		d.lock = lock
		if _, err := fsys.ReadDir(p); err != nil {
			d.offline = fmt.Errorf("storage: list %s: %w", p, err)
			continue
		}
		online++
	}
	if online == 0 {
		errs := make([]error, len(dirs))
		for i, d := range dirs {
			errs[i] = d.offline
		}
		closeDirs(dirs)
		return nil, fmt.Errorf("storage: every log directory is offline: %w", errors.Join(errs...))
	}
	return dirs, nil
}

func closeDirs(dirs []*logDir) error {
	var err error
	for _, d := range dirs {
		if d != nil && d.lock != nil {
			err = errors.Join(err, d.lock.Close())
			d.lock = nil
		}
	}
	return err
}

// replicaDirs is what the data directories hold, found at start and kept
// up to date as replicas are created, moved and deleted: for each
// partition the directory of its current replica and of its future one.
// Guarded by Manager.mu.
type replicaDirs struct {
	current map[model.TopicPartition]int
	future  map[model.TopicPartition]futureDir
}

type futureDir struct {
	dir  int
	name string // the directory's entry, <tp>.<id>-future
}

// scanDirs lists the online directories and settles what an interrupted
// move left (move.go, "Crash safety"): a deleted replica whose future one
// was not renamed yet gives way to it; every deleted replica is removed; a
// future replica whose current one is nowhere, with every directory
// online, is removed. A partition whose current replica is in two
// directories was copied by hand: Kafka refuses to start, and so do we.
func scanDirs(fsys vfs.FS, dirs []*logDir) (replicaDirs, error) {
	rd := replicaDirs{current: map[model.TopicPartition]int{}, future: map[model.TopicPartition]futureDir{}}
	type entry struct {
		dir  int
		name string
	}
	deleted := map[model.TopicPartition][]entry{}
	futures := map[model.TopicPartition][]entry{}
	allOnline := true
	for i, d := range dirs {
		if d.offline != nil {
			allOnline = false
			continue
		}
		names, err := fsys.ReadDir(d.path)
		if err != nil {
			d.offline = fmt.Errorf("storage: list %s: %w", d.path, err)
			allOnline = false
			continue
		}
		for _, n := range names {
			tp, kind, ok := parseReplicaDir(n)
			if !ok {
				continue
			}
			switch kind {
			case kindCurrent:
				if j, dup := rd.current[tp]; dup {
					return rd, fmt.Errorf("storage: duplicate log directories for %s are found in both %s and %s: "+
						"a replica is in one data directory only; delete the one that is not current (the one on the disk that failed recently, if any)",
						tp, filepath.Join(dirs[j].path, n), filepath.Join(d.path, n))
				}
				rd.current[tp] = i
			case kindFuture:
				futures[tp] = append(futures[tp], entry{i, n})
			case kindDelete:
				deleted[tp] = append(deleted[tp], entry{i, n})
			}
		}
	}
	for tp, fs := range futures {
		_, hasCurrent := rd.current[tp]
		switch {
		case !hasCurrent && len(deleted[tp]) > 0 && len(fs) == 1:
			// The move renamed its old replica away and crashed before
			// renaming the future one, which was complete and synced.
			f := fs[0]
			if err := renameDurably(fsys, dirs[f.dir].path, f.name, tp.String()); err != nil {
				return rd, err
			}
			rd.current[tp] = f.dir
		case hasCurrent && len(fs) == 1:
			rd.future[tp] = futureDir{dir: fs[0].dir, name: fs[0].name}
		case !hasCurrent && !allOnline:
			// The current replica may be on the offline directory: the
			// future one is left alone, never used.
		default:
			for _, f := range fs {
				if err := removeDurably(fsys, dirs[f.dir].path, f.name); err != nil {
					return rd, err
				}
			}
		}
	}
	for _, es := range deleted {
		for _, e := range es {
			if err := removeDurably(fsys, dirs[e.dir].path, e.name); err != nil {
				return rd, err
			}
		}
	}
	return rd, nil
}

// renameDurably renames an entry of dir and syncs dir.
func renameDurably(fsys vfs.FS, dir, from, to string) error {
	if err := fsys.Rename(filepath.Join(dir, from), filepath.Join(dir, to)); err != nil {
		return fmt.Errorf("storage: rename %s to %s in %s: %w", from, to, dir, err)
	}
	if err := fsys.SyncDir(dir); err != nil {
		return fmt.Errorf("storage: sync %s: %w", dir, err)
	}
	return nil
}

// removeDurably removes an entry of dir with what it holds and syncs dir.
func removeDurably(fsys vfs.FS, dir, name string) error {
	if err := fsys.RemoveAll(filepath.Join(dir, name)); err != nil {
		return fmt.Errorf("storage: remove %s: %w", filepath.Join(dir, name), err)
	}
	if err := fsys.SyncDir(dir); err != nil {
		return fmt.Errorf("storage: sync %s: %w", dir, err)
	}
	return nil
}

// IsIOError reports whether err comes from the disk (a failed system call
// on a file or directory, or a fault a test injected) rather than from
// what the files hold: such an error takes the directory offline. The
// open-files limit is the process's, not the disk's (atFileLimit).
func IsIOError(err error) bool {
	if atFileLimit(err) {
		return false
	}
	var pe *fs.PathError
	var le *os.LinkError
	var errno syscall.Errno
	return errors.As(err, &pe) || errors.As(err, &le) || errors.As(err, &errno) || errors.Is(err, vfs.ErrInjected)
}

// atFileLimit reports whether err is the process's or the system's
// open-files limit (EMFILE, ENFILE), already marked ErrTooManyOpenFiles or
// not.
func atFileLimit(err error) bool {
	return errors.Is(err, ErrTooManyOpenFiles) || errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE)
}

// fileLimitError marks err ErrTooManyOpenFiles when it is the open-files
// limit, and returns it unchanged otherwise.
func fileLimitError(err error) error {
	if !atFileLimit(err) || errors.Is(err, ErrTooManyOpenFiles) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrTooManyOpenFiles, err)
}

// markOffline takes data directory i offline after err, once: the
// broker learns it through Offline and stops the directory's replicas
// (CloseDir). Logs call it through Options.OnIOError with their lock
// held, so it touches nothing but the directory state.
func (m *Manager) markOffline(i int, err error) {
	m.state.mu.Lock()
	defer m.state.mu.Unlock()
	d := m.dirs[i]
	if d.offline != nil {
		return
	}
	d.offline = fmt.Errorf("storage: log directory %s failed: %w", d.path, err)
	m.opts.Logger.Error("log directory offline after an I/O error; its replicas stop, the other directories go on",
		"component", "storage", "dir", d.path, "err", err)
	m.state.offlineChanged.Notify()
}

// MarkOffline takes a data directory offline (for tools and tests; an
// I/O error in it does the same).
func (m *Manager) MarkOffline(path string, err error) error {
	i := m.dirIndex(path)
	if i < 0 {
		return fmt.Errorf("%w: %s", ErrLogDirNotFound, path)
	}
	m.markOffline(i, err)
	return nil
}

// OfflineChanged returns a channel closed when a data directory next goes
// offline; Dirs then tells which.
func (m *Manager) OfflineChanged() <-chan struct{} { return m.state.offlineChanged.Wait() }

// CloseDir closes the logs of an offline data directory, current and
// future, and forgets them: they are the broker's no more until it
// restarts with the directory repaired. It returns the partitions whose
// current replica was there. A log whose directory failed writes no clean
// mark (or cannot), so the next start recovers it.
func (m *Manager) CloseDir(path string) []model.TopicPartition {
	i := m.dirIndex(path)
	if i < 0 {
		return nil
	}
	m.mu.Lock()
	var lost []model.TopicPartition
	var logs []*Log
	for tp, d := range m.mu.where.current {
		if d != i {
			continue
		}
		lost = append(lost, tp)
		if l, ok := m.mu.logs[tp]; ok {
			logs = append(logs, l)
			delete(m.mu.logs, tp)
		}
	}
	for tp, f := range m.mu.where.future {
		if f.dir != i {
			continue
		}
		if l, ok := m.mu.futures[tp]; ok {
			logs = append(logs, l)
			delete(m.mu.futures, tp)
		}
		delete(m.mu.where.future, tp)
	}
	m.mu.Unlock()
	for _, l := range logs {
		_ = l.Close() // the directory failed: what Close cannot write, recovery repairs
	}
	return lost
}

// Offline reports whether the partition's current replica is in an
// offline data directory.
func (m *Manager) Offline(tp model.TopicPartition) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	i, ok := m.mu.where.current[tp]
	return ok && !m.online(i)
}

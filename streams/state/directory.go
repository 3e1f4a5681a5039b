package state

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// StateDirectory is an application's part of state.dir:
// <state.dir>/<application.id>/<task id>/<store>, as Kafka Streams lays it
// out (its RocksDB stores sit one level deeper, under rocksdb/).
type StateDirectory struct {
	path string
}

// ErrTaskLocked is returned when another instance (or another open of the
// same task in this process) holds a task directory's lock.
var ErrTaskLocked = errors.New("state: task directory is locked by another instance")

// lockFileName is the lock file in each task directory.
const lockFileName = ".lock"

// OpenStateDirectory makes <stateDir>/<applicationID>.
func OpenStateDirectory(stateDir, applicationID string) (*StateDirectory, error) {
	if err := checkPathElement("application.id", applicationID); err != nil {
		return nil, err
	}
	path := filepath.Join(stateDir, applicationID)
	if err := os.MkdirAll(path, 0o755); err != nil {
		return nil, fmt.Errorf("state: state directory: %w", err)
	}
	return &StateDirectory{path: path}, nil
}

// Path is <state.dir>/<application.id>.
func (d *StateDirectory) Path() string { return d.path }

// checkPathElement refuses names that would leave their directory.
func checkPathElement(what, name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) || strings.ContainsRune(name, 0) {
		return fmt.Errorf("state: %s %q cannot name a directory", what, name)
	}
	return nil
}

// TaskIDs lists the task directories present (the tasks this instance has
// state for, which it reports to the assignor), locked or not.
func (d *StateDirectory) TaskIDs() ([]string, error) {
	entries, err := os.ReadDir(d.path)
	if err != nil {
		return nil, fmt.Errorf("state: list tasks: %w", err)
	}
	var ids []string
	for _, e := range entries {
		if e.IsDir() {
			ids = append(ids, e.Name())
		}
	}
	return ids, nil
}

// TaskDirectory is a locked task directory: only its holder opens the
// task's stores, so two instances sharing a state.dir cannot both open a
// task (the lock is flock(2), per open file, so it also holds between two
// opens in one process, and the kernel drops it when the process dies).
type TaskDirectory struct {
	path string
	lock *os.File
}

// LockTask makes and locks the directory of taskID (Kafka's `<subtopology>_<partition>`),
// failing with ErrTaskLocked when it is held.
func (d *StateDirectory) LockTask(taskID string) (*TaskDirectory, error) {
	if err := checkPathElement("task id", taskID); err != nil {
		return nil, err
	}
	path := filepath.Join(d.path, taskID)
	if err := os.MkdirAll(path, 0o755); err != nil {
		return nil, fmt.Errorf("state: task directory: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(path, lockFileName), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("state: task lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("state: task %s: %w", taskID, ErrTaskLocked)
		}
		return nil, fmt.Errorf("state: task %s lock: %w", taskID, err)
	}
	return &TaskDirectory{path: path, lock: f}, nil
}

// Path is the task's directory.
func (t *TaskDirectory) Path() string { return t.path }

// StorePath is where a store of the task keeps its files.
func (t *TaskDirectory) StorePath(store string) (string, error) {
	if err := checkPathElement("store name", store); err != nil {
		return "", err
	}
	return filepath.Join(t.path, store), nil
}

// CheckpointPath is the task's .checkpoint file.
func (t *TaskDirectory) CheckpointPath() string { return filepath.Join(t.path, CheckpointFileName) }

// Wipe deletes the task's state (stores and checkpoint) but keeps the lock:
// the runtime restores from scratch afterwards. Close the stores first.
func (t *TaskDirectory) Wipe() error {
	entries, err := os.ReadDir(t.path)
	if err != nil {
		return fmt.Errorf("state: wipe %s: %w", t.path, err)
	}
	for _, e := range entries {
		if e.Name() == lockFileName {
			continue
		}
		if err := os.RemoveAll(filepath.Join(t.path, e.Name())); err != nil {
			return fmt.Errorf("state: wipe %s: %w", t.path, err)
		}
	}
	return syncDir(t.path)
}

// Unlock releases the task for another instance.
func (t *TaskDirectory) Unlock() error {
	if t.lock == nil {
		return nil
	}
	err := t.lock.Close() // closing the last descriptor drops the flock
	t.lock = nil
	return err
}

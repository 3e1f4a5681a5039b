package storage

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/samsa-io/samsa/internal/vfs"
)

// cleanerCheckpointFile records where a compacted log's dirty section
// starts (Kafka keeps the same offset per partition in each log
// directory's cleaner-offset-checkpoint). Below it the cleaner has left one
// record per key; from it on is what was appended since. It is written
// after a pass has swapped everything it cleaned, so it is never ahead of
// the files: a crash before the write only makes the next pass map more.
const cleanerCheckpointFile = "cleaner.checkpoint"

const cleanerCheckpointHeader = "samsa-cleaner-checkpoint 1"

func writeCleanerCheckpoint(fsys vfs.FS, dir string, firstDirty int64) error {
	return vfs.WriteFileAtomic(fsys, filepath.Join(dir, cleanerCheckpointFile),
		fmt.Appendf(nil, "%s\nfirst-dirty-offset %d\n", cleanerCheckpointHeader, firstDirty))
}

// readCleanerCheckpoint returns the first dirty offset, or 0 when there is
// no checkpoint or it cannot be parsed: then the whole log is dirty, which
// costs a larger map on the next pass and is otherwise harmless.
func readCleanerCheckpoint(fsys vfs.FS, dir string) (int64, error) {
	b, err := vfs.ReadFile(fsys, filepath.Join(dir, cleanerCheckpointFile))
	if errors.Is(err, vfs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 || lines[0] != cleanerCheckpointHeader {
		return 0, nil
	}
	v, ok := strings.CutPrefix(lines[1], "first-dirty-offset ")
	n, perr := strconv.ParseInt(v, 10, 64)
	if !ok || perr != nil || n < 0 {
		return 0, nil
	}
	return n, nil
}

// setFirstDirty moves the first dirty offset up to off after a pass and
// checkpoints it, and remembers the earliest delete horizon the pass left.
// A truncation that raced the pass wins. The file is
// written under the lock, once per pass, so that it can never overwrite the
// lower offset a truncation wrote (lowerFirstDirtyLocked).
func (l *Log) setFirstDirty(p *cleanPlan, off, nextHorizonMs int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mu.truncations != p.truncations || l.mu.closed || l.mu.failed != nil {
		return nil
	}
	l.mu.firstDirty = max(l.mu.firstDirty, min(off, l.mu.nextOffset))
	l.mu.nextHorizonMs = nextHorizonMs
	return writeCleanerCheckpoint(l.opts.FS, l.dir, l.mu.firstDirty)
}

// lowerFirstDirtyLocked brings the first dirty offset down to a truncated
// log end, durably: new records appended there must not pass for cleaned
// ones, or a tombstone among them could be removed while an older value of
// its key survives below.
func (l *Log) lowerFirstDirtyLocked() error {
	if l.mu.firstDirty <= l.mu.nextOffset {
		return nil
	}
	l.mu.firstDirty = l.mu.nextOffset
	return writeCleanerCheckpoint(l.opts.FS, l.dir, l.mu.firstDirty)
}

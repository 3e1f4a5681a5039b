package storage

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/samsa-io/samsa/internal/vfs"
)

// checkpointFile holds, per partition, what Kafka keeps in per-directory
// checkpoint files: the recovery point, the log start offset, and whether
// the log was closed cleanly. A clean close also records the log end offset
// and the active segment's size, which open checks against the files before
// trusting them without a scan.
const checkpointFile = "log.checkpoint"

type checkpoint struct {
	clean          bool
	recoveryPoint  int64
	logStartOffset int64
	nextOffset     int64
	activeSize     int64
}

func (c checkpoint) encode() []byte {
	clean := 0
	if c.clean {
		clean = 1
	}
	return fmt.Appendf(nil, "samsa-log-checkpoint 1\nclean %d\nrecovery-point %d\nlog-start-offset %d\nnext-offset %d\nactive-size %d\n",
		clean, c.recoveryPoint, c.logStartOffset, c.nextOffset, c.activeSize)
}

func decodeCheckpoint(b []byte) (checkpoint, error) {
	var c checkpoint
	fields := map[string]*int64{"recovery-point": &c.recoveryPoint, "log-start-offset": &c.logStartOffset, "next-offset": &c.nextOffset, "active-size": &c.activeSize}
	var clean int64
	fields["clean"] = &clean
	sc := bufio.NewScanner(bytes.NewReader(b))
	if !sc.Scan() || sc.Text() != "samsa-log-checkpoint 1" {
		return c, errors.New("bad header")
	}
	seen := 0
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), " ")
		p := fields[k]
		if !ok || p == nil {
			return c, fmt.Errorf("bad line %q", sc.Text())
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return c, fmt.Errorf("bad value in %q", sc.Text())
		}
		*p = n
		seen++
	}
	if seen != len(fields) {
		return c, errors.New("missing fields")
	}
	c.clean = clean == 1
	return c, nil
}

func writeCheckpoint(fsys vfs.FS, dir string, c checkpoint) error {
	return vfs.WriteFileAtomic(fsys, filepath.Join(dir, checkpointFile), c.encode())
}

// readCheckpoint returns the checkpoint, or ok=false when there is none or
// it cannot be parsed; then the whole log is recovered.
func readCheckpoint(fsys vfs.FS, dir string) (c checkpoint, ok bool, err error) {
	b, err := vfs.ReadFile(fsys, filepath.Join(dir, checkpointFile))
	if errors.Is(err, vfs.ErrNotExist) {
		return c, false, nil
	}
	if err != nil {
		return c, false, err
	}
	c, perr := decodeCheckpoint(b)
	return c, perr == nil, nil
}

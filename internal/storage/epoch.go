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

// epochFile is Kafka's leader-epoch-checkpoint, in Kafka's text format:
// a version line (0), a count line, then "epoch startOffset" per line.
const epochFile = "leader-epoch-checkpoint"

// EpochEntry says that leader epoch Epoch wrote its first batch at StartOffset.
type EpochEntry struct {
	Epoch       int32
	StartOffset int64
}

// epochCache is the leader-epoch lineage of a log. Every change rewrites
// the checkpoint file atomically; changes are rare (leader changes,
// truncation, start-offset moves). Guarded by the Log's mu.
type epochCache struct {
	fsys    vfs.FS
	path    string
	entries []EpochEntry
}

func loadEpochCache(fsys vfs.FS, dir string) (*epochCache, error) {
	c := &epochCache{fsys: fsys, path: filepath.Join(dir, epochFile)}
	b, err := vfs.ReadFile(fsys, c.path)
	if errors.Is(err, vfs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return nil, err
	}
	if c.entries, err = decodeEpochs(b); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrCorruptLog, c.path, err)
	}
	return c, nil
}

func decodeEpochs(b []byte) ([]EpochEntry, error) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	if !sc.Scan() || strings.TrimSpace(sc.Text()) != "0" {
		return nil, errors.New("unknown version")
	}
	if !sc.Scan() {
		return nil, errors.New("missing count")
	}
	n, err := strconv.Atoi(strings.TrimSpace(sc.Text()))
	if err != nil || n < 0 {
		return nil, errors.New("bad count")
	}
	var out []EpochEntry
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 2 {
			return nil, fmt.Errorf("bad line %q", sc.Text())
		}
		e, err1 := strconv.ParseInt(f[0], 10, 32)
		o, err2 := strconv.ParseInt(f[1], 10, 64)
		if err1 != nil || err2 != nil || e < 0 || o < 0 {
			return nil, fmt.Errorf("bad line %q", sc.Text())
		}
		if k := len(out); k > 0 && (int32(e) <= out[k-1].Epoch || o < out[k-1].StartOffset) {
			return nil, fmt.Errorf("entries not increasing at %q", sc.Text())
		}
		out = append(out, EpochEntry{int32(e), o})
	}
	if len(out) != n {
		return nil, fmt.Errorf("count %d, %d entries", n, len(out))
	}
	return out, nil
}

func (c *epochCache) save() error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "0\n%d\n", len(c.entries))
	for _, e := range c.entries {
		fmt.Fprintf(&b, "%d %d\n", e.Epoch, e.StartOffset)
	}
	return vfs.WriteFileAtomic(c.fsys, c.path, b.Bytes())
}

func (c *epochCache) latest() (EpochEntry, bool) {
	if len(c.entries) == 0 {
		return EpochEntry{Epoch: -1, StartOffset: -1}, false
	}
	return c.entries[len(c.entries)-1], true
}

// assign records that epoch starts at offset. Entries that start at or
// after dataEnd, the log end before the batch at offset, hold no batch: a
// leader began its epoch there and wrote nothing before it lost the
// leadership. As in Kafka they give way to the epoch of the batch written
// there. Then an epoch newer than the latest left starts an entry; the
// latest or an older one adds nothing. At the open-files limit the file
// and the entries stay as they were (ErrTooManyOpenFiles): the append
// that asked fails without writing, and its retry assigns again.
func (c *epochCache) assign(epoch int32, offset, dataEnd int64) error {
	if epoch < 0 {
		return nil
	}
	n := len(c.entries)
	for n > 0 && c.entries[n-1].StartOffset >= dataEnd && c.entries[n-1].Epoch != epoch {
		n--
	}
	kept := c.entries[:n:n] // an append copies: c.entries stays whole
	switch {
	case n == 0 || kept[n-1].Epoch < epoch:
		kept = append(kept, EpochEntry{epoch, offset})
	case n == len(c.entries):
		return nil
	}
	prev := c.entries
	c.entries = kept
	if err := c.save(); err != nil {
		if atFileLimit(err) {
			c.entries = prev
			return fileLimitError(err)
		}
		return err
	}
	return nil
}

// dataEpoch is the epoch of the newest entry that starts below end (the
// log end): the newest epoch the log holds batches of; -1 if none.
func (c *epochCache) dataEpoch(end int64) int32 {
	for i := len(c.entries) - 1; i >= 0; i-- {
		if c.entries[i].StartOffset < end {
			return c.entries[i].Epoch
		}
	}
	return -1
}

// endOffsetFor answers OffsetForLeaderEpoch: the largest epoch <= epoch
// that the log knows, and the offset where the next epoch starts (the log
// end offset for the latest epoch). An epoch older than every one the log
// knows (its batches are gone, or it never wrote here) gets itself and the
// first epoch's start, as Kafka's LeaderEpochFileCache answers: a follower
// whose last epoch that is truncates there, where (-1, -1) would send it
// back to its high watermark, which may lie past everything the leader
// has. No epochs at all, or epoch -1: (-1, -1).
func (c *epochCache) endOffsetFor(epoch int32, logEnd int64) (int32, int64) {
	for i := len(c.entries) - 1; i >= 0; i-- {
		if c.entries[i].Epoch <= epoch {
			if i == len(c.entries)-1 {
				return c.entries[i].Epoch, logEnd
			}
			return c.entries[i].Epoch, c.entries[i+1].StartOffset
		}
	}
	if len(c.entries) > 0 && epoch >= 0 {
		return epoch, c.entries[0].StartOffset
	}
	return -1, -1
}

// truncateFromEnd drops epochs that start at or after off.
func (c *epochCache) truncateFromEnd(off int64) error {
	n := len(c.entries)
	for n > 0 && c.entries[n-1].StartOffset >= off {
		n--
	}
	if n == len(c.entries) {
		return nil
	}
	c.entries = c.entries[:n]
	return c.save()
}

// clear drops every entry (Kafka's clearAndFlush).
func (c *epochCache) clear() error {
	if len(c.entries) == 0 {
		return nil
	}
	c.entries = nil
	return c.save()
}

// truncateFromStart drops epochs wholly below off; the one that covers off
// now starts there.
func (c *epochCache) truncateFromStart(off int64) error {
	i := 0
	for i+1 < len(c.entries) && c.entries[i+1].StartOffset <= off {
		i++
	}
	if len(c.entries) == 0 || (i == 0 && c.entries[0].StartOffset >= off) {
		return nil
	}
	c.entries = append([]EpochEntry(nil), c.entries[i:]...)
	c.entries[0].StartOffset = max(c.entries[0].StartOffset, off)
	return c.save()
}

package state

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// TopicPartition names a changelog (or source) partition in a checkpoint.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// OffsetUnknown is Kafka's OFFSET_UNKNOWN (-4): a store whose state is
// there but whose offset is not known, as opposed to no entry at all.
const OffsetUnknown = -4

// ErrCorruptCheckpoint marks a checkpoint file that is not in Kafka's
// format; the runtime treats the task's state as dirty (wipes and restores).
var ErrCorruptCheckpoint = errors.New("state: corrupt checkpoint file")

// CheckpointFileName is Kafka Streams' name for a task's checkpoint file.
const CheckpointFileName = ".checkpoint"

const checkpointVersion = 0

func validCheckpointOffset(o int64) bool { return o >= 0 || o == OffsetUnknown }

// WriteCheckpoint writes offsets to path in Kafka's OffsetCheckpoint format:
//
//	0
//	<count>
//	<topic> <partition> <offset>
//	...
//
// atomically (a synced temporary file renamed over path, the directory
// synced), so a crash leaves the old file or the new one. No offsets
// deletes the file, as Kafka's. Entries are sorted for a stable file.
func WriteCheckpoint(path string, offsets map[TopicPartition]int64) error {
	if len(offsets) == 0 {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("state: delete checkpoint: %w", err)
		}
		return nil
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "%d\n%d\n", checkpointVersion, len(offsets))
	tps := make([]TopicPartition, 0, len(offsets))
	for tp, o := range offsets {
		if !validCheckpointOffset(o) {
			return fmt.Errorf("state: checkpoint offset %d for %s-%d is negative", o, tp.Topic, tp.Partition)
		}
		if tp.Topic == "" || strings.ContainsAny(tp.Topic, " \t\r\n") {
			return fmt.Errorf("state: checkpoint topic %q is not a topic name", tp.Topic)
		}
		tps = append(tps, tp)
	}
	slices.SortFunc(tps, func(a, b TopicPartition) int {
		return cmp.Or(strings.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	for _, tp := range tps {
		fmt.Fprintf(&b, "%s %d %d\n", tp.Topic, tp.Partition, offsets[tp])
	}
	return writeFileAtomic(path, b.Bytes())
}

func writeFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("state: write checkpoint: %w", err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err == nil {
		err = syncDir(filepath.Dir(path))
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("state: write checkpoint %s: %w", path, err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}

var whitespace = regexp.MustCompile(`\s+`)

// ReadCheckpoint reads a checkpoint file as Kafka's OffsetCheckpoint does:
// no file is no offsets; an offset that is neither valid nor OffsetUnknown
// is skipped (and not counted); anything else out of format is an error
// marked ErrCorruptCheckpoint.
func ReadCheckpoint(path string) (map[TopicPartition]int64, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[TopicPartition]int64{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("state: read checkpoint: %w", err)
	}
	offsets, err := parseCheckpoint(data)
	if err != nil {
		return nil, fmt.Errorf("%w %s: %w", ErrCorruptCheckpoint, path, err)
	}
	return offsets, nil
}

func parseCheckpoint(data []byte) (map[TopicPartition]int64, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	readInt := func(what string) (int, error) {
		if !sc.Scan() {
			return 0, fmt.Errorf("file ended before the %s line", what)
		}
		n, err := strconv.Atoi(sc.Text())
		if err != nil {
			return 0, fmt.Errorf("%s line %q", what, sc.Text())
		}
		return n, nil
	}
	version, err := readInt("version")
	if err != nil {
		return nil, err
	}
	if version != checkpointVersion {
		return nil, fmt.Errorf("unknown offset checkpoint version: %d", version)
	}
	expected, err := readInt("count")
	if err != nil {
		return nil, err
	}
	offsets := map[TopicPartition]int64{}
	for sc.Scan() {
		pieces := whitespace.Split(sc.Text(), -1)
		if len(pieces) != 3 {
			return nil, fmt.Errorf("malformed line %q", sc.Text())
		}
		partition, perr := strconv.ParseInt(pieces[1], 10, 32)
		offset, oerr := strconv.ParseInt(pieces[2], 10, 64)
		if perr != nil || oerr != nil {
			return nil, fmt.Errorf("malformed line %q", sc.Text())
		}
		if !validCheckpointOffset(offset) {
			expected--
			continue
		}
		offsets[TopicPartition{Topic: pieces[0], Partition: int32(partition)}] = offset
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(offsets) != expected {
		return nil, fmt.Errorf("expected %d entries but found %d", expected, len(offsets))
	}
	return offsets, nil
}

package file

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"time"

	"github.com/samsa-io/samsa/connect"
	"github.com/samsa-io/samsa/internal/clock"
)

// The configs, with Kafka's names.
const (
	FileConfig       = "file"
	TopicConfig      = "topic"
	BatchSizeConfig  = "batch.size"
	DefaultBatchSize = 2000
)

// The source partition and offset keys, as Kafka's FileStreamSourceTask
// writes them, so offsets stored by Kafka Connect read back here.
const (
	FilenameField = "filename"
	PositionField = "position"
)

// idleWait is how long a poll that found nothing new waits before
// returning, as Kafka's task does (it sleeps a second).
const idleWait = time.Second

// readChunk is how much one read takes from the file.
const readChunk = 64 << 10

func sourceConfigDef() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: FileConfig, Type: connect.TypeString, Default: nil, Importance: connect.High,
			Documentation: "Source filename. If not specified, the standard input will be used"}).
		Define(connect.ConfigKey{Name: TopicConfig, Type: connect.TypeString, Default: connect.NoDefault,
			Validator: connect.NonEmptyString{}, Importance: connect.High,
			Documentation: "The topic to publish data to"}).
		// Kafka declares no validator and treats anything below 1 as 1;
		// Samsa refuses such a value rather than run with another.
		Define(connect.ConfigKey{Name: BatchSizeConfig, Type: connect.TypeInt, Default: int32(DefaultBatchSize),
			Validator: connect.AtLeast(1), Importance: connect.Low,
			Documentation: "The maximum number of records the source task can read from the file each time it is polled"})
}

// SourceConnector is FileStreamSourceConnector: one task, since a file
// (or standard input) is one stream.
type SourceConnector struct {
	props map[string]string
}

// NewSourceConnector makes a FileStreamSource connector.
func NewSourceConnector() *SourceConnector { return &SourceConnector{} }

var (
	_ connect.SourceConnector            = (*SourceConnector)(nil)
	_ connect.ExactlyOnceSourceConnector = (*SourceConnector)(nil)
	_ connect.SourceOffsetAlterer        = (*SourceConnector)(nil)
	_ connect.SourceTask                 = (*SourceTask)(nil)
)

func (c *SourceConnector) Version() string            { return Plugins()[0].Version }
func (c *SourceConnector) Config() *connect.ConfigDef { return sourceConfigDef() }

// Start checks the config and keeps it for the task.
func (c *SourceConnector) Start(ctx connect.ConnectorContext, props map[string]string) error {
	cfg, err := sourceConfigDef().Parse(props)
	if err != nil {
		return err
	}
	c.props = maps.Clone(props)
	name := cfg.String(FileConfig)
	if name == "" {
		name = "standard input"
	}
	ctx.Logger().Info("Starting file source connector reading from " + name)
	return nil
}

// TaskConfigs is one task whatever maxTasks says: only one reader of a
// stream makes sense.
func (c *SourceConnector) TaskConfigs(maxTasks int) ([]map[string]string, error) {
	return []map[string]string{maps.Clone(c.props)}, nil
}

func (c *SourceConnector) Stop() error { return nil }

// NewTask makes a FileStreamSourceTask.
func (c *SourceConnector) NewTask() connect.SourceTask { return NewSourceTask() }

// ExactlyOnceSupport is SUPPORTED for a file, as long as it is only
// appended to, and UNSUPPORTED for standard input, whose position is not
// tracked (Kafka's answer).
func (c *SourceConnector) ExactlyOnceSupport(props map[string]string) connect.ExactlyOnceSupport {
	cfg, err := sourceConfigDef().Parse(props)
	if err != nil || cfg.String(FileConfig) == "" {
		return connect.ExactlyOnceUnsupported
	}
	return connect.ExactlyOnceSupported
}

// AlterOffsets checks an offsets change as Kafka's connector does: only for
// a file, and each offset either null or a non-negative Long "position"
// for a partition with a "filename". Whether the position suits the file
// is left to the task when it starts, as in Kafka.
func (c *SourceConnector) AlterOffsets(props map[string]string, offsets []connect.SourcePartitionOffset) (bool, error) {
	cfg, err := sourceConfigDef().Parse(props)
	if err != nil {
		return false, err
	}
	if cfg.String(FileConfig) == "" {
		return false, fmt.Errorf("Offsets cannot be modified if the '%s' configuration is unspecified. "+
			"This is because stdin is used for input and offsets are not tracked.", FileConfig)
	}
	for _, po := range offsets {
		if err := checkAlteredOffset(po); err != nil {
			return false, err
		}
	}
	return true, nil
}

// checkAlteredOffset is one entry's check, in Kafka's order: a tombstone
// passes whatever its partition (so that garbage can be cleaned up), then
// the offset, then the partition.
func checkAlteredOffset(po connect.SourcePartitionOffset) error {
	if po.Offset == nil {
		return nil
	}
	raw, ok := po.Offset[PositionField]
	if !ok {
		return fmt.Errorf("Offset objects should either be null or contain the key '%s'", PositionField)
	}
	pos, ok := asLong(raw)
	if !ok {
		return fmt.Errorf("The value for the '%s' key in the offset is expected to be a Long value", PositionField)
	}
	if pos < 0 {
		return fmt.Errorf("The value for the '%s' key in the offset should be a non-negative value", PositionField)
	}
	if po.Partition == nil {
		return errors.New("Partition objects cannot be null")
	}
	if _, ok := po.Partition[FilenameField]; !ok {
		return fmt.Errorf("Partition objects should contain the key '%s'", FilenameField)
	}
	return nil
}

// asLong accepts Go's signed integers, which is what a Long is after the
// runtime reads offsets (JSON integers become int64); a float is not one,
// as a Double is not a Long in Kafka.
func asLong(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case int:
		return int64(x), true
	case int32:
		return int64(x), true
	case int16:
		return int64(x), true
	case int8:
		return int64(x), true
	}
	return 0, false
}

// SourceTask is FileStreamSourceTask: it reads lines ending in \n, \r\n or
// \r and makes each one a record with a STRING value; the offset of a
// record is the byte position just after its line. A last line without its
// end waits for it, as in Kafka.
type SourceTask struct {
	log       *slog.Logger
	tctx      connect.SourceTaskContext
	clock     clock.Clock
	idle      time.Duration
	stdin     func() <-chan []byte
	topic     string
	batchSize int
	// filename is the configured file; partition is the source partition
	// Kafka writes: {"filename": the config's value}, null when unset.
	filename  string
	partition map[string]any

	in       input
	missing  bool   // the file was missing at the last poll (logged once)
	buf      []byte // read, not yet made records: buf[start:]
	start    int
	scanned  int   // bytes after start known to hold no line end
	position int64 // byte position of buf[start] in the file
	tracked  bool  // false for standard input: no position, as in Kafka
}

// NewSourceTask makes a FileStreamSourceTask.
func NewSourceTask() *SourceTask {
	return &SourceTask{clock: clock.Real, idle: idleWait, stdin: stdinChunks}
}

// input is where lines come from: next returns what is there now, nil when
// nothing is (never blocking), io.EOF at the end of standard input.
type input interface {
	next() ([]byte, error)
	close() error
}

// Start reads the config; the file is opened by the first poll, so a file
// that does not exist yet is waited for.
func (t *SourceTask) Start(ctx connect.SourceTaskContext, props map[string]string) error {
	cfg, err := sourceConfigDef().Parse(props)
	if err != nil {
		return err
	}
	t.tctx, t.log = ctx, ctx.Logger()
	t.topic = cfg.String(TopicConfig)
	t.batchSize = int(cfg.Int(BatchSizeConfig))
	t.filename = cfg.String(FileConfig)
	t.partition = map[string]any{FilenameField: cfg.Get(FileConfig)}
	if t.filename == "" {
		t.in = &stdinInput{chunks: t.stdin()}
	}
	return nil
}

// Poll returns up to batch.size lines; with nothing new it waits a second
// (less when ctx ends) and returns none.
func (t *SourceTask) Poll(ctx context.Context) ([]connect.SourceRecord, error) {
	if t.in == nil {
		opened, err := t.open()
		if err != nil {
			return nil, err
		}
		if !opened {
			t.wait(ctx)
			return nil, nil
		}
	}
	records, readAny, err := t.readLines()
	if err != nil {
		return nil, err
	}
	if len(records) == 0 && !readAny {
		t.wait(ctx)
	}
	return records, nil
}

func (t *SourceTask) wait(ctx context.Context) {
	timer := time.NewTimer(t.idle)
	defer timer.Stop()
	select {
	case <-ctx.Done():
	case <-timer.C:
	}
}

// open opens the file and moves to the stored position. A missing file is
// waited for (false, nil). A stored position past the end (the file was
// truncated or replaced by a shorter one) is kept: reading resumes when
// the file grows past it, as Kafka skips to the stored position whatever
// the file now holds.
func (t *SourceTask) open() (bool, error) {
	f, err := os.Open(t.filename)
	if errors.Is(err, fs.ErrNotExist) {
		if !t.missing {
			t.log.Warn("Couldn't find file for FileStreamSourceTask, sleeping to wait for it to be created", "file", t.filename)
			t.missing = true
		}
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("file: open %s: %w", t.filename, err)
	}
	pos, err := t.storedPosition()
	if err == nil && pos > 0 {
		err = seek(f, pos, t.log)
	}
	if err != nil {
		f.Close()
		return false, err
	}
	t.missing = false
	t.in, t.tracked, t.position = &fileInput{f: f}, true, pos
	t.log.Debug("Opened file for reading", "file", t.filename, "position", pos)
	return true, nil
}

func (t *SourceTask) storedPosition() (int64, error) {
	offset, err := t.tctx.Offset(t.partition)
	if err != nil {
		return 0, fmt.Errorf("file: read the stored offset of %s: %w", t.filename, err)
	}
	raw := offset[PositionField]
	if raw == nil {
		return 0, nil
	}
	pos, ok := asLong(raw)
	if !ok {
		return 0, fmt.Errorf("Offset position is the incorrect type: %T", raw)
	}
	if pos < 0 {
		return 0, fmt.Errorf("file: the stored offset position %d of %s is negative", pos, t.filename)
	}
	return pos, nil
}

func seek(f *os.File, pos int64, log *slog.Logger) error {
	if _, err := f.Seek(pos, io.SeekStart); err != nil {
		return fmt.Errorf("file: seek %s to the stored position %d: %w", f.Name(), pos, err)
	}
	if st, err := f.Stat(); err == nil && st.Size() < pos {
		log.Warn("The stored position is past the end of the file (truncated or replaced?): reading resumes when it grows past it",
			"file", f.Name(), "position", pos, "size", st.Size())
	}
	return nil
}

// readLines makes records of the complete lines in the buffer, reading more
// while there is more and the batch is not full. readAny says whether
// anything new was read.
func (t *SourceTask) readLines() (records []connect.SourceRecord, readAny bool, err error) {
	for {
		for {
			line, ok := t.extractLine()
			if !ok {
				break
			}
			records = append(records, t.record(line))
			if len(records) >= t.batchSize {
				return records, readAny, nil
			}
		}
		chunk, err := t.in.next()
		if errors.Is(err, io.EOF) || (err == nil && len(chunk) == 0) {
			return records, readAny, nil
		}
		if err != nil {
			return nil, readAny, fmt.Errorf("file: read %s: %w", t.logName(), err)
		}
		readAny = true
		t.compact()
		t.buf = append(t.buf, chunk...)
	}
}

// compact drops the bytes already made records.
func (t *SourceTask) compact() {
	if t.start == 0 {
		return
	}
	n := copy(t.buf, t.buf[t.start:])
	t.buf, t.start = t.buf[:n], 0
}

// extractLine takes the next complete line. A \r at the very end is not
// yet a line end: the next byte may be the \n of a \r\n.
func (t *SourceTask) extractLine() (string, bool) {
	data := t.buf[t.start:]
	end, next := -1, 0
	for i := t.scanned; i < len(data); i++ {
		if data[i] == '\n' {
			end, next = i, i+1
			break
		}
		if data[i] == '\r' {
			if i+1 >= len(data) {
				t.scanned = i
				return "", false
			}
			end, next = i, i+1
			if data[i+1] == '\n' {
				next = i + 2
			}
			break
		}
	}
	if end < 0 {
		t.scanned = len(data)
		return "", false
	}
	line := decodeUTF8(data[:end])
	t.start += next
	t.scanned = 0
	t.position += int64(next)
	return line, true
}

func (t *SourceTask) record(line string) connect.SourceRecord {
	var pos any // standard input: {"position": null}, as Kafka
	if t.tracked {
		pos = t.position
	}
	return connect.SourceRecord{
		Record: connect.Record{
			Topic:       t.topic,
			ValueSchema: connect.StringSchema,
			Value:       line,
			Timestamp:   t.clock.Now(),
		},
		SourcePartition: t.partition,
		SourceOffset:    map[string]any{PositionField: pos},
	}
}

func (t *SourceTask) logName() string {
	if t.filename == "" {
		return "stdin"
	}
	return t.filename
}

// Stop closes the file. Standard input stays open: the process has one.
func (t *SourceTask) Stop() error {
	if t.in == nil {
		return nil
	}
	if err := t.in.close(); err != nil {
		t.log.Error("Failed to close FileStreamSourceTask stream", "error", err)
	}
	return nil
}

// fileInput reads a file into a scratch buffer that the caller copies from
// before the next read.
type fileInput struct {
	f       *os.File
	scratch []byte
}

func (fi *fileInput) next() ([]byte, error) {
	if fi.scratch == nil {
		fi.scratch = make([]byte, readChunk)
	}
	n, err := fi.f.Read(fi.scratch)
	if n > 0 {
		return fi.scratch[:n], nil
	}
	if errors.Is(err, io.EOF) {
		return nil, nil // a file may grow: EOF is only "nothing now"
	}
	return nil, err
}

func (fi *fileInput) close() error { return fi.f.Close() }

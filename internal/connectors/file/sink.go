package file

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"

	"github.com/samsa-io/samsa/connect"
)

func sinkConfigDef() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: FileConfig, Type: connect.TypeString, Default: nil, Importance: connect.High,
			Documentation: "Destination filename. If not specified, the standard output will be used"})
}

// SinkConnector is FileStreamSinkConnector: every task appends to the same
// file.
type SinkConnector struct {
	props map[string]string
}

// NewSinkConnector makes a FileStreamSink connector.
func NewSinkConnector() *SinkConnector { return &SinkConnector{} }

var (
	_ connect.SinkConnector     = (*SinkConnector)(nil)
	_ connect.SinkOffsetAlterer = (*SinkConnector)(nil)
	_ connect.SinkTask          = (*SinkTask)(nil)
)

func (c *SinkConnector) Version() string            { return Plugins()[1].Version }
func (c *SinkConnector) Config() *connect.ConfigDef { return sinkConfigDef() }

func (c *SinkConnector) Start(ctx connect.ConnectorContext, props map[string]string) error {
	cfg, err := sinkConfigDef().Parse(props)
	if err != nil {
		return err
	}
	c.props = maps.Clone(props)
	name := cfg.String(FileConfig)
	if name == "" {
		name = "standard output"
	}
	ctx.Logger().Info("Starting file sink connector writing to " + name)
	return nil
}

// TaskConfigs is maxTasks copies of the config, as Kafka's: the tasks all
// append to the file.
func (c *SinkConnector) TaskConfigs(maxTasks int) ([]map[string]string, error) {
	out := make([]map[string]string, maxTasks)
	for i := range out {
		out[i] = maps.Clone(c.props)
	}
	return out, nil
}

func (c *SinkConnector) Stop() error { return nil }

func (c *SinkConnector) NewTask() connect.SinkTask { return NewSinkTask() }

// AlterOffsets accepts any change: the sink keeps no offsets of its own.
func (c *SinkConnector) AlterOffsets(props map[string]string, offsets map[connect.TopicPartition]*int64) (bool, error) {
	return true, nil
}

// SinkTask is FileStreamSinkTask: each record's value as a line.
type SinkTask struct {
	log    *slog.Logger
	stdout io.Writer
	out    io.Writer
	file   *os.File // nil when writing to standard output
	name   string
	lines  bytes.Buffer
}

// NewSinkTask makes a FileStreamSinkTask.
func NewSinkTask() *SinkTask { return &SinkTask{stdout: os.Stdout} }

// Start opens the file to append to, creating it if needed.
func (t *SinkTask) Start(ctx connect.SinkTaskContext, props map[string]string) error {
	cfg, err := sinkConfigDef().Parse(props)
	if err != nil {
		return err
	}
	t.log = ctx.Logger()
	t.name = cfg.String(FileConfig)
	if t.name == "" {
		t.out = t.stdout
		return nil
	}
	f, err := os.OpenFile(t.name, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("Couldn't find or create file '%s' for FileStreamSinkTask: %w", t.name, err)
	}
	t.file, t.out = f, f
	return nil
}

// Put writes the records' values, one line each, in one write: lines of
// tasks appending to the same file do not interleave within a batch.
func (t *SinkTask) Put(ctx context.Context, records []connect.SinkRecord) error {
	t.lines.Reset()
	for _, r := range records {
		t.lines.WriteString(javaString(r.Value))
		t.lines.WriteByte('\n')
	}
	if t.lines.Len() == 0 {
		return nil
	}
	if _, err := t.out.Write(t.lines.Bytes()); err != nil {
		return fmt.Errorf("file: write to %s: %w", t.logName(), err)
	}
	return nil
}

// Flush makes what Put wrote durable (fsync) before the runtime commits the
// offsets: Kafka's task only flushes its stream to the operating system.
func (t *SinkTask) Flush(ctx context.Context, offsets map[connect.TopicPartition]int64) error {
	if t.file == nil {
		return nil
	}
	if err := t.file.Sync(); err != nil {
		return fmt.Errorf("file: fsync %s: %w", t.name, err)
	}
	return nil
}

func (t *SinkTask) Stop() error {
	if t.file == nil {
		return nil
	}
	err := t.file.Close()
	t.file = nil
	if err != nil {
		return fmt.Errorf("file: close %s: %w", t.name, err)
	}
	return nil
}

func (t *SinkTask) logName() string {
	if t.name == "" {
		return "stdout"
	}
	return t.name
}

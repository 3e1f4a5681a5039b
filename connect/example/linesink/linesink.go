// Package linesink is the guide's example sink connector (docs/CONNECT-SDK.md):
// it appends each record it reads from Kafka to a file, one line per record
// ("topic partition offset value"), or to standard output. It shows a sink's
// contract: Put buffers, Flush makes durable what Put received, and the
// runtime commits the consumer offsets only after Flush returned, so a crash
// re-delivers what was not flushed (at least once).
package linesink

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/samsa-io/samsa/connect"
)

// FileConfig names the file to append to; empty writes to standard output.
const FileConfig = "file"

// Plugin registers the connector; pass it to worker.Main.
func Plugin() connect.Plugin {
	return connect.Plugin{
		Class:   "com.example.LineSinkConnector",
		Aliases: []string{"LineSink", "LineSinkConnector"},
		Type:    connect.PluginSink,
		Version: "1.0.0",
		New:     func() connect.Connector { return &Connector{} },
	}
}

func configDef() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: FileConfig, Type: connect.TypeString, Default: "",
			Importance:    connect.High,
			Documentation: "The file to append records to; empty for standard output."})
}

// Connector hands every task the same config: the runtime splits the
// topics' partitions among the tasks (one consumer group per connector).
type Connector struct{ props map[string]string }

func (c *Connector) Version() string            { return "1.0.0" }
func (c *Connector) Config() *connect.ConfigDef { return configDef() }
func (c *Connector) NewTask() connect.SinkTask  { return &Task{} }
func (c *Connector) Stop() error                { return nil }

func (c *Connector) Start(_ connect.ConnectorContext, props map[string]string) error {
	c.props = props
	return nil
}

// TaskConfigs: one task when writing to a file (two writers would interleave
// their lines and flushes), maxTasks for standard output.
func (c *Connector) TaskConfigs(maxTasks int) ([]map[string]string, error) {
	n := maxTasks
	if c.props[FileConfig] != "" {
		n = 1
	}
	out := make([]map[string]string, n)
	for i := range out {
		out[i] = c.props
	}
	return out, nil
}

// AlterOffsets accepts any change of the consumer offsets
// (connect.SinkOffsetAlterer): the file holds no position of its own.
func (c *Connector) AlterOffsets(map[string]string, map[connect.TopicPartition]*int64) (bool, error) {
	return true, nil
}

// Task buffers lines in Put and writes and syncs them in Flush.
type Task struct {
	mu   sync.Mutex // Put and Flush run on the task's goroutine; Open and Close may not
	out  io.Writer
	file *os.File // nil for standard output
	buf  *bufio.Writer
	open map[connect.TopicPartition]bool
	ctx  connect.SinkTaskContext
}

func (t *Task) Start(ctx connect.SinkTaskContext, props map[string]string) error {
	cfg, err := configDef().Parse(props)
	if err != nil {
		return err
	}
	t.ctx, t.out, t.open = ctx, os.Stdout, map[connect.TopicPartition]bool{}
	if name := cfg.String(FileConfig); name != "" {
		f, err := os.OpenFile(name, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			// Not retriable: a missing directory does not heal by waiting.
			return fmt.Errorf("open %s: %w", name, err)
		}
		t.file, t.out = f, f
	}
	t.buf = bufio.NewWriter(t.out)
	return nil
}

// Open and Close tell the task which partitions it has
// (connect.SinkPartitionsHandler); a sink writing one file per partition
// would open and close the files here.
func (t *Task) Open(partitions []connect.TopicPartition) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, tp := range partitions {
		t.open[tp] = true
	}
	return nil
}

func (t *Task) Close(partitions []connect.TopicPartition) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, tp := range partitions {
		delete(t.open, tp)
	}
	return nil
}

// Put buffers the records. A value that cannot be written fails the task;
// a full disk would be worth retrying, and says so with connect.Retriable:
// the runtime pauses the partitions and calls Put again with the same
// records.
func (t *Task) Put(_ context.Context, records []connect.SinkRecord) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, r := range records {
		if _, err := fmt.Fprintf(t.buf, "%s %d %d %s\n", r.OriginalTopic, r.OriginalPartition, r.OriginalOffset, format(r.Value)); err != nil {
			return writeErr(err)
		}
	}
	return nil
}

// Flush writes out and syncs what Put buffered. Once it returns, the runtime
// commits the offsets given: those records must be in the file for good.
func (t *Task) Flush(context.Context, map[connect.TopicPartition]int64) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.buf.Flush(); err != nil {
		return writeErr(err)
	}
	if t.file != nil {
		if err := t.file.Sync(); err != nil {
			return writeErr(err)
		}
	}
	return nil
}

func (t *Task) Stop() error {
	if t.file == nil {
		return nil
	}
	return t.file.Close()
}

// writeErr marks a full disk retriable; other failures fail the task.
func writeErr(err error) error {
	if errors.Is(err, errNoSpace) {
		return connect.Retriable(err)
	}
	return err
}

// format renders a value: a Struct with its fields, bytes as text.
func format(v any) string {
	switch x := v.(type) {
	case []byte:
		return string(x)
	case nil:
		return "null"
	}
	return fmt.Sprint(v)
}

// The interfaces this example implements, checked by the compiler.
var (
	_ connect.SinkConnector         = (*Connector)(nil)
	_ connect.SinkOffsetAlterer     = (*Connector)(nil)
	_ connect.SinkTask              = (*Task)(nil)
	_ connect.SinkPartitionsHandler = (*Task)(nil)
)

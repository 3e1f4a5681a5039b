// Package counter is the guide's example source connector (docs/CONNECT-SDK.md):
// each task counts up from where it stopped, one record per number, into a
// Kafka topic. Its "other system" is a counter, so everything a real source
// needs shows: a config definition with validation, task configs, offsets
// read back on restart, records with a schema and Structs, and the optional
// interfaces a source may implement.
package counter

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/samsa-io/samsa/connect"
)

// The connector's configs.
const (
	TopicConfig    = "topic"
	IntervalConfig = "interval.ms"
	BatchConfig    = "batch.size"
	LimitConfig    = "limit"
	taskIDConfig   = "counter.task.id" // set by TaskConfigs, not by users
)

// Plugin registers the connector under its class name and an alias; pass it
// to worker.Main.
func Plugin() connect.Plugin {
	return connect.Plugin{
		Class:   "com.example.CounterSourceConnector",
		Aliases: []string{"CounterSource", "CounterSourceConnector"},
		Type:    connect.PluginSource,
		Version: "1.0.0",
		New:     func() connect.Connector { return &Connector{} },
	}
}

func configDef() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: TopicConfig, Type: connect.TypeString, Default: connect.NoDefault,
			Validator: connect.NonEmptyString{}, Importance: connect.High,
			Documentation: "The topic to write the numbers to."}).
		Define(connect.ConfigKey{Name: IntervalConfig, Type: connect.TypeLong, Default: 1000,
			Validator: connect.AtLeast(0), Importance: connect.Medium,
			Documentation: "How long a task waits between batches, in milliseconds."}).
		Define(connect.ConfigKey{Name: BatchConfig, Type: connect.TypeInt, Default: 10,
			Validator: connect.Between(1, 10000), Importance: connect.Low,
			Documentation: "How many numbers a task returns per poll."}).
		Define(connect.ConfigKey{Name: LimitConfig, Type: connect.TypeLong, Default: -1,
			Importance:    connect.Low,
			Documentation: "Stop counting after this many numbers per task; -1 counts forever."})
}

// Connector splits the counting into tasks: task i counts its own sequence,
// source partition {"task": i}.
type Connector struct {
	props map[string]string
}

func (c *Connector) Version() string             { return "1.0.0" }
func (c *Connector) Config() *connect.ConfigDef  { return configDef() }
func (c *Connector) NewTask() connect.SourceTask { return &Task{} }
func (c *Connector) Stop() error                 { return nil }

// Start keeps the validated props; the runtime has already checked them
// against Config, so Parse cannot fail here for a config the user gave.
func (c *Connector) Start(_ connect.ConnectorContext, props map[string]string) error {
	if _, err := configDef().Parse(props); err != nil {
		return err
	}
	c.props = props
	return nil
}

// TaskConfigs gives each task the connector's props plus its number.
func (c *Connector) TaskConfigs(maxTasks int) ([]map[string]string, error) {
	out := make([]map[string]string, maxTasks)
	for i := range out {
		cfg := map[string]string{taskIDConfig: strconv.Itoa(i)}
		for k, v := range c.props {
			cfg[k] = v
		}
		out[i] = cfg
	}
	return out, nil
}

// Validate checks what one config alone cannot: a limit is -1 or positive
// (connect.ConnectorValidator; the runtime adds these to config/validate).
func (c *Connector) Validate(props map[string]string) []connect.ConfigValue {
	raw, ok := props[LimitConfig]
	if !ok {
		return nil
	}
	n, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || n == -1 || n > 0 {
		return nil // a parse error is ConfigDef's to report
	}
	return []connect.ConfigValue{{Name: LimitConfig, Value: raw, Visible: true,
		Errors: []string{fmt.Sprintf("Invalid value %s for configuration %s: Value must be -1 or positive", raw, LimitConfig)}}}
}

// ExactlyOnceSupport: the numbers follow from the offsets alone, so a
// transaction with the offsets makes the topic exactly once (KIP-618).
func (c *Connector) ExactlyOnceSupport(map[string]string) connect.ExactlyOnceSupport {
	return connect.ExactlyOnceSupported
}

// AlterOffsets checks an offsets alter or reset request (KIP-875) before the
// runtime writes it: an offset must be {"count": n} with n >= 0. true says
// the connector needs nothing else done: its offsets live only in Kafka.
func (c *Connector) AlterOffsets(_ map[string]string, offsets []connect.SourcePartitionOffset) (bool, error) {
	for _, o := range offsets {
		if _, ok := o.Partition["task"]; !ok {
			return false, fmt.Errorf("source partition %v has no \"task\"", o.Partition)
		}
		if o.Offset == nil {
			continue // a reset: the task starts again from 0
		}
		if n, ok := o.Offset["count"].(int64); !ok || n < 0 {
			return false, fmt.Errorf("offset %v: \"count\" must be an integer >= 0", o.Offset)
		}
	}
	return true, nil
}

// ValueSchema is the schema of the records' values.
var ValueSchema = connect.NewStruct("com.example.Count").
	Field("task", connect.Int32Schema).
	Field("count", connect.Int64Schema).
	Field("at", connect.TimestampSchema()).
	MustBuild()

// Task counts. Poll runs on the task's own goroutine; Commit may be called
// from another, hence the atomic.
type Task struct {
	topic     string
	interval  time.Duration
	batch     int
	limit     int64
	id        int32
	partition map[string]any
	next      int64
	committed atomic.Int64
	log       *slog.Logger
}

// Start reads the config and the last committed offset: the number after
// it is where counting resumes.
func (t *Task) Start(ctx connect.SourceTaskContext, props map[string]string) error {
	cfg, err := configDef().Parse(props)
	if err != nil {
		return err
	}
	id, err := strconv.ParseInt(props[taskIDConfig], 10, 32)
	if err != nil {
		return fmt.Errorf("%s: %w", taskIDConfig, err)
	}
	t.topic, t.batch, t.limit, t.id = cfg.String(TopicConfig), int(cfg.Int(BatchConfig)), cfg.Int(LimitConfig), int32(id)
	t.interval = time.Duration(cfg.Int(IntervalConfig)) * time.Millisecond
	t.partition = map[string]any{"task": int64(id)}
	t.log = ctx.Logger()
	offset, err := ctx.Offset(t.partition)
	if err != nil {
		return fmt.Errorf("read offset: %w", err)
	}
	if n, ok := offset["count"].(int64); ok {
		t.next = n + 1
	}
	t.log.Info("counter starting", "from", t.next)
	return nil
}

// Poll returns the next batch, waiting the interval first. It returns early,
// with nothing, when the runtime stops the task (ctx ends).
func (t *Task) Poll(ctx context.Context) ([]connect.SourceRecord, error) {
	select {
	case <-ctx.Done():
		return nil, nil
	case <-time.After(t.interval):
	}
	var out []connect.SourceRecord
	for range t.batch {
		if t.limit >= 0 && t.next >= t.limit {
			break
		}
		out = append(out, t.record(t.next))
		t.next++
	}
	return out, nil
}

func (t *Task) record(n int64) connect.SourceRecord {
	now := time.Now().Truncate(time.Millisecond)
	value := connect.NewStructValue(ValueSchema).
		MustPut("task", t.id).
		MustPut("count", n).
		MustPut("at", now)
	return connect.SourceRecord{
		Record: connect.Record{
			Topic:       t.topic,
			KeySchema:   connect.StringSchema,
			Key:         fmt.Sprintf("task-%d", t.id),
			ValueSchema: ValueSchema,
			Value:       value,
			Timestamp:   now,
		},
		SourcePartition: t.partition,
		// The offset is the number this record carries: the task resumes
		// after it.
		SourceOffset: map[string]any{"count": n},
	}
}

// CommitRecord is called once each record is in Kafka
// (connect.SourceRecordCommitter): a source that must acknowledge messages
// upstream does it here.
func (t *Task) CommitRecord(r connect.SourceRecord, md *connect.RecordMetadata) error {
	if md == nil {
		return nil // skipped by errors.tolerance=all or dropped by a transform
	}
	t.committed.Store(r.SourceOffset["count"].(int64))
	return nil
}

// Commit is called after the runtime wrote offsets (connect.SourceTaskCommitter).
func (t *Task) Commit() error {
	t.log.Debug("counter offsets committed", "through", t.committed.Load())
	return nil
}

// Stop is called once, after the last Poll.
func (t *Task) Stop() error { return nil }

// The interfaces this example implements, checked by the compiler.
var (
	_ connect.SourceConnector            = (*Connector)(nil)
	_ connect.ConnectorValidator         = (*Connector)(nil)
	_ connect.ExactlyOnceSourceConnector = (*Connector)(nil)
	_ connect.SourceOffsetAlterer        = (*Connector)(nil)
	_ connect.SourceTask                 = (*Task)(nil)
	_ connect.SourceRecordCommitter      = (*Task)(nil)
	_ connect.SourceTaskCommitter        = (*Task)(nil)
)

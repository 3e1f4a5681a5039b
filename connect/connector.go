package connect

import (
	"context"
	"errors"
	"log/slog"
)

// Connector is what Kafka calls a Connector: it reads its config, splits
// the work into task configs, and watches the other system for changes that
// need a new split (ConnectorContext.RequestTaskReconfiguration).
type Connector interface {
	// Version is the connector's version, shown by /connector-plugins.
	Version() string
	// Config declares the connector's configuration.
	Config() *ConfigDef
	// Start begins with a validated config (raw strings, as given).
	Start(ctx ConnectorContext, props map[string]string) error
	// TaskConfigs splits the work into at most maxTasks task configs.
	TaskConfigs(maxTasks int) ([]map[string]string, error)
	// Stop releases what Start took; it is called once, after Start.
	Stop() error
}

// ConnectorValidator is implemented by connectors that check a config beyond
// their ConfigDef (Kafka's Connector.validate); the runtime merges its
// messages into config/validate's answer.
type ConnectorValidator interface {
	Validate(props map[string]string) []ConfigValue
}

// ConnectorContext is the connector's view of the runtime.
type ConnectorContext interface {
	// RequestTaskReconfiguration asks for TaskConfigs to be read again.
	RequestTaskReconfiguration()
	// RaiseError fails the connector with err (its status becomes FAILED).
	RaiseError(err error)
	// Logger logs with the connector's name.
	Logger() *slog.Logger
}

// SourceConnector is a connector whose tasks read another system.
type SourceConnector interface {
	Connector
	NewTask() SourceTask
}

// ExactlyOnceSupport is a source connector's answer to whether its tasks
// can give exactly-once delivery (KIP-618).
type ExactlyOnceSupport int

const (
	ExactlyOnceUnsupported ExactlyOnceSupport = iota
	ExactlyOnceSupported
)

// ExactlyOnceSourceConnector is implemented by source connectors that know
// whether they support exactly-once delivery with a config; a connector that
// does not implement it is asked nothing and runs with exactly.once.support
// requested only when the user says so.
type ExactlyOnceSourceConnector interface {
	ExactlyOnceSupport(props map[string]string) ExactlyOnceSupport
}

// SourceTask reads records from another system.
type SourceTask interface {
	Start(ctx SourceTaskContext, props map[string]string) error
	// Poll returns the next records; an empty slice (or nil) is fine when
	// nothing is ready. It should return within about a second when idle
	// and when ctx ends, so the runtime can commit and stop on time.
	Poll(ctx context.Context) ([]SourceRecord, error)
	// Stop is called once, after the last Poll has returned.
	Stop() error
}

// SourceRecordCommitter is implemented by source tasks that want to know when
// each record is in Kafka (Kafka's SourceTask.commitRecord): with exactly
// once, after the record's transaction committed.
type SourceRecordCommitter interface {
	CommitRecord(r SourceRecord, md *RecordMetadata) error
}

// SourceTaskCommitter is implemented by source tasks told when offsets were
// committed (Kafka's SourceTask.commit).
type SourceTaskCommitter interface {
	Commit() error
}

// SourceTaskContext is the source task's view of the runtime.
type SourceTaskContext interface {
	// Offset is the last committed source offset of a source partition, or
	// nil when there is none.
	Offset(partition map[string]any) (map[string]any, error)
	// Config is the task's config.
	Config() map[string]string
	Logger() *slog.Logger
}

// SinkConnector is a connector whose tasks write to another system.
type SinkConnector interface {
	Connector
	NewTask() SinkTask
}

// SinkTask writes records to another system. The runtime commits a
// partition's consumer offset only after Flush returned for it, so what
// Put received is in the other system before Kafka forgets it.
type SinkTask interface {
	Start(ctx SinkTaskContext, props map[string]string) error
	// Put hands over records; they may be buffered until Flush.
	Put(ctx context.Context, records []SinkRecord) error
	// Flush writes out everything Put received up to the offsets given (the
	// next offset to read, per partition).
	Flush(ctx context.Context, offsets map[TopicPartition]int64) error
	// Stop is called once, after the last Put and Flush.
	Stop() error
}

// SinkPartitionsHandler is implemented by sink tasks that keep per-partition
// state (Kafka's open and close).
type SinkPartitionsHandler interface {
	Open(partitions []TopicPartition) error
	Close(partitions []TopicPartition) error
}

// SinkPreCommitter is implemented by sink tasks that commit less than what
// they were given (Kafka's preCommit): it returns the offsets safe to commit.
type SinkPreCommitter interface {
	PreCommit(ctx context.Context, offsets map[TopicPartition]int64) (map[TopicPartition]int64, error)
}

// SinkTaskContext is the sink task's view of the runtime.
type SinkTaskContext interface {
	Config() map[string]string
	// Assignment is the partitions the task has now.
	Assignment() []TopicPartition
	// Offset asks the runtime to read from the given offsets next.
	Offset(offsets map[TopicPartition]int64)
	// Pause and Resume stop and restart fetching from partitions.
	Pause(partitions ...TopicPartition)
	Resume(partitions ...TopicPartition)
	// RequestCommit asks for offsets to be committed soon.
	RequestCommit()
	// ErrantRecordReporter reports records the task could not write, to the
	// dead letter queue when one is set (KIP-610); nil when the runtime has
	// none.
	ErrantRecordReporter() ErrantRecordReporter
	Logger() *slog.Logger
}

// ErrantRecordReporter sends a record that failed in the task to the
// connector's error handling.
type ErrantRecordReporter interface {
	Report(ctx context.Context, r SinkRecord, err error) error
}

// RetriableError marks a failure worth trying again (Kafka's
// RetriableException): the runtime retries Put or Poll instead of failing
// the task.
type RetriableError struct{ Err error }

func (e *RetriableError) Error() string {
	if e.Err == nil {
		return "retriable"
	}
	return "retriable: " + e.Err.Error()
}

func (e *RetriableError) Unwrap() error { return e.Err }

// Retriable wraps err as retriable; nil stays nil, so that
// `return connect.Retriable(err)` after a call that succeeded is no failure.
func Retriable(err error) error {
	if err == nil {
		return nil
	}
	return &RetriableError{Err: err}
}

// IsRetriable reports whether err says to try again.
func IsRetriable(err error) bool {
	var r *RetriableError
	return errors.As(err, &r)
}

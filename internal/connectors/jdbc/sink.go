package jdbc

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/samsa-io/samsa/connect"
	"github.com/samsa-io/samsa/internal/version"
)

// SinkConnector writes records into tables, as Confluent's
// io.confluent.connect.jdbc.JdbcSinkConnector.
type SinkConnector struct {
	props map[string]string
}

var (
	_ connect.SinkConnector      = (*SinkConnector)(nil)
	_ connect.ConnectorValidator = (*SinkConnector)(nil)
)

func (c *SinkConnector) Version() string            { return version.Version }
func (c *SinkConnector) Config() *connect.ConfigDef { return sinkConfigDef() }
func (c *SinkConnector) NewTask() connect.SinkTask  { return &SinkTask{} }

// Validate adds Confluent's cross-config checks to the ConfigDef's.
func (c *SinkConnector) Validate(props map[string]string) []connect.ConfigValue {
	return crossValidate(sinkConfigDef(), props, func() error {
		_, err := parseSinkSettings(props)
		return err
	})
}

func (c *SinkConnector) Start(_ connect.ConnectorContext, props map[string]string) error {
	if _, err := parseSinkSettings(props); err != nil {
		return err
	}
	c.props = props
	return nil
}

// TaskConfigs gives every task the connector's config: the runtime splits
// the topics' partitions between them.
func (c *SinkConnector) TaskConfigs(maxTasks int) ([]map[string]string, error) {
	out := make([]map[string]string, 0, maxTasks)
	for range maxTasks {
		out = append(out, copyProps(c.props))
	}
	return out, nil
}

func (c *SinkConnector) Stop() error { return nil }

// SinkTask writes each Put in one database transaction: a batch that fails
// anywhere leaves nothing of itself behind, and is retried (max.retries,
// retry.backoff.ms) as a whole.
type SinkTask struct {
	ctx         connect.SinkTaskContext
	settings    sinkSettings
	db          *sql.DB
	writer      *writer
	retriesLeft int
}

func (t *SinkTask) Start(ctx connect.SinkTaskContext, props map[string]string) error {
	s, err := parseSinkSettings(props)
	if err != nil {
		return err
	}
	t.ctx, t.settings, t.retriesLeft = ctx, s, s.maxRetries
	t.db, err = openDB(context.Background(), s.conn, s.attempts, s.backoff)
	if err != nil {
		return err
	}
	t.writer = &writer{s: s, d: s.dialect, db: t.db, tables: map[tableID][]columnMeta{}}
	return nil
}

// Put writes the records before it returns (Flush has nothing left to do),
// as Confluent's JdbcSinkTask.
func (t *SinkTask) Put(ctx context.Context, records []connect.SinkRecord) error {
	if len(records) == 0 {
		return nil
	}
	err := t.writer.write(ctx, records)
	if err == nil {
		t.retriesLeft = t.settings.maxRetries
		return nil
	}
	var re *recordError
	if errors.As(err, &re) || t.retriesLeft <= 0 {
		return err
	}
	t.retriesLeft--
	t.ctx.Logger().Warn("jdbc sink: write failed; retrying", "error", err, "retries_left", t.retriesLeft)
	timer := time.NewTimer(t.settings.retryBackoff)
	defer timer.Stop()
	select {
	case <-ctx.Done():
	case <-timer.C:
	}
	return connect.Retriable(err)
}

func (t *SinkTask) Flush(context.Context, map[connect.TopicPartition]int64) error { return nil }

func (t *SinkTask) Stop() error {
	if t.db != nil {
		return t.db.Close()
	}
	return nil
}

// recordError is a problem with a record or the config that trying again
// cannot fix (Confluent's ConnectException, as against its SQLException).
type recordError struct{ err error }

func (e *recordError) Error() string { return e.err.Error() }
func (e *recordError) Unwrap() error { return e.err }

func recordErr(format string, args ...any) error {
	return &recordError{err: fmt.Errorf(format, args...)}
}

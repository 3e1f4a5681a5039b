package jdbc

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/samsa-io/samsa/connect"
)

// Source partition and offset keys, Confluent's (offset protocol V0, and
// V1's partition read on restart so offsets Confluent wrote carry over).
const (
	partitionTable       = "table"
	partitionQuery       = "query"
	partitionQueryValue  = "query"
	partitionProtocol    = "protocol"
	offsetIncrementing   = "incrementing"
	offsetTimestamp      = "timestamp"
	offsetTimestampNanos = "timestamp_nanos"
)

// SourceTask polls its tables (or the query) in turn, each at most every
// poll.interval.ms, batch.max.rows rows a poll.
type SourceTask struct {
	ctx      connect.SourceTaskContext
	settings sourceSettings
	db       *sql.DB
	queriers []*querier
}

func (t *SourceTask) Start(ctx connect.SourceTaskContext, props map[string]string) error {
	s, err := parseSourceSettings(props)
	if err != nil {
		return err
	}
	t.ctx, t.settings = ctx, s
	var targets []querierTarget
	if s.query != "" {
		targets = append(targets, querierTarget{query: s.query})
	} else {
		raw := props[taskConfigTables]
		if raw == "" {
			return errors.New("jdbc source task: no tables assigned (the task config has no \"tables\")")
		}
		for _, name := range strings.Split(raw, ",") {
			targets = append(targets, querierTarget{table: parseTableID(name)})
		}
	}
	t.db, err = openDB(context.Background(), s.conn, s.attempts, s.backoff)
	if err != nil {
		return err
	}
	for _, target := range targets {
		q, err := newQuerier(t, target)
		if err != nil {
			t.db.Close()
			return err
		}
		t.queriers = append(t.queriers, q)
	}
	return nil
}

// Poll runs the querier whose turn it is; when none is due it waits (at most
// a second, so the runtime can commit and stop on time) and returns nothing.
func (t *SourceTask) Poll(ctx context.Context) ([]connect.SourceRecord, error) {
	q := t.queriers[0]
	for _, x := range t.queriers[1:] {
		if x.nextPoll.Before(q.nextPoll) {
			q = x
		}
	}
	if wait := time.Until(q.nextPoll); wait > 0 {
		timer := time.NewTimer(min(wait, time.Second))
		defer timer.Stop()
		select {
		case <-ctx.Done():
		case <-timer.C:
		}
		return nil, nil
	}
	records, more, err := q.poll(ctx)
	if err != nil {
		q.reset()
		q.nextPoll = time.Now().Add(t.settings.poll)
		var dbErr *dbError
		if errors.As(err, &dbErr) {
			// The database may come back: the runtime tries again.
			return nil, connect.Retriable(err)
		}
		return nil, err
	}
	if !more {
		q.reset()
		q.nextPoll = time.Now().Add(t.settings.poll)
	} else {
		q.nextPoll = time.Now()
	}
	return records, nil
}

func (t *SourceTask) Stop() error {
	for _, q := range t.queriers {
		q.reset()
	}
	if t.db != nil {
		return t.db.Close()
	}
	return nil
}

// dbError marks a failure of the database (retriable) as against a problem
// with the data or the config (not).
type dbError struct{ err error }

func (e *dbError) Error() string { return e.err.Error() }
func (e *dbError) Unwrap() error { return e.err }

func dbErr(format string, args ...any) error {
	return &dbError{err: fmt.Errorf(format, args...)}
}

// readOffset reads a stored offset; numbers may come back as any numeric
// type (the offset store's JSON).
func readOffset(m map[string]any) (offset, error) {
	var o offset
	if v, ok := m[offsetIncrementing]; ok && v != nil {
		n, err := offsetNumber(v)
		if err != nil {
			return o, fmt.Errorf("stored offset %q: %w", offsetIncrementing, err)
		}
		o.inc = &n
	}
	if v, ok := m[offsetTimestamp]; ok && v != nil {
		ms, err := offsetNumber(v)
		if err != nil {
			return o, fmt.Errorf("stored offset %q: %w", offsetTimestamp, err)
		}
		ts := time.UnixMilli(ms)
		if nv, ok := m[offsetTimestampNanos]; ok && nv != nil {
			nanos, err := offsetNumber(nv)
			if err != nil {
				return o, fmt.Errorf("stored offset %q: %w", offsetTimestampNanos, err)
			}
			// The milliseconds say the second; the nanos the fraction (Java's Timestamp).
			sec := ms / 1000
			if ms < 0 && ms%1000 != 0 {
				sec--
			}
			ts = time.Unix(sec, nanos)
		}
		o.ts = &ts
	}
	return o, nil
}

func offsetNumber(v any) (int64, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case int:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case float64:
		return int64(x), nil
	case interface{ Int64() (int64, error) }: // json.Number
		return x.Int64()
	case string:
		var n int64
		_, err := fmt.Sscan(x, &n)
		return n, err
	}
	return 0, fmt.Errorf("not a number: %T %v", v, v)
}

// offset is where a querier is: the last incrementing value and timestamp
// read (nil when none yet).
type offset struct {
	ts  *time.Time
	inc *int64
}

// toMap is Confluent's TimestampIncrementingOffset.toMap.
func (o offset) toMap() map[string]any {
	m := map[string]any{}
	if o.inc != nil {
		m[offsetIncrementing] = *o.inc
	}
	if o.ts != nil {
		m[offsetTimestamp] = o.ts.UnixMilli()
		m[offsetTimestampNanos] = int64(o.ts.Nanosecond())
	}
	return m
}

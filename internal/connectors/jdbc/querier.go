package jdbc

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/samsa-io/samsa/connect"
)

// querierTarget is a table, or (query mode) the query.
type querierTarget struct {
	table tableID
	query string
}

// querier reads one table or the query, as Confluent's TableQuerier and its
// modes. In incrementing and timestamp+incrementing modes each poll is a
// query of at most batch.max.rows rows after the offset: the rows are in a
// strict order of (timestamp, incrementing), so the next query continues
// exactly where this one stopped. Timestamp mode does the same and ends each
// batch on a timestamp boundary (pollTimestampBatch). Bulk mode, and any
// mode with a query.suffix (no LIMIT can follow it), read one result across
// polls as Confluent does.
type querier struct {
	task      *SourceTask
	target    querierTarget
	partition map[string]any
	topic     string
	offset    offset
	nextPoll  time.Time

	nullable map[string]bool // catalog nullability (table mode), read once
	checked  bool            // validate.non.null done

	rows    *sql.Rows // open result (bulk, timestamp, query mode)
	mapping *rowMapping
	pending *row // timestamp mode's lookahead row
	// limited says the open query has a LIMIT: fewer rows than it means done.
	limited bool
}

// row is one result row as a Connect struct with its offset values.
type row struct {
	value *connect.Struct
	ts    *time.Time
	inc   *int64
}

func newQuerier(t *SourceTask, target querierTarget) (*querier, error) {
	s := t.settings
	q := &querier{task: t, target: target}
	if target.query != "" {
		q.partition = map[string]any{partitionQuery: partitionQueryValue}
		q.topic = s.topicPrefix
	} else {
		q.partition = map[string]any{partitionTable: target.table.name}
		q.topic = s.topicPrefix + target.table.name
	}
	stored, err := q.storedOffset()
	if err != nil {
		return nil, err
	}
	q.offset = stored
	return q, nil
}

// storedOffset asks the runtime for the offset, by Confluent's V1 partition
// first (fully qualified name and "protocol": "1"), then V0.
func (q *querier) storedOffset() (offset, error) {
	ctx := q.task.ctx
	var tried []map[string]any
	if q.target.query == "" {
		tried = append(tried, map[string]any{partitionTable: q.target.table.String(), partitionProtocol: "1"})
	}
	tried = append(tried, q.partition)
	for _, p := range tried {
		m, err := ctx.Offset(p)
		if err != nil {
			return offset{}, fmt.Errorf("jdbc source: read the stored offset of %v: %w", p, err)
		}
		if m != nil {
			return readOffset(m)
		}
	}
	return offset{}, nil
}

func (q *querier) name() string {
	if q.target.query != "" {
		return "query"
	}
	return q.target.table.String()
}

// reset closes the open result.
func (q *querier) reset() {
	if q.rows != nil {
		q.rows.Close()
	}
	q.rows, q.mapping, q.pending, q.limited = nil, nil, nil, false
}

// poll returns up to batch.max.rows records; more says there may be more
// to read right away.
func (q *querier) poll(ctx context.Context) ([]connect.SourceRecord, bool, error) {
	s := q.task.settings
	if s.mode == modeTimestamp && s.querySuffix == "" {
		return q.pollTimestampBatch(ctx)
	}
	if q.rows == nil {
		if err := q.execute(ctx); err != nil {
			return nil, false, err
		}
	}
	var out []connect.SourceRecord
	for len(out) < s.batchMaxRows {
		r, err := q.next()
		if err != nil {
			return nil, false, err
		}
		if r == nil {
			return out, false, nil // the result is read to its end
		}
		out = append(out, q.record(r))
	}
	if q.limited {
		// A full LIMITed batch may have more behind it: the next poll
		// queries again, after the new offset.
		q.reset()
	}
	return out, true, nil
}

// pollTimestampBatch is timestamp mode without holding a result open
// across polls (in SQLite an open read blocks writers): a query of at most
// batch.max.rows rows after the offset; when it fills, its last timestamp's
// rows may go on past the limit, so they are read whole by a second query.
// The poll then ends on a timestamp boundary, which the next query starts
// after. A poll returns more than batch.max.rows rows when many rows share
// its last timestamp.
func (q *querier) pollTimestampBatch(ctx context.Context) ([]connect.SourceRecord, bool, error) {
	defer q.reset()
	if err := q.execute(ctx); err != nil {
		return nil, false, err
	}
	batch, err := q.readAll()
	if err != nil {
		return nil, false, err
	}
	full := len(batch) == q.task.settings.batchMaxRows
	if full {
		if batch, err = q.completeLastTimestamp(ctx, batch); err != nil {
			return nil, false, err
		}
	}
	out := make([]connect.SourceRecord, 0, len(batch))
	for i, r := range batch {
		// Confluent's TimestampTableQuerier: the offset moves to a row's
		// timestamp only once the next row's is later, so a restart between
		// rows sharing a timestamp reads them all again rather than skip one.
		if i == len(batch)-1 || batch[i+1].ts.After(*r.ts) {
			q.offset.ts = r.ts
		}
		out = append(out, q.sourceRecord(r))
	}
	return out, full, nil
}

// completeLastTimestamp replaces the batch's rows of its last timestamp by
// all the rows of that timestamp.
func (q *querier) completeLastTimestamp(ctx context.Context, batch []*row) ([]*row, error) {
	d := q.task.settings.dialect
	last := *batch[len(batch)-1].ts
	for len(batch) > 0 && batch[len(batch)-1].ts.Equal(last) {
		batch = batch[:len(batch)-1]
	}
	q.reset()
	tie := q.baseQuery() + " WHERE " + d.timestampExpr(q.task.settings.timestamps) + " = " + d.placeholder(1)
	if err := q.run(ctx, tie, []any{d.timestampParam(last)}); err != nil {
		return nil, err
	}
	rest, err := q.readAll()
	if err != nil {
		return nil, err
	}
	return append(batch, rest...), nil
}

// readAll reads the open result to its end.
func (q *querier) readAll() ([]*row, error) {
	var out []*row
	for {
		r, err := q.read()
		if err != nil || r == nil {
			return out, err
		}
		out = append(out, r)
	}
}

// record makes a source record of a row and moves the offset past it.
func (q *querier) record(r *row) connect.SourceRecord {
	switch q.task.settings.mode {
	case modeIncrementing:
		q.offset.inc = r.inc
	case modeTimestampIncrement:
		q.offset.inc, q.offset.ts = r.inc, r.ts
	case modeTimestamp:
		// Confluent's TimestampTableQuerier: the offset moves to a row's
		// timestamp only once the next row's is later, so a restart between
		// rows sharing a timestamp reads them all again rather than skip one.
		if q.pending == nil || r.ts == nil || q.pending.ts == nil || r.ts.Before(*q.pending.ts) {
			q.offset.ts = r.ts
		}
	}
	return q.sourceRecord(r)
}

// sourceRecord is a row as a record at the querier's offset.
func (q *querier) sourceRecord(r *row) connect.SourceRecord {
	return connect.SourceRecord{
		Record: connect.Record{
			Topic:       q.topic,
			ValueSchema: r.value.Schema(),
			Value:       r.value,
		},
		SourcePartition: q.partition,
		SourceOffset:    q.offset.toMap(),
	}
}

// next reads the next row (nil at the end); timestamp mode reads one ahead.
func (q *querier) next() (*row, error) {
	if q.task.settings.mode != modeTimestamp {
		return q.read()
	}
	if q.pending == nil {
		r, err := q.read()
		if err != nil || r == nil {
			return r, err
		}
		q.pending = r
	}
	cur := q.pending
	nxt, err := q.read()
	if err != nil {
		return nil, err
	}
	q.pending = nxt
	return cur, nil
}

// read scans one row from the open result.
func (q *querier) read() (*row, error) {
	if q.rows == nil {
		return nil, nil
	}
	if !q.rows.Next() {
		err := q.rows.Err()
		q.rows.Close()
		q.rows = nil
		if err != nil {
			return nil, dbErr("jdbc source: read %s: %w", q.name(), err)
		}
		return nil, nil
	}
	raw := make([]any, len(q.mapping.types))
	ptrs := make([]any, len(raw))
	for i := range raw {
		ptrs[i] = &raw[i]
	}
	if err := q.rows.Scan(ptrs...); err != nil {
		return nil, dbErr("jdbc source: read %s: %w", q.name(), err)
	}
	if q.mapping.schema == nil {
		if err := q.mapping.build(q, raw); err != nil {
			return nil, err
		}
	}
	return q.mapping.row(q, raw)
}

// execute runs the mode's query from the current offset.
func (q *querier) execute(ctx context.Context) error {
	s := q.task.settings
	d := s.dialect
	if q.target.query == "" && q.nullable == nil {
		cols, err := d.columns(ctx, q.task.db, q.target.table)
		if err != nil {
			return &dbError{err: err}
		}
		if len(cols) == 0 {
			return dbErr("jdbc source: table %s does not exist or has no columns", q.target.table)
		}
		q.nullable = map[string]bool{}
		for _, c := range cols {
			q.nullable[c.name] = c.nullable
		}
	}
	if err := q.checkColumns(); err != nil {
		return err
	}
	sqlText, args, limited, err := q.statement(ctx)
	if err != nil {
		return err
	}
	if err := q.run(ctx, sqlText, args); err != nil {
		return err
	}
	q.limited = limited
	return nil
}

// run opens a result to read rows from.
func (q *querier) run(ctx context.Context, sqlText string, args []any) error {
	rows, err := q.task.db.QueryContext(ctx, sqlText, args...)
	if err != nil {
		return dbErr("jdbc source: query %s: %w", q.name(), err)
	}
	types, err := rows.ColumnTypes()
	if err != nil {
		rows.Close()
		return dbErr("jdbc source: query %s: %w", q.name(), err)
	}
	q.rows = rows
	q.mapping = &rowMapping{types: describeColumns(types, q.nullable)}
	return nil
}

// checkColumns is validate.non.null, and that the mode's columns exist
// (table mode; a query's columns are known only from its result).
func (q *querier) checkColumns() error {
	s := q.task.settings
	if q.checked || q.target.query != "" {
		return nil
	}
	q.checked = true
	t := q.target.table
	if s.incrementing != "" {
		nullable, ok := q.nullable[s.incrementing]
		if !ok {
			return fmt.Errorf("jdbc source: incrementing column %s is not a column of table %s", s.incrementing, t)
		}
		if nullable && s.validateNonNull {
			return fmt.Errorf("jdbc source: cannot make incremental queries using incrementing column %s on %s because this column is nullable (set validate.non.null=false to allow it)", s.incrementing, t)
		}
	}
	if len(s.timestamps) > 0 {
		allNullable := true
		for _, c := range s.timestamps {
			nullable, ok := q.nullable[c]
			if !ok {
				return fmt.Errorf("jdbc source: timestamp column %s is not a column of table %s", c, t)
			}
			allNullable = allNullable && nullable
		}
		if allNullable && s.validateNonNull {
			return fmt.Errorf("jdbc source: cannot make incremental queries using timestamp columns %s on %s because all of these columns are nullable (set validate.non.null=false to allow it)", strings.Join(s.timestamps, ","), t)
		}
	}
	return nil
}

// statement builds the mode's query and its parameters, with Confluent's
// WHERE clauses (TimestampIncrementingCriteria): strictly after the offset,
// and in the timestamp modes strictly before now - timestamp.delay.interval.ms.
func (q *querier) statement(ctx context.Context) (string, []any, bool, error) {
	s := q.task.settings
	d := s.dialect
	var b strings.Builder
	b.WriteString(q.baseQuery())
	var args []any
	limited := false
	inc := d.ident(s.incrementing)
	var tsExpr string
	if len(s.timestamps) > 0 {
		tsExpr = d.timestampExpr(s.timestamps)
	}
	switch s.mode {
	case modeIncrementing:
		fmt.Fprintf(&b, " WHERE %s > %s ORDER BY %s ASC", inc, d.placeholder(1), inc)
		args = append(args, q.lastIncrementing())
		limited = true
	case modeTimestamp, modeTimestampIncrement:
		begin, err := q.beginTimestamp(ctx)
		if err != nil {
			return "", nil, false, err
		}
		now, err := d.now(ctx, q.task.db)
		if err != nil {
			return "", nil, false, &dbError{err: err}
		}
		end := now.Add(-s.timestampDelay)
		if s.mode == modeTimestamp {
			fmt.Fprintf(&b, " WHERE %s > %s AND %s < %s ORDER BY %s ASC", tsExpr, d.placeholder(1), tsExpr, d.placeholder(2), tsExpr)
			args = append(args, d.timestampParam(begin), d.timestampParam(end))
			limited = true // pollTimestampBatch completes the last timestamp's rows
		} else {
			fmt.Fprintf(&b, " WHERE %s < %s AND ((%s = %s AND %s > %s) OR %s > %s) ORDER BY %s,%s ASC",
				tsExpr, d.placeholder(1), tsExpr, d.placeholder(2), inc, d.placeholder(3), tsExpr, d.placeholder(4), tsExpr, inc)
			args = append(args, d.timestampParam(end), d.timestampParam(begin), q.lastIncrementing(), d.timestampParam(begin))
			limited = true
		}
	}
	if s.querySuffix != "" {
		b.WriteString(" " + s.querySuffix)
		limited = false
	} else if limited {
		fmt.Fprintf(&b, " LIMIT %d", s.batchMaxRows)
	}
	return b.String(), args, limited, nil
}

// baseQuery is the table's SELECT or the user's query, before the mode's clauses.
func (q *querier) baseQuery() string {
	if q.target.query != "" {
		return q.target.query
	}
	return "SELECT * FROM " + q.task.settings.dialect.table(q.target.table)
}

func (q *querier) lastIncrementing() int64 {
	if q.offset.inc == nil {
		return -1 // Confluent's start: every row with a non-negative value
	}
	return *q.offset.inc
}

// beginTimestamp is the offset's timestamp, or where timestamp.initial says
// to start (the epoch when unset, the database's now for -1).
func (q *querier) beginTimestamp(ctx context.Context) (time.Time, error) {
	if q.offset.ts != nil {
		return *q.offset.ts, nil
	}
	s := q.task.settings
	if s.timestampInitial == nil {
		return time.UnixMilli(0), nil
	}
	if *s.timestampInitial == timestampInitialCurrent {
		now, err := s.dialect.now(ctx, q.task.db)
		if err != nil {
			return time.Time{}, &dbError{err: err}
		}
		q.offset.ts = &now
		return now, nil
	}
	return time.UnixMilli(*s.timestampInitial), nil
}

// rowMapping turns a result's rows into Connect structs; the schema is made
// at the first row (SQLite columns with no declared type take the type of
// their first value).
type rowMapping struct {
	types   []resultColumn
	schema  *connect.Schema
	columns []int // result index of each field
	convs   []func(any) (any, error)
}

func (m *rowMapping) build(q *querier, first []any) error {
	s := q.task.settings
	name := ""
	if q.target.query == "" {
		name = q.target.table.name // Confluent names a table's schema after it
	}
	b := connect.NewStruct(name)
	for i, c := range m.types {
		cm, ok := s.dialect.mapColumn(c, s.numericMapping, first[i])
		if !ok {
			q.task.ctx.Logger().Warn("jdbc source: column type not supported; the column is left out", "table", q.name(), "column", c.name, "type", c.typeName)
			continue
		}
		b.Field(cm.name, cm.schema)
		m.columns = append(m.columns, i)
		m.convs = append(m.convs, cm.conv)
	}
	schema, err := b.Build()
	if err != nil {
		return fmt.Errorf("jdbc source: %s: %w", q.name(), err)
	}
	m.schema = schema
	return nil
}

func (m *rowMapping) row(q *querier, raw []any) (*row, error) {
	st := connect.NewStructValue(m.schema)
	for fi, ri := range m.columns {
		f := m.schema.Fields[fi]
		v := raw[ri]
		if v != nil {
			var err error
			if v, err = m.convs[fi](v); err != nil {
				return nil, fmt.Errorf("jdbc source: %s column %s: %w", q.name(), f.Name, err)
			}
		}
		if err := st.Put(f.Name, v); err != nil {
			return nil, fmt.Errorf("jdbc source: %s column %s: %w", q.name(), f.Name, err)
		}
	}
	r := &row{value: st}
	s := q.task.settings
	if s.incrementing != "" {
		n, err := incrementingValue(st, s.incrementing)
		if err != nil {
			return nil, fmt.Errorf("jdbc source: %s: %w", q.name(), err)
		}
		r.inc = &n
	}
	for _, c := range s.timestamps {
		v, err := st.Get(c)
		if err != nil {
			return nil, fmt.Errorf("jdbc source: %s: timestamp column %s is not in the result", q.name(), c)
		}
		if t, ok := v.(time.Time); ok {
			t = s.dialect.offsetTime(t)
			r.ts = &t
			break
		}
		if v != nil {
			return nil, fmt.Errorf("jdbc source: %s: timestamp column %s is not a timestamp (%T)", q.name(), c, v)
		}
	}
	return r, nil
}

// incrementingValue reads the incrementing column as Confluent's
// extractOffsetIncrementedId: an integer, or a Decimal of scale 0.
func incrementingValue(st *connect.Struct, col string) (int64, error) {
	v, err := st.Get(col)
	if err != nil {
		return 0, fmt.Errorf("incrementing column %s is not in the result", col)
	}
	switch x := v.(type) {
	case nil:
		return 0, fmt.Errorf("null value for incrementing column %s", col)
	case int8:
		return int64(x), nil
	case int16:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case int64:
		return x, nil
	case connect.Decimal:
		if x.Scale == 0 && x.Unscaled.IsInt64() {
			return x.Unscaled.Int64(), nil
		}
		if x.Scale > 0 {
			r := new(big.Rat).SetFrac(x.Unscaled, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(x.Scale)), nil))
			if r.IsInt() && r.Num().IsInt64() {
				return r.Num().Int64(), nil
			}
		}
	}
	return 0, errors.New("invalid type for incrementing column " + col)
}

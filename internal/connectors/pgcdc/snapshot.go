package pgcdc

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"

	"github.com/samsa-io/samsa/connect"
)

// snapshotReader reads every included table through a cursor in one
// REPEATABLE READ transaction that imported the slot's exported snapshot:
// exactly the data as of the slot's consistent point.
type snapshotReader struct {
	tables []*table
	lsn    uint64 // the consistent point (or the WAL position, initial_only)
	txID   int64
	ts     time.Time

	idx       int // table being read; -1 before the first
	open      bool
	exhausted bool
	buf       [][][]byte
	bufPos    int
	inTable   int // rows read from the current table

	held    *heldRow // one row kept back to learn whether it is a last one
	emitted int
}

type heldRow struct {
	t     *table
	vals  []*string
	first bool // first in its table
}

// beginSnapshot opens the snapshot transaction and lists what it reads.
func (t *Task) beginSnapshot(ctx context.Context, snapshotName string, lsn uint64) error {
	if _, err := t.conn.Exec(ctx, "BEGIN ISOLATION LEVEL REPEATABLE READ"); err != nil {
		return fmt.Errorf("pgcdc: begin the snapshot transaction: %w", err)
	}
	if snapshotName != "" {
		if _, err := t.conn.Exec(ctx, "SET TRANSACTION SNAPSHOT "+quoteLiteral(snapshotName)); err != nil {
			return fmt.Errorf("pgcdc: import the slot's snapshot %s: %w", snapshotName, err)
		}
	}
	r := &snapshotReader{lsn: lsn, idx: -1, ts: time.Now()}
	var walText string
	if err := t.conn.QueryRow(ctx, "SELECT txid_current(), pg_current_wal_lsn()::text").Scan(&r.txID, &walText); err != nil {
		return fmt.Errorf("pgcdc: snapshot transaction id: %w", err)
	}
	if r.lsn == 0 {
		wal, err := pglogrepl.ParseLSN(walText)
		if err != nil {
			return fmt.Errorf("pgcdc: WAL position %q: %w", walText, err)
		}
		r.lsn = uint64(wal)
	}
	refs, err := listTables(ctx, t.conn, t.s)
	if err != nil {
		return err
	}
	for _, ref := range refs {
		cols, err := tableColumns(ctx, t.conn, ref.oid)
		if err != nil {
			return err
		}
		tb, err := buildTable(t.s, ref.schema, ref.name, cols, t.em.source)
		if err != nil {
			return err
		}
		r.tables = append(r.tables, tb)
	}
	t.snap, t.phase = r, phaseSnapshot
	t.log.Info("pgcdc: snapshot started", "tables", len(r.tables), "lsn", pglogrepl.LSN(r.lsn))
	return nil
}

func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// pollSnapshot returns up to max.batch.size snapshot records; after the
// last one it ends the transaction and starts the stream at the
// consistent point.
func (t *Task) pollSnapshot(ctx context.Context) ([]connect.SourceRecord, *position, error) {
	r := t.snap
	var out []connect.SourceRecord
	var last *position
	for len(out) < t.s.maxBatch {
		next, err := r.next(ctx, t.conn, t.s.fetchSize)
		if err != nil {
			return nil, nil, err
		}
		if r.held != nil {
			rec, pos, err := t.snapshotRecord(r, next)
			if err != nil {
				return nil, nil, err
			}
			out, last = append(out, rec), &pos
		}
		r.held = next
		if next == nil {
			return out, last, t.finishSnapshot(ctx)
		}
	}
	return out, last, nil
}

// snapshotRecord emits the held row, marked as Debezium marks snapshot
// records: first, first or last in its table, last of all, else true.
func (t *Task) snapshotRecord(r *snapshotReader, next *heldRow) (connect.SourceRecord, position, error) {
	h := r.held
	marker := "true"
	switch {
	case next == nil:
		marker = "last"
	case r.emitted == 0:
		marker = "first"
	case h.first:
		marker = "first_in_data_collection"
	case next.t != h.t:
		marker = "last_in_data_collection"
	}
	after, err := rowStruct(h.t, h.t.valueSchema, h.vals, nil)
	if err != nil {
		return connect.SourceRecord{}, position{}, err
	}
	key, err := keyStruct(h.t, h.vals)
	if err != nil {
		return connect.SourceRecord{}, position{}, err
	}
	pos := position{LSN: r.lsn, CommitLSN: r.lsn, TxID: r.txID, TsUsec: r.ts.UnixMicro(), Snapshot: true, LastSnapshot: next == nil}
	si := sourceInfo{ts: r.ts, snapshot: marker, schema: h.t.schemaName, table: h.t.name, txID: r.txID, lsn: r.lsn}
	r.emitted++
	return t.em.change(h.t, "r", key, nil, after, si, pos), pos, nil
}

// next is the next row of the snapshot, or nil after the last table.
func (r *snapshotReader) next(ctx context.Context, conn *pgx.Conn, fetch int) (*heldRow, error) {
	for {
		if r.bufPos < len(r.buf) {
			row := r.buf[r.bufPos]
			r.bufPos++
			r.inTable++
			vals := make([]*string, len(row))
			for i, b := range row {
				if b != nil {
					s := string(b)
					vals[i] = &s
				}
			}
			return &heldRow{t: r.tables[r.idx], vals: vals, first: r.inTable == 1}, nil
		}
		if r.open && !r.exhausted {
			res, err := conn.PgConn().Exec(ctx, "FETCH "+strconv.Itoa(fetch)+" FROM samsa_snapshot").ReadAll()
			if err != nil {
				return nil, fmt.Errorf("pgcdc: snapshot fetch from %s: %w", r.tables[r.idx].id(), err)
			}
			r.buf, r.bufPos = res[0].Rows, 0
			r.exhausted = len(r.buf) < fetch
			continue
		}
		if r.open {
			if _, err := conn.Exec(ctx, "CLOSE samsa_snapshot"); err != nil {
				return nil, fmt.Errorf("pgcdc: snapshot close cursor: %w", err)
			}
			r.open = false
		}
		r.idx++
		if r.idx >= len(r.tables) {
			return nil, nil
		}
		tb := r.tables[r.idx]
		cols := make([]string, len(tb.columns))
		for i, c := range tb.columns {
			cols[i] = pgx.Identifier{c.name}.Sanitize()
		}
		sql := "DECLARE samsa_snapshot NO SCROLL CURSOR FOR SELECT " + strings.Join(cols, ", ") + " FROM " + pgx.Identifier{tb.schemaName, tb.name}.Sanitize()
		if len(cols) == 0 {
			sql = "DECLARE samsa_snapshot NO SCROLL CURSOR FOR SELECT FROM " + pgx.Identifier{tb.schemaName, tb.name}.Sanitize()
		}
		if _, err := conn.Exec(ctx, sql); err != nil {
			return nil, fmt.Errorf("pgcdc: snapshot read %s: %w", tb.id(), err)
		}
		r.open, r.exhausted, r.inTable, r.buf, r.bufPos = true, false, 0, nil, 0
	}
}

// finishSnapshot ends the snapshot transaction and starts streaming where
// the snapshot's data ends.
func (t *Task) finishSnapshot(ctx context.Context) error {
	r := t.snap
	if _, err := t.conn.Exec(ctx, "COMMIT"); err != nil {
		return fmt.Errorf("pgcdc: end the snapshot transaction: %w", err)
	}
	t.log.Info("pgcdc: snapshot completed", "records", r.emitted, "tables", len(r.tables))
	t.snapshotDone = true
	t.snap = nil
	// Reconnects within this run stream from the consistent point (Poll
	// moves this to the last snapshot record's position: the same LSN).
	t.resume = &position{LSN: r.lsn, CommitLSN: r.lsn}
	if t.s.snapshotMode == snapshotInitialOnly {
		t.phase = phaseIdle
		return nil
	}
	return t.startStream(ctx, r.lsn)
}

package pgcdc

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/samsa-io/samsa/connect"
)

// streamState is one replication session's decoding state.
type streamState struct {
	relations map[uint32]*table // nil value: a relation not captured
	skip      *position         // the resume position: its transaction's events up to it were emitted
	inTx      bool
	xid       int64
	commitTS  time.Time
	commitEnd uint64 // end of the last transaction fully read (lsn_commit)
	curLSN    uint64 // LSN of the current event, and how many records it made
	curEvents int64
	idlePos   uint64 // a position outside any transaction that everything before was sent from
}

// startStream sends START_REPLICATION for the slot from lsn, pgoutput
// protocol 1 over the publication.
func (t *Task) startStream(ctx context.Context, lsn uint64) error {
	args := []string{"proto_version '1'", "publication_names " + quoteLiteral(pgx.Identifier{t.s.publication}.Sanitize())}
	if err := pglogrepl.StartReplication(ctx, t.repl, t.s.slot, pglogrepl.LSN(lsn), pglogrepl.StartReplicationOptions{Mode: pglogrepl.LogicalReplication, PluginArgs: args}); err != nil {
		return fmt.Errorf("pgcdc: start replication from slot %s at %s: %w", t.s.slot, pglogrepl.LSN(lsn), err)
	}
	t.strm = &streamState{relations: map[uint32]*table{}, commitEnd: lsn}
	if t.resume != nil && t.resume.Events > 0 {
		p := *t.resume
		t.strm.skip = &p
	}
	t.phase = phaseStream
	t.lastStatus = time.Time{}
	t.log.Info("pgcdc: streaming", "slot", t.s.slot, "from", pglogrepl.LSN(lsn))
	return nil
}

// pollStream reads messages until max.batch.size records or
// poll.interval.ms, answering keepalives and confirming positions.
func (t *Task) pollStream(ctx context.Context) ([]connect.SourceRecord, *position, error) {
	deadline := time.Now().Add(t.s.pollInterval)
	var out []connect.SourceRecord
	var last *position
	if err := t.sendStatus(false); err != nil {
		return nil, nil, err
	}
	for len(out) < t.s.maxBatch {
		rctx, cancel := context.WithDeadline(ctx, deadline)
		msg, err := t.repl.ReceiveMessage(rctx)
		cancel()
		if err != nil {
			if pgconn.Timeout(err) || ctx.Err() != nil {
				break
			}
			return nil, nil, fmt.Errorf("receive from the replication stream: %w", err)
		}
		switch m := msg.(type) {
		case *pgproto3.CopyData:
			recs, pos, err := t.handleCopyData(ctx, m.Data)
			if err != nil {
				return nil, nil, err
			}
			if len(recs) > 0 {
				out, last = append(out, recs...), pos
			}
		case *pgproto3.ErrorResponse:
			return nil, nil, fmt.Errorf("replication stream: %w", pgconn.ErrorResponseToPgError(m))
		case *pgproto3.CopyDone:
			return nil, nil, fmt.Errorf("the server ended the replication stream")
		}
	}
	if hb, pos, ok := t.maybeHeartbeat(); ok {
		out, last = append(out, hb), pos
	}
	if len(out) == 0 {
		t.confirmIdle()
	}
	return out, last, nil
}

func (t *Task) handleCopyData(ctx context.Context, data []byte) ([]connect.SourceRecord, *position, error) {
	if len(data) == 0 {
		return nil, nil, nil
	}
	switch data[0] {
	case pglogrepl.PrimaryKeepaliveMessageByteID:
		ka, err := pglogrepl.ParsePrimaryKeepaliveMessage(data[1:])
		if err != nil {
			return nil, nil, fmt.Errorf("keepalive: %w", err)
		}
		if !t.strm.inTx {
			t.strm.idlePos = max(t.strm.idlePos, uint64(ka.ServerWALEnd))
		}
		if ka.ReplyRequested {
			return nil, nil, t.sendStatus(true)
		}
		return nil, nil, nil
	case pglogrepl.XLogDataByteID:
		xld, err := pglogrepl.ParseXLogData(data[1:])
		if err != nil {
			return nil, nil, fmt.Errorf("xlog data: %w", err)
		}
		msg, err := pglogrepl.Parse(xld.WALData)
		if err != nil {
			return nil, nil, badData(fmt.Errorf("pgcdc: pgoutput message at %s: %w", xld.WALStart, err))
		}
		return t.handleMessage(ctx, uint64(xld.WALStart), msg)
	}
	return nil, nil, nil
}

// handleMessage decodes one pgoutput message into records.
func (t *Task) handleMessage(ctx context.Context, lsn uint64, msg pglogrepl.Message) ([]connect.SourceRecord, *position, error) {
	st := t.strm
	switch m := msg.(type) {
	case *pglogrepl.BeginMessage:
		st.inTx, st.xid, st.commitTS, st.curLSN, st.curEvents = true, int64(m.Xid), m.CommitTime, 0, 0
	case *pglogrepl.CommitMessage:
		st.inTx = false
		st.commitEnd = uint64(m.TransactionEndLSN)
		st.idlePos = max(st.idlePos, st.commitEnd)
		st.skip = nil // the resumed transaction, if any, is behind us
	case *pglogrepl.RelationMessage:
		return nil, nil, t.relation(ctx, m)
	case *pglogrepl.InsertMessage:
		return t.insert(lsn, m)
	case *pglogrepl.UpdateMessage:
		return t.update(lsn, m)
	case *pglogrepl.DeleteMessage:
		return t.delete(lsn, m)
	case *pglogrepl.TruncateMessage:
		return t.truncate(lsn, m)
	}
	// Origin, Type and logical decoding messages carry no row changes.
	return nil, nil, nil
}

// relation (re)builds a table from pgoutput's description, with
// nullability and the primary key from the catalog as it is now.
func (t *Task) relation(ctx context.Context, m *pglogrepl.RelationMessage) error {
	if !t.s.tables.matches(m.Namespace + "." + m.RelationName) {
		t.strm.relations[m.RelationID] = nil
		return nil
	}
	catalog, err := tableColumns(ctx, t.conn, m.RelationID)
	if err != nil {
		return err
	}
	byName := make(map[string]catalogColumn, len(catalog))
	for _, c := range catalog {
		byName[c.name] = c
	}
	cols := make([]catalogColumn, len(m.Columns))
	for i, rc := range m.Columns {
		cc := byName[rc.Name] // a column dropped since: nullable, not a key
		cols[i] = catalogColumn{name: rc.Name, oid: rc.DataType, typmod: rc.TypeModifier, notNull: cc.notNull, keyPos: cc.keyPos}
	}
	tb, err := buildTable(t.s, m.Namespace, m.RelationName, cols, t.em.source)
	if err != nil {
		return err
	}
	t.strm.relations[m.RelationID] = tb
	return nil
}

// tuple is a row as pgoutput sent it.
func tuple(td *pglogrepl.TupleData) (vals []*string, toast []bool, err error) {
	if td == nil {
		return nil, nil, nil
	}
	vals, toast = make([]*string, len(td.Columns)), make([]bool, len(td.Columns))
	for i, c := range td.Columns {
		switch c.DataType {
		case pglogrepl.TupleDataTypeText:
			s := string(c.Data)
			vals[i] = &s
		case pglogrepl.TupleDataTypeToast:
			toast[i] = true
		case pglogrepl.TupleDataTypeBinary:
			return nil, nil, badData(fmt.Errorf("pgcdc: binary tuple data was not asked for"))
		}
	}
	return vals, toast, nil
}

// event is the next record position at lsn in the current transaction,
// and whether a resumed stream already emitted it.
func (t *Task) event(lsn uint64) (position, bool) {
	st := t.strm
	if lsn == st.curLSN {
		st.curEvents++
	} else {
		st.curLSN, st.curEvents = lsn, 1
	}
	p := position{LSN: lsn, CommitLSN: st.commitEnd, TxID: st.xid, TsUsec: st.commitTS.UnixMicro(), Events: st.curEvents}
	done := st.skip != nil && st.skip.TxID == st.xid &&
		(lsn < st.skip.LSN || (lsn == st.skip.LSN && st.curEvents <= st.skip.Events))
	return p, done
}

func (t *Task) source(tb *table, p position) sourceInfo {
	return sourceInfo{ts: t.strm.commitTS, snapshot: "false", schema: tb.schemaName, table: tb.name, txID: p.TxID, lsn: p.LSN, commitLSN: p.CommitLSN}
}

// emit appends a change record unless the resumed stream already sent it.
func (t *Task) emit(out []connect.SourceRecord, last **position, tb *table, op string, key, before, after *connect.Struct, lsn uint64, headers connect.Headers) []connect.SourceRecord {
	p, done := t.event(lsn)
	if done {
		return out
	}
	r := t.em.change(tb, op, key, before, after, t.source(tb, p), p)
	r.Headers = headers
	*last = &p
	return append(out, r)
}

// emitDelete appends a delete and, with tombstones.on.delete, its
// tombstone: two events at one LSN, each skipped on its own when a resumed
// stream already emitted it.
func (t *Task) emitDelete(out []connect.SourceRecord, last **position, tb *table, key, before *connect.Struct, lsn uint64, headers connect.Headers) []connect.SourceRecord {
	p, done := t.event(lsn)
	del := t.em.change(tb, "d", key, before, nil, t.source(tb, p), p)
	del.Headers = headers
	if !done {
		out, *last = append(out, del), &p
	}
	if !t.s.tombstones {
		return out
	}
	p2, done := t.event(lsn)
	if !done {
		ts := t.em.tombstone(del)
		ts.SourceOffset = p2.offset()
		out, *last = append(out, ts), &p2
	}
	return out
}

func (t *Task) captured(relID uint32) (*table, error) {
	tb, ok := t.strm.relations[relID]
	if !ok {
		return nil, badData(fmt.Errorf("pgcdc: pgoutput sent a change for relation %d before describing it", relID))
	}
	return tb, nil
}

func (t *Task) insert(lsn uint64, m *pglogrepl.InsertMessage) ([]connect.SourceRecord, *position, error) {
	tb, err := t.captured(m.RelationID)
	if tb == nil || t.s.skipped["c"] {
		return nil, nil, err
	}
	vals, toast, err := tuple(m.Tuple)
	if err != nil {
		return nil, nil, err
	}
	after, err := rowStruct(tb, tb.valueSchema, vals, toast)
	if err != nil {
		return nil, nil, err
	}
	key, err := keyStruct(tb, vals)
	if err != nil {
		return nil, nil, err
	}
	var last *position
	out := t.emit(nil, &last, tb, "c", key, nil, after, lsn, nil)
	return out, last, nil
}

// update emits u; when the primary key changed, Debezium's pair instead: a
// delete of the old key (and its tombstone) then a create of the new one,
// linked by the __debezium.newkey and __debezium.oldkey headers.
func (t *Task) update(lsn uint64, m *pglogrepl.UpdateMessage) ([]connect.SourceRecord, *position, error) {
	tb, err := t.captured(m.RelationID)
	if tb == nil {
		return nil, nil, err
	}
	newVals, newToast, err := tuple(m.NewTuple)
	if err != nil {
		return nil, nil, err
	}
	after, err := rowStruct(tb, tb.valueSchema, newVals, newToast)
	if err != nil {
		return nil, nil, err
	}
	key, err := keyStruct(tb, newVals)
	if err != nil {
		return nil, nil, err
	}
	// REPLICA IDENTITY FULL sends the old row ('O'); DEFAULT sends the old
	// key ('K') only when it changed, else nothing: before stays null.
	var before, oldKey *connect.Struct
	if m.OldTuple != nil {
		oldVals, oldToast, err := tuple(m.OldTuple)
		if err != nil {
			return nil, nil, err
		}
		if before, err = rowStruct(tb, tb.valueSchema, oldVals, oldToast); err != nil {
			return nil, nil, err
		}
		if oldKey, err = keyStruct(tb, oldVals); err != nil {
			return nil, nil, err
		}
	}
	var out []connect.SourceRecord
	var last *position
	if oldKey != nil && !oldKey.Equal(key) {
		if !t.s.skipped["d"] {
			out = t.emitDelete(out, &last, tb, oldKey, before, lsn,
				connect.Headers{{Key: "__debezium.newkey", Schema: tb.keySchema, Value: key}})
		}
		if !t.s.skipped["c"] {
			out = t.emit(out, &last, tb, "c", key, nil, after, lsn,
				connect.Headers{{Key: "__debezium.oldkey", Schema: tb.keySchema, Value: oldKey}})
		}
		return out, last, nil
	}
	if t.s.skipped["u"] {
		return nil, nil, nil
	}
	out = t.emit(out, &last, tb, "u", key, before, after, lsn, nil)
	return out, last, nil
}

func (t *Task) delete(lsn uint64, m *pglogrepl.DeleteMessage) ([]connect.SourceRecord, *position, error) {
	tb, err := t.captured(m.RelationID)
	if tb == nil || t.s.skipped["d"] {
		return nil, nil, err
	}
	oldVals, oldToast, err := tuple(m.OldTuple)
	if err != nil {
		return nil, nil, err
	}
	before, err := rowStruct(tb, tb.valueSchema, oldVals, oldToast)
	if err != nil {
		return nil, nil, err
	}
	key, err := keyStruct(tb, oldVals)
	if err != nil {
		return nil, nil, err
	}
	var last *position
	out := t.emitDelete(nil, &last, tb, key, before, lsn, nil)
	return out, last, nil
}

// truncate emits Debezium's t event per captured table (skipped by
// default: skipped.operations is t unless set).
func (t *Task) truncate(lsn uint64, m *pglogrepl.TruncateMessage) ([]connect.SourceRecord, *position, error) {
	if t.s.skipped["t"] {
		return nil, nil, nil
	}
	var out []connect.SourceRecord
	var last *position
	for _, id := range m.RelationIDs {
		tb, err := t.captured(id)
		if err != nil {
			return nil, nil, err
		}
		if tb != nil {
			out = t.emit(out, &last, tb, "t", nil, nil, nil, lsn, nil)
		}
	}
	return out, last, nil
}

// sendStatus tells the server the confirmed position (and that we are
// alive): on request, on the interval, and when it moved.
func (t *Task) sendStatus(force bool) error {
	t.mu.Lock()
	target := t.confirmable
	t.mu.Unlock()
	moved := target > t.confirmed
	if !force && !moved && time.Since(t.lastStatus) < t.s.statusInterval {
		return nil
	}
	if moved {
		t.confirmed = target
	}
	lsn := pglogrepl.LSN(t.confirmed)
	err := pglogrepl.SendStandbyStatusUpdate(context.Background(), t.repl, pglogrepl.StandbyStatusUpdate{
		WALWritePosition: lsn, WALFlushPosition: lsn, WALApplyPosition: lsn})
	if err != nil {
		return fmt.Errorf("send standby status: %w", err)
	}
	t.lastStatus = time.Now()
	return nil
}

// maybeHeartbeat emits a heartbeat record when one is due and the stream
// is between transactions: its offset is the position everything before
// was read from, so committing it lets the slot advance while the captured
// tables are quiet.
func (t *Task) maybeHeartbeat() (connect.SourceRecord, *position, bool) {
	st := t.strm
	if t.s.heartbeat <= 0 || st.inTx || time.Since(t.lastBeat) < t.s.heartbeat {
		return connect.SourceRecord{}, nil, false
	}
	at := max(st.idlePos, st.commitEnd)
	if at == 0 {
		return connect.SourceRecord{}, nil, false
	}
	t.lastBeat = time.Now()
	p := position{LSN: at, CommitLSN: at, TsUsec: time.Now().UnixMicro()}
	st.commitEnd, st.curLSN, st.curEvents = at, 0, 0
	return t.em.heartbeat(p), &p, true
}

// confirmIdle lets the slot move past WAL that held nothing to emit: when
// every record returned is stored (Commit saw the last one's offset with
// nothing in flight) and none was returned since, a position the stream
// reached between transactions is safe to confirm.
func (t *Task) confirmIdle() {
	if t.strm.inTx || t.strm.idlePos == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	// Nothing returned in this run: what the stored offset (if any) does
	// not cover was never emitted.
	if t.idleAt == t.returned || t.returned == 0 {
		t.confirmable = max(t.confirmable, t.strm.idlePos)
	}
}

package pgcdc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/samsa-io/samsa/connect"
)

// phase is what Poll does next.
type phase int

const (
	phaseSnapshot phase = iota // reading tables in the snapshot transaction
	phaseStream                // reading the slot
	phaseIdle                  // initial_only after its snapshot: nothing more to read
)

// Task is the connector's one task: a snapshot, then the slot's changes.
// Poll does all the reading on the caller's goroutine; Commit and
// CommitRecord, which the runtime calls from others, only record positions
// under mu and inflight's lock, and the next Poll tells the server.
type Task struct {
	tctx    connect.SourceTaskContext
	s       *settings
	log     *slog.Logger
	em      *emitter
	version string

	conn  *pgx.Conn      // catalog queries and the snapshot transaction
	repl  *pgconn.PgConn // the replication protocol
	phase phase
	snap  *snapshotReader
	strm  *streamState

	// resume is where this run continues after a reconnect: the position
	// of the last record Poll returned (or the stored offset before any).
	resume       *position
	snapshotDone bool  // a snapshot finished in this run (always: not again)
	broken       error // the connections failed; the next Poll reopens them

	inflight inflight

	// mu guards what Commit hands to Poll.
	mu sync.Mutex
	// confirmable is the highest position the runtime has stored an offset
	// past: the slot may be told it (StandbyStatusUpdate's flush position).
	confirmable uint64
	// idleAt is set when the stored offset is the last returned record's
	// and nothing is in flight: returned's value then. While returned has
	// not moved since, positions the stream reached without emitting
	// anything may be confirmed too.
	idleAt   int64
	returned int64  // records Poll returned
	lastKey  string // the last returned record's offset key

	confirmed  uint64 // sent to the server; Poll only
	lastStatus time.Time
	lastBeat   time.Time
}

var (
	_ connect.SourceTask            = (*Task)(nil)
	_ connect.SourceTaskCommitter   = (*Task)(nil)
	_ connect.SourceRecordCommitter = (*Task)(nil)
)

func (t *Task) partition() map[string]any { return map[string]any{"server": t.s.prefix} }

// Start parses the config, reads the stored offset and opens the
// connections: the publication, the slot and, when one is due, the
// snapshot transaction. Failing here fails the task; after Start, lost
// connections are retried from Poll.
func (t *Task) Start(ctx connect.SourceTaskContext, props map[string]string) error {
	s, err := parseSettings(props)
	if err != nil {
		return err
	}
	t.tctx, t.s, t.log = ctx, s, ctx.Logger().With("component", "pgcdc", "server", s.prefix)
	t.em = newEmitter(s, t.version)
	t.idleAt = -1
	stored, err := ctx.Offset(t.partition())
	if err != nil {
		return fmt.Errorf("pgcdc: read the stored offset: %w", err)
	}
	if stored != nil {
		p, err := parsePosition(stored)
		if err != nil {
			return err
		}
		t.resume = &p
		if p.snapshotCompleted() {
			t.confirmable = p.CommitLSN
		}
		t.log.Info("pgcdc: resuming from the stored offset", "lsn", pglogrepl.LSN(p.LSN), "lsn_commit", pglogrepl.LSN(p.CommitLSN), "snapshot_completed", p.snapshotCompleted())
	}
	octx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err = t.open(octx)
	if errors.Is(err, errSlotActive) {
		// Likely this connector's own session from before a crash: Poll
		// retries (retriable errors) until the server lets it go.
		t.log.Warn("pgcdc: the slot is busy; polls retry until it is free", "error", err)
		t.broken = err
		return nil
	}
	return err
}

// open connects and decides the phase from the resume position and the
// snapshot mode (Debezium's rules: a snapshot interrupted midway is redone
// from the start).
func (t *Task) open(ctx context.Context) error {
	if err := t.connect(ctx); err != nil {
		return err
	}
	if err := t.ensurePublication(ctx); err != nil {
		t.closeConns()
		return err
	}
	err := t.choosePhase(ctx)
	if err != nil {
		t.closeConns()
	}
	return err
}

func (t *Task) needSnapshot() bool {
	if t.snapshotDone {
		return false
	}
	switch t.s.snapshotMode {
	case snapshotAlways:
		return true
	case snapshotInitial, snapshotInitialOnly:
		return t.resume == nil || !t.resume.snapshotCompleted()
	}
	return false
}

func (t *Task) choosePhase(ctx context.Context) error {
	if t.s.snapshotMode == snapshotInitialOnly {
		if !t.needSnapshot() {
			t.phase = phaseIdle
			return nil
		}
		// No slot: nothing streams after this snapshot, and a slot nobody
		// reads would keep WAL forever.
		return t.beginSnapshot(ctx, "", 0)
	}
	slot, err := t.slotInfo(ctx)
	if err != nil {
		return err
	}
	if t.needSnapshot() {
		if slot.exists {
			// A fresh slot exports the snapshot its stream starts at: the
			// snapshot and the stream meet exactly, nothing read twice.
			if err := t.dropSlot(ctx); err != nil {
				return err
			}
		}
		res, err := pglogrepl.CreateReplicationSlot(ctx, t.repl, t.s.slot, "pgoutput",
			pglogrepl.CreateReplicationSlotOptions{Mode: pglogrepl.LogicalReplication, SnapshotAction: "EXPORT_SNAPSHOT"})
		if err != nil {
			return fmt.Errorf("pgcdc: create replication slot %s: %w", t.s.slot, err)
		}
		cp, err := pglogrepl.ParseLSN(res.ConsistentPoint)
		if err != nil {
			return fmt.Errorf("pgcdc: slot consistent point %q: %w", res.ConsistentPoint, err)
		}
		t.log.Info("pgcdc: created slot for a snapshot", "slot", t.s.slot, "consistent_point", cp)
		return t.beginSnapshot(ctx, res.SnapshotName, uint64(cp))
	}
	start, err := t.streamStart(ctx, slot)
	if err != nil {
		return err
	}
	return t.startStream(ctx, start)
}

// streamStart is the LSN to stream from: the resume position, else the
// slot's (created now when missing).
func (t *Task) streamStart(ctx context.Context, slot slotState) (uint64, error) {
	if !slot.exists {
		res, err := pglogrepl.CreateReplicationSlot(ctx, t.repl, t.s.slot, "pgoutput",
			pglogrepl.CreateReplicationSlotOptions{Mode: pglogrepl.LogicalReplication, SnapshotAction: "NOEXPORT_SNAPSHOT"})
		if err != nil {
			return 0, fmt.Errorf("pgcdc: create replication slot %s: %w", t.s.slot, err)
		}
		cp, _ := pglogrepl.ParseLSN(res.ConsistentPoint)
		if t.resume != nil {
			t.log.Warn("pgcdc: the replication slot was missing and is created anew; changes between the stored offset and now are not captured",
				"slot", t.s.slot, "offset_lsn", pglogrepl.LSN(t.resume.CommitLSN), "slot_lsn", cp)
		}
		slot.confirmed = uint64(cp)
	}
	if t.resume == nil || t.resume.CommitLSN == 0 {
		return slot.confirmed, nil
	}
	if slot.confirmed > t.resume.CommitLSN {
		t.log.Warn("pgcdc: the slot is past the stored offset; the server streams from the slot's position",
			"slot_lsn", pglogrepl.LSN(slot.confirmed), "offset_lsn", pglogrepl.LSN(t.resume.CommitLSN))
	}
	return t.resume.CommitLSN, nil
}

// Poll returns the next records: snapshot rows, then changes. Errors of
// the connection are retriable: the next Poll reconnects and continues
// after the last record returned.
func (t *Task) Poll(ctx context.Context) ([]connect.SourceRecord, error) {
	if t.broken != nil {
		if err := t.reopen(ctx); err != nil {
			return nil, err
		}
	}
	var recs []connect.SourceRecord
	var last *position
	var err error
	switch t.phase {
	case phaseSnapshot:
		recs, last, err = t.pollSnapshot(ctx)
	case phaseStream:
		recs, last, err = t.pollStream(ctx)
	case phaseIdle:
		wait(ctx, t.s.pollInterval)
		return nil, nil
	}
	if err != nil {
		var bad *dataError
		if errors.As(err, &bad) {
			return nil, err // the data, not the connection: retrying reads it again
		}
		if ctx.Err() != nil {
			return nil, nil // stopping
		}
		return nil, t.fail(err)
	}
	for _, r := range recs {
		t.inflight.add(offsetKey(r.SourceOffset), commitLSNOf(r.SourceOffset))
	}
	if last != nil {
		p := *last
		t.resume = &p
		t.mu.Lock()
		t.lastKey = p.key()
		t.returned += int64(len(recs))
		t.mu.Unlock()
	}
	return recs, nil
}

// dataError is a change this connector cannot turn into a record (a key
// column of an unmapped type, a value it cannot parse, a message it cannot
// decode): it fails the task instead of being retried forever.
type dataError struct{ err error }

func (e *dataError) Error() string { return e.err.Error() }
func (e *dataError) Unwrap() error { return e.err }

func badData(err error) error {
	if err == nil {
		return nil
	}
	return &dataError{err}
}

func commitLSNOf(m map[string]any) uint64 {
	n, _ := toInt64(m[offCommitLSN])
	return uint64(n)
}

// fail drops the connections after an error; records built in the failed
// Poll are dropped too (the next stream re-sends them).
func (t *Task) fail(err error) error {
	t.closeConns()
	t.broken = err
	t.log.Warn("pgcdc: connection failed; reconnecting on the next poll", "error", err)
	return connect.Retriable(fmt.Errorf("pgcdc: %w", err))
}

func (t *Task) reopen(ctx context.Context) error {
	wait(ctx, t.s.pollInterval)
	if ctx.Err() != nil {
		return nil
	}
	if err := t.open(ctx); err != nil {
		t.broken = err
		return connect.Retriable(fmt.Errorf("pgcdc: reconnect: %w", err))
	}
	t.log.Info("pgcdc: reconnected")
	t.broken = nil
	return nil
}

func wait(ctx context.Context, d time.Duration) {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
	case <-tm.C:
	}
}

// CommitRecord notes that a record is in Kafka (or was dropped by a
// transform: md nil). It only moves the in-flight floor.
func (t *Task) CommitRecord(r connect.SourceRecord, _ *connect.RecordMetadata) error {
	if r.SourceOffset != nil {
		t.inflight.ack(offsetKey(r.SourceOffset))
	}
	return nil
}

// Commit runs after the runtime stored offsets: the position the slot may
// confirm is the stored offset's lsn_commit, capped by the first record
// still in flight. The stored offset is read back rather than assumed, so
// the slot never moves past what a restart would resume from.
func (t *Task) Commit() error {
	if t.tctx == nil {
		return nil
	}
	stored, err := t.tctx.Offset(t.partition())
	if err != nil || stored == nil {
		return err
	}
	p, err := parsePosition(stored)
	if err != nil {
		return err
	}
	floor, empty := t.inflight.state()
	cand := p.CommitLSN
	if !empty || floor != 0 {
		cand = min(cand, floor)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if p.snapshotCompleted() {
		t.confirmable = max(t.confirmable, cand)
	}
	if empty && t.lastKey != "" && p.key() == t.lastKey {
		t.idleAt = t.returned
	}
	return nil
}

// Stop closes the connections and drops the slot when slot.drop.on.stop.
func (t *Task) Stop() error {
	if t.s == nil {
		return nil
	}
	t.closeConns()
	if !t.s.dropSlotOnStop || t.s.snapshotMode == snapshotInitialOnly {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, t.connConfig())
	if err != nil {
		return fmt.Errorf("pgcdc: drop slot %s: %w", t.s.slot, err)
	}
	defer conn.Close(context.Background())
	for {
		// The walsender may not have seen the connection close yet.
		_, err = conn.Exec(ctx, "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1", t.s.slot)
		var pgErr *pgconn.PgError
		if err == nil || !errors.As(err, &pgErr) || pgErr.Code != "55006" || ctx.Err() != nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("pgcdc: drop slot %s: %w", t.s.slot, err)
	}
	t.log.Info("pgcdc: dropped the replication slot", "slot", t.s.slot)
	return nil
}

func (t *Task) closeConns() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if t.conn != nil {
		_ = t.conn.Close(ctx)
		t.conn = nil
	}
	if t.repl != nil {
		_ = t.repl.Close(ctx)
		t.repl = nil
	}
	t.snap, t.strm = nil, nil
}

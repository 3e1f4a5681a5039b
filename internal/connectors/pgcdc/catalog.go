package pgcdc

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// sessionParams make both sessions print values the way the converters
// read them (pgoutput formats with the walsender session's settings).
var sessionParams = map[string]string{
	"DateStyle":          "ISO, YMD",
	"TimeZone":           "UTC",
	"IntervalStyle":      "iso_8601",
	"bytea_output":       "hex",
	"extra_float_digits": "3",
}

func (t *Task) connConfig() *pgx.ConnConfig {
	cfg, err := pgx.ParseConfig(t.s.dsn)
	if err != nil {
		panic(err) // built by parseSettings from checked parts
	}
	for k, v := range sessionParams {
		cfg.RuntimeParams[k] = v
	}
	return cfg
}

// connect opens the query and replication connections and checks that the
// server can do logical decoding.
func (t *Task) connect(ctx context.Context) error {
	conn, err := pgx.ConnectConfig(ctx, t.connConfig())
	if err != nil {
		return fmt.Errorf("pgcdc: connect to %s:%d/%s: %w", t.s.host, t.s.port, t.s.dbname, err)
	}
	var walLevel string
	if err := conn.QueryRow(ctx, "SHOW wal_level").Scan(&walLevel); err != nil {
		conn.Close(ctx)
		return fmt.Errorf("pgcdc: read wal_level: %w", err)
	}
	if walLevel != "logical" {
		conn.Close(ctx)
		return fmt.Errorf("pgcdc: the server's wal_level is %s; logical decoding needs wal_level=logical", walLevel)
	}
	rcfg, err := pgconn.ParseConfig(t.s.replDSN)
	if err != nil {
		conn.Close(ctx)
		return fmt.Errorf("pgcdc: replication connection config: %w", err)
	}
	for k, v := range sessionParams {
		rcfg.RuntimeParams[k] = v
	}
	repl, err := pgconn.ConnectConfig(ctx, rcfg)
	if err != nil {
		conn.Close(ctx)
		return fmt.Errorf("pgcdc: open the replication connection (the user needs the REPLICATION attribute): %w", err)
	}
	t.conn, t.repl = conn, repl
	return nil
}

// ensurePublication makes sure the publication exists as
// publication.autocreate.mode says.
func (t *Task) ensurePublication(ctx context.Context) error {
	var allTables bool
	err := t.conn.QueryRow(ctx, "SELECT puballtables FROM pg_publication WHERE pubname = $1", t.s.publication).Scan(&allTables)
	exists := err == nil
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("pgcdc: look up publication %s: %w", t.s.publication, err)
	}
	name := pgx.Identifier{t.s.publication}.Sanitize()
	switch t.s.publicationMode {
	case publicationDisabled:
		if !exists {
			return fmt.Errorf("pgcdc: publication %s does not exist and publication.autocreate.mode is disabled; create it (CREATE PUBLICATION %s FOR ...)", t.s.publication, name)
		}
	case publicationAllTables:
		if !exists {
			if _, err := t.conn.Exec(ctx, "CREATE PUBLICATION "+name+" FOR ALL TABLES"); err != nil {
				return fmt.Errorf("pgcdc: create publication %s for all tables: %w", t.s.publication, err)
			}
			t.log.Info("pgcdc: created the publication for all tables", "publication", t.s.publication)
		}
	case publicationFiltered:
		return t.filteredPublication(ctx, name, exists, allTables)
	}
	return nil
}

// filteredPublication creates the publication for the included tables, or
// resets an existing one to them (Debezium's filtered mode).
func (t *Task) filteredPublication(ctx context.Context, name string, exists, allTables bool) error {
	tables, err := listTables(ctx, t.conn, t.s)
	if err != nil {
		return err
	}
	list := make([]string, len(tables))
	for i, tb := range tables {
		list[i] = pgx.Identifier{tb.schema, tb.name}.Sanitize()
	}
	var sql string
	switch {
	case !exists && len(list) == 0:
		sql = "CREATE PUBLICATION " + name
	case !exists:
		sql = "CREATE PUBLICATION " + name + " FOR TABLE " + strings.Join(list, ", ")
	case allTables:
		return fmt.Errorf("pgcdc: publication %s is FOR ALL TABLES, but publication.autocreate.mode is filtered; drop it or use all_tables", t.s.publication)
	case len(list) == 0:
		return nil
	default:
		sql = "ALTER PUBLICATION " + name + " SET TABLE " + strings.Join(list, ", ")
	}
	if _, err := t.conn.Exec(ctx, sql); err != nil {
		return fmt.Errorf("pgcdc: publication %s: %s: %w", t.s.publication, sql, err)
	}
	return nil
}

// errSlotActive: another connection streams the slot, often this task's
// own previous walsender that the server has not yet seen die (it notices
// within wal_sender_timeout).
var errSlotActive = errors.New("in use by another connection (a previous session the server has not yet closed, or another connector)")

// slotState is the slot as pg_replication_slots shows it.
type slotState struct {
	exists    bool
	confirmed uint64
}

func (t *Task) slotInfo(ctx context.Context) (slotState, error) {
	var plugin, db string
	var active bool
	var confirmed *string
	err := t.conn.QueryRow(ctx, `SELECT coalesce(plugin, ''), coalesce(database, ''), active, confirmed_flush_lsn::text
		FROM pg_replication_slots WHERE slot_name = $1`, t.s.slot).Scan(&plugin, &db, &active, &confirmed)
	if errors.Is(err, pgx.ErrNoRows) {
		return slotState{}, nil
	}
	if err != nil {
		return slotState{}, fmt.Errorf("pgcdc: look up slot %s: %w", t.s.slot, err)
	}
	if plugin != "pgoutput" || db != t.s.dbname {
		return slotState{}, fmt.Errorf("pgcdc: slot %s exists for plugin %q on database %q; it needs pgoutput on %q (choose another slot.name)", t.s.slot, plugin, db, t.s.dbname)
	}
	if active {
		return slotState{}, fmt.Errorf("pgcdc: slot %s: %w", t.s.slot, errSlotActive)
	}
	st := slotState{exists: true}
	if confirmed != nil {
		lsn, err := pglogrepl.ParseLSN(*confirmed)
		if err != nil {
			return slotState{}, fmt.Errorf("pgcdc: slot %s confirmed_flush_lsn %q: %w", t.s.slot, *confirmed, err)
		}
		st.confirmed = uint64(lsn)
	}
	return st, nil
}

func (t *Task) dropSlot(ctx context.Context) error {
	if err := pglogrepl.DropReplicationSlot(ctx, t.repl, t.s.slot, pglogrepl.DropReplicationSlotOptions{Wait: true}); err != nil {
		return fmt.Errorf("pgcdc: drop slot %s to snapshot anew: %w", t.s.slot, err)
	}
	t.log.Info("pgcdc: dropped the existing slot to take a snapshot from a new one", "slot", t.s.slot)
	return nil
}

// tableRef names a table.
type tableRef struct {
	oid          uint32
	schema, name string
}

// listTables is every ordinary table (partitions' leaves included, their
// parents not: pgoutput sends a partition's changes under its own name)
// outside the system schemas that table.include/exclude.list keep, sorted.
func listTables(ctx context.Context, q querier, s *settings) ([]tableRef, error) {
	rows, err := q.Query(ctx, `SELECT c.oid, n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.relkind = 'r' AND n.nspname NOT IN ('pg_catalog', 'information_schema')
		AND n.nspname NOT LIKE 'pg_toast%' AND n.nspname NOT LIKE 'pg_temp%'
		ORDER BY n.nspname, c.relname`)
	if err != nil {
		return nil, fmt.Errorf("pgcdc: list tables: %w", err)
	}
	var out []tableRef
	for rows.Next() {
		var r tableRef
		if err := rows.Scan(&r.oid, &r.schema, &r.name); err != nil {
			return nil, fmt.Errorf("pgcdc: list tables: %w", err)
		}
		if s.tables.matches(r.schema + "." + r.name) {
			out = append(out, r)
		}
	}
	return out, rows.Err()
}

type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// tableColumns reads a table's columns from the catalog, in attnum order,
// without dropped and generated ones (pgoutput does not send them).
func tableColumns(ctx context.Context, q querier, oid uint32) ([]catalogColumn, error) {
	rows, err := q.Query(ctx, `SELECT a.attname, a.atttypid, a.atttypmod, a.attnotnull,
		coalesce((SELECT k.n FROM pg_index i, unnest(i.indkey::int2[]) WITH ORDINALITY k(att, n)
			WHERE i.indrelid = a.attrelid AND i.indisprimary AND k.att = a.attnum), 0)
		FROM pg_attribute a WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
		ORDER BY a.attnum`, oid)
	if err != nil {
		return nil, fmt.Errorf("pgcdc: read columns of relation %d: %w", oid, err)
	}
	var out []catalogColumn
	for rows.Next() {
		var c catalogColumn
		var pos int64
		if err := rows.Scan(&c.name, &c.oid, &c.typmod, &c.notNull, &pos); err != nil {
			return nil, fmt.Errorf("pgcdc: read columns of relation %d: %w", oid, err)
		}
		c.keyPos = int(pos)
		out = append(out, c)
	}
	return out, rows.Err()
}

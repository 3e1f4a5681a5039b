package jdbc

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
)

// dbKind is which database a connection speaks to.
type dbKind int

const (
	postgres dbKind = iota + 1
	sqlite
)

func (k dbKind) String() string {
	switch k {
	case postgres:
		return "PostgreSQL"
	case sqlite:
		return "SQLite"
	}
	return "unknown"
}

// tableID names a table: schema may be empty (PostgreSQL's search_path
// decides; SQLite has none).
type tableID struct {
	schema, name string
}

func (t tableID) String() string {
	if t.schema == "" {
		return t.name
	}
	return t.schema + "." + t.name
}

// parseTableID reads "table" or "schema.table".
func parseTableID(s string) tableID {
	if schema, name, ok := strings.Cut(s, "."); ok {
		return tableID{schema: schema, name: name}
	}
	return tableID{name: s}
}

// dialect is what differs between PostgreSQL and SQLite: quoting,
// placeholders, metadata queries, SQL types, upsert syntax and how
// timestamps compare (Confluent's DatabaseDialect, for two databases).
type dialect struct {
	kind dbKind
	// quote is quote.sql.identifiers=always.
	quote bool
	// loc is db.timezone: the zone of timestamps that carry none.
	loc *time.Location
}

func (d *dialect) ident(s string) string {
	if !d.quote {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

func (d *dialect) table(t tableID) string {
	if t.schema == "" {
		return d.ident(t.name)
	}
	return d.ident(t.schema) + "." + d.ident(t.name)
}

// placeholder is the i-th (1-based) bind parameter.
func (d *dialect) placeholder(i int) string {
	if d.kind == postgres {
		return fmt.Sprintf("$%d", i)
	}
	return "?"
}

// sqliteTimeLayout is how timestamps are written to and compared in
// SQLite, which has no timestamp type: SQLite's own text form with
// milliseconds, in db.timezone.
const sqliteTimeLayout = "2006-01-02 15:04:05.000"

// timestampExpr is the expression the timestamp columns compare and sort
// by: COALESCE over several columns, as Confluent; in SQLite normalised to
// one text form so that text written as '... 12:00:00' and '... 12:00:00.000'
// compare equal.
func (d *dialect) timestampExpr(cols []string) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = d.ident(c)
	}
	expr := parts[0]
	if len(parts) > 1 {
		expr = "COALESCE(" + strings.Join(parts, ",") + ")"
	}
	if d.kind == sqlite {
		return "strftime('%Y-%m-%d %H:%M:%f', " + expr + ")"
	}
	return expr
}

// timestampParam binds a timestamp for comparison with timestampExpr.
// PostgreSQL's driver writes the wall clock for `timestamp` columns and the
// instant for `timestamptz`, so the time is given in db.timezone.
func (d *dialect) timestampParam(t time.Time) any {
	if d.kind == sqlite {
		return t.In(d.loc).Format(sqliteTimeLayout)
	}
	return t.In(d.loc)
}

// offsetTime is a timestamp read from a row as it is compared in queries:
// SQLite compares at millisecond precision.
func (d *dialect) offsetTime(t time.Time) time.Time {
	if d.kind == sqlite {
		return t.Truncate(time.Millisecond)
	}
	return t
}

// now is the database's current time (Confluent asks the database, so a
// skewed worker clock cannot skip rows); SQLite runs in this process, so its
// clock is ours.
func (d *dialect) now(ctx context.Context, db *sql.DB) (time.Time, error) {
	if d.kind == sqlite {
		return time.Now(), nil
	}
	var t time.Time
	if err := db.QueryRowContext(ctx, "SELECT CURRENT_TIMESTAMP").Scan(&t); err != nil {
		return time.Time{}, fmt.Errorf("jdbc: read the database's current time: %w", err)
	}
	return t, nil
}

// columnMeta is what the catalog says of a column.
type columnMeta struct {
	name     string
	typeName string // upper case, as declared (SQLite) or udt name (PostgreSQL)
	nullable bool
}

// listTables lists the tables of the given types (TABLE, VIEW) the user
// may read, skipping the databases' own catalogs; schemaPattern (a LIKE
// pattern, PostgreSQL only) narrows them.
func (d *dialect) listTables(ctx context.Context, db *sql.DB, types []string, schemaPattern string) ([]tableID, error) {
	if d.kind == sqlite {
		return d.listSqliteTables(ctx, db, types)
	}
	var pgTypes []string
	for _, t := range types {
		switch strings.ToUpper(t) {
		case "TABLE":
			pgTypes = append(pgTypes, "'BASE TABLE'")
		case "VIEW":
			pgTypes = append(pgTypes, "'VIEW'")
		}
	}
	q := `SELECT table_schema, table_name FROM information_schema.tables
WHERE table_type IN (` + strings.Join(pgTypes, ",") + `)
AND table_schema NOT IN ('pg_catalog','information_schema') AND table_schema NOT LIKE 'pg_toast%'`
	args := []any{}
	if schemaPattern != "" {
		q += " AND table_schema LIKE $1"
		args = append(args, schemaPattern)
	}
	q += " ORDER BY table_schema, table_name"
	return scanTables(ctx, db, q, args...)
}

func (d *dialect) listSqliteTables(ctx context.Context, db *sql.DB, types []string) ([]tableID, error) {
	var kinds []string
	for _, t := range types {
		kinds = append(kinds, "'"+strings.ToLower(t)+"'")
	}
	q := `SELECT '', name FROM sqlite_master WHERE type IN (` + strings.Join(kinds, ",") + `)
AND name NOT LIKE 'sqlite\_%' ESCAPE '\' ORDER BY name`
	return scanTables(ctx, db, q)
}

func scanTables(ctx context.Context, db *sql.DB, q string, args ...any) ([]tableID, error) {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("jdbc: list tables: %w", err)
	}
	defer rows.Close()
	var out []tableID
	for rows.Next() {
		var t tableID
		if err := rows.Scan(&t.schema, &t.name); err != nil {
			return nil, fmt.Errorf("jdbc: list tables: %w", err)
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// columns reads a table's columns from the catalog, in order; none when
// the table does not exist.
func (d *dialect) columns(ctx context.Context, q queryer, t tableID) ([]columnMeta, error) {
	var rows *sql.Rows
	var err error
	if d.kind == sqlite {
		rows, err = q.QueryContext(ctx, `SELECT name, upper(type), "notnull" = 0 FROM pragma_table_info(?)`, t.name)
	} else {
		schema := "current_schema()"
		args := []any{t.name}
		if t.schema != "" {
			schema = "$2"
			args = append(args, t.schema)
		}
		rows, err = q.QueryContext(ctx, `SELECT column_name, upper(udt_name), is_nullable = 'YES'
FROM information_schema.columns WHERE table_name = $1 AND table_schema = `+schema+` ORDER BY ordinal_position`, args...)
	}
	if err != nil {
		return nil, fmt.Errorf("jdbc: read the columns of %s: %w", t, err)
	}
	defer rows.Close()
	var out []columnMeta
	for rows.Next() {
		var c columnMeta
		if err := rows.Scan(&c.name, &c.typeName, &c.nullable); err != nil {
			return nil, fmt.Errorf("jdbc: read the columns of %s: %w", t, err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// queryer is a *sql.DB or a *sql.Tx.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

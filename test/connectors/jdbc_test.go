package connectors

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kgo"
	_ "modernc.org/sqlite" // the "sqlite" database/sql driver, to read the sink's file

	"github.com/samsa-io/samsa/internal/connectors/pgtest"
)

// items is the source table: the types the JDBC connectors map (integer,
// text, numeric, timestamp, boolean, a nullable column). Timestamps are at
// millisecond precision, Connect's Timestamp's.
const itemsDDL = `CREATE TABLE items (
	id serial PRIMARY KEY,
	name text NOT NULL,
	price numeric(12,3) NOT NULL,
	created timestamp NOT NULL,
	active boolean NOT NULL,
	qty integer NOT NULL,
	note text,
	updated_at timestamp NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp()))`

// itemsQuery reads a copy of items in one text form whichever database it
// is in (PostgreSQL; SQLite's values are normalised to it by sqliteRows).
const itemsQuery = `SELECT id::text, name, price::text, to_char(created, 'YYYY-MM-DD HH24:MI:SS.MS'), active::text,
	qty::text, coalesce(note, '<null>'), to_char(updated_at, 'YYYY-MM-DD HH24:MI:SS.MS') FROM %s t ORDER BY t.id`

func insertItems(t *testing.T, pg *pgtest.Server, from, to int) {
	t.Helper()
	var b strings.Builder
	b.WriteString("INSERT INTO items (name, price, created, active, qty, note) VALUES ")
	for i := from; i < to; i++ {
		if i > from {
			b.WriteString(", ")
		}
		note := "NULL"
		if i%3 != 0 {
			note = fmt.Sprintf("'note ''%d'' ü'", i)
		}
		fmt.Fprintf(&b, "('item-%d', %d.%03d, timestamp '2024-01-02 03:04:05.123' + interval '%d minutes 17 milliseconds', %t, %d, %s)",
			i, i*7, i%1000, i, i%2 == 0, -i, note)
	}
	if _, err := pg.Exec(t.Context(), "source", b.String()); err != nil {
		t.Fatal(err)
	}
}

func pgRows(t *testing.T, pg *pgtest.Server, database, table string) [][]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, pg.DSN(database))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(ctx, fmt.Sprintf(itemsQuery, table))
	if err != nil {
		if strings.Contains(err.Error(), "does not exist") {
			return nil // the sink has not created it yet
		}
		t.Fatal(err)
	}
	var out [][]string
	for rows.Next() {
		r := make([]string, 8)
		ptrs := make([]any, 8)
		for i := range r {
			ptrs[i] = &r[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		r[2] = fixed3(t, r[2])
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// fixed3 writes a decimal with three places: SQLite may keep NUMERIC
// values as REAL, so both sides are compared in one form.
func fixed3(t *testing.T, s string) string {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("price %q: %v", s, err)
	}
	return strconv.FormatFloat(f, 'f', 3, 64)
}

func sqliteRows(t *testing.T, path string) [][]string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.QueryContext(t.Context(), `SELECT id, name, price, created, active, qty, note, updated_at FROM items ORDER BY id`)
	if err != nil {
		if strings.Contains(err.Error(), "no such table") || strings.Contains(err.Error(), "unable to open") {
			return nil
		}
		t.Fatal(err)
	}
	defer rows.Close()
	var out [][]string
	for rows.Next() {
		vals := make([]any, 8)
		ptrs := make([]any, 8)
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		r := make([]string, 8)
		for i, v := range vals {
			switch v := v.(type) {
			case nil:
				r[i] = "<null>"
			case []byte:
				r[i] = string(v)
			case time.Time: // the driver parses declared TIMESTAMP columns
				r[i] = v.UTC().Format("2006-01-02 15:04:05.000")
			default:
				r[i] = fmt.Sprint(v)
			}
		}
		r[2] = fixed3(t, r[2])
		switch r[4] { // BOOLEAN is stored 0/1
		case "0":
			r[4] = "false"
		case "1":
			r[4] = "true"
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestJDBCRoundTrip: PostgreSQL table -> JdbcSourceConnector
// (timestamp+incrementing) -> Kafka (JsonConverter with schemas) ->
// JdbcSinkConnector into a SQLite file (auto.create) and into another
// PostgreSQL database (upsert on the value's id). Rows are compared value
// by value; updates and new rows flow; the worker is stopped (SIGTERM) and
// a new process started, more rows inserted and updated: both targets hold
// exactly the source's rows, none twice, none missing.
func TestJDBCRoundTrip(t *testing.T) {
	pg := pgtest.Start(t)
	for _, db := range []string{"source", "target"} {
		if _, err := pg.Exec(t.Context(), "postgres", "CREATE DATABASE "+db); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := pg.Exec(t.Context(), "source", itemsDDL); err != nil {
		t.Fatal(err)
	}
	insertItems(t, pg, 1, 41)
	sqlitePath := filepath.Join(t.TempDir(), "copy.db")

	g := startGroup(t, "e2e-jdbc")
	g.create("pg-source", map[string]string{
		"connector.class":          "io.confluent.connect.jdbc.JdbcSourceConnector",
		"connection.url":           pg.JDBCURL("source"),
		"connection.user":          pg.User,
		"mode":                     "timestamp+incrementing",
		"incrementing.column.name": "id",
		"timestamp.column.name":    "updated_at",
		"table.whitelist":          "items",
		"topic.prefix":             "jdbc-",
		"poll.interval.ms":         "200",
		"batch.max.rows":           "17",
	})
	sink := func(url string, extra ...string) map[string]string {
		c := map[string]string{
			"connector.class":   "io.confluent.connect.jdbc.JdbcSinkConnector",
			"connection.url":    url,
			"topics":            "jdbc-items",
			"table.name.format": "items",
			"auto.create":       "true",
			"insert.mode":       "upsert",
			"pk.mode":           "record_value",
			"pk.fields":         "id",
			"retry.backoff.ms":  "200",
		}
		for i := 0; i+1 < len(extra); i += 2 {
			c[extra[i]] = extra[i+1]
		}
		return c
	}
	g.create("sqlite-sink", sink("jdbc:sqlite:"+sqlitePath))
	g.create("pg-sink", sink(pg.JDBCURL("target"), "connection.user", pg.User))
	for _, name := range []string{"pg-source", "sqlite-sink", "pg-sink"} {
		g.running(name, 1)
	}

	same := func(stage string) {
		t.Helper()
		var want [][]string
		eventually(t, 60*time.Second, stage+": both targets equal the source", func() (bool, string) {
			for _, name := range []string{"pg-source", "sqlite-sink", "pg-sink"} {
				g.failIfFailed(name)
			}
			want = pgRows(t, pg, "source", "items")
			if d := cmp.Diff(want, pgRows(t, pg, "target", "items")); d != "" {
				return false, "postgres target (-source +target):\n" + d
			}
			if d := cmp.Diff(want, sqliteRows(t, sqlitePath)); d != "" {
				return false, "sqlite target (-source +target):\n" + d
			}
			return true, ""
		})
		t.Logf("%s: %d rows equal in both targets", stage, len(want))
	}
	same("initial load")

	// Updates (a later updated_at) and new rows flow.
	if _, err := pg.Exec(t.Context(), "source", `UPDATE items SET name = name || '-v2', price = price + 0.5, active = NOT active,
		note = NULL, updated_at = date_trunc('milliseconds', clock_timestamp()) WHERE id % 4 = 1`); err != nil {
		t.Fatal(err)
	}
	insertItems(t, pg, 41, 61)
	same("updates and new rows")

	// A new worker process after an orderly stop resumes from the stored
	// offsets: the source does not start over, the sinks do not lose rows.
	// Wait for the source's periodic offset commit to cover every row read,
	// so this tests the restart alone (TestCleanStopCommitsOffsets tests the
	// commit a stop makes).
	eventually(t, 30*time.Second, "the source's offsets committed", func() (bool, string) {
		var offs struct {
			Offsets []struct {
				Offset struct {
					Incrementing int64 `json:"incrementing"`
				} `json:"offset"`
			} `json:"offsets"`
		}
		g.call("GET", "/connectors/pg-source/offsets", nil, &offs)
		return len(offs.Offsets) == 1 && offs.Offsets[0].Offset.Incrementing == 60, fmt.Sprintf("%+v", offs)
	})
	g.stop(g.workers[0])
	insertItems(t, pg, 61, 81)
	g.start()
	for _, name := range []string{"pg-source", "sqlite-sink", "pg-sink"} {
		g.running(name, 1)
	}
	if _, err := pg.Exec(t.Context(), "source", `UPDATE items SET qty = qty * 10,
		updated_at = date_trunc('milliseconds', clock_timestamp()) WHERE id % 5 = 0`); err != nil {
		t.Fatal(err)
	}
	insertItems(t, pg, 81, 101)
	same("after the worker's restart")

	// Every row version reached the topic once: the new worker resumed
	// from the stored offsets. (The sinks' consumer offsets are not
	// committed on a clean stop either, see TestCleanStopCommitsOffsets:
	// they write again what they had, which upsert makes harmless, as the
	// comparison above shows.)
	// 126 versions: 40 rows, 10 updated, 20 + 20 new, 16 updated, 20 new.
	const versions = 126
	seen := map[[2]int64]int{}
	recs := readAll(t, "jdbc-items", 30*time.Second, func(rs []*kgo.Record) bool {
		clear(seen)
		for _, r := range rs {
			var v struct {
				Payload struct {
					ID        int64 `json:"id"`
					UpdatedAt int64 `json:"updated_at"`
				} `json:"payload"`
			}
			if err := json.Unmarshal(r.Value, &v); err != nil || v.Payload.ID == 0 {
				t.Fatalf("jdbc-items offset %d: not a row as JsonConverter writes it (%v): %s", r.Offset, err, r.Value)
			}
			seen[[2]int64{v.Payload.ID, v.Payload.UpdatedAt}]++
		}
		return len(seen) >= versions
	})
	if len(seen) != versions || len(recs) != versions {
		t.Fatalf("jdbc-items: %d records of %d row versions, want %d each once", len(recs), len(seen), versions)
	}
}

package jdbc

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver
	_ "modernc.org/sqlite"             // registers the "sqlite" database/sql driver (no cgo)
)

// The dialect names Confluent's dialect.name accepts for the two databases
// Samsa's connector speaks.
const (
	postgresDialectName = "PostgreSqlDatabaseDialect"
	sqliteDialectName   = "SqliteDatabaseDialect"
)

// connection is what connection.url (and user, password) say, in the Go
// drivers' terms.
type connection struct {
	kind   dbKind
	driver string // database/sql driver name
	dsn    string
}

// pgURLParams maps the PostgreSQL JDBC driver's URL parameters to libpq's
// (pgx reads libpq's); a parameter not here is refused rather than dropped.
var pgURLParams = map[string]string{
	"user":             "user",
	"password":         "password",
	"sslmode":          "sslmode",
	"sslrootcert":      "sslrootcert",
	"sslcert":          "sslcert",
	"sslkey":           "sslkey",
	"applicationname":  "application_name",
	"connecttimeout":   "connect_timeout",
	"currentschema":    "search_path",
	"options":          "options",
	"targetservertype": "target_session_attrs",
}

// parseConnectionURL reads a JDBC URL: jdbc:postgresql://host:port/db?...,
// jdbc:postgresql:db, jdbc:sqlite:/path/file.db. user and password, when
// set, override the URL's.
func parseConnectionURL(raw, user, password string) (connection, error) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(raw), "jdbc:")
	if !ok {
		return connection{}, fmt.Errorf("connection.url %q is not a JDBC URL (it must start with jdbc:)", raw)
	}
	scheme, tail, _ := strings.Cut(rest, ":")
	switch scheme {
	case "postgresql":
		return parsePostgresURL(tail, user, password)
	case "sqlite":
		return parseSqliteURL(tail, user, password)
	}
	return connection{}, fmt.Errorf("connection.url %q: the JDBC subprotocol %q is not supported; Samsa's JDBC connectors speak jdbc:postgresql and jdbc:sqlite", redactURL(raw), scheme)
}

func parsePostgresURL(tail, user, password string) (connection, error) {
	hostPart, dbPart := "localhost:5432", tail
	if strings.HasPrefix(tail, "//") {
		h, d, found := strings.Cut(tail[2:], "/")
		if !found {
			d = ""
		}
		hostPart, dbPart = h, d
		if hostPart == "" {
			hostPart = "localhost:5432"
		}
	}
	db, query, _ := strings.Cut(dbPart, "?")
	params, err := url.ParseQuery(query)
	if err != nil {
		return connection{}, fmt.Errorf("connection.url: bad parameters %q: %w", query, err)
	}
	out := url.Values{}
	for k, vs := range params {
		libpq, ok := pgURLParams[strings.ToLower(k)]
		if !ok {
			return connection{}, fmt.Errorf("connection.url: the PostgreSQL JDBC parameter %q is not supported (supported: user, password, sslmode, sslrootcert, sslcert, sslkey, ApplicationName, connectTimeout, currentSchema, options, targetServerType)", k)
		}
		if libpq == "search_path" {
			// pgx passes unknown keys to the server as run-time parameters.
			out.Set("search_path", vs[len(vs)-1])
			continue
		}
		out.Set(libpq, vs[len(vs)-1])
	}
	if user != "" {
		out.Set("user", user)
	}
	if password != "" {
		out.Set("password", password)
	}
	if !strings.Contains(hostPart, ":") && !strings.HasPrefix(hostPart, "[") {
		hostPart += ":5432"
	}
	u := url.URL{Scheme: "postgres", Host: hostPart, Path: "/" + db, RawQuery: out.Encode()}
	return connection{kind: postgres, driver: "pgx", dsn: u.String()}, nil
}

func parseSqliteURL(path, user, password string) (connection, error) {
	path, _, _ = strings.Cut(path, "?")
	if path == "" {
		return connection{}, errors.New("connection.url: jdbc:sqlite: needs a file path (jdbc:sqlite:/path/file.db)")
	}
	if path == ":memory:" || strings.HasPrefix(path, "file::memory:") {
		return connection{}, errors.New("connection.url: jdbc:sqlite::memory: is not supported: every connection would see its own empty database")
	}
	if user != "" || password != "" {
		return connection{}, errors.New("connection.user and connection.password do not apply to SQLite, which has no users; leave them unset")
	}
	// busy_timeout: a writer in another process holds the file's lock for
	// a moment; wait for it instead of failing at once.
	dsn := "file:" + path + "?_pragma=busy_timeout(10000)&_txlock=immediate"
	return connection{kind: sqlite, driver: "sqlite", dsn: dsn}, nil
}

// redactURL drops a URL's parameters (they may hold a password) for messages.
func redactURL(raw string) string {
	if i := strings.IndexByte(raw, '?'); i >= 0 {
		return raw[:i] + "?..."
	}
	return raw
}

// checkDialectName refuses a dialect.name that is not the URL's database.
func checkDialectName(name string, kind dbKind) error {
	switch name {
	case "":
		return nil
	case postgresDialectName:
		if kind == postgres {
			return nil
		}
	case sqliteDialectName:
		if kind == sqlite {
			return nil
		}
	default:
		return fmt.Errorf("dialect.name %q is not supported; Samsa's JDBC connectors have %s and %s", name, postgresDialectName, sqliteDialectName)
	}
	return fmt.Errorf("dialect.name %s does not match connection.url, which names a %s database", name, kind)
}

// openDB opens and pings the database, trying connection.attempts times
// with connection.backoff.ms between tries, as Confluent's
// CachedConnectionProvider does.
func openDB(ctx context.Context, c connection, attempts int, backoff time.Duration) (*sql.DB, error) {
	db, err := sql.Open(c.driver, c.dsn)
	if err != nil {
		return nil, fmt.Errorf("jdbc: open %s database: %w", c.kind, err)
	}
	attempts = max(attempts, 1)
	for i := 1; ; i++ {
		pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err = db.PingContext(pctx)
		cancel()
		if err == nil {
			return db, nil
		}
		if i >= attempts || ctx.Err() != nil {
			db.Close()
			return nil, fmt.Errorf("jdbc: connect to the %s database failed after %d attempt(s): %w", c.kind, i, err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
	}
}

package jdbc

import (
	"fmt"
	"strings"
	"time"

	"github.com/samsa-io/samsa/connect"
)

// Config names shared by the source and the sink (Confluent's).
const (
	cfgConnectionURL      = "connection.url"
	cfgConnectionUser     = "connection.user"
	cfgConnectionPassword = "connection.password"
	cfgConnectionAttempts = "connection.attempts"
	cfgConnectionBackoff  = "connection.backoff.ms"
	cfgDialectName        = "dialect.name"
	cfgDBTimezone         = "db.timezone"
	cfgQuoteIdentifiers   = "quote.sql.identifiers"
	cfgTableTypes         = "table.types"
)

// defineConnection adds the connection group to a ConfigDef.
func defineConnection(d *connect.ConfigDef) *connect.ConfigDef {
	return d.
		Define(connect.ConfigKey{Name: cfgConnectionURL, Type: connect.TypeString, Default: connect.NoDefault, Validator: connect.NonEmptyString{}, Importance: connect.High, Group: "Database",
			Documentation: "JDBC connection URL: jdbc:postgresql://host:port/database?user=... or jdbc:sqlite:/path/file.db."}).
		Define(connect.ConfigKey{Name: cfgConnectionUser, Type: connect.TypeString, Default: nil, Importance: connect.High, Group: "Database",
			Documentation: "JDBC connection user (overrides the URL's user)."}).
		Define(connect.ConfigKey{Name: cfgConnectionPassword, Type: connect.TypePassword, Default: nil, Importance: connect.High, Group: "Database",
			Documentation: "JDBC connection password (overrides the URL's password)."}).
		Define(connect.ConfigKey{Name: cfgConnectionAttempts, Type: connect.TypeInt, Default: int32(3), Validator: connect.AtLeast(1), Importance: connect.Low, Group: "Database",
			Documentation: "Maximum number of attempts to connect to the database."}).
		Define(connect.ConfigKey{Name: cfgConnectionBackoff, Type: connect.TypeLong, Default: int64(10000), Validator: connect.AtLeast(0), Importance: connect.Low, Group: "Database",
			Documentation: "Backoff time in milliseconds between connection attempts."}).
		Define(connect.ConfigKey{Name: cfgDialectName, Type: connect.TypeString, Default: "", Importance: connect.Low, Group: "Database",
			Validator:     connect.OneOf{Values: []string{"", postgresDialectName, sqliteDialectName}},
			Recommended:   []string{postgresDialectName, sqliteDialectName},
			Documentation: "The database dialect; empty chooses it from connection.url."}).
		Define(connect.ConfigKey{Name: cfgDBTimezone, Type: connect.TypeString, Default: "UTC", Validator: connect.ValidatorFunc(validTimezone), Importance: connect.Medium, Group: "Database",
			Documentation: "Time zone of timestamps stored without one (TIMESTAMP WITHOUT TIME ZONE, SQLite text)."}).
		Define(connect.ConfigKey{Name: cfgQuoteIdentifiers, Type: connect.TypeString, Default: "always", Importance: connect.Medium, Group: "Database",
			Validator:     connect.OneOf{Values: []string{"always", "never"}, CaseInsensitive: true},
			Documentation: "Whether table and column names are quoted in SQL statements: always or never."})
}

func validTimezone(_ string, v any) error {
	s, _ := v.(string)
	if _, err := time.LoadLocation(s); err != nil || s == "" {
		return fmt.Errorf("Invalid time zone identifier")
	}
	return nil
}

// connectionSettings is the parsed connection group.
type connectionSettings struct {
	conn     connection
	attempts int
	backoff  time.Duration
	dialect  *dialect
}

func parseConnectionSettings(c connect.Config) (connectionSettings, error) {
	conn, err := parseConnectionURL(c.String(cfgConnectionURL), c.String(cfgConnectionUser), c.Password(cfgConnectionPassword))
	if err != nil {
		return connectionSettings{}, err
	}
	if err := checkDialectName(c.String(cfgDialectName), conn.kind); err != nil {
		return connectionSettings{}, err
	}
	loc, err := time.LoadLocation(c.String(cfgDBTimezone))
	if err != nil {
		return connectionSettings{}, fmt.Errorf("db.timezone: %w", err)
	}
	return connectionSettings{
		conn:     conn,
		attempts: int(c.Int(cfgConnectionAttempts)),
		backoff:  time.Duration(c.Int(cfgConnectionBackoff)) * time.Millisecond,
		dialect:  &dialect{kind: conn.kind, quote: strings.EqualFold(c.String(cfgQuoteIdentifiers), "always"), loc: loc},
	}, nil
}

// unsupported are Confluent configs Samsa's connectors do not have; a config
// that sets one is refused, so nothing set is silently ignored.
var unsupportedSource = map[string]string{
	"catalog.pattern":                           "PostgreSQL and SQLite have no catalogs to choose between",
	"timestamp.granularity":                     "timestamps are always read as Connect Timestamp values (connect_logical)",
	"transaction.isolation.mode":                "queries run at the database's default isolation level",
	"numeric.precision.mapping":                 "it is deprecated in Confluent's connector; use numeric.mapping",
	"db.timezone.ignore":                        "not a Confluent config",
	"timestamp.column.mapping":                  "not supported",
	"incrementing.column.mapping":               "not supported",
	"table.monitoring.startup.polling.limit.ms": "tables are listed once at start, then every table.poll.interval.ms",
	"query.retry.attempts":                      "a failed query fails the poll and the runtime's retry applies",
	"trim.sensitive.log":                        "queries are not logged with values",
	"redact.sensitive.logs":                     "queries are not logged with values",
}

var unsupportedSink = map[string]string{
	"catalog.pattern":           "PostgreSQL and SQLite have no catalogs to choose between",
	"db.timezone.ignore":        "not a Confluent config",
	"mssql.use.merge.holdlock":  "SQL Server only",
	"trim.sensitive.log":        "statements are not logged with values",
	"table.name.normalize":      "not supported",
	"timestamp.precision.mode":  "timestamps are written at Connect's millisecond precision",
	"date.timezone":             "dates are written as the day Connect's Date names",
	"replace.null.with.default": "null values are written as NULL",
	"write.string.value.as":     "values must be structs",
}

// refuseUnsupported names the first unsupported config set.
func refuseUnsupported(props map[string]string, unsupported map[string]string) error {
	for k, why := range unsupported {
		if _, ok := props[k]; ok {
			return fmt.Errorf("%s is not supported by Samsa's JDBC connector: %s", k, why)
		}
	}
	return nil
}

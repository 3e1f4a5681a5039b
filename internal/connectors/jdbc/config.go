package jdbc

import (
	"fmt"
	"maps"
	"slices"
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

// unsupported are Confluent configs Samsa's connectors do not implement;
// a config that sets one to anything but the values that mean what Samsa
// does anyway is refused, so nothing set is silently ignored.
type unsupported struct {
	accepted []string
	why      string
}

var unsupportedSource = map[string]unsupported{
	"catalog.pattern":                           {nil, "PostgreSQL and SQLite have no catalogs to choose between"},
	"timestamp.granularity":                     {[]string{"connect_logical"}, "timestamps are read as Connect Timestamp values (connect_logical)"},
	"transaction.isolation.mode":                {[]string{"DEFAULT"}, "queries run at the database's default isolation level"},
	"numeric.precision.mapping":                 {[]string{"false"}, "it is deprecated in Confluent's connector; use numeric.mapping"},
	"timestamp.columns.mapping":                 {nil, "use timestamp.column.name"},
	"incrementing.column.mapping":               {nil, "use incrementing.column.name"},
	"max.buffer.size":                           {[]string{"0"}, "rows are read batch.max.rows at a time, not buffered"},
	"poll.linger.ms":                            {[]string{"5000"}, "rows are not buffered (max.buffer.size)"},
	"query.masked":                              {[]string{"false"}, "queries are not logged"},
	"date.calendar.system":                      {[]string{"PROLEPTIC_GREGORIAN"}, "dates use the proleptic Gregorian calendar"},
	"query.retry.attempts":                      {[]string{"-1"}, "a failed query is a retriable error and the runtime retries it"},
	"table.monitoring.startup.polling.limit.ms": {[]string{"10000"}, "Start lists the tables before it returns"},
	"jdbc.credentials.provider.class":           {nil, "use connection.user and connection.password"},
}

var unsupportedSink = map[string]unsupported{
	"date.calendar.system":            {[]string{"PROLEPTIC_GREGORIAN"}, "dates use the proleptic Gregorian calendar"},
	"replace.null.with.default":       {[]string{"true"}, "a null field with a default is written as its default"},
	"string.output.value.column.name": {[]string{"record_value"}, "values must be structs"},
	"date.timezone":                   {[]string{"UTC"}, "a Date is written as the day it names in UTC"},
	"timestamp.precision.mode":        {nil, "timestamps are written at Connect's millisecond precision"},
	"timestamp.fields.list":           {[]string{""}, "Timestamp fields are known by their schema"},
	"table.types":                     {[]string{"TABLE"}, "the sink writes to tables"},
	"trim.sensitive.log":              {[]string{"false"}, "statements are not logged with their values"},
	"mssql.use.merge.holdlock":        {[]string{"true"}, "it applies to SQL Server only"},
	"jdbc.credentials.provider.class": {nil, "use connection.user and connection.password"},
}

// refuseUnsupported names the first unsupported config set.
func refuseUnsupported(props map[string]string, list map[string]unsupported) error {
	for _, k := range slices.Sorted(maps.Keys(list)) {
		v, ok := props[k]
		if !ok || slices.ContainsFunc(list[k].accepted, func(a string) bool { return strings.EqualFold(a, strings.TrimSpace(v)) }) {
			continue
		}
		return fmt.Errorf("%s=%s is not supported by Samsa's JDBC connector: %s", k, v, list[k].why)
	}
	return nil
}

package jdbc

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/samsa-io/samsa/connect"
)

// Source configs (Confluent's JdbcSourceConnectorConfig names).
const (
	cfgMode                = "mode"
	cfgIncrementingColumn  = "incrementing.column.name"
	cfgTimestampColumns    = "timestamp.column.name"
	cfgTimestampDelay      = "timestamp.delay.interval.ms"
	cfgTimestampInitial    = "timestamp.initial"
	cfgTableWhitelist      = "table.whitelist"
	cfgTableIncludeList    = "table.include.list"
	cfgTableBlacklist      = "table.blacklist"
	cfgTableExcludeList    = "table.exclude.list"
	cfgSchemaPattern       = "schema.pattern"
	cfgQuery               = "query"
	cfgQuerySuffix         = "query.suffix"
	cfgTopicPrefix         = "topic.prefix"
	cfgPollInterval        = "poll.interval.ms"
	cfgBatchMaxRows        = "batch.max.rows"
	cfgTablePollInterval   = "table.poll.interval.ms"
	cfgValidateNonNull     = "validate.non.null"
	cfgNumericMapping      = "numeric.mapping"
	taskConfigTables       = "tables"
	modeBulk               = "bulk"
	modeIncrementing       = "incrementing"
	modeTimestamp          = "timestamp"
	modeTimestampIncrement = "timestamp+incrementing"
	// timestampInitialCurrent is timestamp.initial's "start from now".
	timestampInitialCurrent = -1
)

func sourceConfigDef() *connect.ConfigDef {
	d := defineConnection(connect.NewConfigDef())
	d.Define(connect.ConfigKey{Name: cfgMode, Type: connect.TypeString, Default: "", Importance: connect.High, Group: "Mode",
		Validator:     connect.OneOf{Values: []string{"", modeBulk, modeIncrementing, modeTimestamp, modeTimestampIncrement}},
		Recommended:   []string{modeBulk, modeIncrementing, modeTimestamp, modeTimestampIncrement},
		Documentation: "How to detect new and changed rows: bulk (the whole table each poll), incrementing (a strictly increasing column), timestamp (a modification time column), timestamp+incrementing (both)."}).
		Define(connect.ConfigKey{Name: cfgIncrementingColumn, Type: connect.TypeString, Default: "", Importance: connect.Medium, Group: "Mode",
			Documentation: "The strictly increasing column for incrementing and timestamp+incrementing modes."}).
		Define(connect.ConfigKey{Name: cfgTimestampColumns, Type: connect.TypeList, Default: []string{}, Importance: connect.Medium, Group: "Mode",
			Documentation: "Timestamp column(s) for timestamp modes; with several, the first non-null (COALESCE) counts."}).
		Define(connect.ConfigKey{Name: cfgTimestampDelay, Type: connect.TypeLong, Default: int64(0), Validator: connect.AtLeast(0), Importance: connect.High, Group: "Mode",
			Documentation: "How long after a row's timestamp it is read, so transactions in flight with earlier timestamps can commit."}).
		Define(connect.ConfigKey{Name: cfgTimestampInitial, Type: connect.TypeLong, Default: nil, Importance: connect.Low, Group: "Mode",
			Documentation: "Epoch milliseconds to start timestamp modes from when no offset is stored; -1 is the current time; unset is the epoch."}).
		Define(connect.ConfigKey{Name: cfgValidateNonNull, Type: connect.TypeBoolean, Default: true, Importance: connect.Low, Group: "Mode",
			Documentation: "Refuse incrementing and timestamp columns that are nullable."}).
		Define(connect.ConfigKey{Name: cfgQuery, Type: connect.TypeString, Default: "", Importance: connect.Medium, Group: "Mode",
			Documentation: "A query to run instead of copying tables; in incrementing and timestamp modes the connector appends its WHERE clause, so the query must not have one."}).
		Define(connect.ConfigKey{Name: cfgQuerySuffix, Type: connect.TypeString, Default: "", Importance: connect.Low, Group: "Mode",
			Documentation: "Text appended to every query the connector runs."}).
		Define(connect.ConfigKey{Name: cfgTableWhitelist, Type: connect.TypeList, Default: []string{}, Importance: connect.Medium, Group: "Database",
			Documentation: "Tables to copy (table or schema.table); empty copies every table. Deprecated name of table.include.list."}).
		Define(connect.ConfigKey{Name: cfgTableIncludeList, Type: connect.TypeList, Default: []string{}, Importance: connect.Medium, Group: "Database",
			Documentation: "Tables to copy (table or schema.table); empty copies every table."}).
		Define(connect.ConfigKey{Name: cfgTableBlacklist, Type: connect.TypeList, Default: []string{}, Importance: connect.Medium, Group: "Database",
			Documentation: "Tables not to copy. Deprecated name of table.exclude.list."}).
		Define(connect.ConfigKey{Name: cfgTableExcludeList, Type: connect.TypeList, Default: []string{}, Importance: connect.Medium, Group: "Database",
			Documentation: "Tables not to copy."}).
		Define(connect.ConfigKey{Name: cfgSchemaPattern, Type: connect.TypeString, Default: nil, Importance: connect.Medium, Group: "Database",
			Documentation: "A LIKE pattern on PostgreSQL schema names of the tables to copy; unset is every schema."}).
		Define(connect.ConfigKey{Name: cfgTableTypes, Type: connect.TypeList, Default: []string{"TABLE"}, Importance: connect.Low, Group: "Database",
			Validator:     connect.ValidatorFunc(validTableTypes),
			Documentation: "Table types to copy: TABLE, VIEW."}).
		Define(connect.ConfigKey{Name: cfgNumericMapping, Type: connect.TypeString, Default: nil, Importance: connect.Low, Group: "Database",
			Validator:     connect.ValidatorFunc(validNumericMapping),
			Recommended:   []string{numericMappingNone, numericMappingBestFit},
			Documentation: "How NUMERIC columns map: none (Decimal) or best_fit (the smallest integer, or FLOAT64, when precision allows)."}).
		Define(connect.ConfigKey{Name: cfgTablePollInterval, Type: connect.TypeLong, Default: int64(60000), Validator: connect.AtLeast(0), Importance: connect.Low, Group: "Connector",
			Documentation: "How often to look for new or dropped tables, in milliseconds."}).
		Define(connect.ConfigKey{Name: cfgPollInterval, Type: connect.TypeInt, Default: int32(5000), Validator: connect.AtLeast(1), Importance: connect.High, Group: "Connector",
			Documentation: "How often to poll each table for new data, in milliseconds."}).
		Define(connect.ConfigKey{Name: cfgBatchMaxRows, Type: connect.TypeInt, Default: int32(1000), Validator: connect.AtLeast(1), Importance: connect.Low, Group: "Connector",
			Documentation: "Maximum number of rows in one poll."}).
		Define(connect.ConfigKey{Name: cfgTopicPrefix, Type: connect.TypeString, Default: connect.NoDefault, Importance: connect.High, Group: "Connector",
			Documentation: "Prefix of the topic names: the topic is the prefix and the table name, or the prefix alone in query mode."})
	return d
}

func validTableTypes(_ string, v any) error {
	l, _ := v.([]string)
	if len(l) == 0 {
		return errors.New("at least one table type is needed")
	}
	for _, t := range l {
		if u := strings.ToUpper(t); u != "TABLE" && u != "VIEW" {
			return fmt.Errorf("table type %s is not supported (TABLE, VIEW)", t)
		}
	}
	return nil
}

func validNumericMapping(_ string, v any) error {
	s, _ := v.(string)
	switch s {
	case "", numericMappingNone, numericMappingBestFit:
		return nil
	case "precision_only", "best_fit_eager_double":
		return fmt.Errorf("%s is not supported by Samsa's JDBC connector (none, best_fit)", s)
	}
	return errors.New("String must be one of: none, best_fit")
}

// sourceSettings is a parsed source config.
type sourceSettings struct {
	connectionSettings
	mode             string
	incrementing     string
	timestamps       []string
	timestampDelay   time.Duration
	timestampInitial *int64
	validateNonNull  bool
	query            string
	querySuffix      string
	include, exclude []string
	schemaPattern    string
	tableTypes       []string
	numericMapping   string
	tablePoll        time.Duration
	poll             time.Duration
	batchMaxRows     int
	topicPrefix      string
}

func parseSourceSettings(props map[string]string) (sourceSettings, error) {
	if err := refuseUnsupported(props, unsupportedSource); err != nil {
		return sourceSettings{}, err
	}
	c, err := sourceConfigDef().Parse(props)
	if err != nil {
		return sourceSettings{}, err
	}
	cs, err := parseConnectionSettings(c)
	if err != nil {
		return sourceSettings{}, err
	}
	s := sourceSettings{
		connectionSettings: cs,
		mode:               c.String(cfgMode),
		incrementing:       c.String(cfgIncrementingColumn),
		timestamps:         nonEmpty(c.List(cfgTimestampColumns)),
		timestampDelay:     time.Duration(c.Int(cfgTimestampDelay)) * time.Millisecond,
		validateNonNull:    c.Bool(cfgValidateNonNull),
		query:              strings.TrimSpace(c.String(cfgQuery)),
		querySuffix:        c.String(cfgQuerySuffix),
		include:            append(nonEmpty(c.List(cfgTableWhitelist)), nonEmpty(c.List(cfgTableIncludeList))...),
		exclude:            append(nonEmpty(c.List(cfgTableBlacklist)), nonEmpty(c.List(cfgTableExcludeList))...),
		schemaPattern:      c.String(cfgSchemaPattern),
		tableTypes:         c.List(cfgTableTypes),
		numericMapping:     c.String(cfgNumericMapping),
		tablePoll:          time.Duration(c.Int(cfgTablePollInterval)) * time.Millisecond,
		poll:               time.Duration(c.Int(cfgPollInterval)) * time.Millisecond,
		batchMaxRows:       int(c.Int(cfgBatchMaxRows)),
		topicPrefix:        c.String(cfgTopicPrefix),
	}
	if c.Get(cfgTimestampInitial) != nil {
		n := c.Int(cfgTimestampInitial)
		s.timestampInitial = &n
	}
	if s.numericMapping == "" {
		s.numericMapping = numericMappingNone
	}
	return s, s.check()
}

// check is Confluent's cross-config validation (JdbcSourceConnectorValidation).
func (s sourceSettings) check() error {
	switch s.mode {
	case "":
		return errors.New("mode must be set: bulk, incrementing, timestamp or timestamp+incrementing")
	case modeIncrementing, modeTimestampIncrement:
		if s.incrementing == "" {
			return fmt.Errorf("incrementing.column.name must be set in mode %s (Samsa does not guess an auto-increment column)", s.mode)
		}
	}
	switch s.mode {
	case modeTimestamp, modeTimestampIncrement:
		if len(s.timestamps) == 0 {
			return fmt.Errorf("timestamp.column.name must name at least one column in mode %s", s.mode)
		}
	}
	if s.mode == modeBulk || s.mode == modeIncrementing {
		if len(s.timestamps) > 0 {
			return fmt.Errorf("timestamp.column.name is set but mode %s does not use it", s.mode)
		}
	}
	if (s.mode == modeBulk || s.mode == modeTimestamp) && s.incrementing != "" {
		return fmt.Errorf("incrementing.column.name is set but mode %s does not use it", s.mode)
	}
	if s.query != "" {
		if len(s.include) > 0 || len(s.exclude) > 0 {
			return errors.New("query mode copies the query's rows, not tables: do not set table.whitelist/table.include.list or table.blacklist/table.exclude.list with query")
		}
		return nil
	}
	if len(s.include) > 0 && len(s.exclude) > 0 {
		return errors.New("table.whitelist (table.include.list) and table.blacklist (table.exclude.list) cannot both be set")
	}
	return nil
}

func nonEmpty(l []string) []string {
	var out []string
	for _, s := range l {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

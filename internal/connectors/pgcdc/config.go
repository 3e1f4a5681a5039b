package pgcdc

import (
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/samsa-io/samsa/connect"
)

// Debezium's config names; the defaults are Debezium's except plugin.name
// (Debezium's default, decoderbufs, needs a server extension; pgoutput is
// the one plugin Samsa speaks).
const (
	cfgHostname           = "database.hostname"
	cfgPort               = "database.port"
	cfgUser               = "database.user"
	cfgPassword           = "database.password"
	cfgDBName             = "database.dbname"
	cfgSSLMode            = "database.sslmode"
	cfgTopicPrefix        = "topic.prefix"
	cfgPluginName         = "plugin.name"
	cfgSlotName           = "slot.name"
	cfgDropSlotOnStop     = "slot.drop.on.stop"
	cfgPublicationName    = "publication.name"
	cfgPublicationMode    = "publication.autocreate.mode"
	cfgTableInclude       = "table.include.list"
	cfgTableExclude       = "table.exclude.list"
	cfgColumnInclude      = "column.include.list"
	cfgColumnExclude      = "column.exclude.list"
	cfgSnapshotMode       = "snapshot.mode"
	cfgSnapshotFetchSize  = "snapshot.fetch.size"
	cfgHeartbeatInterval  = "heartbeat.interval.ms"
	cfgHeartbeatPrefix    = "topic.heartbeat.prefix"
	cfgTombstones         = "tombstones.on.delete"
	cfgDecimalMode        = "decimal.handling.mode"
	cfgTimePrecision      = "time.precision.mode"
	cfgSkippedOperations  = "skipped.operations"
	cfgStatusInterval     = "status.update.interval.ms"
	cfgMaxBatchSize       = "max.batch.size"
	cfgPollInterval       = "poll.interval.ms"
	defaultHeartbeatTopic = "__debezium-heartbeat"
)

// Snapshot modes (snapshot.mode).
const (
	snapshotInitial     = "initial"
	snapshotInitialOnly = "initial_only"
	snapshotNoData      = "no_data"
	snapshotNever       = "never"
	snapshotAlways      = "always"
)

// Publication autocreate modes.
const (
	publicationAllTables = "all_tables"
	publicationDisabled  = "disabled"
	publicationFiltered  = "filtered"
)

// unsupported are Debezium configs this connector does not implement, with
// the one value that means "off" (empty: any value is refused). A config
// written for Debezium that relies on one of them fails at validation
// instead of running with the feature silently missing.
var unsupported = map[string]string{
	"schema.include.list":                 "",
	"schema.exclude.list":                 "",
	"message.key.columns":                 "",
	"snapshot.select.statement.overrides": "",
	"snapshot.include.collection.list":    "",
	"signal.data.collection":              "",
	"slot.stream.params":                  "",
	"database.initial.statements":         "",
	"converters":                          "",
	"column.propagate.source.type":        "",
	"datatype.propagate.source.type":      "",
	"provide.transaction.metadata":        "false",
	"include.unknown.datatypes":           "false",
	"publish.via.partition.root":          "false",
	"binary.handling.mode":                "bytes",
	"hstore.handling.mode":                "json",
	"interval.handling.mode":              "numeric",
	"slot.failover":                       "false",
	"read.only":                           "false",
	"heartbeat.action.query":              "",
	"replica.identity.autoset.values":     "",
	"message.prefix.include.list":         "",
	"message.prefix.exclude.list":         "",
	"snapshot.isolation.mode":             "repeatable_read",
	"snapshot.locking.mode":               "none",
	"snapshot.query.mode":                 "select_all",
	"incremental.snapshot.chunk.size":     "",
	"slot.max.retries":                    "",
	"slot.retry.delay.ms":                 "",
}

func slotNameValidator(_ string, v any) error {
	s, _ := v.(string)
	if !regexp.MustCompile(`^[a-z0-9_]{1,63}$`).MatchString(s) {
		return fmt.Errorf("Valid replication slot name must contain only digits, lowercase characters and underscores with length <= 63")
	}
	return nil
}

func topicPrefixValidator(_ string, v any) error {
	s, _ := v.(string)
	if s == "" {
		return fmt.Errorf("String may not be empty")
	}
	if !regexp.MustCompile(`^[A-Za-z0-9._-]+$`).MatchString(s) {
		return fmt.Errorf("Topic prefix must contain only alphanumeric characters, '.', '_' or '-'")
	}
	return nil
}

func regexListValidator(_ string, v any) error {
	l, _ := v.([]string)
	for _, re := range l {
		if _, err := regexp.Compile(re); err != nil {
			return fmt.Errorf("not a valid regular expression %q: %v", re, err)
		}
	}
	return nil
}

func skippedOpsValidator(_ string, v any) error {
	l, _ := v.([]string)
	for _, op := range l {
		switch op {
		case "c", "u", "d", "t", "none":
		default:
			return fmt.Errorf("The skipped.operations list may only contain c, u, d, t or none, got %q", op)
		}
	}
	return nil
}

func pluginValidator(_ string, v any) error {
	if s, _ := v.(string); s != "pgoutput" {
		return fmt.Errorf("only pgoutput is supported (PostgreSQL's built-in logical decoding plugin); %q would need a server-side extension this connector does not decode", s)
	}
	return nil
}

// configDef is the connector's configuration, with Debezium's names.
func configDef() *connect.ConfigDef {
	const conn, repl, filt, snap, conv = "Connection", "Replication", "Filters", "Snapshot", "Events"
	d := connect.NewConfigDef()
	def := func(k connect.ConfigKey) { d.Define(k) }
	def(connect.ConfigKey{Name: cfgHostname, Type: connect.TypeString, Default: connect.NoDefault, Validator: connect.NonEmptyString{}, Importance: connect.High, Group: conn, Documentation: "Resolvable hostname or IP address of the database server."})
	def(connect.ConfigKey{Name: cfgPort, Type: connect.TypeInt, Default: int32(5432), Validator: connect.Between(1, 65535), Importance: connect.High, Group: conn, Documentation: "Port of the database server."})
	def(connect.ConfigKey{Name: cfgUser, Type: connect.TypeString, Default: connect.NoDefault, Validator: connect.NonEmptyString{}, Importance: connect.High, Group: conn, Documentation: "Name of the database user; it needs the REPLICATION attribute and SELECT on the captured tables (and CREATE on the database to create the publication)."})
	def(connect.ConfigKey{Name: cfgPassword, Type: connect.TypePassword, Default: nil, Importance: connect.High, Group: conn, Documentation: "Password of the database user."})
	def(connect.ConfigKey{Name: cfgDBName, Type: connect.TypeString, Default: connect.NoDefault, Validator: connect.NonEmptyString{}, Importance: connect.High, Group: conn, Documentation: "The name of the database to capture changes from."})
	def(connect.ConfigKey{Name: cfgSSLMode, Type: connect.TypeString, Default: "prefer", Validator: connect.OneOf{Values: []string{"disable", "allow", "prefer", "require", "verify-ca", "verify-full"}}, Group: conn, Documentation: "libpq's sslmode for both connections."})
	def(connect.ConfigKey{Name: cfgTopicPrefix, Type: connect.TypeString, Default: connect.NoDefault, Validator: connect.ValidatorFunc(topicPrefixValidator), Importance: connect.High, Group: conn, Documentation: "Topic prefix naming this database server: topics are <prefix>.<schema>.<table>, and the source partition is {\"server\": <prefix>}."})
	def(connect.ConfigKey{Name: cfgPluginName, Type: connect.TypeString, Default: "pgoutput", Validator: connect.ValidatorFunc(pluginValidator), Group: repl, Documentation: "The logical decoding plugin: only pgoutput (Debezium's default, decoderbufs, is refused)."})
	def(connect.ConfigKey{Name: cfgSlotName, Type: connect.TypeString, Default: "debezium", Validator: connect.ValidatorFunc(slotNameValidator), Group: repl, Documentation: "The logical replication slot the connector streams from."})
	def(connect.ConfigKey{Name: cfgDropSlotOnStop, Type: connect.TypeBoolean, Default: false, Group: repl, Documentation: "Whether to drop the slot when the task stops in order (it then loses its place: the next start snapshots or streams from a new slot)."})
	def(connect.ConfigKey{Name: cfgPublicationName, Type: connect.TypeString, Default: "dbz_publication", Validator: connect.NonEmptyString{}, Group: repl, Documentation: "The publication pgoutput streams."})
	def(connect.ConfigKey{Name: cfgPublicationMode, Type: connect.TypeString, Default: publicationAllTables, Validator: connect.OneOf{Values: []string{publicationAllTables, publicationDisabled, publicationFiltered}}, Group: repl, Documentation: "all_tables: create the publication FOR ALL TABLES when missing; filtered: create it (or reset it on every start) FOR TABLE the included tables; disabled: it must exist."})
	def(connect.ConfigKey{Name: cfgTableInclude, Type: connect.TypeList, Default: []string{}, Validator: connect.ValidatorFunc(regexListValidator), Group: filt, Documentation: "Regular expressions matched against <schema>.<table>: only matching tables are captured (exclusive with table.exclude.list)."})
	def(connect.ConfigKey{Name: cfgTableExclude, Type: connect.TypeList, Default: []string{}, Validator: connect.ValidatorFunc(regexListValidator), Group: filt, Documentation: "Regular expressions matched against <schema>.<table>: matching tables are not captured."})
	def(connect.ConfigKey{Name: cfgColumnInclude, Type: connect.TypeList, Default: []string{}, Validator: connect.ValidatorFunc(regexListValidator), Group: filt, Documentation: "Regular expressions matched against <schema>.<table>.<column>: only matching columns are in the events (key columns always are)."})
	def(connect.ConfigKey{Name: cfgColumnExclude, Type: connect.TypeList, Default: []string{}, Validator: connect.ValidatorFunc(regexListValidator), Group: filt, Documentation: "Regular expressions matched against <schema>.<table>.<column>: matching columns are left out (key columns never are)."})
	def(connect.ConfigKey{Name: cfgSnapshotMode, Type: connect.TypeString, Default: snapshotInitial, Validator: connect.OneOf{Values: []string{snapshotInitial, snapshotInitialOnly, snapshotNoData, snapshotNever, snapshotAlways}}, Group: snap, Documentation: "initial: snapshot when no completed snapshot is in the offsets, then stream; initial_only: snapshot, then stop streaming; no_data (never): stream only; always: snapshot on every start."})
	def(connect.ConfigKey{Name: cfgSnapshotFetchSize, Type: connect.TypeInt, Default: int32(10240), Validator: connect.AtLeast(1), Group: snap, Documentation: "Rows fetched from a table's cursor at a time during the snapshot."})
	def(connect.ConfigKey{Name: cfgHeartbeatInterval, Type: connect.TypeInt, Default: int32(0), Validator: connect.AtLeast(0), Group: conv, Documentation: "Milliseconds between heartbeat records (0: none). Heartbeats carry the stream position, so the slot advances while the captured tables are quiet."})
	def(connect.ConfigKey{Name: cfgHeartbeatPrefix, Type: connect.TypeString, Default: defaultHeartbeatTopic, Validator: connect.NonEmptyString{}, Group: conv, Documentation: "Heartbeats go to <prefix>.<topic.prefix>."})
	def(connect.ConfigKey{Name: cfgTombstones, Type: connect.TypeBoolean, Default: true, Group: conv, Documentation: "Whether a delete is followed by a tombstone (the key, a null value) for log compaction."})
	def(connect.ConfigKey{Name: cfgDecimalMode, Type: connect.TypeString, Default: "precise", Validator: connect.OneOf{Values: []string{"precise", "double", "string"}}, Group: conv, Documentation: "numeric columns as Connect Decimal (precise), FLOAT64 (double) or STRING."})
	def(connect.ConfigKey{Name: cfgTimePrecision, Type: connect.TypeString, Default: "adaptive", Validator: connect.OneOf{Values: []string{"adaptive", "connect"}}, Group: conv, Documentation: "adaptive: Debezium's io.debezium.time types at the column's precision; connect: Kafka Connect's Date, Time and Timestamp (milliseconds)."})
	def(connect.ConfigKey{Name: cfgSkippedOperations, Type: connect.TypeList, Default: []string{"t"}, Validator: connect.ValidatorFunc(skippedOpsValidator), Group: conv, Documentation: "Operations not emitted: c, u, d, t (truncate), or none."})
	def(connect.ConfigKey{Name: cfgStatusInterval, Type: connect.TypeInt, Default: int32(10000), Validator: connect.AtLeast(1), Group: repl, Documentation: "Milliseconds between standby status updates to the server (the confirmed position and a keepalive)."})
	def(connect.ConfigKey{Name: cfgMaxBatchSize, Type: connect.TypeInt, Default: int32(2048), Validator: connect.AtLeast(1), Group: conv, Documentation: "The most records one poll returns."})
	def(connect.ConfigKey{Name: cfgPollInterval, Type: connect.TypeInt, Default: int32(500), Validator: connect.AtLeast(1), Group: conv, Documentation: "The longest a poll waits for changes, in milliseconds."})
	return d
}

// settings is a parsed, checked configuration.
type settings struct {
	dsn             string // regular connection
	replDSN         string // replication=database connection
	host            string
	port            int
	user, dbname    string
	prefix          string
	slot            string
	dropSlotOnStop  bool
	publication     string
	publicationMode string
	tables          filter
	columns         filter
	snapshotMode    string
	fetchSize       int
	heartbeat       time.Duration
	heartbeatTopic  string
	tombstones      bool
	decimalMode     string
	timePrecision   string
	skipped         map[string]bool
	statusInterval  time.Duration
	maxBatch        int
	pollInterval    time.Duration
}

// filter is an include or exclude list of anchored regular expressions.
type filter struct {
	include, exclude []*regexp.Regexp
}

func compileList(l []string) []*regexp.Regexp {
	out := make([]*regexp.Regexp, 0, len(l))
	for _, s := range l {
		out = append(out, regexp.MustCompile(`^(?:`+s+`)$`)) // checked by the validator
	}
	return out
}

// matches reports whether a name passes the filter: an include list wins
// over everything; without one, anything not excluded passes.
func (f filter) matches(name string) bool {
	if len(f.include) > 0 {
		for _, re := range f.include {
			if re.MatchString(name) {
				return true
			}
		}
		return false
	}
	for _, re := range f.exclude {
		if re.MatchString(name) {
			return false
		}
	}
	return true
}

// checkProps refuses what the ConfigDef cannot express: Debezium configs
// left out, and include and exclude lists given together.
func checkProps(props map[string]string) []connect.ConfigValue {
	var out []connect.ConfigValue
	for name, off := range unsupported {
		v, ok := props[name]
		if !ok || (off != "" && strings.EqualFold(strings.TrimSpace(v), off)) {
			continue
		}
		msg := fmt.Sprintf("%s is not supported by this connector (Samsa's PostgreSQL CDC); remove it", name)
		if off != "" {
			msg = fmt.Sprintf("%s=%s is not supported by this connector (Samsa's PostgreSQL CDC); only %s is", name, v, off)
		}
		out = append(out, connect.ConfigValue{Name: name, Value: v, Errors: []string{msg}, Visible: true})
	}
	for _, pair := range [][2]string{{cfgTableInclude, cfgTableExclude}, {cfgColumnInclude, cfgColumnExclude}} {
		if strings.TrimSpace(props[pair[0]]) != "" && strings.TrimSpace(props[pair[1]]) != "" {
			out = append(out, connect.ConfigValue{Name: pair[1], Value: props[pair[1]], Visible: true,
				Errors: []string{fmt.Sprintf("%s and %s cannot both be set", pair[0], pair[1])}})
		}
	}
	return out
}

// parseSettings validates props and returns the settings, or the first
// problem as an error naming the config.
func parseSettings(props map[string]string) (*settings, error) {
	for _, cv := range checkProps(props) {
		return nil, fmt.Errorf("pgcdc: invalid configuration %s: %s", cv.Name, cv.Errors[0])
	}
	c, err := configDef().Parse(props)
	if err != nil {
		return nil, fmt.Errorf("pgcdc: %w", err)
	}
	s := &settings{
		host:            c.String(cfgHostname),
		port:            int(c.Int(cfgPort)),
		user:            c.String(cfgUser),
		dbname:          c.String(cfgDBName),
		prefix:          c.String(cfgTopicPrefix),
		slot:            c.String(cfgSlotName),
		dropSlotOnStop:  c.Bool(cfgDropSlotOnStop),
		publication:     c.String(cfgPublicationName),
		publicationMode: c.String(cfgPublicationMode),
		tables:          filter{include: compileList(c.List(cfgTableInclude)), exclude: compileList(c.List(cfgTableExclude))},
		columns:         filter{include: compileList(c.List(cfgColumnInclude)), exclude: compileList(c.List(cfgColumnExclude))},
		snapshotMode:    c.String(cfgSnapshotMode),
		fetchSize:       int(c.Int(cfgSnapshotFetchSize)),
		heartbeat:       time.Duration(c.Int(cfgHeartbeatInterval)) * time.Millisecond,
		heartbeatTopic:  c.String(cfgHeartbeatPrefix) + "." + c.String(cfgTopicPrefix),
		tombstones:      c.Bool(cfgTombstones),
		decimalMode:     c.String(cfgDecimalMode),
		timePrecision:   c.String(cfgTimePrecision),
		skipped:         map[string]bool{},
		statusInterval:  time.Duration(c.Int(cfgStatusInterval)) * time.Millisecond,
		maxBatch:        int(c.Int(cfgMaxBatchSize)),
		pollInterval:    time.Duration(c.Int(cfgPollInterval)) * time.Millisecond,
	}
	if s.snapshotMode == snapshotNever {
		s.snapshotMode = snapshotNoData // Debezium's deprecated name for the same mode
	}
	for _, op := range c.List(cfgSkippedOperations) {
		if op != "none" {
			s.skipped[op] = true
		}
	}
	u := url.URL{Scheme: "postgres", Host: s.host + ":" + strconv.Itoa(s.port), Path: "/" + s.dbname}
	if pw := c.Password(cfgPassword); pw != "" {
		u.User = url.UserPassword(s.user, pw)
	} else {
		u.User = url.User(s.user)
	}
	q := url.Values{"sslmode": {c.String(cfgSSLMode)}, "application_name": {"samsa-pgcdc"}}
	u.RawQuery = q.Encode()
	s.dsn = u.String()
	q.Set("replication", "database")
	u.RawQuery = q.Encode()
	s.replDSN = u.String()
	return s, nil
}

package jdbc

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/samsa-io/samsa/connect"
)

// Sink configs (Confluent's JdbcSinkConfig names).
const (
	cfgInsertMode      = "insert.mode"
	cfgPKMode          = "pk.mode"
	cfgPKFields        = "pk.fields"
	cfgFieldsWhitelist = "fields.whitelist"
	cfgTableNameFormat = "table.name.format"
	cfgAutoCreate      = "auto.create"
	cfgAutoEvolve      = "auto.evolve"
	cfgDeleteEnabled   = "delete.enabled"
	cfgBatchSize       = "batch.size"
	cfgMaxRetries      = "max.retries"
	cfgRetryBackoff    = "retry.backoff.ms"

	insertModeInsert = "insert"
	insertModeUpsert = "upsert"
	insertModeUpdate = "update"

	pkModeNone        = "none"
	pkModeKafka       = "kafka"
	pkModeRecordKey   = "record_key"
	pkModeRecordValue = "record_value"
)

// The columns pk.mode=kafka writes when pk.fields names none (Confluent's).
var kafkaPKDefaults = []string{"__connect_topic", "__connect_partition", "__connect_offset"}

func sinkConfigDef() *connect.ConfigDef {
	d := defineConnection(connect.NewConfigDef())
	d.Define(connect.ConfigKey{Name: cfgInsertMode, Type: connect.TypeString, Default: insertModeInsert, Importance: connect.High, Group: "Writes",
		Validator:     connect.OneOf{Values: []string{insertModeInsert, insertModeUpsert, insertModeUpdate}, CaseInsensitive: true},
		Documentation: "insert: plain INSERT; upsert: insert or update by primary key (idempotent); update: UPDATE by primary key."}).
		Define(connect.ConfigKey{Name: cfgBatchSize, Type: connect.TypeInt, Default: int32(3000), Validator: connect.AtLeast(1), Importance: connect.Medium, Group: "Writes",
			Documentation: "Rows written in one statement (multi-row INSERT) where the mode allows."}).
		Define(connect.ConfigKey{Name: cfgDeleteEnabled, Type: connect.TypeBoolean, Default: false, Importance: connect.Medium, Group: "Writes",
			Documentation: "Whether a record with a null value (a tombstone) deletes the row with its key; needs pk.mode=record_key."}).
		Define(connect.ConfigKey{Name: cfgTableNameFormat, Type: connect.TypeString, Default: "${topic}", Importance: connect.Medium, Group: "Data Mapping",
			Documentation: "The destination table's name; ${topic} is replaced by the record's topic."}).
		Define(connect.ConfigKey{Name: cfgPKMode, Type: connect.TypeString, Default: pkModeNone, Importance: connect.High, Group: "Data Mapping",
			Validator:     connect.OneOf{Values: []string{pkModeNone, pkModeKafka, pkModeRecordKey, pkModeRecordValue}, CaseInsensitive: true},
			Documentation: "Where the primary key comes from: none, kafka (topic, partition, offset), record_key, record_value."}).
		Define(connect.ConfigKey{Name: cfgPKFields, Type: connect.TypeList, Default: []string{}, Importance: connect.Medium, Group: "Data Mapping",
			Documentation: "The primary key's fields; what an empty list means depends on pk.mode."}).
		Define(connect.ConfigKey{Name: cfgFieldsWhitelist, Type: connect.TypeList, Default: []string{}, Importance: connect.Medium, Group: "Data Mapping",
			Documentation: "The value's fields to write; empty writes them all."}).
		Define(connect.ConfigKey{Name: cfgAutoCreate, Type: connect.TypeBoolean, Default: false, Importance: connect.Medium, Group: "DDL Support",
			Documentation: "Create a missing destination table (CREATE TABLE) from the record's schema."}).
		Define(connect.ConfigKey{Name: cfgAutoEvolve, Type: connect.TypeBoolean, Default: false, Importance: connect.Medium, Group: "DDL Support",
			Documentation: "Add columns (ALTER TABLE ... ADD) for fields the table lacks."}).
		Define(connect.ConfigKey{Name: cfgMaxRetries, Type: connect.TypeInt, Default: int32(10), Validator: connect.AtLeast(0), Importance: connect.Medium, Group: "Retries",
			Documentation: "How many times a failed write is retried before the task fails."}).
		Define(connect.ConfigKey{Name: cfgRetryBackoff, Type: connect.TypeInt, Default: int32(3000), Validator: connect.AtLeast(0), Importance: connect.Medium, Group: "Retries",
			Documentation: "Milliseconds to wait before a failed write is retried."})
	return d
}

// sinkSettings is a parsed sink config.
type sinkSettings struct {
	connectionSettings
	insertMode      string
	pkMode          string
	pkFields        []string
	fieldsWhitelist []string
	tableNameFormat string
	autoCreate      bool
	autoEvolve      bool
	deleteEnabled   bool
	batchSize       int
	maxRetries      int
	retryBackoff    time.Duration
}

func parseSinkSettings(props map[string]string) (sinkSettings, error) {
	if err := refuseUnsupported(props, unsupportedSink); err != nil {
		return sinkSettings{}, err
	}
	c, err := sinkConfigDef().Parse(props)
	if err != nil {
		return sinkSettings{}, err
	}
	cs, err := parseConnectionSettings(c)
	if err != nil {
		return sinkSettings{}, err
	}
	s := sinkSettings{
		connectionSettings: cs,
		insertMode:         strings.ToLower(c.String(cfgInsertMode)),
		pkMode:             strings.ToLower(c.String(cfgPKMode)),
		pkFields:           nonEmpty(c.List(cfgPKFields)),
		fieldsWhitelist:    nonEmpty(c.List(cfgFieldsWhitelist)),
		tableNameFormat:    c.String(cfgTableNameFormat),
		autoCreate:         c.Bool(cfgAutoCreate),
		autoEvolve:         c.Bool(cfgAutoEvolve),
		deleteEnabled:      c.Bool(cfgDeleteEnabled),
		batchSize:          int(c.Int(cfgBatchSize)),
		maxRetries:         int(c.Int(cfgMaxRetries)),
		retryBackoff:       time.Duration(c.Int(cfgRetryBackoff)) * time.Millisecond,
	}
	return s, s.check()
}

// check is Confluent's JdbcSinkConnectorValidation and the checks its
// FieldsMetadata makes of the config alone.
func (s sinkSettings) check() error {
	if s.deleteEnabled && s.pkMode != pkModeRecordKey {
		return errors.New("delete.enabled: deletes are only supported for pk.mode record_key")
	}
	if s.pkMode == pkModeNone && (s.insertMode == insertModeUpsert || s.insertMode == insertModeUpdate) {
		return fmt.Errorf("insert.mode %s needs a primary key: set pk.mode to kafka, record_key or record_value", s.insertMode)
	}
	if s.pkMode == pkModeNone && len(s.pkFields) > 0 {
		return errors.New("pk.fields is set but pk.mode is none")
	}
	if s.pkMode == pkModeKafka && len(s.pkFields) != 0 && len(s.pkFields) != 3 {
		return fmt.Errorf("pk.fields: pk.mode is kafka so there should either be no field names defined for defaults %v to be applicable, or exactly 3, defined fields are: %v", kafkaPKDefaults, s.pkFields)
	}
	if strings.TrimSpace(s.tableNameFormat) == "" {
		return errors.New("table.name.format may not be empty")
	}
	return nil
}

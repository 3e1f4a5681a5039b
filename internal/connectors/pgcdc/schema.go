package pgcdc

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/samsa-io/samsa/connect"
)

// column is one captured column of a table.
type column struct {
	name     string
	oid      uint32
	typmod   int32
	notNull  bool
	keyPos   int // position in the primary key, 1-based; 0 when not a key column
	schema   *connect.Schema
	conv     converter
	captured bool // false: type not mapped or filtered out by column lists
}

// table is what events of one table are built from: its columns in the
// order PostgreSQL sends them, and the Debezium schemas.
type table struct {
	schemaName, name string
	columns          []column
	keySchema        *connect.Schema // nil when the table has no primary key
	valueSchema      *connect.Schema // the row: before and after
	envelope         *connect.Schema
	topic            string
}

func (t *table) id() string { return t.schemaName + "." + t.name }

// catalogColumn is a column as pg_attribute describes it.
type catalogColumn struct {
	name    string
	oid     uint32
	typmod  int32
	notNull bool
	keyPos  int
}

// buildTable makes a table's schemas from its columns, as Debezium's
// TableSchemaBuilder: key <prefix>.<schema>.<table>.Key of the primary key
// columns, value ...Value of every captured column, ...Envelope around them.
func buildTable(s *settings, schemaName, name string, cols []catalogColumn, src *connect.Schema) (*table, error) {
	t := &table{schemaName: schemaName, name: name, topic: s.prefix + "." + schemaName + "." + name}
	base := t.topic
	value := connect.NewStruct(base + ".Value").Optional()
	var keyCols []column
	for _, cc := range cols {
		c := column{name: cc.name, oid: cc.oid, typmod: cc.typmod, notNull: cc.notNull, keyPos: cc.keyPos}
		m, ok := mapType(cc.oid, cc.typmod, s)
		c.captured = ok && (cc.keyPos > 0 || s.columns.matches(t.id()+"."+cc.name))
		if ok {
			c.schema, c.conv = withOptional(m.schema, !cc.notNull), m.conv
		}
		if c.captured {
			value.Field(c.name, c.schema)
		}
		if cc.keyPos > 0 {
			if !ok {
				return nil, badData(fmt.Errorf("pgcdc: table %s: key column %s has type OID %d, which is not mapped", t.id(), cc.name, cc.oid))
			}
			keyCols = append(keyCols, c)
		}
		t.columns = append(t.columns, c)
	}
	var err error
	if t.valueSchema, err = value.Build(); err != nil {
		return nil, badData(fmt.Errorf("pgcdc: table %s: %w", t.id(), err))
	}
	if len(keyCols) > 0 {
		key := connect.NewStruct(base + ".Key")
		for pos := 1; pos <= len(keyCols); pos++ {
			for _, c := range keyCols {
				if c.keyPos == pos {
					key.Field(c.name, withOptional(c.schema, false))
				}
			}
		}
		if t.keySchema, err = key.Build(); err != nil {
			return nil, badData(fmt.Errorf("pgcdc: table %s: %w", t.id(), err))
		}
	}
	t.envelope = envelopeSchema(base+".Envelope", t.valueSchema, src)
	return t, nil
}

func withOptional(s *connect.Schema, optional bool) *connect.Schema {
	if s.Optional == optional {
		return s
	}
	c := *s
	c.Optional = optional
	if c.Type == connect.Struct_ && c.Name == dbzVarDecimal {
		return varDecimalSchema(optional)
	}
	return &c
}

// envelopeSchema is Debezium's change event value, fields in its order.
func envelopeSchema(name string, row, src *connect.Schema) *connect.Schema {
	two := int32(2)
	s := connect.NewStruct(name).
		Field("before", row).
		Field("after", row).
		Field("source", src).
		Field("transaction", transactionSchema).
		Field("op", connect.StringSchema).
		Field("ts_ms", connect.OptionalInt64).
		Field("ts_us", connect.OptionalInt64).
		Field("ts_ns", connect.OptionalInt64).
		MustBuild()
	s.Version = &two
	return s
}

// transactionSchema is Debezium's transaction block; it stays null here
// (provide.transaction.metadata is not supported).
var transactionSchema = connect.NewStruct("event.block").Optional().Version(1).
	Field("id", connect.StringSchema).
	Field("total_order", connect.Int64Schema).
	Field("data_collection_order", connect.Int64Schema).
	MustBuild()

// snapshotMarkers are Debezium's SnapshotRecord values, in its order.
var snapshotMarkers = []string{"true", "first", "first_in_data_collection", "last_in_data_collection", "last", "false", "incremental"}

// sourceSchema is Debezium's io.debezium.connector.postgresql.Source.
func sourceSchema() *connect.Schema {
	one := int32(1)
	snapshot := &connect.Schema{Type: connect.String, Optional: true, Default: "false", Name: "io.debezium.data.Enum", Version: &one,
		Parameters: map[string]string{"allowed": strings.Join(snapshotMarkers, ",")}}
	return connect.NewStruct("io.debezium.connector.postgresql.Source").Version(1).
		Field("version", connect.StringSchema).
		Field("connector", connect.StringSchema).
		Field("name", connect.StringSchema).
		Field("ts_ms", connect.Int64Schema).
		Field("snapshot", snapshot).
		Field("db", connect.StringSchema).
		Field("sequence", connect.OptionalString).
		Field("ts_us", connect.OptionalInt64).
		Field("ts_ns", connect.OptionalInt64).
		Field("schema", connect.StringSchema).
		Field("table", connect.StringSchema).
		Field("txId", connect.OptionalInt64).
		Field("lsn", connect.OptionalInt64).
		Field("xmin", connect.OptionalInt64).
		Field("origin", connect.OptionalString).
		Field("origin_lsn", connect.OptionalInt64).
		MustBuild()
}

// sourceInfo is what a source block says about one event.
type sourceInfo struct {
	ts        time.Time // commit time (streaming) or read time (snapshot)
	snapshot  string    // a snapshotMarkers value
	schema    string
	table     string
	txID      int64
	lsn       uint64
	commitLSN uint64 // the last committed transaction's end, for sequence
}

func (e *emitter) sourceStruct(si sourceInfo) *connect.Struct {
	st := connect.NewStructValue(e.source)
	st.MustPut("version", e.version).
		MustPut("connector", "postgresql").
		MustPut("name", e.s.prefix).
		MustPut("ts_ms", si.ts.UnixMilli()).
		MustPut("snapshot", si.snapshot).
		MustPut("db", e.s.dbname).
		MustPut("ts_us", si.ts.UnixMicro()).
		MustPut("ts_ns", si.ts.UnixNano()).
		MustPut("schema", si.schema).
		MustPut("table", si.table)
	if si.txID != 0 {
		st.MustPut("txId", si.txID)
	}
	if si.lsn != 0 {
		st.MustPut("lsn", int64(si.lsn))
		// Debezium's sequence: ["<last commit lsn>","<lsn>"] as strings.
		commit := "null"
		if si.commitLSN != 0 {
			commit = strconv.Quote(strconv.FormatUint(si.commitLSN, 10))
		}
		st.MustPut("sequence", "["+commit+","+strconv.Quote(strconv.FormatUint(si.lsn, 10))+"]")
	}
	return st
}

// rowStruct builds a before or after row from text values (nil: SQL NULL;
// the unchanged-TOAST marker: the placeholder).
func rowStruct(t *table, sch *connect.Schema, vals []*string, toast []bool) (*connect.Struct, error) {
	st := connect.NewStructValue(sch)
	for i, c := range t.columns {
		if !c.captured {
			continue
		}
		v, err := columnValue(c, vals, toast, i)
		if err != nil {
			return nil, badData(fmt.Errorf("pgcdc: %s.%s: %w", t.id(), c.name, err))
		}
		if err := st.Put(c.name, v); err != nil {
			return nil, badData(fmt.Errorf("pgcdc: %s.%s: %w", t.id(), c.name, err))
		}
	}
	return st, nil
}

func columnValue(c column, vals []*string, toast []bool, i int) (any, error) {
	if i < len(toast) && toast[i] {
		return placeholderOf(c.schema), nil
	}
	if i >= len(vals) || vals[i] == nil {
		if c.schema.Optional {
			return nil, nil
		}
		return zeroOf(c.schema), nil
	}
	v, err := c.conv(*vals[i])
	if err != nil {
		return nil, err
	}
	if v == nil && !c.schema.Optional {
		return zeroOf(c.schema), nil
	}
	if st, ok := v.(*connect.Struct); ok && !st.Schema().Equal(c.schema) {
		// VariableScaleDecimal: same fields, the column's optionality.
		out := connect.NewStructValue(c.schema)
		for _, f := range st.Schema().Fields {
			out.MustPut(f.Name, st.GetField(f))
		}
		return out, nil
	}
	return v, nil
}

// keyStruct is the key of a row, nil when the table has no primary key.
func keyStruct(t *table, vals []*string) (*connect.Struct, error) {
	if t.keySchema == nil {
		return nil, nil
	}
	st := connect.NewStructValue(t.keySchema)
	for i, c := range t.columns {
		if c.keyPos == 0 {
			continue
		}
		v, err := columnValue(column{schema: withOptional(c.schema, false), conv: c.conv}, vals, nil, i)
		if err != nil {
			return nil, badData(fmt.Errorf("pgcdc: %s.%s: %w", t.id(), c.name, err))
		}
		if err := st.Put(c.name, v); err != nil {
			return nil, badData(fmt.Errorf("pgcdc: %s.%s: %w", t.id(), c.name, err))
		}
	}
	return st, nil
}

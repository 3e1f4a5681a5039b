package jdbc

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/samsa-io/samsa/connect"
)

// writer turns sink records into SQL in one transaction per write.
type writer struct {
	s  sinkSettings
	d  *dialect
	db *sql.DB
	// tables caches the destination tables' columns; cleared when a
	// transaction rolls back (its DDL went with it).
	tables map[tableID][]columnMeta
}

// sinkColumn is a column the records write: from the key, the value or the
// record's Kafka coordinates.
type sinkColumn struct {
	name   string
	schema *connect.Schema
	key    bool
}

// fieldsMeta is Confluent's FieldsMetadata: the key columns then the others.
type fieldsMeta struct {
	keys, values []sinkColumn
}

func (m fieldsMeta) all() []sinkColumn {
	return append(append([]sinkColumn(nil), m.keys...), m.values...)
}

// batch is a run of records for one table with the same schemas and op.
type batch struct {
	table   tableID
	delete  bool
	meta    fieldsMeta
	records []connect.SinkRecord
}

func (w *writer) write(ctx context.Context, records []connect.SinkRecord) (err error) {
	batches, err := w.batches(records)
	if err != nil {
		return err
	}
	tx, err := w.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("jdbc sink: begin transaction: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
			clear(w.tables)
		}
	}()
	for _, b := range batches {
		if err := w.writeBatch(ctx, tx, b); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("jdbc sink: commit: %w", err)
	}
	return nil
}

// batches groups consecutive records by table, schemas and operation, in
// the order they came.
func (w *writer) batches(records []connect.SinkRecord) ([]*batch, error) {
	var out []*batch
	var last *batch
	var lastKey, lastValue *connect.Schema
	for _, r := range records {
		del, err := w.validate(r)
		if err != nil {
			return nil, err
		}
		table := parseTableID(strings.ReplaceAll(w.s.tableNameFormat, "${topic}", r.Topic))
		if last != nil && last.table == table && last.delete == del && sameSchema(lastKey, r.KeySchema) && (del || sameSchema(lastValue, r.ValueSchema)) {
			last.records = append(last.records, r)
			continue
		}
		b := &batch{table: table, delete: del, records: []connect.SinkRecord{r}}
		if del {
			b.meta, err = w.keyOnlyMeta(table, r.KeySchema)
		} else {
			b.meta, err = w.fieldsMetadata(table, r.KeySchema, r.ValueSchema)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, b)
		last, lastKey, lastValue = b, r.KeySchema, r.ValueSchema
	}
	return out, nil
}

func sameSchema(a, b *connect.Schema) bool { return a == b || a.Equal(b) }

// validate is Confluent's RecordValidator: values must be structs with a
// schema; a null value is a delete only when deletes are enabled.
func (w *writer) validate(r connect.SinkRecord) (bool, error) {
	where := fmt.Sprintf("(topic='%s',partition=%d,offset=%d)", r.Topic, partitionOf(r), r.Offset())
	if r.Value == nil {
		if !w.s.deleteEnabled {
			return false, recordErr("jdbc sink: the connector is configured with delete.enabled=false and therefore requires records with a non-null Struct value and non-null Struct schema, but found record at %s with a null value", where)
		}
		if r.Key == nil {
			return false, recordErr("jdbc sink: record at %s is a tombstone with a null key: there is no row to delete", where)
		}
		return true, nil
	}
	if _, ok := r.Value.(*connect.Struct); !ok || r.ValueSchema == nil || r.ValueSchema.Type != connect.Struct_ {
		return false, recordErr("jdbc sink: requires records with a non-null Struct value and non-null Struct schema, but found record at %s with a %T value and schema %v (use a converter with schemas, e.g. JsonConverter with schemas.enable=true or AvroConverter)", where, r.Value, r.ValueSchema)
	}
	return false, nil
}

func partitionOf(r connect.SinkRecord) int32 {
	if r.Partition != nil {
		return *r.Partition
	}
	return r.OriginalPartition
}

// fieldsMetadata chooses the columns as Confluent's FieldsMetadata.extract.
func (w *writer) fieldsMetadata(table tableID, keySchema, valueSchema *connect.Schema) (fieldsMeta, error) {
	var m fieldsMeta
	var err error
	switch w.s.pkMode {
	case pkModeKafka:
		names := w.s.pkFields
		if len(names) == 0 {
			names = kafkaPKDefaults
		}
		m.keys = []sinkColumn{{names[0], connect.StringSchema, true}, {names[1], connect.Int32Schema, true}, {names[2], connect.Int64Schema, true}}
	case pkModeRecordKey:
		if m, err = w.keyOnlyMeta(table, keySchema); err != nil {
			return m, err
		}
	case pkModeRecordValue:
		names := w.s.pkFields
		if len(names) == 0 {
			for _, f := range valueSchema.Fields {
				names = append(names, f.Name)
			}
		}
		for _, n := range names {
			f, ok := valueSchema.Field(n)
			if !ok {
				return m, recordErr("jdbc sink: PK mode for table '%s' is record_value with configured PK fields %v, but record value schema does not contain field: %s", table, w.s.pkFields, n)
			}
			m.keys = append(m.keys, sinkColumn{n, f.Schema, true})
		}
	}
	for _, f := range valueSchema.Fields {
		if slices.ContainsFunc(m.keys, func(k sinkColumn) bool { return k.name == f.Name }) {
			continue
		}
		if len(w.s.fieldsWhitelist) > 0 && !slices.Contains(w.s.fieldsWhitelist, f.Name) {
			continue
		}
		m.values = append(m.values, sinkColumn{f.Name, f.Schema, false})
	}
	if len(m.keys) == 0 && len(m.values) == 0 {
		return m, recordErr("jdbc sink: no fields found using key and value schemas for table: %s", table)
	}
	return m, nil
}

// keyOnlyMeta is the record_key columns (also what a delete matches on).
func (w *writer) keyOnlyMeta(table tableID, keySchema *connect.Schema) (fieldsMeta, error) {
	var m fieldsMeta
	if keySchema == nil {
		return m, recordErr("jdbc sink: PK mode for table '%s' is record_key, but record key schema is missing", table)
	}
	switch {
	case keySchema.Type.IsPrimitive():
		if len(w.s.pkFields) != 1 {
			return m, recordErr("jdbc sink: need exactly one PK column defined since the key schema for records is a primitive type, defined columns are: %v (set pk.fields)", w.s.pkFields)
		}
		m.keys = []sinkColumn{{w.s.pkFields[0], keySchema, true}}
	case keySchema.Type == connect.Struct_:
		names := w.s.pkFields
		if len(names) == 0 {
			for _, f := range keySchema.Fields {
				names = append(names, f.Name)
			}
		}
		for _, n := range names {
			f, ok := keySchema.Field(n)
			if !ok {
				return m, recordErr("jdbc sink: PK mode for table '%s' is record_key with configured PK fields %v, but record key schema does not contain field: %s", table, w.s.pkFields, n)
			}
			m.keys = append(m.keys, sinkColumn{n, f.Schema, true})
		}
	default:
		return m, recordErr("jdbc sink: key schema must be primitive type or Struct, but is of type: %s", keySchema.Type)
	}
	return m, nil
}

// rowValues is a record's values for the columns, bound for the dialect.
func (w *writer) rowValues(r connect.SinkRecord, cols []sinkColumn) ([]any, error) {
	out := make([]any, 0, len(cols))
	for i, c := range cols {
		v, err := w.columnValue(r, c, i)
		if err != nil {
			return nil, err
		}
		b, err := w.d.bind(c.schema, v)
		if err != nil {
			return nil, recordErr("jdbc sink: record at offset %d field %s: %w", r.Offset(), c.name, err)
		}
		out = append(out, b)
	}
	return out, nil
}

func (w *writer) columnValue(r connect.SinkRecord, c sinkColumn, i int) (any, error) {
	if !c.key || w.s.pkMode == pkModeRecordValue {
		st, _ := r.Value.(*connect.Struct)
		if st == nil {
			return nil, recordErr("jdbc sink: record at offset %d has no value for field %s", r.Offset(), c.name)
		}
		return st.Get(c.name)
	}
	switch w.s.pkMode {
	case pkModeKafka:
		return []any{r.Topic, partitionOf(r), r.Offset()}[i], nil
	case pkModeRecordKey:
		if st, ok := r.Key.(*connect.Struct); ok {
			return st.Get(c.name)
		}
		if r.Key == nil {
			return nil, recordErr("jdbc sink: record at offset %d has a null key but pk.mode is record_key", r.Offset())
		}
		return r.Key, nil
	}
	return nil, recordErr("jdbc sink: unknown pk.mode %s", w.s.pkMode)
}

// writeBatch makes sure the table fits, then writes the batch's rows.
func (w *writer) writeBatch(ctx context.Context, tx *sql.Tx, b *batch) error {
	if b.delete {
		cols, err := w.tableColumns(ctx, tx, b.table)
		if err != nil {
			return err
		}
		if len(cols) == 0 {
			return nil // nothing to delete from a table that does not exist
		}
		return w.deleteRows(ctx, tx, b, cols)
	}
	cols, err := w.ensureTable(ctx, tx, b.table, b.meta)
	if err != nil {
		return err
	}
	switch w.s.insertMode {
	case insertModeUpdate:
		return w.updateRows(ctx, tx, b, cols)
	default:
		return w.insertRows(ctx, tx, b, cols, w.s.insertMode == insertModeUpsert)
	}
}

func (w *writer) tableColumns(ctx context.Context, tx *sql.Tx, t tableID) ([]columnMeta, error) {
	if cols, ok := w.tables[t]; ok {
		return cols, nil
	}
	cols, err := w.d.columns(ctx, tx, t)
	if err != nil {
		return nil, err
	}
	if len(cols) > 0 {
		w.tables[t] = cols
	}
	return cols, nil
}

// columnName finds the table's column for a field: the same name, or the
// same but for case (a table made without quoted names).
func columnName(cols []columnMeta, field string) (string, bool) {
	for _, c := range cols {
		if c.name == field {
			return c.name, true
		}
	}
	for _, c := range cols {
		if strings.EqualFold(c.name, field) {
			return c.name, true
		}
	}
	return "", false
}

// ensureTable is auto.create and auto.evolve (Confluent's DbStructure):
// the table's column names for the batch's columns, in order.
func (w *writer) ensureTable(ctx context.Context, tx *sql.Tx, t tableID, m fieldsMeta) ([]string, error) {
	cols, err := w.tableColumns(ctx, tx, t)
	if err != nil {
		return nil, err
	}
	if len(cols) == 0 {
		if !w.s.autoCreate {
			return nil, recordErr("jdbc sink: table %s is missing and auto-creation is disabled (auto.create=false)", t)
		}
		if err := w.createTable(ctx, tx, t, m); err != nil {
			return nil, err
		}
	} else if err := w.evolveTable(ctx, tx, t, m, cols); err != nil {
		return nil, err
	}
	delete(w.tables, t)
	if cols, err = w.tableColumns(ctx, tx, t); err != nil {
		return nil, err
	}
	var names []string
	for _, c := range m.all() {
		n, ok := columnName(cols, c.name)
		if !ok {
			return nil, fmt.Errorf("jdbc sink: table %s has no column %s after creating or altering it", t, c.name)
		}
		names = append(names, n)
	}
	return names, nil
}

func (w *writer) createTable(ctx context.Context, tx *sql.Tx, t tableID, m fieldsMeta) error {
	var defs []string
	for _, c := range m.all() {
		typ, err := w.d.sqlType(c.schema)
		if err != nil {
			return recordErr("jdbc sink: cannot create table %s: field %s: %w", t, c.name, err)
		}
		def := w.d.ident(c.name) + " " + typ
		if !c.schema.Optional || c.key {
			def += " NOT NULL"
		}
		defs = append(defs, def)
	}
	if len(m.keys) > 0 {
		var pk []string
		for _, k := range m.keys {
			pk = append(pk, w.d.ident(k.name))
		}
		defs = append(defs, "PRIMARY KEY("+strings.Join(pk, ",")+")")
	}
	stmt := "CREATE TABLE " + w.d.table(t) + " (\n" + strings.Join(defs, ",\n") + ")"
	if _, err := tx.ExecContext(ctx, stmt); err != nil {
		return fmt.Errorf("jdbc sink: create table %s: %w", t, err)
	}
	return nil
}

// evolveTable adds the columns the table lacks, nullable (a row written
// before has no value for them), as Confluent's auto.evolve.
func (w *writer) evolveTable(ctx context.Context, tx *sql.Tx, t tableID, m fieldsMeta, cols []columnMeta) error {
	var missing []sinkColumn
	for _, c := range m.all() {
		if _, ok := columnName(cols, c.name); !ok {
			missing = append(missing, c)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if !w.s.autoEvolve {
		var names []string
		for _, c := range missing {
			names = append(names, c.name)
		}
		return recordErr("jdbc sink: table %s is missing fields %v and auto-evolution is disabled (auto.evolve=false)", t, names)
	}
	for _, c := range missing {
		if c.key {
			return recordErr("jdbc sink: cannot ALTER TABLE %s to add missing primary key field %s", t, c.name)
		}
		if !c.schema.Optional && c.schema.Default == nil {
			return recordErr("jdbc sink: cannot ALTER TABLE %s to add missing field %s, as the field is not optional and does not have a default value", t, c.name)
		}
		typ, err := w.d.sqlType(c.schema)
		if err != nil {
			return recordErr("jdbc sink: cannot ALTER TABLE %s to add field %s: %w", t, c.name, err)
		}
		stmt := "ALTER TABLE " + w.d.table(t) + " ADD COLUMN " + w.d.ident(c.name) + " " + typ
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("jdbc sink: alter table %s: %w", t, err)
		}
	}
	return nil
}

// maxParams is the most bind parameters one statement may have.
func (d *dialect) maxParams() int {
	if d.kind == postgres {
		return 65535
	}
	return 32766
}

// insertRows writes multi-row INSERTs of up to batch.size rows; an upsert
// keeps only the last record of a key within a statement (a statement may
// not touch a row twice), which is what writing them in order would leave.
func (w *writer) insertRows(ctx context.Context, tx *sql.Tx, b *batch, names []string, upsert bool) error {
	cols := b.meta.all()
	per := max(1, min(w.s.batchSize, w.d.maxParams()/len(cols)))
	rows := make([][]any, 0, len(b.records))
	for _, r := range b.records {
		vals, err := w.rowValues(r, cols)
		if err != nil {
			return err
		}
		rows = append(rows, vals)
	}
	for start := 0; start < len(rows); start += per {
		chunk := rows[start:min(start+per, len(rows))]
		if upsert {
			chunk = lastPerKey(chunk, len(b.meta.keys))
		}
		stmt, args := w.insertStatement(b.table, names, len(b.meta.keys), chunk, upsert)
		if _, err := tx.ExecContext(ctx, stmt, args...); err != nil {
			return fmt.Errorf("jdbc sink: write %d rows to %s: %w", len(chunk), b.table, err)
		}
	}
	return nil
}

func lastPerKey(rows [][]any, nkeys int) [][]any {
	last := map[string]int{}
	for i, r := range rows {
		last[fmt.Sprintf("%#v", r[:nkeys])] = i
	}
	if len(last) == len(rows) {
		return rows
	}
	out := make([][]any, 0, len(last))
	for i, r := range rows {
		if last[fmt.Sprintf("%#v", r[:nkeys])] == i {
			out = append(out, r)
		}
	}
	return out
}

func (w *writer) insertStatement(t tableID, names []string, nkeys int, rows [][]any, upsert bool) (string, []any) {
	var b strings.Builder
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = w.d.ident(n)
	}
	b.WriteString("INSERT INTO " + w.d.table(t) + " (" + strings.Join(quoted, ",") + ") VALUES ")
	args := make([]any, 0, len(rows)*len(names))
	for i, r := range rows {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('(')
		for j, v := range r {
			if j > 0 {
				b.WriteByte(',')
			}
			args = append(args, v)
			b.WriteString(w.d.placeholder(len(args)))
		}
		b.WriteByte(')')
	}
	if upsert {
		b.WriteString(" ON CONFLICT (" + strings.Join(quoted[:nkeys], ",") + ") ")
		if len(quoted) == nkeys {
			b.WriteString("DO NOTHING")
		} else {
			sets := make([]string, 0, len(quoted)-nkeys)
			for _, q := range quoted[nkeys:] {
				sets = append(sets, q+"=excluded."+q)
			}
			b.WriteString("DO UPDATE SET " + strings.Join(sets, ","))
		}
	}
	return b.String(), args
}

// updateRows runs UPDATE ... WHERE key per record (insert.mode=update: a
// record whose row does not exist changes nothing, as Confluent's).
func (w *writer) updateRows(ctx context.Context, tx *sql.Tx, b *batch, names []string) error {
	nkeys := len(b.meta.keys)
	if len(names) == nkeys {
		return nil // nothing but the key to set
	}
	var sets, where []string
	for i, n := range names[nkeys:] {
		sets = append(sets, w.d.ident(n)+"="+w.d.placeholder(i+1))
	}
	for i, n := range names[:nkeys] {
		where = append(where, w.d.ident(n)+"="+w.d.placeholder(len(names)-nkeys+i+1))
	}
	stmt, err := tx.PrepareContext(ctx, "UPDATE "+w.d.table(b.table)+" SET "+strings.Join(sets, ",")+" WHERE "+strings.Join(where, " AND "))
	if err != nil {
		return fmt.Errorf("jdbc sink: prepare update of %s: %w", b.table, err)
	}
	defer stmt.Close()
	cols := b.meta.all()
	for _, r := range b.records {
		vals, err := w.rowValues(r, cols)
		if err != nil {
			return err
		}
		args := append(vals[nkeys:len(vals):len(vals)], vals[:nkeys]...)
		if _, err := stmt.ExecContext(ctx, args...); err != nil {
			return fmt.Errorf("jdbc sink: update %s: %w", b.table, err)
		}
	}
	return nil
}

// deleteRows deletes the rows of tombstones' keys.
func (w *writer) deleteRows(ctx context.Context, tx *sql.Tx, b *batch, cols []columnMeta) error {
	var where []string
	for i, k := range b.meta.keys {
		n, ok := columnName(cols, k.name)
		if !ok {
			return recordErr("jdbc sink: cannot delete from %s: it has no key column %s", b.table, k.name)
		}
		where = append(where, w.d.ident(n)+"="+w.d.placeholder(i+1))
	}
	stmt, err := tx.PrepareContext(ctx, "DELETE FROM "+w.d.table(b.table)+" WHERE "+strings.Join(where, " AND "))
	if err != nil {
		return fmt.Errorf("jdbc sink: prepare delete from %s: %w", b.table, err)
	}
	defer stmt.Close()
	for _, r := range b.records {
		vals, err := w.rowValues(r, b.meta.keys)
		if err != nil {
			return err
		}
		if _, err := stmt.ExecContext(ctx, vals...); err != nil {
			return fmt.Errorf("jdbc sink: delete from %s: %w", b.table, err)
		}
	}
	return nil
}

// sqlType is the column type auto.create and auto.evolve give a field, as
// Confluent's dialects' getSqlType.
func (d *dialect) sqlType(s *connect.Schema) (string, error) {
	pg := d.kind == postgres
	switch s.Name {
	case connect.DecimalName:
		// The schema fixes the scale, not the precision: 1000 is PostgreSQL's
		// most, and a declared scale keeps the value's digits (and lets the
		// source read the column back as a Decimal of that scale).
		scale, err := strconv.Atoi(s.Parameters[connect.DecimalScale])
		if err != nil || scale < 0 || scale > 1000 {
			return "", fmt.Errorf("decimal scale %q is not a whole number from 0 to 1000", s.Parameters[connect.DecimalScale])
		}
		return fmt.Sprintf("NUMERIC(1000,%d)", scale), nil
	case connect.DateName:
		return "DATE", nil
	case connect.TimeName:
		return "TIME", nil
	case connect.TimestampName:
		return "TIMESTAMP", nil
	}
	switch s.Type {
	case connect.Int8, connect.Int16:
		if pg {
			return "SMALLINT", nil
		}
		return "INTEGER", nil
	case connect.Int32:
		if pg {
			return "INT", nil
		}
		return "INTEGER", nil
	case connect.Int64:
		if pg {
			return "BIGINT", nil
		}
		return "INTEGER", nil
	case connect.Float32:
		return "REAL", nil
	case connect.Float64:
		if pg {
			return "DOUBLE PRECISION", nil
		}
		return "REAL", nil
	case connect.Boolean:
		return "BOOLEAN", nil
	case connect.String:
		return "TEXT", nil
	case connect.Bytes:
		if pg {
			return "BYTEA", nil
		}
		return "BLOB", nil
	}
	return "", fmt.Errorf("no SQL type for schema type %s", s.Type)
}

// bind turns a Connect value into what the driver writes to the column.
func (d *dialect) bind(s *connect.Schema, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch x := v.(type) {
	case connect.Decimal:
		return x.String(), nil
	case time.Time:
		return d.bindTime(s, x), nil
	case int8:
		return int64(x), nil
	case int16:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case int64, float64, string, []byte:
		return x, nil
	case float32:
		return float64(x), nil
	case bool:
		if d.kind == sqlite {
			if x {
				return int64(1), nil
			}
			return int64(0), nil
		}
		return x, nil
	}
	return nil, fmt.Errorf("a %s value (%T) cannot be written to a column", s.Type, v)
}

// bindTime writes Connect's Date, Time and Timestamp: PostgreSQL's driver
// takes the wall clock of a time.Time for TIMESTAMP columns (hence
// db.timezone's zone); SQLite gets the text its date functions read.
func (d *dialect) bindTime(s *connect.Schema, t time.Time) any {
	switch s.Name {
	case connect.DateName:
		if d.kind == sqlite {
			return t.UTC().Format("2006-01-02")
		}
		return time.Date(t.UTC().Year(), t.UTC().Month(), t.UTC().Day(), 0, 0, 0, 0, time.UTC)
	case connect.TimeName:
		return t.UTC().Format("15:04:05.000")
	}
	if d.kind == sqlite {
		return t.In(d.loc).Format(sqliteTimeLayout)
	}
	return t.In(d.loc)
}

package pgcdc

import (
	"math/big"
	"testing"
	"time"

	"github.com/samsa-io/samsa/connect"
)

const customers = `CREATE TABLE public.customers (
	id int PRIMARY KEY, name text NOT NULL, price numeric(10,2), created timestamptz,
	doc jsonb, uid uuid, data bytea, born date, vip boolean);
INSERT INTO public.customers VALUES
	(1, 'ann', 12.50, '2024-01-02 03:04:05.123456+00', '{"a": 1}', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '\x0102', '1990-05-06', true),
	(2, 'bob', NULL, NULL, NULL, NULL, NULL, NULL, NULL),
	(3, 'cy', -0.01, '2024-01-02 03:04:05+02', '[]', NULL, '\x', '2000-01-01', false);`

func TestSnapshotThenStreamDebeziumEnvelope(t *testing.T) {
	f := newFixture(t)
	f.exec(t, customers)
	task := f.start(t, f.props())

	snap := poll(t, task, 3)
	if got := ops(snap); got != "r,r,r" {
		t.Fatalf("snapshot ops = %s", got)
	}
	for i, want := range []string{"first", "true", "last"} {
		if got := get(t, snap[i], "source", "snapshot"); got != want {
			t.Errorf("snapshot record %d source.snapshot = %v, want %s", i, got, want)
		}
	}
	r := snap[0]
	if r.Topic != "dbserver1.public.customers" {
		t.Errorf("topic = %s", r.Topic)
	}
	if r.KeySchema.Name != "dbserver1.public.customers.Key" || r.ValueSchema.Name != "dbserver1.public.customers.Envelope" {
		t.Errorf("schema names = %s, %s", r.KeySchema.Name, r.ValueSchema.Name)
	}
	if k := r.Key.(*connect.Struct); k.String() != "Struct{id=1}" {
		t.Errorf("key = %v", k)
	}
	wantFields := []string{"before", "after", "source", "transaction", "op", "ts_ms", "ts_us", "ts_ns"}
	for i, fld := range r.ValueSchema.Fields {
		if fld.Name != wantFields[i] {
			t.Fatalf("envelope field %d = %s, want %s", i, fld.Name, wantFields[i])
		}
	}
	if get(t, r, "before") != nil {
		t.Errorf("snapshot before = %v", get(t, r, "before"))
	}
	checkRow1(t, r)
	for _, name := range []string{"connector", "name", "db", "schema", "table"} {
		want := map[string]string{"connector": "postgresql", "name": "dbserver1", "db": "postgres", "schema": "public", "table": "customers"}[name]
		if got := get(t, r, "source", name); got != want {
			t.Errorf("source.%s = %v, want %s", name, got, want)
		}
	}
	if r.SourcePartition["server"] != "dbserver1" || r.SourceOffset[offSnapshot] != "INITIAL" || r.SourceOffset[offLastSnapshot] != false {
		t.Errorf("partition %v offset %v", r.SourcePartition, r.SourceOffset)
	}
	if snap[2].SourceOffset[offLastSnapshot] != true {
		t.Errorf("last snapshot offset %v", snap[2].SourceOffset)
	}
	if get(t, snap[1], "after", "price") != nil || get(t, snap[2], "after", "created") != "2024-01-02T01:04:05Z" {
		t.Errorf("row 2 price %v, row 3 created %v", get(t, snap[1], "after", "price"), get(t, snap[2], "after", "created"))
	}
	f.rt.commit(t, task, snap)

	// REPLICA IDENTITY DEFAULT: updates have no before; deletes carry the key only.
	f.exec(t, `INSERT INTO customers (id, name) VALUES (4, 'dee'); UPDATE customers SET name = 'ann2' WHERE id = 1; DELETE FROM customers WHERE id = 2`)
	recs := poll(t, task, 4)
	if got := ops(recs); got != "c,u,d,tombstone" {
		t.Fatalf("ops = %s", got)
	}
	if get(t, recs[0], "after", "name") != "dee" || get(t, recs[0], "source", "snapshot") != "false" {
		t.Errorf("insert after %v", get(t, recs[0], "after"))
	}
	if get(t, recs[1], "before") != nil || get(t, recs[1], "after", "name") != "ann2" {
		t.Errorf("update before %v after %v", get(t, recs[1], "before"), get(t, recs[1], "after"))
	}
	if get(t, recs[2], "before", "id") != int32(2) || get(t, recs[2], "before", "name") != "" || get(t, recs[2], "after") != nil {
		t.Errorf("delete before %v", get(t, recs[2], "before"))
	}
	if recs[3].Key.(*connect.Struct).String() != "Struct{id=2}" || recs[3].ValueSchema != nil {
		t.Errorf("tombstone %+v", recs[3])
	}
	if get(t, recs[1], "source", "txId") == nil || get(t, recs[1], "source", "lsn") == nil {
		t.Errorf("source without txId/lsn: %v", get(t, recs[1], "source"))
	}
	f.rt.commit(t, task, recs)

	// REPLICA IDENTITY FULL: before is the whole old row.
	f.exec(t, `ALTER TABLE customers REPLICA IDENTITY FULL; UPDATE customers SET vip = false WHERE id = 1; DELETE FROM customers WHERE id = 3`)
	recs = poll(t, task, 3)
	if got := ops(recs); got != "u,d,tombstone" {
		t.Fatalf("ops = %s", got)
	}
	if get(t, recs[0], "before", "vip") != true || get(t, recs[0], "after", "vip") != false || get(t, recs[0], "before", "name") != "ann2" {
		t.Errorf("full update before %v after %v", get(t, recs[0], "before"), get(t, recs[0], "after"))
	}
	if get(t, recs[1], "before", "name") != "cy" {
		t.Errorf("full delete before %v", get(t, recs[1], "before"))
	}

	// A primary key change is a delete of the old key and a create of the new.
	f.exec(t, `UPDATE customers SET id = 10 WHERE id = 4`)
	recs = poll(t, task, 3)
	if got := ops(recs); got != "d,tombstone,c" {
		t.Fatalf("key change ops = %s", got)
	}
	if h, ok := recs[2].Headers.Last("__debezium.oldkey"); !ok || h.Value.(*connect.Struct).String() != "Struct{id=4}" {
		t.Errorf("create headers %v", recs[2].Headers)
	}
}

// checkRow1 checks every mapped type of the first row.
func checkRow1(t *testing.T, r connect.SourceRecord) {
	t.Helper()
	want := map[string]any{
		"id": int32(1), "name": "ann",
		"price":   connect.Decimal{Unscaled: big.NewInt(1250), Scale: 2},
		"created": "2024-01-02T03:04:05.123456Z",
		"doc":     `{"a": 1}`, "uid": "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
		"data": []byte{1, 2}, "born": int32(7430), "vip": true,
	}
	for name, w := range want {
		if got := get(t, r, "after", name); !connect.ValuesEqual(got, w) {
			t.Errorf("after.%s = %#v, want %#v", name, got, w)
		}
	}
	after := r.ValueSchema.Fields[1].Schema
	for name, schema := range map[string]string{"price": connect.DecimalName, "created": dbzZonedTimestamp, "doc": dbzJSON, "uid": dbzUUID, "born": dbzDate} {
		f, _ := after.Field(name)
		if f.Schema.Name != schema {
			t.Errorf("%s schema %s, want %s", name, f.Schema.Name, schema)
		}
	}
	if f, _ := after.Field("name"); f.Schema.Optional {
		t.Errorf("NOT NULL column name is optional")
	}
}

// An update that leaves a TOASTed value alone does not carry it: Debezium's
// placeholder stands in. time.precision.mode=connect gives Connect's types.
func TestToastPlaceholderAndConnectTimes(t *testing.T) {
	f := newFixture(t)
	f.exec(t, `CREATE TABLE docs (id int PRIMARY KEY, body text, n int, at timestamp, amount numeric)`)
	task := f.start(t, f.props(cfgTimePrecision, "connect"))
	quiet(t, task, 300*time.Millisecond)
	f.exec(t, `INSERT INTO docs SELECT 1, string_agg(md5(g::text), ''), 0, '2020-01-02 03:04:05.678', 3.14159 FROM generate_series(1, 500) g;
		UPDATE docs SET n = 1 WHERE id = 1`)
	recs := poll(t, task, 2)
	if body := get(t, recs[0], "after", "body").(string); len(body) != 16000 {
		t.Fatalf("insert body length %d", len(body))
	}
	if got := get(t, recs[1], "after", "body"); got != unavailable {
		t.Errorf("unchanged TOAST value = %.40v, want the placeholder", got)
	}
	if got := get(t, recs[0], "after", "at"); !connect.ValuesEqual(got, time.Date(2020, 1, 2, 3, 4, 5, 678000000, time.UTC)) {
		t.Errorf("connect timestamp = %v", got)
	}
	amount := get(t, recs[0], "after", "amount").(*connect.Struct)
	if s, _ := amount.Get("scale"); s != int32(5) {
		t.Errorf("variable numeric = %v", amount)
	}
}

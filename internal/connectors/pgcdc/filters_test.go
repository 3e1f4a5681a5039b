package pgcdc

import (
	"testing"
	"time"
)

// Truncates are skipped by default (skipped.operations=t, as Debezium);
// with skipped.operations=none each captured table truncated gets a t event.
func TestTruncate(t *testing.T) {
	f := newFixture(t)
	f.exec(t, `CREATE TABLE a (id int PRIMARY KEY); CREATE TABLE b (id int PRIMARY KEY)`)
	task := f.start(t, f.props(cfgSkippedOperations, "none"))
	quiet(t, task, 300*time.Millisecond)
	f.exec(t, `INSERT INTO a VALUES (1); INSERT INTO b VALUES (1); TRUNCATE a, b; INSERT INTO a VALUES (2)`)
	recs := poll(t, task, 5)
	if got := ids(t, recs); got != "c1,c1,tnil,tnil,c2" {
		t.Fatalf("ops = %s", got)
	}
	if recs[2].Topic != "dbserver1.public.a" || recs[3].Topic != "dbserver1.public.b" || recs[2].Key != nil {
		t.Errorf("truncate records %s %s key %v", recs[2].Topic, recs[3].Topic, recs[2].Key)
	}
	if get(t, recs[2], "before") != nil || get(t, recs[2], "after") != nil {
		t.Errorf("truncate with a row")
	}
	if err := task.Stop(); err != nil {
		t.Fatal(err)
	}

	f2 := newFixture(t)
	f2.exec(t, `CREATE TABLE a (id int PRIMARY KEY)`)
	task = f2.start(t, f2.props())
	quiet(t, task, 300*time.Millisecond)
	f2.exec(t, `INSERT INTO a VALUES (1); TRUNCATE a; INSERT INTO a VALUES (2)`)
	if got := ids(t, poll(t, task, 2)); got != "c1,c2" {
		t.Fatalf("default skipped.operations: %s", got)
	}
}

// table.include.list picks tables by regex, tables created while streaming
// included (the publication is FOR ALL TABLES); column.exclude.list drops
// columns.
func TestIncludeListAndNewTables(t *testing.T) {
	f := newFixture(t)
	f.exec(t, `CREATE TABLE inc_a (id int PRIMARY KEY, secret text, v text); CREATE TABLE other (id int PRIMARY KEY);
		INSERT INTO inc_a VALUES (1, 's', 'v'); INSERT INTO other VALUES (1)`)
	task := f.start(t, f.props(cfgTableInclude, `public\.inc_.*`, cfgColumnExclude, `public\.inc_.*\.secret`))
	recs := poll(t, task, 1)
	if recs[0].Topic != "dbserver1.public.inc_a" {
		t.Fatalf("snapshot read %s", recs[0].Topic)
	}
	if _, ok := recs[0].ValueSchema.Fields[1].Schema.Field("secret"); ok {
		t.Errorf("excluded column secret is in the row schema")
	}
	if get(t, recs[0], "after", "v") != "v" {
		t.Errorf("after %v", get(t, recs[0], "after"))
	}
	f.exec(t, `CREATE TABLE inc_b (id bigint PRIMARY KEY, secret text); CREATE TABLE other2 (id int);
		INSERT INTO other VALUES (2); INSERT INTO other2 VALUES (1); INSERT INTO inc_b VALUES (7, 's'); INSERT INTO inc_a VALUES (2, 's', 'w')`)
	recs = poll(t, task, 2)
	if recs[0].Topic != "dbserver1.public.inc_b" || get(t, recs[0], "after", "id") != int64(7) || recs[1].Topic != "dbserver1.public.inc_a" {
		t.Fatalf("stream = %s", describe(recs))
	}
	quiet(t, task, 300*time.Millisecond)
}

// A table without a primary key has null keys, Debezium's way.
func TestKeylessTable(t *testing.T) {
	f := newFixture(t)
	f.exec(t, `CREATE TABLE logs (msg text); ALTER TABLE logs REPLICA IDENTITY FULL`)
	task := f.start(t, f.props(cfgTombstones, "false"))
	quiet(t, task, 300*time.Millisecond)
	f.exec(t, `INSERT INTO logs VALUES ('a'); DELETE FROM logs`)
	recs := poll(t, task, 2)
	if got := ids(t, recs); got != "cnil,dnil" {
		t.Fatalf("ops = %s (tombstones.on.delete=false)", got)
	}
	if get(t, recs[1], "before", "msg") != "a" {
		t.Errorf("delete before %v", get(t, recs[1], "before"))
	}
}

// publication.autocreate.mode=filtered publishes only the included tables
// (and resets the publication to them on each start); disabled uses the
// publication as it is.
func TestPublicationModes(t *testing.T) {
	f := newFixture(t)
	f.exec(t, `CREATE TABLE a (id int PRIMARY KEY); CREATE TABLE b (id int PRIMARY KEY)`)
	task := f.start(t, f.props(cfgPublicationMode, "filtered", cfgTableInclude, `public\.a`, cfgPublicationName, "pub_f"))
	quiet(t, task, 300*time.Millisecond)
	if got := f.exec(t, `SELECT string_agg(tablename, ',') FROM pg_publication_tables WHERE pubname = 'pub_f'`); got != "a" {
		t.Fatalf("filtered publication has %q", got)
	}
	task.Stop()
	task = f.start(t, f.props(cfgPublicationMode, "filtered", cfgTableInclude, `public\.(a|b)`, cfgPublicationName, "pub_f"))
	if got := f.exec(t, `SELECT string_agg(tablename, ',' ORDER BY tablename) FROM pg_publication_tables WHERE pubname = 'pub_f'`); got != "a,b" {
		t.Fatalf("filtered publication after a restart with more tables: %q", got)
	}
	task.Stop()

	f.exec(t, `CREATE PUBLICATION mine FOR TABLE b`)
	task = f.start(t, f.props(cfgPublicationMode, "disabled", cfgPublicationName, "mine", cfgSlotName, "s_mine", cfgSnapshotMode, "no_data"))
	quiet(t, task, 300*time.Millisecond)
	f.exec(t, `INSERT INTO a VALUES (1); INSERT INTO b VALUES (1)`)
	recs := poll(t, task, 1)
	if recs[0].Topic != "dbserver1.public.b" {
		t.Fatalf("disabled mode streamed %s", recs[0].Topic)
	}
	quiet(t, task, 300*time.Millisecond)
}

// slot.drop.on.stop drops the slot when the task stops; without it the
// slot stays.
func TestSlotDropOnStop(t *testing.T) {
	f := newFixture(t)
	f.exec(t, `CREATE TABLE a (id int PRIMARY KEY)`)
	task := f.start(t, f.props(cfgSlotName, "kept"))
	quiet(t, task, 200*time.Millisecond)
	if err := task.Stop(); err != nil {
		t.Fatal(err)
	}
	task = f.start(t, f.props(cfgSlotName, "dropped", cfgDropSlotOnStop, "true"))
	quiet(t, task, 200*time.Millisecond)
	if err := task.Stop(); err != nil {
		t.Fatal(err)
	}
	if got := f.exec(t, `SELECT string_agg(slot_name, ',') FROM pg_replication_slots`); got != "kept" {
		t.Fatalf("slots after stop: %q, want kept only", got)
	}
}

package pgcdc

import (
	"testing"
	"time"
)

func TestSnapshotModes(t *testing.T) {
	f := newFixture(t)
	f.exec(t, `CREATE TABLE t (id int PRIMARY KEY); INSERT INTO t VALUES (1), (2)`)

	t.Run("no_data streams only", func(t *testing.T) {
		task := f.start(t, f.props(cfgSnapshotMode, "no_data", cfgSlotName, "s_nodata"))
		quiet(t, task, 300*time.Millisecond)
		f.exec(t, `INSERT INTO t VALUES (3)`)
		if got := ids(t, poll(t, task, 1)); got != "c3" {
			t.Fatalf("no_data: %s", got)
		}
		task.Stop()
	})
	t.Run("initial_only reads once and keeps no slot", func(t *testing.T) {
		rt := f.rt
		f.rt = &runtime{}
		defer func() { f.rt = rt }()
		props := f.props(cfgSnapshotMode, "initial_only", cfgSlotName, "s_only")
		task := f.start(t, props)
		recs := poll(t, task, 3)
		if got := ids(t, recs); got != "r1,r2,r3" {
			t.Fatalf("initial_only: %s", got)
		}
		f.rt.commit(t, task, recs)
		f.exec(t, `INSERT INTO t VALUES (4)`)
		quiet(t, task, 300*time.Millisecond)
		if n := f.exec(t, `SELECT count(*) FROM pg_replication_slots WHERE slot_name = 's_only'`); n != "0" {
			t.Errorf("initial_only left a slot")
		}
		task.Stop()
		task = f.start(t, props) // completed: not again
		quiet(t, task, 300*time.Millisecond)
		task.Stop()
		f.exec(t, `DELETE FROM t WHERE id = 4`)
	})
	t.Run("always snapshots on every start", func(t *testing.T) {
		rt := f.rt
		f.rt = &runtime{}
		defer func() { f.rt = rt }()
		props := f.props(cfgSnapshotMode, "always", cfgSlotName, "s_always")
		task := f.start(t, props)
		f.rt.commit(t, task, poll(t, task, 3))
		task.Stop()
		task = f.start(t, props)
		if got := ids(t, poll(t, task, 3)); got != "r1,r2,r3" {
			t.Fatalf("always, second start: %s", got)
		}
		f.exec(t, `INSERT INTO t VALUES (5)`)
		if got := ids(t, poll(t, task, 1)); got != "c5" {
			t.Fatalf("always, then: %s", got)
		}
		task.Stop()
	})
}

// initial: a snapshot interrupted midway (the stored offset is a snapshot
// record, not the last) is taken again from the start, from a new slot;
// a completed one is not.
func TestInterruptedSnapshotIsRedone(t *testing.T) {
	f := newFixture(t)
	f.exec(t, `CREATE TABLE t (id int PRIMARY KEY); INSERT INTO t SELECT generate_series(1, 5)`)
	props := f.props(cfgMaxBatchSize, "2", cfgSnapshotFetchSize, "2")
	task := f.start(t, props)
	first := poll(t, task, 2)
	f.rt.commit(t, task, first)
	task.Stop()
	f.exec(t, `INSERT INTO t VALUES (6)`)

	task = f.start(t, props)
	recs := poll(t, task, 6)
	if got := ids(t, recs); got != "r1,r2,r3,r4,r5,r6" {
		t.Fatalf("redone snapshot: %s", got)
	}
	f.rt.commit(t, task, recs)
	f.exec(t, `INSERT INTO t VALUES (7)`)
	c7 := poll(t, task, 1)
	if got := ids(t, c7); got != "c7" {
		t.Fatalf("then: %s", got)
	}
	f.rt.commit(t, task, c7)
	task.Stop()
	task = f.start(t, props)
	quiet(t, task, 300*time.Millisecond)
}

// Heartbeats carry the stream's position while nothing captured changes,
// so committing them moves the slot past WAL of other tables.
func TestHeartbeatMovesTheSlot(t *testing.T) {
	f := newFixture(t)
	f.exec(t, `CREATE TABLE watched (id int PRIMARY KEY); CREATE TABLE busy (id int)`)
	task := f.start(t, f.props(cfgTableInclude, `public\.watched`, cfgHeartbeatInterval, "100", cfgSkippedOperations, "none"))
	f.exec(t, `INSERT INTO busy SELECT generate_series(1, 100)`)
	start := f.slotFlushed(t, "debezium")
	var moved bool
	for deadline := time.Now().Add(20 * time.Second); !moved && time.Now().Before(deadline); {
		recs := poll(t, task, 1)
		r := recs[0]
		if r.Topic != "__debezium-heartbeat.dbserver1" {
			t.Fatalf("record %s, want only heartbeats", r.Topic)
		}
		f.rt.commit(t, task, recs)
		quiet(t, task, 0)
		moved = f.slotFlushed(t, "debezium") > start
	}
	if !moved {
		t.Fatal("the slot never moved past the other table's changes")
	}
}

// Without heartbeats the slot still moves while idle once everything
// returned is stored.
func TestIdleSlotMovesWhenEverythingIsStored(t *testing.T) {
	f := newFixture(t)
	f.exec(t, `CREATE TABLE watched (id int PRIMARY KEY); CREATE TABLE busy (id int)`)
	task := f.start(t, f.props(cfgTableInclude, `public\.watched`))
	f.exec(t, `INSERT INTO watched VALUES (1)`)
	recs := poll(t, task, 1)
	f.exec(t, `INSERT INTO busy SELECT generate_series(1, 100)`)
	quiet(t, task, 500*time.Millisecond)
	held := f.slotFlushed(t, "debezium")
	if held > offsetLSN(t, recs[0].SourceOffset, offLSN) {
		t.Fatalf("slot moved to %d before the record at %d was stored", held, offsetLSN(t, recs[0].SourceOffset, offLSN))
	}
	f.rt.commit(t, task, recs)
	f.exec(t, `INSERT INTO busy VALUES (0)`)
	for deadline := time.Now().Add(10 * time.Second); f.slotFlushed(t, "debezium") <= offsetLSN(t, recs[0].SourceOffset, offLSN); {
		if time.Now().After(deadline) {
			t.Fatal("the slot did not move past the stored record while idle")
		}
		quiet(t, task, 200*time.Millisecond)
	}
}

package pgcdc

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/samsa-io/samsa/connect"
)

func ids(t *testing.T, recs []connect.SourceRecord) string {
	t.Helper()
	var out []string
	for _, r := range recs {
		k := "nil"
		if r.Key != nil {
			k = fmt.Sprint(r.Key.(*connect.Struct).GetField(r.KeySchema.Fields[0]))
		}
		op := "tombstone"
		if r.Value != nil {
			op = fmt.Sprint(field(r, "op"))
		}
		out = append(out, op+k)
	}
	return strings.Join(out, ",")
}

// A task stopped mid-stream (as a crash: the runtime stored only some
// offsets) resumes from the stored offset: nothing committed comes again,
// nothing uncommitted is lost, even mid-transaction and between a delete
// and its tombstone.
func TestRestartResumesFromTheCommittedOffset(t *testing.T) {
	f := newFixture(t)
	f.exec(t, `CREATE TABLE items (id int PRIMARY KEY, v text)`)
	props := f.props()
	task := f.start(t, props)
	quiet(t, task, 300*time.Millisecond) // an empty snapshot, then the stream

	f.exec(t, `BEGIN; INSERT INTO items SELECT g, 'x' FROM generate_series(1, 5) g; COMMIT;
		BEGIN; INSERT INTO items VALUES (6), (7); DELETE FROM items WHERE id = 1; COMMIT;`)
	recs := poll(t, task, 9)
	if got := ids(t, recs); got != "c1,c2,c3,c4,c5,c6,c7,d1,tombstone1" {
		t.Fatalf("stream = %s", got)
	}
	before := f.slotFlushed(t, "debezium")
	f.rt.commit(t, task, recs[:3]) // Kafka has 1..3, mid-transaction
	quiet(t, task, 300*time.Millisecond)
	if got := f.slotFlushed(t, "debezium"); got != before {
		t.Fatalf("slot confirmed %d, moved from %d though the first transaction is not all in Kafka", got, before)
	}
	if err := task.Stop(); err != nil {
		t.Fatal(err)
	}

	task = f.start(t, props)
	again := poll(t, task, 6)
	if got := ids(t, again); got != "c4,c5,c6,c7,d1,tombstone1" {
		t.Fatalf("after restart = %s, want the uncommitted records once", got)
	}
	quiet(t, task, 300*time.Millisecond)
	// Kafka takes everything up to the delete, not its tombstone.
	f.rt.commit(t, task, again[:5])
	stored := f.rt.stored
	quiet(t, task, 300*time.Millisecond)
	flushed := f.slotFlushed(t, "debezium")
	if want := offsetLSN(t, stored, offCommitLSN); flushed != want {
		t.Fatalf("slot confirmed %d, want the stored offset's lsn_commit %d", flushed, want)
	}
	if flushed <= before {
		t.Fatalf("slot did not move past the first transaction: %d <= %d", flushed, before)
	}
	if err := task.Stop(); err != nil {
		t.Fatal(err)
	}

	task = f.start(t, props)
	last := poll(t, task, 1)
	if got := ids(t, last); got != "tombstone1" {
		t.Fatalf("after the second restart = %s, want only the tombstone", got)
	}
	f.rt.commit(t, task, last)
	f.exec(t, `INSERT INTO items VALUES (8)`)
	if got := ids(t, poll(t, task, 1)); got != "c8" {
		t.Fatalf("then %s", got)
	}
}

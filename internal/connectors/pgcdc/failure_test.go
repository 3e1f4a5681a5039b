package pgcdc

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/samsa-io/samsa/connect"
)

// pollThroughFailure polls until want records came, counting the
// retriable errors on the way; any other error fails the test.
func pollThroughFailure(t *testing.T, task *Task, want int) ([]connect.SourceRecord, int) {
	t.Helper()
	var out []connect.SourceRecord
	retriable := 0
	for deadline := time.Now().Add(60 * time.Second); len(out) < want; {
		if time.Now().After(deadline) {
			t.Fatalf("got %d records (%d retriable errors), want %d: %s", len(out), retriable, want, describe(out))
		}
		recs, err := task.Poll(context.Background())
		if err != nil {
			if !connect.IsRetriable(err) {
				t.Fatalf("poll: %v is not retriable", err)
			}
			retriable++
			continue
		}
		out = append(out, recs...)
	}
	return out, retriable
}

// Losing the connections (the server ends them, or a backend crashes and
// PostgreSQL restarts everything) makes Poll return retriable errors until
// the server is back; the task then continues after the last record it
// returned, losing and repeating nothing.
func TestConnectionLossIsRetriableAndRecovers(t *testing.T) {
	f := newFixture(t)
	f.exec(t, `CREATE TABLE t (id int PRIMARY KEY)`)
	f.exec(t, `INSERT INTO t VALUES (1)`)
	task := f.start(t, f.props())
	f.rt.commit(t, task, poll(t, task, 1))
	f.exec(t, `INSERT INTO t VALUES (2)`)
	recs := poll(t, task, 1) // returned, not committed: must not come again

	f.exec(t, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'samsa-pgcdc'`)
	f.exec(t, `INSERT INTO t VALUES (3)`)
	got, retriable := pollThroughFailure(t, task, 1)
	if retriable == 0 {
		t.Errorf("no retriable error after the connections were terminated")
	}
	if s := ids(t, got); s != "c3" {
		t.Fatalf("after terminate: %s, want c3 only", s)
	}
	f.rt.commit(t, task, append(recs, got...))

	// A backend killed -9: the postmaster ends every session and recovers.
	pid := f.exec(t, `SELECT pid FROM pg_stat_replication WHERE application_name = 'samsa-pgcdc'`)
	if pid == "" {
		t.Fatal("no walsender")
	}
	f.exec(t, `SET synchronous_commit = on; INSERT INTO t VALUES (4)`)
	if out, err := exec.Command("kill", "-9", pid).CombinedOutput(); err != nil {
		t.Fatalf("kill: %v %s", err, out)
	}
	got, retriable = pollThroughFailure(t, task, 1)
	if retriable == 0 {
		t.Errorf("no retriable error after the crash")
	}
	waitUp(t, f)
	f.exec(t, `INSERT INTO t VALUES (5)`)
	more := poll(t, task, 1)
	if s := ids(t, append(got, more...)); s != "c4,c5" {
		t.Fatalf("after the crash: %s, want c4,c5", s)
	}
}

func waitUp(t *testing.T, f *fixture) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; {
		out, err := f.srv.Exec(context.Background(), "postgres", "SELECT 1")
		if err == nil && strings.TrimSpace(out) == "1" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("server not back: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// A change the connector cannot express fails the task (not retriable: a
// retry reads the same change), naming the table and column.
func TestUnmappableKeyFailsTheTask(t *testing.T) {
	f := newFixture(t)
	f.exec(t, `CREATE TABLE ok (id int PRIMARY KEY)`)
	task := f.start(t, f.props())
	quiet(t, task, 300*time.Millisecond)
	f.exec(t, `CREATE TABLE odd (id interval PRIMARY KEY, note text); INSERT INTO odd VALUES ('1 day', 'x')`)
	var err error
	for deadline := time.Now().Add(10 * time.Second); err == nil && time.Now().Before(deadline); {
		_, err = task.Poll(context.Background())
	}
	if err == nil || connect.IsRetriable(err) || !strings.Contains(err.Error(), "public.odd: key column id has type OID 1186") {
		t.Fatalf("poll err = %v, want a non-retriable error naming the key column", err)
	}
	task.Stop()

	// The same table met by a snapshot fails Start.
	c := &Connector{}
	task = c.NewTask().(*Task)
	f.rt = &runtime{}
	err = task.Start(f.rt, f.props(cfgSlotName, "other"))
	if err == nil || !strings.Contains(err.Error(), "key column id") {
		t.Fatalf("start err = %v", err)
	}
}

// The whole server killed and started again: Poll returns retriable errors
// while it is down (connections refused, then recovery), and the task
// resumes after the last record it returned.
func TestServerRestart(t *testing.T) {
	f := newFixture(t)
	f.exec(t, `CREATE TABLE t (id int PRIMARY KEY)`)
	task := f.start(t, f.props())
	quiet(t, task, 300*time.Millisecond)
	f.exec(t, `SET synchronous_commit = on; INSERT INTO t VALUES (1)`)
	recs := poll(t, task, 1)
	f.rt.commit(t, task, recs)
	f.exec(t, `SET synchronous_commit = on; INSERT INTO t VALUES (2)`)
	f.srv.Restart(t)
	f.exec(t, `INSERT INTO t VALUES (3)`)
	got, retriable := pollThroughFailure(t, task, 2)
	if retriable == 0 {
		t.Errorf("no retriable error across the restart")
	}
	if s := ids(t, got); s != "c2,c3" {
		t.Fatalf("after the restart: %s, want c2,c3", s)
	}
}

// A slot still held by another session (a previous walsender the server has
// not yet closed) does not fail Start: polls return retriable errors until
// the slot is free, then stream.
func TestBusySlotIsRetried(t *testing.T) {
	f := newFixture(t)
	f.exec(t, `CREATE TABLE t (id int PRIMARY KEY)`)
	holder := exec.Command("pg_recvlogical", "-h", f.srv.Host, "-p", fmt.Sprint(f.srv.Port), "-U", f.srv.User, "-d", "postgres",
		"--slot", "busy", "--create-slot", "--start", "-P", "pgoutput", "-o", "proto_version=1", "-o", "publication_names=dbz_publication", "-f", "/dev/null")
	f.exec(t, `CREATE PUBLICATION dbz_publication FOR ALL TABLES`)
	if err := holder.Start(); err != nil {
		t.Fatalf("pg_recvlogical (Debian's postgresql-client): %v", err)
	}
	defer holder.Process.Kill()
	for deadline := time.Now().Add(10 * time.Second); f.exec(t, `SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'busy' AND active`) != "1"; {
		if time.Now().After(deadline) {
			t.Fatal("pg_recvlogical never held the slot")
		}
		time.Sleep(50 * time.Millisecond)
	}
	task := f.start(t, f.props(cfgSlotName, "busy", cfgSnapshotMode, "no_data"))
	if _, err := task.Poll(context.Background()); !connect.IsRetriable(err) || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("poll with the slot busy: %v", err)
	}
	holder.Process.Kill()
	holder.Wait()
	f.exec(t, `INSERT INTO t VALUES (1)`)
	got, _ := pollThroughFailure(t, task, 1)
	if s := ids(t, got); s != "c1" {
		t.Fatalf("after the slot was freed: %s", s)
	}
}

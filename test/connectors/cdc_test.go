package connectors

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/connectors/pgtest"
)

// change is one event the test expects for a key: the op and the row's
// version after it ("d" and the tombstone carry the version deleted).
type change struct {
	op  string // r, c, u, d, or "tombstone"
	ver int
}

// cdcEvent is a record of the topic as JsonConverter wrote Debezium's
// envelope (schemas enabled: {"schema":..., "payload":...}).
type cdcEvent struct {
	Payload *struct {
		Before *accountRow `json:"before"`
		After  *accountRow `json:"after"`
		Source struct {
			Connector string `json:"connector"`
			Name      string `json:"name"`
			DB        string `json:"db"`
			Schema    string `json:"schema"`
			Table     string `json:"table"`
			Snapshot  string `json:"snapshot"`
			LSN       *int64 `json:"lsn"`
		} `json:"source"`
		Op string `json:"op"`
	} `json:"payload"`
}

type accountRow struct {
	ID    int    `json:"id"`
	Owner string `json:"owner"`
	Ver   int    `json:"ver"`
}

// TestPostgresCDC: rows present before the connector come as snapshot
// reads (op "r"), then inserts, updates and deletes (with tombstones)
// stream through PostgresConnector; the worker is killed (SIGKILL) while
// changes are made and another one started. Read back with a Kafka
// consumer, each key's events are Debezium's envelope in the order the
// changes were made, every change present, repeats only as a replay from
// the last committed position.
func TestPostgresCDC(t *testing.T) {
	pg := pgtest.Start(t)
	exec := func(sql string) {
		t.Helper()
		if _, err := pg.Exec(context.Background(), "postgres", sql); err != nil {
			t.Error(err)
		}
	}
	exec(`CREATE TABLE accounts (id int PRIMARY KEY, owner text NOT NULL, ver int NOT NULL);
		ALTER TABLE accounts REPLICA IDENTITY FULL`)
	var mu sync.Mutex
	want := map[int][]change{}
	made := func(id int, c change) {
		mu.Lock()
		want[id] = append(want[id], c)
		mu.Unlock()
	}
	const snapshotRows = 5
	for id := 1; id <= snapshotRows; id++ {
		exec(fmt.Sprintf("INSERT INTO accounts VALUES (%d, 'owner-%d', 0)", id, id))
		made(id, change{"r", 0})
	}

	g := startGroup(t, "e2e-cdc")
	g.create("cdc", map[string]string{
		"connector.class":           "io.debezium.connector.postgresql.PostgresConnector",
		"database.hostname":         pg.Host,
		"database.port":             fmt.Sprint(pg.Port),
		"database.user":             pg.User,
		"database.dbname":           "postgres",
		"database.sslmode":          "disable",
		"topic.prefix":              "cdc",
		"table.include.list":        `public\.accounts`,
		"slot.name":                 "e2e",
		"poll.interval.ms":          "100",
		"status.update.interval.ms": "1000",
	})
	g.running("cdc", 1)
	const topic = "cdc.public.accounts"
	admin := kadm.NewClient(newClient(t))
	endOffset := func() int64 {
		ends, err := admin.ListEndOffsets(t.Context(), topic)
		if err != nil {
			return 0
		}
		o, _ := ends.Lookup(topic, 0)
		return o.Offset
	}
	eventually(t, 60*time.Second, "the snapshot in the topic", func() (bool, string) {
		g.failIfFailed("cdc")
		return endOffset() >= snapshotRows, fmt.Sprint(endOffset())
	})

	// Changes, one statement at a time: id i is inserted, updated twice in
	// the next two rounds, and every third deleted in the round after.
	const n = 150
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 1; i <= n+3; i++ {
			id := snapshotRows + i
			if i <= n {
				exec(fmt.Sprintf("INSERT INTO accounts VALUES (%d, 'owner-%d', 0)", id, id))
				made(id, change{"c", 0})
			}
			for k := 1; k <= 2; k++ {
				if j := i - k; j >= 1 && j <= n {
					exec(fmt.Sprintf("UPDATE accounts SET ver = %d, owner = 'owner-%d-v%d' WHERE id = %d", k, snapshotRows+j, k, snapshotRows+j))
					made(snapshotRows+j, change{"u", k})
				}
			}
			if j := i - 3; j >= 1 && j <= n && j%3 == 0 {
				exec(fmt.Sprintf("DELETE FROM accounts WHERE id = %d", snapshotRows+j))
				made(snapshotRows+j, change{"d", 2})
				made(snapshotRows+j, change{op: "tombstone"})
			}
			time.Sleep(25 * time.Millisecond)
		}
	}()
	// Kill the worker mid-stream, once some changes are in the topic.
	eventually(t, 60*time.Second, "changes streaming", func() (bool, string) {
		g.failIfFailed("cdc")
		return endOffset() >= snapshotRows+100, fmt.Sprint(endOffset())
	})
	select {
	case <-done:
		t.Fatal("every change was made before the kill: the kill would not be mid-stream")
	default:
	}
	g.kill(g.workers[0])
	killedAt := time.Now()
	g.start()
	g.running("cdc", 1)
	t.Logf("the CDC task runs again %s after the kill", time.Since(killedAt).Round(100*time.Millisecond))
	<-done

	mu.Lock()
	total := 0
	for _, cs := range want {
		total += len(cs)
	}
	mu.Unlock()
	byKey := map[int][]int{} // per key, the index in want of each event read
	var firstSnapshot, lastSnapshot string
	snapshotReads := 0
	recs := readAll(t, topic, 90*time.Second, func(rs []*kgo.Record) bool {
		g.failIfFailed("cdc")
		seen := map[[2]int]bool{}
		for _, r := range rs {
			id, idx := matchChange(t, r, want, &mu)
			seen[[2]int{id, idx}] = true
		}
		return len(seen) == total
	})
	for _, r := range recs {
		id, idx := matchChange(t, r, want, &mu)
		byKey[id] = append(byKey[id], idx)
		if r.Value == nil {
			continue
		}
		var ev cdcEvent
		_ = json.Unmarshal(r.Value, &ev)
		p := ev.Payload
		if p.Source.Connector != "postgresql" || p.Source.Name != "cdc" || p.Source.DB != "postgres" || p.Source.Schema != "public" || p.Source.Table != "accounts" {
			t.Fatalf("offset %d: source block %+v", r.Offset, p.Source)
		}
		if p.Op == "r" {
			if snapshotReads == 0 {
				firstSnapshot = p.Source.Snapshot
			}
			snapshotReads++
			if snapshotReads == snapshotRows {
				lastSnapshot = p.Source.Snapshot
			}
			if snapshotReads > 1 && snapshotReads < snapshotRows && p.Source.Snapshot != "true" {
				t.Fatalf("offset %d: snapshot read %d has source.snapshot %q, want true", r.Offset, snapshotReads, p.Source.Snapshot)
			}
		} else if p.Source.Snapshot != "false" {
			t.Fatalf("offset %d: streamed %q has source.snapshot %q, want false", r.Offset, p.Op, p.Source.Snapshot)
		}
	}
	if firstSnapshot != "first" || lastSnapshot != "last" || snapshotReads != snapshotRows {
		t.Fatalf("snapshot: %d reads, flags first %q last %q; want %d, first and last", snapshotReads, firstSnapshot, lastSnapshot, snapshotRows)
	}
	dups := 0
	mu.Lock()
	defer mu.Unlock()
	for id, idx := range byKey {
		dups += checkReplays(t, fmt.Sprintf("key %d", id), idx, len(want[id]))
	}
	if len(byKey) != len(want) {
		t.Fatalf("%d keys in the topic, %d changed", len(byKey), len(want))
	}
	t.Logf("%d records for %d changes of %d keys (%d repeated by the replay after the kill)", len(recs), total, len(want), dups)
}

// matchChange finds which of its key's expected changes a record is, and
// checks the envelope says what that change did.
func matchChange(t *testing.T, r *kgo.Record, want map[int][]change, mu *sync.Mutex) (id, index int) {
	t.Helper()
	var key struct {
		Payload struct {
			ID int `json:"id"`
		} `json:"payload"`
	}
	if err := json.Unmarshal(r.Key, &key); err != nil || key.Payload.ID == 0 {
		t.Fatalf("offset %d: key %s is not the table's key struct (%v)", r.Offset, r.Key, err)
	}
	id = key.Payload.ID
	got := change{op: "tombstone"}
	if r.Value != nil {
		var ev cdcEvent
		if err := json.Unmarshal(r.Value, &ev); err != nil || ev.Payload == nil {
			t.Fatalf("offset %d: value %s is not an envelope (%v)", r.Offset, r.Value, err)
		}
		p := ev.Payload
		got.op = p.Op
		switch p.Op {
		case "r", "c":
			if p.Before != nil || p.After == nil {
				t.Fatalf("offset %d: %q with before %+v after %+v", r.Offset, p.Op, p.Before, p.After)
			}
			got.ver = p.After.Ver
		case "u":
			if p.Before == nil || p.After == nil || p.Before.Ver != p.After.Ver-1 || p.Before.ID != id {
				t.Fatalf("offset %d: update with before %+v after %+v (REPLICA IDENTITY FULL: the old row)", r.Offset, p.Before, p.After)
			}
			got.ver = p.After.Ver
		case "d":
			if p.Before == nil || p.After != nil || p.Before.ID != id {
				t.Fatalf("offset %d: delete with before %+v after %+v", r.Offset, p.Before, p.After)
			}
			got.ver = p.Before.Ver
		default:
			t.Fatalf("offset %d: op %q", r.Offset, p.Op)
		}
		row := p.After
		if row == nil {
			row = p.Before
		}
		wantOwner := fmt.Sprintf("owner-%d", id)
		if row.Ver > 0 {
			wantOwner += fmt.Sprintf("-v%d", row.Ver)
		}
		if row.ID != id || row.Owner != wantOwner {
			t.Fatalf("offset %d: key %d, row %+v", r.Offset, id, row)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for i, c := range want[id] {
		if c == got {
			return id, i
		}
	}
	t.Fatalf("offset %d: key %d: %+v was never made (made: %+v)", r.Offset, id, got, want[id])
	return 0, 0
}

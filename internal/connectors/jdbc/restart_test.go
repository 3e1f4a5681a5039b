package jdbc

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/samsa-io/samsa/connect"
)

// Rows arrive in random bursts while the task polls, delivers a random
// prefix of what it read, and restarts at random, losing what it had read
// but not delivered. In the modes with a total order every row must be
// delivered exactly once, in order; in timestamp mode at least once, and
// again only when it shares its timestamp with the row delivered before.
func TestSourceRandomRestarts(t *testing.T) {
	for _, mode := range []string{modeIncrementing, modeTimestampIncrement, modeTimestamp} {
		t.Run(mode, func(t *testing.T) {
			bothDBs(t, func(t *testing.T, db *testDB) {
				randomRestarts(t, db, mode, rand.New(rand.NewPCG(7, uint64(len(mode)))))
			})
		})
	}
}

func randomRestarts(t *testing.T, db *testDB, mode string, rng *rand.Rand) {
	db.exec(t, "CREATE TABLE feed (id INTEGER NOT NULL, at TIMESTAMP NOT NULL)")
	cfg := props(cfgConnectionURL, db.url, cfgMode, mode, cfgTopicPrefix, "",
		cfgPollInterval, "1", cfgBatchMaxRows, fmt.Sprint(1+rng.IntN(4)), cfgTableWhitelist, "feed")
	if mode != modeIncrementing {
		cfg[cfgTimestampColumns] = "at"
	}
	if mode != modeTimestamp {
		cfg[cfgIncrementingColumn] = "id"
	}
	taskCfg := tasksConfig(t, cfg)
	offsets := newOffsetStore()
	task := startSourceTask(t, taskCfg, offsets)
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var delivered, pending []connect.SourceRecord
	next := 3 // ids 3.. so that each three share id/3
	deliver := func(n int) {
		offsets.commit(t, pending[:n])
		delivered = append(delivered, pending[:n]...)
		pending = pending[n:]
	}
	for round := 0; round < 40; round++ {
		burst := rng.IntN(6)
		if mode == modeTimestamp {
			// Timestamp mode cannot see a row that arrives after others of
			// its timestamp were read (hence timestamp.delay.interval.ms):
			// whole timestamps arrive at once here.
			burst = 3 * rng.IntN(3)
		}
		for range burst {
			// Three rows share each timestamp, so batches split ties.
			at := base.Add(time.Duration(next/3) * time.Second)
			db.exec(t, fmt.Sprintf("INSERT INTO feed VALUES (%d, '%s')", next, at.Format(sqliteTimeLayout)))
			next++
		}
		for range 1 + rng.IntN(3) {
			recs, err := task.Poll(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			pending = append(pending, recs...)
		}
		deliver(rng.IntN(len(pending) + 1))
		if rng.IntN(3) == 0 {
			task.Stop()
			pending = nil // read but never reached Kafka
			task = startSourceTask(t, taskCfg, offsets)
		}
	}
	task.Stop()
	pending = nil
	task = startSourceTask(t, taskCfg, offsets)
	pending = drain(t, task, 200*time.Millisecond)
	deliver(len(pending))
	got := ids(t, delivered, "id")
	if mode != modeTimestamp {
		if !slices.Equal(got, seq(3, int64(next-1))) {
			t.Fatalf("delivered %v, want 3..%d once each", got, next-1)
		}
		return
	}
	seen := map[int64]bool{}
	for i, id := range got {
		if seen[id] {
			// Read again after a restart: the stored offset was the
			// timestamp before this row's, shared with a row after it.
			if i == 0 || (got[i-1])/3 > id/3 {
				t.Fatalf("row %d delivered again out of place: %v", id, got)
			}
		}
		seen[id] = true
	}
	for id := int64(3); id < int64(next); id++ {
		if !seen[id] {
			t.Fatalf("row %d never delivered: %v", id, got)
		}
	}
}

// drain polls until nothing more comes for quiet.
func drain(t *testing.T, task *SourceTask, quiet time.Duration) []connect.SourceRecord {
	t.Helper()
	var out []connect.SourceRecord
	for last := time.Now(); time.Since(last) < quiet; {
		recs, err := task.Poll(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) > 0 {
			last = time.Now()
		}
		out = append(out, recs...)
	}
	return out
}

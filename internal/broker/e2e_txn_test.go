package broker

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestTransactionsCommitAndAbort: a franz-go transactional producer commits
// one transaction and aborts another; a read_committed consumer sees only
// the committed records, a read_uncommitted one sees both.
func TestTransactionsCommitAndAbort(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b, "txn-out", 2)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	prod, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.TransactionalID("tx-1"), kgo.DefaultProduceTopic("txn-out"))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	for _, commit := range []bool{true, false, true} {
		if err := prod.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for i := range 5 {
			v := fmt.Sprintf("commit=%v-%d", commit, i)
			if err := prod.ProduceSync(ctx, &kgo.Record{Value: []byte(v)}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		if err := prod.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatalf("end transaction (commit=%v): %v", commit, err)
		}
	}
	count := func(level kgo.IsolationLevel) (committed, aborted int) {
		cl := newFranz(t, b.Addr(), kgo.ConsumeTopics("txn-out"), kgo.FetchIsolationLevel(level),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
		cctx, ccancel := context.WithTimeout(ctx, 3*time.Second)
		defer ccancel()
		for {
			fs := cl.PollFetches(cctx)
			if cctx.Err() != nil {
				return
			}
			fs.EachRecord(func(r *kgo.Record) {
				if string(r.Value[:11]) == "commit=true" {
					committed++
				} else {
					aborted++
				}
			})
		}
	}
	if c, a := count(kgo.ReadCommitted()); c != 10 || a != 0 {
		t.Fatalf("read_committed saw %d committed and %d aborted records", c, a)
	}
	if c, a := count(kgo.ReadUncommitted()); c != 10 || a != 5 {
		t.Fatalf("read_uncommitted saw %d committed and %d aborted records", c, a)
	}
}

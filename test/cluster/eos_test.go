package cluster

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/devcluster"
	"github.com/samsa-io/samsa/internal/txn"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestExactlyOnceWhileTheCoordinatorDies is issue 12's transactions and
// groups across brokers, on three processes: a consume-transform-produce
// processor (franz-go's GroupTransactSession) copies 400 inputs to an
// output topic, every topic RF 3 min ISR 2, while the broker leading its
// transaction coordinator's __transaction_state partition is killed
// (SIGKILL) and later restarted; the read_committed output must hold
// every input exactly once.
func TestExactlyOnceWhileTheCoordinatorDies(t *testing.T) {
	const (
		inputs  = 400
		groupID = "eos-processes"
		txnID   = "eos-processes-tx"
	)
	c := startCluster(t, 3, map[string]string{
		"offsets.topic.num.partitions": "3", "transaction.state.log.num.partitions": "3",
		"group.initial.rebalance.delay.ms": "0",
	})
	for _, topic := range []string{"eos-in", "eos-out"} {
		createTopic(t, c, topic, 3, 3, 2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	in := make([]*kgo.Record, inputs)
	for i := range in {
		id := fmt.Sprintf("id-%04d", i)
		in[i] = &kgo.Record{Topic: "eos-in", Key: []byte(id), Value: []byte(id)}
	}
	pcl, err := kgo.NewClient(kgo.SeedBrokers(c.Addrs()...))
	if err != nil {
		t.Fatal(err)
	}
	if err := pcl.ProduceSync(ctx, in...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	pcl.Close()
	ends := endOffsets(t, c, "eos-in")

	var processed atomic.Int64
	var victim atomic.Int32
	var wg sync.WaitGroup
	wg.Go(func() {
		for processed.Load() < inputs/3 && ctx.Err() == nil {
			time.Sleep(5 * time.Millisecond)
		}
		// The coordinator is the leader of the ID's partition.
		id := leaderOf(ctx, c, "__transaction_state", txn.PartitionFor(txnID, 3))
		if id < 0 {
			t.Error("no leader of the transaction coordinator's partition")
			return
		}
		if err := c.Node(id).Kill(); err != nil {
			t.Error(err)
			return
		}
		victim.Store(id)
		time.Sleep(5 * time.Second)
		if err := c.Node(id).Start(); err != nil {
			t.Error(err)
		}
	})
	// One incarnation after another: an error ends one, as a crashed
	// process would, and the next resumes from the group's offsets.
	incarnation := 0
	for ; !groupCaughtUp(ctx, c, groupID, "eos-in", ends); incarnation++ {
		if ctx.Err() != nil {
			t.Fatalf("after %d incarnations, %d of %d inputs committed", incarnation, processed.Load(), inputs)
		}
		runTransformer(t, ctx, c, incarnation, groupID, txnID, &processed, inputs)
	}
	wg.Wait()
	t.Logf("killed node %d, the transaction coordinator's; %d incarnations", victim.Load(), incarnation)
	waitReady(t, c)

	// A non-transactional sentinel ends each output partition: reading
	// read_committed up to it reads everything committed before.
	for p := range int32(3) {
		produceTo(t, c.Addrs(), "eos-out", p, "sentinel", kgo.AllISRAcks())
	}
	seen := map[string]int{}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Addrs()...), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeTopics("eos-out"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	sentinels := map[int32]bool{}
	for len(sentinels) < 3 && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			if string(r.Value) == "sentinel" {
				sentinels[r.Partition] = true
				return
			}
			seen[string(r.Value)]++
		})
	}
	for i := range inputs {
		want := fmt.Sprintf("out-id-%04d", i)
		if n := seen[want]; n != 1 {
			t.Errorf("%s appears %d times in the committed output", want, n)
		}
		delete(seen, want)
	}
	for v, n := range seen {
		t.Errorf("unexpected output %q (%d times)", v, n)
	}
}

// groupCaughtUp reports whether a group's committed offsets reach ends,
// asking with a fresh client: franz-go keeps a coordinator it cannot dial
// cached.
func groupCaughtUp(ctx context.Context, c *devcluster.Cluster, groupID, topic string, ends map[int32]int64) bool {
	cl, err := kgo.NewClient(kgo.SeedBrokers(runningAddrs(c)...))
	if err != nil {
		return false
	}
	defer cl.Close()
	fctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	resp, err := kadm.NewClient(cl).FetchOffsets(fctx, groupID)
	if err != nil || resp.Error() != nil {
		return false
	}
	for p, end := range ends {
		if o, ok := resp.Lookup(topic, p); !ok || o.At != end {
			return false
		}
	}
	return true
}

// runTransformer is one incarnation of the exactly-once processor: it
// copies eos-in to eos-out in transactions of up to 20 records, adding
// each committed transaction's size to processed, until processed reaches
// inputs or an error ends the incarnation.
func runTransformer(t *testing.T, ctx context.Context, c *devcluster.Cluster, incarnation int, groupID, txnID string, processed *atomic.Int64, inputs int64) {
	s, err := kgo.NewGroupTransactSession(
		kgo.SeedBrokers(c.Addrs()...),
		kgo.ConsumerGroup(groupID),
		kgo.ConsumeTopics("eos-in"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.TransactionalID(txnID),
		kgo.TransactionTimeout(20*time.Second),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.RequireStableFetchOffsets(),
		kgo.DefaultProduceTopic("eos-out"),
		kgo.FetchMaxWait(200*time.Millisecond),
		kgo.MetadataMinAge(250*time.Millisecond),
	)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for processed.Load() < inputs && ctx.Err() == nil {
		pollCtx, cancel := context.WithTimeout(ctx, 2*time.Second)
		fs := s.PollRecords(pollCtx, 20)
		cancel()
		if fs.Empty() && processed.Load() > 0 {
			return // perhaps done: the caller checks the group's offsets
		}
		if err := s.Begin(); err != nil {
			t.Logf("incarnation %d: begin: %v", incarnation, err)
			return
		}
		var (
			wg      sync.WaitGroup
			mu      sync.Mutex
			prodErr error
			n       int64
		)
		fs.EachRecord(func(r *kgo.Record) {
			wg.Add(1)
			n++
			s.Produce(ctx, &kgo.Record{Key: r.Value, Value: []byte("out-" + string(r.Value))}, func(_ *kgo.Record, err error) {
				defer wg.Done()
				if err != nil {
					mu.Lock()
					prodErr = errors.Join(prodErr, err)
					mu.Unlock()
				}
			})
		})
		wg.Wait()
		if prodErr != nil {
			t.Logf("incarnation %d: produce: %v", incarnation, prodErr)
		}
		committed, err := s.End(ctx, kgo.TryCommit)
		if err != nil {
			t.Logf("incarnation %d: end: %v", incarnation, err)
			return
		}
		if committed && prodErr == nil {
			processed.Add(n)
		}
	}
}

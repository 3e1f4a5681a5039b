package broker

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// keyCounter counts the requests a client writes, by API key.
type keyCounter struct {
	mu   sync.Mutex
	keys map[int16]int
}

func (k *keyCounter) OnBrokerWrite(_ kgo.BrokerMetadata, key int16, _ int, _ time.Duration, _ time.Duration, _ error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.keys[key]++
}

var _ kgo.HookBrokerWrite = (*keyCounter)(nil)

// TestTransactionsV2 checks that franz-go sees transaction.version 2 and
// uses transactions v2: no AddPartitionsToTxn, and the commit still works.
func TestTransactionsV2(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b, "tv2", 1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	kc := &keyCounter{keys: map[int16]int{}}
	prod, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.TransactionalID("tv2"), kgo.DefaultProduceTopic("tv2"), kgo.WithHooks(kc))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	for range 3 {
		if err := prod.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		if err := prod.ProduceSync(ctx, &kgo.Record{Value: []byte("x")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		if err := prod.EndTransaction(ctx, kgo.TryCommit); err != nil {
			t.Fatal(err)
		}
	}
	kc.mu.Lock()
	defer kc.mu.Unlock()
	// The first transaction may start before the client has read the
	// broker's features; after that, v2 sends no AddPartitionsToTxn.
	if n := kc.keys[int16(kmsg.AddPartitionsToTxn)]; n > 1 {
		t.Fatalf("client sent %d AddPartitionsToTxn for 3 transactions: transactions v2 not in use", n)
	}
	if kc.keys[int16(kmsg.EndTxn)] != 3 {
		t.Fatalf("EndTxn count %d", kc.keys[int16(kmsg.EndTxn)])
	}
	lso := listOffsetCommitted(t, b, "tv2")
	if lso != 6 { // 3 records and 3 commit markers
		t.Fatalf("last stable offset %d, want 6", lso)
	}
}

func listOffsetCommitted(t *testing.T, b *Broker, topic string) int64 {
	t.Helper()
	rc := dialRaw(t, b)
	req := rawListOffsetsReq(topic, 0, -1)
	req.IsolationLevel = 1
	return rawListOffsetsPart(rc, req, 1).Offset
}

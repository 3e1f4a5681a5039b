package broker

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestGroupFranzThreeConsumers: three franz-go consumers in one group split
// the partitions and consume every record exactly once; their commits are
// visible through OffsetFetch.
func TestGroupFranzThreeConsumers(t *testing.T) {
	b := startBrokerWith(t, Config{LogDir: t.TempDir()})
	createTopic(t, b, "orders", 6)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const n = 600
	prod := newFranz(t, b.Addr(), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	for i := range n {
		if err := prod.ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte(fmt.Sprint(i))}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	cctx, stopConsumers := context.WithCancel(ctx)
	var mu sync.Mutex
	seen := map[string]int{}
	done := make(chan struct{})
	committed := make(chan struct{}, 1) // a member committed
	var wg sync.WaitGroup
	for m := range 3 {
		cl := newFranz(t, b.Addr(), kgo.ConsumerGroup("g1"), kgo.ConsumeTopics("orders"),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.ClientID(fmt.Sprint("member-", m)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				fs := cl.PollFetches(cctx)
				if cctx.Err() != nil {
					return
				}
				fs.EachRecord(func(r *kgo.Record) {
					mu.Lock()
					seen[string(r.Value)]++
					if len(seen) == n {
						select {
						case <-done:
						default:
							close(done)
						}
					}
					mu.Unlock()
				})
				if err := cl.CommitUncommittedOffsets(cctx); err != nil && cctx.Err() == nil {
					t.Errorf("commit: %v", err)
				} else {
					select {
					case committed <- struct{}{}:
					default:
					}
				}
				select {
				case <-done:
					return
				default:
				}
			}
		}()
	}
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatalf("consumed %d of %d", len(seen), n)
	}
	// Every record is in; the commits follow each poll. Wait until they add
	// up (the event), then stop the consumers.
	adm := kadm.NewClient(newFranz(t, b.Addr()))
	var total int64
	for total != n {
		offs, err := adm.FetchOffsets(ctx, "g1")
		if err != nil {
			t.Fatal(err)
		}
		total = 0
		offs.Each(func(o kadm.OffsetResponse) { total += o.At })
		if total == n {
			break
		}
		select {
		case <-committed:
		case <-ctx.Done():
			t.Fatalf("committed offsets add up to %d, want %d", total, n)
		}
	}
	stopConsumers()
	wg.Wait()
	for v, c := range seen {
		if c != 1 {
			t.Errorf("record %s consumed %d times", v, c)
		}
	}
}

package broker

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// A consumer of ten partitions, fed a few partitions at a time over many
// rounds, gets every record exactly once through its fetch session's
// incremental fetches, also when it pauses half the partitions (they
// leave the session as forgotten partitions) and resumes them.
func TestE2EFetchSessionIncremental(t *testing.T) {
	b := startBroker(t)
	const topic, partitions, rounds = "sessions", 10, 40
	createTopic(t, b, topic, partitions)
	ctx, cancel := context.WithTimeout(context.Background(), 2*e2eTimeout)
	defer cancel()

	offsets := map[int32]kgo.Offset{}
	for p := range int32(partitions) {
		offsets[p] = kgo.NewOffset().At(0)
	}
	consumer := newFranz(t, b.Addr(), kgo.FetchMaxWait(time.Second),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: offsets}))
	received := make(chan *kgo.Record, 1024)
	pollErr := make(chan error, 1) // why the poller stopped; sent before received closes
	go func() {
		var err error
		defer func() {
			pollErr <- err
			close(received)
		}()
		for {
			fs := consumer.PollFetches(ctx)
			if ctx.Err() != nil || fs.IsClientClosed() {
				err = fmt.Errorf("poll ended: %v", ctx.Err())
				return
			}
			fs.EachError(func(_ string, _ int32, e error) { err = e })
			if err != nil {
				return
			}
			for _, r := range fs.Records() {
				select {
				case received <- r:
				case <-ctx.Done():
					return
				}
			}
		}
	}()

	producer := newFranz(t, b.Addr(), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	produced := map[int32][]string{} // partition -> value at each offset
	got := map[int32][]string{}
	paused := map[int32]bool{}
	// expect reads records until every unpaused partition has all it was
	// sent; records of paused partitions may come or not.
	expect := func(what string) {
		t.Helper()
		for {
			complete := true
			for p := range int32(partitions) {
				if !paused[p] && len(got[p]) < len(produced[p]) {
					complete = false
				}
			}
			if complete {
				return
			}
			select {
			case r, ok := <-received:
				if !ok {
					t.Fatalf("%s: consumer stopped: %v", what, <-pollErr)
				}
				got[r.Partition] = append(got[r.Partition], string(r.Value))
				if want := int64(len(got[r.Partition]) - 1); r.Offset != want {
					t.Fatalf("%s: partition %d record at offset %d, want %d (duplicate or gap)", what, r.Partition, r.Offset, want)
				}
			case <-ctx.Done():
				t.Fatalf("%s: records missing: got %v, produced %v", what, got, produced)
			}
		}
	}
	produce := func(round int, ps ...int32) {
		t.Helper()
		var krs []*kgo.Record
		for _, p := range ps {
			krs = append(krs, &kgo.Record{Topic: topic, Partition: p, Value: fmt.Appendf(nil, "round %d partition %d", round, p)})
		}
		for _, r := range producer.ProduceSync(ctx, krs...) {
			if r.Err != nil {
				t.Fatal(r.Err)
			}
			if r.Record.Offset != int64(len(produced[r.Record.Partition])) {
				t.Fatalf("produce to %d got offset %d, want %d", r.Record.Partition, r.Record.Offset, len(produced[r.Record.Partition]))
			}
			produced[r.Record.Partition] = append(produced[r.Record.Partition], string(r.Record.Value))
		}
	}

	for round := range rounds {
		switch round {
		case 15:
			consumer.PauseFetchPartitions(map[string][]int32{topic: {0, 1, 2, 3, 4}})
			for p := range int32(5) {
				paused[p] = true
			}
		case 25:
			consumer.ResumeFetchPartitions(map[string][]int32{topic: {0, 1, 2, 3, 4}})
			clear(paused)
		}
		// A few partitions per round, a different few each time.
		r := int32(round)
		produce(round, r%partitions, (3*r+1)%partitions, (7*r+2)%partitions)
		expect(fmt.Sprintf("round %d", round))
	}
	// One last record everywhere: anything delivered twice before it
	// shows up as an offset out of order.
	all := make([]int32, partitions)
	for p := range all {
		all[p] = int32(p)
	}
	produce(rounds, all...)
	expect("final round")
	for p := range int32(partitions) {
		if fmt.Sprint(got[p]) != fmt.Sprint(produced[p]) {
			t.Errorf("partition %d: consumed %q, produced %q", p, got[p], produced[p])
		}
	}
	if e := maxSessionEpoch(b); e < rounds/2 {
		t.Errorf("fetch session epoch %d after %d rounds: the consumer did not fetch incrementally", e, rounds)
	}
}

package broker

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The two consume loops of docs/DELIVERY.md. process returns an error to
// stand for a crash: the loop stops at once, as a dead process would.
var errCrash = errors.New("crash")

// atLeastOnce processes every polled record, then commits: a crash after
// processing and before the commit re-delivers those records to whoever
// takes over the partition. Nothing is lost; something may repeat.
func atLeastOnce(ctx context.Context, cl *kgo.Client, process func(*kgo.Record) error) error {
	for {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			return err
		}
		for _, r := range fs.Records() {
			if err := process(r); err != nil {
				return err
			}
		}
		if err := cl.CommitRecords(ctx, fs.Records()...); err != nil {
			return err
		}
	}
}

// atMostOnce commits what it polled before processing it: a crash during
// processing skips the rest of the batch for whoever takes over. Nothing
// repeats; something may be lost.
func atMostOnce(ctx context.Context, cl *kgo.Client, process func(*kgo.Record) error) error {
	for {
		fs := cl.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			return err
		}
		if err := cl.CommitRecords(ctx, fs.Records()...); err != nil {
			return err
		}
		for _, r := range fs.Records() {
			if err := process(r); err != nil {
				return err
			}
		}
	}
}

// TestDeliverySemantics runs each loop, crashes it halfway through its
// first batch, lets a second consumer of the same group finish, and counts
// what each record went through.
func TestDeliverySemantics(t *testing.T) {
	v, err := LoadConfig("", map[string]string{"group.initial.rebalance.delay.ms": "0"})
	if err != nil {
		t.Fatal(err)
	}
	b := startBrokerWith(t, Config{LogDir: t.TempDir(), Values: v})
	const n = 20
	for _, c := range []struct {
		name string
		loop func(context.Context, *kgo.Client, func(*kgo.Record) error) error
		// want, per record: how often it is processed in total
		wantRepeated, wantLost bool
	}{
		{"at-least-once", atLeastOnce, true, false},
		{"at-most-once", atMostOnce, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			topic := "delivery-" + c.name
			createTopic(t, b, topic, 1)
			prod := newFranz(t, b.Addr())
			var recs []*kgo.Record
			for i := range n {
				recs = append(recs, &kgo.Record{Topic: topic, Value: []byte(fmt.Sprint(i))})
			}
			if err := prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
				t.Fatal(err)
			}
			processed := map[string]int{}
			consumer := func() *kgo.Client {
				return newFranz(t, b.Addr(), kgo.ConsumerGroup("g-"+c.name), kgo.ConsumeTopics(topic),
					kgo.DisableAutoCommit(), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
			}
			// The first consumer crashes after processing half a batch.
			first := consumer()
			seen := 0
			err := c.loop(ctx, first, func(r *kgo.Record) error {
				if seen == n/2 {
					return errCrash
				}
				seen++
				processed[string(r.Value)]++
				return nil
			})
			if !errors.Is(err, errCrash) {
				t.Fatalf("first consumer: %v", err)
			}
			first.Close()
			// The second finishes whatever the group's commits say is left,
			// up to an end marker produced now.
			if err := prod.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("end")}).FirstErr(); err != nil {
				t.Fatal(err)
			}
			second := consumer()
			err = c.loop(ctx, second, func(r *kgo.Record) error {
				if string(r.Value) == "end" {
					return errCrash // done: stop here
				}
				processed[string(r.Value)]++
				return nil
			})
			if !errors.Is(err, errCrash) {
				t.Fatalf("second consumer: %v", err)
			}
			repeated, lost := false, false
			for i := range n {
				switch processed[fmt.Sprint(i)] {
				case 0:
					lost = true
				case 1:
				default:
					repeated = true
				}
			}
			if repeated != c.wantRepeated || lost != c.wantLost {
				t.Fatalf("repeated=%v lost=%v, want repeated=%v lost=%v (%v)", repeated, lost, c.wantRepeated, c.wantLost, processed)
			}
		})
	}
}

package mirror

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/devcluster"
	"github.com/samsa-io/samsa/internal/mirror/mm2"
)

// TestConsumerFailover moves a consumer group from A to B: it processes
// part of a topic on A and commits; the mirror syncs its offsets to B; the
// same group then consumes A.orders on B to the end. Nothing is skipped.
// Offset preserving processes nothing twice; translating re-processes at
// most what MirrorMaker 2's rule allows: the records between the translated
// offset and the group's true position (checkpoint upstream minus
// downstream, per partition).
func TestConsumerFailover(t *testing.T) {
	t.Parallel()
	for _, mode := range []struct {
		name  string
		extra []string
	}{
		{"translate", nil},
		{"offset-preserving", []string{"samsa.offset.preserving.enabled = true"}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			a, _ := devcluster.StartTestBroker(t)
			b, _ := devcluster.StartTestBroker(t)
			c := clusters{"A": a, "B": b}
			ctx := context.Background()
			createTopic(t, a, "orders", 2, nil)
			all := map[string]bool{}
			for _, r := range produceOrders(t, a, "orders", 0, 400) {
				all[string(r.Value)] = true
			}

			processed := map[string]int{}
			g := client(t, a, kgo.ConsumeTopics("orders"), kgo.ConsumerGroup("app"), kgo.DisableAutoCommit(),
				kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
			for n := 0; n < 150; {
				fs := g.PollRecords(ctx, 150-n)
				fs.EachRecord(func(r *kgo.Record) { processed[string(r.Value)]++ })
				n += fs.NumRecords()
			}
			if err := g.CommitUncommittedOffsets(ctx); err != nil {
				t.Fatal(err)
			}
			g.Close()
			srcOffs, err := kadm.NewClient(client(t, a)).FetchOffsets(ctx, "app")
			if err != nil {
				t.Fatal(err)
			}
			committedParts := 0
			srcOffs.Each(func(kadm.OffsetResponse) { committedParts++ })

			runMirror(t, mm2Config(t, c, mode.extra...), c)
			var cps map[int32]mm2.Checkpoint
			eventually(t, 40*time.Second, "app's offsets synced to B", func() error {
				cps = map[int32]mm2.Checkpoint{}
				for _, r := range readAll(t, b, "A.checkpoints.internal") {
					cp, err := mm2.DecodeCheckpoint(r.Key, r.Value)
					if err == nil && cp.Group == "app" {
						cps[cp.Partition] = cp
					}
				}
				got, err := kadm.NewClient(client(t, b)).FetchOffsets(ctx, "app")
				if err != nil {
					return err
				}
				n := 0
				got.Each(func(o kadm.OffsetResponse) {
					if o.Topic == "A.orders" && o.Err == nil {
						if cp, ok := cps[o.Partition]; ok && cp.DownstreamOffset == o.At {
							n++
						}
					}
				})
				if n != committedParts || len(cps) != committedParts {
					return fmt.Errorf("%d partitions synced, checkpoints %v", n, cps)
				}
				return nil
			})
			allowed := int64(0)
			for _, cp := range cps {
				allowed += cp.UpstreamOffset - cp.DownstreamOffset
			}
			if mode.extra != nil && allowed != 0 {
				t.Fatalf("offset preserving: checkpoints %v translate offsets", cps)
			}

			// Fail over: the group consumes on B.
			gb := client(t, b, kgo.ConsumeTopics("A.orders"), kgo.ConsumerGroup("app"), kgo.DisableAutoCommit(),
				kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
			want := len(all) - 150
			rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			for n := 0; n < want+int(allowed); {
				fs := gb.PollRecords(rctx, 1000)
				if rctx.Err() != nil {
					break
				}
				fs.EachRecord(func(r *kgo.Record) { processed[string(r.Value)]++ })
				n += fs.NumRecords()
			}
			twice := 0
			for v := range all {
				switch processed[v] {
				case 0:
					t.Errorf("%s skipped", v)
				case 1:
				default:
					twice++
				}
			}
			if int64(twice) > allowed {
				t.Errorf("%d records processed twice; the checkpoints allow %d (%v)", twice, allowed, cps)
			}
			t.Logf("%d records, %d processed twice (allowed %d)", len(all), twice, allowed)
		})
	}
}

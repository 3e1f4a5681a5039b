package streams_test

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/devcluster"
	"github.com/samsa-io/samsa/streams"
	"github.com/samsa-io/samsa/streams/serde"
)

// TestSuppressionBufferSurvivesRestart: a window's count waits in the
// suppression buffer when the application stops; restarted on a wiped
// state directory, it restores the buffer from its changelog and emits the
// final count when the window closes.
func TestSuppressionBufferSurvivesRestart(t *testing.T) {
	bootstrap, _ := devcluster.StartTestBroker(t)
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for _, topic := range []string{"s-in", "s-out"} {
		if _, err := kadm.NewClient(cl).CreateTopic(context.Background(), 1, 1, nil, topic); err != nil {
			t.Fatal(err)
		}
	}
	start := func() *streams.App {
		b := streams.NewBuilder()
		in := streams.From[string, string](b, []string{"s-in"})
		counts := streams.WindowedCount(in.GroupByKey().WindowedBy(streams.OfSizeAndGrace(10*time.Second, 0)))
		final := counts.Suppress(streams.UntilWindowCloses(streams.Unbounded())).ToStream()
		streams.Map(final, func(k streams.Windowed[string], v int64) (string, int64) { return k.Key, v }).
			To("s-out", streams.Produced[string, int64]{Key: serde.String(), Value: serde.Int64()})
		topo, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		zero := int64(0)
		app, err := streams.New(topo, streams.Config{ApplicationID: "suppress-restore", BootstrapServers: []string{bootstrap},
			StateDir: t.TempDir(), CacheMaxBytes: &zero, CommitInterval: 100 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if err := app.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		return app
	}
	produce := func(key string, ts int64) {
		if err := cl.ProduceSync(context.Background(), &kgo.Record{Topic: "s-in", Key: []byte(key), Value: []byte("v"), Timestamp: time.UnixMilli(ts)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	app := start()
	produce("k", 1000)
	produce("k", 2000)
	// Processed and committed: the group's offset reached the end.
	adm := kadm.NewClient(cl)
	waitFor(t, 30*time.Second, func() bool {
		offs, err := adm.FetchOffsets(context.Background(), "suppress-restore")
		if err != nil {
			return false
		}
		o, ok := offs.Lookup("s-in", 0)
		return ok && o.At == 2
	})
	if err := app.Close(); err != nil {
		t.Fatal(err)
	}
	app = start() // a new, empty state directory
	defer app.Close()
	produce("z", 20000) // stream time passes k's window end
	waitFor(t, 30*time.Second, func() bool { return outputCount(t, cl, "s-out") >= 1 })
	rc, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.ConsumeTopics("s-out"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	fs := rc.PollFetches(ctx)
	var got []string
	fs.EachRecord(func(r *kgo.Record) {
		v, _ := serde.Int64().Deserialize("s-out", r.Value)
		got = append(got, string(r.Key)+"="+itoa(v))
	})
	if len(got) != 1 || got[0] != "k=2" {
		t.Fatalf("final results %v, want [k=2]", got)
	}
}

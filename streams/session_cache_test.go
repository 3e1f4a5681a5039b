package streams_test

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/devcluster"
	"github.com/samsa-io/samsa/streams"
)

// TestSessionCacheFoldsUpdates: with the record cache on, the updates of a
// session (each record extends it, merging the previous one away) reach
// the output folded, and the last one carries the whole count.
func TestSessionCacheFoldsUpdates(t *testing.T) {
	bootstrap, _ := devcluster.StartTestBroker(t)
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for _, topic := range []string{"sess-in", "sess-out"} {
		if _, err := kadm.NewClient(cl).CreateTopic(context.Background(), 1, 1, nil, topic); err != nil {
			t.Fatal(err)
		}
	}
	var recs []*kgo.Record
	for i := 0; i < 50; i++ {
		recs = append(recs, &kgo.Record{Topic: "sess-in", Key: []byte("k"), Value: []byte("v"), Timestamp: time.UnixMilli(int64(1000 + i))})
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	b := streams.NewBuilder()
	in := streams.From[string, string](b, []string{"sess-in"})
	streams.SessionCount(in.GroupByKey().WindowedBySession(streams.OfInactivityGapWithNoGrace(5 * time.Second))).ToStream().To("sess-out")
	topo, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	cache := int64(1 << 20)
	app, err := streams.New(topo, streams.Config{ApplicationID: "sess-cache", BootstrapServers: []string{bootstrap},
		CacheMaxBytes: &cache, CommitInterval: time.Second, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer app.Close()
	rc, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.ConsumeTopics("sess-out"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var values [][]byte
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		fs := rc.PollFetches(ctx)
		cancel()
		fs.EachRecord(func(r *kgo.Record) { values = append(values, r.Value) })
		if n := len(values); n > 0 && values[n-1] != nil && len(values[n-1]) == 8 && values[n-1][7] == 50 {
			break
		}
	}
	n := len(values)
	if n == 0 || values[n-1] == nil || values[n-1][7] != 50 {
		t.Fatalf("the session's final count never came out: %d records", n)
	}
	if n > 10 {
		t.Fatalf("%d records out for one session of 50 records: the cache did not fold them", n)
	}
	t.Logf("%d records out for one session of 50 records", n)
}

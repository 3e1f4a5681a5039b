package streams_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/devcluster"
	"github.com/samsa-io/samsa/streams"
	"github.com/samsa-io/samsa/streams/serde"
)

func TestMain(m *testing.M) {
	code := m.Run()
	devcluster.RemoveBuilt()
	os.Exit(code)
}

// produceLines writes lines to wc-in and returns the count of each word.
func produceLines(t *testing.T, cl *kgo.Client, n int) map[string]int64 {
	t.Helper()
	words := []string{"alpha", "beta", "gamma", "delta", "epsilon"}
	want := map[string]int64{}
	var recs []*kgo.Record
	for i := 0; i < n; i++ {
		line := fmt.Sprintf("%s %s", words[i%5], words[(i*3)%5])
		for _, w := range strings.Fields(line) {
			want[w]++
		}
		recs = append(recs, &kgo.Record{Topic: "wc-in", Key: []byte(fmt.Sprint(i)), Value: []byte(line)})
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	return want
}

// readCounts reads wc-out until the last count of every word is want's.
func readCounts(t *testing.T, bootstrap string, want map[string]int64, readCommitted bool) map[string][]int64 {
	t.Helper()
	opts := []kgo.Opt{kgo.SeedBrokers(bootstrap), kgo.ConsumeTopics("wc-out"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}
	if readCommitted {
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	got := map[string][]int64{}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		fs := cl.PollFetches(ctx)
		cancel()
		fs.EachRecord(func(r *kgo.Record) {
			v, err := serde.Int64().Deserialize("wc-out", r.Value)
			if err != nil {
				t.Errorf("value %x: %v", r.Value, err)
			}
			got[string(r.Key)] = append(got[string(r.Key)], v)
		})
		done := len(got) == len(want)
		for w, n := range want {
			if c := got[w]; len(c) == 0 || c[len(c)-1] != n {
				done = false
			}
		}
		if done {
			return got
		}
	}
	t.Fatalf("counts never reached %v; got %v", want, got)
	return nil
}

func startWordCount(t *testing.T, bootstrap, guarantee, stateDir string) *streams.App {
	t.Helper()
	zero := int64(0)
	app, err := streams.New(wordCount(t, "counts"), streams.Config{
		ApplicationID: "wc-" + strings.ReplaceAll(guarantee, "_", "-"), BootstrapServers: []string{bootstrap},
		ProcessingGuarantee: guarantee, CommitInterval: 100 * time.Millisecond, CacheMaxBytes: &zero,
		StateDir: stateDir,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return app
}

func TestWordCountOnBroker(t *testing.T) {
	for _, guarantee := range []string{streams.AtLeastOnce, streams.ExactlyOnceV2} {
		t.Run(guarantee, func(t *testing.T) {
			bootstrap, _ := devcluster.StartTestBroker(t)
			cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap))
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			for _, topic := range []string{"wc-in", "wc-out"} {
				if _, err := kadm.NewClient(cl).CreateTopic(context.Background(), 2, 1, nil, topic); err != nil {
					t.Fatal(err)
				}
			}
			want := produceLines(t, cl, 200)
			stateDir := t.TempDir()
			app := startWordCount(t, bootstrap, guarantee, stateDir)
			got := readCounts(t, bootstrap, want, guarantee == streams.ExactlyOnceV2)
			// Every update is emitted (caching off): word w's counts run 1..n.
			for w, counts := range got {
				for i, c := range counts {
					if c != int64(i+1) {
						t.Fatalf("%s: update %d is %d (all: %v)", w, i, c, counts)
					}
				}
			}
			if err := app.Close(); err != nil {
				t.Fatal(err)
			}
			// A restart on the same state goes on from its checkpoint; one
			// on a wiped state directory restores the counts from the
			// changelog first.
			for _, wipe := range []bool{false, true} {
				if wipe {
					if err := os.RemoveAll(stateDir); err != nil {
						t.Fatal(err)
					}
				}
				more := produceLines(t, cl, 100)
				for w, n := range more {
					want[w] += n
				}
				app = startWordCount(t, bootstrap, guarantee, stateDir)
				readCounts(t, bootstrap, want, guarantee == streams.ExactlyOnceV2)
				if err := app.Close(); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// TestStartRefusesMissingSourceTopic: a source topic that does not exist
// stops Start with Kafka's reason, and the application is in ERROR.
func TestStartRefusesMissingSourceTopic(t *testing.T) {
	bootstrap, _ := devcluster.StartTestBroker(t)
	app, err := streams.New(wordCount(t, "counts"), streams.Config{ApplicationID: "missing", BootstrapServers: []string{bootstrap}, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	err = app.Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), "source topics wc-in are missing") {
		t.Fatalf("Start answered %v", err)
	}
	if app.State() != streams.Error {
		t.Fatalf("state %s after a failed start", app.State())
	}
	_ = app.Close()
}

// TestRecordCacheFoldsUpdates: with the record cache on, a key's updates
// between commits reach the output once (Kafka's caching), and the final
// counts are the same.
func TestRecordCacheFoldsUpdates(t *testing.T) {
	bootstrap, _ := devcluster.StartTestBroker(t)
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for _, topic := range []string{"wc-in", "wc-out"} {
		if _, err := kadm.NewClient(cl).CreateTopic(context.Background(), 2, 1, nil, topic); err != nil {
			t.Fatal(err)
		}
	}
	want := produceLines(t, cl, 1000)
	cache := int64(1 << 20)
	app, err := streams.New(wordCount(t, "counts"), streams.Config{ApplicationID: "cached", BootstrapServers: []string{bootstrap},
		CacheMaxBytes: &cache, CommitInterval: time.Second, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer app.Close()
	got := readCounts(t, bootstrap, want, false)
	updates, occurrences := 0, int64(0)
	for w, c := range got {
		updates += len(c)
		occurrences += want[w]
	}
	if int64(updates) >= occurrences/4 {
		t.Fatalf("%d updates reached the output for %d word occurrences: the cache did not fold them", updates, occurrences)
	}
	t.Logf("%d updates out for %d word occurrences", updates, occurrences)
}

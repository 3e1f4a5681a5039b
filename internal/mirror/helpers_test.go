package mirror

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/devcluster"
	"github.com/samsa-io/samsa/internal/mirror/mirrorconf"
)

func TestMain(m *testing.M) {
	code := m.Run()
	devcluster.RemoveBuilt()
	os.Exit(code)
}

// clusters maps aliases to bootstrap addresses.
type clusters map[string]string

func (c clusters) clientFunc() ClientFunc {
	return func(cluster string, opts ...kgo.Opt) (*kgo.Client, error) {
		addr, ok := c[cluster]
		if !ok {
			return nil, fmt.Errorf("no cluster %s", cluster)
		}
		return kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr)}, opts...)...)
	}
}

// mm2Config is a two-cluster A->B configuration with short intervals and
// single-node replication factors, plus the extra lines.
func mm2Config(t *testing.T, c clusters, extra ...string) *mirrorconf.Config {
	t.Helper()
	props := map[string]string{
		"clusters":                              "A, B",
		"A.bootstrap.servers":                   c["A"],
		"B.bootstrap.servers":                   c["B"],
		"A->B.enabled":                          "true",
		"B->A.enabled":                          "false",
		"replication.factor":                    "1",
		"offset-syncs.topic.replication.factor": "1",
		"checkpoints.topic.replication.factor":  "1",
		"heartbeats.topic.replication.factor":   "1",
		"emit.checkpoints.interval.seconds":     "1",
		"emit.heartbeats.interval.seconds":      "1",
		"sync.group.offsets.enabled":            "true",
		"sync.group.offsets.interval.seconds":   "1",
		"refresh.topics.interval.seconds":       "1",
		"refresh.groups.interval.seconds":       "1",
		"sync.topic.configs.interval.seconds":   "1",
		"sync.topic.acls.enabled":               "false",
	}
	for _, kv := range extra {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			t.Fatalf("bad extra property %q", kv)
		}
		props[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	cfg, err := mirrorconf.Parse(props)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// runMirror runs a Mirror until the test ends.
func runMirror(t *testing.T, cfg *mirrorconf.Config, c clusters) *Mirror {
	t.Helper()
	m, err := New(Options{Config: cfg, Clients: c.clientFunc(), RetryBackoff: 500 * time.Millisecond, Targets: []string{"B"},
		ProgressInterval: 500 * time.Millisecond,
		Logger:           slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = m.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Error("the mirror did not stop within 20 s")
		}
	})
	return m
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func client(t *testing.T, addr string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func createTopic(t *testing.T, addr, topic string, partitions int32, configs map[string]*string) {
	t.Helper()
	adm := kadm.NewClient(client(t, addr))
	resp, err := adm.CreateTopic(context.Background(), partitions, 1, configs, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatal(err)
	}
}

// readAll reads every record of a topic up to its high watermarks.
func readAll(t *testing.T, addr, topic string, opts ...kgo.Opt) []*kgo.Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	adm := kadm.NewClient(client(t, addr))
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	todo := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err == nil && o.Offset > 0 {
			todo[o.Partition] = o.Offset
		}
	})
	cl := client(t, addr, append([]kgo.Opt{kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}, opts...)...)
	var out []*kgo.Record
	// A partition whose last offsets are transaction markers is read when
	// polls bring nothing more.
	for idle := 0; len(todo) > 0 && idle < 3; {
		pctx, pcancel := context.WithTimeout(ctx, time.Second)
		fs := cl.PollFetches(pctx)
		pcancel()
		if ctx.Err() != nil {
			t.Fatalf("reading %s: %v (left %v)", topic, ctx.Err(), todo)
		}
		if fs.NumRecords() == 0 {
			idle++
			continue
		}
		idle = 0
		fs.EachError(func(_ string, _ int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatal(err)
			}
		})
		fs.EachRecord(func(r *kgo.Record) {
			out = append(out, r)
			if end, ok := todo[r.Partition]; ok && r.Offset+1 >= end {
				delete(todo, r.Partition)
			}
		})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Partition != out[j].Partition {
			return out[i].Partition < out[j].Partition
		}
		return out[i].Offset < out[j].Offset
	})
	return out
}

// eventually retries check until it returns nil or the time is up.
func eventually(t *testing.T, limit time.Duration, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(limit)
	var err error
	for time.Now().Before(deadline) {
		if err = check(); err == nil {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%s: not within %v: %v", what, limit, err)
}

func endOffsets(t *testing.T, addr, topic string) map[int32]int64 {
	t.Helper()
	adm := kadm.NewClient(client(t, addr))
	ends, err := adm.ListEndOffsets(context.Background(), topic)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err == nil {
			out[o.Partition] = o.Offset
		}
	})
	return out
}

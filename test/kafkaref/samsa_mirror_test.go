package kafkaref

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"testing"
	"time"

	"github.com/magiconair/properties"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/mirror"
	"github.com/samsa-io/samsa/internal/mirror/mirrorconf"
)

// TestSamsaMirrorMatchesMM2 runs Samsa's mirror on the setup
// TestKafkaToKafkaMM2 runs Kafka's MirrorMaker 2 on (two Apache Kafka
// clusters, the same records and group, the same mm2.properties) and
// requires what it leaves on both clusters to be what MirrorMaker 2 left
// (testdata/mm2-a-to-b.txt, which that test checks against MM2 on every
// run): the same topics with the same partition counts and configs, the
// same internal records byte for byte, the same group offsets on B; and
// Kafka's RemoteClusterUtils.translateOffsets reads Samsa's checkpoints.
func TestSamsaMirrorMatchesMM2(t *testing.T) {
	nodes := StartKafkas(t, 2, "auto.create.topics.enable=false")
	a, b := nodes[0], nodes[1]
	ctx := t.Context()
	clA, admA := client(t, a)
	_, admB := client(t, b)
	if _, err := admA.CreateTopic(ctx, int32(len(perPartition)), 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	sent := produce(t, clA)
	committed := kadm.Offsets{}
	for p, n := range perPartition {
		committed.Add(kadm.Offset{Topic: topic, Partition: int32(p), At: int64(n), LeaderEpoch: -1, Metadata: "m"})
	}
	if resp, err := admA.CommitOffsets(ctx, group, committed); err != nil || resp.Error() != nil {
		t.Fatalf("commit %s's offsets on A: %v %v", group, err, resp.Error())
	}

	props, err := properties.LoadString(mm2Properties(a, b))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := mirrorconf.Parse(props.Map())
	if err != nil {
		t.Fatal(err)
	}
	addrs := map[string]string{"A": a.Bootstrap, "B": b.Bootstrap}
	clients := func(cluster string, opts ...kgo.Opt) (*kgo.Client, error) {
		return kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addrs[cluster])}, opts...)...)
	}
	m, err := mirror.New(mirror.Options{Config: cfg, Clients: clients, ProgressInterval: time.Second, Targets: []string{"B"},
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		t.Fatal(err)
	}
	mctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = m.Run(mctx)
	}()
	t.Cleanup(func() { stop(); <-done })

	remote := "A." + topic
	want := map[int32]int64{}
	for p, n := range perPartition {
		want[int32(p)] = int64(n)
	}
	wait := func(what string, check func() error) {
		t.Helper()
		deadline := time.Now().Add(mirrorTimeout)
		for {
			err := check()
			if err == nil {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("waited %v for %s: %v", mirrorTimeout, what, err)
			}
			time.Sleep(250 * time.Millisecond)
		}
	}
	wait("every record in "+remote, func() error { return sameRecords(sent, readTopic(ctx, b, remote)) })
	wait("the last record's offset sync", func() error {
		last := map[int32]int64{}
		for _, r := range readTopic(ctx, a, "mm2-offset-syncs.B.internal") {
			s, err := ParseOffsetSync(r.Key, r.Value)
			if err != nil {
				return err
			}
			last[s.Partition] = s.Upstream
		}
		for p, n := range want {
			if last[p] != n-1 {
				return fmt.Errorf("latest upstream offsets synced %v", last)
			}
		}
		return nil
	})
	wait("checkpoints", func() error {
		got := map[int32]int64{}
		for _, c := range latestCheckpoints(t, readTopic(ctx, b, "A.checkpoints.internal")) {
			if c.Group == group && c.Topic == remote {
				got[c.Partition] = c.Downstream
			}
		}
		if !maps.Equal(got, want) {
			return fmt.Errorf("checkpoints %v, want %v", got, want)
		}
		return nil
	})
	wait("group offsets on B", func() error {
		fetched, err := admB.FetchOffsets(ctx, group)
		if err != nil {
			return err
		}
		got := map[int32]int64{}
		fetched.Each(func(o kadm.OffsetResponse) {
			if o.Topic == remote && o.Err == nil {
				got[o.Partition] = o.At
			}
		})
		if !maps.Equal(got, want) {
			return fmt.Errorf("offsets %v, want %v", got, want)
		}
		return nil
	})
	wait("a heartbeat", func() error {
		if len(readTopic(ctx, b, "heartbeats")) == 0 {
			return errors.New("none yet")
		}
		return nil
	})

	translated := TranslateOffsets(t, b.Bootstrap, "A", group)
	if !maps.Equal(translated[remote], want) || len(translated) != 1 {
		t.Errorf("RemoteClusterUtils.translateOffsets on Samsa's checkpoints = %v, want %s: %v", translated, remote, want)
	}

	wantText, err := os.ReadFile(goldenPath)
	if err != nil {
		t.Fatal(err)
	}
	got := reference(t, a, b, admA, admB)
	if g, w := maskHeartbeat(got), maskHeartbeat(string(wantText)); g != w {
		t.Errorf("Samsa's mirror left something else than MirrorMaker 2 (%s):\n%s\n--- all of it:\n%s",
			goldenPath, firstDifference(g, w), got)
	}
}

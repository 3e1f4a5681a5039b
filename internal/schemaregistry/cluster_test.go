package schemaregistry

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/devcluster"
)

// TestStartOnCluster: a registry starts on a cluster of three brokers
// whichever broker it is pointed at, though the store topic it creates
// reaches the other brokers' metadata a moment after CreateTopics answers
// (its describe then meets UNKNOWN_TOPIC_OR_PARTITION and asks again).
// Each instance creates a store topic of its own through one broker.
func TestStartOnCluster(t *testing.T) {
	dc, err := devcluster.New(devcluster.Config{Binary: samsaBinary(t), Dir: t.TempDir(), Nodes: 3, StopTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dc.Close() })
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := dc.Start(ctx); err != nil {
		t.Fatalf("start: %v\n%s", err, dc.LogTails(20))
	}
	for i := range 6 {
		addr := dc.Addrs()[i%3]
		reg, err := New(Config{ClientOpts: []kgo.Opt{kgo.SeedBrokers(addr)}, Topic: "_schemas-" + strconv.Itoa(i), Timeout: 20 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		startCtx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		err = reg.Start(startCtx)
		cancel()
		reg.Close()
		if err != nil {
			t.Fatalf("a registry seeded with %s: %v", addr, err)
		}
	}
}

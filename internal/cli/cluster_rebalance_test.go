package cli

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/devcluster"
	"github.com/samsa-io/samsa/internal/model"
)

// On three brokers, cluster rebalance --dry-run --drain 1 plans every
// replica off broker 1, within the racks and min ISR, and prints the
// before and after of each broker; a broker that does not exist is
// refused. Without --dry-run the moves are made: broker 1 ends with no
// replica and the topic keeps every record.
func TestClusterRebalance(t *testing.T) {
	dc, err := devcluster.New(devcluster.Config{Binary: samsaBinary(t), Dir: t.TempDir(), Nodes: 3, StopTimeout: 10 * time.Second, Overrides: noRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dc.Close() })
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := dc.Start(ctx); err != nil {
		t.Fatalf("start: %v\n%s", err, dc.LogTails(20))
	}
	c := &testCluster{t: t, addr: dc.Bootstrap()}
	c.ok("", "topic", "create", "spread", "-p", "6", "-r", "2", "-c", "min.insync.replicas=1")
	var plan rebalancePlan
	waitUntil(t, 30*time.Second, "a plan that empties broker 1", func() bool {
		out := c.ok("", "cluster", "rebalance", "--dry-run", "--drain", "1", "--max-moves", "100", "--json")
		if err := json.Unmarshal([]byte(out), &plan); err != nil {
			t.Fatal(err)
		}
		for _, b := range plan.After {
			if b.Broker == 1 {
				return b.Replicas == 0 && len(plan.Moves) > 0
			}
		}
		return false
	})
	for _, m := range plan.Moves {
		if m.Kind != "replicas" || m.Topic == "" {
			continue
		}
		if len(m.To) != len(m.From) {
			t.Errorf("%s-%d: %v -> %v changes the replication factor", m.Topic, m.Partition, m.From, m.To)
		}
		for _, r := range m.To {
			if r == model.NodeID(1) {
				t.Errorf("%s-%d: %v -> %v keeps a replica on the drained broker", m.Topic, m.Partition, m.From, m.To)
			}
		}
		if !strings.Contains(m.Reason, "draining") {
			t.Errorf("%s-%d: reason %q does not say the broker drains", m.Topic, m.Partition, m.Reason)
		}
	}
	text := c.ok("", "cluster", "rebalance", "--dry-run", "--drain", "1")
	for _, want := range []string{"BROKER", "REPLICAS", "draining", "moves:"} {
		if !strings.Contains(text, want) {
			t.Errorf("the summary lacks %q:\n%s", want, text)
		}
	}
	c.fails("--drain 99: no such broker", "cluster", "rebalance", "--dry-run", "--drain", "99")

	// Carried out, the plan empties broker 1 and loses no record.
	c.ok(strings.Repeat("record\n", 600), "produce", "spread", "--acks", "all")
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(dc.Bootstrap(), ",")...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	onBroker1 := func() int {
		md, err := adm.Metadata(t.Context(), "spread")
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, p := range md.Topics["spread"].Partitions {
			if slices.Contains(p.Replicas, 1) {
				n++
			}
		}
		return n
	}
	if onBroker1() == 0 {
		t.Fatal("broker 1 holds no replica of the topic before the rebalance")
	}
	waitUntil(t, 2*time.Minute, "broker 1 drained by cluster rebalance", func() bool {
		out := c.ok("", "cluster", "rebalance", "--drain", "1", "--max-moves", "100")
		if strings.Contains(out, "moves:") && !strings.Contains(out, "done:") {
			t.Errorf("a plan with moves printed no progress:\n%s", out)
		}
		return onBroker1() == 0
	})
	ends, err := adm.ListEndOffsets(t.Context(), "spread")
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	ends.Each(func(o kadm.ListedOffset) { total += o.Offset })
	if total != 600 {
		t.Errorf("the topic ends at %d records after the moves, want 600", total)
	}
}

package cluster

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/samsa-io/samsa/internal/devcluster"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// binary is the samsa binary TestMain builds from this tree.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "cluster-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "samsa")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	err = devcluster.Build(ctx, binary)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// startCluster starts n combined nodes on free loopback ports and waits
// until every one lists all of them. Free ports are picked before the
// processes bind them, so another program may take one meanwhile: a start
// that fails with devcluster.ErrPortInUse is tried again on new ports.
// The cluster is closed when the test ends, after printing the nodes'
// logs if it failed.
func startCluster(t *testing.T, n int, overrides map[string]string) *devcluster.Cluster {
	t.Helper()
	return startClusterWith(t, devcluster.Config{Nodes: n, Overrides: overrides})
}

// startClusterWith is startCluster for any cluster config; Dir and
// StopTimeout are filled in, and Binary unless set.
func startClusterWith(t *testing.T, cfg devcluster.Config) *devcluster.Cluster {
	t.Helper()
	if cfg.Binary == "" {
		cfg.Binary = binary
	}
	cfg.StopTimeout = 30 * time.Second
	// No Schema Registry on the nodes unless a test asks for one: its
	// _schemas topic and group would change what the tests count
	// (topics, partitions, groups), and internal/devcluster's own tests
	// cover the per-node registries.
	if _, set := cfg.Overrides["samsa.schema.registry.listener"]; !set {
		cfg.Overrides = maps.Clone(cfg.Overrides)
		if cfg.Overrides == nil {
			cfg.Overrides = map[string]string{}
		}
		cfg.Overrides["samsa.schema.registry.listener"] = ""
	}
	for try := 1; ; try++ {
		cfg.Dir = t.TempDir()
		c, err := devcluster.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		err = c.Start(ctx)
		cancel()
		if err == nil {
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("node logs:\n%s", c.LogTails(60))
				}
				if err := c.Close(); err != nil {
					t.Errorf("close: %v", err)
				}
			})
			return c
		}
		c.Close()
		if !errors.Is(err, devcluster.ErrPortInUse) || try == 3 || cfg.BasePort != 0 {
			t.Fatalf("start %d nodes: %v\n%s", cfg.Nodes, err, c.LogTails(40))
		}
		t.Logf("start %d: %v; again on other ports", try, err)
	}
}

// waitReady waits for the metadata to list exactly the running nodes.
func waitReady(t *testing.T, c *devcluster.Cluster) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := c.WaitReady(ctx); err != nil {
		t.Fatalf("%v\n%s", err, c.LogTails(30))
	}
}

// adminClient is a kadm client over every node of c, closed with the test.
func adminClient(t *testing.T, c *devcluster.Cluster, opts ...kgo.Opt) *kadm.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(c.Addrs()...)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return kadm.NewClient(cl)
}

// createTopic creates a topic of the given partitions and replication
// factor, min.insync.replicas minISR, and waits until every running node
// knows it with full ISRs.
func createTopic(t *testing.T, c *devcluster.Cluster, topic string, partitions int32, rf int16, minISR int) {
	t.Helper()
	adm := adminClient(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	isr := fmt.Sprint(minISR)
	resp, err := adm.CreateTopic(ctx, partitions, rf, map[string]*string{"min.insync.replicas": &isr}, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("create %s: %v", topic, err)
	}
	if err := waitFullISR(ctx, c, topic, int(rf)); err != nil {
		t.Fatal(err)
	}
}

// partitions asks the broker at addr itself (not any broker of the
// cluster) for a topic's partitions, sorted by partition.
func partitions(ctx context.Context, addr, topic string) ([]kmsg.MetadataResponseTopicPartition, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DialTimeout(time.Second))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	resp, err := cl.SeedBrokers()[0].Request(ctx, req)
	if err != nil {
		return nil, err
	}
	mr := resp.(*kmsg.MetadataResponse)
	if len(mr.Topics) != 1 {
		return nil, fmt.Errorf("metadata of %s: %d topics", topic, len(mr.Topics))
	}
	if code := mr.Topics[0].ErrorCode; code != 0 {
		return nil, fmt.Errorf("metadata of %s: error code %d", topic, code)
	}
	ps := mr.Topics[0].Partitions
	slices.SortFunc(ps, func(a, b kmsg.MetadataResponseTopicPartition) int { return int(a.Partition - b.Partition) })
	return ps, nil
}

// runningAddrs lists the Kafka addresses of the running brokers.
func runningAddrs(c *devcluster.Cluster) []string {
	var out []string
	for _, n := range c.Nodes() {
		if n.Running() && n.Broker() {
			out = append(out, n.Addr())
		}
	}
	return out
}

// waitFullISR waits until every running node says each partition of the
// topic has a leader and an ISR of rf replicas.
func waitFullISR(ctx context.Context, c *devcluster.Cluster, topic string, rf int) error {
	var last error
	for {
		last = nil
		for _, addr := range runningAddrs(c) {
			ps, err := partitions(ctx, addr, topic)
			if err != nil {
				last = fmt.Errorf("%s: %w", addr, err)
				break
			}
			for _, p := range ps {
				if p.Leader < 0 || len(p.ISR) != rf || len(p.Replicas) != rf {
					last = fmt.Errorf("%s says %s-%d has leader %d, replicas %v, ISR %v", addr, topic, p.Partition, p.Leader, p.Replicas, p.ISR)
					break
				}
			}
			if last != nil {
				break
			}
		}
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s never had full ISRs: %w; last: %v", topic, ctx.Err(), last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// leaderOf is the leader of topic-partition as the first running node
// that answers sees it, -1 when none does. Nodes in skip are not asked: a
// node shutting down may still answer, slowly.
func leaderOf(ctx context.Context, c *devcluster.Cluster, topic string, partition int32, skip ...int32) int32 {
	for _, n := range c.Nodes() {
		if !n.Running() || !n.Broker() || slices.Contains(skip, n.ID) {
			continue
		}
		ps, err := partitions(ctx, n.Addr(), topic)
		if err == nil && int(partition) < len(ps) {
			return ps[partition].Leader
		}
	}
	return -1
}

// activeController is the node the metadata names as the controller, -1
// when no running node answers.
func activeController(ctx context.Context, c *devcluster.Cluster) int32 {
	for _, addr := range runningAddrs(c) {
		cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DialTimeout(time.Second))
		if err != nil {
			continue
		}
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		resp, err := cl.SeedBrokers()[0].Request(rctx, kmsg.NewPtrMetadataRequest())
		cancel()
		cl.Close()
		if err == nil {
			return resp.(*kmsg.MetadataResponse).ControllerID
		}
	}
	return -1
}

// nodeList names nodes for messages.
func nodeList(ids []int32) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = fmt.Sprint(id)
	}
	return strings.Join(s, ",")
}

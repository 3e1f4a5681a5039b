package broker

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/samsa-io/samsa/internal/config"
)

// testCluster is several combined nodes (broker and controller) in one
// test process, each on its own loopback ports and directory, forming one
// quorum over their controller listeners.
type testCluster struct {
	t       *testing.T
	voters  string
	nodes   []*clusterNode
	extra   map[string]string
	baseDir string
}

type clusterNode struct {
	id       int32
	dir      string
	ctrlPort string
	mu       sync.Mutex
	broker   *Broker
}

func (n *clusterNode) get() *Broker {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.broker
}

func newTestCluster(t *testing.T, size int, extra map[string]string) *testCluster {
	c := &testCluster{t: t, extra: extra, baseDir: t.TempDir()}
	var voters []string
	for i := range size {
		n := &clusterNode{id: int32(i + 1), ctrlPort: freePort(t), dir: fmt.Sprintf("%s/node%d", c.baseDir, i+1)}
		c.nodes = append(c.nodes, n)
		voters = append(voters, fmt.Sprintf("%d@127.0.0.1:%s", n.id, n.ctrlPort))
	}
	c.voters = strings.Join(voters, ",")
	var wg sync.WaitGroup
	for _, n := range c.nodes {
		wg.Add(1)
		go func() { defer wg.Done(); c.start(n) }()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	t.Cleanup(func() {
		for _, n := range c.nodes {
			if b := n.get(); b != nil {
				b.Close()
			}
		}
	})
	return c
}

func (c *testCluster) values(n *clusterNode) config.Values {
	raw := maps.Clone(samsaDefaults)
	maps.Copy(raw, map[string]string{
		"node.id":                               strconv.Itoa(int(n.id)),
		"controller.quorum.voters":              c.voters,
		"controller.listener.names":             "CONTROLLER",
		"controller.quorum.election.timeout.ms": "500",
		"listener.security.protocol.map":        "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
		"listeners":                             fmt.Sprintf("PLAINTEXT://127.0.0.1:0,CONTROLLER://127.0.0.1:%s", n.ctrlPort),
	})
	maps.Copy(raw, c.extra)
	v, err := config.Parse(config.Broker, raw)
	if err != nil {
		c.t.Fatal(err)
	}
	return v
}

// start starts node n (again, after stop); it returns once the node's
// broker serves, which needs a quorum.
func (c *testCluster) start(n *clusterNode) {
	v := c.values(n)
	cfg, err := ConfigFromValues(v)
	if err != nil {
		c.t.Error(err)
		return
	}
	cfg.LogDir, cfg.Logger = n.dir, quiet
	b, err := New(cfg)
	if err != nil {
		c.t.Error(err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := b.Start(ctx); err != nil {
		c.t.Errorf("start node %d: %v", n.id, err)
		return
	}
	n.mu.Lock()
	n.broker = b
	n.mu.Unlock()
}

// stop closes node n's broker, as a clean shutdown.
func (c *testCluster) stop(n *clusterNode) {
	n.mu.Lock()
	b := n.broker
	n.broker = nil
	n.mu.Unlock()
	if b != nil {
		b.Close()
	}
}

// bootstrap lists the client addresses of the running nodes.
func (c *testCluster) bootstrap() []string {
	var out []string
	for _, n := range c.nodes {
		if b := n.get(); b != nil {
			out = append(out, b.Addr())
		}
	}
	return out
}

func (c *testCluster) admin() (*kadm.Client, context.Context) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.bootstrap()...))
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(cl.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	c.t.Cleanup(cancel)
	return kadm.NewClient(cl), ctx
}

// activeController waits for a node to be the active controller.
func (c *testCluster) activeController() *clusterNode {
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		for _, n := range c.nodes {
			if b := n.get(); b != nil && b.ctrl.Active() {
				return n
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	c.t.Fatal("no active controller")
	return nil
}

func TestClusterFormsAQuorumOverControllerListeners(t *testing.T) {
	c := newTestCluster(t, 3, nil)
	active := c.activeController()
	ids := map[string]bool{}
	for _, n := range c.nodes {
		img := n.get().ctrl.Image()
		ids[img.ClusterID()] = true
		if got := n.get().ctrl.ControllerID(); int32(got) != active.id {
			t.Errorf("node %d names controller %d, want %d", n.id, got, active.id)
		}
	}
	if len(ids) != 1 {
		t.Fatalf("nodes disagree on the cluster ID: %v", ids)
	}
}

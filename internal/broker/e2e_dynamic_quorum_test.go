package broker

import (
	"context"
	"fmt"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/config"
	"github.com/samsa-io/samsa/internal/controller"
	"github.com/samsa-io/samsa/internal/freeport"
	"github.com/samsa-io/samsa/internal/metadata"
	"github.com/samsa-io/samsa/internal/metaprops"
)

// dynamicCluster is a testCluster whose quorum is found through
// controller.quorum.bootstrap.servers: combined nodes formatted with
// --initial-controllers naming them all, and controller-only nodes
// formatted with --no-initial-controllers, which join through
// AddRaftVoter.
type dynamicCluster struct {
	*testCluster
	clusterID       string
	quorumBootstrap string
	// joiners are the controller-only nodes, by node ID.
	joiners map[int32]*clusterNode
}

// freePorts are n distinct loopback ports nothing listens on, outside the
// kernel's ephemeral range (internal/freeport).
func freePorts(t *testing.T, n int) []string {
	t.Helper()
	picked, err := freeport.Pick(n)
	if err != nil {
		t.Fatal(err)
	}
	ports := make([]string, n)
	for i, p := range picked {
		ports[i] = strconv.Itoa(p)
	}
	return ports
}

// newDynamicCluster starts voters combined nodes and formats joiners
// controller-only nodes, which it does not start.
func newDynamicCluster(t *testing.T, voters, joiners int) *dynamicCluster {
	c := &dynamicCluster{testCluster: &testCluster{t: t, baseDir: t.TempDir()}, joiners: map[int32]*clusterNode{}}
	ports := freePorts(t, voters+joiners)
	var initial, boot []string
	for i, p := range ports {
		n := &clusterNode{id: int32(i + 1), ctrlPort: p, dir: fmt.Sprintf("%s/node%d", c.baseDir, i+1)}
		if i < voters {
			c.nodes = append(c.nodes, n)
			dirID, err := metaprops.NewClusterID()
			if err != nil {
				t.Fatal(err)
			}
			initial = append(initial, fmt.Sprintf("%d@127.0.0.1:%s:%s", n.id, p, dirID))
			boot = append(boot, "127.0.0.1:"+p)
		} else {
			c.joiners[n.id] = n
		}
	}
	c.quorumBootstrap = strings.Join(boot, ",")
	c.extra = map[string]string{"controller.quorum.voters": "", "controller.quorum.bootstrap.servers": c.quorumBootstrap}
	var err error
	if c.clusterID, err = metaprops.NewClusterID(); err != nil {
		t.Fatal(err)
	}
	for _, n := range c.nodes {
		if _, err := FormatStorage(c.values(n), FormatOptions{ClusterID: c.clusterID, Now: time.Now(), InitialControllers: strings.Join(initial, ",")}); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range c.joiners {
		if _, err := FormatStorage(c.joinerValues(n), FormatOptions{ClusterID: c.clusterID, Now: time.Now(), NoInitialControllers: true}); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for _, n := range c.nodes {
		wg.Add(1)
		go func() { defer wg.Done(); c.start(n) }()
	}
	wg.Wait()
	t.Cleanup(func() {
		for _, n := range append(slices.Clone(c.nodes), slices.Collect(maps.Values(c.joiners))...) {
			if b := n.get(); b != nil {
				b.Close()
			}
		}
	})
	if t.Failed() {
		t.FailNow()
	}
	c.waitLive(len(c.nodes))
	return c
}

// joinerValues is a controller-only node's config: its controller
// listener alone.
func (c *dynamicCluster) joinerValues(n *clusterNode) config.Values {
	raw := maps.Clone(samsaDefaults)
	maps.Copy(raw, map[string]string{
		"process.roles":                         "controller",
		"node.id":                               strconv.Itoa(int(n.id)),
		"log.dirs":                              n.dir,
		"controller.listener.names":             "CONTROLLER",
		"controller.quorum.bootstrap.servers":   c.quorumBootstrap,
		"controller.quorum.election.timeout.ms": "500",
		"listener.security.protocol.map":        "CONTROLLER:PLAINTEXT",
		"listeners":                             "CONTROLLER://127.0.0.1:" + n.ctrlPort,
		"samsa.http.listener":                   "127.0.0.1:0",
	})
	v, err := config.Parse(config.Broker, raw)
	if err != nil {
		c.t.Fatal(err)
	}
	return v
}

func (c *dynamicCluster) startJoiner(n *clusterNode) {
	cfg, err := ConfigFromValues(c.joinerValues(n))
	if err != nil {
		c.t.Fatal(err)
	}
	cfg.LogDir, cfg.Logger = n.dir, quiet
	b, err := New(cfg)
	if err != nil {
		c.t.Fatal(err)
	}
	if err := b.Start(context.Background()); err != nil {
		c.t.Fatalf("start controller %d: %v", n.id, err)
	}
	n.mu.Lock()
	n.broker = b
	n.mu.Unlock()
}

func addRaftVoter(ctx context.Context, cl *kgo.Client, id int32, port string) (*kmsg.AddRaftVoterResponse, error) {
	req := kmsg.NewPtrAddRaftVoterRequest()
	req.VoterID, req.TimeoutMillis = id, 15000
	p, _ := strconv.Atoi(port)
	req.Listeners = []kmsg.AddRaftVoterRequestListener{{Name: "CONTROLLER", Host: "127.0.0.1", Port: uint16(p)}}
	return req.RequestWith(ctx, cl)
}

func removeRaftVoter(ctx context.Context, cl *kgo.Client, id int32) (*kmsg.RemoveRaftVoterResponse, error) {
	req := kmsg.NewPtrRemoveRaftVoterRequest()
	req.VoterID = id
	return req.RequestWith(ctx, cl)
}

// describedVoters asks DescribeQuorum (through a broker, forwarded) for the
// voters, the observers and the voters' endpoints.
func describedVoters(ctx context.Context, t *testing.T, cl *kgo.Client) (voters, observers []int32, nodes map[int32]string) {
	t.Helper()
	req := kmsg.NewPtrDescribeQuorumRequest()
	req.Topics = []kmsg.DescribeQuorumRequestTopic{{Topic: metadata.ClusterMetadataTopic, Partitions: []kmsg.DescribeQuorumRequestTopicPartition{{Partition: 0}}}}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if resp.ErrorCode != 0 || len(resp.Topics) != 1 || resp.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("DescribeQuorum: %+v", resp)
	}
	p := resp.Topics[0].Partitions[0]
	for _, v := range p.CurrentVoters {
		voters = append(voters, v.ReplicaID)
	}
	for _, o := range p.Observers {
		observers = append(observers, o.ReplicaID)
	}
	nodes = map[int32]string{}
	for _, n := range resp.Nodes {
		nodes[n.NodeID] = net.JoinHostPort(n.Listeners[0].Host, strconv.Itoa(int(n.Listeners[0].Port)))
	}
	return voters, observers, nodes
}

// TestE2EDynamicQuorumGrowsAndShrinks: three combined voters, two
// controller-only nodes started outside them join through AddRaftVoter
// (sent to a broker, which forwards it), and the active controller is
// removed, all while topics are being created: every create ends in the
// topic existing. DescribeQuorum shows the final voters with their
// endpoints and the removed node among the observers (its broker follows
// the log), and the quorum elects a leader when the next active
// controller stops.
func TestE2EDynamicQuorumGrowsAndShrinks(t *testing.T) {
	c := newDynamicCluster(t, 3, 2)
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.bootstrap()...), kgo.RetryTimeout(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	// Topics are created all along, each retried until it exists.
	var created []string
	var stop atomic.Bool
	var wg sync.WaitGroup
	var createErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; !stop.Load(); i++ {
			name := fmt.Sprintf("grow-%d", i)
			for {
				req := kmsg.NewPtrCreateTopicsRequest()
				rt := kmsg.NewCreateTopicsRequestTopic()
				rt.Topic, rt.NumPartitions, rt.ReplicationFactor = name, 1, 1
				req.Topics, req.TimeoutMillis = append(req.Topics, rt), 10000
				resp, err := req.RequestWith(ctx, cl)
				if ctx.Err() != nil {
					createErr = fmt.Errorf("create %s: %w", name, ctx.Err())
					return
				}
				if err == nil && (resp.Topics[0].ErrorCode == 0 || resp.Topics[0].ErrorCode == kerr.TopicAlreadyExists.Code) {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			created = append(created, name)
		}
	}()

	for _, id := range []int32{4, 5} {
		n := c.joiners[id]
		c.startJoiner(n)
		resp, err := addRaftVoter(ctx, cl, id, n.ctrlPort)
		if err != nil || resp.ErrorCode != 0 {
			t.Fatalf("AddRaftVoter %d: %v %+v", id, err, resp)
		}
	}
	// Adding a voter again, removing one that is not.
	if resp, err := addRaftVoter(ctx, cl, 4, c.joiners[4].ctrlPort); err != nil || resp.ErrorCode != kerr.DuplicateVoter.Code {
		t.Fatalf("AddRaftVoter of a voter: %v %+v, want DUPLICATE_VOTER", err, resp)
	}
	if resp, err := removeRaftVoter(ctx, cl, 9); err != nil || resp.ErrorCode != kerr.VoterNotFound.Code {
		t.Fatalf("RemoveRaftVoter of an unknown node: %v %+v, want VOTER_NOT_FOUND", err, resp)
	}
	active := c.activeController()
	if resp, err := removeRaftVoter(ctx, cl, active.id); err != nil || resp.ErrorCode != 0 {
		t.Fatalf("RemoveRaftVoter %d: %v %+v", active.id, err, resp)
	}
	time.Sleep(time.Second) // let creates run on under the new leader
	stop.Store(true)
	wg.Wait()
	if createErr != nil {
		t.Fatal(createErr)
	}
	if len(created) == 0 {
		t.Fatal("no topic was created")
	}
	t.Logf("%d topics created while the voters changed", len(created))

	want := slices.DeleteFunc([]int32{1, 2, 3, 4, 5}, func(id int32) bool { return id == active.id })
	voters, observers, nodes := describedVoters(ctx, t, cl)
	if !slices.Equal(voters, want) || !slices.Contains(observers, active.id) {
		t.Fatalf("DescribeQuorum: voters %v, observers %v; want voters %v and %d among the observers", voters, observers, want, active.id)
	}
	for _, id := range want {
		port := ""
		if n, ok := c.joiners[id]; ok {
			port = n.ctrlPort
		} else {
			port = c.node(id).ctrlPort
		}
		if nodes[id] != "127.0.0.1:"+port {
			t.Errorf("DescribeQuorum names voter %d at %q, want 127.0.0.1:%s", id, nodes[id], port)
		}
	}
	if _, ok := nodes[active.id]; ok {
		t.Errorf("DescribeQuorum still lists the removed voter %d's endpoint", active.id)
	}

	// Every topic created exists, on every combined node.
	for _, n := range c.nodes {
		b := n.get()
		ok := func() bool {
			for _, name := range created {
				if _, ok := b.ctrl.Image().Topic(name); !ok {
					return false
				}
			}
			return true
		}
		wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
		b.awaitImage(wctx, ok)
		wcancel()
		if !ok() {
			t.Fatalf("node %d lacks some of the %d topics created", n.id, len(created))
		}
	}

	// The next active controller stops: the other three voters elect one.
	var next *clusterNode
	deadline := time.Now().Add(15 * time.Second)
	for next == nil && time.Now().Before(deadline) {
		for _, n := range append(slices.Clone(c.nodes), c.joiners[4], c.joiners[5]) {
			if b := n.get(); b != nil && b.ctrl.Active() {
				next = n
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	if next == nil || next.id == active.id {
		t.Fatalf("the active controller after the removal: %v", next)
	}
	c.stop(next)
	if _, ok := c.joiners[next.id]; ok {
		c.joiners[next.id] = &clusterNode{id: next.id}
	}
	deadline = time.Now().Add(15 * time.Second)
	var elected *clusterNode
	for elected == nil && time.Now().Before(deadline) {
		for _, n := range append(slices.Clone(c.nodes), c.joiners[4], c.joiners[5]) {
			if b := n.get(); b != nil && b.ctrl.Active() {
				elected = n
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	if elected == nil || elected.id == active.id {
		t.Fatalf("no voter was elected after node %d stopped (got %v)", next.id, elected)
	}
	// And the new leader takes writes.
	res := elected.get().ctrl.CreateTopics(ctx, []controller.CreateTopic{{Name: "after-election", NumPartitions: 1, ReplicationFactor: 1}}, false)
	if res[0].ErrorCode != 0 {
		t.Fatalf("create on the controller elected after node %d stopped: %d %s", next.id, res[0].ErrorCode, res[0].ErrorMessage)
	}
}

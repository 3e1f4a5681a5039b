package broker

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/samsa-io/samsa/internal/config"
	"github.com/samsa-io/samsa/internal/group"
	"github.com/samsa-io/samsa/internal/metaprops"
	"github.com/samsa-io/samsa/internal/model"
	"github.com/samsa-io/samsa/internal/txn"
	"github.com/samsa-io/samsa/internal/vfs"
)

var clusterLog = flag.Bool("cluster.log", false, "print the test cluster nodes' logs")

// testCluster is several combined nodes (broker and controller) in one
// test process, each on its own loopback ports and directory, forming one
// quorum over their controller listeners.
type testCluster struct {
	t       *testing.T
	voters  string
	nodes   []*clusterNode
	extra   map[string]string
	baseDir string
	// racks, when set, is each node's broker.rack: racks[i] for node i+1.
	racks []string
	// logDirs, when above 1, gives each node that many log directories,
	// <dir>/d0, <dir>/d1..., and its metadata log a directory of its own
	// (JBOD); fs, when set, is each node's filesystem (fault injection).
	logDirs int
	fs      map[int32]vfs.FS
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
	return startTestCluster(layoutTestCluster(t, size, extra))
}

// newRackCluster is newTestCluster of one node per rack, node i+1 in
// racks[i] (broker.rack).
func newRackCluster(t *testing.T, extra map[string]string, racks ...string) *testCluster {
	c := layoutTestCluster(t, len(racks), extra)
	c.racks = racks
	return startTestCluster(c)
}

// startTestCluster starts every node of a laid-out cluster and waits
// until each sees all of them live.
func startTestCluster(c *testCluster) *testCluster {
	t := c.t
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
	c.waitLive(len(c.nodes))
	return c
}

// layoutTestCluster picks the nodes' ports and formats their storage; it
// starts none of them.
func layoutTestCluster(t *testing.T, size int, extra map[string]string) *testCluster {
	return layoutTestClusterWith(t, size, extra, nil)
}

// layoutTestClusterWith is layoutTestCluster with setup run on the
// cluster before its nodes are formatted (log directories, filesystems).
func layoutTestClusterWith(t *testing.T, size int, extra map[string]string, setup func(*testCluster)) *testCluster {
	c := &testCluster{t: t, extra: extra, baseDir: t.TempDir()}
	var voters []string
	// Outside the kernel's ephemeral range: a port it hands out for :0 may
	// be the local end of another test's connection by the time a node binds.
	ports := freePorts(t, size)
	for i := range size {
		n := &clusterNode{id: int32(i + 1), ctrlPort: ports[i], dir: fmt.Sprintf("%s/node%d", c.baseDir, i+1)}
		c.nodes = append(c.nodes, n)
		voters = append(voters, fmt.Sprintf("%d@127.0.0.1:%s", n.id, n.ctrlPort))
	}
	c.voters = strings.Join(voters, ",")
	if setup != nil {
		setup(c)
	}
	clusterID, err := metaprops.NewClusterID()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range c.nodes {
		// A quorum node starts only on storage formatted for its cluster
		// (samsa storage format).
		v := c.values(n)
		if _, err := FormatStorage(v, FormatOptions{ClusterID: clusterID, Now: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// waitLive waits until every running node's metadata lists want live
// (unfenced) brokers.
func (c *testCluster) waitLive(want int) {
	c.t.Helper()
	for _, n := range c.nodes {
		b := n.get()
		if b == nil {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		live := func() bool {
			n := 0
			for _, br := range b.ctrl.Image().Brokers() {
				if !br.Fenced {
					n++
				}
			}
			return n == want
		}
		b.awaitImage(ctx, live)
		cancel()
		if !live() {
			c.t.Fatalf("node %d does not see %d live brokers", n.id, want)
		}
		b.applyImage(b.ctrl.Image())
	}
}

func (c *testCluster) values(n *clusterNode) config.Values {
	raw := maps.Clone(samsaDefaults)
	maps.Copy(raw, map[string]string{
		"node.id":                               strconv.Itoa(int(n.id)),
		"controller.quorum.voters":              c.voters,
		"log.dirs":                              c.nodeLogDirs(n),
		"controller.listener.names":             "CONTROLLER",
		"controller.quorum.election.timeout.ms": "500",
		"listener.security.protocol.map":        "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
		// Short sessions (3 s, long enough for a loaded -race run's heartbeats)
		// keep fencing tests and the last node's shutdown
		// (which has no quorum left to ask) quick.
		"broker.heartbeat.interval.ms": "200",
		"broker.session.timeout.ms":    "3000",
		"listeners":                    fmt.Sprintf("PLAINTEXT://127.0.0.1:0,CONTROLLER://127.0.0.1:%s", n.ctrlPort),
		// Never the default port: the tests run many nodes at once.
		"samsa.http.listener": "127.0.0.1:0",
	})
	if c.logDirs > 1 {
		raw["metadata.log.dir"] = n.dir + "/meta"
	}
	maps.Copy(raw, c.extra)
	if c.racks != nil {
		raw["broker.rack"] = c.racks[n.id-1]
	}
	v, err := config.Parse(config.Broker, raw)
	if err != nil {
		c.t.Fatal(err)
	}
	return v
}

// nodeLogDirs is node n's log.dirs.
func (c *testCluster) nodeLogDirs(n *clusterNode) string {
	if c.logDirs <= 1 {
		return n.dir
	}
	var dirs []string
	for i := range c.logDirs {
		dirs = append(dirs, fmt.Sprintf("%s/d%d", n.dir, i))
	}
	return strings.Join(dirs, ",")
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
	cfg.Logger = quiet
	if fs := c.fs[n.id]; fs != nil {
		cfg.FS = fs
	}
	if *clusterLog {
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug})).With("node", n.id)
	}
	b, err := New(cfg)
	if err != nil {
		c.t.Error(err)
		return
	}
	// Start's context is the broker's life, not a start-up bound.
	if err := b.Start(context.Background()); err != nil {
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

func TestClusterBrokersRegisterAndCreateReplicatedTopics(t *testing.T) {
	c := newTestCluster(t, 3, nil)
	adm, ctx := c.admin()
	meta, err := adm.BrokerMetadata(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(meta.Brokers) != 3 {
		t.Fatalf("metadata lists %d brokers, want 3: %v", len(meta.Brokers), meta.Brokers)
	}
	resp, err := adm.CreateTopic(ctx, 6, 3, nil, "rf3")
	if err != nil || resp.Err != nil {
		t.Fatalf("create: %v %v", err, resp.Err)
	}
	leaders := map[int32]int{}
	for _, n := range c.nodes {
		img := n.get().ctrl.Image()
		top, ok := img.Topic("rf3")
		if !ok {
			continue
		}
		for _, p := range top.Partitions {
			if len(p.Replicas) != 3 {
				t.Errorf("partition %d replicas %v", p.Partition, p.Replicas)
			}
			leaders[int32(p.Leader)]++
		}
		break
	}
	for id, n := range leaders {
		if n != 2 {
			t.Errorf("broker %d leads %d partitions, want 2 each: %v", id, n, leaders)
		}
	}
}

// TestClusterForwardsMetadataWritesToTheActiveController sends CreateTopics
// to each broker that is not the active controller: each forwards it, and
// answers only once its own metadata has the topic.
func TestClusterForwardsMetadataWritesToTheActiveController(t *testing.T) {
	c := newTestCluster(t, 3, nil)
	active := c.activeController()
	for _, n := range c.nodes {
		if n == active {
			continue
		}
		cl, err := kgo.NewClient(kgo.SeedBrokers(n.get().Addr()))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		req := kmsg.NewPtrCreateTopicsRequest()
		req.Version = 4
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = fmt.Sprintf("via-%d", n.id), 2, 3
		req.Topics = append(req.Topics, rt)
		req.TimeoutMillis = 10000
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		resp, err := cl.SeedBrokers()[0].Request(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if code := resp.(*kmsg.CreateTopicsResponse).Topics[0].ErrorCode; code != 0 {
			t.Fatalf("create via broker %d: %v", n.id, kerr.ErrorForCode(code))
		}
		if _, ok := n.get().ctrl.Image().Topic(rt.Topic); !ok {
			t.Errorf("broker %d answered before its image had %s", n.id, rt.Topic)
		}
	}
}

// produceN produces n records acks=all, idempotent, to topic and fails the
// test on any error.
func (c *testCluster) produceN(topic string, n int, prefix string) {
	c.t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.bootstrap()...), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerLinger(0), kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	if err != nil {
		c.t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var recs []*kgo.Record
	for i := range n {
		recs = append(recs, &kgo.Record{Topic: topic, Value: []byte(fmt.Sprintf("%s-%d", prefix, i))})
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		c.t.Fatalf("produce: %v", err)
	}
}

// logBytes is a replica's committed log of one partition, byte for byte.
func logBytes(t *testing.T, b *Broker, topic string, partition int32) ([]byte, int64) {
	t.Helper()
	ts, ok := b.topics.byTopicName(topic)
	if !ok {
		t.Fatalf("broker %d has no %s", b.cfg.NodeID, topic)
	}
	p, code := ts.partition(partition)
	if code != 0 {
		t.Fatalf("broker %d: %s-%d: code %d", b.cfg.NodeID, topic, partition, code)
	}
	var out []byte
	hw := p.HighWatermark()
	for off := p.LogStartOffset(); off < hw; {
		rr, _, err := p.Read(off, 1<<20, true)
		if err != nil {
			t.Fatal(err)
		}
		data, err := rr.ReadAll()
		rr.Release()
		if err != nil || len(data) == 0 {
			t.Fatalf("read %d: %v", off, err)
		}
		out = append(out, data...)
		next := off
		for d := data; len(d) >= 61; {
			base := int64(binary.BigEndian.Uint64(d))
			size := int(binary.BigEndian.Uint32(d[8:])) + 12
			next = base + int64(binary.BigEndian.Uint32(d[23:])) + 1
			d = d[size:]
		}
		off = next
	}
	return out, hw
}

// waitReplicasEqual waits until every running replica of the topic's
// partitions has the same high watermark and identical bytes below it.
func (c *testCluster) waitReplicasEqual(topic string, partitions int32) {
	c.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for p := range partitions {
		for {
			var first []byte
			var firstHW int64 = -1
			same := true
			var seen []string
			for _, n := range c.nodes {
				b := n.get()
				if b == nil {
					continue
				}
				if ts, ok := b.topics.byTopicName(topic); !ok || ts.partitions[p] == nil {
					same = false // this replica has not applied the topic yet
					continue
				}
				data, hw := logBytes(c.t, b, topic, p)
				seen = append(seen, fmt.Sprintf("node %d: high watermark %d, %d bytes", n.id, hw, len(data)))
				if firstHW < 0 {
					first, firstHW = data, hw
				} else if hw != firstHW || !bytes.Equal(data, first) {
					same = false
				}
			}
			if same {
				break
			}
			if time.Now().After(deadline) {
				c.t.Fatalf("replicas of %s-%d differ: %v", topic, p, seen)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

func TestClusterReplicatesAcksAllWritesToEveryReplica(t *testing.T) {
	c := newTestCluster(t, 3, nil)
	adm, ctx := c.admin()
	if resp, err := adm.CreateTopic(ctx, 3, 3, map[string]*string{"min.insync.replicas": kmsg.StringPtr("2")}, "acks-all"); err != nil || resp.Err != nil {
		t.Fatalf("create: %v %v", err, resp.Err)
	}
	c.produceN("acks-all", 300, "r")
	c.waitReplicasEqual("acks-all", 3)
}

// kill stops node n without a controlled shutdown, as kill -9 would: the
// controller learns of it only when its heartbeats stop.
func (c *testCluster) kill(n *clusterNode) {
	n.mu.Lock()
	b := n.broker
	n.broker = nil
	n.mu.Unlock()
	b.crashOnClose = true
	b.Close()
}

// leaderOf is the node leading a partition, as the active controller has it.
func (c *testCluster) leaderOf(topic string, partition int32) *clusterNode {
	img := c.activeController().get().ctrl.Image()
	p, ok := img.Partition(model.TopicPartition{Topic: topic, Partition: partition})
	if !ok {
		c.t.Fatalf("no %s-%d", topic, partition)
	}
	for _, n := range c.nodes {
		if n.id == int32(p.Leader) {
			return n
		}
	}
	return nil
}

// TestClusterLeaderFailover kills a partition's leader mid-stream: the
// controller fences it after the session timeout, elects an ISR member,
// and acks=all produces go on; nothing acknowledged is lost, and once the
// old leader returns, every replica holds the same log.
func TestClusterLeaderFailover(t *testing.T) {
	c := newTestCluster(t, 3, map[string]string{"replica.fetch.backoff.ms": "50"})
	adm, ctx := c.admin()
	if resp, err := adm.CreateTopic(ctx, 1, 3, map[string]*string{"min.insync.replicas": kmsg.StringPtr("2")}, "failover"); err != nil || resp.Err != nil {
		t.Fatalf("create: %v %v", err, resp.Err)
	}
	c.produceN("failover", 200, "before")
	old := c.leaderOf("failover", 0)
	c.kill(old)
	start := time.Now()
	elected := make(chan time.Duration, 1)
	go func() {
		for _, n := range c.nodes {
			if b := n.get(); b != nil {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				b.awaitImage(ctx, func() bool {
					p, _ := b.ctrl.Image().Partition(model.TopicPartition{Topic: "failover"})
					return int32(p.Leader) != old.id && p.Leader >= 0
				})
				elected <- time.Since(start)
				return
			}
		}
	}()
	c.produceN("failover", 200, "after")
	t.Logf("after the leader was killed: a new leader in %v, the next acks=all produce acknowledged in %v", <-elected, time.Since(start))
	if now := c.leaderOf("failover", 0); now == old || now == nil {
		t.Fatalf("leader is still %v", now)
	}
	c.start(old)
	c.waitLive(3)
	c.waitReplicasEqual("failover", 1)
	data, hw := logBytes(t, old.get(), "failover", 0)
	if hw != 400 || len(data) == 0 {
		t.Fatalf("the returned replica has %d records, want 400", hw)
	}
}

// TestClusterAcksAllDoesNotWaitOutTheFollowersLongPoll: a follower's fetch
// parked at the leader is woken by the leader's append, so an acks=all
// produce commits as soon as the followers have copied it, not when their
// long poll (replica.fetch.wait.max.ms, here longer than the produce
// timeout) runs out.
func TestClusterAcksAllDoesNotWaitOutTheFollowersLongPoll(t *testing.T) {
	c := newTestCluster(t, 3, map[string]string{"replica.fetch.wait.max.ms": "25000"})
	adm, ctx := c.admin()
	if resp, err := adm.CreateTopic(ctx, 1, 3, map[string]*string{"min.insync.replicas": kmsg.StringPtr("3")}, "wake"); err != nil || resp.Err != nil {
		t.Fatalf("create: %v %v", err, resp.Err)
	}
	// Raw produces to the leader, so the broker's own 5 s produce timeout
	// decides: REQUEST_TIMED_OUT if the followers sleep out their poll.
	leader := c.leaderOf("wake", 0).get()
	c.waitReplicasEqual("wake", 1)
	r := dialRaw(t, leader)
	for i := range 5 {
		batch := rawBatch(rawBatchOptions{timestamp: time.Now().UnixMilli()}, rawRecord{Value: fmt.Appendf(nil, "v%d", i)})
		if sp := rawProducePart(r, rawProduceReq("wake", 0, -1, batch), int32(i)); sp.ErrorCode != 0 {
			t.Fatalf("produce %d: %v", i, kerr.ErrorForCode(sp.ErrorCode))
		}
	}
}

// TestClusterCreatesInternalTopicsFromAnyBroker: the first FindCoordinator
// on a broker that is not the active controller creates __consumer_offsets
// through it, with the internal topic's settings.
func TestClusterCreatesInternalTopicsFromAnyBroker(t *testing.T) {
	c := newTestCluster(t, 3, nil)
	active := c.activeController()
	var other *clusterNode
	for _, n := range c.nodes {
		if n != active {
			other = n
		}
	}
	r := dialRaw(t, other.get())
	deadline := time.Now().Add(15 * time.Second)
	for corr := int32(1); ; corr++ {
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.Version, req.CoordinatorKey = 3, "g"
		resp := r.roundTrip(req, corr).(*kmsg.FindCoordinatorResponse)
		if resp.ErrorCode == 0 {
			break
		}
		if resp.ErrorCode != kerr.CoordinatorNotAvailable.Code || time.Now().After(deadline) {
			t.Fatalf("FindCoordinator: %v %v", kerr.ErrorForCode(resp.ErrorCode), resp.ErrorMessage)
		}
		time.Sleep(50 * time.Millisecond)
	}
	img := active.get().ctrl.Image()
	top, ok := img.Topic("__consumer_offsets")
	if !ok {
		t.Fatal("no __consumer_offsets")
	}
	if got := img.TopicConfig(top.Name)["cleanup.policy"]; got != "compact" {
		t.Errorf("__consumer_offsets cleanup.policy %q, want compact", got)
	}
}

// TestClusterControlledShutdownMovesLeadershipFirst: a broker that closes
// cleanly has its leaderships moved to other ISR members, and is fenced,
// before Close returns, not a session timeout later.
func TestClusterControlledShutdownMovesLeadershipFirst(t *testing.T) {
	c := newTestCluster(t, 3, nil)
	adm, ctx := c.admin()
	if resp, err := adm.CreateTopic(ctx, 3, 3, nil, "handover"); err != nil || resp.Err != nil {
		t.Fatalf("create: %v %v", err, resp.Err)
	}
	active := c.activeController()
	var leaving *clusterNode
	for p := range int32(3) {
		if n := c.leaderOf("handover", p); n != active {
			leaving = n
			break
		}
	}
	if leaving == nil {
		t.Fatal("the active controller leads every partition")
	}
	start := time.Now()
	c.stop(leaving)
	t.Logf("controlled shutdown took %v", time.Since(start))
	img := active.get().ctrl.Image()
	for p := range int32(3) {
		pi, _ := img.Partition(model.TopicPartition{Topic: "handover", Partition: p})
		if int32(pi.Leader) == leaving.id || slices.Contains(pi.ISR, model.NodeID(leaving.id)) {
			t.Errorf("partition %d after the clean shutdown of %d: leader %d, ISR %v", p, leaving.id, pi.Leader, pi.ISR)
		}
	}
	if br, _ := img.Broker(model.NodeID(leaving.id)); !br.Fenced {
		t.Errorf("broker %d is not fenced after its clean shutdown", leaving.id)
	}
}

// coordinatorValues replicates the coordinators' topics as Kafka does (3
// replicas, min ISR 2), over few partitions so each load is quick.
var coordinatorValues = map[string]string{
	"offsets.topic.replication.factor":                 "3",
	"offsets.topic.num.partitions":                     "3",
	"transaction.state.log.replication.factor":         "3",
	"transaction.state.log.min.isr":                    "2",
	"transaction.state.log.num.partitions":             "3",
	"share.coordinator.state.topic.num.partitions":     "3",
	"share.coordinator.state.topic.replication.factor": "3",
	"share.coordinator.state.topic.min.isr":            "2",
	"replica.fetch.backoff.ms":                         "50",
}

// liveClient is a franz-go client seeded with every running node.
func (c *testCluster) liveClient(opts ...kgo.Opt) *kgo.Client {
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(c.bootstrap()...)}, opts...)...)
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(cl.Close)
	return cl
}

func (c *testCluster) node(id int32) *clusterNode {
	for _, n := range c.nodes {
		if n.id == id {
			return n
		}
	}
	c.t.Fatalf("no node %d", id)
	return nil
}

// TestClusterGroupCoordinatorFollowsLeadership: a group's coordinator is
// the leader of its __consumer_offsets partition; when that broker dies,
// the partition's new leader loads it, FindCoordinator names the new
// leader, and the offsets committed before the crash are all there.
func TestClusterGroupCoordinatorFollowsLeadership(t *testing.T) {
	c := newTestCluster(t, 3, coordinatorValues)
	adm := kadm.NewClient(c.liveClient(kgo.RetryTimeout(30 * time.Second)))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if resp, err := adm.CreateTopic(ctx, 3, 3, nil, "tracked"); err != nil || resp.Err != nil {
		t.Fatalf("create: %v %v", err, resp.Err)
	}
	const groupID = "follows"
	offsets := kadm.Offsets{}
	for p := range int32(3) {
		offsets.AddOffset("tracked", p, int64(10+p), -1)
	}
	// Until the coordinator's broker has applied the new topic, the commit
	// is UNKNOWN_TOPIC_OR_PARTITION, which clients retry.
	for {
		resp, err := adm.CommitOffsets(ctx, groupID, offsets)
		if err == nil && resp.Error() == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("commit: %v %v", err, resp.Error())
		}
		time.Sleep(20 * time.Millisecond)
	}
	coordinator := func() int32 {
		for {
			// COORDINATOR_NOT_AVAILABLE while the partition's leadership
			// settles is retriable (clients retry it; kadm returns it).
			resp := adm.FindGroupCoordinators(ctx, groupID)
			err := resp[groupID].Err
			if err == nil {
				return resp[groupID].NodeID
			}
			if !errors.Is(err, kerr.CoordinatorNotAvailable) || ctx.Err() != nil {
				t.Fatalf("find coordinator: %v", err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	first := coordinator()
	leader := c.leaderOf("__consumer_offsets", group.PartitionFor(groupID, 3))
	if first != leader.id {
		t.Fatalf("FindCoordinator names broker %d; __consumer_offsets' leader is %d", first, leader.id)
	}
	c.kill(leader)
	start := time.Now()
	// A fresh client each try: franz-go's sharded OffsetFetch keeps a
	// coordinator it cannot dial cached (it drops one only on an error
	// code), so the old client would keep dialing the dead broker.
	var fetched kadm.OffsetResponses
	for {
		cl := c.liveClient()
		resp, err := kadm.NewClient(cl).FetchOffsets(ctx, groupID)
		cl.Close()
		if err == nil && resp.Error() == nil {
			fetched = resp
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("offsets unreadable after the coordinator died: %v %v", err, ctx.Err())
		}
		time.Sleep(50 * time.Millisecond)
	}
	adm = kadm.NewClient(c.liveClient(kgo.RetryTimeout(30 * time.Second)))
	t.Logf("offsets readable again %v after the coordinator was killed", time.Since(start))
	for p := range int32(3) {
		if o, ok := fetched.Lookup("tracked", p); !ok || o.At != int64(10+p) {
			t.Errorf("partition %d: committed offset %+v after failover, want %d", p, o, 10+p)
		}
	}
	if now := coordinator(); now == first || now != c.leaderOf("__consumer_offsets", group.PartitionFor(groupID, 3)).id {
		t.Fatalf("coordinator after failover is %d (was %d)", now, first)
	}
	offsets.AddOffset("tracked", 0, 99, -1)
	if resp, err := adm.CommitOffsets(ctx, groupID, offsets); err != nil || resp.Error() != nil {
		t.Fatalf("commit after failover: %v %v", err, resp.Error())
	}
}

// TestClusterExactlyOnceWhileTheCoordinatorDies runs a consume-transform-
// produce processor (franz-go's GroupTransactSession) on three brokers,
// every topic with 3 replicas and min ISR 2, and kills the broker leading
// the processor's __transaction_state partition midway: its transaction
// and group coordinators move to other brokers, markers go to partition
// leaders elsewhere, and the read_committed output still holds every
// input exactly once.
func TestClusterExactlyOnceWhileTheCoordinatorDies(t *testing.T) {
	const (
		inputs  = 400
		groupID = "eos-cluster"
		txnID   = "eos-cluster-tx"
	)
	extra := maps.Clone(coordinatorValues)
	extra["group.initial.rebalance.delay.ms"] = "0"
	c := newTestCluster(t, 3, extra)
	adm := kadm.NewClient(c.liveClient())
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	two := map[string]*string{"min.insync.replicas": kmsg.StringPtr("2")}
	for _, topic := range []string{"eos-in", "eos-out"} {
		if resp, err := adm.CreateTopic(ctx, 3, 3, two, topic); err != nil || resp.Err != nil {
			t.Fatalf("create %s: %v %v", topic, err, resp.Err)
		}
	}
	in := make([]*kgo.Record, inputs)
	for i := range in {
		id := fmt.Sprintf("id-%04d", i)
		in[i] = &kgo.Record{Topic: "eos-in", Key: []byte(id), Value: []byte(id)}
	}
	if err := c.liveClient().ProduceSync(ctx, in...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	ends := map[int32]int64{}
	for p, o := range c.endOffsets(ctx, "eos-in") {
		ends[p] = o
	}
	var processed atomic.Int64
	killAt := int64(inputs / 3)
	killed := make(chan int32, 1)
	go func() {
		for processed.Load() < killAt && ctx.Err() == nil {
			time.Sleep(5 * time.Millisecond)
		}
		victim := c.leaderOf("__transaction_state", txn.PartitionFor(txnID, 3))
		c.kill(victim)
		killed <- victim.id
	}()
	// One incarnation after another: an error ends one, as a crashed
	// process would, and the next resumes from the group's offsets.
	incarnation := 0
	for ; !c.groupCaughtUp(ctx, groupID, "eos-in", ends); incarnation++ {
		if ctx.Err() != nil {
			t.Fatalf("after %d incarnations, %d of %d inputs committed", incarnation, processed.Load(), inputs)
		}
		c.runTransformer(ctx, incarnation, groupID, txnID, &processed, inputs)
	}
	t.Logf("killed broker %d, the transaction coordinator; %d incarnations", <-killed, incarnation)
	writeSentinels(t, c.bootstrap()[0], "eos-out", 3)
	seen := map[string]int{}
	for _, recs := range readToSentinel(t, c.bootstrap()[0], "eos-out", 3, kgo.ReadCommitted()) {
		for _, r := range recs {
			seen[string(r.Value)]++
		}
	}
	for i := range inputs {
		want := fmt.Sprintf("out-id-%04d", i)
		if n := seen[want]; n != 1 {
			t.Errorf("%s appears %d times in the committed output", want, n)
		}
		delete(seen, want)
	}
	for v, n := range seen {
		t.Errorf("unexpected output %q (%d times)", v, n)
	}
}

// endOffsets lists a topic's partitions' high watermarks.
func (c *testCluster) endOffsets(ctx context.Context, topic string) map[int32]int64 {
	ends, err := kadm.NewClient(c.liveClient()).ListEndOffsets(ctx, topic)
	if err != nil || ends.Error() != nil {
		c.t.Fatalf("end offsets of %s: %v %v", topic, err, ends.Error())
	}
	out := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) { out[o.Partition] = o.Offset })
	return out
}

// groupCaughtUp reports whether a group's committed offsets reach ends,
// asking with a fresh client (see TestClusterGroupCoordinatorFollowsLeadership).
func (c *testCluster) groupCaughtUp(ctx context.Context, groupID, topic string, ends map[int32]int64) bool {
	cl := c.liveClient()
	defer cl.Close()
	resp, err := kadm.NewClient(cl).FetchOffsets(ctx, groupID)
	if err != nil || resp.Error() != nil {
		return false
	}
	for p, end := range ends {
		if o, ok := resp.Lookup(topic, p); !ok || o.At != end {
			return false
		}
	}
	return true
}

// runTransformer is one incarnation of the exactly-once processor: it
// copies eos-in to eos-out in transactions of up to 20 records, adding
// each committed transaction's size to processed, until processed reaches
// inputs or an error ends the incarnation.
func (c *testCluster) runTransformer(ctx context.Context, incarnation int, groupID, txnID string, processed *atomic.Int64, inputs int64) {
	t := c.t
	s, err := kgo.NewGroupTransactSession(
		kgo.SeedBrokers(c.bootstrap()...),
		kgo.ConsumerGroup(groupID),
		kgo.ConsumeTopics("eos-in"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.TransactionalID(txnID),
		kgo.TransactionTimeout(20*time.Second),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.RequireStableFetchOffsets(),
		kgo.DefaultProduceTopic("eos-out"),
		kgo.FetchMaxWait(200*time.Millisecond),
	)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for processed.Load() < inputs && ctx.Err() == nil {
		pollCtx, cancel := context.WithTimeout(ctx, 2*time.Second)
		fs := s.PollRecords(pollCtx, 20)
		cancel()
		if fs.Empty() && processed.Load() > 0 {
			return // perhaps done: the caller checks the group's offsets
		}
		fs.EachError(func(topic string, p int32, err error) {
			t.Logf("incarnation %d: fetch %s/%d: %v", incarnation, topic, p, err)
		})
		if err := s.Begin(); err != nil {
			t.Logf("incarnation %d: begin: %v", incarnation, err)
			return
		}
		var (
			wg      sync.WaitGroup
			mu      sync.Mutex
			prodErr error
			n       int64
		)
		fs.EachRecord(func(r *kgo.Record) {
			wg.Add(1)
			n++
			s.Produce(ctx, &kgo.Record{Key: r.Value, Value: []byte("out-" + string(r.Value))}, func(_ *kgo.Record, err error) {
				defer wg.Done()
				if err != nil {
					mu.Lock()
					prodErr = errors.Join(prodErr, err)
					mu.Unlock()
				}
			})
		})
		wg.Wait()
		if prodErr != nil {
			t.Logf("incarnation %d: produce: %v", incarnation, prodErr)
		}
		committed, err := s.End(ctx, kgo.TryCommit)
		if err != nil {
			t.Logf("incarnation %d: end: %v", incarnation, err)
			return
		}
		if committed && prodErr == nil {
			processed.Add(n)
		}
	}
}

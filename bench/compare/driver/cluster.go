package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/samsa-io/samsa/bench/internal/kafkanode"
	"github.com/samsa-io/samsa/internal/devcluster"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// clusterKind is a broker kind of the cluster mode (-cluster): a cluster
// of combined nodes on this machine, or a single node to compare with.
type clusterKind interface {
	name() string
	nodes() int
	// replication is the replication factor of the workloads' topics.
	replication() int
	// start lays out dir, starts every node and returns once each lists
	// every node as a broker.
	start(dir string, timeout time.Duration) (cluster, error)
}

// cluster is a running clusterKind.
type cluster interface {
	servers
	// started is when the first process was started.
	startedAt() time.Time
	close()
}

// clusterStopGrace bounds each cluster's shutdown before its processes are
// killed; nothing of a cluster outlives its phase.
const clusterStopGrace = 30 * time.Second

// singleNode runs a broker kind of the main comparison (samsa: RF 1) with
// the cluster workloads.
type singleNode struct{ kind brokerKind }

func (s singleNode) name() string     { return s.kind.name() }
func (s singleNode) nodes() int       { return 1 }
func (s singleNode) replication() int { return 1 }

func (s singleNode) start(dir string, timeout time.Duration) (cluster, error) {
	b, err := newBroker(s.kind, dir)
	if err != nil {
		return nil, err
	}
	if err := b.start(); err != nil {
		return nil, err
	}
	c := singleRunning{b}
	if err := waitBrokers(b, 1, timeout); err != nil {
		c.close()
		return nil, err
	}
	return c, nil
}

type singleRunning struct{ *broker }

func (s singleRunning) startedAt() time.Time { return s.started }
func (s singleRunning) close()               { s.stop(time.Minute) }

// samsaCluster runs Samsa as internal/devcluster does for development and
// the cluster tests: n `samsa serve` processes, combined nodes of one
// quorum on free loopback ports, each formatted with one cluster ID.
type samsaCluster struct {
	bin string
	n   int
}

func (s samsaCluster) name() string     { return "samsa-" + strconv.Itoa(s.n) }
func (s samsaCluster) nodes() int       { return s.n }
func (s samsaCluster) replication() int { return min(3, s.n) }

// samsaClusterOverrides put back Kafka's defaults where devcluster shortens
// them for tests that kill nodes (devcluster.FailureDetection): the
// benchmark kills nothing, and Kafka runs with these defaults. The
// replication defaults are devcluster's for n nodes (RF 3, min ISR 2),
// written out here so the comparison's settings read in one place.
func samsaClusterOverrides(n int) map[string]string {
	o := map[string]string{
		"broker.heartbeat.interval.ms":          "2000",
		"broker.session.timeout.ms":             "9000",
		"controller.quorum.election.timeout.ms": "1000",
		"group.initial.rebalance.delay.ms":      "0", // as the Kafka config
		"default.replication.factor":            strconv.Itoa(min(3, n)),
		"min.insync.replicas":                   strconv.Itoa(min(2, n)),
		// No Schema Registry on the nodes: the Kafka cluster runs none,
		// and its reader and group would be load only Samsa carries.
		"samsa.schema.registry.listener": "",
	}
	return o
}

func (s samsaCluster) start(dir string, timeout time.Duration) (cluster, error) {
	// Free ports are picked before the nodes bind them; another process
	// may take one in between (devcluster.ErrPortInUse): try again on
	// new ones.
	for attempt := 1; ; attempt++ {
		c, err := devcluster.New(devcluster.Config{Binary: s.bin, Dir: filepath.Join(dir, strconv.Itoa(attempt)),
			Nodes: s.n, Overrides: samsaClusterOverrides(s.n), StopTimeout: clusterStopGrace})
		if err != nil {
			return nil, err
		}
		r := &samsaRunning{kind: s.name(), c: c, started: time.Now()}
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		err = c.Start(ctx)
		cancel()
		if err == nil {
			return r, nil
		}
		tail := c.LogTails(15)
		c.Close()
		if !errors.Is(err, devcluster.ErrPortInUse) || attempt == 3 {
			return nil, fmt.Errorf("%s: %w:\n%s", s.name(), err, tail)
		}
	}
}

type samsaRunning struct {
	kind    string
	c       *devcluster.Cluster
	started time.Time
}

func (r *samsaRunning) name() string         { return r.kind }
func (r *samsaRunning) bootstrap() string    { return r.c.Bootstrap() }
func (r *samsaRunning) startedAt() time.Time { return r.started }
func (r *samsaRunning) logTail() string      { return r.c.LogTails(15) }
func (r *samsaRunning) close()               { _ = r.c.Close() }
func (r *samsaRunning) clientArgs() []string { return nil }

func (r *samsaRunning) pids() []int {
	var out []int
	for _, n := range r.c.Nodes() {
		out = append(out, n.Pid())
	}
	return out
}

func (r *samsaRunning) alive() bool {
	for _, n := range r.c.Nodes() {
		if !n.Running() {
			return false
		}
	}
	return true
}

// kafkaCluster runs n Kafka combined nodes (process.roles=broker,controller)
// forming a static KRaft quorum, each with the single node's JVM options
// and log4j2 config.
type kafkaCluster struct {
	kafka kafkaKind
	n     int
}

func (k kafkaCluster) name() string     { return "kafka-" + strconv.Itoa(k.n) }
func (k kafkaCluster) nodes() int       { return k.n }
func (k kafkaCluster) replication() int { return min(3, k.n) }

// start formats and starts the nodes. Its ports are picked free, all held
// until all are picked, and bound seconds later by the JVMs; in between
// another process, or a connection's ephemeral port, may take one. A node
// that then fails to bind makes start try again on new ports.
func (k kafkaCluster) start(dir string, timeout time.Duration) (cluster, error) {
	for attempt := 1; ; attempt++ {
		r, err := k.startOnce(filepath.Join(dir, strconv.Itoa(attempt)), timeout)
		if err == nil || !errors.Is(err, errPortTaken) || attempt == 3 {
			return r, err
		}
	}
}

func (k kafkaCluster) startOnce(dir string, timeout time.Duration) (cluster, error) {
	q := &kafkaQuorum{kind: k.name(), nodes: k.n, clusterID: kafkanode.NewClusterID()}
	r := &kafkaRunning{kind: k.name()}
	ports, err := freePorts(2 * k.n)
	if err != nil {
		return nil, err
	}
	var voters []string
	for i := range k.n {
		node := k.kafka
		node.quorum, node.nodeID = q, i+1
		b := &broker{kind: node, dir: filepath.Join(dir, fmt.Sprintf("node-%d", i+1)), port: ports[i], ctrlPort: ports[k.n+i]}
		voters = append(voters, fmt.Sprintf("%d@127.0.0.1:%d", i+1, b.ctrlPort))
		r.nodes = append(r.nodes, b)
	}
	q.voters = strings.Join(voters, ",")
	for _, b := range r.nodes {
		if err := os.MkdirAll(b.dir, 0o755); err != nil {
			return nil, err
		}
		if err := b.kind.prepare(b); err != nil {
			return nil, fmt.Errorf("%s: prepare %s: %w", k.name(), b.dir, err)
		}
	}
	r.started = time.Now()
	for _, b := range r.nodes {
		if err := b.start(); err != nil {
			r.close()
			return nil, err
		}
	}
	if err := r.waitReady(timeout); err != nil {
		r.close()
		return nil, err
	}
	return r, nil
}

// errPortTaken marks a node that exited because it could not bind.
var errPortTaken = errors.New("a port was taken before the node bound it")

type kafkaRunning struct {
	kind    string
	nodes   []*broker
	started time.Time
}

func (r *kafkaRunning) name() string         { return r.kind }
func (r *kafkaRunning) startedAt() time.Time { return r.started }
func (r *kafkaRunning) clientArgs() []string { return nil }

func (r *kafkaRunning) bootstrap() string {
	var addrs []string
	for _, b := range r.nodes {
		addrs = append(addrs, b.addr())
	}
	return strings.Join(addrs, ",")
}

func (r *kafkaRunning) pids() []int {
	var out []int
	for _, b := range r.nodes {
		out = append(out, b.pid())
	}
	return out
}

func (r *kafkaRunning) alive() bool {
	for _, b := range r.nodes {
		if b.cmd == nil || !b.alive() {
			return false
		}
	}
	return true
}

func (r *kafkaRunning) logTail() string {
	var s strings.Builder
	for i, b := range r.nodes {
		fmt.Fprintf(&s, "=== node %d (%s):\n%s\n", i+1, filepath.Join(b.dir, "broker.log"), b.logTail())
	}
	return s.String()
}

// close sends every node SIGTERM at once and kills those still running
// after clusterStopGrace. Stopped one by one, the last nodes would wait for
// a quorum that is gone; the data is thrown away anyway.
func (r *kafkaRunning) close() {
	for _, b := range r.nodes {
		if b.cmd != nil && b.alive() {
			_ = b.cmd.Process.Signal(syscall.SIGTERM)
		}
	}
	deadline := time.After(clusterStopGrace)
	for _, b := range r.nodes {
		if b.cmd == nil {
			continue
		}
		select {
		case <-b.exited:
		case <-deadline:
			b.kill9()
		}
	}
}

// waitReady waits until every node answers a Metadata request listing
// every node; it fails at once when a node exits.
func (r *kafkaRunning) waitReady(timeout time.Duration) error {
	var clients []*kgo.Client
	defer func() {
		for _, cl := range clients {
			cl.Close()
		}
	}()
	for _, b := range r.nodes {
		cl, err := newClient(b)
		if err != nil {
			return err
		}
		clients = append(clients, cl)
	}
	deadline := r.started.Add(timeout)
	last := errors.New("no answer yet")
	for time.Now().Before(deadline) {
		for i, b := range r.nodes {
			if b.alive() {
				continue
			}
			err := fmt.Errorf("%s: node %d: %w", r.kind, i+1, errExited)
			if log, _ := os.ReadFile(filepath.Join(b.dir, "broker.log")); strings.Contains(string(log), "Address already in use") {
				err = fmt.Errorf("%w (%w)", err, errPortTaken)
			}
			return fmt.Errorf("%w:\n%s", err, r.logTail())
		}
		ready := true
		for i, cl := range clients {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			err := listsBrokers(ctx, cl, len(r.nodes))
			cancel()
			if err != nil {
				ready, last = false, fmt.Errorf("node %d: %w", i+1, err)
				break
			}
		}
		if ready {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("%s: not ready within %s: %v:\n%s", r.kind, timeout, last, r.logTail())
}

// listsBrokers succeeds when the client's seed broker itself lists n
// brokers.
func listsBrokers(ctx context.Context, cl *kgo.Client, n int) error {
	req := kmsg.NewPtrMetadataRequest()
	req.Topics = []kmsg.MetadataRequestTopic{}
	resp, err := cl.SeedBrokers()[0].Request(ctx, req) // this node's own view
	if err != nil {
		return err
	}
	if got := len(resp.(*kmsg.MetadataResponse).Brokers); got != n {
		return fmt.Errorf("metadata lists %d brokers, want %d", got, n)
	}
	return nil
}

// waitBrokers waits until the broker accepts connections and answers a
// Metadata request listing n brokers.
func waitBrokers(b *broker, n int, timeout time.Duration) error {
	if _, err := waitConnect(b, timeout); err != nil {
		return err
	}
	cl, err := newClient(b)
	if err != nil {
		return err
	}
	defer cl.Close()
	_, err = probe(b, timeout, fmt.Sprintf("metadata listing %d brokers", n), func(ctx context.Context) error {
		return listsBrokers(ctx, cl, n)
	})
	return err
}

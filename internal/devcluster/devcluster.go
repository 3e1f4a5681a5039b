package devcluster

import (
	"context"
	"errors"
	"fmt"
	"github.com/twmb/franz-go/pkg/kgo"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/samsa-io/samsa/internal/task"
)

// Config says what cluster to run.
type Config struct {
	// Binary is the samsa binary every node runs.
	Binary string
	// Dir holds the cluster: devcluster.properties (the cluster ID and the
	// ports) and a directory per node, node-<id>. A directory holding a
	// cluster already starts that cluster again.
	Dir string
	// Nodes is how many combined nodes to run, with node IDs 1 to Nodes.
	Nodes int
	// BasePort, when not zero, puts the Kafka listeners on BasePort and up
	// and the controller listeners ControllerPortOffset above them, each
	// checked free first. Zero picks free loopback ports.
	BasePort int
	// Overrides are broker configs for every node, written over the
	// cluster's own (ReplicationDefaults, FailureDetection, the listeners).
	Overrides map[string]string
	// StopTimeout bounds a node's SIGTERM shutdown in Close before it is
	// killed; zero means 30 s.
	StopTimeout time.Duration
	// Hosts, when set, gives each node an address of its own to listen on
	// (node i+1 on Hosts[i]), as network namespaces made by a test do.
	// Every node then uses BasePort (required) for Kafka and BasePort +
	// ControllerPortOffset for the quorum, unchecked: the addresses may
	// live where this process cannot bind. Empty: 127.0.0.1 for all.
	Hosts []string
	// Prefix, when set, is put before each node's command line, as
	// "ip netns exec NAME" runs it in a network namespace.
	Prefix func(id int32) []string
	// Roles, when set, gives each node its process.roles: "broker",
	// "controller" or "broker,controller" (the default). The voters are
	// the nodes with the controller role; a controller-only node has only
	// its controller listener, a broker-only node only its Kafka listener.
	Roles func(id int32) string
	// BootstrapServers, when set, has every node find the quorum through
	// controller.quorum.bootstrap.servers (every controller's listener)
	// instead of controller.quorum.voters, as Kafka 4 nodes do, and
	// formats each controller with --initial-controllers naming all of
	// them, each with a directory ID of its own (KIP-853's bootstrapping).
	BootstrapServers bool
	// Connect runs a Kafka Connect worker in every broker node
	// (samsa.connect.listener on a port of its own, ConnectPortOffset above
	// the Kafka port with a BasePort), all of one Connect cluster: Connect
	// is off in samsa serve by default.
	Connect bool
	// ClientOpts are what a client needs to reach the nodes' Kafka
	// listeners (TLS, a SASL login) when Overrides secure them; the
	// readiness check uses them.
	ClientOpts []kgo.Opt
}

// Cluster is N samsa serve processes forming one quorum.
type Cluster struct {
	cfg       Config
	clusterID string
	nodes     []*Node
	tasks     *task.Group // one waiter per running process
}

// stateFile records what the cluster's directory was made for, so a second
// run on it starts the same cluster.
const stateFile = "devcluster.properties"

// New lays out the cluster in cfg.Dir and formats every node's storage; it
// starts no process. A directory made by an earlier New keeps its cluster
// ID and ports.
func New(cfg Config) (*Cluster, error) {
	if cfg.Nodes < 1 {
		return nil, fmt.Errorf("devcluster: %d nodes: want at least 1", cfg.Nodes)
	}
	if cfg.Binary == "" || cfg.Dir == "" {
		return nil, errors.New("devcluster: a binary and a directory are needed")
	}
	if cfg.StopTimeout == 0 {
		cfg.StopTimeout = 30 * time.Second
	}
	if len(cfg.Hosts) != 0 && (len(cfg.Hosts) != cfg.Nodes || cfg.BasePort == 0) {
		return nil, fmt.Errorf("devcluster: %d hosts for %d nodes (base port %d): want one per node and a base port", len(cfg.Hosts), cfg.Nodes, cfg.BasePort)
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("devcluster: %w", err)
	}
	c := &Cluster{cfg: cfg, tasks: task.NewGroup(context.Background())}
	p, err := c.layout()
	if err != nil {
		return nil, err
	}
	for i := range cfg.Nodes {
		n := &Node{ID: int32(i + 1), Host: "127.0.0.1", KafkaPort: p.kafka[i], ControllerPort: p.controller[i], HTTPPort: p.http[i],
			RegistryPort: p.registry[i], RestPort: p.rest[i],
			Dir: filepath.Join(cfg.Dir, fmt.Sprintf("node-%d", i+1)), cluster: c}
		if i < len(p.connect) {
			n.ConnectPort = p.connect[i]
		}
		if len(cfg.Hosts) != 0 {
			n.Host = cfg.Hosts[i]
		}
		n.Roles = "broker,controller"
		if cfg.Roles != nil {
			n.Roles = cfg.Roles(n.ID)
		}
		c.nodes = append(c.nodes, n)
	}
	if !slices.ContainsFunc(c.nodes, (*Node).Controller) || !slices.ContainsFunc(c.nodes, (*Node).Broker) {
		return nil, errors.New("devcluster: the roles leave the cluster without a controller or without a broker")
	}
	quorum, format, err := c.quorum()
	if err != nil {
		return nil, err
	}
	for _, n := range c.nodes {
		args := []string{"storage", "format", "--config", n.ConfigPath(), "--cluster-id", c.clusterID, "--ignore-formatted"}
		if n.Controller() {
			args = append(args, format...)
		}
		if err := c.prepare(n, quorum, args); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// quorum is how the nodes find the quorum, and the storage format flags a
// controller needs for it: the static voters, or the bootstrap servers and
// the initial voters (each drawn a directory ID by samsa storage
// random-uuid).
func (c *Cluster) quorum() (map[string]string, []string, error) {
	if !c.cfg.BootstrapServers {
		return map[string]string{"controller.quorum.voters": voters(c.nodes)}, nil, nil
	}
	var initial []string
	for _, n := range c.nodes {
		if !n.Controller() {
			continue
		}
		dirID, err := c.run("storage", "random-uuid")
		if err != nil {
			return nil, nil, err
		}
		initial = append(initial, fmt.Sprintf("%d@%s:%s", n.ID, net.JoinHostPort(n.Host, strconv.Itoa(n.ControllerPort)), dirID))
	}
	return map[string]string{"controller.quorum.bootstrap.servers": bootstrapServers(c.nodes)},
		[]string{"--initial-controllers", strings.Join(initial, ",")}, nil
}

// layout finds the cluster ID and ports: the ones recorded in the
// directory, else new ones, recorded there.
func (c *Cluster) layout() (ports, error) {
	state := filepath.Join(c.cfg.Dir, stateFile)
	if _, err := os.Stat(state); err == nil {
		return c.reuse(state)
	}
	var p ports
	var err error
	switch {
	case len(c.cfg.Hosts) != 0:
		for range c.cfg.Nodes {
			p.kafka = append(p.kafka, c.cfg.BasePort)
			p.controller = append(p.controller, c.cfg.BasePort+ControllerPortOffset)
			p.http = append(p.http, c.cfg.BasePort+HTTPPortOffset)
			p.registry = append(p.registry, c.cfg.BasePort+RegistryPortOffset)
			p.rest = append(p.rest, c.cfg.BasePort+RestPortOffset)
			if c.cfg.Connect {
				p.connect = append(p.connect, c.cfg.BasePort+ConnectPortOffset)
			}
		}
	case c.cfg.BasePort != 0:
		p, err = portsFrom(c.cfg.BasePort, c.cfg.Nodes, c.cfg.Connect)
	default:
		lists := 5
		if c.cfg.Connect {
			lists = 6
		}
		var free []int
		free, err = freePorts(lists * c.cfg.Nodes)
		if err == nil {
			n := c.cfg.Nodes
			p = ports{kafka: free[:n], controller: free[n : 2*n], http: free[2*n : 3*n], registry: free[3*n : 4*n], rest: free[4*n : 5*n]}
			if c.cfg.Connect {
				p.connect = free[5*n:]
			}
		}
	}
	if err != nil {
		return ports{}, err
	}
	if c.clusterID, err = c.run("storage", "random-uuid"); err != nil {
		return ports{}, err
	}
	return p, c.writeState(state, p)
}

// writeState records the cluster ID and the ports in the directory.
func (c *Cluster) writeState(state string, p ports) error {
	rec := map[string]string{
		"cluster.id": c.clusterID, "nodes": strconv.Itoa(c.cfg.Nodes),
		"kafka.ports": joinInts(p.kafka), "controller.ports": joinInts(p.controller), "http.ports": joinInts(p.http),
		"registry.ports": joinInts(p.registry), "rest.ports": joinInts(p.rest),
	}
	if len(p.connect) != 0 {
		rec["connect.ports"] = joinInts(p.connect)
	}
	data := formatProperties("Written by samsa dev cluster: the cluster this directory holds.", rec)
	if err := os.WriteFile(state, data, 0o644); err != nil {
		return fmt.Errorf("devcluster: %w", err)
	}
	return nil
}

// reuse reads a directory's recorded cluster. The quorum's stored
// configuration names its voters' ports, so the same nodes must come back
// on the same ports.
func (c *Cluster) reuse(state string) (ports, error) {
	rec, err := readProperties(state)
	if err != nil {
		return ports{}, fmt.Errorf("devcluster: %w", err)
	}
	c.clusterID = rec["cluster.id"]
	var p ports
	var err1, err2, err3, err4, err5, err6 error
	p.kafka, err1 = splitInts(rec["kafka.ports"])
	p.controller, err2 = splitInts(rec["controller.ports"])
	if rec["http.ports"] != "" {
		p.http, err3 = splitInts(rec["http.ports"])
	}
	if rec["registry.ports"] != "" {
		p.registry, err4 = splitInts(rec["registry.ports"])
	}
	if rec["rest.ports"] != "" {
		p.rest, err5 = splitInts(rec["rest.ports"])
	}
	if rec["connect.ports"] != "" {
		p.connect, err6 = splitInts(rec["connect.ports"])
	}
	if err := errors.Join(err1, err2, err3, err4, err5, err6); err != nil || c.clusterID == "" {
		return ports{}, fmt.Errorf("devcluster: %s is damaged: %v", state, err)
	}
	if len(p.kafka) != c.cfg.Nodes {
		return ports{}, fmt.Errorf("devcluster: %s holds a cluster of %d nodes, not %d", c.cfg.Dir, len(p.kafka), c.cfg.Nodes)
	}
	if c.cfg.BasePort != 0 && p.kafka[0] != c.cfg.BasePort {
		return ports{}, fmt.Errorf("devcluster: %s holds a cluster on ports from %d, not %d", c.cfg.Dir, p.kafka[0], c.cfg.BasePort)
	}
	if err := c.addPorts(state, &p); err != nil {
		return ports{}, err
	}
	if !c.cfg.Connect {
		p.connect = nil // recorded for a run with Connect; unused in this one
	}
	if len(c.cfg.Hosts) != 0 {
		return p, nil // addresses of their own, maybe in other namespaces
	}
	return p, p.checkFree()
}

// addPorts gives a directory recorded before the nodes had HTTP, registry
// or REST listeners (or without Connect, now asked for) free ports for them, recorded from then on.
func (c *Cluster) addPorts(state string, p *ports) error {
	changed := false
	lists := []*[]int{&p.http, &p.registry, &p.rest}
	if c.cfg.Connect {
		lists = append(lists, &p.connect)
	}
	for _, l := range lists {
		if len(*l) == len(p.kafka) {
			continue
		}
		free, err := freePorts(c.cfg.Nodes)
		if err != nil {
			return err
		}
		*l, changed = free, true
	}
	if !changed {
		return nil
	}
	return c.writeState(state, *p)
}

// prepare writes node n's server.properties and formats its storage
// (samsa storage format, as an operator would); a formatted directory is
// left as it is.
func (c *Cluster) prepare(n *Node, quorum map[string]string, format []string) error {
	if err := os.MkdirAll(n.Dir, 0o755); err != nil {
		return fmt.Errorf("devcluster: %w", err)
	}
	brokers := 0
	for _, m := range c.nodes {
		if m.Broker() {
			brokers++
		}
	}
	cfg := nodeConfig(n, quorum, brokers, c.cfg.Overrides)
	header := fmt.Sprintf("Node %d of a %d-node cluster written by samsa dev cluster; rewritten on every start.", n.ID, c.cfg.Nodes)
	if err := os.WriteFile(n.ConfigPath(), formatProperties(header, cfg), 0o644); err != nil {
		return fmt.Errorf("devcluster: %w", err)
	}
	_, err := c.run(format...)
	return err
}

// run runs the samsa binary to completion and returns its trimmed output.
func (c *Cluster) run(args ...string) (string, error) {
	out, err := exec.Command(c.cfg.Binary, args...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("devcluster: samsa %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return strings.TrimSpace(string(out)), nil
}

// Start starts every node that is not running and waits, until ctx ends,
// for the cluster to be ready (WaitReady). On an error the nodes started
// stay up for the caller to inspect (LogTail) and Close.
func (c *Cluster) Start(ctx context.Context) error {
	for _, n := range c.nodes {
		if n.Running() {
			continue
		}
		if err := n.Start(); err != nil {
			return err
		}
	}
	return c.WaitReady(ctx)
}

// ClusterID is the ID every node was formatted with.
func (c *Cluster) ClusterID() string { return c.clusterID }

// Dir is the cluster's directory.
func (c *Cluster) Dir() string { return c.cfg.Dir }

// Nodes lists the nodes in node ID order.
func (c *Cluster) Nodes() []*Node { return c.nodes }

// Node is the node with the given ID, from 1; it panics on another, as an
// index out of range does.
func (c *Cluster) Node(id int32) *Node { return c.nodes[id-1] }

// Bootstrap lists every broker's Kafka address, comma-separated, as
// bootstrap.servers takes them.
func (c *Cluster) Bootstrap() string { return strings.Join(c.Addrs(), ",") }

// Addrs lists every broker's Kafka address (controller-only nodes have
// none).
func (c *Cluster) Addrs() []string {
	var out []string
	for _, n := range c.nodes {
		if n.Broker() {
			out = append(out, n.Addr())
		}
	}
	return out
}

// LogTails is the end of every node's log, lines per node, for a failure
// message.
func (c *Cluster) LogTails(lines int) string {
	var b strings.Builder
	for _, n := range c.nodes {
		fmt.Fprintf(&b, "=== node %d (%s):\n%s\n", n.ID, n.LogPath(), n.LogTail(lines))
	}
	return b.String()
}

// Close stops every running node in turn with SIGTERM, a controlled
// shutdown each, killing one that outlasts Config.StopTimeout. Stopping
// them one by one lets each hand its leaderships to nodes still running;
// the last ones, left without a quorum, wait out their controlled shutdown
// (broker.session.timeout.ms) and stop anyway.
func (c *Cluster) Close() error {
	var errs []error
	for _, n := range c.nodes {
		if n.Running() {
			errs = append(errs, n.Stop(c.cfg.StopTimeout))
		}
	}
	c.tasks.Stop()
	return errors.Join(errs...)
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

func splitInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		x, err := strconv.Atoi(f)
		if err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return out, nil
}

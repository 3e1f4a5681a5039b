package broker

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/samsa-io/samsa/internal/auth"
	"github.com/samsa-io/samsa/internal/controller"
	"github.com/samsa-io/samsa/internal/metaprops"
	"github.com/samsa-io/samsa/internal/model"
)

// quorumSettings is the node's part in the metadata quorum, from
// process.roles, controller.quorum.voters and controller.listener.names.
type quorumSettings struct {
	// voters is controller.quorum.voters; empty for the self-contained
	// single node, whose quorum is in process, and for a node that finds
	// the quorum through its bootstrap servers.
	voters []controller.Voter
	// bootstrap is controller.quorum.bootstrap.servers when it leads to a
	// quorum over the network: the controller listeners a broker-only node
	// registers through before it follows the metadata log. Empty on the
	// single node, whose bootstrap server is itself.
	bootstrap []string
	// initialVoters, on a controller with bootstrap servers and no voters,
	// are the voters `samsa storage format` stored in the metadata log
	// directory, which Raft bootstraps from on its first start
	// (initialVotersOf).
	initialVoters []controller.Voter
	// listeners are the controller listeners' names: they carry Raft as
	// well as Kafka requests, and serve the controller-only APIs.
	listeners []string
	// electionTimeout is controller.quorum.election.timeout.ms.
	electionTimeout time.Duration
	// broker and controller are process.roles: a combined node has both,
	// and so has the single node.
	broker, controller bool
	// raftListener, on a broker-only node (a Raft non-voter), is the
	// listener Raft reaches it on: its inter-broker listener, where a
	// connection that begins with Raft's preamble goes to the controller.
	raftListener string
}

// observer reports whether this node follows the quorum without a vote: a
// broker-only node.
func (q quorumSettings) observer() bool { return q.cluster() && !q.controller }

// early reports whether a listener serves before the controller starts:
// the controller listeners, and a broker-only node's Raft listener (the
// active controller must reach it before it can catch up and be unfenced).
func (q quorumSettings) early(name string) bool {
	return q.servesQuorum(name) || (q.observer() && name == q.raftListener)
}

// cluster reports whether this node is part of a quorum over the network.
func (q quorumSettings) cluster() bool { return len(q.voters) > 0 || len(q.bootstrap) > 0 }

// bootstrapAddrs are the addresses a node asks in turn while it knows no
// active controller: the bootstrap servers, else the voters', as Kafka
// prefers the bootstrap servers when both are set.
func (q quorumSettings) bootstrapAddrs() []string {
	if len(q.bootstrap) > 0 {
		return q.bootstrap
	}
	var out []string
	for _, v := range q.voters {
		out = append(out, v.Addr)
	}
	return out
}

func (q quorumSettings) isControllerListener(name string) bool {
	return slices.Contains(q.listeners, name)
}

// servesQuorum reports whether a listener carries the quorum: a controller
// listener of a quorum over the network (Raft and the controller APIs).
// Without one a controller listener is an ordinary Kafka listener.
func (q quorumSettings) servesQuorum(name string) bool {
	return q.cluster() && q.isControllerListener(name)
}

// parseVoters parses controller.quorum.voters: id@host:port entries.
func parseVoters(items []string) ([]controller.Voter, error) {
	var out []controller.Voter
	for _, it := range items {
		idStr, addr, ok := strings.Cut(strings.TrimSpace(it), "@")
		id, err := strconv.ParseInt(idStr, 10, 32)
		if !ok || err != nil || id < 0 {
			return nil, fmt.Errorf("broker: controller.quorum.voters entry %q is not id@host:port", it)
		}
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return nil, fmt.Errorf("broker: controller.quorum.voters entry %q: %w", it, err)
		}
		out = append(out, controller.Voter{ID: model.NodeID(id), Addr: addr})
	}
	return out, nil
}

// parseBootstrapServers parses controller.quorum.bootstrap.servers:
// host:port entries.
func parseBootstrapServers(items []string) ([]string, error) {
	var out []string
	for _, it := range items {
		it = strings.TrimSpace(it)
		if _, _, err := net.SplitHostPort(it); err != nil {
			return nil, fmt.Errorf("broker: controller.quorum.bootstrap.servers entry %q: %w", it, err)
		}
		out = append(out, it)
	}
	return out, nil
}

// resolveQuorum reads the quorum configs and checks them against the
// listeners and process.roles, as Kafka's KafkaConfig does: a controller
// (combined or alone) is among controller.quorum.voters and has a
// controller listener; a broker-only node is not among them and has none
// in its listeners, and may find the controllers through
// controller.quorum.bootstrap.servers alone; a controller-only node has
// nothing but controller listeners.
func (c *Config) resolveQuorum() error {
	voters, err := parseVoters(c.Values.List("controller.quorum.voters"))
	if err != nil {
		return err
	}
	bootstrap, err := parseBootstrapServers(c.Values.List("controller.quorum.bootstrap.servers"))
	if err != nil {
		return err
	}
	q := quorumSettings{voters: voters, electionTimeout: millis(int64(c.Values.Int("controller.quorum.election.timeout.ms")))}
	roles := c.Values.List("process.roles")
	q.broker = len(roles) == 0 || slices.Contains(roles, "broker")
	q.controller = len(roles) == 0 || slices.Contains(roles, "controller")
	if !q.controller || len(voters) == 0 && !c.selfBootstrap(bootstrap, q.broker) {
		q.bootstrap = bootstrap
	}
	for _, n := range strings.Split(c.Values.String("controller.listener.names"), ",") {
		if n = strings.ToUpper(strings.TrimSpace(n)); n != "" {
			q.listeners = append(q.listeners, n)
		}
	}
	if len(voters) == 1 && voters[0].ID == model.NodeID(c.NodeID) && len(q.listeners) == 0 {
		// A quorum of this node alone with no controller listener: the
		// in-process quorum of the single node, which is that.
		q.voters = nil
	}
	if !q.cluster() {
		if !q.broker || !q.controller {
			return fmt.Errorf("broker: process.roles=%s needs controller.quorum.bootstrap.servers (or controller.quorum.voters): a node without a quorum over the network is a combined broker and controller", strings.Join(roles, ","))
		}
		c.quorum = q
		return nil
	}
	if len(q.listeners) == 0 {
		return fmt.Errorf("broker: the quorum is over the network (controller.quorum.voters or controller.quorum.bootstrap.servers), so controller.listener.names must name the listener the quorum uses")
	}
	inVoters := slices.ContainsFunc(voters, func(v controller.Voter) bool { return v.ID == model.NodeID(c.NodeID) })
	hasControllerListener := slices.ContainsFunc(c.Listeners, func(l Listener) bool { return q.isControllerListener(l.Name) })
	hasBrokerListener := slices.ContainsFunc(c.Listeners, func(l Listener) bool { return !q.isControllerListener(l.Name) })
	if q.controller {
		for _, n := range q.listeners {
			if !slices.ContainsFunc(c.Listeners, func(l Listener) bool { return l.Name == n }) {
				return fmt.Errorf("broker: controller.listener.names names %s, which is not in listeners", n)
			}
		}
	}
	switch {
	case q.controller && !inVoters && len(voters) > 0:
		return fmt.Errorf("broker: process.roles has controller, but controller.quorum.voters does not name this node (node.id %d)", c.NodeID)
	case !q.controller && inVoters:
		return fmt.Errorf("broker: controller.quorum.voters names node.id %d, but process.roles=%s has no controller role", c.NodeID, strings.Join(roles, ","))
	case !q.controller && hasControllerListener:
		return fmt.Errorf("broker: a broker-only node (process.roles=broker) must not list the controller listener %s in listeners", strings.Join(q.listeners, ","))
	case !q.broker && hasBrokerListener:
		return fmt.Errorf("broker: a controller-only node (process.roles=controller) may list only controller listeners (%s) in listeners", strings.Join(q.listeners, ","))
	case q.broker && !hasBrokerListener:
		return fmt.Errorf("broker: every listener is a controller listener, but process.roles has broker: clients need a broker listener")
	}
	if ib := strings.ToUpper(c.Values.String("inter.broker.listener.name")); q.isControllerListener(ib) {
		return fmt.Errorf("broker: inter.broker.listener.name %s is a controller listener; followers fetch on a broker listener", ib)
	}
	if q.observer() {
		q.raftListener = interBrokerListener(c)
	}
	c.quorum = q
	return nil
}

// selfBootstrap reports whether bootstrap servers make this node the
// single node: a combined node whose only bootstrap server is itself (on
// the port of one of its listeners), as Kafka's own server.properties has
// it. Its quorum stays in process, however it was formatted.
func (c *Config) selfBootstrap(bootstrap []string, broker bool) bool {
	if len(bootstrap) != 1 || !broker {
		return false
	}
	_, port, _ := net.SplitHostPort(bootstrap[0])
	configured, _ := ParseListeners(c.Values.String("listeners"))
	for _, l := range append(configured, c.Listeners...) {
		if strconv.Itoa(l.Port) == port {
			return true
		}
	}
	return false
}

// interBrokerListener is the listener other brokers reach this one on:
// inter.broker.listener.name, else the first listener (the one the
// metadata's first endpoint is, as leaderAddr picks it).
func interBrokerListener(c *Config) string {
	if ib := strings.ToUpper(c.Values.String("inter.broker.listener.name")); ib != "" {
		return ib
	}
	if len(c.Listeners) > 0 {
		return c.Listeners[0].Name
	}
	return ""
}

// serveControllerConn reads the first byte of a connection on a controller
// listener: Raft's preamble hands the connection to the controller (and
// reports true), anything else is the start of a Kafka request, returned
// for the request reader to take first.
func (c *conn) serveControllerConn() (raft bool, first io.Reader, err error) {
	var b [1]byte
	c.nc.SetReadDeadline(time.Now().Add(c.b.cfg.ConnectionsMaxIdle))
	if _, err := io.ReadFull(c.nc, b[:]); err != nil {
		return false, nil, err
	}
	if b[0] != controller.RaftPreamble[0] {
		return false, bytes.NewReader(b[:]), nil
	}
	if err := controller.ReadPreamble(c.nc); err != nil {
		return false, nil, err
	}
	if c.sasl != nil || (c.sec != nil && c.principal == auth.Anonymous) {
		// On a secured listener Raft comes from an authenticated node: a
		// client certificate, or a SASL login first (raftAfterLogin).
		return false, nil, fmt.Errorf("Raft connection refused: not authenticated on a %s listener", c.sec.protocol)
	}
	if !c.raftAuthorized() {
		return false, nil, errRaftDenied(c)
	}
	c.nc.SetReadDeadline(time.Time{})
	c.b.ctrl.ServeRaft(c.nc)
	return true, nil, nil
}

// controllerRequestTimeout bounds a controller-listener request's commit.
const controllerRequestTimeout = 10 * time.Second

// dynamicVoter reports whether this node is a controller of a quorum found
// through the bootstrap servers: its voters are the ones stored at format
// time, then Raft's own configuration.
func (q quorumSettings) dynamicVoter() bool {
	return q.controller && len(q.voters) == 0 && len(q.bootstrap) > 0
}

// joining reports whether this node is a controller outside the initial
// voters, which waits for AddRaftVoter to join the quorum.
func (q quorumSettings) joining(self model.NodeID) bool {
	return q.dynamicVoter() && !slices.ContainsFunc(q.initialVoters, func(v controller.Voter) bool { return v.ID == self })
}

// initialVotersOf reads the initial voters a controller with bootstrap
// servers bootstraps from. A controller-only node outside them joins the
// quorum (joining); a combined one is refused. A voter's own entry must be
// on a controller listener's port, where Raft reaches it.
func initialVotersOf(cfg Config) ([]controller.Voter, error) {
	dir := metadataLogDirOf(cfg.Values, cfg.LogDir)
	stored, err := metaprops.ReadInitialVoters(cfg.FS, dir)
	if err != nil {
		return nil, fmt.Errorf("broker: %w", err)
	}
	var voters []controller.Voter
	var self *controller.Voter
	for _, v := range stored {
		voters = append(voters, controller.Voter{ID: model.NodeID(v.NodeID), Addr: v.Addr})
		if v.NodeID == cfg.NodeID {
			self = &voters[len(voters)-1]
		}
	}
	if self == nil {
		// A controller outside the initial voters (formatted with
		// --no-initial-controllers, or not named by them) joins the
		// quorum: it waits as a Raft non-voter at its controller listener
		// until AddRaftVoter adds it (KIP-853).
		if cfg.quorum.broker {
			return nil, fmt.Errorf("broker: this node (node.id %d) is not among the initial voters stored in %s, so it joins the quorum "+
				"through AddRaftVoter, which Samsa supports for a controller-only node (process.roles=controller); "+
				"start the new controller on its own, or format this node with --initial-controllers naming it",
				cfg.NodeID, metaprops.InitialVotersPath(dir))
		}
		return voters, nil
	}
	_, port, _ := net.SplitHostPort(self.Addr)
	if !slices.ContainsFunc(cfg.Listeners, func(l Listener) bool {
		return cfg.quorum.isControllerListener(l.Name) && (l.Port == 0 || strconv.Itoa(l.Port) == port)
	}) {
		return nil, fmt.Errorf("broker: the initial voters stored in %s put this node (node.id %d) at %s, which is not the port of its controller listener %s",
			metaprops.InitialVotersPath(dir), cfg.NodeID, self.Addr, strings.Join(cfg.quorum.listeners, ","))
	}
	return voters, nil
}

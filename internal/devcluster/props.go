package devcluster

import (
	"fmt"
	"maps"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
)

// ReplicationDefaults are the replication settings a cluster of n nodes
// gets: as many replicas as Kafka's 3 where the nodes allow it, and a
// minimum ISR that still survives one failure (min(2, RF)). They are set
// explicitly because a broker's own defaults differ between a single node
// (1) and a quorum member (Kafka's 3, 3, 2), and a cluster of one or two
// nodes could create no internal topic with the latter.
func ReplicationDefaults(n int) map[string]string {
	rf := min(3, n)
	minISR := strconv.Itoa(min(2, rf))
	return map[string]string{
		"default.replication.factor":                       strconv.Itoa(rf),
		"min.insync.replicas":                              minISR,
		"offsets.topic.replication.factor":                 strconv.Itoa(rf),
		"transaction.state.log.replication.factor":         strconv.Itoa(rf),
		"transaction.state.log.min.isr":                    minISR,
		"share.coordinator.state.topic.replication.factor": strconv.Itoa(rf),
		"share.coordinator.state.topic.min.isr":            minISR,
	}
}

// FailureDetection are the timings every node gets unless overridden. A
// development cluster's nodes are killed and restarted often, so a dead
// broker is fenced after 3 s rather than Kafka's 9 s, and a controller
// election starts after 500 ms rather than 1 s. The session stays long
// enough for a loaded two-core machine's heartbeats.
var FailureDetection = map[string]string{
	"broker.heartbeat.interval.ms":          "200",
	"broker.session.timeout.ms":             "3000",
	"controller.quorum.election.timeout.ms": "500",
}

// voters is controller.quorum.voters for the nodes: each at its host and
// controller port.
func voters(nodes []*Node) string {
	var out []string
	for _, n := range nodes {
		if n.Roles == "" || n.Controller() {
			out = append(out, fmt.Sprintf("%d@%s", n.ID, net.JoinHostPort(n.Host, strconv.Itoa(n.ControllerPort))))
		}
	}
	return strings.Join(out, ",")
}

// bootstrapServers is controller.quorum.bootstrap.servers for the nodes:
// every controller's host and controller port.
func bootstrapServers(nodes []*Node) string {
	var out []string
	for _, n := range nodes {
		if n.Roles == "" || n.Controller() {
			out = append(out, net.JoinHostPort(n.Host, strconv.Itoa(n.ControllerPort)))
		}
	}
	return strings.Join(out, ",")
}

// nodeConfig is one node's server.properties as a map: the cluster's
// shape, the quorum configs (controller.quorum.voters or
// controller.quorum.bootstrap.servers), then the replication defaults and
// timings, then the caller's overrides, which win.
func nodeConfig(n *Node, quorum map[string]string, nodes int, overrides map[string]string) map[string]string {
	roles := n.Roles
	if roles == "" {
		roles = "broker,controller"
	}
	var listeners []string
	if strings.Contains(roles, "broker") {
		listeners = append(listeners, "PLAINTEXT://"+n.Addr())
	}
	if strings.Contains(roles, "controller") {
		listeners = append(listeners, "CONTROLLER://"+net.JoinHostPort(n.Host, strconv.Itoa(n.ControllerPort)))
	}
	cfg := map[string]string{
		"node.id":                        strconv.Itoa(int(n.ID)),
		"process.roles":                  roles,
		"controller.listener.names":      "CONTROLLER",
		"listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
		"listeners":                      strings.Join(listeners, ","),
		"log.dirs":                       n.DataDir(),
		// Each node's own port (layout), never the default one, which
		// every node would share.
		"samsa.http.listener":            n.HTTPAddr(),
		"samsa.schema.registry.listener": n.RegistryAddr(),
		"samsa.rest.listener":            n.RestAddr(),
		// No console: samsa console runs one against a dev cluster.
		"samsa.console.listener": "",
	}
	if n.ConnectAddr() != "" {
		cfg["samsa.connect.listener"] = n.ConnectAddr()
	}
	maps.Copy(cfg, quorum)
	maps.Copy(cfg, ReplicationDefaults(nodes))
	maps.Copy(cfg, FailureDetection)
	maps.Copy(cfg, overrides)
	if _, set := overrides["samsa.schema.registry.listener"]; !set && !plaintextListener(cfg) {
		// The registry inside serve reaches its broker through a
		// PLAINTEXT listener; overrides that secure every listener turn it
		// off rather than stop the node.
		cfg["samsa.schema.registry.listener"] = ""
	}
	if _, set := overrides["samsa.rest.listener"]; !set && !plaintextListener(cfg) {
		cfg["samsa.rest.listener"] = "" // as the registry: it too reaches its broker through PLAINTEXT
	}
	if _, set := overrides["samsa.connect.listener"]; !set && !plaintextListener(cfg) {
		delete(cfg, "samsa.connect.listener") // as the registry
	}
	return cfg
}

// plaintextListener reports whether a node config has a listener whose
// security protocol is PLAINTEXT.
func plaintextListener(cfg map[string]string) bool {
	protocols := map[string]string{}
	for _, pair := range strings.Split(cfg["listener.security.protocol.map"], ",") {
		if name, protocol, ok := strings.Cut(strings.TrimSpace(pair), ":"); ok {
			protocols[strings.ToUpper(name)] = strings.ToUpper(protocol)
		}
	}
	for _, l := range strings.Split(cfg["listeners"], ",") {
		name, _, ok := strings.Cut(strings.TrimSpace(l), "://")
		if ok && protocols[strings.ToUpper(name)] == "PLAINTEXT" {
			return true
		}
	}
	return false
}

// formatProperties renders a config as a properties file, keys sorted so
// the file reads the same on every run. Values are written as they are:
// nothing a node needs holds a character properties would escape.
func formatProperties(header string, cfg map[string]string) []byte {
	var b strings.Builder
	for _, line := range strings.Split(header, "\n") {
		b.WriteString("# " + line + "\n")
	}
	for _, k := range slices.Sorted(maps.Keys(cfg)) {
		fmt.Fprintf(&b, "%s=%s\n", k, cfg[k])
	}
	return []byte(b.String())
}

// readProperties reads a file formatProperties wrote.
func readProperties(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("%s:%d: want name=value", path, i+1)
		}
		out[k] = v
	}
	return out, nil
}
